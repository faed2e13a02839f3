# Hyperparameter estimation on all the data (estimation_control(method =
# "iterative")): gradient ascent on the log marginal likelihood with the
# pathwise gradient estimator of Lin, Padhy, Mlodozeniec, Antoran and
# Hernandez-Lobato (NeurIPS 2024, "Improving linear system solvers for
# hyperparameter optimisation in iterative Gaussian processes").
#
# Every outer step solves H [a, V] = [y, Z] with H = K + diag(noise) for the
# targets and `probes` prior draws plus noise Z ~ N(0, H), then the gradient
# a' dH a / 2 - mean_q v_q' dH v_q / 2 comes from one pass over the pairs
# (C_mll_pathwise).  The probes' base random numbers (the random features'
# frequencies and weights and the noise draws) stay fixed, so the systems
# change smoothly with the hyperparameters and every solve starts from the
# last one's solution; the v_q are the sample systems of pathwise
# conditioning, which the fit then reuses.  With a finite `auto_seconds`
# (method "auto") the ascent stops after its first step, at the start,
# when 40 such steps are projected to take longer.

# What print() says of an estimation record, of n points.
estimation_line <- function(est, n) {
  how <- switch(est$method,
    subset = sprintf("marginal likelihood on %d points", est$subset_size),
    vecchia = sprintf("Vecchia's approximate marginal likelihood on all %d points", n),
    sprintf("marginal likelihood on all %d points", n))
  sprintf("  estimated by %s: %s", how, paste(est$estimated, collapse = ", "))
}

# What summary() says of it.
estimation_summary <- function(est, n, digits) {
  lines <- sprintf("  estimated (%s) on %d points: log marginal likelihood %s, %.1f s",
                   paste(est$estimated, collapse = ", "), est$subset_size,
                   format(est$log_marginal_likelihood, digits = digits),
                   est$subset_seconds %||% est$seconds)
  vecchia <- if (!is.null(est$vecchia)) vecchia_summary(est$vecchia, n)
  it <- est$iterative
  if (is.null(it)) return(c(lines, vecchia))
  if (it$stopped == "over budget") {
    return(c(lines, strwrap(sprintf(paste(
      "no exact ascent on all %d points: %d steps like the first were projected to",
      "take %.0f s on the reference machine, over estimation_control(auto_seconds = %s)"),
      n, projected_steps, it$projected_seconds, format(it$auto_seconds)),
      indent = 2, exdent = 4), vecchia))
  }
  gain <- it$log_marginal_likelihood_gain
  c(lines, strwrap(sprintf(paste(
    "then on all %d points: %d Adam step%s (%s), log marginal likelihood",
    "%+.1f along the path, %d inner iterations (%d to %d a step, ending at",
    "relative residual %s at most), %.1f s"),
    n, it$steps, if (it$steps == 1L) "" else "s", it$stopped, gain[length(gain)], sum(it$inner_iterations),
    min(it$inner_iterations), max(it$inner_iterations),
    format(signif(max(it$inner_residuals), 2)), it$seconds),
    indent = 2, exdent = 4),
    if (any(it$excluded_probes > 0L)) strwrap(sprintf(paste(
      "%d implausible probe solutions left out, in %d of the steps"),
      sum(it$excluded_probes), sum(it$excluded_probes > 0L)), indent = 2, exdent = 4))
}

# The projected seconds of one outer step on the benchmarks' reference
# machine (2 cores, inst/benchmarks/estimation.R), from its inner
# passes: a CG iteration multiplies the n x n kernel matrix into 1 + probes
# columns (an SDD step batch_size / n of it), and the gradient's pass
# evaluates the kernel and its d + 2 derivatives at every pair for
# 1 + probes columns (with the probes' prior draws, counted with it).  The
# CG rate is the median of elevators', pol's and a 6000-point low-noise
# ascent's; the gradient's, after its pass was made 3.6 times faster, is
# the mean of pol's and the low-noise ascent's, each relative to the CG
# rate of its own run (NEWS).  Counting work instead of reading the clock
# keeps the choice (and so the fit) the same on any machine and thread
# count.
projected_step_seconds <- function(n, d, probes, passes) {
  n^2 * (7e-11 * passes * (probes + 1) + 2.5e-10 * (d + probes + 2))
}

# Steps that auto projects an ascent to take (elevators converged in 43).
projected_steps <- 40

# An inner solve that ends at a relative residual above this has diverged.
diverged_residual <- 10L

# Adam's constants (Kingma and Ba 2015).
adam_beta <- c(0.9, 0.999)
adam_epsilon <- 1e-8

# Maximise the log marginal likelihood of all of (x, y) over the free log
# hyperparameters of `space` (parameter_space()), from `start` (log
# hyperparameters, all d + 2 of them).  Returns list(theta, solution (the
# last solve: alpha, prior, noise_base), record).
estimate_iterative <- function(x, y, family, space, start, control, threads,
                               weights = NULL, auto_seconds = Inf) {
  start_time <- proc.time()[["elapsed"]]
  n <- nrow(x)
  d <- length(start) - 2L # the length scales
  free <- space$free
  theta <- start
  prior <- draw_prior(theta_kernel(family, theta), ncol(x), control$features,
                      control$probes)
  noise_base <- matrix(.Call(C_rng_normal, new_seed(), "noise",
                             as.numeric(n) * control$probes), n, control$probes)
  inner <- inner_control(control, theta_kernel(family, theta))

  steps <- control$max_steps
  path <- matrix(NA_real_, steps, d + 2L)
  gradients <- matrix(NA_real_, steps, d + 2L)
  iterations <- excluded <- integer(steps)
  residuals <- numeric(steps)
  short <- logical(steps)
  inner_seconds <- gradient_seconds <- setup_seconds <- numeric(steps)
  m1 <- m2 <- numeric(length(free))
  alpha <- previous <- NULL
  reason <- "step limit"
  for (t in progress_along(seq_len(steps), "Estimating hyperparameters on all the data")) {
    step_start <- proc.time()[["elapsed"]]
    kernel <- theta_kernel(family, theta)
    noise <- exp(theta[[d + 2L]])
    setup_start <- proc.time()[["elapsed"]]
    problem <- new_problem(x, y, kernel, if (is.null(weights)) noise else noise / weights,
                           prior, threads, noise_base)
    problem$alpha0 <- warm_start_alpha(control$warm_start, alpha, previous, theta,
                                       path[seq_len(t - 1L), , drop = FALSE])
    setup_seconds[t] <- proc.time()[["elapsed"]] - setup_start
    sol <- run_solver(control$solver, problem, inner, threads)
    previous <- alpha
    alpha <- sol$alpha
    gradient_start <- proc.time()[["elapsed"]]
    bad <- implausible_probes(alpha, problem$noise)
    excluded[t] <- sum(bad)
    if (all(bad)) {
      sddgp_abort(sprintf(paste(
        "Hyperparameter estimation failed at outer step %d: the solutions of all %d",
        "probes are far larger than those of exact prior draws can be, as the noise",
        "is small against the signal. Raise `features` in iterative_control(), or",
        "use estimation_control(method = \"subset\")."), t, length(bad)),
        class = "sddgp_error_divergence", iterations = t)
    }
    res <- .Call(C_mll_pathwise, problem$xs, alpha[, c(TRUE, !bad), drop = FALSE],
                 kernel_spec(kernel), noise, weights, threads)
    gradient_seconds[t] <- proc.time()[["elapsed"]] - gradient_start
    if (res$interrupted) {
      signal_interrupt("Hyperparameter estimation was interrupted by the user")
    }
    path[t, ] <- theta
    gradients[t, ] <- res$gradient
    iterations[t] <- sol$iterations
    residuals[t] <- inner_residual(sol)
    short[t] <- sol$status != "tolerance"
    inner_seconds[t] <- sol$seconds
    # Solves stopped by a budget carry their error into the next step; when
    # the hyperparameters move faster than the solves catch up, the error
    # can grow step by step far past that of no solve (zero, at relative
    # residual 1), and the gradients say nothing.  (Below the bar, capped
    # solves were seen to hover about 1 for steps and recover.)
    if (residuals[t] > diverged_residual) {
      sddgp_abort(sprintf(paste(
        "Hyperparameter estimation diverged at outer step %d: its inner solves ended at",
        "relative residual %s after %d %s, over %d times that of no solve at all. Leave",
        "`inner_iterations` in iterative_control() at NULL or raise it, or use",
        "estimation_control(method = \"subset\")."), t, format(signif(residuals[t], 3)),
        sol$iterations, if (control$solver == "cg") "CG iterations" else "SDD steps",
        diverged_residual),
        class = "sddgp_error_divergence", iterations = t)
    }
    if (t == 1L) {
      passes <- if (control$solver == "cg") sol$iterations else
        sol$iterations * min(inner$batch_size / n, 1)
      projected <- projected_steps * projected_step_seconds(n, d, control$probes, passes)
      if (projected > auto_seconds) {
        reason <- "over budget"
        break
      }
    }
    g <- res$gradient[free]
    if (!all(is.finite(g))) {
      sddgp_abort(sprintf(paste(
        "Hyperparameter estimation diverged at outer step %d: the gradient of",
        "the marginal likelihood is not finite. Use estimation_control(method =",
        "\"subset\"), or give `noise`."), t), class = "sddgp_error_divergence",
        iterations = t)
    }
    # Adam, ascending; a step never leaves the search box.
    m1 <- adam_beta[1L] * m1 + (1 - adam_beta[1L]) * g
    m2 <- adam_beta[2L] * m2 + (1 - adam_beta[2L]) * g^2
    direction <- (m1 / (1 - adam_beta[1L]^t)) /
      (sqrt(m2 / (1 - adam_beta[2L]^t)) + adam_epsilon)
    # The probes are fixed, so the estimated gradient is a smooth function
    # of theta, whose zero Adam circles once the likelihood stops rising.
    kept <- seq_len(t)
    if (ascent_levelled(likelihood_gain(path[kept, , drop = FALSE],
                                        gradients[kept, , drop = FALSE]), t, control, n)) {
      reason <- "converged"
      break
    }
    if (t == steps) break
    now <- proc.time()[["elapsed"]]
    if (now - start_time + (now - step_start) > control$time_limit) {
      reason <- "time limit"
      break
    }
    theta[free] <- pmin(pmax(theta[free] + control$learning_rate * direction,
                             space$lower[free]), space$upper[free])
  }
  kept <- seq_len(t)
  if (reason != "over budget") {
    warn_ascent(reason, t, excluded[kept], short[kept], residuals[kept], control)
  }
  # The last step's implausible probes are no posterior samples either.
  keep <- which(!bad)
  list(theta = theta,
       solution = list(alpha = alpha[, c(1L, 1L + keep), drop = FALSE],
                       prior = prior_columns(prior, keep),
                       noise_base = noise_base[, keep, drop = FALSE]),
       record = list(steps = t, stopped = reason,
                     path = path[kept, , drop = FALSE],
                     gradient = gradients[kept, , drop = FALSE] / n,
                     log_marginal_likelihood_gain =
                       likelihood_gain(path[kept, , drop = FALSE],
                                       gradients[kept, , drop = FALSE]),
                     inner_iterations = iterations[kept],
                     inner_residuals = residuals[kept],
                     excluded_probes = excluded[kept],
                     inner_seconds = inner_seconds[kept],
                     gradient_seconds = gradient_seconds[kept],
                     setup_seconds = setup_seconds[kept],
                     projected_seconds = projected, auto_seconds = auto_seconds,
                     seconds = proc.time()[["elapsed"]] - start_time))
}

# Whether the ascent has levelled off at step t: the log marginal
# likelihood's estimated gain over the last `window` steps, from `gain`
# (likelihood_gain() along the path), is below `tolerance` per point.
# inst/benchmarks/estimation_path.R applies it to paths run without it.
ascent_levelled <- function(gain, t, control, n) {
  t > control$window && abs(gain[t] - gain[t - control$window]) < control$tolerance * n
}

# The warnings of an ascent that ended for `reason` after t steps, from
# its record: probes left out (`excluded`), inner solves stopped `short`
# of their tolerance at relative `residuals`, and the step limit.
warn_ascent <- function(reason, t, excluded, short, residuals, control) {
  if (any(excluded > 0L)) {
    sddgp_warn(sprintf(paste(
      "In %d of the %d steps of hyperparameter estimation, %d probe solutions in all",
      "were far larger than those of exact prior draws can be (the random-feature",
      "prior draws err where the noise is small against the signal) and were left",
      "out of the gradient: raise `features` or `probes` in iterative_control(), or",
      "use estimation_control(method = \"subset\")."),
      sum(excluded > 0L), t, sum(excluded)),
      class = "sddgp_warning_estimation_probes", steps = which(excluded > 0L))
  }
  if (any(short)) {
    sddgp_warn(sprintf(paste(
      "The inner solves of %d of the %d steps of hyperparameter estimation stopped at",
      "their budget short of the relative residual %s (the largest of their targets'",
      "residual and their probes' root mean square one: %s), so the gradients of",
      "those steps are biased: raise `inner_iterations` in iterative_control()."),
      sum(short), t, format(control$inner_tolerance),
      format(signif(max(residuals[short]), 3))),
      class = c("sddgp_warning_estimation_not_converged", "sddgp_warning_not_converged"),
      steps = which(short))
  }
  if (reason %in% c("step limit", "time limit")) {
    sddgp_warn(sprintf(paste(
      "Hyperparameter estimation on all the data stopped at its %s",
      "(%s) before the log marginal likelihood levelled off: raise %s in",
      "iterative_control()."), reason,
      if (reason == "step limit") sprintf("%d steps", t) else
        sprintf("%s s, after %d step%s", format(control$time_limit), t,
                if (t == 1L) "" else "s"),
      if (reason == "step limit") "`max_steps` or `learning_rate`" else "`time_limit`"),
      class = c("sddgp_warning_estimation_not_converged", "sddgp_warning_not_converged"),
      steps = t)
  }
}

# The start of an outer step's solves at `theta`, from the last two steps'
# solutions `alpha` and `previous` at the last rows of `path`: "previous"
# the last solution; "extrapolated" adds the change between the two, times
# how far the new step goes along the last one (a first-order prediction
# along the path: Adam's momentum keeps consecutive steps nearly parallel).
# The targets' system needs it: unlike the probes, whose right-hand sides
# move with the kernel, its solution moves with the kernel's change alone
# (estimation_warm.R measures both).  NULL: the solver's own start.
warm_start_alpha <- function(form, alpha, previous, theta, path) {
  if (form == "none" || is.null(alpha)) return(NULL)
  if (form == "previous" || is.null(previous)) return(alpha)
  t <- nrow(path)
  last <- path[t, ] - path[t - 1L, ]
  along <- sum((theta - path[t, ]) * last) / sum(last^2)
  if (!is.finite(along)) return(alpha)
  alpha + along * (alpha - previous)
}

# Which probes' solutions (the columns of `sols` after the targets') no
# exact prior draw could give.  For z ~ N(0, H), H = K + N with N the
# noise variances, v = H^{-1} z has v'Nv a sum of chi-square(1) variables
# with weights the eigenvalues of N^(1/2) H^{-1} N^(1/2), all below 1: so
# at most chi-square(n), which exceeds n + 10 sd (sd = sqrt(2n)) with
# probability below 1e-8.  A random-feature draw's error in the directions
# where N is small against K is amplified by H^{-1} far beyond that
# (inst/benchmarks/pathwise_probes.R), and so is its term of the gradient.
implausible_probes <- function(sols, noise) {
  n <- nrow(sols)
  unname(colSums(noise * sols[, -1L, drop = FALSE]^2) > n + 10 * sqrt(2 * n))
}

# The relative residual at which an inner solve ended: the larger of the
# targets' system's and the probes' root mean square; its tolerance, which
# bounds it, for a warm start that needed no iteration.
inner_residual <- function(sol) {
  if (nrow(sol$trace) == 0L) return(sol$tolerance)
  last <- sol$trace[nrow(sol$trace), , drop = FALSE]
  max(last$residual, last$residual_samples, na.rm = TRUE)
}

# The settings of the inner solves with kernels of `kernel`'s family: the
# control's solver to its relative residual `inner_tolerance`, CG with the
# control's preconditioner (cg_preconditioner()).
inner_control <- function(control, kernel) {
  args <- list(tolerance = control$inner_tolerance, features = control$features,
               precision = control$precision)
  budget <- control$inner_iterations
  if (control$solver == "cg") {
    preconditioner <- cg_preconditioner(control$preconditioner, kernel, "estimation")
    do.call(cg_control, c(args, list(preconditioner = preconditioner),
                          if (!is.null(budget)) list(max_iterations = budget)))
  } else {
    do.call(sdd_control, c(args, if (!is.null(budget)) list(iterations = budget)))
  }
}

# The log marginal likelihood's change along the path from its first point,
# by the trapezoidal rule over the estimated gradients: its exact value at
# n points would need log det(H), which no iterative solve gives.
likelihood_gain <- function(path, gradients) {
  if (nrow(path) < 2L) return(0)
  steps <- diff(path)
  mean_gradient <- (gradients[-1L, , drop = FALSE] +
                      gradients[-nrow(gradients), , drop = FALSE]) / 2
  c(0, cumsum(rowSums(steps * mean_gradient)))
}

#' Settings of hyperparameter estimation on all the data
#'
#' The settings of `estimation_control(method = "iterative")`: gradient
#' ascent (Adam) on the log marginal likelihood of all n points, with the
#' pathwise gradient estimator and warm-started iterative solves (see
#' [estimation_control()], section "Estimation on all the data").
#'
#' @param probes Number of probe vectors (prior function draws plus noise)
#'   of the trace estimate; their solutions become the fit's first
#'   `probes` posterior samples.
#' @param solver Inner solver of the linear systems: `"cg"` (conjugate
#'   gradients, [cg_control()], with `preconditioner`) or
#'   `"sdd"` ([sdd_control()]).
#' @param preconditioner Preconditioner of the inner CG solves
#'   ([cg_control()]): `"vecchia"` (100 neighbours), `"pivoted_cholesky"`
#'   (rank 100), or `"auto"`: Vecchia's, except for the [tanimoto()] kernel,
#'   which has no distances to find neighbours by. On split 0 of pol
#'   (13,500 points), the first four steps' solves of the targets and 16
#'   probes took 22, 23, 20 and 18 CG iterations with Vecchia's against
#'   375, 312, 250 and 264 with the pivoted Cholesky one, and the two
#'   paths agreed to 0.01 in every log hyperparameter
#'   (`inst/benchmarks/estimation_preconditioner.R`).
#' @param inner_tolerance Relative residual to which every outer step
#'   solves its systems.
#' @param inner_iterations Iteration budget of every inner solve (CG
#'   iterations or SDD steps); `NULL` for the solver's default.
#' @param warm_start Where every outer step's solves start: `"previous"`
#'   from the previous step's solutions; `"extrapolated"` from those plus
#'   their change over the last step, scaled to the new step (a first-order
#'   prediction along the path); `"none"` from the inner solver's own start
#'   (for comparison). On 8 synthetic ascents (`inst/benchmarks/
#'   estimation_warm.R --part=ascent`) the previous solutions took fewer
#'   inner iterations with the stopping rule and ended nearer the maximum
#'   where the noise is small.
#' @param learning_rate Adam's step size on the log hyperparameters.
#' @param max_steps Most outer (Adam) steps.
#' @param time_limit Seconds the ascent may take (wall time; the subset
#'   estimate that starts it and the fit after it not counted): no step
#'   starts that would end past them if it took as long as the last one,
#'   and the ascent stops, with a warning, at the hyperparameters reached.
#'   `Inf` for no limit. At least one step runs.
#' @param window,tolerance The ascent stops once the log marginal
#'   likelihood, as estimated along the path (by the trapezoidal rule over
#'   the estimated gradients), changed by less than `tolerance` per point
#'   over the last `window` steps. That estimate is only as good as the
#'   probes: where later steps gain less than its Monte-Carlo error (about
#'   a nat with 16 probes on 500 points), the step it stops at is partly
#'   chance. On 8 synthetic problems of 500 points
#'   (`inst/benchmarks/estimation_path.R`) it stopped after 26 to 105
#'   steps, at most 1.2 nats short of the exact maximum; if it does not
#'   stop, the step limit ends the ascent with a warning.
#' @param features Number of random Fourier features of the probes' prior
#'   draws.
#' @param precision Precision of the kernel values in the inner solves,
#'   `"double"` or `"single"` (as in [cg_control()]: float kernel values,
#'   double sums); the gradient's pass over the pairs stays in double.
#'   Where the kernel matrix is not cached (above 15,811 points with
#'   [cg_control()]'s default `cache_limit`), single precision made a CG
#'   iteration of the targets and 16 probes 1.45 times faster on 10,000
#'   points of protein (`inst/benchmarks/estimation_precision.R`, one
#'   thread), and its solutions differed from double precision's by
#'   0.0072 (relative), less than the default `inner_tolerance` lets
#'   either err. The default stays `"double"`, since the error of a float
#'   kernel value, about 1e-6 of the kernel variance (section Single
#'   precision of [sdd_control()]), comes near the noise where the noise
#'   is tiny against the kernel variance.
#' @return An object of class `sddgp_iterative_control`, a list of the
#'   settings.
#' @seealso [estimation_control()]
#' @examples
#' iterative_control(probes = 8, solver = "sdd")
#' @export
iterative_control <- function(probes = 16, solver = c("cg", "sdd"),
                              preconditioner = c("auto", "vecchia", "pivoted_cholesky"),
                              inner_tolerance = 0.01, inner_iterations = NULL,
                              warm_start = c("previous", "extrapolated", "none"),
                              learning_rate = 0.1, max_steps = 100, time_limit = Inf,
                              window = 5, tolerance = 1e-5,
                              features = 2000, precision = c("double", "single")) {
  check_number(probes, "probes", lower = 1, upper = 1e4, integer = TRUE)
  solver <- choose_one(solver, "solver", c("cg", "sdd"))
  preconditioner <- choose_one(preconditioner, "preconditioner",
                               c("auto", "vecchia", "pivoted_cholesky"))
  check_number(inner_tolerance, "inner_tolerance", lower = 0, upper = 1,
               lower_open = TRUE, upper_open = TRUE)
  if (!is.null(inner_iterations)) {
    check_number(inner_iterations, "inner_iterations", lower = 1,
                 upper = .Machine$integer.max, integer = TRUE)
  }
  warm_start <- choose_one(warm_start, "warm_start", c("previous", "extrapolated", "none"))
  check_number(learning_rate, "learning_rate", lower = 0, upper = 10,
               lower_open = TRUE)
  check_number(max_steps, "max_steps", lower = 1, upper = 1e5, integer = TRUE)
  time_limit <- check_time_limit(time_limit)
  check_number(window, "window", lower = 1, upper = 1e5, integer = TRUE)
  check_number(tolerance, "tolerance", lower = 0)
  check_number(features, "features", lower = 1, upper = 1e6, integer = TRUE)
  precision <- choose_one(precision, "precision", c("double", "single"))
  structure(list(probes = as.integer(probes), solver = solver,
                 preconditioner = preconditioner,
                 inner_tolerance = inner_tolerance,
                 inner_iterations = if (!is.null(inner_iterations))
                   as.integer(inner_iterations),
                 warm_start = warm_start,
                 learning_rate = learning_rate, max_steps = as.integer(max_steps),
                 time_limit = time_limit, window = as.integer(window),
                 tolerance = tolerance,
                 features = as.integer(features), precision = precision),
            class = "sddgp_iterative_control")
}

#' @export
print.sddgp_iterative_control <- function(x, ...) {
  cat("Settings of the exact ascent on all the data\n")
  cat(sprintf("  %d probes, inner solver %s%s to relative residual %s%s, warm start %s\n",
              x$probes, x$solver,
              if (x$solver == "cg") sprintf(" (%s preconditioner)", x$preconditioner) else "",
              format(x$inner_tolerance),
              if (x$precision == "single") " in single precision" else "",
              x$warm_start))
  cat(sprintf("  Adam: learning rate %s, at most %d steps%s, tolerance %s per point over %d steps\n",
              format(x$learning_rate), x$max_steps,
              if (is.finite(x$time_limit)) sprintf(" and %s s", format(x$time_limit)) else "",
              format(x$tolerance), x$window))
  invisible(x)
}
