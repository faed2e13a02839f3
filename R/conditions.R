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

# A classed warning, caught by class as the errors are:
# withCallingHandlers(..., sddgp_warning_ill_conditioned = function(w) ...).
sddgp_warn <- function(message, class = NULL, call = NULL, ...) {
  cond <- structure(
    class = c(class, "sddgp_warning", "warning", "condition"),
    list(message = message, call = call, ...)
  )
  warning(cond)
}

# Bad argument value: `arg` is the argument's name as the user typed it.
abort_argument <- function(arg, problem, call = NULL) {
  sddgp_abort(sprintf("`%s` %s.", arg, problem),
              class = "sddgp_error_argument", arg = arg, call = call)
}
