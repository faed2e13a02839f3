# The solver machinery shared by all solvers (problems, statuses, traces)
# and the exact solver.

test_that("run_solver() solves many right-hand sides at once", {
  d <- make_data(300, 2, seed = 31)
  ker <- matern(3/2, c(0.2, 0.3), 1)
  rhs <- cbind(d$y, withr::with_seed(1, matrix(rnorm(300 * 3), 300)))
  ref <- solve(ref_kernel(d$x, d$x, "matern32", c(0.2, 0.3), 1) + diag(0.1, 300), rhs)
  problem <- test_problem(d$x, ker, 0.1, rhs)
  ch <- sddgp:::run_solver("cholesky", problem, cholesky_control(), threads = 2)
  expect_equal(ch$alpha, ref, tolerance = 1e-8)
  expect_equal(ch$status, "exact")
  expect_gte(ch$seconds, 0)

  withr::local_seed(2)
  # One thread: this runs many tiny steps, where on a busy machine two
  # OpenMP threads mostly wait for each other (results are bitwise the same
  # for any thread count; see test-gp_sdd.R).
  sd <- sddgp:::run_solver("sdd", problem, sdd_control(iterations = 1200), threads = 1)
  for (j in 1:4) expect_lt(max_rel_err(sd$alpha[, j], ref[, j]), 1e-6)
  expect_equal(nrow(sd$trace), 12L)

  # Without a mean column every column is a sample system; the state of the
  # first run (its step sizes) is reused.
  problem2 <- test_problem(d$x, ker, 0.1, rhs[, 2:3], has_mean = FALSE)
  sd2 <- sddgp:::run_solver("sdd", problem2, sdd_control(iterations = 1200), threads = 1,
                            state = sd$state)
  expect_lt(max_rel_err(sd2$alpha, ref[, 2:3]), 1e-6)
  expect_true(all(is.na(sd2$trace$residual)))
  expect_identical(sd2$state, sd$state)
})

test_that("new_problem() adds N(0, noise) to the prior draw for the sample systems", {
  ker <- matern(3/2, c(0.3, 0.5), 1)
  x <- make_inputs(100, 2)
  y <- x[, 1]
  withr::local_seed(45)
  prior <- sddgp:::draw_prior(ker, 2L, 100L, 200L)
  p <- sddgp:::new_problem(x, y, ker, 0.25, prior, threads = 2)
  expect_true(p$has_mean)
  expect_equal(p$noise, rep(0.25, 100))
  expect_equal(p$xs, sddgp:::scale_inputs(x, ker))
  expect_equal(p$f0, sddgp:::prior_values(prior, ker, x, threads = 2))
  expect_equal(p$rhs, cbind(y, p$f0 + p$zeta), ignore_attr = TRUE)
  zeta <- p$zeta
  # 20000 noise draws of variance 0.25.
  expect_lt(abs(mean(zeta)), 6 * 0.5 / sqrt(20000))
  expect_lt(abs(var(as.vector(zeta)) / 0.25 - 1), 6 * sqrt(2 / 20000))
  expect_lt(abs(cor(zeta[, 1], zeta[, 2])), 6 / sqrt(100))
  # No targets: only the sample systems; no prior: only the mean.
  p2 <- sddgp:::new_problem(x, NULL, ker, 0.25, prior, threads = 2)
  expect_false(p2$has_mean)
  expect_equal(ncol(p2$rhs), 200L)
  p3 <- sddgp:::new_problem(x, y, ker, 0.25, NULL, threads = 2)
  expect_equal(p3$rhs, matrix(y), ignore_attr = TRUE)
  expect_null(p3$f0)
})

test_that("the sample residual in the trace is the root mean square over sample systems", {
  res <- list(trace_iteration = c(10L, 20L), trace_seconds = c(0.1, 0.2),
              trace_residuals = rbind(c(0.5, 3, 4), c(0.25, 1, 1)))
  tr <- sddgp:::solver_trace(res, has_mean = TRUE)
  expect_equal(tr$residual, c(0.5, 0.25))
  expect_equal(tr$residual_samples, c(sqrt((9 + 16) / 2), 1))
  tr2 <- sddgp:::solver_trace(res, has_mean = FALSE)
  expect_true(all(is.na(tr2$residual)))
  expect_equal(tr2$residual_samples, sqrt(rowMeans(res$trace_residuals^2)))
  tr3 <- sddgp:::solver_trace(list(trace_iteration = 5L, trace_seconds = 0,
                                   trace_residuals = matrix(0.1, 1, 1)), TRUE)
  expect_true(is.na(tr3$residual_samples))
})

test_that("solver_status() maps the C status codes to statuses and classed conditions", {
  res <- function(code) list(status = code, iterations = 7L)
  expect_equal(sddgp:::solver_status(res(0L), "cg", "advice"), "iterations")
  expect_equal(sddgp:::solver_status(res(1L), "cg", "advice"), "tolerance")
  err <- expect_error(sddgp:::solver_status(res(2L), "cg", "Try this.", step_size = 3),
                      class = "sddgp_error_divergence",
                      regexp = "CG diverged after 7 iterations.*Try this\\.")
  expect_equal(err$iterations, 7L)
  expect_equal(err$step_size, 3)
  # An interrupt condition, not an error: caught the way a user's
  # tryCatch(interrupt = ) would.
  cond <- tryCatch(sddgp:::solver_status(res(3L), "cg", ""), interrupt = identity)
  expect_s3_class(cond, "sddgp_interrupt")
  expect_match(conditionMessage(cond), "CG interrupted by the user after 7 iterations")
  expect_error(sddgp:::solver_status(res(4L), "cg", ""), class = "sddgp_error_memory")
})

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

test_that("new_seed() is driven by set.seed()", {
  s1 <- withr::with_seed(1, sddgp:::new_seed())
  s2 <- withr::with_seed(1, sddgp:::new_seed())
  s3 <- withr::with_seed(2, sddgp:::new_seed())
  expect_identical(s1, s2)
  expect_false(identical(s1, s3))
  expect_length(s1, 2)
  expect_true(all(s1 >= 0 & s1 < 2^32 & s1 == floor(s1)))
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

test_that("a fit that stops far from converged warns, and print() and summary() say so", {
  d <- make_data(300, 2, seed = 38)
  # A nearly constant kernel and no noise: SDD's residual barely moves.
  withr::local_seed(3)
  w <- expect_warning(
    fit <- gp_sdd(d$x, d$y, kernel = matern(5/2, 1e4, 1), noise = 1e-12,
                  control = sdd_control(iterations = 200), threads = 1),
    class = "sddgp_warning_not_converged")
  expect_s3_class(w, c("sddgp_warning_not_converged", "sddgp_warning", "warning",
                       "condition"), exact = TRUE)
  r <- fit$trace$residual[nrow(fit$trace)]
  expect_gt(r, 0.5)
  # The true relative residual of the standardised system is as bad.
  K <- ref_kernel(fit$x, fit$x, "matern52", 1e4, 1)
  true_r <- sqrt(sum((K %*% fit$alpha + 1e-12 * fit$alpha - fit$y)^2) / sum(fit$y^2))
  expect_gt(true_r, 0.5)
  expect_equal(w$residual, r)
  expect_equal(w$threshold, 0.5)
  expect_equal(w$status, "iterations")
  msg <- conditionMessage(w)
  expect_match(msg, sprintf("mean's system is %s, above the threshold 0.5",
                            format(r, digits = 3)), fixed = TRUE)
  expect_match(msg, "at the end of its iteration budget after 200 iterations", fixed = TRUE)
  expect_match(msg, paste("more `iterations` or a larger `time_limit` in sdd_control(),",
                          "or solver = \"cg\" or \"cholesky\""), fixed = TRUE)
  note <- sprintf("far from converged: relative residual %s > 0.5", format(r, digits = 3))
  expect_output(print(fit), note, fixed = TRUE)
  expect_match(summary(fit)$not_converged, note, fixed = TRUE)
  expect_output(print(summary(fit)), note, fixed = TRUE)

  # Stopped by the time limit after a step or so (averaging rate 1e-4).
  expect_warning(
    fit_t <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.01,
                    control = sdd_control(iterations = 1e6, time_limit = 1e-9, cache = "never"),
                    threads = 1),
    class = "sddgp_warning_not_converged", regexp = "at its time limit of 1e-09 s after")
  expect_equal(fit_t$status, "time limit")

  # CG: white-noise targets, a long length scale, one unpreconditioned step.
  yw <- withr::with_seed(4, rnorm(300))
  expect_warning(
    gp_sdd(d$x, yw, kernel = matern(5/2, 3, 1), noise = 1e-6, solver = "cg",
           control = cg_control(max_iterations = 1, preconditioner = "none"),
           standardize = FALSE, threads = 1),
    class = "sddgp_warning_not_converged",
    regexp = "CG stopped far from converged.* after 1 iteration: .*`max_iterations` in cg_control")
})

test_that("converged fits, exact fits and DSG do not warn", {
  d <- make_data(300, 2, seed = 38)
  withr::local_seed(5)
  expect_no_warning(
    fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.01,
                  control = sdd_control(iterations = 300), threads = 1))
  expect_lt(fit$trace$residual[nrow(fit$trace)], 0.5)
  expect_null(summary(fit)$not_converged)
  expect_false(any(grepl("far from converged", capture.output(print(fit), summary(fit)))))
  expect_no_warning(gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.01,
                           solver = "cholesky"))
  # DSG's residual is the training fit's, which stays high on white noise
  # whatever the solver does: not a sign of non-convergence.
  yw <- withr::with_seed(4, rnorm(300))
  expect_no_warning(
    fd <- gp_sdd(d$x, yw, kernel = matern(5/2, 3, 1), noise = 1e-6, solver = "dsg",
                 control = dsg_control(iterations = 50), standardize = FALSE, threads = 1))
  expect_gt(fd$trace$residual[nrow(fd$trace)], 0.5)
})
