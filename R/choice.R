# gp_sdd()'s choice of solver when neither `solver` nor `control` is
# given (?gp_sdd, section "Choice of solver").  The exact solver gives the
# exact posterior; SDD and CG, run to their default tolerance
# (solve_tolerance()), give one whose predictions are within a tenth (SDD)
# or a twentieth (CG) of a noise standard deviation of it.  Which is fastest depends on the
# conditioning of K + noise I, which no cheap estimate predicts reliably,
# so the two iterative solvers run in turn within one budget, each from
# the other's iterate: first CG where it has Vecchia's preconditioner (faster
# than SDD on every case of inst/benchmarks/defaults.R), else (the tanimoto() kernel)
# SDD, giving up early when it falls too slowly.  Up to cholesky_max_n
# points the budget is what the exact solve costs, and the exact solver
# runs if neither made it: at worst twice the exact solve.  Beyond, the
# budget is twice SDD's default run, and the last iterate stands (the fit
# warns) if neither made it.  Budgets come from operation counts and fixed
# costs per operation (not from timings of this run), so the choice, like
# every result, is the same for any thread count.

# Seconds per operation on one core, as inst/benchmarks/defaults.R
# --part=costs measures them (what matters is their ratios): a
# floating-point operation of the exact solver's blocked Cholesky with the
# reference BLAS and with an optimised one (OpenBLAS with its SkylakeX
# kernels: 15000 points in 35 s on one core, blas.csv), a kernel value
# computed (plus `kernel_value_per_dim` per input dimension), a kernel
# value read from the cache, a floating-point operation of the Vecchia
# factor's small Cholesky factorisations (the package's own loops) and a
# candidate of its nearest-neighbour search (plus `kernel_value_per_dim`
# per dimension, for its distance).
operation_seconds <- list(
  flop = c(reference = 4.1e-10, optimised = 3.0e-11),
  kernel_value = 1.8e-9, kernel_value_per_dim = 7.0e-11,
  cached_value = 9.1e-10, plain_flop = 4.3e-10, neighbour_candidate = 1.3e-8)

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

# Predicted seconds on one core of CG's preconditioner `preconditioner`
# (cg_preconditioner()) of `control` on n points: Vecchia's searches the
# earlier points of its order for every point's neighbours and factorises
# their kernel matrix (src/vecchia.c); the pivoted Cholesky factor
# computes `rank` columns of K and factorises their Nystrom approximation
# (src/pivchol.c, src/nystrom.c).
cg_setup_cost <- function(n, d, control, preconditioner) {
  n <- as.numeric(n)
  ops <- operation_seconds
  value <- ops$kernel_value + d * ops$kernel_value_per_dim
  if (preconditioner == "vecchia") {
    m <- min(control$neighbours, max(n - 1, 1))
    return(n * (n / 2 * (ops$neighbour_candidate + d * ops$kernel_value_per_dim) +
                  (m + 1)^2 * value + m^3 / 3 * ops$plain_flop))
  }
  r <- min(control$rank, n)
  n * (r * value + r^2 * ops$plain_flop)
}

# SDD is not tried with fewer steps than this (or its default run's) left
# in the budget.
min_trial_steps <- 1000L

# CG is not tried with fewer iterations than this left in the budget.
min_cg_iterations <- 10L

# Solves `problem` (of fit `fit`) with the solver chosen as above.  Returns
# the solver's result with `solver`, `control` and `choice` (the reason,
# and the iterations, final relative residual and seconds of the SDD and
# CG runs made) added.  `exact_max` (the most points the exact solver
# takes), `sdd` (SDD's default run) and `cg` (CG's settings but its
# budget) are arguments so that the tests reach every path cheaply.
solve_automatic <- function(fit, problem, threads, exact_max = cholesky_max_n,
                            sdd = sdd_control(),
                            cg = cg_control(features = sdd$features)) {
  n <- fit$n
  dims <- cost_dims(fit)
  preconditioner <- cg_preconditioner(cg$preconditioner, fit$kernel)
  order <- if (preconditioner == "vecchia") c("cg", "sdd") else c("sdd", "cg")
  # A step's or iteration's work, a solver's fixed work, and a run's of
  # `iterations`; and the least run worth trying.
  step <- c(sdd = sdd_step_cost(n, dims, sdd), cg = cg_iteration_cost(n, dims, cg))
  setup <- c(sdd = 0, cg = cg_setup_cost(n, dims, cg, preconditioner))
  cost <- function(solver, iterations) setup[[solver]] + iterations * step[[solver]]
  least <- c(sdd = min(min_trial_steps, sdd$iterations), cg = min_cg_iterations)
  use <- function(solver, control, sol, reason, runs = NULL) {
    c(sol, list(solver = solver, control = control,
                choice = c(list(reason = paste("Solver chosen automatically:", reason)), runs)))
  }
  exact <- cholesky_control(features = sdd$features)
  if (n <= exact_max) {
    budget <- exact_cost(n, dims, ncol(problem$rhs))
    if (budget < cost(order[1L], least[[order[1L]]])) {
      return(use("cholesky", exact, run_solver("cholesky", problem, exact, threads),
                 sprintf("exact, as it costs less than %s.", if (order[1L] == "sdd")
                   sprintf("%d SDD steps", least[["sdd"]]) else
                     sprintf("CG's preconditioner and %d iterations", min_cg_iterations))))
    }
    budget_label <- "what the exact solve costs"
  } else {
    budget <- 2 * cost("sdd", sdd$iterations)
    budget_label <- sprintf("twice what SDD's default %s steps cost",
                            format(sdd$iterations, big.mark = ","))
  }

  runs <- list()
  why <- character()
  last <- NULL
  spent <- 0
  for (solver in order) {
    noun <- if (solver == "sdd") "steps" else "iterations"
    name <- toupper(solver)
    allowed <- floor((budget - spent - cost(solver, 0)) / step[[solver]])
    if (solver == "sdd") allowed <- min(allowed, sdd$iterations)
    if (allowed < least[[solver]]) {
      why <- c(why, sprintf("too little of the budget was left for %s", name))
      next
    }
    if (solver == "sdd") {
      # SDD's default step budget at most, with the averaging of its default
      # run.  Within the exact solver's reach it gives up once its residuals
      # seem to fall too slowly to make it (sdd_stalled() in src/sdd.c): a
      # heuristic, so not a setting of sdd_control(); giving up wrongly
      # costs time, not accuracy.
      control <- sdd_control(iterations = allowed,
                             averaging_rate = min(1, 100 / sdd$iterations))
      if (n <= exact_max) control$stop_stalled <- TRUE
    } else {
      control <- cg
      control$max_iterations <- as.integer(min(.Machine$integer.max, allowed))
    }
    start <- problem
    if (!is.null(last) && all(is.finite(last$alpha))) start$alpha0 <- last$alpha
    sol <- tryCatch(run_solver(solver, start, control, threads),
                    sddgp_error_divergence = function(e) e)
    of <- sprintf("of the %s %s the budget allowed", format(allowed, big.mark = ","), noun)
    if (inherits(sol, "sddgp_error_divergence")) {
      spent <- spent + cost(solver, sol$iterations)
      why <- c(why, sprintf("%s diverged after %s %s", name,
                            format(sol$iterations, big.mark = ","), of))
      next
    }
    spent <- spent + cost(solver, sol$iterations)
    runs[paste0(solver, c("_iterations", "_residual", "_seconds"))] <-
      list(sol$iterations, final_residual(sol), sol$seconds)
    if (sol$status == "tolerance") {
      control$stop_stalled <- NULL  # simulate() runs the kept settings to the end
      after <- if (length(why)) sprintf(", after %s", paste(why, collapse = " and ")) else ""
      return(use(solver, control, sol, sprintf(
        "%s, which reached its tolerance in %s %s%s; the budget is %s.", name,
        format(sol$iterations, big.mark = ","), of, after, budget_label), runs))
    }
    why <- c(why, sprintf("%s %s its tolerance %s (relative residual %s after %s %s, %.1f s)",
                          name, if (sol$status == "stalled") "seemed too slow to reach" else
                            "did not reach", format(signif(sol$tolerance, 3)),
                          format(runs[[paste0(solver, "_residual")]], digits = 3),
                          format(sol$iterations, big.mark = ","), of, sol$seconds))
    last <- sol
    last_solver <- solver
    last_control <- control
  }
  because <- sprintf("%s; the budget is %s", paste(why, collapse = " and "), budget_label)
  if (n <= exact_max) {
    return(use("cholesky", exact, run_solver("cholesky", problem, exact, threads),
               sprintf("exact, as %s.", because), runs))
  }
  if (is.null(last)) {
    sddgp_abort(sprintf(paste("No iterative solver gave an iterate, as %s: K + noise * I",
                              "is not numerically positive definite. Increase `noise` or",
                              "check the data."), because),
                class = "sddgp_error_divergence", iterations = 0L)
  }
  # Neither reached its tolerance: the last iterate stands, and the fit warns.
  last_control$stop_stalled <- NULL
  use(last_solver, last_control, last,
      sprintf("%s's last iterate, as %s.", toupper(last_solver), because), runs)
}
