# The log marginal likelihood of a fit (logLik(), hence AIC() and BIC()).

#' Log-likelihood of a Gaussian process fit
#'
#' The log marginal likelihood \eqn{\log p(y)}{log p(y)} of the training targets
#' under the fitted model, `y ~ N(m, s^2 (K + lambda W^-1))` in the units of
#' `y`: the hyperparameters are those of the fit (given or estimated), `m`
#' and `s` the targets' mean and standard deviation with
#' `standardize = TRUE` (else 0 and 1). It is the exact value
#' `-y'a/2 - log det(...)/2 - (n/2) log(2 pi)`, computed from the whole
#' data, including the term `-n log(s)` of the scaling of `y`, so that it
#' compares with the likelihoods of other models of the same `y`.
#'
#' An exact fit (`solver = "cholesky"`) gets it for free from its
#' factorisation; other fits compute it at fit time when its operation
#' count (that of a Cholesky factorisation of `n` points) is small (up to
#' about 900 points with R's reference BLAS, 2000 with OpenBLAS), else when
#' `logLik()` is called, which then costs about as long as an exact fit (a
#' Cholesky factorisation, no solve of samples). Beyond the exact solver's
#' 20000 points it is not computed: where the fit carries an estimate
#' (`fit$estimation$log_likelihood`) that is returned, with attribute
#' `estimate = TRUE` (printed as such), else `NA` with a warning of class
#' `sddgp_warning_no_log_likelihood`.
#'
#' @param object An `sddgp` fit.
#' @param ... Unused.
#' @return An object of class `logLik` (also `sddgp_logLik`) with
#'   attributes `df`, the number of estimated hyperparameters (each length
#'   scale, the kernel variance and the noise variance left `NULL` in
#'   [gp_sdd()], and the [tanimoto()] kernel's prior mean when estimated
#'   with them; the centring and scaling of `standardize` are not
#'   counted), `nobs`, the number of observations, and `estimate`, `TRUE`
#'   when the value is an estimate rather than exact. So [stats::AIC()] and
#'   [stats::BIC()] work on fits.
#' @examples
#' set.seed(1)
#' x <- matrix(runif(200), ncol = 2)
#' y <- sin(6 * x[, 1]) + x[, 2]^2 + rnorm(100, sd = 0.1)
#' fit <- gp_sdd(x, y, kernel = "matern52", solver = "cholesky", threads = 1)
#' logLik(fit)
#' AIC(fit)
#' @export
logLik.sddgp <- function(object, ...) {
  check_dots_empty(...)
  value <- object$log_likelihood
  estimate <- FALSE
  if (is.null(value)) {
    approx <- object$estimation$log_likelihood
    if (object$n <= cholesky_max_n) {
      value <- exact_log_likelihood(object, object$threads)
    } else if (is.numeric(approx) && length(approx) == 1L && is.finite(approx)) {
      # The estimate is of the standardised targets, as every likelihood
      # of the estimation: the scaling's Jacobian as for the exact value.
      value <- approx - object$n * log(object$scaling$y_scale)
      estimate <- TRUE
    } else {
      sddgp_warn(sprintf(paste(
        "The log-likelihood of %d points is not computed exactly (beyond the exact",
        "solver's %d points) and the fit holds no estimate of it: NA."),
        object$n, cholesky_max_n), class = "sddgp_warning_no_log_likelihood")
      value <- NA_real_
    }
  }
  structure(value, df = length(estimated_parameters(object)), nobs = object$n,
            estimate = estimate, class = c("sddgp_logLik", "logLik"))
}

#' @export
print.sddgp_logLik <- function(x, digits = getOption("digits"), ...) {
  cat(sprintf("'log Lik.' %s (df=%d)%s\n", format(c(x), digits = digits), attr(x, "df"),
              if (isTRUE(attr(x, "estimate"))) ", an estimate" else ""))
  invisible(x)
}

#' @importFrom stats nobs
#' @export
nobs.sddgp <- function(object, ...) object$n

# The exact log marginal likelihood of the fit's training targets in the
# units of y (C_mll, without its gradient), NA where K + noise is not
# numerically positive definite.
# Several outputs are independent given the hyperparameters: the sum over
# them (one factorisation each).
exact_log_likelihood <- function(object, threads) {
  y <- as.matrix(object$y)
  value <- 0
  for (j in seq_len(ncol(y))) {
    res <- .Call(C_mll, scale_inputs(object$x, object$kernel), y[, j],
                 kernel_spec(object$kernel), object$noise, object$weights, FALSE,
                 sddgp_threads(threads))
    if (res$interrupted) signal_interrupt("The log-likelihood was interrupted by the user")
    value <- value + res$value
  }
  unstandardized_log_likelihood(value, object)
}

# y = m + s ys: the density of y is that of ys times 1 / s^n (for each
# output).
unstandardized_log_likelihood <- function(value, object) {
  value - object$n * sum(log(object$scaling$y_scale))
}

# Most single-core seconds (by operation counts, exact_cost()) that the
# fit spends on its log-likelihood when its solver does not give it.
log_likelihood_fit_seconds <- 0.1

# The log-likelihood stored at fit time: from the exact solver's
# factorisation (`sol$log_det`), else computed when it is cheap, else NULL
# (logLik() computes it when asked).
fit_log_likelihood <- function(fit, sol, threads) {
  if (!is.null(sol$log_det)) {
    # Summed over the outputs, which share the factorisation.
    q <- n_outputs(fit)
    value <- -0.5 * sum(fit$y * fit$alpha) - 0.5 * q * (sol$log_det + fit$n * log(2 * pi))
    return(unstandardized_log_likelihood(value, fit))
  }
  if (n_outputs(fit) * exact_cost(fit$n, cost_dims(fit), 1L) <= log_likelihood_fit_seconds) {
    return(exact_log_likelihood(fit, threads))
  }
  NULL
}

# Names of the estimated hyperparameters, one per number estimated
# (length scales by input column).
estimated_parameters <- function(object) {
  est <- object$estimation$estimated
  # One kernel variance and noise, shared by the outputs of a multi-output
  # fit; the Tanimoto kernel's prior mean, one per output.
  means <- if (n_outputs(object) == 1L) "mean" else paste("mean", output_names(object), sep = ".")
  nm <- c(paste0("lengthscale.", input_labels(object)), "variance", "noise", means)
  nm[c(rep("lengthscale" %in% est, object$d), "variance" %in% est, "noise" %in% est,
       rep("mean" %in% est, length(means)))]
}
