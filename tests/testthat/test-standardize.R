# Standardisation of inputs and targets: what the fit sees, what predictions
# give back, and no overflow or underflow at any magnitude.

test_that("standardize = TRUE fits the z-scored data and predicts in original units", {
  d <- make_data(150, 2, seed = 15)
  x <- d$x * rep(c(10, 0.01), each = 150) + rep(c(5, -3), each = 150)
  y <- 100 + 20 * d$y
  xt <- make_inputs(5, 2) * rep(c(10, 0.01), each = 5) + rep(c(5, -3), each = 5)
  fit <- gp_sdd(x, y, kernel = matern(5/2, c(0.5, 0.8), 1.2), noise = 0.03,
                solver = "cholesky")
  pop_sd <- function(v) sqrt(mean((v - mean(v))^2))
  xc <- colMeans(x)
  xsd <- apply(x, 2, pop_sd)
  expect_equal(unname(fit$scaling$x_center), unname(xc))
  expect_equal(unname(fit$scaling$x_scale), unname(xsd))
  expect_equal(fit$scaling$y_center, mean(y))
  expect_equal(fit$scaling$y_scale, pop_sd(y))
  zs <- function(m) sweep(sweep(m, 2, xc), 2, xsd, "/")
  ys <- (y - mean(y)) / pop_sd(y)
  ref <- ref_posterior(zs(x), ys, zs(xt), "matern52", c(0.5, 0.8), 1.2, 0.03)
  expect_equal(fit$alpha, ref$alpha, tolerance = 1e-8)
  expect_equal(unname(predict(fit, xt)), mean(y) + pop_sd(y) * ref$mean,
               tolerance = 1e-8)
})

test_that("standardize = FALSE with rescaled hyperparameters gives the same predictions", {
  d <- make_data(120, 2, seed = 16)
  x <- d$x * rep(c(3, 0.5), each = 120)
  y <- 7 + 4 * d$y
  xt <- make_inputs(4, 2) * rep(c(3, 0.5), each = 4)
  fs <- gp_sdd(x, y, kernel = matern(3/2, c(0.4, 0.9), 0.8), noise = 0.02,
               solver = "cholesky", standardize = TRUE)
  sx <- fs$scaling$x_scale
  sy <- fs$scaling$y_scale
  # The same model in original units: length scales times the input spread,
  # variances times the target variance, fitted to the centred target.
  fr <- gp_sdd(x, y - mean(y),
               kernel = matern(3/2, c(0.4, 0.9) * sx, 0.8 * sy^2),
               noise = 0.02 * sy^2, solver = "cholesky", standardize = FALSE)
  expect_equal(predict(fs, xt), predict(fr, xt) + mean(y), tolerance = 1e-8)
})

test_that("predictions transform exactly with affine changes of x and y", {
  d <- make_data(100, 2, seed = 17)
  xt <- make_inputs(5, 2)
  ker <- matern(3/2, c(0.5, 0.7), 1)
  f1 <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, solver = "cholesky")
  x2 <- d$x * rep(c(4, 0.25), each = 100) + rep(c(-1, 2), each = 100)
  xt2 <- xt * rep(c(4, 0.25), each = 5) + rep(c(-1, 2), each = 5)
  f2 <- gp_sdd(x2, -3 + 5 * d$y, kernel = ker, noise = 0.05, solver = "cholesky")
  expect_equal(unname(predict(f2, xt2)), unname(-3 + 5 * predict(f1, xt)),
               tolerance = 1e-10)
})

test_that("a constant input column is only centred and changes nothing", {
  d <- make_data(80, 2, seed = 18)
  xt <- make_inputs(4, 2)
  ker <- matern(3/2, c(0.5, 0.7), 1)
  f1 <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, solver = "cholesky")
  f2 <- gp_sdd(cbind(d$x, x3 = 5), d$y, kernel = matern(3/2, c(0.5, 0.7, 1), 1),
               noise = 0.05, solver = "cholesky")
  expect_equal(unname(f2$scaling$x_scale[3]), 1)
  # The column is constant in training and at prediction: no distance.
  expect_equal(f2$alpha, f1$alpha, tolerance = 1e-10)
  expect_equal(predict(f2, cbind(xt, x3 = 5)), predict(f1, xt), tolerance = 1e-10)
  expect_true(all(is.finite(predict(f2, cbind(xt, x3 = 9)))))
})

test_that("standardisation neither overflows nor underflows at magnitudes 1e+-300", {
  d <- make_data(120, 2, seed = 71)
  xt <- make_inputs(6, 2)
  ker <- matern(3/2, c(0.4, 0.7), 1)
  fit_at <- function(sx, sy) {
    # The same seed, so the same prior draws behind the standard errors.
    fit <- withr::with_seed(1, gp_sdd(d$x * sx, d$y * sy, kernel = ker, noise = 0.02,
                                      solver = "cholesky", samples = 4, threads = 1))
    list(fit = fit, pred = predict(fit, xt * sx, se.fit = TRUE))
  }
  base <- fit_at(1, 1)
  # Each was NaN, Inf or constant (every prediction mean(y)) before.
  for (s in list(c(1e300, 1e300), c(1, 1e155), c(1, 1e300), c(1e200, 1),
                 c(1e-300, 1e-300), c(1, 1e-300), c(1e-300, 1))) {
    got <- fit_at(s[1], s[2])
    expect_true(all(is.finite(got$fit$x)), info = format(s))
    expect_equal(unname(got$fit$scaling$x_scale / s[1]), unname(base$fit$scaling$x_scale),
                 tolerance = 1e-12, info = format(s))
    expect_equal(got$fit$scaling$y_scale / s[2], base$fit$scaling$y_scale,
                 tolerance = 1e-12, info = format(s))
    expect_equal(got$pred$fit / s[2], base$pred$fit, tolerance = 1e-8, info = format(s))
    expect_equal(got$pred$se.fit / s[2], base$pred$se.fit, tolerance = 1e-8, info = format(s))
    expect_equal(got$pred$residual.scale / s[2], base$pred$residual.scale,
                 tolerance = 1e-8, info = format(s))
    expect_equal(residuals(got$fit) / s[2], residuals(base$fit), tolerance = 1e-8,
                 info = format(s))
  }
})

test_that("inputs near the largest doubles are centred without overflow", {
  # x - mean(x) would overflow for values of both signs near 1.8e308.
  d <- make_data(60, 1, seed = 72)
  ker <- matern(5/2, 0.5, 1)
  big <- 1.7e308
  x <- 2 * d$x - 1
  fit <- gp_sdd(x * big, d$y, kernel = ker, noise = 0.05, solver = "cholesky")
  ref <- gp_sdd(x, d$y, kernel = ker, noise = 0.05, solver = "cholesky")
  expect_equal(fit$x, ref$x, tolerance = 1e-12)
  expect_equal(predict(fit, x[1:5, , drop = FALSE] * big), predict(ref, x[1:5, , drop = FALSE]),
               tolerance = 1e-8)
})

test_that("a column is constant relative to its magnitude, not in absolute terms", {
  d <- make_data(50, 2, seed = 73)
  x <- cbind(d$x, x3 = 1e-14 * d$x[, 1], x4 = 3 + 1e-17 * d$x[, 2])
  fit <- gp_sdd(x, d$y, kernel = matern(3/2, 1, 1), noise = 0.1, solver = "cholesky")
  # The tiny column is standardised like any other; the one that varies
  # only in its last bits is only centred.
  expect_equal(unname(fit$scaling$x_scale[3]), 1e-14 * unname(fit$scaling$x_scale[1]))
  expect_equal(unname(fit$scaling$x_scale[4]), 1)
})
