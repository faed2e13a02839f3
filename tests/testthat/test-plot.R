# plot(): the convergence trace.

test_that("plot() draws the trace of an SDD fit and returns the fit invisibly", {
  d <- make_data(60, 2, seed = 111)
  withr::local_seed(111)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1, samples = 2,
                control = sdd_control(iterations = 50, check_every = 10))
  path <- withr::local_tempfile(fileext = ".pdf")
  grDevices::pdf(path)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(out <- plot(fit))
  expect_identical(out, fit)
  expect_no_error(plot(fit, log = "xy", lwd = 2))
  # Without samples there is only the mean's line.
  f1 <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
               control = sdd_control(iterations = 50))
  expect_no_error(plot(f1))
})

test_that("plot() of an exact fit says there is no trace", {
  d <- make_data(30, 1, seed = 112)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1, solver = "cholesky")
  expect_message(out <- plot(fit), "No convergence trace: the fit was solved exactly")
  expect_identical(out, fit)
})

test_that("plot() passes graphical parameters such as main and xlab on", {
  d <- make_data(40, 2, seed = 113)
  withr::local_seed(113)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
                control = sdd_control(iterations = 100))
  path <- withr::local_tempfile(fileext = ".pdf")
  grDevices::pdf(path)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_no_error(plot(fit, main = "my fit", xlab = "step", ylab = "residual"))
})
