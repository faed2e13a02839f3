# The framework of the solvers: the registry, the problem a solver is
# given, running one, and how its run ended.  A solver `s` is an entry of
# solver_registry() with two functions:
#   s_control(...)                          its validated settings, and
#   solve_s(problem, control, threads, state)
# which returns list(alpha, basis, state, iterations, status, trace).
#
# `alpha` holds one column of coefficients per right-hand side of the
# problem (the mean's first when problem$has_mean): the posterior mean is
# basis(x) %*% alpha[, 1] and sample s is f0_s(x) + basis(x) %*% (mean
# coefficients - alpha[, 1 + s]) (see posterior_at()).  `basis` is NULL for
# representer weights over the training inputs, the kernel basis of the
# solvers that solve (K + diag(noise)) alpha = b; solvers with another
# basis (inducing points, random features) describe it, and
# basis_matmul() evaluates it.  `state` is whatever the solver needs to draw
# further samples consistent with its mean later (simulate() with a seed);
# it gets it back as `state`.

# A C solver takes its settings as one list made by s_settings(): exactly
# the fields of its options struct, named as they are, with choices as
# strings that src/glue.c maps to the core's codes.

# Every solver: its label, its control constructor, its solve function, and
# whether the trace's `residual` is the relative residual of the mean's
# system, which tends to 0 (DSG's is the training fit's, which tends to the
# exact posterior's own).  A function, as it names functions of files
# collated after this one.
solver_registry <- function() {
  list(
    sdd = list(label = "stochastic dual descent", control = sdd_control,
               solve = solve_sdd, mean_residual = TRUE),
    cholesky = list(label = "exact Cholesky solve", control = cholesky_control,
                    solve = solve_cholesky, mean_residual = FALSE),
    cg = list(label = "preconditioned conjugate gradients",
              control = cg_control, solve = solve_cg, mean_residual = TRUE),
    sgd = list(label = "stochastic gradient descent (Lin et al. 2023)",
               control = sgd_control, solve = solve_sgd, mean_residual = TRUE),
    svgp = list(label = "sparse variational GP", control = svgp_control,
                solve = solve_svgp, mean_residual = FALSE),
    dsg = list(label = "doubly stochastic functional gradients",
               control = dsg_control, solve = solve_dsg, mean_residual = FALSE),
    cabcd = list(label = "Caratheodory block coordinate descent, random features",
                 control = cabcd_control, solve = solve_cabcd, mean_residual = TRUE)
  )
}

solver_info <- function(name) {
  info <- solver_registry()[[name]]
  if (is.null(info)) stop("internal error: unknown solver \"", name, "\"")
  info
}

# The problem a solver is given, in standardised units: inputs `x` (and
# `xs`, divided by the length scales), the kernel, one noise variance per
# observation, and the right-hand sides `rhs`: the targets y (unless NULL)
# followed by one column f0_s(X) + zeta_s per prior draw of `prior`
# (zeta_s ~ N(0, noise)), whose two parts are kept as `f0` and `zeta`.
# The solvers that can start from a given iterate (SDD, CG) start from
# `alpha0` (one column per right-hand side) when the caller sets it:
# hyperparameter estimation starts every solve where the last one ended.
# `zeta` is drawn from `noise_base` (standard normal, n x s) when given,
# so that the probes of hyperparameter estimation change smoothly with it.
new_problem <- function(x, y, kernel, noise, prior, threads, noise_base = NULL) {
  n <- nrow(x)
  p <- list(x = x, xs = scale_inputs(x, kernel), kernel = kernel,
            noise = rep_len(as.numeric(noise), n), y = y, prior = prior,
            has_mean = !is.null(y), n_mean = if (is.null(y)) 0L else NCOL(y))
  if (!is.null(prior)) {
    s <- ncol(prior$weights)
    p$f0 <- prior_values(prior, kernel, x, threads)
    p$zeta <- sqrt(p$noise) * (noise_base %||%
      matrix(.Call(C_rng_normal, new_seed(), "noise", as.numeric(n) * s), n, s))
  }
  p$rhs <- cbind(y, p$f0 + p$zeta, deparse.level = 0)
  p
}

# The number of the posterior means' systems (one per output) among the
# right-hand sides, the first columns; problems made without new_problem()
# have one if they have a mean.
mean_systems <- function(problem) {
  problem$n_mean %||% as.integer(isTRUE(problem$has_mean))
}

run_solver <- function(solver, problem, control, threads, state = NULL) {
  start <- proc.time()[["elapsed"]]
  sol <- solver_info(solver)$solve(problem, control, threads, state)
  sol$seconds <- proc.time()[["elapsed"]] - start
  sol
}

# The names of the C solvers' statuses (solver_status of src/solver.h), by
# code: glue.c's glue_statuses, against which the tests check them.
solver_statuses <- c("iterations", "tolerance", "diverged", "interrupted",
                     "out of memory", "time limit", "stalled")

# How the C run `res` ended, by name.
decode_status <- function(res) solver_statuses[[res$status + 1L]]

# Raises the classed condition that a diverged, interrupted or
# out-of-memory run of `solver` deserves, and returns any other status.
# `advice` tells the user what to change when it diverged; `...` become
# fields of the divergence error.
raise_status <- function(status, solver, iterations, advice, ...) {
  label <- toupper(solver)
  if (status == "diverged") {
    sddgp_abort(sprintf("%s diverged after %d iterations: the iterates blew up. %s",
                        label, iterations, advice),
                class = "sddgp_error_divergence", iterations = iterations, ...)
  }
  if (status == "interrupted") {
    signal_interrupt(sprintf("%s interrupted by the user after %d iterations",
                             label, iterations))
  }
  if (status == "out of memory") {
    sddgp_abort(sprintf("%s could not allocate its working memory.", label),
                class = "sddgp_error_memory")
  }
  status
}

# The default accuracy of the iterative solvers (`tolerance = NULL` in
# sdd_control() and cg_control()): the root mean square residual of every
# system is at most this fraction of the noise standard deviation.  The
# posterior mean's error at the training inputs is K (K + noise I)^-1 times
# the residual, whose norm is at most the residual's; ?sdd_control (section
# Stopping) states the consequence for predictions.  CG converges
# linearly, so half SDD's fraction costs it a few more iterations, and
# keeps its predictions close to the exact ones also where the estimated
# noise exceeds the test error (a noise estimate at its floor).
tolerance_noise_fraction <- c(sdd = 0.1, cg = 0.05)

# The relative residual at which a run of `solver` ("sdd" for SDD and SGD,
# or "cg") stops on `problem`: `tolerance` when given, else the default
# accuracy above for the scale of the first right-hand side (the targets,
# or a sample's), capped at 0.1.
solve_tolerance <- function(tolerance, problem, solver = "sdd") {
  if (!is.null(tolerance)) return(tolerance)
  noise <- mean(problem$noise)
  rms_b <- sqrt(mean(problem$rhs[, 1L]^2))
  # b = 0 is solved at once by alpha = 0; gp_sdd() checks that noise > 0.
  if (!isTRUE(noise > 0 && rms_b > 0)) return(0.1)
  min(0.1, tolerance_noise_fraction[[solver]] * sqrt(noise) / rms_b)
}

# A run without a tolerance (tolerance = 0: a fixed number of iterations)
# whose posterior mean's system ends with an estimated relative residual
# above this is far from converged: residual 1 is that of alpha = 0, which
# predicts the prior mean (the mean of y, standardised).
not_converged_residual <- 0.5

# Whether `fit` fell short of the accuracy it was run for: with a
# tolerance, not reaching it; without, ending far from converged.  Judged
# only where the trace's residual tends to 0 (solver_registry()).
short_of_accuracy <- function(fit) {
  if (!solver_info(fit$solver)$mean_residual) return(FALSE)
  if (isTRUE(fit$tolerance > 0)) return(fit$status != "tolerance")
  isTRUE(final_residual(fit) > not_converged_residual)
}

# The residual `fit` aimed for.
target_residual <- function(fit) {
  if (isTRUE(fit$tolerance > 0)) fit$tolerance else not_converged_residual
}

not_converged_note <- function(fit) {
  if (isTRUE(fit$tolerance > 0)) {
    return(sprintf("not converged: relative residual %s, tolerance %s",
                   residuals_label(fit), format(signif(fit$tolerance, 3))))
  }
  sprintf("far from converged: relative residual %s > %s (at 1, no better than the mean of y)",
          format(final_residual(fit), digits = 3), format(not_converged_residual))
}

# The final estimated relative residuals: the mean's, and the root mean
# square of the samples' where there are samples.
residuals_label <- function(fit) {
  last <- fit$trace[nrow(fit$trace), ]
  paste0(format(last$residual, digits = 3),
         if (is.finite(last$residual_samples))
           sprintf(" (samples %s)", format(last$residual_samples, digits = 3)))
}

warn_if_not_converged <- function(fit) {
  if (!short_of_accuracy(fit)) return(invisible(FALSE))
  why <- switch(fit$status,
    "time limit" = sprintf("its time limit of %s s", format(fit$control$time_limit)),
    "the end of its iteration budget")
  exact <- if (fit$n <= cholesky_max_n) {
    sprintf("solver = \"cholesky\" (exact, about %s here)", format_seconds(
      exact_seconds(fit$n, 1L + ncol(fit$alpha_samples), fit$threads, cost_dims(fit))))
  }
  advice <- switch(fit$solver,
    cg = paste(c("more `max_iterations` or a larger `time_limit` in cg_control()", exact),
               collapse = ", or "),
    cabcd = paste(c("more `iterations` in cabcd_control(), or solver = \"cg\"", exact),
                  collapse = " or "),
    paste(c(sprintf("more `iterations` or a larger `time_limit` in %s_control()",
                    fit$solver), exact, "solver = \"cg\""), collapse = ", or "))
  message <- if (isTRUE(fit$tolerance > 0)) {
    sprintf(paste(
      "%s stopped at %s after %d iteration%s without reaching its tolerance: the",
      "estimated relative residual is %s against the tolerance %s, so predictions",
      "may be further from the exact GP's than stated in ?sdd_control (Stopping).",
      "Use %s."),
      toupper(fit$solver), why, fit$iterations, if (fit$iterations == 1L) "" else "s",
      residuals_label(fit), format(signif(fit$tolerance, 3)), advice)
  } else {
    sprintf(paste(
      "%s stopped far from converged, at %s after %d iteration%s: the estimated",
      "relative residual of the posterior mean's system is %s, above the threshold",
      "%s (at 1, predictions are no better than the mean of y). Use %s."),
      toupper(fit$solver), why, fit$iterations, if (fit$iterations == 1L) "" else "s",
      format(final_residual(fit), digits = 3), format(not_converged_residual), advice)
  }
  if (!is.null(fit$training_residual)) {
    message <- paste(message, "At new points predict() corrects for the residual from",
                     "the nearest training points (`neighbours`), which narrows the gap.")
  }
  sddgp_warn(message, class = "sddgp_warning_not_converged",
             residual = final_residual(fit), threshold = target_residual(fit),
             status = fit$status)
  invisible(TRUE)
}

# "12 s", "3.4 min", "2.1 h".
format_seconds <- function(seconds) {
  if (seconds < 90) return(sprintf("%s s", format(signif(seconds, 2))))
  if (seconds < 5400) return(sprintf("%s min", format(signif(seconds / 60, 2))))
  sprintf("%s h", format(signif(seconds / 3600, 2)))
}

# Ctrl-C seen by a C solver (which returned cleanly, freeing its memory)
# becomes an interrupt condition, caught by tryCatch(interrupt = ) as R's own.
signal_interrupt <- function(message) {
  stop(structure(class = c("sddgp_interrupt", "interrupt", "condition"),
                 list(message = message, call = NULL)))
}

# A seed for the counter-based generator in C, drawn from R's generator so
# that set.seed() makes every fit reproducible.
new_seed <- function() floor(stats::runif(2L) * 2^32)
