# Printing and summarising a fit.

#' @export
print.sddgp <- function(x, digits = 4, ...) {
  cat("Gaussian process fitted by", solver_info(x$solver)$label, "\n")
  cat(sprintf("  %d observations, %d input%s; %d posterior sample%s\n", x$n, x$d,
              if (x$d == 1L) "" else "s", ncol(x$alpha_samples),
              if (ncol(x$alpha_samples) == 1L) "" else "s"))
  cat(sprintf("  kernel: %s, variance %s\n", kernel_label(x$kernel),
              format(x$kernel$variance, digits = digits)))
  cat(strwrap(paste(format(x$kernel$lengthscale, digits = digits), collapse = " "),
              indent = 0, exdent = 4, initial = "  lengthscales: "),
      sep = "\n")
  cat(noise_label(x$noise, x$weights, digits), "\n", sep = "")
  if (!is.null(x$estimation)) cat(estimation_summary(x$estimation, x$n), sep = "\n")
  if (x$iterations > 0L) {
    # Why a run stopped, when it was not the iteration count.
    why <- if (x$status %in% c("tolerance", "time limit")) sprintf(" (%s)", x$status) else ""
    cat(sprintf("  %d iterations in %.1f s%s; relative residual %s%s\n", x$iterations,
                x$seconds, why, format(final_residual(x), digits = 3), tolerance_label(x)))
  }
  if (!is.null(x$choice)) cat(strwrap(x$choice$reason, indent = 2, exdent = 4), sep = "\n")
  if (short_of_accuracy(x)) cat("  ", not_converged_note(x), "\n", sep = "")
  invisible(x)
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
#' @return `summary()` returns an object of class `summary.sddgp`: a list with
#'   the data size, kernel and hyperparameters (in standardised units), noise,
#'   solver settings, iterations, timings, the final estimated relative
#'   residuals of the mean and sample systems, the `tolerance` the solver
#'   ran to (`NULL` for the exact solver; 0 for a fixed number of
#'   iterations), `choice` (how the solver was chosen when `gp_sdd()` chose
#'   it: see its Details; else `NULL`), `not_converged` (a note when the
#'   solver stopped short of its tolerance, or without one far from
#'   converged; else `NULL`) and `cached` (whether the kernel matrix was cached, for the
#'   solvers with a cache: SDD, SGD, CG; else `NULL`).
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
    cached = object$cached,
    estimation = object$estimation, scaling = object$scaling),
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
  cat("\nKernel (standardised units):\n")
  print(x$kernel, digits = digits)
  cat(noise_label(x$noise, x$weights, digits), "\n", sep = "")
  if (!is.null(x$estimation)) {
    cat(estimation_summary(x$estimation, x$n, digits), sep = "\n")
  }
  cat("\nSolver:", solver_info(x$solver)$label, "\n")
  if (!is.null(x$step_size)) {
    cat(sprintf("  step size %s (samples %s)%s\n", format(signif(x$step_size[["mean"]], 4)),
                format(signif(x$step_size[["samples"]], 4)),
                if (isTRUE(x$backoffs > 0L)) sprintf(
                  ", halved %d time%s after the iterates diverged", x$backoffs,
                  if (x$backoffs == 1L) "" else "s") else ""))
  }
  cat(sprintf("  %d iteration%s (%s), %d thread%s, %.2f s\n", x$iterations,
              if (x$iterations == 1L) "" else "s", x$status, x$threads,
              if (x$threads == 1L) "" else "s", x$seconds))
  if (is.finite(x$residual) || is.finite(x$residual_samples)) {
    cat(sprintf("  final relative residual: mean %s, samples %s%s\n",
                format(x$residual, digits = 3), format(x$residual_samples, digits = 3),
                tolerance_label(x)))
  }
  if (!is.null(x$choice)) cat(strwrap(x$choice$reason, indent = 2, exdent = 4), sep = "\n")
  if (!is.null(x$not_converged)) cat("  ", x$not_converged, "\n", sep = "")
  if (!is.null(x$cached)) {
    cat(if (x$cached) "  kernel matrix cached in memory\n" else
      "  kernel matrix not cached: its rows are computed as needed\n")
  }
  cat("\n")
  print(x$control)
  cat(sprintf("Posterior samples: %d\n", x$samples))
  invisible(x)
}
