# The loop shared by SDD and SGD: the settings handed to C (sdd_settings()),
# and the trace metrics with their operands.  Its gradient estimators:
# test-sgd.R.

# sdd_settings() of an sdd_control() for n data.
settings <- function(control, n) {
  problem <- test_problem(matrix(seq_len(n) / n), matern(3/2, 1, 1), 0.1, matrix(0, n, 1))
  sddgp:::sdd_settings(control, problem, control$objective, control$estimator,
                       control$estimator_features, step_size = 1)
}

test_that("sdd_settings() holds exactly the fields of sdd_options and the operator's", {
  expect_named(settings(sdd_control(), 50), c(
    "iterations", "batch_size", "batch_sampling", "estimator", "features", "rhs_reg",
    "step_size", "clip", "alpha0", "momentum", "averaging_rate", "averaging_start",
    "check_every", "probe_size", "tolerance", "stop_stalled", "time_limit", "metrics", "seed",
    "first_iteration", "alpha_bar0", "momentum0", "tolerance_from", "keep_state", "shard",
    "use_cache", "precision"))
  # The default tolerance, from the noise: rhs 0 gives the cap.
  expect_equal(settings(sdd_control(), 50)$tolerance, 0.1)
  trial <- sdd_control()
  trial$stop_stalled <- TRUE  # as solve_automatic() sets it
  expect_identical(settings(trial, 50)$stop_stalled, 1L)
  expect_identical(settings(sdd_control(), 50)$stop_stalled, 0L)
})

test_that("no initial iterate and a zero one run the same loop, bit for bit", {
  d <- make_data(200, 2, seed = 61)
  problem <- test_problem(d$x, matern(3/2, c(0.3, 0.5), 1), 0.01,
                          cbind(d$y, withr::with_seed(62, stats::rnorm(200))))
  control <- sdd_control(iterations = 300, batch_size = 32)
  run <- function(alpha0, threads = 2L) {
    withr::with_seed(63, sddgp:::run_sdd_loop(problem, sddgp:::sdd_settings(
      control, problem, "dual", "coordinates", 100, c(1, 1), alpha0 = alpha0), threads))
  }
  none <- run(NULL)
  zero <- run(matrix(0, 200, 2))
  expect_identical(zero$alpha, none$alpha)
  expect_identical(zero$trace[names(zero$trace) != "seconds"],
                   none$trace[names(none$trace) != "seconds"])
  # A warm start moves the iterates, identically for any thread count.
  start <- matrix(withr::with_seed(64, stats::rnorm(400, sd = 0.1)), 200, 2)
  warm <- run(start)
  expect_false(isTRUE(all.equal(warm$alpha, none$alpha)))
  expect_identical(run(start, 1L)$alpha, warm$alpha)
})

test_that("sdd_settings() caps sizes and fills in data-dependent settings", {
  codes <- .Call(sddgp:::C_glue_codes)
  r <- settings(sdd_control(tolerance = 0, iterations = 400), n = 300)
  expect_equal(r$batch_size, 300)
  expect_equal(r$probe_size, 256L)
  expect_equal(r$averaging_rate, 100 / 400)
  expect_equal(codes$batch_sampling[[r$batch_sampling]], 1L)
  expect_true(r$use_cache)  # 300^2 doubles are well under 2e9 bytes
  r2 <- settings(sdd_control(tolerance = 0, iterations = 50, probe_size = 500,
                             batch_sampling = "permutation"), n = 100)
  expect_equal(r2$averaging_rate, 1)  # 100 / 50 capped at 1
  expect_equal(r2$probe_size, 100)
  expect_equal(codes$batch_sampling[[r2$batch_sampling]], 2L)
  r3 <- settings(sdd_control(averaging = "none", averaging_rate = 0.1), 10)
  expect_equal(r3$averaging_rate, 1)
  r4 <- settings(sdd_control(averaging_rate = 0.3), 10)
  expect_equal(r4$averaging_rate, 0.3)
  # The cache budget: 8 n^2 bytes.
  expect_true(settings(sdd_control(cache_limit = 8e4), 100)$use_cache)
  expect_false(settings(sdd_control(cache_limit = 8e4 - 1), 100)$use_cache)
  expect_false(settings(sdd_control(cache = "never"), 100)$use_cache)
  expect_true(settings(sdd_control(cache = "always", cache_limit = 0), 100)$use_cache)
  # In single precision 4 n^2 bytes.
  expect_true(settings(sdd_control(cache_limit = 4e4, precision = "single"), 100)$use_cache)
  expect_false(settings(sdd_control(cache_limit = 4e4 - 1, precision = "single"),
                        100)$use_cache)
})

test_that("sdd_settings() maps the estimators and averaging to the C codes", {
  codes <- .Call(sddgp:::C_glue_codes)
  code <- function(...) codes$estimator[[settings(sdd_control(step_size = 1, ...),
                                                  n = 100)$estimator]]
  expect_identical(code(), 0L)
  expect_identical(code(estimator = "features"), 1L)
  expect_identical(code(estimator = "coordinates_kalpha"), 2L)
  expect_identical(code(objective = "primal", batch_size = 99), 4L)  # SGD
  expect_identical(code(objective = "primal", batch_size = 100), 3L) # full batch
  r <- settings(sdd_control(averaging = "arithmetic", averaging_rate = 0.5), 10)
  expect_identical(r$averaging_start, 1L)
  expect_equal(r$averaging_rate, 1)
  r2 <- settings(sdd_control(averaging = "arithmetic", averaging_start = 30), 10)
  expect_identical(r2$averaging_start, 30L)
  # Only arithmetic averaging uses it.
  expect_identical(settings(sdd_control(averaging_start = 30), 10)$averaging_start, 0L)
  expect_identical(settings(sdd_control(estimator_features = 7), 10)$features, 7L)
})

test_that("print() summarises the trace settings in one line", {
  ctl <- sdd_control(reference = c(0.5, 1, 2), trace_every = 10,
                     test_x = matrix(0, 5, 2), test_y = 1:5)
  expect_output(print(ctl), paste0(
    "trace +K-norm errors to 3 reference weights, test RMSE on 5 points at 1000",
    " iterations \\(10, 20, \\.\\.\\., 10000\\)\n"))
  expect_output(print(sdd_control(tolerance = 0, iterations = 30, trace_at = 30, reference = 1)),
                "trace +K-norm errors to 1 reference weights at 1 iteration \\(30\\)")
  expect_output(print(sdd_control()), "trace +none\n")
})

test_that("the trace metrics equal the values computed from the returned weights", {
  d <- make_data(150, 2, seed = 9)
  xt <- make_inputs(40, 2, seed = 10)
  yt <- sin(3 * xt[, 1]) + xt[, 2]^2 - 0.5 * xt[, 2]
  ker <- matern(5/2, c(0.4, 0.6), 1.2)
  ref <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, solver = "cholesky")$alpha
  withr::local_seed(11)
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, control = sdd_control(
    tolerance = 0, iterations = 120, batch_size = 32, check_every = 50, trace_at = c(10, 60, 120),
    reference = ref, test_x = xt, test_y = yt))
  tr <- fit$trace
  expect_named(tr, c("iteration", "seconds", "residual", "residual_samples",
                     "knorm_error", "k2norm_error", "test_rmse"))
  # Residual probes at 50, 100 and 120; metrics at 10, 60 and 120.
  expect_equal(tr$iteration, c(10L, 50L, 60L, 100L, 120L))
  expect_equal(is.na(tr$residual), c(TRUE, FALSE, TRUE, FALSE, FALSE))
  expect_equal(is.na(tr$knorm_error), c(FALSE, TRUE, FALSE, TRUE, FALSE))
  expect_equal(is.na(tr$test_rmse), is.na(tr$knorm_error))
  expect_true(all(diff(tr$seconds) >= 0))
  # The last row from the returned weights, in base R: the fit's units are
  # the standardised ones (inputs and targets).
  K <- ref_kernel(fit$x, fit$x, "matern52", c(0.4, 0.6), 1.2)
  e <- fit$alpha - ref
  sc <- fit$scaling
  xts <- sweep(sweep(xt, 2, sc$x_center), 2, sc$x_scale, "/")
  pred <- ref_kernel(xts, fit$x, "matern52", c(0.4, 0.6), 1.2) %*% fit$alpha
  last <- tr[5, ]
  expect_equal(last$knorm_error, drop(t(e) %*% K %*% e), tolerance = 1e-10)
  expect_equal(last$k2norm_error, sum((K %*% e)^2), tolerance = 1e-10)
  expect_equal(last$test_rmse, sqrt(mean(((yt - sc$y_center) / sc$y_scale - pred)^2)),
               tolerance = 1e-10)
  # The RMSE is in standardised units: the fit's own predictions agree
  # (without predict()'s correction of the mean, which the trace's
  # weights do not include).
  expect_equal(last$test_rmse, sqrt(mean((yt - predict(fit, xt, neighbours = 0))^2)) / sc$y_scale,
               tolerance = 1e-10)
  # SDD converges, so the errors fall.
  expect_lt(tr$knorm_error[5], tr$knorm_error[1] / 10)

  # By default every check_every iterations and the last; SGD traces too.
  withr::local_seed(12)
  f2 <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, control = sgd_control(
    iterations = 130, check_every = 50, reference = ref, step_size = 0.2))
  expect_equal(f2$trace$iteration, c(50L, 100L, 130L))
  expect_true(all(!is.na(f2$trace$knorm_error)))
  expect_null(f2$trace$test_rmse)
  # simulate() with a seed draws samples only: nothing to trace there.
  expect_no_error(simulate(f2, nsim = 1, seed = 1))
})

test_that("trace operands that do not fit the data give classed errors", {
  d <- make_data(50, 2, seed = 13)
  ker <- matern(3/2, 0.5, 1)
  expect_error(gp_sdd(d$x, d$y, kernel = ker, noise = 0.1,
                      control = sdd_control(tolerance = 0, iterations = 10, reference = rep(0, 49))),
               class = "sddgp_error_argument", regexp = "`reference` has 49 weights.*50 points")
  expect_error(gp_sdd(d$x, d$y, kernel = ker, noise = 0.1,
                      control = sgd_control(iterations = 10, test_x = matrix(0, 3, 3),
                                            test_y = 1:3)),
               class = "sddgp_error_argument", regexp = "`test_x` has 3 columns.*2 inputs")
})

test_that("a solve sharded over one process, its broadcast a callback into R, is the plain solve", {
  d <- make_data(600, 2, seed = 65)
  problem <- test_problem(d$x, matern(3/2, c(0.3, 0.5), 1), 0.01,
                          cbind(d$y, withr::with_seed(66, stats::rnorm(600))))
  settings <- withr::with_seed(67, sddgp:::sdd_settings(
    sdd_control(iterations = 200, batch_size = 100, tolerance = 0), problem, "dual",
    "coordinates", 100, c(1, 1)))
  plain <- sddgp:::sdd_loop_call(problem, settings, 2L)
  calls <- 0L
  settings$shard <- list(rank = 0L, size = 1L, send = NULL, recv = NULL,
                         bcast = function(x, peer) {
                           calls <<- calls + 1L
                           x
                         })
  shared <- sddgp:::sdd_loop_call(problem, settings, 2L)
  expect_identical(shared$alpha, plain$alpha)
  # One broadcast per step's product and per residual probe's, one per
  # probe for its rows of the average, and one at the end for the state
  # (one piece on one process).
  expect_identical(calls, 200L + 2L + 2L + 1L)
  expect_gt(shared$comm_seconds, 0)
  expect_gt(plain$update_seconds, 0)
  # A failed message is an error, not a wrong fit.
  settings$shard$bcast <- function(x, peer) stop("lost")
  expect_error(sddgp:::sdd_loop_call(problem, settings, 2L), "sharded solve failed",
               class = "sddgp_error_worker")
})
