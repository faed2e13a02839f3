# The linear solvers behind gp_sdd(): exactness, step sizes, stopping rules,
# the convergence trace, divergence, and interrupts.

test_that("solve_system() solves many right-hand sides at once", {
  d <- make_data(300, 2, seed = 31)
  ker <- matern(3/2, c(0.2, 0.3), 1)
  rhs <- cbind(d$y, withr::with_seed(1, matrix(rnorm(300 * 3), 300)))
  ref <- solve(ref_kernel(d$x, d$x, "matern32", c(0.2, 0.3), 1) + diag(0.1, 300), rhs)
  xs <- sddgp:::scale_inputs(d$x, ker)
  ch <- sddgp:::solve_system("cholesky", xs, ker, 0.1, rhs, sdd_control(), NULL,
                             has_mean = TRUE, threads = 2)
  expect_equal(ch$alpha, ref, tolerance = 1e-8)
  expect_equal(ch$status, "exact")

  withr::local_seed(2)
  ctl <- sdd_control(iterations = 1200)
  # One thread: this runs many tiny steps, where on a busy machine two
  # OpenMP threads mostly wait for each other (results are bitwise the same
  # for any thread count; see test-gp_sdd.R).
  steps <- sddgp:::sdd_step_sizes(ctl, xs, ker, 0.1, 1)
  sd <- sddgp:::solve_system("sdd", xs, ker, 0.1, rhs, ctl, steps,
                             has_mean = TRUE, threads = 1)
  for (j in 1:4) expect_lt(max_rel_err(sd$alpha[, j], ref[, j]), 1e-6)
  expect_equal(sd$step_size, steps)
  expect_equal(nrow(sd$trace), 12L)

  # Without a mean column every column is a sample system.
  sd2 <- sddgp:::solve_system("sdd", xs, ker, 0.1, rhs[, 2:3], ctl, steps,
                              has_mean = FALSE, threads = 1)
  expect_lt(max_rel_err(sd2$alpha, ref[, 2:3]), 1e-6)
  expect_true(all(is.na(sd2$trace$residual)))
})

test_that("the automatic step size follows the stability limit", {
  d <- make_data(400, 2, seed = 32)
  ker <- matern(5/2, c(0.3, 0.5), 1.5)
  xs <- sddgp:::scale_inputs(d$x, ker)
  K <- ref_kernel(d$x, d$x, "matern52", c(0.3, 0.5), 1.5)
  lmax <- max(eigen(K, symmetric = TRUE, only.values = TRUE)$values)
  rho <- 0.9
  # The documented rule: Nesterov momentum rho is stable while
  # step * lambda_max(K + noise I) / n < 2 (1 + rho) / (1 + 2 rho) (1.36 at
  # 0.9). With a full batch on this dense kernel matrix the eigenvalue
  # decides; n <= 1000, so no subsampling, and power iteration stops at a
  # relative change of 1e-4 per step.
  eigen_limit <- 2 * (1 + rho) / (1 + 2 * rho) / (lmax / 400 + 0.1 / 400)
  lim_full <- sddgp:::sdd_step_limit(xs, ker, 0.1, rho, 400, threads = 2)
  expect_equal(lim_full, eigen_limit, tolerance = 1e-2)
  # Smaller batches can only lower the limit.
  lim64 <- sddgp:::sdd_step_limit(xs, ker, 0.1, rho, 64, threads = 2)
  expect_lte(lim64, lim_full)
  expect_gt(lim64, 0)

  st <- sddgp:::sdd_step_sizes(sdd_control(batch_size = 64, step_fraction = 0.5),
                               xs, ker, 0.1, 2)
  expect_equal(st[["mean"]], 0.5 * lim64)
  expect_equal(st[["samples"]], st[["mean"]])
  st2 <- sddgp:::sdd_step_sizes(sdd_control(step_size = 3, step_size_samples = 2),
                                xs, ker, 0.1, 2)
  expect_identical(st2, c(mean = 3, samples = 2))
  st3 <- sddgp:::sdd_step_sizes(sdd_control(step_size = 3), xs, ker, 0.1, 2)
  expect_identical(st3, c(mean = 3, samples = 3))
})

test_that("a user step size is used as given", {
  d <- make_data(100, 2, seed = 33)
  withr::local_seed(3)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.1, samples = 2,
                control = sdd_control(iterations = 100, step_size = 0.5,
                                      step_size_samples = 0.25))
  expect_identical(fit$step_size, c(mean = 0.5, samples = 0.25))
})

test_that("averaging = 'none' and permutation batches also converge", {
  d <- make_data(300, 2, seed = 34)
  ls <- c(0.2, 0.3)
  ref <- ref_posterior(d$x, d$y, family = "se", lengthscale = ls, variance = 1,
                       noise = 0.2)
  withr::local_seed(4)
  # One thread: this runs many tiny steps, where on a busy machine two
  # OpenMP threads mostly wait for each other (results are bitwise the same
  # for any thread count; see test-gp_sdd.R).
  withr::local_options(sddgp.threads = 1)
  f1 <- gp_sdd(d$x, d$y, kernel = squared_exponential(ls, 1), noise = 0.2,
               standardize = FALSE,
               control = sdd_control(iterations = 700, averaging = "none"))
  f2 <- gp_sdd(d$x, d$y, kernel = squared_exponential(ls, 1), noise = 0.2,
               standardize = FALSE,
               control = sdd_control(iterations = 700, batch_size = 100,
                                     batch_sampling = "permutation"))
  expect_lt(max_rel_err(f1$alpha, ref$alpha), 1e-6)
  expect_lt(max_rel_err(f2$alpha, ref$alpha), 1e-6)
})

test_that("tolerance stops early and the trace estimates the true residual", {
  d <- make_data(300, 2, seed = 35)
  ls <- c(0.2, 0.3)
  A <- ref_kernel(d$x, d$x, "matern32", ls, 1) + diag(0.1, 300)
  withr::local_seed(5)
  withr::local_options(sddgp.threads = 1)  # many tiny steps, as above
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, ls, 1), noise = 0.1,
                standardize = FALSE,
                control = sdd_control(iterations = 5000, tolerance = 1e-4,
                                      check_every = 20))
  expect_equal(fit$status, "tolerance")
  expect_lt(fit$iterations, 5000L)
  expect_equal(fit$iterations %% 20L, 0L)
  expect_equal(max(fit$trace$iteration), fit$iterations)
  expect_lt(fit$trace$residual[nrow(fit$trace)], 1e-4)
  expect_true(all(fit$trace$residual[-nrow(fit$trace)] >= 1e-4))
  expect_true(all(diff(fit$trace$seconds) >= 0))
  true_res <- function(alpha) sqrt(sum((A %*% alpha - d$y)^2)) / sqrt(sum(d$y^2))
  # The probe (256 of 300 rows, with replacement) is unbiased for the
  # squared residual norm; its relative error is well within a factor 2.
  expect_gt(true_res(fit$alpha), 1e-4 / 2)
  expect_lt(true_res(fit$alpha), 1e-4 * 2)

  withr::local_seed(6)
  short <- gp_sdd(d$x, d$y, kernel = matern(3/2, ls, 1), noise = 0.1,
                  standardize = FALSE,
                  control = sdd_control(iterations = 60, check_every = 25,
                                        batch_size = 32))
  # Checks at 25, 50 and the last iteration.
  expect_equal(short$trace$iteration, c(25L, 50L, 60L))
  est <- short$trace$residual[3]
  expect_gt(est / true_res(short$alpha), 0.5)
  expect_lt(est / true_res(short$alpha), 2)
})

test_that("the sample residual in the trace is the root mean square over sample systems", {
  res <- list(trace_iteration = c(10L, 20L), trace_seconds = c(0.1, 0.2),
              trace_residuals = rbind(c(0.5, 3, 4), c(0.25, 1, 1)))
  tr <- sddgp:::sdd_trace(res, has_mean = TRUE)
  expect_equal(tr$residual, c(0.5, 0.25))
  expect_equal(tr$residual_samples, c(sqrt((9 + 16) / 2), 1))
  tr2 <- sddgp:::sdd_trace(res, has_mean = FALSE)
  expect_true(all(is.na(tr2$residual)))
  expect_equal(tr2$residual_samples, sqrt(rowMeans(res$trace_residuals^2)))
  tr3 <- sddgp:::sdd_trace(list(trace_iteration = 5L, trace_seconds = 0,
                                trace_residuals = matrix(0.1, 1, 1)), TRUE)
  expect_true(is.na(tr3$residual_samples))
})

test_that("a huge step size stops with a divergence error, not NaN", {
  d <- make_data(200, 2, seed = 36)
  withr::local_seed(7)
  err <- expect_error(
    gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.1,
           control = sdd_control(iterations = 2000, step_size = 1e4)),
    class = "sddgp_error_divergence", regexp = "diverged.*`step_size`")
  expect_s3_class(err, "sddgp_error")
  expect_lte(err$iterations, 100L)  # caught at the first residual check
  expect_equal(err$step_size, 1e4)
  # The sample systems are watched too.
  expect_error(
    gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.1, samples = 2,
           control = sdd_control(iterations = 500, step_size_samples = 1e4)),
    class = "sddgp_error_divergence")
})

test_that("a singular Cholesky system gives a numerical error", {
  x <- matrix(rep(c(0, 1), each = 30))
  y <- rep(c(1, 2), each = 30)
  expect_error(gp_sdd(x, y, kernel = squared_exponential(1, 1), noise = 1e-300, solver = "cholesky"),
               class = "sddgp_error_numerical", regexp = "not\\s+numerically positive definite")
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

# Runs a long fit in a background R, sends Ctrl-C once it has been going for
# two seconds, and returns what the background R did and how long it took
# to return after the interrupt.
interrupt_fit <- function(n, d, control) {
  ready <- tempfile()
  on.exit(unlink(ready), add = TRUE)
  p <- callr::r_bg(function(ready, n, d, control) {
    library(sddgp)
    set.seed(1)
    x <- matrix(runif(d * n), n)
    y <- sin(6 * x[, 1]) + rnorm(n, sd = 0.1)
    file.create(ready)
    res <- tryCatch({
      gp_sdd(x, y, kernel = matern(3/2, 0.3, 1), noise = 0.1, threads = 2,
             control = control)
      list(interrupted = FALSE)
    }, interrupt = function(e) {
      list(interrupted = TRUE, sddgp = inherits(e, "sddgp_interrupt"),
           message = conditionMessage(e))
    })
    small <- gp_sdd(x[1:50, ], y[1:50], kernel = matern(3/2, 0.3, 1), noise = 0.1,
                    solver = "cholesky", threads = 1)
    c(res, list(after = sum(1:10), prediction = predict(small, x[1:2, ])))
  }, args = list(ready = ready, n = n, d = d, control = control),
  libpath = .libPaths())
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  deadline <- Sys.time() + 60
  while (!file.exists(ready) && p$is_alive() && Sys.time() < deadline) Sys.sleep(0.05)
  expect_true(file.exists(ready))
  Sys.sleep(2)
  expect_true(p$is_alive())
  sent <- Sys.time()
  p$interrupt()
  p$wait(10000)
  waited <- as.numeric(difftime(Sys.time(), sent, units = "secs"))
  expect_false(p$is_alive())
  c(p$get_result(), waited = waited)
}

test_that("Ctrl-C stops a long SDD fit promptly and leaves R usable", {
  skip_on_cran()
  skip_if_not_installed("callr")
  # During the iterations: 1e6 steps on 20000 points would take hours.
  out <- interrupt_fit(20000, 2, sdd_control(iterations = 1e6, cache = "never"))
  expect_lt(out$waited, 3)
  expect_true(out$interrupted)
  expect_true(out$sddgp)
  expect_match(out$message, "SDD interrupted by the user after [0-9]+ iterations")
  expect_equal(out$after, 55L)
  expect_length(out$prediction, 2)
  expect_true(all(is.finite(out$prediction)))

  # While the kernel cache is built: 15000 points in 80 dimensions take
  # several seconds before the first step.
  out <- interrupt_fit(15000, 80, sdd_control(iterations = 10, step_size = 1,
                                              cache = "always"))
  expect_lt(out$waited, 3)
  expect_true(out$interrupted)
  expect_match(out$message, "after 0 iterations")
  expect_equal(out$after, 55L)
})

test_that("the automatic step size is stable when the kernel matrix is nearly diagonal", {
  # Length scales far below the spacing of the points: K is close to
  # (variance) I, the batch term of the stability limit decides the step size,
  # and each coordinate is only hit now and then.
  cases <- list(list(n = 300, d = 3, ls = 0.05, batch = 512, tol = 1e-6),
                list(n = 50, d = 2, ls = 0.01, batch = 512, tol = 1e-6),
                # Batches of 64 of 1000: converging, if slowly.
                list(n = 1000, d = 3, ls = 0.1, batch = 64, tol = 0.1))
  for (cs in cases) {
    d <- make_data(cs$n, cs$d, seed = 3)
    ref <- ref_posterior(d$x, d$y, family = "matern32", lengthscale = cs$ls,
                         variance = 1, noise = 0.1)
    withr::local_seed(1)
    withr::local_options(sddgp.threads = 1)  # many tiny steps, as above
    expect_no_error(
      fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, cs$ls, 1), noise = 0.1,
                    standardize = FALSE,
                    control = sdd_control(iterations = 1000, batch_size = cs$batch)))
    expect_lt(max_rel_err(fit$alpha, ref$alpha), cs$tol)
  }
})
