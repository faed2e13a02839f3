# coef(), sigma(), formula(), update(), fitted(), residuals().

meth_data <- function() {
  d <- make_data(60, 2, seed = 80)
  x <- d$x
  x[, 2] <- 100 * x[, 2] + 5
  list(x = x, y = 20 + 4 * d$y, df = data.frame(x, y = 20 + 4 * d$y))
}

test_that("coef() gives the hyperparameters in the data's units", {
  m <- meth_data()
  fit <- gp_sdd(m$x, m$y, kernel = matern(5/2, c(0.4, 0.6), 1.5), noise = 0.05,
                solver = "cholesky")
  pop_sd <- function(v) sqrt(mean((v - mean(v))^2))
  sx <- apply(m$x, 2, pop_sd)
  sy <- pop_sd(m$y)
  expect_equal(coef(fit), c(lengthscale.x1 = 0.4 * sx[[1]], lengthscale.x2 = 0.6 * sx[[2]],
                            variance = 1.5 * sy^2, noise = 0.05 * sy^2))
  expect_equal(sigma(fit), sqrt(0.05) * sy)
  # The same model fitted without standardising, from coef(), on y less its
  # mean (the standardised fit's prior mean), predicts the same.
  cf <- coef(fit)
  raw <- gp_sdd(m$x, m$y - mean(m$y), kernel = matern(5/2, cf[1:2], cf[["variance"]]),
                noise = cf[["noise"]], solver = "cholesky", standardize = FALSE)
  xt <- cbind(runif(5), 100 * runif(5) + 5)
  colnames(xt) <- c("x1", "x2")
  expect_equal(predict(fit, xt), mean(m$y) + predict(raw, xt), tolerance = 1e-9)
  expect_equal(coef(raw), cf)
  # Inputs without names are x1, x2, ...
  fu <- gp_sdd(unname(m$x), m$y, kernel = matern(5/2, 0.5, 1), noise = 0.1,
               solver = "cholesky")
  expect_named(coef(fu), c("lengthscale.x1", "lengthscale.x2", "variance", "noise"))
  expect_identical(nobs(fu), 60L)
})

test_that("the call is recorded as gp_sdd(), so update() refits", {
  m <- meth_data()
  fit <- gp_sdd(y ~ x1 + x2, data = m$df, kernel = matern(3/2, c(0.5, 0.5), 1),
                noise = 0.1, solver = "cholesky")
  expect_identical(fit$call[[1]], quote(gp_sdd))
  expect_identical(formula(fit), y ~ x1 + x2)
  # A new formula, and changed arguments, give the fit made directly.
  f1 <- update(fit, . ~ . - x2, kernel = matern(3/2, 0.5, 1))
  direct <- gp_sdd(y ~ x1, data = m$df, kernel = matern(3/2, 0.5, 1), noise = 0.1,
                   solver = "cholesky")
  expect_identical(formula(f1), y ~ x1)
  expect_equal(fitted(f1), fitted(direct))
  expect_equal(coef(f1), coef(direct))
  f2 <- update(fit, noise = 0.2)
  expect_equal(f2$noise, 0.2)
  expect_identical(update(fit, noise = 0.2, evaluate = FALSE), f2$call)
  # NULL removes an argument: noise estimated.
  f3 <- withr::with_seed(1, update(fit, noise = NULL))
  expect_null(f3$call$noise)
  expect_identical(f3$estimation$estimated, "noise")
  # The matrix interface too.
  fm <- gp_sdd(m$x, m$y, kernel = matern(3/2, c(0.5, 0.5), 1), noise = 0.1,
               solver = "cholesky")
  expect_identical(fm$call[[1]], quote(gp_sdd))
  expect_equal(update(fm, noise = 0.2)$noise, 0.2)
  expect_output(print(summary(fm)), "Call:\ngp_sdd\\(x = m\\$x")
  expect_error(formula(fm), class = "sddgp_error_argument", regexp = "`x` was fitted with the matrix")
  expect_error(update(fm, . ~ .), class = "sddgp_error_argument",
               regexp = "`formula.` applies to fits made with a formula")
  expect_error(update(fit, . ~ ., 3), class = "sddgp_error_argument",
               regexp = "`...` must be named")
})

test_that("fitted() is the posterior mean at the training inputs, stored at fit time", {
  m <- meth_data()
  fit <- suppressWarnings(withr::with_seed(81, gp_sdd(
    m$x, m$y, kernel = matern(3/2, c(0.5, 0.5), 1), noise = 0.1,
    control = sdd_control(iterations = 200))))
  # From the fit's own alpha, in base R: mean(y) + sd(y) K alpha.
  sc <- fit$scaling
  K <- ref_kernel(fit$x, fit$x, "matern32", c(0.5, 0.5), 1)
  by_hand <- sc$y_center + sc$y_scale * drop(K %*% fit$alpha)
  expect_equal(unname(fitted(fit)), by_hand, tolerance = 1e-10)
  expect_identical(fitted(fit), fit$fitted.values)
  expect_equal(residuals(fit), m$y - by_hand, tolerance = 1e-10, ignore_attr = TRUE)
  # fitted() reads the stored values: it no longer needs the inputs.
  fit$x <- NULL
  expect_equal(unname(fitted(fit)), by_hand, tolerance = 1e-10)
  expect_error(fitted(fit, 1), class = "sddgp_error_argument")
})

test_that("after a fit with a time limit, fitted() and residuals() compute the values on call", {
  m <- meth_data()
  # A limit never reached: the fit stops at its iterations, and its pass
  # over the kernel matrix, well within the limit, stores the values.
  fit <- suppressWarnings(withr::with_seed(81, gp_sdd(
    m$x, m$y, kernel = matern(3/2, c(0.5, 0.5), 1), noise = 0.1,
    control = sdd_control(iterations = 200, time_limit = 1e6))))
  sc <- fit$scaling
  K <- ref_kernel(fit$x, fit$x, "matern32", c(0.5, 0.5), 1)
  by_hand <- sc$y_center + sc$y_scale * drop(K %*% fit$alpha)
  expect_equal(unname(fit$fitted.values), by_hand, tolerance = 1e-10)
  # A fit whose pass would have taken longer than its limit has none, and
  # fitted() computes them.
  fit$fitted.values <- NULL
  expect_equal(unname(fitted(fit)), by_hand, tolerance = 1e-10)
  expect_equal(residuals(fit), m$y - by_hand, tolerance = 1e-10, ignore_attr = TRUE)
})
