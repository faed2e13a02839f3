# Hyperparameter estimation on all the data: the pathwise gradient against
# base R, the ascent against the exact maximum, warm starts, and the probes
# reused as posterior samples.

ref_mll_gradient <- function(x, y, theta, h = 1e-5) {
  vapply(seq_along(theta), function(i) {
    e <- replace(numeric(length(theta)), i, h)
    (ref_mll(x, y, theta + e) - ref_mll(x, y, theta - e)) / (2 * h)
  }, numeric(1))
}

# The value of `expr`, an ascent that must stop at its step limit, and
# warn that it did.
at_step_limit <- function(expr) {
  warned <- FALSE
  value <- withCallingHandlers(expr, sddgp_warning_estimation_not_converged = function(w) {
    warned <<- TRUE
    invokeRestart("muffleWarning")
  })
  expect_true(warned)
  value
}

test_that("the pathwise gradient is the exact one when V V' / s is H^-1", {
  d <- make_data(60, d = 3, seed = 3)
  theta <- log(c(0.3, 0.5, 0.8, 1.3, 0.05))
  k <- kernel_of(theta, 3)
  H <- ref_kernel(d$x, d$x, "matern32", k$lengthscale, k$variance) + 0.05 * diag(60)
  # s = m columns V = sqrt(m) H^-1 L with L L' = H: V V' / m = H^-1.
  V <- sqrt(60) * solve(H, t(chol(H)))
  res <- .Call(C_mll_pathwise, scale_inputs(d$x, k), cbind(solve(H, d$y), V),
               kernel_spec(k), 0.05, NULL, 2L)
  expect_equal(res$gradient, ref_mll_gradient(d$x, d$y, theta), tolerance = 1e-6)
})

# 80 points, their kernel and H = K + noise I at log hyperparameters theta,
# and batch means of the pathwise estimate over 40 batches of 25 probes,
# each a prior draw from draw_features() plus noise, solved exactly: the
# batch means' spread gives the Monte-Carlo standard error.
pathwise_batches <- function(draw_features) {
  m <- 80
  d <- make_data(m, d = 2, seed = 4)
  theta <- log(c(0.4, 0.7, 1, 0.02))
  k <- kernel_of(theta, 2)
  H <- ref_kernel(d$x, d$x, "matern32", k$lengthscale, k$variance) + 0.02 * diag(m)
  a <- solve(H, d$y)
  batches <- replicate(40, {
    prior <- draw_features(k)
    Z <- prior_values(prior, k, d$x, 1L) + sqrt(0.02) * matrix(stats::rnorm(m * 25), m)
    .Call(C_mll_pathwise, scale_inputs(d$x, k), cbind(a, solve(H, Z)), kernel_spec(k),
          0.02, NULL, 2L)$gradient
  })
  list(mean = rowMeans(batches), se = apply(batches, 1, sd) / sqrt(ncol(batches)),
       exact = ref_mll_gradient(d$x, d$y, theta))
}

test_that("the pathwise estimate with the package's probes is unbiased", {
  withr::local_seed(5)
  # Each probe has 500 features of its own.
  est <- pathwise_batches(function(k) draw_prior(k, 2, 500, 25))
  expect_true(all(abs(est$mean - est$exact) < 4 * est$se))
  # The test has power: the standard errors are small next to the gradient.
  expect_lt(sqrt(sum(est$se^2)), 0.1 * sqrt(sum(est$exact^2)))
})

test_that("probes that share one set of features are biased", {
  withr::local_seed(6)
  # One set of 500 features for all 1000 probes: their covariance is that
  # set's approximation of K, whose error H^-1 magnifies.
  features <- draw_prior(kernel_of(log(c(0.4, 0.7, 1)), 2), 2, 500, 1)
  features$independent <- FALSE
  est <- pathwise_batches(function(k) {
    features$weights <- matrix(stats::rnorm(500 * 25), 500)
    features
  })
  expect_false(all(abs(est$mean - est$exact) < 4 * est$se))
})

test_that("independent prior draws replay with features of their own", {
  d <- make_data(30, d = 2, seed = 4)
  k <- kernel_of(log(c(0.4, 0.7, 1)), 2)
  withr::local_seed(6)
  prior <- draw_prior(k, 2, 100, 2)
  # Draw 2's features are rows 101-200 of omega.
  one <- prior_columns(prior, 2L)
  expect_equal(nrow(one$omega), 100L)
  expect_equal(prior_values(one, k, d$x, 1L), prior_values(prior, k, d$x, 1L)[, 2, drop = FALSE])
  # A prior of one draw (no `independent`: replayed as a shared set), with
  # the amplitudes folded into its weights.
  shared <- list(omega = prior$omega[101:200, ], phase = prior$phase[101:200],
                 weights = prior$amplitude[101:200] * prior$weights[, 2, drop = FALSE])
  expect_equal(prior_values(shared, k, d$x, 1L), prior_values(one, k, d$x, 1L))
})

test_that("the ascent on all the data reaches the exact maximum", {
  skip_on_cran()
  n <- 300
  d <- make_data(n, d = 2, seed = 7, noise_sd = 0.1)
  # The kernel variance is given: with it free the maximum lies on a long
  # ridge of variance against length scales, which Adam climbs slowly.
  k <- matern(3/2, variance = 1)
  withr::local_seed(8)
  exact <- gp_sdd(d$x, d$y, kernel = k, solver = "cholesky", threads = 2,
                  standardize = FALSE,
                  estimation = estimation_control(method = "subset", subset_size = n))
  withr::local_seed(9)
  fit <- gp_sdd(d$x, d$y, kernel = k, solver = "cholesky", threads = 2,
                standardize = FALSE,
                estimation = estimation_control(
                  method = "iterative", subset_size = 50, pilot_size = 50,
                  iterative = iterative_control(probes = 32, inner_tolerance = 1e-6,
                                                max_steps = 40)))
  theta_of <- function(f) log(c(f$kernel$lengthscale, f$kernel$variance, f$noise))
  best <- ref_mll(d$x, d$y, theta_of(exact))
  it <- fit$estimation$iterative
  start <- ref_mll(d$x, d$y, it$path[1, ])
  reached <- ref_mll(d$x, d$y, theta_of(fit))
  # The 50-point subset starts well below the maximum (2.4 here), and the
  # ascent closes nearly all of the gap (to 0.05 here).
  expect_gt(best - start, 1)
  expect_lt(best - reached, 0.1 * (best - start))
  expect_equal(theta_of(fit), theta_of(exact), tolerance = 0.05)
  # The path's estimated gain follows the exact one, roughly: the probes'
  # error in the gradient adds up along the path (+40% here).
  gain <- it$log_marginal_likelihood_gain
  exact_gain <- ref_mll(d$x, d$y, it$path[it$steps, ]) - start
  expect_lt(abs(gain[length(gain)] - exact_gain), 0.6 * exact_gain)
  expect_identical(fit$estimation$method, "iterative")
})

test_that("warm starts cut the inner iterations", {
  skip_on_cran()
  n <- 1000
  d <- make_data(n, d = 3, seed = 10, noise_sd = 0.05)
  run <- function(warm) {
    at_step_limit(withr::with_seed(11, gp_sdd(d$x, d$y, solver = "cholesky", threads = 2,
      estimation = estimation_control(
        method = "iterative", subset_size = 300,
        iterative = iterative_control(probes = 8, inner_tolerance = 1e-4, max_steps = 6,
                                      tolerance = 0, learning_rate = 0.003,
                                      warm_start = warm)))))$estimation$iterative
  }
  previous <- run("previous")
  extrapolated <- run("extrapolated")
  cold <- run("none")
  # The same path (the solves are accurate enough), with fewer CG
  # iterations after the first step: 50, 33, 33, 33, 34, 38 from the
  # previous solutions against 50 a step from none when measured, and 50,
  # 33, 33, 36, 38, 42 extrapolated (inst/benchmarks/estimation_warm.R
  # measures them by learning rate and along whole ascents).
  expect_equal(previous$path, cold$path, tolerance = 1e-3)
  expect_equal(extrapolated$path, cold$path, tolerance = 1e-3)
  expect_equal(previous$inner_iterations[1], cold$inner_iterations[1])
  expect_equal(extrapolated$inner_iterations[1:2], previous$inner_iterations[1:2])
  expect_lt(sum(previous$inner_iterations[-1]), 0.85 * sum(cold$inner_iterations[-1]))
  expect_lt(sum(extrapolated$inner_iterations[-1]), 0.85 * sum(cold$inner_iterations[-1]))
  expect_identical(iterative_control()$warm_start, "previous")
})

test_that("the extrapolated start is exact for solutions linear along the path", {
  M <- matrix(c(1, -2, 0.5, 3, 1, -1), 2) # alpha(theta) = M theta, 3 parameters
  path <- rbind(c(0, 0, 0), c(0.1, -0.2, 0.05))
  alpha <- function(theta) M %*% theta
  # A step along the last one, twice as long: exact.
  theta <- path[2, ] + 2 * (path[2, ] - path[1, ])
  start <- sddgp:::warm_start_alpha("extrapolated", alpha(path[2, ]), alpha(path[1, ]),
                                    theta, path)
  expect_equal(start, alpha(theta))
  # A step across it: only its part along the last step is predicted.
  across <- c(0.2, 0.1, 0)
  start <- sddgp:::warm_start_alpha("extrapolated", alpha(path[2, ]), alpha(path[1, ]),
                                    path[2, ] + across, path)
  along <- sum(across * (path[2, ] - path[1, ])) / sum((path[2, ] - path[1, ])^2)
  expect_equal(start, alpha(path[2, ] + along * (path[2, ] - path[1, ])))
  expect_identical(sddgp:::warm_start_alpha("previous", alpha(path[2, ]), alpha(path[1, ]),
                                            theta, path), alpha(path[2, ]))
  expect_null(sddgp:::warm_start_alpha("none", alpha(path[2, ]), alpha(path[1, ]),
                                       theta, path))
  # A repeated point (no last step) falls back to the last solution.
  expect_identical(sddgp:::warm_start_alpha("extrapolated", alpha(path[2, ]), alpha(path[2, ]),
                                            theta, path[c(2, 2), ]), alpha(path[2, ]))
})

test_that("exact prior draws' solutions are plausible; one with a feature error is not", {
  # Base R: H = K + noise I with little noise, exact draws z ~ N(0, H).
  n <- 200
  x <- withr::with_seed(30, matrix(stats::runif(n * 2), n))
  noise <- 1e-6
  H <- exp(-as.matrix(stats::dist(x))^2 / 0.1) + diag(noise, n)
  Z <- t(chol(H)) %*% withr::with_seed(31, matrix(stats::rnorm(n * 500), n))
  V <- solve(H, Z)
  expect_false(any(sddgp:::implausible_probes(cbind(0, V), rep(noise, n))))
  # An error of 0.1 along H's weakest direction, as a random-feature draw
  # can make, is amplified by 1 / (its eigenvalue, about the noise).
  weakest <- eigen(H, symmetric = TRUE)$vectors[, n]
  v <- solve(H, Z[, 1] + 0.1 * weakest)
  expect_gt(sum(noise * v^2), n + 10 * sqrt(2 * n))
  expect_identical(sddgp:::implausible_probes(cbind(0, V[, 2], v), rep(noise, n)),
                   c(FALSE, TRUE))
})

test_that("implausible probes are left out of the gradient and the samples, with a warning", {
  skip_on_cran()
  # Little noise against the signal (2.6e-6 of it) and 200 random features a
  # probe, a tenth of the default: with these seeds one of the 16 probes'
  # draws gives a solution no exact draw could (with the default 2000, none
  # does: inst/benchmarks/pathwise_probes.R).
  x <- withr::with_seed(103, matrix(stats::runif(500 * 3), 500))
  y <- withr::with_seed(104, sin(3 * x[, 1]) + x[, 2]^2 - 0.5 * x[, 3] +
                          stats::rnorm(500, sd = 0.03))
  fit <- gp_sdd(x, y, solver = "cholesky", threads = 2,
                kernel = matern(lengthscale = exp(c(3.43, 4.07, 5.81)), variance = exp(6.88)),
                noise = exp(-5.96))
  theta <- log(c(fit$kernel$lengthscale, fit$kernel$variance, fit$noise))
  space <- sddgp:::parameter_space(fit$x, fit$y, matern(), NULL, 1e-6)
  # (One step is also its step limit, which warns as well.)
  expect_warning(est <- withr::with_seed(1012, suppressWarnings(sddgp:::estimate_iterative(
    fit$x, fit$y, "matern32", space, theta,
    iterative_control(max_steps = 1, inner_tolerance = 1e-6, features = 200), 2L),
    classes = "sddgp_warning_estimation_not_converged")),
    class = "sddgp_warning_estimation_probes")
  excluded <- est$record$excluded_probes
  expect_gt(excluded, 0L)
  expect_match(paste(sddgp:::estimation_summary(
    list(estimated = "all", subset_size = 500, log_marginal_likelihood = 0, seconds = 1,
         iterative = est$record), 500, 4), collapse = " "),
    sprintf("%d implausible probe solutions left out, in 1 of the steps", excluded))
  kept <- est$solution$alpha
  expect_identical(ncol(kept), 1L + 16L - excluded)
  expect_false(any(sddgp:::implausible_probes(kept, rep(fit$noise, 500))))
  # The gradient is the pathwise estimate of the kept columns.
  spec <- sddgp:::kernel_spec(fit$kernel)
  xs <- sddgp:::scale_inputs(fit$x, fit$kernel)
  expect_equal(est$record$gradient[1, ] * 500,
               .Call(sddgp:::C_mll_pathwise, xs, kept, spec, fit$noise, NULL, 2L)$gradient)
})

test_that("the probes are the fit's posterior samples, from the exact posterior", {
  skip_on_cran()
  n <- 120
  d <- make_data(n, d = 1, seed = 12, noise_sd = 0.2)
  xnew <- matrix(c(0.1, 0.35, 0.6, 0.9), ncol = 1)
  N <- 400
  withr::local_seed(13)
  fit <- at_step_limit(gp_sdd(d$x, d$y, samples = N, standardize = FALSE, threads = 2,
                solver = "cg", control = cg_control(tolerance = 1e-10),
                estimation = estimation_control(
                  method = "iterative", subset_size = 60,
                  iterative = iterative_control(probes = N, inner_tolerance = 1e-6,
                                                max_steps = 3, features = 1000))))
  expect_true(isTRUE(fit$prior$independent))
  ref <- ref_posterior(d$x, d$y, xnew, "matern32", fit$kernel$lengthscale,
                       fit$kernel$variance, fit$noise)
  s <- as.matrix(simulate(fit, nsim = N, newdata = xnew, stored = TRUE))
  # Each sample has its own features, so the draws are independent with the
  # exact mean and covariance: standard errors from the draws themselves.
  centred <- s - ref$mean
  expect_true(all(abs(rowMeans(centred)) < 5 * apply(s, 1, sd) / sqrt(N)))
  products <- sapply(seq_len(N), function(j) tcrossprod(centred[, j]))
  se <- apply(products, 1, sd) / sqrt(N)
  expect_true(all(abs(rowMeans(products) - as.vector(ref$cov)) < 5 * se))
  expect_true(all(sqrt(diag(ref$cov)) > 0.02))
  # The fit started from the probes' solutions: CG had little left to do.
  expect_lt(fit$iterations, 20)
})

test_that("iterative estimation gives the same result on 1 and 2 threads", {
  d <- make_data(400, d = 2, seed = 14)
  est <- function(threads) {
    at_step_limit(withr::with_seed(15, gp_sdd(d$x, d$y, solver = "cholesky", threads = threads,
      estimation = estimation_control(method = "iterative", subset_size = 100,
                                      iterative = iterative_control(probes = 4, max_steps = 4)))))
  }
  one <- est(1)
  two <- est(2)
  expect_identical(one$estimation$iterative$path, two$estimation$iterative$path)
  expect_identical(one$kernel, two$kernel)
})

test_that("estimation_control() chooses the method by n and projected cost", {
  ctl <- estimation_control()
  # 40 steps of one CG iteration with 17 columns, and the gradient's pass
  # (d + 2 derivatives for 17 columns), at the documented rates: by hand,
  # at most sqrt(300 / (40 * (17 * 7e-11 + 26 * 2.5e-10))) = 31,229 points
  # in 8 dimensions and 27,129 in 18 (36 * 2.5e-10).
  expect_identical(estimation_method(ctl, 2000, 8, 10), "subset")
  expect_identical(estimation_method(ctl, 2001, 8, 10), "iterative")
  expect_identical(estimation_method(ctl, 31229, 8, 10), "iterative")
  expect_identical(estimation_method(ctl, 31230, 8, 10), "vecchia")
  expect_identical(estimation_method(ctl, 27129, 18, 20), "iterative")
  expect_identical(estimation_method(ctl, 27130, 18, 20), "vecchia")
  expect_identical(estimation_method(estimation_control(auto_seconds = 0), 2001, 8, 10),
                   "vecchia")
  expect_identical(estimation_method(ctl, 5000, 8, 0), "subset")
  expect_identical(estimation_method(ctl, 5000, 8, 10, outputs = 2), "vecchia")
  expect_identical(estimation_method(estimation_control(method = "iterative"), 100, 8, 10),
                   "iterative")
  expect_identical(estimation_method(estimation_control(method = "subset"), 5000, 8, 10),
                   "subset")
  expect_identical(estimation_method(estimation_control(method = "vecchia"), 5000, 8, 10),
                   "vecchia")
})

test_that("auto keeps the Vecchia stage's estimate when the first step projects too long", {
  skip_on_cran()
  d <- make_data(400, d = 2, seed = 18, noise_sd = 0.01)
  # The pivoted-Cholesky preconditioner, whose first step takes several
  # iterations here (Vecchia's takes fewer than the cut below needs).
  fit_with <- function(method, auto_seconds = 300) {
    withr::with_seed(19, gp_sdd(d$x, d$y, solver = "cholesky", threads = 2,
      estimation = estimation_control(method = method, subset_size = 100,
        auto_seconds = auto_seconds,
        iterative = iterative_control(preconditioner = "pivoted_cholesky"))))
  }
  # Between the projections of one inner iteration a step (0.040 s by hand)
  # and of the first step's iterations (over 0.05 s from 3 iterations on).
  cut <- fit_with("auto", auto_seconds = 0.05)
  it <- cut$estimation$iterative
  expect_identical(it$stopped, "over budget")
  expect_identical(it$steps, 1L)
  expect_gt(it$inner_iterations, 1)
  expect_equal(it$projected_seconds,
               40 * 400^2 * (7e-11 * it$inner_iterations * 17 + 2.5e-10 * 20))
  # It goes on to Vecchia's approximation instead, from the subset's estimate.
  expect_identical(cut$estimation$method, "vecchia")
  vecchia <- fit_with("vecchia")
  expect_identical(cut$kernel, vecchia$kernel)
  expect_identical(cut$noise, vecchia$noise)
  expect_equal(cut$alpha, vecchia$alpha, tolerance = 1e-8)
  expect_output(print(cut), "estimated by Vecchia's approximate marginal likelihood on all 400 points")
  expect_output(print(summary(cut)), "no exact ascent on all 400 points: 40 steps")
  expect_output(print(summary(cut)), "then on all 400 points by Vecchia's approximation")
  # With the default budget the same data go on to all the points.
  full <- suppressWarnings(fit_with("auto"), classes = "sddgp_warning_estimation_not_converged")
  expect_identical(full$estimation$method, "iterative")
  expect_output(print(summary(full)), "then on all 400 points: [0-9]+ Adam steps")
})

test_that("bad settings of estimation on all the data are classed errors", {
  expect_error(estimation_control(method = "all"), class = "sddgp_error_argument")
  expect_error(estimation_control(iterative = list()), class = "sddgp_error_argument")
  expect_error(estimation_control(auto_seconds = -1), class = "sddgp_error_argument")
  expect_error(iterative_control(probes = 0), class = "sddgp_error_argument")
  expect_error(iterative_control(solver = "svgp"), class = "sddgp_error_argument")
  expect_error(iterative_control(inner_tolerance = 1), class = "sddgp_error_argument")
  expect_error(iterative_control(learning_rate = -1), class = "sddgp_error_argument")
  expect_error(iterative_control(warm_start = NA), class = "sddgp_error_argument")
  expect_error(iterative_control(warm_start = TRUE), class = "sddgp_error_argument")
  expect_error(iterative_control(precision = "half"), class = "sddgp_error_argument")
  expect_error(iterative_control(preconditioner = "none"), class = "sddgp_error_argument",
               regexp = "`preconditioner`")
  for (bad in list(0, -1, NA, "60", c(1, 2), -Inf)) {
    expect_error(iterative_control(time_limit = bad), class = "sddgp_error_argument",
                 regexp = "`time_limit`")
  }
})

test_that("time_limit ends the ascent after the step under way, with a warning", {
  d <- make_data(300, d = 2, seed = 16)
  fit_with <- function(time_limit, max_steps = 50) {
    withr::with_seed(17, gp_sdd(d$x, d$y, solver = "cholesky", threads = 1,
      estimation = estimation_control(method = "iterative", subset_size = 100,
                                      iterative = iterative_control(probes = 4,
                                                                    max_steps = max_steps,
                                                                    time_limit = time_limit))))
  }
  expect_warning(fit <- fit_with(1e-9), class = "sddgp_warning_estimation_not_converged",
                 regexp = "stopped at its time limit \\(1e-09 s, after 1 step\\).*`time_limit`")
  it <- fit$estimation$iterative
  expect_identical(it$stopped, "time limit")
  expect_identical(it$steps, 1L)
  expect_output(print(summary(fit)), "1 Adam step \\(time limit\\)")
  # The step it ran is the first step of an ascent without a limit, and the
  # fit's hyperparameters are those it was taken at.
  one <- at_step_limit(fit_with(Inf, max_steps = 1))
  expect_identical(it$path, one$estimation$iterative$path)
  expect_identical(fit$kernel, one$kernel)
  expect_output(print(iterative_control(time_limit = 600)), "at most 100 steps and 600 s,")
})

test_that("inner solves in single precision follow the double-precision ascent", {
  d <- make_data(400, d = 2, seed = 31, noise_sd = 0.1)
  path <- function(precision) {
    fit <- at_step_limit(withr::with_seed(32, gp_sdd(d$x, d$y, solver = "cholesky", threads = 2,
      estimation = estimation_control(method = "iterative", subset_size = 150,
                                      iterative = iterative_control(max_steps = 6,
                                                                    precision = precision)))))
    fit$estimation$iterative$path
  }
  single <- path("single")
  double <- path("double")
  # The setting reaches the solves (float kernel values change the bits),
  # and their error is small against the steps (0.1 in log hyperparameters).
  expect_false(identical(single, double))
  expect_lt(max(abs(single - double)), 0.01)
})

test_that("the settings print what they are", {
  expect_output(print(iterative_control()), paste(
    "16 probes, inner solver cg \\(auto preconditioner\\) to relative residual 0.01,",
    "warm start previous"))
  expect_output(print(iterative_control(preconditioner = "pivoted_cholesky")),
                "inner solver cg \\(pivoted_cholesky preconditioner\\) to")
  expect_output(print(iterative_control(warm_start = "none", solver = "sdd")),
                "inner solver sdd to relative residual 0.01, warm start none")
  expect_output(print(iterative_control(precision = "single")),
                "relative residual 0.01 in single precision, warm start previous")
})

test_that("summary() reports the estimation on all the data", {
  d <- make_data(300, d = 2, seed = 16)
  fit <- at_step_limit(withr::with_seed(17, gp_sdd(d$x, d$y, solver = "cholesky", threads = 2,
    estimation = estimation_control(method = "iterative", subset_size = 100,
                                    iterative = iterative_control(probes = 4, max_steps = 3)))))
  expect_output(print(fit), "estimated by marginal likelihood on all 300 points")
  expect_output(print(summary(fit)), "then on all 300 points: 3 Adam steps \\(step limit\\)")
  expect_output(print(summary(fit)), "ending at\\s+relative residual")
  # Uncapped solves end at their tolerance.
  expect_true(all(fit$estimation$iterative$inner_residuals <= 0.01))
})

test_that("inner solves that fall behind the ascent are a warning, and divergent ones an error", {
  # With little noise, two CG iterations a step (pivoted-Cholesky
  # preconditioner; Vecchia's keeps up here) lose ground to the moving
  # hyperparameters until their iterate is far worse than zero.
  low <- make_data(300, d = 2, seed = 21, noise_sd = 0.001)
  capped <- function(d, iterations, seed) withr::with_seed(seed, gp_sdd(
    d$x, d$y, kernel = "matern32", solver = "cg", threads = 1,
    estimation = estimation_control(method = "iterative", iterative = iterative_control(
      probes = 4, inner_iterations = iterations, max_steps = 30,
      preconditioner = "pivoted_cholesky"))))
  err <- expect_error(capped(low, 2, 22), class = "sddgp_error_divergence",
                      regexp = "diverged at outer step \\d+: its inner solves ended at relative residual")
  expect_gt(err$iterations, 1)
  # With more noise, five iterations keep up only roughly: the fit is made
  # and the warning names the steps whose solves stopped short.
  noisy <- make_data(300, d = 2, seed = 21, noise_sd = 0.1)
  caught <- list()
  fit <- withCallingHandlers(capped(noisy, 2, 23), sddgp_warning_not_converged = function(w) {
    caught[[length(caught) + 1L]] <<- w
    invokeRestart("muffleWarning")
  })
  short <- Filter(function(w) grepl("stopped at their budget", conditionMessage(w)), caught)
  expect_length(short, 1L)
  expect_s3_class(short[[1L]], "sddgp_warning_estimation_not_converged")
  it <- fit$estimation$iterative
  # A step short of the tolerance used its whole budget; one whose residual
  # is above the tolerance is short (a step within it may be short too: the
  # tolerance holds for every system, the residual recorded is an RMS).
  expect_true(length(short[[1L]]$steps) > 0L)
  expect_true(all(it$inner_iterations[short[[1L]]$steps] == 2L))
  expect_true(all(which(it$inner_residuals > 0.01) %in% short[[1L]]$steps))
  expect_true(all(it$inner_residuals <= 10))
})

test_that("the inner preconditioner is Vecchia's, or for the Tanimoto kernel the pivoted Cholesky one", {
  ctl <- iterative_control()
  expect_identical(ctl$preconditioner, "auto")
  expect_identical(sddgp:::inner_control(ctl, matern(3/2, 1, 1))$preconditioner, "vecchia")
  expect_identical(sddgp:::inner_control(ctl, tanimoto(1))$preconditioner, "pivoted_cholesky")
  pc <- iterative_control(preconditioner = "pivoted_cholesky")
  expect_identical(sddgp:::inner_control(pc, matern(3/2, 1, 1))$preconditioner, "pivoted_cholesky")
  expect_error(sddgp:::inner_control(iterative_control(preconditioner = "vecchia"), tanimoto(1)),
               class = "sddgp_error_argument", regexp = "`estimation`.*Tanimoto")
  # A Tanimoto fit estimated on all the data runs (with the pivoted Cholesky one).
  x <- withr::with_seed(31, matrix(rbinom(200 * 24, 1, 0.3), 200))
  y <- rowSums(x[, 1:4]) + withr::with_seed(32, rnorm(200, sd = 0.3))
  fit <- suppressWarnings(withr::with_seed(33, gp_sdd(x, y, kernel = "tanimoto", threads = 1,
    solver = "cg", estimation = estimation_control(method = "iterative", subset_size = 100,
      iterative = iterative_control(probes = 4, max_steps = 3)))))
  expect_identical(fit$estimation$method, "iterative")
  expect_true(all(is.finite(fit$alpha)))
})

test_that("Ctrl-C during estimation on all the data stops it promptly", {
  skip_on_cran()
  skip_if_not_installed("callr")
  # The signal lands in an inner CG solve or a gradient pass over the
  # 2e8 pairs, both of which answer it between slabs.
  expect_prompt_interrupt(20000, 2, cg_control(), "interrupted",
                          args = list(kernel = "matern32", noise = NULL,
                                      estimation = estimation_control(
                                        method = "iterative", subset_size = 200,
                                        iterative = iterative_control(max_steps = 1000,
                                                                      tolerance = 0))),
                          signal_in = "estimate_iterative")
})
