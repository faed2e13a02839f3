# Printing and summarising a fit.

#' @export
print.sddgp <- function(x, digits = 4, ...) {
  cat("Gaussian process fitted by", solver_info(x$solver)$label, "\n")
  cat(sprintf("  %d observations, %d input%s; %d posterior sample%s\n", x$n, x$d,
              if (x$d == 1L) "" else "s", ncol(x$alpha_samples),
              if (ncol(x$alpha_samples) == 1L) "" else "s"))
  cat_lines(outputs_line(output_names(x)))
  cat(sprintf("  kernel: %s, variance %s\n", kernel_label(x$kernel),
              format(x$kernel$variance, digits = digits)))
  cat_lines(hyperparameter_lines(x, input_labels(x), digits))
  if (!is.null(x$estimation)) cat(estimation_line(x$estimation, x$n), "\n", sep = "")
  cat_lines(bound_lines(x$estimation, input_labels(x)))
  if (x$iterations > 0L) {
    # Why a run stopped, when it was not the iteration count.
    why <- if (x$status %in% c("tolerance", "time limit")) sprintf(" (%s)", x$status) else ""
    cat(sprintf("  %d iterations in %.1f s%s; relative residual %s%s\n", x$iterations,
                x$seconds, why, format(final_residual(x), digits = 3), tolerance_label(x)))
  }
  cat_lines(correction_line(x))
  cat_lines(sample_accuracy_line(x$sample_accuracy, x$tolerance))
  if (!is.null(x$choice)) cat(strwrap(x$choice$reason, indent = 2, exdent = 4), sep = "\n")
  if (short_of_accuracy(x)) cat("  ", not_converged_note(x), "\n", sep = "")
  invisible(x)
}

# The length scales named by input, the noise variance and the units they
# are in, for print() and summary() of a fit (or its summary: `x` holds
# kernel, noise, weights and scaling).
hyperparameter_lines <- function(x, labels, digits) {
  if (is_tanimoto(x$kernel)) return(tanimoto_lines(x, digits))
  values <- vapply(x$kernel$lengthscale, format, character(1L), digits = digits)
  c(wrap_items(paste(labels, values), "  lengthscales: ", "    "),
    noise_label(x$noise, x$weights, digits),
    strwrap(if (is_standardized(x$scaling)) paste(
      "(hyperparameters of the standardised data: inputs and y scaled to unit",
      "standard deviation; coef() gives them in the data's units)") else
      "(hyperparameters in the data's units)", indent = 2, exdent = 4))
}

# The same for the Tanimoto kernel: its prior mean, and that its inputs
# (fingerprints) were not standardised.
tanimoto_lines <- function(x, digits) {
  c(sprintf("  prior mean %s (units of y); %s fingerprints, not standardised",
            paste(format(x$kernel$mean, digits = digits, trim = TRUE), collapse = ", "),
            if (isTRUE(x$kernel$binary)) "binary" else "count"),
    noise_label(x$noise, x$weights, digits),
    strwrap(if (all(x$scaling$y_scale == 1)) "(hyperparameters in the data's units)" else
      "(variance and noise of the targets scaled to unit standard deviation)",
      indent = 2, exdent = 4))
}

# Items separated by ", " and packed into lines of at most 0.9 times the
# console width (as strwrap()), never broken inside an item ("x10 0.6").
wrap_items <- function(items, initial, exdent, width = 0.9 * getOption("width")) {
  items <- paste0(items, c(rep(",", length(items) - 1L), ""))
  lines <- character()
  line <- initial
  for (item in items) {
    if (line != initial && line != exdent &&
        nchar(line) + 1L + nchar(item) > width) {
      lines <- c(lines, line)
      line <- exdent
    }
    line <- paste0(line, if (line != initial && line != exdent) " ", item)
  }
  c(lines, line)
}

# Whether the fit standardised its data (standardize = TRUE, unless every
# column happened to have mean 0 and standard deviation 1).
is_standardized <- function(scaling) {
  !(all(scaling$x_center == 0) && all(scaling$x_scale == 1) &&
      all(scaling$y_center == 0) && all(scaling$y_scale == 1))
}

# The outputs of a fit of several (NULL names: one output, no line).
outputs_line <- function(outputs) {
  if (is.null(outputs)) return(character())
  wrap_items(outputs, sprintf("  %d outputs, sharing the kernel and noise: ", length(outputs)),
             "    ")
}

# Estimates on a bound of the estimation's search box (bounds_reached(),
# in the order length scales, variance, noise), each with what it
# suggests; none for a fit without them.
bound_lines <- function(estimation, labels) {
  at <- estimation$at_bound
  if (!any(nzchar(at))) return(character())
  d <- length(at) - 2L # the length scales (none for the Tanimoto kernel)
  hints <- c(
    lengthscale.upper = "y hardly varies along this input, which may be irrelevant",
    lengthscale.lower = "y varies faster along it than the data resolve",
    variance.upper = "check the scale of y, or give the kernel's variance",
    variance.lower = "the inputs explain little of y",
    noise.upper = "the inputs explain little of y",
    noise.lower = paste("a nearly noise-free fit; give `noise` (or a smaller `min_noise`",
                        "in estimation_control()) to go lower"))
  what <- c(rep("lengthscale", d), "variance", "noise")
  name <- c(paste("lengthscale", labels)[seq_len(d)], "variance", "noise")
  hit <- which(nzchar(at))
  lines <- sprintf("%s at its %s bound: %s", name[hit], at[hit],
                   hints[paste(what[hit], at[hit], sep = ".")])
  c("  estimates at a bound of the search box (see ?estimation_control):",
    unlist(lapply(lines, strwrap, indent = 4, exdent = 6)))
}

# One line each, nothing for none (cat(character(), sep = "\n") writes an
# empty line).
cat_lines <- function(lines) {
  if (length(lines)) cat(lines, sep = "\n")
}

noise_label <- function(noise, weights, digits) {
  if (is.null(weights)) return(sprintf("  noise variance: %s", format(noise, digits = digits)))
  sprintf("  noise variance: %s / weights (weights from %s to %s)",
          format(noise, digits = digits), format(min(weights), digits = digits),
          format(max(weights), digits = digits))
}

tolerance_label <- function(fit) {
  if (isTRUE(fit$tolerance > 0)) sprintf(" (tolerance %s)", format(signif(fit$tolerance, 3))) else ""
}

final_residual <- function(fit) {
  if (nrow(fit$trace) == 0L) return(NA_real_)
  fit$trace$residual[nrow(fit$trace)]
}

#' Summarise a Gaussian process fit
#'
#' @param object,x An `sddgp` fit, or its summary.
#' @param digits Significant digits to print.
#' @param ... Unused.
#' `print()` and `summary()` name the length scales by input column (the
#' formula's terms or the matrix's column names, else `x1`, `x2`, ...), say
#' whether the hyperparameters are those of the standardised data
#' (`standardize = TRUE`; [coef.sddgp()] gives them in the data's units) and
#' flag estimates that ended on a bound of the estimation's search box
#' ([estimation_control()]), with what that suggests. `summary()` lists the
#' solver settings that differ from their defaults.
#'
#' @return `summary()` returns an object of class `summary.sddgp`: a list with
#'   the data size, kernel and hyperparameters (in standardised units with
#'   `standardize = TRUE`), noise, solver settings (all of them, though only
#'   those that differ from the defaults are printed), iterations, timings, the
#'   final estimated relative residuals of the mean and sample systems, the
#'   `tolerance` the solver ran to (`NULL` for the exact solver; 0 for a fixed
#'   number of iterations), `choice` (how the solver was chosen when `gp_sdd()`
#'   chose it: see its Details; else `NULL`), `not_converged` (a note when the
#'   solver stopped short of its tolerance, or without one far from converged;
#'   else `NULL`), `sample_accuracy` (for the samples of SDD and CG: their
#'   variance at the training inputs, their residual's root mean square,
#'   `fraction`, the square of the one over the other, and `refinements`,
#'   how many more solves the default tolerance took to bring `fraction` to
#'   0.05, and `tolerance`, the one the last of them ran to; else `NULL`),
#'   `cached` (whether the kernel matrix was cached, for the solvers with a
#'   cache: SDD, SGD, CG; else `NULL`), `preconditioner` (CG's, in words;
#'   else `NULL`) and `input_labels` (the names of the length scales).
#' @export
summary.sddgp <- function(object, ...) {
  tr <- object$trace
  last <- if (nrow(tr)) tr[nrow(tr), ] else NULL
  structure(list(
    call = object$call, n = object$n, d = object$d, kernel = object$kernel,
    noise = object$noise, weights = object$weights, solver = object$solver,
    control = object$control,
    step_size = object$state$step_size, backoffs = object$state$backoffs,
    samples = ncol(object$alpha_samples),
    iterations = object$iterations, status = object$status,
    seconds = object$seconds, threads = object$threads,
    residual = if (!is.null(last)) last$residual else NA_real_,
    residual_samples = if (!is.null(last)) last$residual_samples else NA_real_,
    tolerance = object$tolerance, choice = object$choice,
    not_converged = if (short_of_accuracy(object)) not_converged_note(object),
    correction = correction_line(object),
    sample_accuracy = object$sample_accuracy,
    cached = object$cached, preconditioner = object$preconditioner,
    estimation = object$estimation, scaling = object$scaling,
    input_labels = input_labels(object), outputs = output_names(object)),
    class = "summary.sddgp")
}

#' @rdname summary.sddgp
#' @export
print.summary.sddgp <- function(x, digits = 4, ...) {
  if (!is.null(x$call)) {
    cat("Call:\n")
    print(x$call)
    cat("\n")
  }
  cat(sprintf("Data: %d observations, %d input%s\n", x$n, x$d, if (x$d == 1L) "" else "s"))
  cat_lines(outputs_line(x$outputs))
  cat(sprintf("\nKernel: %s, variance %s\n", kernel_label(x$kernel),
              format(x$kernel$variance, digits = digits)))
  cat_lines(hyperparameter_lines(x, x$input_labels, digits))
  if (!is.null(x$estimation)) {
    cat(estimation_summary(x$estimation, x$n, digits), sep = "\n")
  }
  cat_lines(bound_lines(x$estimation, x$input_labels))
  cat("\nSolver:", solver_info(x$solver)$label, "\n")
  if (!is.null(x$step_size)) {
    cat(sprintf("  step size %s (samples %s)%s\n", format(signif(x$step_size[["mean"]], 4)),
                format(signif(x$step_size[["samples"]], 4)),
                if (isTRUE(x$backoffs > 0L)) sprintf(
                  ", halved %d time%s after the iterates diverged", x$backoffs,
                  if (x$backoffs == 1L) "" else "s") else ""))
  }
  if (!is.null(x$preconditioner)) cat(sprintf("  preconditioner: %s\n", x$preconditioner))
  cat(sprintf("  %d iteration%s (%s), %d thread%s, %.2f s\n", x$iterations,
              if (x$iterations == 1L) "" else "s", x$status, x$threads,
              if (x$threads == 1L) "" else "s", x$seconds))
  if (is.finite(x$residual) || is.finite(x$residual_samples)) {
    cat(sprintf("  final relative residual: mean %s, samples %s%s\n",
                format(x$residual, digits = 3), format(x$residual_samples, digits = 3),
                tolerance_label(x)))
  }
  cat_lines(x$correction)
  cat_lines(sample_accuracy_line(x$sample_accuracy, x$tolerance))
  if (!is.null(x$choice)) cat(strwrap(x$choice$reason, indent = 2, exdent = 4), sep = "\n")
  if (!is.null(x$not_converged)) cat("  ", x$not_converged, "\n", sep = "")
  if (!is.null(x$cached)) {
    cat(if (x$cached) "  kernel matrix cached in memory\n" else
      "  kernel matrix not cached: its rows are computed as needed\n")
  }
  cat("\n")
  print_control_changes(x$control)
  cat(sprintf("Posterior samples: %d\n", x$samples))
  invisible(x)
}
