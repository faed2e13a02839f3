# What every solver's settings object shares.  Each solver has a
# constructor `<solver>_control()` (sdd_control(), cg_control(), ...) that
# validates its own arguments and hands them to new_control(); gp_sdd()
# checks that the control object belongs to the solver it runs.

new_control <- function(solver, settings, features) {
  check_number(features, "features", lower = 1, upper = 1e6, integer = TRUE)
  structure(c(list(solver = solver), settings, list(features = as.integer(features))),
            class = c(paste0("sddgp_control_", solver), "sddgp_control"))
}

#' @export
print.sddgp_control <- function(x, ...) {
  cat(sprintf("Settings of solver \"%s\" (%s)\n", x$solver, solver_info(x$solver)$label))
  cat_control_fields(unclass(x)[setdiff(names(x), "solver")])
  invisible(x)
}

# summary()'s view of the settings: only those that differ from the
# solver's defaults.
print_control_changes <- function(control) {
  defaults <- solver_info(control$solver)$control()
  changed <- Filter(function(nm) !identical(control[[nm]], defaults[[nm]]),
                    setdiff(union(names(control), names(defaults)), "solver"))
  if (!length(changed)) {
    cat(sprintf("Settings of solver \"%s\": the defaults\n", control$solver))
    return(invisible(control))
  }
  cat(sprintf("Settings of solver \"%s\" that differ from the defaults:\n", control$solver))
  cat_control_fields(unclass(control)[changed])
  invisible(control)
}

cat_control_fields <- function(fields) {
  shown <- vapply(fields, function(v) {
    if (is.null(v)) "auto" else paste(format(v), collapse = ", ")
  }, character(1L))
  cat(paste0("  ", format(names(shown)), "  ", shown), sep = "\n")
}

# The kernel-matrix settings of the solvers that multiply by all of K: its
# cache and the precision of its values.
kernel_settings <- function(cache, cache_limit, precision) {
  cache <- choose_one(cache, "cache", c("auto", "always", "never"))
  check_number(cache_limit, "cache_limit", lower = 0)
  precision <- choose_one(precision, "precision", c("double", "single"))
  list(cache = cache, cache_limit = cache_limit, precision = precision)
}

# Whether the n x n kernel matrix fits the control's memory budget (4 bytes
# an entry in single precision, 8 in double).
use_kernel_cache <- function(control, n) {
  bytes <- if (control$precision == "single") 4 else 8
  control$cache == "always" ||
    (control$cache == "auto" && bytes * as.numeric(n)^2 <= control$cache_limit)
}

# The settings of the kernel operator of src/glue.c (glue_square_operator())
# that a solver's settings for C carry along with its own.
operator_settings <- function(control, n) {
  list(use_cache = use_kernel_cache(control, n), precision = control$precision)
}

# The solver to run and its settings, from gp_sdd()'s `solver` and
# `control` arguments: either may be left NULL; with both NULL, solver and
# control are NULL and the fit chooses (solve_automatic()).
resolve_solver <- function(solver, control, n) {
  if (!is.null(solver)) check_choice(solver, "solver", names(solver_registry()))
  if (!is.null(control) && !inherits(control, "sddgp_control")) {
    abort_argument("control", if (is.null(solver)) {
      "must be made by a solver's control function, such as sdd_control()"
    } else sprintf("must be made by %s_control()", solver))
  }
  if (is.null(solver)) {
    if (is.null(control)) return(list(solver = NULL, control = NULL))
    solver <- control$solver
  }
  if (is.null(control)) control <- solver_info(solver)$control()
  if (!identical(control$solver, solver)) {
    abort_argument("control", sprintf(
      "was made by %s_control() but `solver` is \"%s\"; use %s_control()",
      control$solver, solver, solver))
  }
  if (solver == "cholesky" && n > cholesky_max_n) {
    abort_argument("solver", sprintf(paste(
      "\"cholesky\" would need a %d x %d kernel matrix (%.1f GB);",
      "use solver = \"sdd\" for more than %d points"), n, n, 8 * n^2 / 1e9,
      cholesky_max_n))
  }
  list(solver = solver, control = control)
}

