# Machinery shared by the Bayesian-optimisation loops, bo_thompson() and
# mini_meta(): the search domain, calling the user's objective, and the
# result object both return.  Both loops maximise.

# The box [lower, upper] as list(lower, upper, d), from two finite numeric
# vectors of equal length with lower < upper in every coordinate.
check_box <- function(lower, upper) {
  for (arg in c("lower", "upper")) {
    v <- get(arg)
    if (!is.numeric(v) || length(v) == 0L) {
      abort_argument(arg, "must be a non-empty numeric vector")
    }
    if (any(!is.finite(v))) {
      abort_argument(arg, "must not contain NA, NaN or infinite values")
    }
  }
  if (length(lower) != length(upper)) {
    abort_argument("upper", sprintf("has length %d but `lower` has length %d",
                                    length(upper), length(lower)))
  }
  empty <- which(lower >= upper)
  if (length(empty)) {
    abort_argument("upper", sprintf(
      "must exceed `lower` in every coordinate, or the domain is empty; coordinate %d has lower %s and upper %s",
      empty[1L], format(lower[empty[1L]]), format(upper[empty[1L]])))
  }
  list(lower = as.numeric(lower), upper = as.numeric(upper), d = length(lower))
}

# m points drawn uniformly in the box, one per row, from R's generator.
runif_box <- function(m, box) {
  u <- matrix(stats::runif(m * box$d), m, box$d)
  u * rep(box$upper - box$lower, each = m) + rep(box$lower, each = m)
}

# Kernel hyperparameters and noise variance converted between the original
# units of the data and the standardised units of `scaling` (see
# standardization()): length scales go with the inputs' spreads, variances
# with the targets' variance.  NULL (not yet estimated) stays NULL.  The
# loops keep hyperparameters in original units, where their meaning does not
# change as data arrive.
rescale_hyperparameters <- function(kernel, noise, scaling, to = c("standard", "original")) {
  f <- if (match.arg(to) == "standard") function(v, s) v / s else function(v, s) v * s
  if (!is.null(kernel$lengthscale)) kernel$lengthscale <- f(kernel$lengthscale, scaling$x_scale)
  if (!is.null(kernel$variance)) kernel$variance <- f(kernel$variance, scaling$y_scale^2)
  if (!is.null(noise)) noise <- f(noise, scaling$y_scale^2)
  list(kernel = kernel, noise = noise)
}

# Rows of x moved into the box.
clamp_box <- function(x, box) {
  m <- nrow(x)
  pmin(pmax(x, rep(box$lower, each = m)), rep(box$upper, each = m))
}

check_objective <- function(objective) {
  if (!is.function(objective)) {
    abort_argument("objective", sprintf(
      "must be a function of one point (a numeric vector), not %s",
      if (is.null(objective)) "NULL" else sprintf("an object of class <%s>",
                                                  class(objective)[1L])))
  }
  objective
}

# The objective at every row of x: one call per row, each in its stream
# (task_streams()), as futures when `parallel` asks for them.  Each
# call must return a single finite number; anything else stops the loop
# with an "sddgp_error_objective" that shows the point, so the user can
# reproduce it.
evaluate_objective <- function(objective, x, streams, parallel = NULL) {
  values <- stream_map(lapply(seq_len(nrow(x)), function(i) x[i, ]), objective,
                       next_streams(streams, nrow(x)), parallel)
  vapply(seq_len(nrow(x)), function(i) {
    value <- values[[i]]
    if (!is.numeric(value) || length(value) != 1L || !is.finite(value)) {
      shown <- if (is.numeric(value) && length(value) == 1L) format(value) else
        sprintf("an object of class <%s> and length %d", class(value)[1L], length(value))
      sddgp_abort(sprintf(
        "`objective` must return a single finite number, but returned %s at x = (%s).",
        shown, paste(format(x[i, ], digits = 6), collapse = ", ")),
        class = "sddgp_error_objective", arg = "objective", x = x[i, ], value = value)
    }
    as.numeric(value)
  }, numeric(1L))
}

# The result of a loop: every point evaluated (`x`, one per row, and `y`), a
# per-step `history` data frame with at least the columns step,
# evaluations (cumulative), best (the best value so far) and seconds (the
# step's wall time), and loop-specific fields in `...`.  A loop whose "best"
# is not simply the largest y (noisy repeats are averaged first) says what
# it is in `best = list(label, value, x)`.
new_bo_result <- function(method, x, y, history, call, ...) {
  structure(list(method = method, x = x, y = y, history = history,
                 call = call, ...),
            class = c(paste0("sddgp_", method), "sddgp_bo"))
}

bo_labels <- c(thompson = "parallel Thompson sampling", mini_meta = "Mini-META")

#' @export
print.sddgp_bo <- function(x, digits = 4, ...) {
  top <- which.max(x$y)
  best <- x$best %||% list(label = "best value", value = x$y[top], x = x$x[top, ])
  h <- x$history
  cat(sprintf("Bayesian optimisation by %s\n", bo_labels[[x$method]]))
  cat(sprintf("  %d evaluations in %d steps, %s s\n", length(x$y), nrow(h),
              format(sum(h$seconds), digits = 3)))
  cat(sprintf("  %s: %s at x = (%s)\n", best$label, format(best$value, digits = digits),
              paste(format(best$x, digits = digits), collapse = ", ")))
  invisible(x)
}

#' Plot the progress of a Bayesian optimisation
#'
#' Draws the best objective value found so far against the step, the number
#' of evaluations or the elapsed time.
#'
#' @param x The result of [bo_thompson()] or [mini_meta()].
#' @param against The horizontal axis: `"step"`, `"evaluations"` or
#'   `"seconds"` (cumulative wall time).
#' @param ... Further graphical parameters for [graphics::plot()].
#' @return `x`, invisibly.
#' @export
plot.sddgp_bo <- function(x, against = c("step", "evaluations", "seconds"), ...) {
  if (is.character(against) && length(against) == 3L) against <- against[1L]
  check_choice(against, "against", c("step", "evaluations", "seconds"))
  h <- x$history
  horizontal <- switch(against, step = h$step, evaluations = h$evaluations,
                       seconds = cumsum(h$seconds))
  args <- utils::modifyList(
    list(x = horizontal, y = h$best, type = "s",
         xlab = switch(against, step = "step", evaluations = "evaluations",
                       seconds = "elapsed time (s)"),
         ylab = "best value found", main = bo_labels[[x$method]]),
    list(...))
  do.call(graphics::plot, args)
  invisible(x)
}
