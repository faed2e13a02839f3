# Test-set scores.

test_that("score_values() computes RMSE and Gaussian NLL", {
  y <- c(1, 2, 4)
  mu <- c(1.5, 2, 3)
  var <- c(0.25, 1, 4)
  # errors -0.5, 0, 1: RMSE = sqrt((0.25 + 0 + 1) / 3)
  # NLL_i = 0.5 log(2 pi var_i) + err_i^2 / (2 var_i):
  #   0.5 log(2 pi / 4) + 0.25 / 0.5 = 0.5 log(pi / 2) + 0.5
  #   0.5 log(2 pi)     + 0
  #   0.5 log(8 pi)     + 1 / 8
  nll <- (0.5 * log(pi / 2) + 0.5 + 0.5 * log(2 * pi) + 0.5 * log(8 * pi) + 0.125) / 3
  s <- sddgp:::score_values(y, mu, var)
  expect_named(s, c("rmse", "nll"))
  expect_equal(s[["rmse"]], sqrt(1.25 / 3))
  expect_equal(s[["nll"]], nll)
  # A perfect mean at unit variance: NLL = 0.5 log(2 pi).
  expect_equal(sddgp:::score_values(c(3, 4), c(3, 4), c(1, 1))[["nll"]], 0.5 * log(2 * pi))
})

test_that("predictive_scores() uses the predictive mean and variance", {
  d <- make_data(60, 2, seed = 101)
  te <- make_data(20, 2, seed = 102)
  y <- 5 + 4 * d$y
  yt <- 5 + 4 * te$y
  withr::local_seed(101)
  fit <- gp_sdd(d$x, y, kernel = matern(3/2, c(0.4, 0.6), 1), noise = 0.05,
                solver = "cholesky", samples = 20)
  p <- predict(fit, te$x, se.fit = TRUE)
  var <- p$se.fit^2 + p$residual.scale^2
  s <- predictive_scores(fit, te$x, yt)
  expect_equal(s[["rmse"]], sqrt(mean((yt - p$fit)^2)))
  expect_equal(s[["nll"]], mean(dnorm(yt, p$fit, sqrt(var), log = TRUE)) * -1)
  # Normalised: divide by the training sd of y, so RMSE shrinks by that
  # factor and the NLL drops by its log.
  sn <- predictive_scores(fit, te$x, yt, normalised = TRUE)
  y_scale <- sqrt(mean((y - mean(y))^2))
  expect_equal(fit$scaling$y_scale, y_scale)
  expect_equal(s[["rmse"]] / sn[["rmse"]], y_scale)
  expect_equal(s[["nll"]] - sn[["nll"]], log(y_scale))
})

test_that("predictive_scores() validates its arguments", {
  d <- make_data(30, 2, seed = 103)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.05,
                solver = "cholesky", samples = 5)
  xt <- make_inputs(4, 2)
  expect_error(predictive_scores(fit, xt, 1:3), class = "sddgp_error_argument",
               regexp = "`y` has length 3")
  expect_error(predictive_scores(fit, xt, c(1, 2, NA, 4)), class = "sddgp_error_argument",
               regexp = "`y`")
  expect_error(predictive_scores(fit, xt, 1:4, normalised = NA),
               class = "sddgp_error_argument", regexp = "`normalised`")
  expect_error(predictive_scores(fit, xt[, 1, drop = FALSE], 1:4),
               class = "sddgp_error_argument", regexp = "`newdata`")
})

test_that("predictive_scores() do not overflow for targets beyond 1e154", {
  d <- make_data(60, 2, seed = 104)
  te <- make_data(20, 2, seed = 105)
  fit_at <- function(s) withr::with_seed(106, gp_sdd(d$x, d$y * s, kernel = matern(3/2, 0.5, 1),
                                                     noise = 0.05, solver = "cholesky",
                                                     samples = 10))
  s1 <- predictive_scores(fit_at(1), te$x, te$y)
  ss <- predictive_scores(fit_at(1e300), te$x, te$y * 1e300)
  expect_equal(ss[["rmse"]] / 1e300, s1[["rmse"]], tolerance = 1e-8)
  expect_equal(ss[["nll"]] - log(1e300), s1[["nll"]], tolerance = 1e-8)
  expect_equal(predictive_scores(fit_at(1e300), te$x, te$y * 1e300, normalised = TRUE),
               predictive_scores(fit_at(1), te$x, te$y, normalised = TRUE), tolerance = 1e-8)
})
