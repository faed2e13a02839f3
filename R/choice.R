# gp_sdd()'s choice of solver when neither `solver` nor `control` is
# given (?gp_sdd, section "Choice of solver").  The exact solver gives the
# exact posterior; SDD and CG, run to their default tolerance
# (solve_tolerance()), give one whose predictions are within a tenth of a
# noise standard deviation of it.  Which is fastest depends on the
# conditioning of K + noise I, which no cheap estimate predicts reliably,
# so they run in turn within one budget: up to cholesky_max_n points, as
# much as the exact solve costs, SDD first (giving up early when it falls
# too slowly), then CG (its "auto" preconditioner) from SDD's iterate for
# what is left, then, if neither reached its tolerance, the exact solver;
# at worst twice the exact solve.  Beyond, SDD's default run, then CG for as much again,
# whose iterate stands (and the fit warns) if it too falls short.  Budgets
# come from operation counts and fixed costs per operation (not from
# timings of this run), so the choice, like every result, is the same for
# any thread count.

# Seconds per operation on one core, as inst/benchmarks/defaults.R
# --part=costs measures them (what matters is their ratios): a
# floating-point operation of the exact solver's blocked Cholesky with the
# reference BLAS and with an optimised one (OpenBLAS with its SkylakeX
# kernels: 15000 points in 35 s on one core, blas.csv), a kernel value
# computed (plus `kernel_value_per_dim` per input dimension) and a kernel
# value read from the cache.
operation_seconds <- list(
  flop = c(reference = 3.9e-10, optimised = 3.0e-11),
  kernel_value = 2.1e-9, kernel_value_per_dim = 6.5e-11,
  cached_value = 8.6e-10)

# The BLAS and LAPACK libraries R runs on, as it reports them.
blas_libraries <- function() paste(extSoftVersion()[["BLAS"]], La_library())

# Whether R's BLAS is an optimised one (OpenBLAS, MKL, BLIS, ATLAS,
# Accelerate, or one chosen through FlexiBLAS) rather than the reference
# BLAS, from the library R reports.
blas_kind <- function() {
  if (grepl("openblas|mkl|blis|atlas|accelerate|veclib|flexiblas", blas_libraries(),
            ignore.case = TRUE)) "optimised" else "reference"
}

# The dimensions by which the cost model counts the work of one kernel
# value of `fit`: its d, except for fingerprints, whose values the engine
# computes from what tanimoto_point_bytes() (src/tanimoto.c) counts: for
# bit-packed rows the 64-bit words (an AND and a popcount each, about a
# coordinate's work), for sparse counts the entries merged (both rows'),
# for dense counts all d columns.
cost_dims <- function(fit) {
  if (!is_tanimoto(fit$kernel)) return(fit$d)
  if (isTRUE(fit$kernel$binary)) return(ceiling(fit$d / 64))
  if (is_sparse_input(fit$x)) return(2 * length(fit$x@x) / max(fit$n, 1))
  fit$d
}

# Predicted seconds on one core of the exact solve of n points in d
# dimensions with nrhs right-hand sides: the kernel matrix's lower half,
# the factorisation and the triangular solves.
exact_cost <- function(n, d, nrhs, blas = blas_kind()) {
  n <- as.numeric(n)
  ops <- operation_seconds
  ops$flop[[blas]] * (n^3 / 3 + 2 * n^2 * nrhs) +
    (ops$kernel_value + d * ops$kernel_value_per_dim) * n^2 / 2
}

# Predicted seconds on one core of one kernel value of `control`'s run on
# n points: computed, or read from the cache.
kernel_value_cost <- function(n, d, control) {
  ops <- operation_seconds
  if (use_kernel_cache(control, n)) ops$cached_value else
    ops$kernel_value + d * ops$kernel_value_per_dim
}

# Predicted seconds on one core of one SDD step of `control` on n points,
# with its share of the residual probes.
sdd_step_cost <- function(n, d, control) {
  as.numeric(n) * kernel_value_cost(n, d, control) *
    (min(control$batch_size, n) + control$probe_size / control$check_every)
}

# Predicted seconds on one core of one CG iteration of `control` on n
# points: a product with all of K.
cg_iteration_cost <- function(n, d, control) {
  as.numeric(n)^2 * kernel_value_cost(n, d, control)
}

# Fewer SDD steps than this cost more than the exact solve: too few to be
# worth trying.
min_trial_steps <- 1000L

# CG is not tried with fewer iterations than this left in the budget.
min_cg_iterations <- 10L

# Solves `problem` (of fit `fit`) with the solver chosen as above.  Returns
# the solver's result with `solver`, `control` and `choice` (the reason,
# and the SDD and CG runs' iterations, residual and seconds when they ran)
# added.  `exact_max` (the most points the exact solver takes), `sdd`
# (SDD's default run) and `cg` (CG's settings but its budget) are arguments
# so that the tests reach every path cheaply.
solve_automatic <- function(fit, problem, threads, exact_max = cholesky_max_n,
                            sdd = sdd_control(),
                            cg = cg_control(features = sdd$features)) {
  n <- fit$n
  nrhs <- ncol(problem$rhs)
  dims <- cost_dims(fit)
  use <- function(solver, control, sol, reason, runs = NULL) {
    c(sol, list(solver = solver, control = control,
                choice = c(list(reason = paste("Solver chosen automatically:", reason)), runs)))
  }
  exact <- cholesky_control(features = sdd$features)
  if (n <= exact_max) {
    # The budget of the iterative solvers: what the exact solve costs.
    budget <- exact_cost(n, dims, nrhs)
    steps <- floor(budget / sdd_step_cost(n, dims, sdd))
    if (steps < min_trial_steps) {
      return(use("cholesky", exact, run_solver("cholesky", problem, exact, threads),
                 sprintf("exact, as it costs less than %d SDD steps.", min_trial_steps)))
    }
    budget_label <- "cost as much as the exact solve"
    # SDD's default step budget at most, with the averaging of its default
    # run.  It gives up once its residuals seem to fall too slowly to make it
    # (sdd_stalled() in src/sdd.c): a heuristic, so not a setting of
    # sdd_control(); giving up wrongly costs time, not accuracy.
    trial <- sdd_control(iterations = min(sdd$iterations, steps),
                         averaging_rate = min(1, 100 / sdd$iterations))
    trial$stop_stalled <- TRUE
  } else {
    # SDD's default run, as it always was beyond the exact solver's reach;
    # where it falls short, CG gets as much again.
    steps <- sdd$iterations
    budget <- steps * sdd_step_cost(n, dims, sdd)
    budget_label <- sprintf("cost as much as SDD's default %s steps",
                            format(steps, big.mark = ","))
    trial <- sdd
  }
  sol <- tryCatch(run_solver("sdd", problem, trial, threads),
                  sddgp_error_divergence = function(e) NULL)
  if (!is.null(sol) && sol$status == "tolerance") {
    trial$stop_stalled <- NULL  # simulate() runs the kept settings to the end
    return(use("sdd", trial, sol, sprintf(
      "SDD, which reached its tolerance in %d steps, fewer than the %s that %s.",
      sol$iterations, format(steps, big.mark = ","), budget_label)))
  }
  runs <- list(trial_iterations = sol$iterations %||% NA_integer_,
               trial_residual = if (is.null(sol)) NA_real_ else final_residual(sol),
               trial_seconds = sol$seconds %||% NA_real_)
  within <- sprintf("its tolerance %s within %s steps", format(signif(sol$tolerance %||% NA, 3)),
                    format(steps, big.mark = ","))
  sdd_why <- if (is.null(sol)) sprintf("diverged within %s steps", format(steps, big.mark = ",")) else
    if (sol$status == "stalled") sprintf(
      "seemed too slow to reach %s (relative residual %s after %s steps, %.1f s)", within,
      format(runs$trial_residual, digits = 3), format(sol$iterations, big.mark = ","), sol$seconds) else
    sprintf("did not reach %s (relative residual %s, %.1f s)", within,
            format(runs$trial_residual, digits = 3), sol$seconds)

  # Then preconditioned CG, from SDD's iterate, for what the budget has
  # left (beyond the exact solver's reach: a budget of its own).
  spent <- if (n <= exact_max && !is.null(sol)) sol$iterations * sdd_step_cost(n, dims, sdd) else 0
  cg$max_iterations <- as.integer(min(.Machine$integer.max,
                                      floor((budget - spent) / cg_iteration_cost(n, dims, cg))))
  cg_sol <- NULL
  if (cg$max_iterations >= min_cg_iterations) {
    start <- problem
    if (!is.null(sol) && all(is.finite(sol$alpha))) start$alpha0 <- sol$alpha
    cg_sol <- tryCatch(run_solver("cg", start, cg, threads),
                       sddgp_error_divergence = function(e) NULL)
  }
  if (!is.null(cg_sol)) {
    runs <- c(runs, list(cg_iterations = cg_sol$iterations,
                         cg_residual = final_residual(cg_sol),
                         cg_seconds = cg_sol$seconds))
  }
  cg_why <- if (is.null(cg_sol)) {
    if (cg$max_iterations < min_cg_iterations) "left too little of the budget for CG" else
      "CG broke down"
  } else sprintf("CG had not reached it after %s iterations (relative residual %s, %.1f s)",
                 format(cg_sol$iterations, big.mark = ","),
                 format(runs$cg_residual, digits = 3), cg_sol$seconds)
  if (!is.null(cg_sol) && (cg_sol$status == "tolerance" || n > exact_max)) {
    reason <- if (cg_sol$status == "tolerance") sprintf(
      "CG, which reached its tolerance in %s iterations, within the %s that %s, after SDD %s.",
      format(cg_sol$iterations, big.mark = ","), format(cg$max_iterations, big.mark = ","),
      budget_label, sdd_why) else
      sprintf("CG, from SDD's iterate, as SDD %s; %s.", sdd_why, cg_why)
    return(use("cg", cg, cg_sol, reason, runs))
  }
  if (n > exact_max) {
    # Neither reached the tolerance and CG broke down or had no budget:
    # SDD's run stands, and the fit warns.
    if (is.null(sol)) {
      sddgp_abort(sprintf(paste("SDD diverged within %s steps and %s: K + noise * I is",
                                "not numerically positive definite. Increase `noise` or",
                                "check the data."), format(steps, big.mark = ","), cg_why),
                  class = "sddgp_error_divergence", iterations = steps)
    }
    return(use("sdd", trial, sol, sprintf("SDD, as it %s and %s.", sdd_why, cg_why), runs))
  }
  use("cholesky", exact, run_solver("cholesky", problem, exact, threads),
      sprintf("exact, as SDD %s and %s.", sdd_why, cg_why), runs)
}
