# logLik(), AIC(), BIC(), nobs(): the exact log marginal likelihood of y in
# the data's units, against a base-R computation with coef()'s values.

# log N(y; m, A) from its formula, with solve() and determinant().
ref_loglik <- function(y, m, A) {
  r <- y - m
  -0.5 * sum(r * solve(A, r)) - 0.5 * determinant(A)$modulus[[1]] -
    0.5 * length(y) * log(2 * pi)
}

ll_data <- function() {
  d <- make_data(90, 2, seed = 70)
  list(x = d$x, y = 4 + 7 * d$y, w = withr::with_seed(70, stats::runif(90, 0.5, 2)))
}

test_that("logLik() of an exact fit is the Gaussian log-density of y in its units", {
  d <- ll_data()
  # Length scales given, variance and noise estimated: df = 2.
  fit <- withr::with_seed(71, gp_sdd(d$x, d$y, kernel = matern(5/2, c(0.5, 0.8)),
                                     weights = d$w, solver = "cholesky"))
  cf <- coef(fit)
  A <- ref_kernel(d$x, d$x, "matern52", cf[1:2], cf[["variance"]]) + diag(cf[["noise"]] / d$w)
  ref <- ref_loglik(d$y, mean(d$y), A)
  ll <- logLik(fit)
  expect_s3_class(ll, "logLik")
  expect_equal(c(ll), ref, tolerance = 1e-10)
  expect_identical(attr(ll, "df"), 2L)
  expect_identical(attr(ll, "nobs"), 90L)
  expect_false(attr(ll, "estimate"))
  expect_identical(nobs(fit), 90L)
  expect_equal(AIC(fit), -2 * ref + 2 * 2, tolerance = 1e-10)
  expect_equal(BIC(fit), -2 * ref + log(90) * 2, tolerance = 1e-10)
  # The scaling of y counts: multiplying y by 10 lowers it by n log(10).
  f10 <- withr::with_seed(71, gp_sdd(d$x, 10 * d$y, kernel = matern(5/2, c(0.5, 0.8)),
                                     weights = d$w, solver = "cholesky"))
  expect_equal(c(logLik(f10)), ref - 90 * log(10), tolerance = 1e-8)
  expect_output(print(ll), sprintf("'log Lik.' %s \\(df=2\\)$", format(c(ll))))
})

test_that("every solver stores the exact value at fit time for small n", {
  d <- ll_data()
  ker <- matern(3/2, c(0.4, 0.6), 1.1)
  ref_fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, solver = "cholesky",
                    standardize = FALSE)
  A <- ref_kernel(d$x, d$x, "matern32", c(0.4, 0.6), 1.1) + diag(0.05, 90)
  ref <- ref_loglik(d$y, 0, A)
  expect_equal(c(logLik(ref_fit)), ref, tolerance = 1e-10)
  # SDD, barely run: the value does not depend on the solver's accuracy.
  sdd <- suppressWarnings(withr::with_seed(72, gp_sdd(
    d$x, d$y, kernel = ker, noise = 0.05, standardize = FALSE,
    control = sdd_control(iterations = 5))))
  expect_type(sdd$log_likelihood, "double")
  expect_equal(c(logLik(sdd)), ref, tolerance = 1e-10)
  # No hyperparameter estimated: df = 0.
  expect_identical(attr(logLik(sdd), "df"), 0L)
  # Computed on demand when the fit did not store it.
  sdd$log_likelihood <- NULL
  expect_equal(c(logLik(sdd)), ref, tolerance = 1e-10)
})

test_that("a larger fit leaves the log-likelihood to logLik()", {
  # 1200 points: a factorisation beyond log_likelihood_fit_seconds.
  d <- make_data(1200, 1, seed = 74)
  fit <- suppressWarnings(withr::with_seed(75, gp_sdd(
    d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.05,
    control = sdd_control(iterations = 5, batch_size = 64))))
  expect_null(fit$log_likelihood)
  exact <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.05, solver = "cholesky")
  expect_type(exact$log_likelihood, "double")
  expect_equal(c(logLik(fit)), c(logLik(exact)), tolerance = 1e-9)
})

test_that("beyond the exact solver's size an estimate is used, else NA with a warning", {
  d <- ll_data()
  fit <- withr::with_seed(73, gp_sdd(d$x, d$y, kernel = "matern32", solver = "cholesky"))
  expect_identical(attr(logLik(fit), "df"), 4L)
  # Pretend the fit is too large to compute it exactly.
  big <- fit
  big$log_likelihood <- NULL
  big$n <- 20001L
  expect_warning(ll <- logLik(big), class = "sddgp_warning_no_log_likelihood")
  expect_identical(c(ll), NA_real_)
  # With an estimate (of the standardised targets, as the estimation's
  # values are), the scaling of y is added and the value is marked.
  big$estimation$log_likelihood <- -1234.5
  ll <- expect_silent(logLik(big))
  expect_equal(c(ll), -1234.5 - 20001 * log(fit$scaling$y_scale))
  expect_true(attr(ll, "estimate"))
  expect_output(print(ll), "\\(df=4\\), an estimate")
  big$estimation$log_likelihood <- NaN
  expect_warning(logLik(big), class = "sddgp_warning_no_log_likelihood")
})

test_that("the value alone from C_mll equals the value with the gradient", {
  d <- ll_data()
  kernel <- sddgp:::new_kernel("matern52", c(0.5, 0.7), 1.3)
  args <- list(sddgp:::scale_inputs(d$x, kernel), d$y, sddgp:::kernel_spec(kernel),
               0.1, d$w)
  full <- do.call(.Call, c(list(sddgp:::C_mll), args, list(TRUE, 2L)))
  value <- do.call(.Call, c(list(sddgp:::C_mll), args, list(FALSE, 2L)))
  expect_identical(value$value, full$value)
  expect_true(all(is.na(value$gradient)))
  expect_error(logLik(fit_not_used <- structure(list(), class = "sddgp"), 1),
               class = "sddgp_error_argument", regexp = "`...` must be empty")
})
