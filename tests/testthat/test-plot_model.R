# plot()'s model panels: the fitted function of one input, and observed
# against predicted.  Each panel is recorded (helper-plot.R) and its
# elements checked against the exact GP and predict().

ker <- matern(5/2, 0.3, 1)

# The coordinates of the k-th points/lines call on a page.
xy <- function(page, k) page_args(page, "C_plotXY", k)[[1L]]

test_that("the function panel draws the exact posterior mean, its band, the data and the paths", {
  d <- make_data(40, 1, seed = 501)
  fit <- withr::with_seed(501, gp_sdd(d$x, d$y, kernel = ker, noise = 0.01, samples = 3,
                                      solver = "cholesky", standardize = FALSE))
  pages <- recorded_pages(out <- plot(fit, which = "function", level = 0.9))
  expect_identical(out, fit)
  expect_length(pages, 1L)
  p <- pages[[1L]]
  # Frame, band, three sample paths, the data, the mean, in that order.
  expect_identical(p$calls[-(1:8)], c("C_polygon", rep("C_plotXY", 5)))
  mean_line <- xy(p, 6L)
  grid <- mean_line$x
  expect_length(grid, 200L)
  expect_equal(range(grid), range(d$x) + c(-0.05, 0.05) * diff(range(d$x)))
  exact <- ref_posterior(d$x, d$y, matrix(grid), "matern52", 0.3, 1, 0.01)
  expect_equal(mean_line$y, exact$mean, tolerance = 1e-8)
  data_points <- xy(p, 5L)
  expect_equal(data_points$x, d$x[, 1])
  expect_equal(data_points$y, d$y)
  band <- page_args(p, "C_polygon")
  pred <- predict(fit, matrix(grid, dimnames = list(NULL, "x1")), interval = "confidence",
                  level = 0.9)
  expect_equal(band[[2L]], c(pred[, "lwr"], rev(pred[, "upr"])))
  # The sample paths are the fit's own: simulate(stored = TRUE) at the grid
  # gives them.
  draws <- simulate(fit, nsim = 3, newdata = matrix(grid, dimnames = list(NULL, "x1")),
                    stored = TRUE)
  expect_equal(xy(p, 2L)$y, draws$sim_1)
  expect_equal(xy(p, 4L)$y, draws$sim_3)
  expect_match(page_args(p, "C_title")[[2L]], "90% confidence interval")
  # paths = 0: no paths.
  p0 <- recorded_pages(plot(fit, which = "function", paths = 0))[[1L]]
  expect_identical(sum(p0$calls == "C_plotXY"), 3L)
})

test_that("an exact fit without samples plots its mean, exact band and data, not 'no trace'", {
  d <- make_data(30, 1, seed = 502)
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.01, solver = "cholesky",
                standardize = FALSE)
  expect_no_message(pages <- recorded_pages(plot(fit)))
  expect_length(pages, 2L) # function and observed; no trace
  # predict() gives an exact fit's variances without samples: the band is
  # the exact posterior's.
  grid <- xy(pages[[1L]], sum(pages[[1L]]$calls == "C_plotXY"))$x # the mean line
  band <- page_args(pages[[1L]], "C_polygon")
  exact <- ref_posterior(d$x, d$y, matrix(grid), "matern52", 0.3, 1, 0.01)
  z <- stats::qnorm(0.975)
  expect_equal(band[[2L]], c(exact$mean - z * sqrt(diag(exact$cov)),
                             rev(exact$mean + z * sqrt(diag(exact$cov)))), tolerance = 1e-6)
  expect_match(page_args(pages[[1L]], "C_title")[[2L]], "95% confidence interval")
  expect_true("C_segments" %in% pages[[2L]]$calls)
  expect_match(page_args(pages[[2L]], "C_title")[[2L]], "prediction intervals")
})

test_that("the observed panel plots targets against fitted values with prediction intervals", {
  d <- make_data(50, 2, seed = 503)
  fit <- withr::with_seed(503, gp_sdd(d$x, d$y, kernel = ker, noise = 0.01, samples = 4,
                                      solver = "cholesky"))
  pages <- recorded_pages(plot(fit))
  expect_length(pages, 1L) # two inputs: no function panel; exact: no trace
  p <- pages[[1L]]
  expect_true(all(c("C_segments", "C_abline") %in% p$calls))
  pts <- xy(p, 2L)
  expect_equal(pts$x, unname(fitted(fit)))
  expect_equal(pts$y, d$y)
  pred <- predict(fit, interval = "prediction")
  seg <- page_args(p, "C_segments")
  expect_equal(seg[[2L]], unname(pred[, "lwr"]))
  expect_equal(seg[[4L]], unname(pred[, "upr"]))
  expect_identical(unname(unlist(page_args(p, "C_abline")[1:2])), c(0, 1))
  # Test data instead of the training data.
  test <- make_data(20, 2, seed = 504)
  pt <- recorded_pages(plot(fit, which = "observed", newdata = test$x, newy = test$y))[[1L]]
  expect_equal(xy(pt, 2L)$x, unname(predict(fit, test$x)))
  expect_equal(xy(pt, 2L)$y, test$y)
  expect_match(page_args(pt, "C_title")[[1L]], "20 test points")
  expect_error(plot(fit, which = "observed", newdata = test$x), class = "sddgp_error_argument",
               regexp = "`newy` is missing")
  expect_error(plot(fit, which = "observed", newdata = test$x, newy = test$y[-1]),
               class = "sddgp_error_argument", regexp = "`newy` must be a numeric vector of 20")
})

test_that("which = selects panels, and the trace is one of them", {
  d <- make_data(60, 1, seed = 505)
  fit <- withr::with_seed(505, gp_sdd(d$x, d$y, kernel = ker, noise = 0.01, samples = 2,
                                      control = sdd_control(tolerance = 0, iterations = 50)))
  pages <- recorded_pages(plot(fit))
  expect_length(pages, 3L)
  expect_identical(page_args(pages[[3L]], "C_title")[[1L]], "SDD convergence")
  expect_length(recorded_pages(plot(fit, which = c("trace", "observed"))), 2L)
  expect_length(recorded_pages(plot(fit, what = "residual")), 1L)
  expect_error(plot(fit, which = "fitted"), class = "sddgp_error_argument",
               regexp = "`which` must be some of \"function\", \"observed\", \"trace\"")
  d2 <- make_data(30, 2, seed = 506)
  f2 <- gp_sdd(d2$x, d2$y, kernel = ker, noise = 0.01, solver = "cholesky")
  expect_error(plot(f2, which = "function"), class = "sddgp_error_argument",
               regexp = "`which` asks for \"function\", which needs one input; the model has 2")
  expect_error(plot(f2, level = 2), class = "sddgp_error_argument", regexp = "`level`")
})

test_that("formula fits plot against their input variable", {
  d <- make_data(30, 1, seed = 507)
  df <- data.frame(u = d$x[, 1], v = d$y)
  fit <- gp_sdd(v ~ u, data = df, kernel = ker, noise = 0.01, solver = "cholesky")
  p <- recorded_pages(plot(fit, which = "function"))[[1L]]
  expect_identical(unlist(page_args(p, "C_title")[3:4]), c("u", "v"))
  logfit <- gp_sdd(v ~ log(u), data = df, kernel = ker, noise = 0.01, solver = "cholesky")
  expect_error(plot(logfit, which = "function"), class = "sddgp_error_argument",
               regexp = "needs the formula's input to be a variable")
})
