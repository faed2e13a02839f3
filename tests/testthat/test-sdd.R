# Stochastic dual descent: sdd_control() (defaults, validation of every
# argument), exactness against the Cholesky solve, stopping rules,
# divergence and the halving of the step size, and interrupts.  The
# settings handed to C: test-sdd_loop.R; the step size: test-step_size.R.

test_that("sdd_control() has the paper's defaults", {
  ctl <- sdd_control()
  expect_s3_class(ctl, "sddgp_control")
  expect_identical(ctl$iterations, 10000L)
  expect_identical(ctl$batch_size, 512L)
  expect_null(ctl$step_size)
  expect_null(ctl$step_size_samples)
  expect_equal(ctl$momentum, 0.9)
  expect_equal(ctl$averaging, "geometric")
  expect_null(ctl$averaging_rate)
  expect_equal(ctl$batch_sampling, "uniform")
  expect_null(ctl$tolerance)  # chosen from the noise (solve_tolerance())
  expect_equal(ctl$time_limit, Inf)
  expect_identical(ctl$check_every, 100L)
  expect_identical(ctl$probe_size, 256L)
  expect_equal(ctl$step_fraction, 0.8)
  expect_equal(ctl$warm_start, "inducing")
  expect_identical(ctl$warm_start_rank, 100L)
  expect_identical(ctl$features, 2000L)
  expect_equal(ctl$cache, "auto")
  expect_equal(ctl$cache_limit, 2e9)
  expect_equal(ctl$precision, "double")
  ctl2 <- sdd_control(tolerance = 0, iterations = 5, averaging = "none", batch_sampling = "permutation",
                      cache = "never", step_size = 2, averaging_rate = 0.5)
  expect_identical(ctl2$iterations, 5L)
  expect_equal(ctl2$averaging, "none")
  expect_equal(ctl2$batch_sampling, "permutation")
  expect_equal(ctl2$cache, "never")
  expect_equal(ctl2$step_size, 2)
  expect_equal(ctl2$averaging_rate, 0.5)
})

test_that("every sdd_control() argument is validated with a classed error", {
  bad <- list(
    iterations = list(0, -5, 2.5, NA, "100", Inf, c(1, 2), 2^31),
    batch_size = list(0, 1.5, NA, "512", -1),
    step_size = list(0, -1, NA, Inf, "1", c(1, 2)),
    step_size_samples = list(0, -1, NA, Inf, "1"),
    momentum = list(-0.1, 1, 1.5, NA, "0.9"),
    averaging = list("mean", NA, 1, c("none", "geometric", "x")),
    averaging_rate = list(0, -0.5, 1.5, NA, "0.1"),
    batch_sampling = list("random", NA, 2),
    tolerance = list(-1e-3, 2, NA, "0"),
    time_limit = list(0, -1, NA, "60", c(1, 2), -Inf),
    check_every = list(0, 1.5, NA, -10),
    probe_size = list(0, 2.5, NA, 2e6),
    step_fraction = list(0, -0.5, 11, NA),
    warm_start = list("cg", NA, 1, TRUE, c("none", "x")),
    warm_start_rank = list(0, 2.5, NA, "100", 2e5, c(10, 20)),
    features = list(0, 10.5, NA, 2e6, "100"),
    cache = list("sometimes", NA, TRUE),
    cache_limit = list(-1, NA, "1e9", Inf),
    precision = list("half", NA, 32, c("single", "x"))
  )
  for (arg in names(bad)) {
    for (value in bad[[arg]]) {
      args <- stats::setNames(list(value), arg)
      expect_error(do.call(sdd_control, args), class = "sddgp_error_argument",
                   regexp = paste0("`", arg, "`"), label = paste(arg, "=", deparse(value)))
    }
  }
  # The choices are listed.
  expect_error(sdd_control(cache = "x"),
               regexp = "`cache` must be one of \"auto\", \"always\", \"never\", not \"x\"")
  expect_error(sdd_control(averaging = "x"),
               regexp = "`averaging` must be one of \"geometric\", \"none\"")
  expect_error(sdd_control(batch_sampling = "x"),
               regexp = "`batch_sampling` must be one of \"uniform\", \"permutation\"")
  expect_error(sdd_control(warm_start = "x"),
               regexp = "`warm_start` must be one of \"inducing\", \"nystrom\", \"none\"")
  expect_error(sdd_control(tolerance = 0, iterations = 2.5), regexp = "whole number")
  expect_error(sdd_control(momentum = 1), regexp = "`momentum` must lie in \\[0, 1\\)")
  # Boundaries that are allowed.
  expect_silent(sdd_control(momentum = 0, tolerance = 1, step_fraction = 1,
                            averaging_rate = 1, cache_limit = 0, iterations = 1,
                            warm_start_rank = 1,
                            batch_size = 1, check_every = 1, probe_size = 1,
                            features = 1))
  # Unknown settings are not silently dropped.
  expect_error(sdd_control(steps = 10), "unused argument")
})

test_that("precision = \"single\" solves to float accuracy, identically cached or not", {
  d <- make_data(400, d = 3, seed = 11)
  ker <- matern(3 / 2, lengthscale = c(0.4, 0.6, 0.8), variance = 1.3)
  xnew <- make_data(60, d = 3, seed = 12)$x
  exact <- ref_posterior(d$x, d$y, xnew, "matern32", c(0.4, 0.6, 0.8), 1.3, 0.05)
  fit <- function(precision, cache = "always", iterations = 10000, threads = 2L) {
    withr::with_seed(3, gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, threads = threads,
      standardize = FALSE,
      control = sdd_control(tolerance = 0, iterations = iterations, batch_size = 400, averaging = "none",
                            precision = precision, cache = cache)))
  }
  # The exact gradient with momentum converges to the solution of the
  # system: in double to rounding, in single to what float kernel values
  # allow (each within ~1e-7 of the variance; 1.9e-6 here).
  expect_lt(max(abs(predict(fit("double"), xnew) - exact$mean)), 1e-10)
  err_single <- max(abs(predict(fit("single"), xnew) - exact$mean))
  expect_lt(err_single, 1e-4)
  expect_gt(err_single, 1e-9)  # it is really computed in float
  # The float cache holds the values computed on the fly, bit for bit, and
  # the thread count changes nothing.
  short <- fit("single", iterations = 300)$alpha
  expect_identical(fit("single", "never", iterations = 300)$alpha, short)
  expect_identical(fit("single", "never", iterations = 300, threads = 1L)$alpha, short)
})

test_that("batch_size larger than n works (capped at n)", {
  d <- make_data(50, 2, seed = 81)
  ref <- ref_posterior(d$x, d$y, family = "matern32", lengthscale = 0.3,
                       variance = 1, noise = 0.2)
  withr::local_seed(81)
  withr::local_options(sddgp.threads = 1)  # 500 tiny steps: no use for threads
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.2,
                standardize = FALSE,
                control = sdd_control(tolerance = 0, iterations = 500, batch_size = 1000,
                                      probe_size = 1000,
                                      batch_sampling = "permutation"))
  expect_lt(max_rel_err(fit$alpha, ref$alpha), 1e-6)
})

test_that("print() shows the settings", {
  expect_output(print(sdd_control()), "Settings of solver \"sdd\" \\(stochastic dual descent\\)")
  expect_output(print(sdd_control()), "\n  iterations +10000\n  batch_size +512\n")
  expect_output(print(sdd_control()), "step_size +auto\n  step_size_samples +auto")
  expect_output(print(sdd_control(step_size = 2, averaging_rate = 0.1)),
                "step_size +2\n.*averaging_rate +0.1\n")
  expect_output(print(sdd_control(features = 300, cache = "never")),
                "cache +never\n.*features +300")
  expect_output(expect_invisible(print(sdd_control())))
})

test_that("a user step size is used as given", {
  d <- make_data(100, 2, seed = 33)
  withr::local_seed(3)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.1, samples = 2,
                control = sdd_control(tolerance = 0, iterations = 100, step_size = 0.5,
                                      step_size_samples = 0.25))
  expect_identical(fit$state$step_size, c(mean = 0.5, samples = 0.25))
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
               control = sdd_control(tolerance = 0, iterations = 700, averaging = "none"))
  f2 <- gp_sdd(d$x, d$y, kernel = squared_exponential(ls, 1), noise = 0.2,
               standardize = FALSE,
               control = sdd_control(tolerance = 0, iterations = 700, batch_size = 100,
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
                  control = sdd_control(tolerance = 0, iterations = 60, check_every = 25,
                                        batch_size = 32))
  # Checks at 25, 50 and the last iteration.
  expect_equal(short$trace$iteration, c(25L, 50L, 60L))
  est <- short$trace$residual[3]
  expect_gt(est / true_res(short$alpha), 0.5)
  expect_lt(est / true_res(short$alpha), 2)
})

test_that("time_limit stops the iterations with the averaged iterate reached so far", {
  d <- make_data(2000, 3, seed = 36)
  ker <- matern(3/2, c(0.2, 0.3, 0.4), 1)
  ctl <- function(iterations, limit = Inf) {
    sdd_control(tolerance = 0, iterations = iterations, time_limit = limit, averaging_rate = 0.01,
                step_size = 1, cache = "never", check_every = 1e5)
  }
  withr::local_seed(7)
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, standardize = FALSE,
                control = ctl(1e7, 0.3), threads = 1)
  expect_equal(fit$status, "time limit")
  expect_gt(fit$iterations, 0L)
  expect_lt(fit$iterations, 1e7)
  # The last step is probed, so the trace ends where the run stopped.
  expect_equal(fit$trace$iteration[nrow(fit$trace)], fit$iterations)
  expect_true(is.finite(fit$trace$residual[nrow(fit$trace)]))
  expect_output(print(fit), "(time limit)", fixed = TRUE)
  # It is the run of that many iterations, to the bit.
  withr::local_seed(7)
  same <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, standardize = FALSE,
                 control = ctl(fit$iterations), threads = 1)
  expect_equal(same$status, "iterations")
  expect_identical(same$alpha, fit$alpha)
  # SGD shares the loop and the limit; its averaging rate of 100 / 1e7
  # keeps the averaged iterate near 0, far from converged.
  expect_warning(
    sgd <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, standardize = FALSE,
                  solver = "sgd", control = sgd_control(iterations = 1e7, time_limit = 0.3,
                                                        cache = "never", check_every = 1e5),
                  threads = 1),
    class = "sddgp_warning_not_converged", regexp = "time limit of 0.3 s")
  expect_equal(sgd$status, "time limit")
  expect_lt(sgd$iterations, 1e7)
})

test_that("an automatic step size that diverges is halved until the run is stable", {
  d <- make_data(300, 2, seed = 37)
  ls <- c(0.3, 0.6)
  ref <- ref_posterior(d$x, d$y, make_inputs(5, 2), "matern32", ls, 1, 0.05)
  withr::local_seed(8)
  # Ten times the estimated stability limit diverges; halvings bring it
  # below the limit, and the run converges as if it had started there.
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, ls, 1), noise = 0.05, standardize = FALSE,
                samples = 2, control = sdd_control(tolerance = 0, iterations = 3000, batch_size = 300,
                                                   step_fraction = 10, step_size_samples = 0.5),
                threads = 1)
  limit <- withr::with_seed(8, sddgp:::sdd_step_limit(
    sddgp:::scale_inputs(d$x, fit$kernel), fit$kernel, rep(0.05, 300), 0.9, 300, 1))
  expect_gte(fit$state$backoffs, 1L)
  expect_lte(fit$state$backoffs, 5L)
  expect_equal(fit$state$step_size[["mean"]], 10 * limit / 2^fit$state$backoffs)
  expect_lt(fit$state$step_size[["mean"]], limit)
  # A given step size is never changed.
  expect_equal(fit$state$step_size[["samples"]], 0.5)
  expect_lt(max_rel_err(predict(fit, make_inputs(5, 2)), ref$mean), 1e-6)
  expect_output(print(summary(fit)), sprintf("halved %d time", fit$state$backoffs))
  # Without divergence nothing is halved, and summary() says nothing of it.
  calm <- gp_sdd(d$x, d$y, kernel = matern(3/2, ls, 1), noise = 0.05,
                 control = sdd_control(tolerance = 0, iterations = 50), threads = 1)
  expect_identical(calm$state$backoffs, 0L)
  expect_false(any(grepl("halved", capture.output(print(summary(calm))))))
})

test_that("a given step size that diverges is not retried", {
  d <- make_data(200, 2, seed = 36)
  runs <- new.env()
  suppressMessages(trace("run_sdd_loop", where = asNamespace("sddgp"), print = FALSE,
                         tracer = bquote(assign("n", .(runs)$n + 1L, envir = .(runs)))))
  on.exit(suppressMessages(untrace("run_sdd_loop", where = asNamespace("sddgp"))))
  loops <- function(control, samples) {
    runs$n <- 0L
    expect_error(gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.1,
                        samples = samples, control = control, threads = 1),
                 class = "sddgp_error_divergence")
    runs$n
  }
  # The mean's step given, the samples' left to default to it: one run, with
  # or without sample systems.
  expect_identical(loops(sdd_control(tolerance = 0, iterations = 300, step_size = 1e4), 0), 1L)
  expect_identical(loops(sdd_control(tolerance = 0, iterations = 300, step_size = 1e4), 2), 1L)
  # With the mean's step automatic a divergence is retried, five times,
  # though here it is the samples' given step that diverges (the control of
  # the count above).
  expect_identical(loops(sdd_control(tolerance = 0, iterations = 300, step_size_samples = 1e4), 2), 6L)
})

test_that("a huge step size stops with a divergence error, not NaN", {
  d <- make_data(200, 2, seed = 36)
  withr::local_seed(7)
  err <- expect_error(
    gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.1,
           control = sdd_control(tolerance = 0, iterations = 2000, step_size = 1e4)),
    class = "sddgp_error_divergence", regexp = "diverged.*`step_size`")
  expect_s3_class(err, "sddgp_error")
  expect_lte(err$iterations, 100L)  # caught at the first residual check
  expect_equal(err$step_size, 1e4)
  # The sample systems are watched too.
  expect_error(
    gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.1, samples = 2,
           control = sdd_control(tolerance = 0, iterations = 500, step_size_samples = 1e4)),
    class = "sddgp_error_divergence")
})

test_that("Ctrl-C stops a long SDD fit promptly and leaves R usable", {
  skip_on_cran()
  skip_if_not_installed("callr")
  # During the iterations: 1e6 steps on 20000 points would take hours.
  expect_prompt_interrupt(20000, 2, sdd_control(tolerance = 0, iterations = 1e6, cache = "never"),
                          "SDD interrupted by the user after [0-9]+ iterations")

  # While the kernel cache is built, the signal 2 s after the solver's
  # compiled code is entered: 15000 points in 1000 dimensions take about 25 s
  # to cache on 2 idle cores here.  (Timed from the call of gp_sdd(), the
  # signal raced the checks and copies of the inputs, 2 s here in 600
  # dimensions, and R answered it with its own interrupt when they won.)
  expect_prompt_interrupt(15000, 1000, sdd_control(tolerance = 0, iterations = 10, step_size = 1,
                                                   cache = "always"),
                          "SDD interrupted by the user after 0 iterations",
                          signal_in = "run_sdd_loop")
})

test_that("sdd_control() takes the ablation and trace settings", {
  ctl <- sdd_control()
  expect_equal(ctl$objective, "dual")
  expect_equal(ctl$estimator, "coordinates")
  expect_identical(ctl$estimator_features, 100L)
  expect_null(ctl$averaging_start)
  expect_equal(ctl$trace, "none")
  ctl2 <- sdd_control(objective = "primal", step_size = 0.1, averaging = "arithmetic",
                      averaging_start = 50, iterations = 100, estimator_features = 20)
  expect_equal(ctl2$objective, "primal")
  expect_identical(ctl2$averaging_start, 50L)
  expect_identical(ctl2$estimator_features, 20L)
  expect_equal(sdd_control(estimator = "coordinates_kalpha", step_size = 1)$estimator,
               "coordinates_kalpha")
  # Trace iterations: every trace_every (default check_every) and the last.
  tr <- sdd_control(tolerance = 0, iterations = 250, check_every = 100, reference = c(1, 2))$trace
  expect_s3_class(tr, "sddgp_trace_settings")
  expect_identical(tr$at, c(100L, 200L, 250L))
  expect_identical(sdd_control(tolerance = 0, iterations = 250, trace_every = 125,
                               reference = 1)$trace$at, c(125L, 250L))
  expect_identical(sdd_control(tolerance = 0, iterations = 50, reference = 1)$trace$at, 50L)
  expect_identical(sdd_control(tolerance = 0, iterations = 250, trace_at = c(7, 3, 7),
                               reference = 1)$trace$at, c(3L, 7L))
  tx <- data.frame(a = 1:5, b = 5:1)
  tr2 <- sdd_control(test_x = tx, test_y = 1:5)$trace
  expect_identical(tr2$test_x, as.matrix(tx) + 0)
  expect_identical(tr2$test_y, as.numeric(1:5))
  expect_null(tr2$reference)
})

test_that("unsupported ablation settings and bad trace settings give classed errors", {
  bad <- list(
    objective = list("both", NA, 1),
    estimator = list("rows", NA),
    estimator_features = list(0, 2.5, 1e6, NA),
    averaging_start = list(0, 1.5, 1e6, NA, "1"),
    trace_every = list(0, 2.5, 1e6, NA),
    reference = list("a", c(1, NA), numeric(), c(1, Inf), matrix(1, 2, 2)),
    test_x = list("a", matrix(c(1, NA), 1))
  )
  for (arg in names(bad)) {
    for (value in bad[[arg]]) {
      args <- c(stats::setNames(list(value), arg),
                list(step_size = 1, test_y = if (arg == "test_x") 1))
      expect_error(do.call(sdd_control, args), class = "sddgp_error_argument",
                   regexp = paste0("`", arg, "`"), label = paste(arg, "=", deparse(value)))
    }
  }
  expect_error(sdd_control(objective = "x"),
               regexp = "`objective` must be one of \"dual\", \"primal\"")
  expect_error(sdd_control(estimator = "x"), regexp = paste(
    "`estimator` must be one of \"coordinates\", \"features\", \"coordinates_kalpha\""))
  # The primal takes only the (SGD) coordinate estimator; the message says
  # which combinations are valid.
  for (est in c("features", "coordinates_kalpha")) {
    expect_error(sdd_control(objective = "primal", estimator = est, step_size = 1),
                 class = "sddgp_error_argument",
                 regexp = "`estimator` is \"[a-z_]+\", which the primal.*\"coordinates\"")
  }
  # The automatic step size covers SDD's own estimator only.
  expect_error(sdd_control(estimator = "features"), class = "sddgp_error_argument",
               regexp = "`step_size` must be given with objective = \"dual\" and estimator = \"features\"")
  expect_error(sdd_control(objective = "primal"), class = "sddgp_error_argument",
               regexp = "`step_size` must be given")
  # Trace settings.
  expect_error(sdd_control(trace_at = c(0, 5), reference = 1),
               class = "sddgp_error_argument", regexp = "`trace_at` must be whole numbers")
  for (at in list(2.5, numeric(), "5", c(5, NA), 1e6)) {
    expect_error(sdd_control(trace_at = at, reference = 1), class = "sddgp_error_argument",
                 regexp = "`trace_at`")
  }
  expect_error(sdd_control(trace_at = 5, trace_every = 5, reference = 1),
               class = "sddgp_error_argument", regexp = "`trace_at` cannot be given together")
  expect_error(sdd_control(trace_every = 5), class = "sddgp_error_argument",
               regexp = "`trace_every` has nothing to trace")
  expect_error(sdd_control(trace_at = 5), regexp = "`trace_at` has nothing to trace")
  expect_error(sdd_control(test_x = matrix(1:4, 2)), class = "sddgp_error_argument",
               regexp = "`test_y` is missing")
  expect_error(sdd_control(test_y = 1:2), regexp = "`test_x` is missing")
  expect_error(sdd_control(test_x = matrix(1:4, 2), test_y = 1:3),
               class = "sddgp_error_argument", regexp = "`test_y` must be a numeric vector of 2")
  expect_error(sdd_control(test_x = matrix(1:4, 2), test_y = c(1, NA)),
               class = "sddgp_error_argument", regexp = "`test_y`")
})

test_that("a batch of all the data is the exact gradient for either sampling", {
  d <- make_data(80, 2, seed = 37)
  ker <- matern(3/2, 0.3, 1)
  fit_with <- function(sampling, seed) {
    withr::local_seed(seed)
    gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, control = sdd_control(
      tolerance = 0, iterations = 30, batch_size = 500, step_size = 1, batch_sampling = sampling))
  }
  # Deterministic: the seed and the sampling scheme do not matter.
  expect_identical(fit_with("uniform", 1)$alpha, fit_with("uniform", 2)$alpha)
  expect_identical(fit_with("uniform", 1)$alpha, fit_with("permutation", 3)$alpha)
})

# The warm start of the systems (K + D) alpha = B, computed as solve_sdd()
# does, for a test problem.
warm <- function(problem, form, rank) {
  sddgp:::warm_start(problem, sdd_control(warm_start = form, warm_start_rank = rank), 2L)
}

test_that("the warm starts are their formulas in base R, and exact at full rank", {
  d <- make_data(80, 2, seed = 71)
  ls <- c(0.3, 0.5)
  ker <- matern(3/2, ls, 1.3)
  noise <- withr::with_seed(72, stats::runif(80, 0.01, 0.05))
  B <- cbind(d$y, withr::with_seed(73, stats::rnorm(80)))
  problem <- test_problem(d$x, ker, noise, B)
  K <- ref_kernel(d$x, d$x, "matern32", ls, 1.3)
  A <- K + diag(noise)
  for (rank in c(7L, 30L)) {
    # The package's factor (its pivots are tested in test-cg.R).
    pc <- sddgp:::pivoted_cholesky(problem$xs, ker, rank, 0, 0, FALSE, 2L)
    L <- pc$L
    m <- pc$pivots
    # "nystrom": the solution of the approximate system (L L' + D) a = b.
    expect_equal(warm(problem, "nystrom", rank), solve(tcrossprod(L) + diag(noise), B),
                 tolerance = 1e-9)
    # "inducing": the subset-of-regressors weights on the pivots m, which
    # minimise ||b - K[, m] w||^2 in D^-1 plus w' K[m, m] w, scaled by the
    # minimiser c of the residual ||b - c A a||.
    w <- solve(crossprod(K[, m], K[, m] / noise) + K[m, m], crossprod(K[, m], B / noise))
    a <- matrix(0, 80, 2)
    a[m, ] <- w
    Aa <- A %*% a
    a <- sweep(a, 2, colSums(Aa * B) / colSums(Aa^2), "*")
    got <- warm(problem, "inducing", rank)
    expect_equal(got, a, tolerance = 1e-8)
    expect_true(all(got[-m, ] == 0))
    # So its residual is below that of 0.
    expect_true(all(colSums((A %*% got - B)^2) < colSums(B^2)))
  }
  # At full rank both are the exact solution; a rank beyond n is capped.
  exact <- solve(A, B)
  expect_equal(warm(problem, "nystrom", 80), exact, tolerance = 1e-10)
  expect_equal(warm(problem, "inducing", 500), exact, tolerance = 1e-9)
  expect_null(warm(problem, "none", 10))
})

test_that("a warm-started fit converges to the exact solve, from its warm start", {
  d <- make_data(300, 2, seed = 74)
  ls <- c(0.3, 0.5)
  ker <- matern(3/2, ls, 1)
  exact <- solve(ref_kernel(d$x, d$x, "matern32", ls, 1) + diag(0.05, 300), d$y)
  fit <- function(...) {
    withr::with_seed(75, gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, standardize = FALSE,
                                control = sdd_control(...), threads = 2L))
  }
  # The exact gradient with momentum (as in the precision test above).
  for (form in c("inducing", "nystrom")) {
    f <- fit(tolerance = 0, iterations = 5000, batch_size = 300, averaging = "none",
             warm_start = form, warm_start_rank = 20)
    expect_lt(max(abs(f$alpha - exact)) / max(abs(exact)), 1e-8)
  }
  # The iterate and its average both start at the warm start (the momentum
  # at 0): from the exact solution (full rank), five steps averaged at rate
  # 0.01 stay there; had the average started at 0, it would be 5% of it.
  f <- fit(iterations = 5, averaging_rate = 0.01, warm_start_rank = 300)
  expect_lt(max(abs(f$alpha - exact)) / max(abs(exact)), 1e-6)
  # Its residual is far below that of a cold start after as many steps.
  expect_warning(cold <- fit(iterations = 5, averaging_rate = 0.01, warm_start = "none"),
                 class = "sddgp_warning_not_converged")
  expect_lt(sddgp:::final_residual(f), 1e-6)
  expect_gt(sddgp:::final_residual(cold), 0.5)
})

test_that("divergence is judged against a warm start worse than zero", {
  d <- make_data(500, 3, seed = 76, noise_sd = 0.01)
  fit <- function(...) {
    withr::with_seed(77, gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 1e-4,
                                standardize = FALSE, threads = 2L,
                                control = sdd_control(tolerance = 0, warm_start = "nystrom",
                                                      warm_start_rank = 20, ...)))
  }
  # The Nystrom start puts the low-rank fit's residuals, over the noise, on
  # every point: far above the residual of zero.  The steps from it are
  # stable and bring it down; the run ends short, with a warning, not a
  # divergence error (which it was, after one step, when the bar was 1000
  # times the residual of zero whatever the start).
  expect_warning(f <- fit(iterations = 300, check_every = 10),
                 class = "sddgp_warning_not_converged")
  res <- f$trace$residual
  expect_gt(res[1], 1e3)
  expect_lt(res[length(res)], res[1] / 10)
  # A step size that blows up from there is still caught.
  expect_error(fit(iterations = 300, step_size = 1e4), class = "sddgp_error_divergence")
})

test_that("a warm start that fails is a divergence error", {
  problem <- test_problem(matrix(seq_len(20) / 20), matern(3/2, 1, 1), 0.1, matrix(1, 20, 1))
  # A negative noise variance makes I + L' D^-1 L indefinite.
  problem$noise <- rep(-1e-3, 20)
  expect_error(warm(problem, "inducing", 5), class = "sddgp_error_divergence")
})
