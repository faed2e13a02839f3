# The panels of plot.sddgp() that show the model: the fitted function of a
# one-input fit, and observed against predicted targets.

# predict() with an interval where the fit can give one, else the mean as
# a one-column matrix `fit`; `band` says which.
predict_band <- function(object, newdata, interval, level) {
  args <- list(object, interval = interval, level = level)
  if (!is.null(newdata)) args$newdata <- newdata
  pred <- tryCatch(do.call(stats::predict, args), sddgp_error_no_samples = function(e) NULL)
  if (!is.null(pred)) return(list(fit = pred, band = TRUE))
  args$interval <- NULL
  args$level <- NULL
  list(fit = cbind(fit = do.call(stats::predict, args)), band = FALSE)
}

# The targets of the training data in their original units, and the name of
# the response.
training_targets <- function(object) {
  sc <- object$scaling
  name <- if (!is.null(object$terms)) deparse(object$terms[[2L]]) else "y"
  list(y = unstandardize(object$y, sc$y_center, sc$y_scale), name = name)
}

# New data for predict() at the values `v` of the one input: a matrix, or
# for a formula fit a data frame of the one variable (NULL when the input
# is not a variable of the data, as in y ~ log(x)).
input_grid <- function(object, v) {
  name <- object$input_names %||% "x"
  if (is.null(object$terms)) return(matrix(v, dimnames = list(NULL, name)))
  vars <- all.vars(stats::delete.response(object$terms))
  if (!identical(vars, name)) return(NULL)
  stats::setNames(data.frame(v), name)
}

plot_function <- function(object, level, paths, ...) {
  sc <- object$scaling
  xs <- range(object$x[, 1L])
  xs <- xs + c(-0.05, 0.05) * diff(xs)
  grid <- unstandardize(seq(xs[1L], xs[2L], length.out = 200L), sc$x_center, sc$x_scale)
  nd <- input_grid(object, grid)
  if (is.null(nd)) {
    abort_argument("which", paste(
      "asks for \"function\", which needs the formula's input to be a variable of",
      "the data (as in y ~ x, not y ~ log(x))"))
  }
  pred <- predict_band(object, nd, "confidence", level)
  data <- training_targets(object)
  xdata <- unstandardize(object$x[, 1L], sc$x_center, sc$x_scale)
  k <- min(paths, ncol(object$alpha_samples))
  # The fit's own sample paths (simulate() may draw new ones).
  sample_paths <- if (k > 0L) {
    post <- posterior_at(object, new_inputs(object, nd), TRUE, sddgp_threads(NULL))
    unstandardize(post$mean + post$centred[, seq_len(k), drop = FALSE],
                  sc$y_center, sc$y_scale)
  }
  ylim <- range(data$y, pred$fit, sample_paths, finite = TRUE)
  args <- utils::modifyList(list(
    x = xdata, y = data$y, type = "n", ylim = ylim, xlab = object$input_names %||% "x",
    ylab = data$name, main = "Posterior mean and data",
    sub = if (pred$band) sprintf("band: %g%% confidence interval for f", 100 * level) else
      "no band: the fit has no variance (see ?predict.sddgp)"), list(...))
  do.call(graphics::plot, args)
  if (pred$band) {
    graphics::polygon(c(grid, rev(grid)), c(pred$fit[, "lwr"], rev(pred$fit[, "upr"])),
                      col = grDevices::adjustcolor("steelblue", 0.25), border = NA)
  }
  if (k > 0L) {
    graphics::matlines(grid, sample_paths, lty = 1, col = grDevices::adjustcolor("grey30", 0.5))
  }
  graphics::points(xdata, data$y, pch = 20, cex = 0.6)
  graphics::lines(grid, pred$fit[, "fit"], lwd = 2, col = "steelblue4")
  invisible()
}

plot_observed <- function(object, newdata, newy, level, ...) {
  if (is.null(newdata) != is.null(newy)) {
    abort_argument(if (is.null(newdata)) "newdata" else "newy",
                   "is missing: give `newdata` and `newy` together")
  }
  pred <- predict_band(object, newdata, "prediction", level)
  fit <- pred$fit
  if (is.null(newdata)) {
    data <- training_targets(object)
    observed <- data$y
    # At the training inputs predict() pads the rows na.exclude() left out.
    fit <- fit[!is.na(fit[, "fit"]), , drop = FALSE]
    what <- "fitted values"
  } else {
    observed <- newy
    if (!is.numeric(observed) || length(observed) != nrow(fit)) {
      abort_argument("newy", sprintf("must be a numeric vector of %d targets, one per row of `newdata`",
                                     nrow(fit)))
    }
    what <- sprintf("%d test points", nrow(fit))
  }
  lim <- range(observed, fit, finite = TRUE)
  args <- utils::modifyList(list(
    x = fit[, "fit"], y = observed, type = "n", xlim = lim, ylim = lim,
    xlab = "predicted", ylab = "observed", main = sprintf("Observed against predicted (%s)", what),
    sub = if (pred$band) sprintf("bars: %g%% prediction intervals", 100 * level) else
      "no intervals: the fit has no variance (see ?predict.sddgp)"), list(...))
  do.call(graphics::plot, args)
  if (pred$band) {
    graphics::segments(fit[, "fit"], fit[, "lwr"], fit[, "fit"], fit[, "upr"],
                       col = grDevices::adjustcolor("steelblue", 0.4))
  }
  graphics::abline(0, 1, lty = 2, col = "grey40")
  graphics::points(fit[, "fit"], observed, pch = 20, cex = 0.6)
  invisible()
}
