#' Test-set scores of a Gaussian process fit
#'
#' Root mean squared error of the posterior mean and mean negative log
#' predictive density of the observations,
#' \eqn{-\frac{1}{m}\sum_i \log N(y_i \mid \mu_i, \sigma_i^2 + \lambda)}{-1/m sum_i log N(y_i | mu_i, sigma_i^2 + lambda)},
#' with \eqn{\sigma_i^2}{sigma_i^2} the posterior variance of [predict.sddgp()]
#' (from the samples, or exact for an exact fit without samples). With `normalised = TRUE` both are in the units of the
#' standardised target (RMSE divided by the training standard deviation of
#' y; NLL shifted by its log), the convention of the SDD paper's tables.
#'
#' @param object An `sddgp` fit of one output with posterior samples, or an
#'   exact one.
#' @param newdata Test inputs, as for [predict.sddgp()].
#' @param y Test targets in original units.
#' @param normalised Report in standardised units.
#' @param threads Number of threads; `NULL` uses [sddgp_threads()].
#' @return A named numeric vector: `rmse` and `nll`.
#' @export
predictive_scores <- function(object, newdata, y, normalised = FALSE, threads = NULL) {
  check_flag(normalised, "normalised")
  check_single_output(object, "predictive_scores()")
  pred <- stats::predict(object, newdata, se.fit = TRUE, threads = threads)
  y <- check_targets(y, length(pred$fit), against = "`newdata` has %d rows")
  scaled_scores(y, pred$fit, pred$se.fit, pred$residual.scale,
                if (normalised) 1 / object$scaling$y_scale else 1)
}

# RMSE and mean Gaussian NLL of y under N(mu, se^2 + noise_sd^2), in the
# units of y times `to`: scored in units of a power of 2 near the targets'
# magnitude, where squares cannot overflow, then converted.
scaled_scores <- function(y, mu, se, noise_sd, to = 1) {
  u <- pow2_unit(c(y, mu))
  s <- score_values(y / u, mu / u, (se / u)^2 + (noise_sd / u)^2)
  c(rmse = s[["rmse"]] * u * to, nll = s[["nll"]] + log(u * to))
}

# RMSE and mean Gaussian NLL of y under N(mu, var).
score_values <- function(y, mu, var) {
  c(rmse = sqrt(mean((y - mu)^2)),
    nll = mean(0.5 * log(2 * pi * var) + (y - mu)^2 / (2 * var)))
}
