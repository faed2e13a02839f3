#' Settings of conjugate gradients
#'
#' `solver = "cg"` solves \eqn{(K + \lambda I) \alpha = b}{(K + lambda I) alpha = b} by preconditioned
#' conjugate gradients, the baseline of Lin, Padhy, Antoran et al. (2024).
#' The posterior mean and the posterior samples are solved together: every
#' iteration forms one product of the kernel matrix with the search
#' directions of all systems still running, and each system stops on its
#' own once its relative residual \eqn{\|b - (K + \lambda I)\alpha\| /
#' \|b\|}{||b - (K + lambda I)alpha|| / ||b||} is at most `tolerance` (the others continue, up to
#' `max_iterations`). Each iteration costs \eqn{O(n^2)}{O(n^2)} kernel evaluations
#' (or reads, with the cache), so CG suits moderate `n`.
#'
#' The default, `preconditioner = "auto"`, is Vecchia's for every kernel
#' but the Tanimoto one, which gets the pivoted Cholesky preconditioner.
#'
#' `preconditioner = "vecchia"` approximates \eqn{(K + \lambda I)^{-1}}{(K + lambda I)^-1}
#' itself by Vecchia's sparse inverse Cholesky factor (Katzfuss and
#' Guinness 2021): in a fixed pseudo-random order, each observation is
#' conditioned on its `neighbours` nearest earlier points (in the inputs
#' divided by the length scales), found with k-d trees (or, where the
#' inputs have so many effective dimensions that a tree would read most of
#' its points, by an exhaustive search of up to \eqn{n^2/2}{n^2/2} distances),
#' then \eqn{n}{n} factorisations of at most
#' `neighbours` x `neighbours` blocks, and \eqn{O(n \cdot \mathrm{neighbours})}{O(n * neighbours)}
#' per iteration and column. Where the noise is small and the kernel's
#' spectrum decays slowly (many inputs, short length scales), a low-rank
#' preconditioner leaves most of the ill-conditioning in place, while
#' Vecchia's captures the local structure: on split 0 of five UCI data sets
#' with their published hyperparameters (`inst/benchmarks/cg_preconditioner.R`),
#' the posterior mean's system needed 15, 32, 15, 24 and 40 iterations to a
#' relative residual of 0.01 with 50 neighbours, against 270, 44, 650, 362
#' and 120 with the pivoted Cholesky preconditioner of rank 100 and 322, 97,
#' 445, 380 and 305 with none (pol, elevators, bike, protein, keggdirected:
#' 13,500 to 43,945 points; bike's noise variance, 3.9e-5, is the
#' smallest). The default of 100 neighbours roughly halves those counts
#' again (9, 28, 8, 12 and 34) for a factor that takes seconds: an
#' iteration costs \eqn{n^2}{n^2} kernel values and the factor
#' \eqn{O(n \cdot \mathrm{neighbours}^3)}{O(n * neighbours^3)}, so more
#' neighbours pay most where the kernel matrix is not cached
#' (`inst/benchmarks/cg_preconditioner.R`, `cg_neighbours.csv`). The
#' Tanimoto kernel's inputs have no distances to find neighbours by, so
#' Vecchia's preconditioner is refused there.
#'
#' `preconditioner = "pivoted_cholesky"` is \eqn{P = \lambda I + L L^\top}{P = lambda I + L L^T}, with
#' \eqn{L}{L} the rank-`rank` greedy pivoted Cholesky factor of
#' \eqn{K + \mathrm{jitter} \cdot I}{K + jitter * I}, applied through the Woodbury identity
#' (one `rank` x `rank` factorisation per fit). The factor stops early once
#' the remaining trace is below 0.001 of the initial one. With the default
#' `jitter = 0`, \eqn{L L^\top}{L L^T} approximates \eqn{K}{K} and \eqn{P}{P} the system
#' itself. The reference implementation of Lin, Padhy, Antoran et al. uses
#' `jitter = 1`, so that its preconditioner approximates \eqn{K + I +
#' \lambda I}{K + I + lambda I}; where the noise variance is much smaller than 1 that can need
#' more iterations than no preconditioner at all (on the same five data
#' sets, 455, 87, 1435, 497 and 944 iterations against 270, 44, 650, 362
#' and 120 with `jitter = 0`).
#' `preconditioner = "none"` is plain CG.
#' A breakdown (a search direction of non-positive curvature, or non-finite
#' values) is reported as an error of class `sddgp_error_divergence`.
#'
#' @param tolerance Relative residual at which a system stops; 0 runs
#'   `max_iterations` iterations. `NULL` (the default) stops where the
#'   residual's root mean square is a twentieth of the noise standard
#'   deviation (SDD's default, a tenth, as [sdd_control()] (section
#'   Stopping) explains, halved: CG converges linearly, so that costs a few
#'   iterations), and continues while posterior samples need it. On 5000
#'   synthetic points with noise variances 1e-2, 1e-4 and 1e-5 of the
#'   signal's, a tenth left test RMSEs 1.0042, 0.9997 and 1.0123 times the
#'   exact GP's in 23, 20 and 18 iterations, a twentieth 1.0018, 0.9995 and
#'   1.0027 in 24, 22 and 21; at 1e-5 the estimated noise sat at its floor,
#'   above the test error, where a tenth of it weighs more
#'   (`inst/benchmarks/defaults.R --part=tolerance`). The reference
#'   implementation uses 0.01 for the mean and 0.001 for samples.
#' @param max_iterations Largest number of iterations (kernel products).
#' @param time_limit Seconds the solve may take (wall time, the
#'   preconditioner's construction included; estimation, the kernel cache
#'   and the prior draws not counted): no iteration starts that would end
#'   past them if it took as long as the last one, and the fit keeps the
#'   iterate reached, with status `"time limit"`; `Inf` for no limit. At
#'   least one iteration runs. CG's early iterates, which minimise the
#'   error in the norm of \eqn{K + \lambda I}{K + lambda I}, can predict far
#'   worse than zero (on 100,000 points in 8 dimensions, test RMSE 6.2
#'   after one iteration and 0.90 after 13, against 1.0 for zero and 0.20
#'   for SDD in the same 600 s: `inst/benchmarks/peers.R --budgets`), so
#'   for predictions within a short budget use SDD's `time_limit`. As for
#'   [sdd_control()], the pass over the kernel matrix at the end (fitted
#'   values, and the residuals that [predict.sddgp()] corrects by)
#'   runs under a finite limit only if it takes no longer than the limit,
#'   and such a fit is reproduced by its recorded `iterations`.
#' @param preconditioner `"auto"` (Vecchia's, or the pivoted Cholesky one
#'   for the Tanimoto kernel), `"vecchia"`, `"pivoted_cholesky"` or `"none"`
#'   (plain CG).
#' @param rank Largest rank of the pivoted Cholesky factor (capped at the
#'   number of data).
#' @param neighbours Number of nearest earlier points each observation is
#'   conditioned on by the Vecchia preconditioner (capped at the number of
#'   data less one, where the preconditioner is the exact inverse).
#' @param jitter Diagonal added to the kernel matrix before its pivoted
#'   Cholesky factorisation (see Details); at least 0. The reference
#'   implementation's value is 1.
#' @param features Random Fourier features of the prior draws behind
#'   posterior samples.
#' @param cache Keep the n x n kernel matrix in memory: `"auto"` does so when
#'   it fits in `cache_limit` bytes, `"always"` or `"never"` force the choice.
#'   A cached matrix is computed once; each iteration then reads it instead
#'   of evaluating the kernel, which is several times faster.
#' @param cache_limit Memory budget of the cached kernel matrix, in bytes.
#' @param precision `"double"` or `"single"`: the precision of the kernel
#'   values the solver multiplies by (section Single precision of
#'   [sdd_control()]).
#' @return An object of class `sddgp_control`.
#' @references Lin, J. A., Padhy, S., Antoran, J., Tripp, A., Terenin, A.,
#'   Szepesvari, C., Hernandez-Lobato, J. M. and Janz, D. (2024). Stochastic
#'   gradient descent for Gaussian processes done right. *ICLR*.
#'
#'   Harbrecht, H., Peters, M. and Schneider, R. (2012). On the low-rank
#'   approximation by the pivoted Cholesky decomposition. *Applied Numerical
#'   Mathematics*, 62(4), 428--440.
#'
#'   Katzfuss, M. and Guinness, J. (2021). A general framework for Vecchia
#'   approximations of Gaussian processes. *Statistical Science*, 36(1),
#'   124--141.
#' @examples
#' cg_control(tolerance = 1e-3, rank = 50)
#' cg_control(preconditioner = "none")
#' cg_control(preconditioner = "vecchia", neighbours = 30)
#' @export
cg_control <- function(tolerance = NULL, max_iterations = 1000, time_limit = Inf,
                       preconditioner = c("auto", "vecchia", "pivoted_cholesky", "none"),
                       rank = 100, jitter = 0, neighbours = 100, features = 2000,
                       cache = c("auto", "always", "never"), cache_limit = 2e9,
                       precision = c("double", "single")) {
  if (!is.null(tolerance)) {
    check_number(tolerance, "tolerance", lower = 0, upper = 1, upper_open = TRUE)
  }
  check_number(max_iterations, "max_iterations", lower = 1,
               upper = .Machine$integer.max, integer = TRUE)
  time_limit <- check_time_limit(time_limit)
  preconditioner <- choose_one(preconditioner, "preconditioner",
                               c("auto", "vecchia", "pivoted_cholesky", "none"))
  check_number(rank, "rank", lower = 1, upper = .Machine$integer.max, integer = TRUE)
  check_number(neighbours, "neighbours", lower = 1, upper = 1000, integer = TRUE)
  check_number(jitter, "jitter", lower = 0)
  new_control("cg", c(list(
    tolerance = tolerance, max_iterations = as.integer(max_iterations),
    time_limit = time_limit, preconditioner = preconditioner,
    rank = as.integer(rank), jitter = jitter, neighbours = as.integer(neighbours)),
    kernel_settings(cache, cache_limit, precision)), features)
}

# The preconditioner CG runs with for `kernel`: "auto" is Vecchia's, which
# needed fewer iterations than the pivoted Cholesky one on every UCI data
# set (cg_preconditioner.R), except for the Tanimoto kernel, whose inputs
# have no distances to find neighbours by.  `arg` names the setting in
# the error for an explicit Vecchia preconditioner with that kernel.
cg_preconditioner <- function(preconditioner, kernel, arg = "control") {
  if (!is_tanimoto(kernel)) {
    return(if (preconditioner == "auto") "vecchia" else preconditioner)
  }
  if (preconditioner == "vecchia") {
    abort_argument(arg, paste(
      "asks for the Vecchia preconditioner, whose neighbours are nearest in",
      "distance: the Tanimoto kernel has none; use preconditioner = \"auto\" or",
      "\"pivoted_cholesky\""))
  }
  if (preconditioner == "auto") "pivoted_cholesky" else preconditioner
}

# The fields of cg_options (src/cg.h) that R sets, and of the kernel
# operator, for n data, the relative residual `tolerance` and the resolved
# `preconditioner`.
cg_settings <- function(control, n, preconditioner, tolerance = control$tolerance,
                        alpha0 = NULL) {
  c(list(tolerance = tolerance, max_iterations = control$max_iterations,
         time_limit = control$time_limit, alpha0 = alpha0,
         # 0: no pivoted Cholesky factor
         rank = if (preconditioner != "pivoted_cholesky") 0L else
           min(control$rank, as.integer(n)),
         jitter = control$jitter,
         # 0: no Vecchia factor
         neighbours = if (preconditioner != "vecchia") 0L else
           min(control$neighbours, max(as.integer(n) - 1L, 1L))),
    operator_settings(control, n))
}

# CG needs no state: new samples are solved exactly as at fit time.
solve_cg <- function(problem, control, threads, state) {
  preconditioner <- cg_preconditioner(control$preconditioner, problem$kernel)
  settings <- cg_settings(control, nrow(problem$x), preconditioner,
                          solve_tolerance(control$tolerance, problem, "cg"), problem$alpha0)
  settings$progress <- progress_solver("CG", settings$max_iterations, settings$tolerance)
  res <- .Call(C_cg_solve, problem$xs, kernel_spec(problem$kernel), problem$noise,
               problem$rhs, settings, threads)
  status <- raise_status(decode_status(res), "cg", res$iterations, paste(
    "Conjugate gradients broke down (a direction of non-positive curvature",
    "or non-finite values): K + noise * I is not numerically positive",
    "definite. Increase `noise` or check the data."))
  list(alpha = res$alpha, iterations = res$iterations, status = status,
       trace = solver_trace(res$trace, mean_systems(problem)), state = NULL,
       cached = settings$use_cache, tolerance = settings$tolerance,
       preconditioner = switch(preconditioner,
         vecchia = sprintf("Vecchia's, %d neighbours", settings$neighbours),
         pivoted_cholesky = sprintf("pivoted Cholesky, rank at most %d", settings$rank),
         none = "none"))
}

# The preconditioner's pivoted Cholesky factor of K + jitter I on the
# scaled inputs xs: list(L (n x rank), pivots (1-based), trace (remaining
# relative trace after each step)).
pivoted_cholesky <- function(xs, kernel, rank, jitter, rel_tol, cache, threads,
                             precision = "double") {
  .Call(C_pivchol, xs, kernel_spec(kernel), as.numeric(jitter), as.integer(rank),
        as.numeric(rel_tol), cache, precision, threads)
}
