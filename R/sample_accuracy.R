# How accurately the sample systems are solved for the standard errors.
#
# A sample's solution with residual r errs at the training inputs by
# K H^-1 r, whose norm is at most |r|, and that error adds its square to
# the samples' variance.  The default tolerance (solve_tolerance()) bounds
# the residual by the noise's scale, which suits the mean; but the sample
# paths' variance, the posterior's, can be far below the noise (many points
# per length scale) while their right-hand sides f0(X) + e have the prior's
# scale, which the targets' need not have: there a relative residual that
# suffices for the mean overstates the standard errors several times
# (NEWS).  So a default solve goes on, from where it stopped, until the
# samples' mean square residual is at most this fraction of their variance
# at the training inputs.
sample_variance_fraction <- 0.05

# Solves that the samples' accuracy may add after the first.
sample_refinements <- 3L

# The samples' variance at the training inputs and their residuals, from
# the solution `sol` of `problem`; NULL without samples or where the
# solution is no vector of weights on the training inputs with an
# estimated residual.  At the training inputs a sample path is f0(X) -
# K alpha = noise alpha - e + r (H alpha = f0(X) + e - r), so its variance
# needs no kernel product.  `fraction` is the mean square residual over
# that variance.
sample_accuracy <- function(sol, problem) {
  samples <- setdiff(seq_len(ncol(problem$rhs)), seq_len(mean_systems(problem)))
  residual <- if (nrow(sol$trace %||% empty_trace())) {
    sol$trace$residual_samples[nrow(sol$trace)]
  }
  if (!length(samples) || !is.null(sol$basis) || !isTRUE(is.finite(residual))) return(NULL)
  paths <- problem$noise * sol$alpha[, samples, drop = FALSE] - problem$zeta
  variance <- mean(paths^2)
  rms_b <- sqrt(mean(problem$rhs[, samples]^2))
  list(variance = variance, residual = residual * rms_b, rms_b = rms_b,
       fraction = (residual * rms_b)^2 / variance)
}

# The relative residual that meets sample_variance_fraction at the
# samples' variance seen so far, less the part of it that their residual
# may explain.
needed_tolerance <- function(accuracy) {
  variance <- max(accuracy$variance - accuracy$residual^2, accuracy$variance / 10)
  sqrt(sample_variance_fraction * variance) / accuracy$rms_b
}

# `sol`, solved again from where it stopped while its samples fall short of
# sample_variance_fraction, when the run had the default tolerance and
# reached it; with the samples' accuracy as `sample_accuracy`.  Each solve
# runs to needed_tolerance(), at least halving the last, with what the run
# left of its budget (iterations, time limit).  The fit keeps the first
# run's tolerance and status: every system met that tolerance, and the
# further solves only go on from there (CG's error in the K-norm does not
# grow, though a restart may leave the residual a hair above where it
# was).  Where they end on the budget, the samples' accuracy is judged by
# `fraction` (warn_if_samples_inaccurate()); where they diverge, the last
# solution stands.
refine_samples <- function(solver, control, problem, sol, threads) {
  accuracy <- sample_accuracy(sol, problem)
  first <- sol
  refinements <- 0L
  tolerance <- NULL
  budget <- intersect(c("iterations", "max_iterations"), names(control))
  while (!is.null(accuracy) && is.null(control$tolerance) && first$status == "tolerance" &&
         accuracy$fraction > sample_variance_fraction &&
         refinements < sample_refinements) {
    tighter <- control
    tighter$tolerance <- min(sol$tolerance / 2, needed_tolerance(accuracy))
    tighter[budget] <- lapply(budget, function(b) control[[b]] - sol$iterations)
    if (!is.null(control$time_limit)) tighter$time_limit <- control$time_limit - sol$seconds
    # Nothing left: warn_if_samples_inaccurate() tells.
    if (any(unlist(tighter[budget]) < 1L) || isTRUE(tighter$time_limit <= 0)) break
    problem$alpha0 <- sol$alpha
    more <- tryCatch(run_solver(solver, problem, tighter, threads),
                     sddgp_error_divergence = function(e) NULL)
    if (is.null(more)) break
    more$trace$iteration <- more$trace$iteration + sol$iterations
    more$trace$seconds <- more$trace$seconds + sol$seconds
    more$trace <- rbind(sol$trace, more$trace)
    more$iterations <- sol$iterations + more$iterations
    more$seconds <- sol$seconds + more$seconds
    sol <- more
    tolerance <- tighter$tolerance
    accuracy <- sample_accuracy(sol, problem)
    refinements <- refinements + 1L
    if (sol$status != "tolerance") break
  }
  if (refinements > 0L) {
    sol$status <- first$status
    sol$tolerance <- first$tolerance
  }
  sol$sample_accuracy <- if (!is.null(accuracy)) {
    c(accuracy, list(refinements = refinements, tolerance = tolerance))
  }
  sol
}

# The line of summary() on the samples' accuracy, where more solves were
# needed or a run to `tolerance` falls short; NULL otherwise.
sample_accuracy_line <- function(accuracy, tolerance) {
  short <- isTRUE(tolerance > 0) && isTRUE(accuracy$fraction > sample_variance_fraction)
  if (is.null(accuracy) || (accuracy$refinements == 0L && !short)) return(NULL)
  sprintf("  samples: mean square residual %s of their variance at the inputs%s",
          format(signif(accuracy$fraction, 2)),
          if (accuracy$refinements > 0L) sprintf(", after %d more solve%s",
            accuracy$refinements, if (accuracy$refinements == 1L) "" else "s") else "")
}

# The classed warning of a fit that reached its tolerance but whose
# samples fell short of sample_variance_fraction: a tolerance given, no
# budget left for more, or more solves that did not suffice.  A run short
# of its tolerance has warned already (warn_if_not_converged()), and one of
# a fixed number of iterations (tolerance 0) asked for none; summary()
# shows the samples' accuracy.
warn_if_samples_inaccurate <- function(fit) {
  accuracy <- fit$sample_accuracy
  if (is.null(accuracy) || !isTRUE(fit$tolerance > 0) || fit$status != "tolerance" ||
      accuracy$fraction <= sample_variance_fraction) {
    return(invisible(FALSE))
  }
  needed <- needed_tolerance(accuracy)
  sddgp_warn(sprintf(paste(
    "The posterior samples' residuals are large against their variance (mean",
    "square %s of it, above %s), so standard errors and intervals may be",
    "overstated: use `tolerance = %s` or lower in %s_control(), with a budget",
    "(iterations, time limit) that reaches it."),
    format(signif(accuracy$fraction, 2)), format(sample_variance_fraction),
    format(signif(needed, 2)), fit$solver),
    class = "sddgp_warning_samples_inaccurate", fraction = accuracy$fraction,
    tolerance = needed)
  invisible(TRUE)
}
