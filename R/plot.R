#' Plot a Gaussian process fit
#'
#' Draws, in base graphics, up to three panels chosen by `which` (one after
#' the other, asking before each new page as [plot.lm()][stats::plot.lm]
#' does when the device is interactive and holds one panel):
#'
#' - `"function"` (inputs of one dimension only): the posterior mean on a
#'   grid over the training inputs' range, its `level` confidence band, the
#'   data and up to `paths` of the fit's posterior sample paths.
#' - `"observed"`: observed against predicted targets with `level`
#'   prediction intervals, at the test data `newdata` and `newy` when given,
#'   else at the training inputs (fitted values), with the line of equality.
#' - `"trace"`: the convergence trace of an iterative solver against the
#'   iteration (below).
#'
#' Bands and intervals come from [predict.sddgp()]: for fits without the
#' variances it needs (see there), the panels show the mean only, and say
#' so in their subtitle.
#'
#' In the trace panel, `what = "residual"` draws the estimated relative
#' residual \eqn{\|(K + \lambda I)\bar\alpha - b\| / \|b\|}{||(K + lambda I) alpha - b|| / ||b||}
#' of the posterior mean's system (solid) and the root mean square over the
#' sample systems (dashed).
#' `what = "elbo"`: the evidence lower bound of a sparse variational GP
#' whose inducing points were refined (`svgp_control(optimize_inducing = )`).
#' The other choices are the trace metrics of [sdd_control()] (section Trace
#' metrics), recorded when the fit's control had `reference` (`"knorm_error"`,
#' `"k2norm_error"`) or `test_x` and `test_y` (`"test_rmse"`).
#'
#' @param x An `sddgp` fit.
#' @param which Panels to draw, some of `"function"`, `"observed"` and
#'   `"trace"`. `NULL`: `"trace"` when `what` is given, else all that the
#'   fit has (`"function"` for one input, `"trace"` for an iterative
#'   solver).
#' @param newdata,newy Test inputs (as for [predict.sddgp()]) and their
#'   observed targets, for the `"observed"` panel; `NULL`: the training data.
#' @param level Coverage of the band and intervals.
#' @param paths Most sample paths drawn in the `"function"` panel.
#' @param what The series of the trace panel: `"residual"`, `"elbo"`,
#'   `"knorm_error"`, `"k2norm_error"` or `"test_rmse"`. `NULL` draws the
#'   ELBO when the trace holds one and the residuals otherwise.
#' @param log Axes of the trace panel to draw on a log scale, as in
#'   [graphics::plot.default()]; `NULL` means `"y"`, or none for the ELBO.
#' @param ask Ask before each new page.
#' @param ... Further graphical parameters for [graphics::plot()], used by
#'   every panel.
#' @return `x`, invisibly.
#' @examples
#' set.seed(3)
#' x <- matrix(runif(60))
#' y <- sin(6 * x[, 1]) + rnorm(60, sd = 0.1)
#' fit <- gp_sdd(x, y, kernel = matern(5/2, lengthscale = 0.3, variance = 1),
#'               noise = 0.01, samples = 8, threads = 1)
#' plot(fit, which = "function")
#' plot(fit, which = "observed")
#' @export
plot.sddgp <- function(x, which = NULL, newdata = NULL, newy = NULL, level = 0.95,
                       paths = 5, what = NULL, log = NULL,
                       ask = length(which) > 1L &&
                         prod(graphics::par("mfcol")) < length(which) &&
                         grDevices::dev.interactive(), ...) {
  panels <- c("function", "observed", "trace")
  if (is.null(which)) {
    which <- if (!is.null(what)) "trace" else
      panels[c(x$d == 1L, TRUE, nrow(x$trace) > 0L)]
  }
  if (!is.character(which) || length(which) == 0L || anyNA(which) ||
      !all(which %in% panels)) {
    abort_argument("which", sprintf("must be some of %s",
                                    paste0("\"", panels, "\"", collapse = ", ")))
  }
  if ("function" %in% which && x$d != 1L) {
    abort_argument("which", sprintf(
      "asks for \"function\", which needs one input; the model has %d", x$d))
  }
  check_number(level, "level", lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  check_number(paths, "paths", lower = 0, integer = TRUE)
  force(ask)
  if (ask) {
    old <- grDevices::devAskNewPage(TRUE)
    on.exit(grDevices::devAskNewPage(old), add = TRUE)
  }
  for (panel in which) {
    switch(panel,
      "function" = plot_function(x, level, paths, ...),
      observed = plot_observed(x, newdata, newy, level, ...),
      trace = plot_trace(x, what, log, ...))
  }
  invisible(x)
}

# The convergence trace panel of plot.sddgp().
plot_trace <- function(x, what, log, ...) {
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
    return(invisible())
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
  invisible()
}
