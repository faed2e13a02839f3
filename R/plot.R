#' Plot the convergence of an SDD fit
#'
#' Draws the estimated relative residual
#' \eqn{\|(K + \lambda I)\bar\alpha - b\| / \|b\|} of the posterior mean's
#' system (solid) and the root mean square over the sample systems (dashed)
#' against the iteration, on a log scale. For a sparse variational GP whose
#' inducing points were refined (`svgp_control(optimize_inducing = )`), it
#' draws the evidence lower bound against the iteration instead.
#'
#' @param x An `sddgp` fit.
#' @param log Axes to draw on a log scale, as in [graphics::plot.default()].
#' @param ... Further graphical parameters for [graphics::plot()].
#' @return `x`, invisibly.
#' @export
plot.sddgp <- function(x, log = "y", ...) {
  tr <- x$trace
  if (nrow(tr) == 0L) {
    message("No convergence trace: the fit was solved exactly.")
    return(invisible(x))
  }
  if (!is.null(tr$elbo)) {
    args <- utils::modifyList(
      list(x = tr$iteration, y = tr$elbo, type = "l", log = if (missing(log)) "" else log,
           xlab = "iteration", ylab = "evidence lower bound",
           main = "SVGP inducing-point refinement"),
      list(...))
    do.call(graphics::plot, args)
    return(invisible(x))
  }
  series <- cbind(mean = tr$residual, samples = tr$residual_samples)
  series <- series[, colSums(is.finite(series)) > 0, drop = FALSE]
  lty <- c(1, 2)[seq_len(ncol(series))]
  col <- c("black", "steelblue")[seq_len(ncol(series))]
  args <- utils::modifyList(
    list(x = tr$iteration, y = series, type = "l", lty = lty, col = col, log = log,
         xlab = "iteration", ylab = "relative residual (estimated)",
         main = "SDD convergence"),
    list(...))
  do.call(graphics::matplot, args)
  graphics::legend("topright", legend = colnames(series), bty = "n", lty = lty,
                   col = col)
  invisible(x)
}
