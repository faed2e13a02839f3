# The exact log marginal likelihood (C_mll) against an independent base-R
# computation and finite differences, its thread invariance, and
# hyperparameter estimation: recovery of known values, fixed values staying
# fixed, and the validation of estimation_control().

families <- c("matern12", "matern32", "matern52", "se")

# Kernel of unit variance as a function of the distance r, written out from
# the formulas in ?matern independently of the C code.
unit_kernel <- function(family, r) {
  switch(family,
         matern12 = exp(-r),
         matern32 = (1 + sqrt(3) * r) * exp(-sqrt(3) * r),
         matern52 = (1 + sqrt(5) * r + 5 * r^2 / 3) * exp(-sqrt(5) * r),
         se = exp(-r^2 / 2))
}

# log N(y | 0, K + noise I) by chol() and the definition.
mll_reference <- function(x, y, family, lengthscale, variance, noise) {
  xs <- x * rep(1 / lengthscale, each = nrow(x))
  r <- as.matrix(stats::dist(xs))
  L <- chol(variance * unit_kernel(family, r) + diag(noise, nrow(x)))
  z <- backsolve(L, y, transpose = TRUE)
  -0.5 * sum(z^2) - sum(log(diag(L))) - nrow(x) / 2 * log(2 * pi)
}

# C_mll at log hyperparameters theta = (log lengthscales, log variance,
# log noise).
mll_at <- function(x, y, family, theta, threads = 2L, weights = NULL) {
  d <- ncol(x)
  kernel <- sddgp:::new_kernel(family, exp(theta[seq_len(d)]),
                               exp(theta[[d + 1L]]))
  .Call(sddgp:::C_mll, sddgp:::scale_inputs(x, kernel), y,
        sddgp:::kernel_spec(kernel), exp(theta[[d + 2L]]), weights, TRUE, as.integer(threads))
}

set.seed(20240611)
x_small <- matrix(rnorm(120 * 3), ncol = 3) # continuous: no duplicate points
y_small <- sin(2 * x_small[, 1]) + x_small[, 2] * x_small[, 3] + rnorm(120, sd = 0.3)
theta_small <- log(c(0.8, 1.3, 2.1, 0.9, 0.15))

test_that("C_mll equals the log marginal likelihood computed with chol()", {
  for (family in families) {
    got <- mll_at(x_small, y_small, family, theta_small)
    want <- mll_reference(x_small, y_small, family, exp(theta_small[1:3]),
                          exp(theta_small[4]), exp(theta_small[5]))
    expect_equal(got$value, want, tolerance = 1e-8, info = family)
    expect_length(got$gradient, 5L)
    expect_named(got, c("value", "gradient", "interrupted"))
    expect_false(got$interrupted)
  }
})

test_that("the gradient matches central finite differences of the value", {
  h <- 1e-5
  for (family in families) {
    grad <- mll_at(x_small, y_small, family, theta_small)$gradient
    fd <- vapply(seq_along(theta_small), function(i) {
      step <- replace(numeric(length(theta_small)), i, h)
      (mll_at(x_small, y_small, family, theta_small + step)$value -
         mll_at(x_small, y_small, family, theta_small - step)$value) / (2 * h)
    }, numeric(1))
    expect_equal(grad, fd, tolerance = 1e-5, info = family)
  }
})

test_that("past one block, value and gradient match the chol() reference", {
  # 400 points: the factorisation, solve and inverse run over four blocks of
  # 128; the gradient is checked against differences of the base-R value.
  set.seed(7)
  x <- matrix(rnorm(400 * 3), ncol = 3)
  y <- sin(2 * x[, 1]) + rnorm(400, sd = 0.3)
  h <- 1e-5
  for (family in c("matern32", "se")) {
    reference <- function(theta) {
      mll_reference(x, y, family, exp(theta[1:3]), exp(theta[4]), exp(theta[5]))
    }
    got <- mll_at(x, y, family, theta_small)
    expect_equal(got$value, reference(theta_small), tolerance = 1e-8, info = family)
    fd <- vapply(seq_along(theta_small), function(i) {
      step <- replace(numeric(length(theta_small)), i, h)
      (reference(theta_small + step) - reference(theta_small - step)) / (2 * h)
    }, numeric(1))
    expect_equal(got$gradient, fd, tolerance = 1e-5, info = family)
  }
})

test_that("with weights, value and gradient are those of K + noise / weights", {
  w <- seq(0.2, 5, length.out = nrow(x_small))
  h <- 1e-5
  for (family in c("matern32", "se")) {
    got <- mll_at(x_small, y_small, family, theta_small, weights = w)
    want <- mll_reference(x_small, y_small, family, exp(theta_small[1:3]),
                          exp(theta_small[4]), exp(theta_small[5]) / w)
    expect_equal(got$value, want, tolerance = 1e-8, info = family)
    fd <- vapply(seq_along(theta_small), function(i) {
      step <- replace(numeric(length(theta_small)), i, h)
      (mll_at(x_small, y_small, family, theta_small + step, weights = w)$value -
         mll_at(x_small, y_small, family, theta_small - step, weights = w)$value) / (2 * h)
    }, numeric(1))
    expect_equal(got$gradient, fd, tolerance = 1e-5, info = family)
  }
})

test_that("value and gradient do not depend on the number of threads", {
  x <- matrix(rnorm(300 * 4), ncol = 4)
  y <- rnorm(300)
  theta <- log(c(0.5, 1, 2, 4, 1.2, 0.05))
  for (family in families) {
    expect_identical(mll_at(x, y, family, theta, threads = 1L),
                     mll_at(x, y, family, theta, threads = 2L), info = family)
  }
})

test_that("a kernel matrix that is not positive definite gives NA", {
  # A negative noise larger than every eigenvalue of K.
  got <- .Call(sddgp:::C_mll, x_small, y_small, list(family = 4L, variance = 1),
               -1e3, NULL, TRUE, 1L)
  expect_identical(got$value, NA_real_)
  expect_true(all(is.na(got$gradient)))
})

test_that("estimation recovers the hyperparameters of data drawn from the model", {
  # 800 points of a Matern-3/2 GP with known hyperparameters plus noise,
  # drawn exactly through the Cholesky factor of their covariance.
  set.seed(42)
  n <- 800
  x <- matrix(rnorm(2 * n), ncol = 2)
  truth <- c(lengthscale = c(0.4, 1.5), variance = 1, noise = 0.05)
  r <- as.matrix(stats::dist(x * rep(1 / truth[1:2], each = n)))
  cov <- truth[[3]] * unit_kernel("matern32", r) + diag(truth[[4]], n)
  y <- drop(crossprod(chol(cov), rnorm(n)))

  set.seed(1)
  est <- sddgp:::estimate_hyperparameters(x, y, matern(3/2), NULL,
                                          estimation_control(), threads = 2L)
  got <- c(est$kernel$lengthscale, est$kernel$variance, est$noise)
  # Asymptotic standard errors of the log hyperparameters here, from the
  # Fisher information at the truth, are 0.12, 0.13, 0.25 and 0.066; allow
  # 3.5 of them.  The start (length scales 1.4, noise 0.1) is outside these
  # bounds for the first length scale and the noise.
  expect_lt(max(abs(log(got) - log(truth)) / c(0.12, 0.13, 0.25, 0.066)), 3.5)
  # A maximiser cannot be worse than the truth.
  theta_true <- log(unname(truth))
  expect_gte(est$estimation$log_marginal_likelihood,
             mll_at(x, y, "matern32", theta_true)$value)

  expect_s3_class(est$kernel, "sddgp_kernel")
  expect_identical(est$kernel$family, "matern32")
  e <- est$estimation
  expect_identical(e$subset_size, 800L)
  expect_identical(e$estimated, c("lengthscale", "variance", "noise"))
  expect_identical(e$convergence, 0L)
  expect_true(e$seconds >= 0)
  expect_equal(e$log_marginal_likelihood, mll_at(x, y, "matern32", log(got))$value)
})

test_that("estimation keeps the better of the pilot's two starts", {
  # A signal on a length scale of 0.15 in two of four inputs: from the
  # first start (length scales 2, noise a tenth of var(y)) the likelihood
  # climbs to a smooth, noisy fit 70 nats below the one the second start
  # (length scales 1, noise a hundredth) reaches.  The base-R optima from
  # each start are found here with optim() on the exact likelihood.
  set.seed(1)
  n <- 250
  x <- matrix(rnorm(n * 4), n)
  y <- sin(x[, 1] / 0.15) + sin(x[, 2] / 0.15) + rnorm(n, sd = 0.2)
  y <- (y - mean(y)) / sd(y)
  sd_x <- apply(x, 2, sd)
  var_y <- mean((y - mean(y))^2)
  lower <- c(log(1e-3 * sd_x), log(var_y) + log(c(1e-4, 1e-4)))
  upper <- c(log(1e3 * sd_x), log(var_y) + log(c(1e3, 10)))
  optimum <- function(start) {
    -stats::optim(start, function(t) -mll_at(x, y, "matern32", t)$value,
                  function(t) -mll_at(x, y, "matern32", t)$gradient,
                  method = "L-BFGS-B", lower = lower, upper = upper)$value
  }
  first <- optimum(c(log(2 * sd_x), log(var_y), log(0.1 * var_y)))
  second <- optimum(c(log(sd_x), log(var_y), log(0.01 * var_y)))
  expect_gt(second - first, 20)

  # One stage on all the points: both starts converge there.
  est <- sddgp:::estimate_hyperparameters(
    x, y, matern(3/2), NULL,
    estimation_control(method = "subset", subset_size = n, pilot_size = n), 2L)
  got <- mll_reference(x, y, "matern32", est$kernel$lengthscale, est$kernel$variance,
                       est$noise)
  expect_gt(got, second - 1)
  expect_match(est$estimation$message, "start 2 of 2")
})

test_that("estimation draws its subset with R's generator", {
  set.seed(2)
  x <- matrix(rnorm(400 * 2), ncol = 2)
  y <- sin(3 * x[, 1]) + rnorm(400, sd = 0.2)
  y <- (y - mean(y)) / sd(y)
  control <- estimation_control(subset_size = 200, pilot_size = 100,
                                polish_iterations = 2)
  set.seed(7)
  a <- sddgp:::estimate_hyperparameters(x, y, matern(5/2), NULL, control, 2L)
  set.seed(7)
  b <- sddgp:::estimate_hyperparameters(x, y, matern(5/2), NULL, control, 1L)
  # Above the subset size the default (method "auto") goes on to all 400
  # points, whose probes come from R's generator too.
  untimed <- function(e) {
    e$estimation[c("seconds", "subset_seconds")] <- 0
    e$estimation$vecchia$seconds <- 0
    e$estimation$iterative[c("seconds", "inner_seconds", "gradient_seconds",
                             "setup_seconds")] <- 0
    e
  }
  expect_identical(untimed(a), untimed(b))
  expect_identical(a$estimation$method, "iterative")
  expect_identical(a$estimation$subset_size, 200L)
})

test_that("given hyperparameters stay fixed", {
  x <- matrix(rnorm(300 * 3), ncol = 3)
  y <- x[, 1] - x[, 2]^2 + rnorm(300, sd = 0.3)
  y <- (y - mean(y)) / sd(y)
  ls <- c(0.7, 1.1, 3)

  est <- sddgp:::estimate_hyperparameters(
    x, y, matern(3/2, lengthscale = ls), 0.1, estimation_control(), 2L)
  expect_identical(est$kernel$lengthscale, ls)
  expect_identical(est$noise, 0.1)
  expect_identical(est$estimation$estimated, "variance")
  expect_true(est$kernel$variance > 0 && est$kernel$variance != 1)

  est <- sddgp:::estimate_hyperparameters(
    x, y, squared_exponential(variance = 2), NULL, estimation_control(), 2L)
  expect_identical(est$kernel$variance, 2)
  expect_identical(est$estimation$estimated, c("lengthscale", "noise"))
  expect_length(est$kernel$lengthscale, 3L)

  # A single given length scale is recycled to every column.
  est <- sddgp:::estimate_hyperparameters(
    x, y, matern(1/2, lengthscale = 2), NULL, estimation_control(), 2L)
  expect_identical(est$kernel$lengthscale, c(2, 2, 2))
  expect_identical(est$estimation$estimated, c("variance", "noise"))

  # Nothing to estimate: the likelihood of the given values is reported.
  est <- sddgp:::estimate_hyperparameters(
    x, y, matern(5/2, lengthscale = ls, variance = 1), 0.2,
    estimation_control(), 2L)
  expect_identical(est$estimation$estimated, character())
  expect_identical(est$estimation$counts, c("300" = 1L))
  expect_equal(est$estimation$log_marginal_likelihood,
               mll_reference(x, y, "matern52", ls, 1, 0.2))
})

test_that("Ctrl-C stops a long estimation promptly and leaves R usable", {
  skip_on_cran()
  skip_if_not_installed("callr")
  # One stage on 6000 points: each evaluation of the marginal likelihood
  # factors and inverts a 6000 x 6000 matrix, a minute of work polled
  # between blocks.
  expect_prompt_interrupt(6000, 2, sdd_control(tolerance = 0, iterations = 10),
                          "Hyperparameter estimation was interrupted by the user",
                          args = list(kernel = matern(3/2), noise = NULL,
                                      estimation = estimation_control(
                                        subset_size = 6000, pilot_size = 6000)))
})

test_that("estimation_control() validates its arguments", {
  ctl <- estimation_control(subset_size = 1000, max_iterations = 50)
  expect_s3_class(ctl, "sddgp_estimation_control")
  expect_identical(ctl$subset_size, 1000L)
  expect_identical(ctl$max_iterations, 50L)
  expect_output(print(ctl), "1000 points")

  bad <- list(list(subset_size = 0), list(subset_size = 2.5),
              list(subset_size = NA), list(subset_size = "2000"),
              list(subset_size = c(100, 200)), list(pilot_size = -1),
              list(max_iterations = 0), list(max_iterations = Inf),
              list(polish_iterations = 0), list(polish_iterations = 1.5),
              list(tolerance = 0), list(tolerance = 1), list(tolerance = NaN),
              list(min_noise = 0), list(min_noise = -1e-6))
  for (args in bad) {
    expect_error(do.call(estimation_control, args),
                 class = "sddgp_error_argument", info = deparse(args))
  }
  err <- tryCatch(estimation_control(min_noise = 0), error = identity)
  expect_identical(err$arg, "min_noise")
})

test_that("estimates on unstandardised inputs at 1e200 or 1e-300 scale with them", {
  x <- withr::with_seed(9, matrix(rnorm(150 * 2), ncol = 2))
  y <- withr::with_seed(10, x[, 1] - x[, 2]^2 + rnorm(150, sd = 0.3))
  est <- function(s) {
    withr::with_seed(1, sddgp:::estimate_hyperparameters(
      x * s, y, matern(3/2), NULL, estimation_control(), 1L))
  }
  base <- est(1)
  for (s in c(1e200, 1e-300)) {
    e <- est(s)
    # Before, the inputs' spread overflowed (or underflowed) to a start and
    # bounds of the length scales near 1.
    expect_equal(e$kernel$lengthscale / s, base$kernel$lengthscale, tolerance = 1e-6)
    expect_equal(e$kernel$variance, base$kernel$variance, tolerance = 1e-6)
    expect_equal(e$noise, base$noise, tolerance = 1e-6)
  }
})

test_that("estimates that double precision cannot hold are an argument error", {
  d <- make_data(40, 2, seed = 78)
  for (s in c(1e155, 1e-160)) {
    expect_error(gp_sdd(d$x, d$y * s, standardize = FALSE, solver = "cholesky"),
                 class = "sddgp_error_argument",
                 regexp = "`y` has a spread whose estimated .* overflow or underflow")
  }
  # Given hyperparameters need no estimate: the fit is the unit-scale one
  # times the scale (the posterior mean is linear in y).
  ker <- matern(3/2, c(0.4, 0.6), 1)
  xt <- make_inputs(4, 2)
  f1 <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.02, solver = "cholesky", standardize = FALSE)
  fs <- gp_sdd(d$x, d$y * 1e155, kernel = ker, noise = 0.02, solver = "cholesky",
               standardize = FALSE)
  expect_equal(predict(fs, xt) / 1e155, predict(f1, xt), tolerance = 1e-8)
})
