# Vecchia's correction of an iterative fit's mean and samples
# (correction.R): predict()'s `neighbours`.

# SDD stopped far from the solution on n points in d dimensions, in the
# data's units (standardize = FALSE), with the data and the kernel.
early_fit <- function(n = 300, d = 2, iterations = 20, weights = NULL, y = NULL) {
  data <- make_data(n, d, seed = 7)
  kernel <- matern(3/2, rep(0.3, d), 1)
  fit <- gp_sdd(data$x, y %||% data$y, kernel = kernel, noise = 0.01, weights = weights,
                standardize = FALSE, solver = "sdd", threads = 1,
                control = sdd_control(tolerance = 0, iterations = iterations))
  list(fit = fit, x = data$x, y = y %||% data$y, kernel = kernel)
}

# The kriging prediction of r at each row of xt from its m nearest rows of
# x, the neighbours found by sorting all distances (ties to the lower index).
ref_correction <- function(x, xt, r, m, noise, lengthscale) {
  H <- ref_kernel(x, x, "matern32", lengthscale) + diag(noise, nrow(x))
  Ks <- ref_kernel(xt, x, "matern32", lengthscale)
  vapply(seq_len(nrow(xt)), function(i) {
    d2 <- colSums((t(x) - xt[i, ])^2 / lengthscale^2)
    nb <- order(d2, seq_along(d2))[seq_len(m)]
    sum(Ks[i, nb] * solve(H[nb, nb], r[nb]))
  }, numeric(1))
}

test_that("the fit keeps its residual y - (K + noise) alpha, and fitted values", {
  m <- early_fit()
  H <- ref_kernel(m$x, m$x, "matern32", 0.3) + diag(0.01, 300)
  expect_equal(drop(m$fit$training_residual), m$y - drop(H %*% m$fit$alpha), tolerance = 1e-10)
  expect_equal(unname(fitted(m$fit)), drop((H - diag(0.01, 300)) %*% m$fit$alpha),
               tolerance = 1e-10)
})

test_that("the correction is the kriging prediction of the residual from the nearest points", {
  m <- early_fit()
  xt <- make_inputs(40, 2)
  raw <- predict(m$fit, xt, neighbours = 0)
  expect_equal(unname(raw), drop(ref_kernel(xt, m$x, "matern32", 0.3) %*% m$fit$alpha),
               tolerance = 1e-10)
  r <- drop(m$fit$training_residual)
  for (k in c(1L, 12L)) {
    expect_equal(unname(predict(m$fit, xt, neighbours = k) - raw),
                 ref_correction(m$x, xt, r, k, 0.01, 0.3), tolerance = 1e-8)
  }
  # The default, 50 neighbours.
  expect_equal(unname(predict(m$fit, xt) - raw), ref_correction(m$x, xt, r, 50, 0.01, 0.3),
               tolerance = 1e-8)
})

test_that("with every training point as a neighbour the prediction is the exact mean", {
  # k(x*, X) alpha + k(x*, X) H^-1 (y - H alpha) = k(x*, X) H^-1 y for any alpha.
  m <- early_fit(n = 200, iterations = 5)
  xt <- make_inputs(30, 2)
  exact <- ref_posterior(m$x, m$y, xt, "matern32", 0.3, 1, 0.01)$mean
  raw <- predict(m$fit, xt, neighbours = 0)
  expect_gt(max(abs(raw - exact)), 0.05)  # far from converged
  expect_equal(unname(predict(m$fit, xt, neighbours = 200)), exact, tolerance = 1e-8)
  # Weights: the noise of observation i is noise / weights[i].
  w <- withr::with_seed(3, runif(200, 0.5, 2))
  mw <- early_fit(n = 200, iterations = 5, weights = w)
  H <- ref_kernel(mw$x, mw$x, "matern32", 0.3) + diag(0.01 / w)
  exact_w <- drop(ref_kernel(xt, mw$x, "matern32", 0.3) %*% solve(H, mw$y))
  expect_equal(unname(predict(mw$fit, xt, neighbours = 200)), exact_w, tolerance = 1e-8)
})

test_that("the correction brings a fit stopped early closer to the exact mean", {
  m <- early_fit(n = 1000, d = 3, iterations = 30)
  xt <- make_inputs(200, 3)
  exact <- ref_posterior(m$x, m$y, xt, "matern32", 0.3, 1, 0.01)$mean
  err <- function(p) sqrt(mean((p - exact)^2))
  raw <- err(predict(m$fit, xt, neighbours = 0))
  corrected <- err(predict(m$fit, xt, neighbours = 30))
  expect_lt(corrected, raw / 2)
})

test_that("a fit of several outputs corrects each, and threads do not change the bits", {
  data <- make_data(150, 2, seed = 7)
  y2 <- cbind(a = data$y, b = rev(data$y))
  fit <- gp_sdd(data$x, y2, kernel = matern(3/2, c(0.3, 0.3), 1), noise = 0.01,
                standardize = FALSE, solver = "sdd", threads = 1,
                control = sdd_control(tolerance = 0, iterations = 5))
  xt <- make_inputs(20, 2)
  p <- predict(fit, xt, neighbours = 150)
  for (j in 1:2) {
    expect_equal(unname(p[, j]),
                 ref_posterior(data$x, y2[, j], xt, "matern32", 0.3, 1, 0.01)$mean,
                 tolerance = 1e-8)
  }
  m <- early_fit(n = 3000, iterations = 20)
  xt <- make_inputs(3000, 2)
  expect_identical(predict(m$fit, xt, threads = 1), predict(m$fit, xt, threads = 2))
})

# The same samples (prior draws and noise) solved exactly and by SDD
# stopped after `iterations` steps, on n points in 2 dimensions.
sample_fits <- function(n = 200, iterations = 5, samples = 8) {
  data <- make_data(n, 2, seed = 7)
  kernel <- matern(3/2, c(0.3, 0.3), 1)
  fit <- function(solver, control = NULL) {
    withr::with_seed(5, gp_sdd(data$x, data$y, kernel = kernel, noise = 0.01, solver = solver,
                               samples = samples, standardize = FALSE, threads = 1,
                               control = control))
  }
  list(exact = fit("cholesky"),
       short = suppressWarnings(fit("sdd", sdd_control(tolerance = 0, iterations = iterations))),
       x = data$x)
}

test_that("each sample's residual is kept, and corrects its path", {
  m <- sample_fits()
  expect_equal(m$exact$prior, m$short$prior)  # the same draws
  # The exact solve meets b = H alpha_exact, so b - H alpha = H (alpha_exact - alpha).
  H <- ref_kernel(m$x, m$x, "matern32", 0.3) + diag(0.01, 200)
  r <- m$short$training_residual
  expect_equal(dim(r), c(200L, 9L))
  expect_equal(r[, -1L], H %*% (m$exact$alpha_samples - m$short$alpha_samples),
               tolerance = 1e-8)
  # With every training point as a neighbour the paths, so the standard
  # errors, are the exact solve's.
  xt <- make_inputs(30, 2)
  exact <- predict(m$exact, xt, se.fit = TRUE)
  raw <- predict(m$short, xt, se.fit = TRUE, neighbours = 0)
  expect_gt(max(abs(raw$se.fit - exact$se.fit)), 0.01)
  full <- predict(m$short, xt, se.fit = TRUE, neighbours = 200)
  expect_equal(full$se.fit, exact$se.fit, tolerance = 1e-8)
  expect_equal(full$fit, exact$fit, tolerance = 1e-8)
  expect_equal(predict(m$short, xt, interval = "prediction", neighbours = 200),
               predict(m$exact, xt, interval = "prediction"), tolerance = 1e-8)
  expect_match(capture.output(print(m$short)), "corrects the mean and the samples", all = FALSE)
})

test_that("the correction brings the standard errors of a fit stopped early closer", {
  m <- sample_fits(n = 1000, iterations = 30, samples = 16)
  xt <- make_inputs(200, 2)
  exact <- predict(m$exact, xt, se.fit = TRUE)$se.fit
  err <- function(neighbours) {
    sqrt(mean((predict(m$short, xt, se.fit = TRUE, neighbours = neighbours)$se.fit - exact)^2))
  }
  expect_lt(err(30), err(0) / 2)
  expect_identical(predict(m$short, xt, se.fit = TRUE, threads = 1),
                   predict(m$short, xt, se.fit = TRUE, threads = 2))
})

test_that("exact fits, other bases and predictions at the training inputs are not corrected", {
  data <- make_data(100, 2, seed = 7)
  kernel <- matern(3/2, c(0.3, 0.3), 1)
  exact <- gp_sdd(data$x, data$y, kernel = kernel, noise = 0.01, solver = "cholesky")
  expect_null(exact$training_residual)
  xt <- make_inputs(10, 2)
  expect_identical(predict(exact, xt), predict(exact, xt, neighbours = 0))
  svgp <- gp_sdd(data$x, data$y, kernel = kernel, noise = 0.01, solver = "svgp",
                 control = svgp_control(inducing = 20), threads = 1)
  expect_null(svgp$training_residual)
  m <- early_fit()
  expect_identical(predict(m$fit), fitted(m$fit))
})

test_that("a fit with a time limit keeps its residual when the pass fits the limit", {
  data <- make_data(200, 2, seed = 7)
  fit <- gp_sdd(data$x, data$y, kernel = matern(3/2, c(0.3, 0.3), 1), noise = 0.01,
                solver = "sdd", threads = 1,
                control = sdd_control(tolerance = 0, iterations = 50, time_limit = 60))
  expect_false(is.null(fit$training_residual))
  expect_false(is.null(fit$fitted.values))
})

test_that("under a time limit the pass runs when its first rows say it fits", {
  expect_true(sddgp:::pass_fits(Inf, 5, 10, 1e6))
  expect_true(sddgp:::pass_fits(60, 1, 2048, 100000))    # 49 s
  expect_false(sddgp:::pass_fits(60, 1.3, 2048, 100000)) # 63 s
})

test_that("bad `neighbours` is refused with a classed error naming it", {
  m <- early_fit(n = 50)
  xt <- make_inputs(3, 2)
  for (bad in list(-1, 2.5, NA, "a", c(1, 2), 1001)) {
    expect_error(predict(m$fit, xt, neighbours = bad), "`neighbours`",
                 class = "sddgp_error_argument")
  }
})
