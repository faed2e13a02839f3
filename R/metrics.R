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
  # Scored in units of a power of 2 near the targets' magnitude, where
  # squares cannot overflow, then converted.
  u <- pow2_unit(c(y, pred$fit))
  s <- score_values(y / u, pred$fit / u, (pred$se.fit / u)^2 + (pred$residual.scale / u)^2)
  to <- if (normalised) u / object$scaling$y_scale else u
  c(rmse = s[["rmse"]] * to, nll = s[["nll"]] + log(to))
}

# RMSE and mean Gaussian NLL of y under N(mu, var).
score_values <- function(y, mu, var) {
  c(rmse = sqrt(mean((y - mu)^2)),
    nll = mean(0.5 * log(2 * pi * var) + (y - mu)^2 / (2 * var)))
}
