# Standard errors from the samples against the exact posterior variance
# (base R's Cholesky factor) where the kernel variance is 100 times the
# targets': there the relative residual that suffices for the mean leaves
# the samples' error far above their variance.

sample_case <- function() {
  d <- make_data(400, d = 2, seed = 21, noise_sd = 0.1)
  xt <- make_inputs(50, 2)
  K <- ref_kernel(d$x, d$x, "matern32", 2, 100)
  L <- chol(K + diag(0.01, 400))
  exact <- 100 - colSums(backsolve(L, ref_kernel(d$x, xt, "matern32", 2, 100),
                                   transpose = TRUE)^2)
  list(x = d$x, y = d$y, xt = xt, K = K, exact = exact)
}

# The mean predicted variance over the mean exact one, for fits with seeds
# 1..G made by fit(seed), predicting with each `neighbours` (a column each).
variance_ratios <- function(case, fit, G = 12, neighbours = 50L) {
  t(vapply(seq_len(G), function(seed) {
    f <- fit(seed)
    vapply(neighbours, function(k) {
      mean(predict(f, case$xt, se.fit = TRUE, neighbours = k)$se.fit^2) / mean(case$exact)
    }, numeric(1))
  }, numeric(length(neighbours))))
}

# The default 2000 random features a sample.  Before their frequencies were
# importance-sampled (src/rff.c), the seeds' ratios scattered from 0.5 to
# 3.6 here with 2000, and 8000 were needed.  Vecchia's factor with 50
# neighbours: with the default 100 it is so close to exact on these 400
# points that CG's first iterate already has samples nearly right, and the
# inaccuracy the refinement corrects does not arise.
fit_cg <- function(case, seed, tolerance = NULL, preconditioner = "auto") {
  withr::with_seed(seed, gp_sdd(case$x, case$y, kernel = matern(3/2, 2, 100), noise = 0.01,
                                solver = "cg", samples = 32, standardize = FALSE, threads = 1,
                                control = cg_control(tolerance = tolerance, neighbours = 50,
                                                     preconditioner = preconditioner)))
}

test_that("sample_accuracy() is the sample paths' variance at the training inputs", {
  case <- sample_case()
  fit <- suppressWarnings(fit_cg(case, 1, tolerance = 1e-10))
  # f0(X) - K alpha_s, written out: at residual 1e-10 the identity
  # f0(X) - K alpha = noise alpha - e leaves nothing out.
  f0 <- sddgp:::prior_values(fit$prior, fit$kernel, case$x, threads = 1)
  paths <- f0 - case$K %*% fit$alpha_samples
  expect_equal(fit$sample_accuracy$variance, mean(paths^2), tolerance = 1e-6)
  expect_equal(fit$sample_accuracy$fraction,
               (fit$sample_accuracy$residual)^2 / fit$sample_accuracy$variance)
  expect_lt(fit$sample_accuracy$fraction, 1e-6)
})

test_that("default fits solve the samples on until their standard errors are right", {
  skip_on_cran()
  case <- sample_case()
  refined <- fit_cg(case, 1)
  # The mean's tolerance, then one more solve to a tighter one.
  expect_equal(refined$sample_accuracy$refinements, 1L)
  expect_lte(refined$sample_accuracy$fraction, 0.05)
  expect_output(print(summary(refined)), "samples: mean square residual .* after 1 more solve")
  # The seeds' ratios scatter with the samples (32) and their random
  # features, so they are compared by their mean and its standard error
  # (0.015 here).
  ratios <- variance_ratios(case, function(seed) fit_cg(case, seed))
  expect_lt(abs(mean(ratios) - 1), 4 * stats::sd(ratios) / sqrt(length(ratios)))
  # The test has power: at the tolerance 0.01, which suffices for the mean,
  # the samples' standard errors are too large, and the fits say so.
  expect_warning(fit_cg(case, 1, tolerance = 0.01), class = "sddgp_warning_samples_inaccurate")
  loose <- variance_ratios(case, function(seed) suppressWarnings(fit_cg(case, seed, 0.01)),
                           neighbours = c(0L, 50L))
  expect_gt(mean(loose[, 1]) - 1, 4 * stats::sd(loose[, 1]) / sqrt(nrow(loose)))
  # predict()'s correction of each sample from its residual mends them at
  # new points.
  expect_lt(abs(mean(loose[, 2]) - 1), 4 * stats::sd(loose[, 2]) / sqrt(nrow(loose)))
})

test_that("SDD solves its samples on within one budget", {
  skip_on_cran()
  d <- make_data(400, d = 2, seed = 21, noise_sd = 0.1)
  fit <- withr::with_seed(1, gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 100), noise = 1,
                                    solver = "sdd", samples = 8, standardize = FALSE,
                                    threads = 1, control = sdd_control(iterations = 9000)))
  expect_identical(fit$status, "tolerance")
  expect_gte(fit$sample_accuracy$refinements, 1L)
  expect_lte(fit$sample_accuracy$fraction, 0.05)
  # One trace across the solves, counted from the first step.
  expect_true(all(diff(fit$trace$iteration) > 0))
  expect_equal(fit$trace$iteration[nrow(fit$trace)], fit$iterations)
  expect_lte(fit$iterations, 9000L)
  # The last solve ran to its tighter tolerance, on every system; the fit
  # keeps the first run's.
  last <- fit$trace[nrow(fit$trace), ]
  expect_lt(fit$sample_accuracy$tolerance, fit$tolerance)
  expect_lt(last$residual_samples, fit$sample_accuracy$tolerance)
})

test_that("the further solves stay within the run's budget", {
  case <- sample_case()
  # The pivoted Cholesky preconditioner: the samples' further solve then
  # needs more than one iteration (Vecchia's needs one here).
  pc <- "pivoted_cholesky"
  refined <- fit_cg(case, 1, preconditioner = pc)
  # The first run alone: its tolerance given, so nothing more is solved.
  first <- suppressWarnings(fit_cg(case, 1, tolerance = refined$tolerance, preconditioner = pc))
  expect_equal(first$sample_accuracy$refinements, 0L)
  fit_within <- function(budget) {
    withr::with_seed(1, gp_sdd(
      case$x, case$y, kernel = matern(3/2, 2, 100), noise = 0.01, solver = "cg", samples = 32,
      standardize = FALSE, threads = 1,
      control = cg_control(max_iterations = budget, preconditioner = pc)))
  }
  # One iteration left after the mean's tolerance: the fit is converged at
  # that tolerance, and its samples, short, say so.
  expect_warning(fit <- fit_within(first$iterations + 1L),
                 class = "sddgp_warning_samples_inaccurate")
  expect_identical(fit$iterations, first$iterations + 1L)
  expect_identical(fit$status, "tolerance")
  expect_identical(fit$tolerance, refined$tolerance)
  expect_equal(fit$sample_accuracy$refinements, 1L)
  expect_gt(fit$sample_accuracy$fraction, 0.05)
  expect_false(sddgp:::short_of_accuracy(fit))
  # No budget left at all: the first run's fit, warned of the same way.
  expect_warning(fit <- fit_within(first$iterations), class = "sddgp_warning_samples_inaccurate")
  expect_equal(fit$sample_accuracy$refinements, 0L)
  expect_identical(fit$status, "tolerance")
  # Short of the mean's own tolerance: not converged.
  expect_warning(fit <- fit_within(first$iterations - 2L), class = "sddgp_warning_not_converged")
  expect_identical(fit$status, "iterations")
})

test_that("a run of a fixed number of iterations does not warn about its samples", {
  case <- sample_case()
  # (The mean's system is far from converged after 2 iterations, and says so.)
  expect_warning(fit <- withr::with_seed(1, gp_sdd(
    case$x, case$y, kernel = matern(3/2, 2, 100), noise = 0.01, solver = "cg", samples = 4,
    standardize = FALSE, threads = 1,
    control = cg_control(tolerance = 0, max_iterations = 2, preconditioner = "none"))),
    class = "sddgp_warning_not_converged")
  expect_gt(fit$sample_accuracy$fraction, 0.05)
  expect_equal(fit$sample_accuracy$refinements, 0L)
  expect_no_warning(sddgp:::warn_if_samples_inaccurate(fit))
})

test_that("solvers without weights on the training inputs have no sample accuracy", {
  case <- sample_case()
  fit <- withr::with_seed(1, gp_sdd(case$x, case$y, kernel = matern(3/2, 2, 100), noise = 0.01,
                                    solver = "cholesky", samples = 4, standardize = FALSE,
                                    threads = 1))
  expect_null(fit$sample_accuracy)
})
