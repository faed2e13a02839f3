#' Plot the convergence of an iterative fit
#'
#' Draws a series of the fit's convergence trace against the iteration.
#' `what = "residual"`: the estimated relative residual
#' \eqn{\|(K + \lambda I)\bar\alpha - b\| / \|b\|} of the posterior mean's
#' system (solid) and the root mean square over the sample systems (dashed).
#' `what = "elbo"`: the evidence lower bound of a sparse variational GP
#' whose inducing points were refined (`svgp_control(optimize_inducing = )`).
#' The other choices are the trace metrics of [sdd_control()] (section Trace
#' metrics), recorded when the fit's control had `reference` (`"knorm_error"`,
#' `"k2norm_error"`) or `test_x` and `test_y` (`"test_rmse"`).
#'
#' @param x An `sddgp` fit.
#' @param what The series to draw: `"residual"`, `"elbo"`, `"knorm_error"`,
#'   `"k2norm_error"` or `"test_rmse"`. `NULL` draws the ELBO when the trace
#'   holds one and the residuals otherwise.
#' @param log Axes to draw on a log scale, as in [graphics::plot.default()];
#'   `NULL` means `"y"`, or none for the ELBO.
#' @param ... Further graphical parameters for [graphics::plot()].
#' @return `x`, invisibly.
#' @export
plot.sddgp <- function(x, what = NULL, log = NULL, ...) {
  labels <- c(residual = "relative residual (estimated)",
              elbo = "evidence lower bound",
              knorm_error = "squared K-norm error to the reference",
              k2norm_error = "squared K^2-norm error to the reference",
              test_rmse = "test RMSE (standardised units)")
  tr <- x$trace
  what <- what %||% if (!is.null(tr$elbo)) "elbo" else "residual"
  check_choice(what, "what", names(labels))
  if (nrow(tr) == 0L) {
    message("No convergence trace: the fit was solved exactly.")
    return(invisible(x))
  }
  if (what == "residual") {
    series <- cbind(mean = tr$residual, samples = tr$residual_samples)
    series <- series[, colSums(is.finite(series)) > 0, drop = FALSE]
  } else {
    if (!any(is.finite(tr[[what]]))) {
      abort_argument("what", sprintf(
        "is \"%s\", which the fit's trace does not hold: give %s", what,
        switch(what, elbo = "`optimize_inducing` in svgp_control()",
               test_rmse = "`test_x` and `test_y` in the solver's control",
               "`reference` in the solver's control")))
    }
    series <- cbind(tr[[what]])
    colnames(series) <- what
  }
  # Rows where other quantities were recorded hold NA for this one.
  keep <- rowSums(is.finite(series)) > 0
  lty <- c(1, 2)[seq_len(ncol(series))]
  col <- c("black", "steelblue")[seq_len(ncol(series))]
  args <- utils::modifyList(
    list(x = tr$iteration[keep], y = series[keep, , drop = FALSE], type = "l",
         lty = lty, col = col, log = log %||% if (what == "elbo") "" else "y",
         xlab = "iteration", ylab = labels[[what]],
         main = sprintf("%s convergence", toupper(x$solver))),
    list(...))
  do.call(graphics::matplot, args)
  if (ncol(series) > 1L || what == "residual") {
    graphics::legend("topright", legend = colnames(series), bty = "n", lty = lty,
                     col = col)
  }
  invisible(x)
}
