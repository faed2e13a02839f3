# The exact solver: its accuracy against LAPACK, its limits, Ctrl-C, and the
# warning of an ill-conditioned solve.

test_that("a singular Cholesky system gives a numerical error", {
  x <- matrix(rep(c(0, 1), each = 30))
  y <- rep(c(1, 2), each = 30)
  expect_error(gp_sdd(x, y, kernel = squared_exponential(1, 1), noise = 1e-300, solver = "cholesky"),
               class = "sddgp_error_numerical", regexp = "not\\s+numerically positive definite")
})

test_that("the blocked Cholesky solve is LAPACK's answer, the same bits for any thread count", {
  # 700 points: five blocks of 128 and a ragged one.
  d <- make_data(700, 3, seed = 32)
  ker <- matern(5/2, c(0.3, 0.4, 0.5), 1.3)
  rhs <- cbind(d$y, withr::with_seed(3, matrix(rnorm(700 * 2), 700)))
  noise <- rep(c(0.05, 0.2), length.out = 700)
  a <- ref_kernel(d$x, d$x, "matern52", c(0.3, 0.4, 0.5), 1.3) + diag(noise)
  problem <- test_problem(d$x, ker, noise, rhs)
  one <- sddgp:::run_solver("cholesky", problem, cholesky_control(), threads = 1)
  two <- sddgp:::run_solver("cholesky", problem, cholesky_control(), threads = 2)
  expect_identical(one$alpha, two$alpha)
  expect_equal(one$alpha, solve(a, rhs), tolerance = 1e-9)
})

test_that("Ctrl-C stops a long exact fit promptly and leaves R usable", {
  skip_on_cran()
  skip_if_not_installed("callr")
  # The factorisation of 6000 points takes tens of seconds; it is blocked
  # so that Ctrl-C is seen between blocks.
  expect_prompt_interrupt(6000, 2, cholesky_control(),
                          "Cholesky factorisation was interrupted by the user")
  # While the kernel matrix is built: 4000 points in 1000 dimensions take
  # several seconds before the factorisation starts.
  expect_prompt_interrupt(4000, 1000, cholesky_control(),
                          "Cholesky factorisation was interrupted by the user")
})

test_that("the exact solver refuses problems too large for a dense matrix", {
  x <- matrix(0, 20001, 1)
  expect_error(gp_sdd(x, numeric(20001), kernel = matern(3/2, 1, 1), noise = 1,
                      solver = "cholesky"),
               class = "sddgp_error_argument", regexp = "`solver`.*use solver = \"sdd\"")
})

test_that("a nearly singular exact solve warns, naming the condition number and the noise", {
  # Three copies of every input with targets that differ between copies:
  # at noise 1e-14 the posterior mean was quantised (off by 0.07) in silence.
  d <- make_data(100, 2, seed = 76)
  x3 <- d$x[rep(1:100, 3), ]
  y3 <- withr::with_seed(5, sin(3 * x3[, 1]) + x3[, 2]^2 + rnorm(300, sd = 0.1))
  ker <- matern(3/2, c(0.3, 0.6), 1)
  w <- expect_warning(fit <- gp_sdd(x3, y3, kernel = ker, noise = 1e-14, solver = "cholesky"),
                      class = "sddgp_warning_ill_conditioned",
                      regexp = "condition\\s+number .*increase `noise` to at least")
  expect_s3_class(w, c("sddgp_warning_ill_conditioned", "sddgp_warning", "warning",
                       "condition"), exact = TRUE)
  expect_gt(w$condition_number, 1e15)
  # Independent truth: merged copies (mean target, weight 3) are the same
  # posterior, well conditioned, in the same standardised units.
  sc <- fit$scaling
  merged <- gp_sdd(sddgp:::standardize_inputs(d$x, sc),
                   (rowMeans(matrix(y3, 100)) - sc$y_center) / sc$y_scale,
                   kernel = ker, noise = 1e-14, weights = rep(3, 100),
                   solver = "cholesky", standardize = FALSE)
  xt <- make_inputs(50, 2)
  truth <- sc$y_center + sc$y_scale * predict(merged, sddgp:::standardize_inputs(xt, sc))
  expect_gt(max(abs(predict(fit, xt) - truth)), 1e-4)  # what the warning is about
  # The suggested noise is safe: no warning, and the mean is accurate again
  # (against the merged fit at that noise).
  expect_no_warning(safe <- gp_sdd(x3, y3, kernel = ker, noise = 1e-14 + w$jitter,
                                   solver = "cholesky"))
  merged_safe <- gp_sdd(sddgp:::standardize_inputs(d$x, sc),
                        (rowMeans(matrix(y3, 100)) - sc$y_center) / sc$y_scale,
                        kernel = ker, noise = 1e-14 + w$jitter, weights = rep(3, 100),
                        solver = "cholesky", standardize = FALSE)
  expect_equal(unname(predict(safe, xt)),
               unname(sc$y_center + sc$y_scale *
                        predict(merged_safe, sddgp:::standardize_inputs(xt, sc))),
               tolerance = 1e-6)
  # With weights the advice is a factor on `noise`.
  expect_warning(gp_sdd(x3, y3, kernel = ker, noise = 1e-14, weights = rep(1:3, 100),
                        solver = "cholesky"),
                 class = "sddgp_warning_ill_conditioned", regexp = "multiply `noise` by at least")
})

test_that("a well-conditioned exact solve does not warn", {
  d <- make_data(300, 2, seed = 77)
  expect_no_warning(gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.3, 0.6), 1), noise = 0.01,
                           solver = "cholesky"))
  expect_no_warning(gp_sdd(d$x, d$y, kernel = matern(5/2, c(0.3, 0.6), 1), noise = 1e-6,
                           solver = "cholesky"))
})

test_that("the exact solver's condition estimate is LAPACK's, against the dense matrix", {
  d <- make_data(150, 2, seed = 80)
  ker <- matern(5/2, c(0.3, 0.5), 1.2)
  for (noise in c(1e-2, 1e-9)) {
    noise_i <- noise * withr::with_seed(6, runif(150, 0.5, 2))
    res <- .Call(sddgp:::C_chol_solve, sddgp:::scale_inputs(d$x, ker),
                 sddgp:::kernel_spec(ker), noise_i, matrix(d$y), 1L)
    A <- ref_kernel(d$x, d$x, "matern52", c(0.3, 0.5), 1.2) + diag(noise_i)
    expect_equal(res$norm, norm(A, "1"), tolerance = 1e-12)
    exact <- 1 / (norm(A, "1") * norm(solve(A), "1"))
    expect_equal(res$rcond, base::rcond(A, norm = "O"), tolerance = 1e-3)
    expect_true(res$rcond >= exact / 3 && res$rcond <= 3 * exact)
  }
})

test_that("exact_seconds() is positive, grows with n, nrhs and d, and times the solver once", {
  timings <- sddgp:::exact_timings
  saved <- as.list(timings)
  withr::defer({
    rm(list = ls(timings), envir = timings)
    list2env(saved, envir = timings)
  })
  rm(list = ls(timings), envir = timings)
  seed <- withr::with_seed(1, {
    secs <- sddgp:::exact_seconds(c(1000, 5000, 20000), 1, 1)
    .Random.seed
  })
  expect_identical(seed, withr::with_seed(1, .Random.seed)) # R's stream untouched
  expect_true(all(is.finite(secs) & secs > 0))
  expect_true(all(diff(secs) > 0))
  expect_gte(sddgp:::exact_seconds(5000, 64, 1), sddgp:::exact_seconds(5000, 1, 1))
  expect_gt(sddgp:::exact_seconds(5000, 1, 1, d = 90), sddgp:::exact_seconds(5000, 1, 1))
  # Calibrated once: the prediction comes from the cached phase timings,
  # scaled by n^3 (factorisation) and n^2 (the rest).
  expect_length(ls(timings), 1L)
  key <- ls(timings)
  cal <- timings[[key]]
  expect_named(cal, c("build", "norm", "factor", "rcond", "solve_1", "solve", "block",
                     "m", "threads", "update", "panel"))
  # The two speeds reproduce the factorisation timed on m points.
  work <- sddgp:::chol_work(cal[["m"]], cal[["block"]], 1)
  expect_equal(cal[["update"]] * work[["update"]] + cal[["panel"]] * work[["panel"]],
               cal[["factor"]], ignore_attr = TRUE)
  timings[[key]] <- replace(cal * 0, c("update", "solve_1", "m", "block", "threads"),
                            c(1, 0.5, 1000, 100, 1))
  # 20 blocks: sum over b = 0..19 of b (b - 1) / 2 = choose(20, 3) tiles.
  expect_equal(sddgp:::exact_seconds(2000, 1, 1), choose(20, 3) + 0.5 * 4)
  sddgp:::exact_seconds(2000, 1, 2)
  expect_length(ls(timings), if (sddgp_threads(2) == 2L) 2L else 1L)
})
