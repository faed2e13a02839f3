# gp_sdd()'s choice of solver when neither `solver` nor `control` is
# given (?gp_sdd, section "Choice of solver").  The exact solver gives the
# exact posterior; SDD, run to its default tolerance (solve_tolerance()),
# gives one whose predictions are within a tenth of a noise standard
# deviation of it.  Which is faster depends on the conditioning of
# K + noise I, which no cheap estimate predicts reliably, so up to
# cholesky_max_n points SDD is given a number of steps that costs about as
# much as the exact solve: if it reaches its tolerance within them it is
# kept, else the exact solver runs.  At worst that costs twice the exact
# solve; at best a fraction of it.  The number of steps comes from operation
# counts and fixed costs per operation (not from timings of this run), so
# the choice, like every result, is the same for any thread count.

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

# Predicted seconds on one core of one SDD step of `control` on n points,
# with its share of the residual probes.
sdd_step_cost <- function(n, d, control) {
  ops <- operation_seconds
  value <- if (use_kernel_cache(control, n)) ops$cached_value else
    ops$kernel_value + d * ops$kernel_value_per_dim
  as.numeric(n) * value * (min(control$batch_size, n) + control$probe_size / control$check_every)
}

# Fewer SDD steps than this cost more than the exact solve: too few to be
# worth trying.
min_trial_steps <- 1000L

# Solves `problem` (of fit `fit`) with the solver chosen as above.  Returns
# the solver's result with `solver`, `control` and `choice` (the reason,
# and the SDD trial's steps, residual and seconds when there was one) added.
solve_automatic <- function(fit, problem, threads) {
  sdd <- sdd_control()
  n <- fit$n
  nrhs <- ncol(problem$rhs)
  use <- function(solver, control, sol, reason, trial = NULL) {
    c(sol, list(solver = solver, control = control,
                choice = c(list(reason = reason), trial)))
  }
  if (n > cholesky_max_n) {
    return(use("sdd", sdd, run_solver("sdd", problem, sdd, threads), sprintf(paste(
      "Solver chosen automatically: SDD, as the exact solver is limited to %d points."),
      cholesky_max_n)))
  }
  exact <- cholesky_control(features = sdd$features)
  dims <- cost_dims(fit)
  cost <- exact_cost(n, dims, nrhs)
  steps <- floor(cost / sdd_step_cost(n, dims, sdd))
  if (steps < min_trial_steps) {
    return(use("cholesky", exact, run_solver("cholesky", problem, exact, threads),
               sprintf(paste("Solver chosen automatically: exact, as it costs less than",
                             "%d SDD steps."), min_trial_steps)))
  }
  # SDD's default step budget at most, with the averaging of its default run.
  # It gives up once its residuals seem to fall too slowly to make it
  # (sdd_stalled() in src/sdd.c): a heuristic, so not a setting of
  # sdd_control(); giving up wrongly costs time, not accuracy.
  trial <- sdd_control(iterations = min(sdd$iterations, steps),
                       averaging_rate = min(1, 100 / sdd$iterations))
  trial$stop_stalled <- TRUE
  sol <- tryCatch(run_solver("sdd", problem, trial, threads),
                  sddgp_error_divergence = function(e) NULL)
  if (!is.null(sol) && sol$status == "tolerance") {
    trial$stop_stalled <- NULL  # simulate() runs the kept settings to the end
    return(use("sdd", trial, sol, sprintf(paste(
      "Solver chosen automatically: SDD, which reached its tolerance in %d steps,",
      "fewer than the %s that cost as much as the exact solve."),
      sol$iterations, format(steps, big.mark = ","))))
  }
  info <- if (is.null(sol)) list(trial_iterations = NA_integer_, trial_residual = NA_real_,
                                 trial_seconds = NA_real_) else
    list(trial_iterations = sol$iterations,
         trial_residual = sol$trace$residual[nrow(sol$trace)], trial_seconds = sol$seconds)
  budget <- if (steps < sdd$iterations) sprintf(
    "%s steps, which cost about as much as the exact solve", format(steps, big.mark = ",")) else
    sprintf("its default budget of %s steps", format(sdd$iterations, big.mark = ","))
  why <- if (is.null(sol)) sprintf("diverged within %s", budget) else
    sprintf("%s (relative residual %s after %s steps, %.1f s)",
            if (sol$status == "stalled") sprintf(
              "seemed too slow to reach its tolerance %s within %s",
              format(signif(sol$tolerance, 3)), budget) else sprintf(
              "had not reached its tolerance %s after %s",
              format(signif(sol$tolerance, 3)), budget),
            format(info$trial_residual, digits = 3),
            format(sol$iterations, big.mark = ","), sol$seconds)
  use("cholesky", exact, run_solver("cholesky", problem, exact, threads),
      sprintf("Solver chosen automatically: exact, as SDD %s.", why), info)
}
