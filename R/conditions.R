# Classed conditions.  Every error the package raises on bad input inherits
# from "sddgp_error" and names the offending argument, so callers can catch
# them precisely: tryCatch(..., sddgp_error_argument = function(e) ...).

sddgp_abort <- function(message, class = NULL, arg = NULL, call = NULL, ...) {
  cond <- structure(
    class = c(class, "sddgp_error", "error", "condition"),
    list(message = message, call = call, arg = arg, ...)
  )
  stop(cond)
}

# A classed warning, caught by class as the errors above:
# withCallingHandlers(..., sddgp_warning_not_converged = function(w) ...).
sddgp_warn <- function(message, class = NULL, ...) {
  warning(structure(class = c(class, "sddgp_warning", "warning", "condition"),
                    list(message = message, call = NULL, ...)))
}

# Bad argument value: `arg` is the argument's name as the user typed it.
abort_argument <- function(arg, problem, call = NULL) {
  sddgp_abort(sprintf("`%s` %s.", arg, problem),
              class = "sddgp_error_argument", arg = arg, call = call)
}

check_number <- function(x, arg, lower = -Inf, upper = Inf,
                         lower_open = FALSE, upper_open = FALSE,
                         integer = FALSE, call = NULL) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !is.finite(x)) {
    abort_argument(arg, "must be a single finite number", call)
  }
  if (integer && x != round(x)) {
    abort_argument(arg, sprintf("must be a whole number, not %s", format(x)), call)
  }
  below <- if (lower_open) x <= lower else x < lower
  above <- if (upper_open) x >= upper else x > upper
  if (below || above) {
    interval <- sprintf("%s%s, %s%s", if (lower_open) "(" else "[", format(lower),
                        format(upper), if (upper_open) ")" else "]")
    abort_argument(arg, sprintf("must lie in %s, not %s", interval, format(x)), call)
  }
  invisible(x)
}

check_positive_vector <- function(x, arg, call = NULL) {
  if (!is.numeric(x) || length(x) == 0L) {
    abort_argument(arg, "must be a non-empty numeric vector", call)
  }
  if (anyNA(x) || any(!is.finite(x))) {
    abort_argument(arg, "must not contain NA, NaN or infinite values", call)
  }
  if (any(x <= 0)) {
    abort_argument(arg, sprintf("must be positive; element %d is %s",
                                which(x <= 0)[1L], format(x[x <= 0][1L])), call)
  }
  invisible(x)
}

# One of a set of strings, with the valid choices in the message.
check_choice <- function(x, arg, choices, call = NULL) {
  if (!is.character(x) || length(x) != 1L || is.na(x) || !x %in% choices) {
    shown <- if (is.character(x) && length(x) == 1L) sprintf("\"%s\"", x) else
      "that value"
    abort_argument(arg, sprintf("must be one of %s, not %s",
                                paste0("\"", choices, "\"", collapse = ", "),
                                shown), call)
  }
  x
}
