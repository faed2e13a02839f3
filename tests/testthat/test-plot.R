# plot(): the dispatch over panels and the convergence trace panel (the
# model panels: test-plot_model.R).

test_that("plot() draws the trace of an SDD fit and returns the fit invisibly", {
  d <- make_data(60, 2, seed = 111)
  withr::local_seed(111)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1, samples = 2,
                control = sdd_control(tolerance = 0, iterations = 50, check_every = 10))
  path <- withr::local_tempfile(fileext = ".pdf")
  grDevices::pdf(path)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(out <- plot(fit))
  expect_identical(out, fit)
  expect_no_error(plot(fit, log = "xy", lwd = 2))
  # Without samples there is only the mean's line.
  f1 <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
               control = sdd_control(tolerance = 0, iterations = 50))
  expect_no_error(plot(f1))
})

test_that("the trace panel of an exact fit says there is no trace", {
  d <- make_data(30, 1, seed = 112)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1, solver = "cholesky")
  expect_message(out <- plot(fit, which = "trace"),
                 "No convergence trace: the fit was solved exactly")
  expect_identical(out, fit)
})

test_that("plot() passes graphical parameters such as main and xlab on", {
  d <- make_data(40, 2, seed = 113)
  withr::local_seed(113)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
                control = sdd_control(tolerance = 0, iterations = 100))
  path <- withr::local_tempfile(fileext = ".pdf")
  grDevices::pdf(path)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_no_error(plot(fit, main = "my fit", xlab = "step", ylab = "residual"))
})

test_that("plot(what = ) draws the trace metrics, and says when a fit has none", {
  d <- make_data(60, 2, seed = 114)
  ker <- matern(3/2, 0.5, 1)
  ref <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, solver = "cholesky")$alpha
  withr::local_seed(114)
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, control = sdd_control(
    tolerance = 0, iterations = 60, check_every = 20, trace_every = 15, reference = ref,
    test_x = d$x[1:10, ], test_y = d$y[1:10]))
  path <- withr::local_tempfile(fileext = ".pdf")
  grDevices::pdf(path)
  on.exit(grDevices::dev.off(), add = TRUE)
  for (what in c("residual", "knorm_error", "k2norm_error", "test_rmse")) {
    expect_invisible(out <- plot(fit, what = what))
    expect_identical(out, fit)
  }
  plain <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1,
                  control = sdd_control(tolerance = 0, iterations = 20, reference = ref))
  expect_error(plot(plain, what = "test_rmse"), class = "sddgp_error_argument",
               regexp = "`what` is \"test_rmse\".*`test_x` and `test_y`")
  expect_error(plot(fit, what = "rmse"), class = "sddgp_error_argument",
               regexp = "`what` must be one of \"residual\", \"elbo\", \"knorm_error\"")
  expect_error(plot(fit, what = "elbo"), class = "sddgp_error_argument",
               regexp = "`optimize_inducing` in svgp_control")
  expect_no_error(plot(plain, what = "knorm_error"))
})
