# Several outputs (y a matrix): one GP per column, all with the fit's
# kernel and noise (in standardised units, each column standardised on its
# own), solved together as right-hand sides of one system.

# The solvers whose systems take several posterior means at once: those
# that solve (K + diag(noise)) alpha = B for any B.
multi_output_solvers <- c("cholesky", "sdd", "cg")

check_multi_output_solver <- function(solver, outputs) {
  if (outputs > 1L && !is.null(solver) && !solver %in% multi_output_solvers) {
    abort_argument("solver", sprintf(
      "is \"%s\", which fits one output: with several columns of `y` use %s", solver,
      paste0("\"", multi_output_solvers, "\"", collapse = ", ")))
  }
}

n_outputs <- function(object) NCOL(object$y)

output_names <- function(object) colnames(object$y)

# Values in standardised units of y (a vector, or a matrix with a column
# per output) back in the units of y, column by column.
unstandardize_targets <- function(v, scaling) {
  if (length(scaling$y_scale) == 1L) {
    return(unstandardize(v, scaling$y_center, scaling$y_scale))
  }
  for (j in seq_len(ncol(v))) {
    v[, j] <- unstandardize(v[, j], scaling$y_center[j], scaling$y_scale[j])
  }
  v
}

# Functions of one output only refuse a fit of several.
check_single_output <- function(object, what) {
  if (n_outputs(object) > 1L) {
    abort_argument("object", sprintf("has %d outputs; %s takes fits of one output",
                                     n_outputs(object), what))
  }
}
