# Several outputs (y a matrix): one GP per column sharing the kernel and
# noise of the standardised data, solved as one multi-right-hand-side
# system; checked against base R and against one fit per column.

mo_data <- function(n = 80) {
  d <- make_data(n, 2, seed = 90)
  e <- withr::with_seed(91, stats::rnorm(n, sd = 0.05))
  Y <- cbind(a = 3 + 2 * d$y, b = -1 + 0.5 * sin(5 * d$x[, 2]) + e)
  list(x = d$x, Y = Y)
}
mo_kernel <- matern(5/2, c(0.4, 0.6), 1)

test_that("an exact multi-output fit is the exact GP of each column, in base R", {
  m <- mo_data()
  fit <- gp_sdd(m$x, m$Y, kernel = mo_kernel, noise = 0.05, solver = "cholesky")
  xt <- make_inputs(6, 2)
  p <- predict(fit, xt, se.fit = TRUE)
  expect_equal(dim(p$fit), c(6L, 2L))
  expect_equal(colnames(p$fit), c("a", "b"))
  cf <- coef(fit)
  expect_named(cf, c("lengthscale.x1", "lengthscale.x2", "variance.a", "variance.b",
                     "noise.a", "noise.b"))
  ll <- 0
  for (j in c("a", "b")) {
    v <- cf[[paste0("variance.", j)]]
    A <- ref_kernel(m$x, m$x, "matern52", cf[1:2], v) + diag(cf[[paste0("noise.", j)]], 80)
    Ks <- ref_kernel(xt, m$x, "matern52", cf[1:2], v)
    r <- m$Y[, j] - mean(m$Y[, j])
    expect_equal(unname(p$fit[, j]), drop(mean(m$Y[, j]) + Ks %*% solve(A, r)),
                 tolerance = 1e-9)
    expect_equal(unname(p$se.fit[, j]), sqrt(v - rowSums(Ks * t(solve(A, t(Ks))))),
                 tolerance = 1e-8)
    K <- ref_kernel(m$x, m$x, "matern52", cf[1:2], v)
    expect_equal(unname(fitted(fit)[, j]), drop(mean(m$Y[, j]) + K %*% solve(A, r)),
                 tolerance = 1e-9)
    ll <- ll - 0.5 * sum(r * solve(A, r)) - 0.5 * determinant(A)$modulus[[1]] -
      40 * log(2 * pi)
  }
  expect_equal(c(logLik(fit)), ll, tolerance = 1e-10)
  expect_equal(residuals(fit), m$Y - fitted(fit))
  expect_equal(sigma(fit), sqrt(cf[c("noise.a", "noise.b")]), ignore_attr = TRUE)
  expect_named(sigma(fit), c("a", "b"))
  # The same as one fit per column.
  one <- gp_sdd(m$x, m$Y[, "b"], kernel = mo_kernel, noise = 0.05, solver = "cholesky")
  expect_equal(unname(p$fit[, "b"]), unname(predict(one, xt)), tolerance = 1e-12)
  expect_output(print(fit), "2 outputs, sharing the kernel and noise: a, b")
})

test_that("SDD and CG solve the outputs together to their tolerance", {
  m <- mo_data()
  exact <- gp_sdd(m$x, m$Y, kernel = mo_kernel, noise = 0.05, solver = "cholesky")
  for (solver in c("sdd", "cg")) {
    fit <- withr::with_seed(92, gp_sdd(m$x, m$Y, kernel = mo_kernel, noise = 0.05,
                                       solver = solver))
    expect_identical(fit$status, "tolerance")
    expect_equal(dim(fit$alpha), c(80L, 2L))
    # Within a tenth of a noise standard deviation (root mean square) of the
    # exact posterior mean at the training inputs, for every output.
    err <- sqrt(colMeans((fitted(fit) - fitted(exact))^2))
    expect_true(all(err < 0.1 * sigma(exact)))
  }
})

test_that("estimation maximises the summed likelihood of the outputs", {
  m <- mo_data(60)
  m$x <- m$x[1:60, ]
  fit <- withr::with_seed(93, gp_sdd(m$x, m$Y, kernel = "matern32", solver = "cholesky"))
  expect_identical(attr(logLik(fit), "df"), 4L)
  # Base R: the summed log-likelihood of the standardised columns, as a
  # function of the log hyperparameters; its gradient vanishes at the estimate.
  Z <- scale(m$Y) * sqrt(60 / 59)
  X <- scale(m$x) * sqrt(60 / 59)
  ll <- function(theta) {
    A <- ref_kernel(X, X, "matern32", exp(theta[1:2]), exp(theta[3])) + diag(exp(theta[4]), 60)
    sum(apply(Z, 2, function(z) -0.5 * sum(z * solve(A, z)))) -
      determinant(A)$modulus[[1]]
  }
  theta <- log(c(fit$kernel$lengthscale, fit$kernel$variance, fit$noise))
  free <- fit$estimation$at_bound == ""
  grad <- vapply(which(free), function(i) {
    h <- 1e-5
    (ll(replace(theta, i, theta[i] + h)) - ll(replace(theta, i, theta[i] - h))) / (2 * h)
  }, numeric(1))
  expect_lt(max(abs(grad)), 0.05)
})

test_that("the formula interface takes cbind() responses", {
  m <- mo_data()
  df <- data.frame(m$x, m$Y)
  ff <- gp_sdd(cbind(a, b) ~ x1 + x2, data = df, kernel = mo_kernel, noise = 0.05,
               solver = "cholesky")
  fm <- gp_sdd(m$x, m$Y, kernel = mo_kernel, noise = 0.05, solver = "cholesky")
  nd <- as.data.frame(make_inputs(3, 2))
  expect_equal(predict(ff, nd), predict(fm, as.matrix(nd)), ignore_attr = TRUE)
  expect_equal(unname(fitted(ff)), unname(fitted(fm)))
})

test_that("what one output only supports gives classed errors", {
  m <- mo_data()
  fit <- gp_sdd(m$x, m$Y, kernel = mo_kernel, noise = 0.05, solver = "cholesky")
  xt <- make_inputs(3, 2)
  expect_error(predict(fit, xt, interval = "confidence"), class = "sddgp_error_argument",
               regexp = "`interval` must be \"none\" for a fit of 2 outputs")
  expect_error(predictive_scores(fit, xt, 1:3), class = "sddgp_error_argument",
               regexp = "`object` has 2 outputs")
  expect_error(simulate(fit), class = "sddgp_error_argument",
               regexp = "`object` has 2 outputs; simulate\\(\\) takes fits of one output")
  expect_error(gp_sdd(m$x, m$Y, kernel = mo_kernel, noise = 0.05, solver = "svgp"),
               class = "sddgp_error_argument", regexp = "`solver` is \"svgp\", which fits one output")
  expect_error(gp_sdd(m$x, m$Y[-1, ], kernel = mo_kernel, noise = 0.05),
               class = "sddgp_error_argument", regexp = "`y` has 79 rows but `x` has 80 rows")
  bad <- m$Y
  bad[5, 2] <- NA
  expect_error(gp_sdd(m$x, bad, kernel = mo_kernel, noise = 0.05),
               class = "sddgp_error_argument", regexp = "`y` contains 1 NA")
})
