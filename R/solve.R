# The solvers behind one API.  A solver `s` is two functions:
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

solvers <- c("sdd", "cholesky", "cg", "sgd", "svgp", "dsg", "cabcd")

solver_labels <- c(
  sdd = "stochastic dual descent",
  cholesky = "exact Cholesky solve",
  cg = "conjugate gradients, pivoted-Cholesky preconditioner",
  sgd = "stochastic gradient descent (Lin et al. 2023)",
  svgp = "sparse variational GP",
  dsg = "doubly stochastic functional gradients",
  cabcd = "Caratheodory block coordinate descent, random features"
)

solver_function <- function(solver, what) {
  name <- switch(what, control = paste0(solver, "_control"), solve = paste0("solve_", solver))
  get(name, envir = asNamespace("sddgp"), mode = "function")
}

# The problem a solver is given, in standardised units: inputs `x` (and
# `xs`, divided by the length scales), the kernel, one noise variance per
# observation, and the right-hand sides `rhs`: the targets y (unless NULL)
# followed by one column f0_s(X) + zeta_s per prior draw of `prior`
# (zeta_s ~ N(0, noise)), whose two parts are kept as `f0` and `zeta`.
new_problem <- function(x, y, kernel, noise, prior, threads) {
  n <- nrow(x)
  p <- list(x = x, xs = scale_inputs(x, kernel), kernel = kernel,
            noise = rep_len(as.numeric(noise), n), y = y, prior = prior,
            has_mean = !is.null(y))
  if (!is.null(prior)) {
    s <- ncol(prior$weights)
    p$f0 <- prior_values(prior, kernel, x, threads)
    p$zeta <- sqrt(p$noise) *
      matrix(.Call(C_rng_normal, new_seed(), "noise", as.numeric(n) * s), n, s)
  }
  p$rhs <- cbind(y, p$f0 + p$zeta, deparse.level = 0)
  p
}

run_solver <- function(solver, problem, control, threads, state = NULL) {
  start <- proc.time()[["elapsed"]]
  sol <- solver_function(solver, "solve")(problem, control, threads, state)
  sol$seconds <- proc.time()[["elapsed"]] - start
  sol
}

# The status of a C solver's run (codes of src/solver.h), or the classed
# condition a diverged, interrupted or out-of-memory run deserves.
# `advice` tells the user what to change when it diverged; `...` become
# fields of the divergence error.
solver_status <- function(res, solver, advice, ...) {
  status <- c("iterations", "tolerance", "diverged", "interrupted",
              "out of memory", "time limit")[res$status + 1L]
  label <- toupper(solver)
  if (status == "diverged") {
    sddgp_abort(sprintf("%s diverged after %d iterations: the iterates blew up. %s",
                        label, res$iterations, advice),
                class = "sddgp_error_divergence", iterations = res$iterations, ...)
  }
  if (status == "interrupted") {
    signal_interrupt(sprintf("%s interrupted by the user after %d iterations",
                             label, res$iterations))
  }
  if (status == "out of memory") {
    sddgp_abort(sprintf("%s could not allocate its working memory.", label),
                class = "sddgp_error_memory")
  }
  status
}

# A fit whose posterior mean's system ends with an estimated relative
# residual above this is far from converged: residual 1 is that of alpha = 0,
# which predicts the prior mean (the mean of y, standardised).  gp_sdd()
# warns, print() and summary() say so.  The one place to change it (a later
# issue ties it to accuracy); ?gp_sdd (Details) states its value.
not_converged_residual <- 0.5

# The solvers whose trace `residual` is the relative residual of the mean's
# system (of the normal equations, for cabcd), which tends to 0.  DSG's is
# the training fit's residual, which tends to the exact posterior's own.
residual_solvers <- c("sdd", "sgd", "cg", "cabcd")

far_from_converged <- function(fit) {
  fit$solver %in% residual_solvers && isTRUE(final_residual(fit) > not_converged_residual)
}

not_converged_note <- function(fit) {
  sprintf("far from converged: relative residual %s > %s (at 1, no better than the mean of y)",
          format(final_residual(fit), digits = 3), format(not_converged_residual))
}

warn_if_not_converged <- function(fit) {
  if (!far_from_converged(fit)) return(invisible(FALSE))
  why <- switch(fit$status,
    "time limit" = sprintf("its time limit of %s s", format(fit$control$time_limit)),
    tolerance = "its tolerance",
    "the end of its iteration budget")
  advice <- switch(fit$solver,
    cg = "more `max_iterations` in cg_control(), or solver = \"cholesky\"",
    cabcd = "more `iterations` in cabcd_control(), or solver = \"cg\" or \"cholesky\"",
    sprintf(paste("more `iterations` or a larger `time_limit` in %s_control(),",
                  "or solver = \"cg\" or \"cholesky\""), fit$solver))
  sddgp_warn(sprintf(paste(
    "%s stopped far from converged, at %s after %d iteration%s: the estimated",
    "relative residual of the posterior mean's system is %s, above the threshold",
    "%s (at 1, predictions are no better than the mean of y). Use %s."),
    toupper(fit$solver), why, fit$iterations, if (fit$iterations == 1L) "" else "s",
    format(final_residual(fit), digits = 3), format(not_converged_residual), advice),
    class = "sddgp_warning_not_converged", residual = final_residual(fit),
    threshold = not_converged_residual, status = fit$status)
  invisible(TRUE)
}

# Ctrl-C seen by a C solver (which returned cleanly, freeing its memory)
# becomes an interrupt condition, caught by tryCatch(interrupt = ) as R's own.
signal_interrupt <- function(message) {
  stop(structure(class = c("sddgp_interrupt", "interrupt", "condition"),
                 list(message = message, call = NULL)))
}

# The convergence trace of a C solver's result: the mean's residual and the
# root mean square over the sample systems', per recorded iteration.
solver_trace <- function(res, has_mean) {
  r <- res$trace_residuals
  samples <- if (has_mean) r[, -1L, drop = FALSE] else r
  data.frame(iteration = res$trace_iteration, seconds = res$trace_seconds,
             residual = if (has_mean) r[, 1L] else rep(NA_real_, nrow(r)),
             residual_samples = if (ncol(samples) > 0L) sqrt(rowMeans(samples^2)) else
               rep(NA_real_, nrow(r)))
}

empty_trace <- function() {
  data.frame(iteration = integer(), seconds = numeric(), residual = numeric(),
             residual_samples = numeric())
}

# A seed for the counter-based generator in C, drawn from R's generator so
# that set.seed() makes every fit reproducible.
new_seed <- function() floor(stats::runif(2L) * 2^32)

# ---- The exact solver -------------------------------------------------------

# Largest n for which the exact solver may form the n x n kernel matrix
# (8 n^2 bytes: 3.2 GB at 20000).
cholesky_max_n <- 20000L

#' Settings of the exact solver
#'
#' `solver = "cholesky"` forms the kernel matrix and solves by its Cholesky
#' factorisation: O(n^3) time and O(n^2) memory, so at most 20000 points. It
#' is the reference the iterative solvers are tested against.
#'
#' The factorisation and the solves work on blocks of 128 rows and columns,
#' spread over the fit's `threads` whatever BLAS R is linked to (the
#' reference BLAS has no threads of its own), with the same result for any
#' thread count; between blocks, and between slabs of columns while the
#' kernel matrix is built, the solver checks for Ctrl-C, so a long exact
#' fit can be interrupted.
#'
#' After factoring, the solver estimates the condition number of
#' \eqn{K + \lambda W^{-1}} (LAPACK's `dpocon`, \eqn{O(n^2)} work against
#' the factorisation's \eqn{O(n^3)}). Above \eqn{10^{12}} the solution has
#' lost digits that show in the posterior mean (with three copies of every
#' input, errors of a few millionths of the targets' standard deviation
#' there, and of 0.03 to 0.08 of it at \eqn{5 \times 10^{15}} to
#' \eqn{2 \times 10^{16}}, noise \eqn{10^{-14}}), and the fit
#' warns with class `sddgp_warning_ill_conditioned` (also `sddgp_warning`),
#' whose fields `condition_number`, `jitter` and `noise_factor` give the
#' estimate and the increase of `noise` that brings it to \eqn{10^{10}}.
#' Duplicated inputs with a small `noise` are the usual cause: merging them
#' (their mean target, with `weights` counting the copies) gives the same
#' posterior, well conditioned.
#'
#' @param features Random Fourier features of the prior draws behind
#'   posterior samples.
#' @return An object of class `sddgp_control`.
#' @examples
#' cholesky_control()
#' @export
cholesky_control <- function(features = 2000) {
  new_control("cholesky", list(), features)
}

solve_cholesky <- function(problem, control, threads, state) {
  res <- .Call(C_chol_solve, problem$xs, kernel_spec(problem$kernel), problem$noise,
               problem$rhs, threads)
  if (res$interrupted) signal_interrupt("The Cholesky factorisation was interrupted by the user")
  if (res$info != 0L) {
    sddgp_abort(paste(
      "The Cholesky factorisation of K + noise * I failed: the matrix is not",
      "numerically positive definite. Increase `noise` or check for",
      "duplicated inputs."), class = "sddgp_error_numerical")
  }
  check_conditioning(res$rcond, res$norm, problem$noise)
  list(alpha = res$alpha, iterations = 0L, status = "exact", trace = empty_trace())
}

# Reciprocal condition numbers (1-norm) of K + diag(noise) below which the
# exact solve warns, and that the jitter it suggests reaches.  The solution
# may lose log10(1 / rcond) of its 16 digits.  With three copies of 100
# inputs (targets differing between copies, sd 0.75), the posterior mean
# was off by 4e-6 at rcond 1e-12 and by 0.07 at 4e-17 (noise 1e-14); noise
# 0.01 on 1000 random points gives rcond 7e-5.
chol_rcond_warn <- 1e-12
chol_rcond_safe <- 1e-10

# Warn (class sddgp_warning_ill_conditioned) when the factored matrix is
# nearly singular, naming the noise that would make it safe: adding a
# jitter j to every diagonal entry lifts the smallest eigenvalue, about
# rcond * norm, by j and the norm by at most j.
check_conditioning <- function(rcond, norm, noise) {
  if (!is.finite(rcond) || rcond < 0 || rcond >= chol_rcond_warn) return(invisible())
  jitter <- (chol_rcond_safe - rcond) * norm / (1 - chol_rcond_safe)
  # Scaling `noise` by `factor` lifts every noise / weights entry by at least the jitter.
  factor <- 1 + jitter / min(noise)
  advice <- if (all(noise == noise[1L])) {
    sprintf("increase `noise` to at least %s (a jitter of %s)",
            format(signif(noise[1L] * factor, 2)), format(signif(jitter, 2)))
  } else {
    sprintf("multiply `noise` by at least %s (a jitter of %s on the noise variances)",
            format(signif(factor, 2)), format(signif(jitter, 2)))
  }
  sddgp_warn(sprintf(paste(
    "The exact solve is ill-conditioned: K + noise * I has estimated condition",
    "number %s (above %s), so the fit may have lost most of its digits. To bring",
    "it to %s, %s, or merge duplicated inputs (their mean target, with `weights`",
    "counting them)."),
    format(signif(1 / rcond, 2)), format(1 / chol_rcond_warn), format(1 / chol_rcond_safe),
    advice),
    class = "sddgp_warning_ill_conditioned", condition_number = 1 / rcond,
    jitter = jitter, noise_factor = factor)
}
