#' Settings of the solvers
#'
#' `sdd_control()` collects the settings of stochastic dual descent (the
#' paper's Algorithm 1) and of pathwise posterior sampling. The defaults follow
#' Lin, Padhy, Antoran et al. (2024): batches of 512 coordinates, Nesterov
#' momentum 0.9 and geometric iterate averaging with rate 100 / `iterations`.
#' With `solver = "cholesky"` only `features` is used.
#'
#' The step size is the paper's \eqn{\beta n}. By default it is chosen from
#' the data: the dual iteration is stable while \eqn{\beta} times the largest
#' eigenvalue of \eqn{K + \lambda I} stays below about 1.36 (Nesterov momentum
#' 0.9); that eigenvalue over `n` is estimated by power iteration on a random
#' subset of 1000 points and the step size is set to `step_fraction` of the
#' stability limit. A run whose iterates blow up is stopped and reported as an
#' error of class `sddgp_error_divergence`.
#'
#' @param iterations Number of SDD steps.
#' @param batch_size Coordinates per step (capped at the number of data).
#' @param step_size Step size \eqn{\beta n} for the posterior mean, or `NULL`
#'   to choose it from the data (see Details).
#' @param step_size_samples Step size for the posterior-sample systems;
#'   `NULL` uses the mean's.
#' @param momentum Nesterov momentum in \[0, 1).
#' @param averaging `"geometric"` (iterate averaging, the paper's default) or
#'   `"none"` (return the last iterate).
#' @param averaging_rate Rate `r` of geometric averaging,
#'   \eqn{\bar\alpha \leftarrow r \alpha + (1 - r) \bar\alpha}; `NULL` means
#'   `100 / iterations` (capped at 1).
#' @param batch_sampling `"uniform"`: each step draws its batch uniformly with
#'   replacement (Algorithm 1); `"permutation"`: batches run through a fresh
#'   random permutation each epoch, as the reference implementation does.
#' @param tolerance Stop early once the estimated relative residual
#'   \eqn{\|(K + \lambda I)\bar\alpha - b\| / \|b\|} of every system is below
#'   this; 0 never stops early.
#' @param check_every Iterations between residual estimates (the convergence
#'   trace, divergence checks and the `tolerance` stop).
#' @param probe_size Random rows used by each residual estimate.
#' @param step_fraction Fraction of the estimated stability limit used when
#'   `step_size` is `NULL`.
#' @param features Random Fourier features of the prior draws behind
#'   posterior samples.
#' @param cache Keep the n x n kernel matrix in memory: `"auto"` does so when
#'   it fits in `cache_limit` bytes, `"always"` or `"never"` force the choice.
#'   A cached matrix is computed once, after which every step reads its rows
#'   instead of evaluating them, which is several times faster.
#' @param cache_limit Memory budget of the cached kernel matrix, in bytes.
#' @return An object of class `sddgp_control`.
#' @references Lin, J. A., Padhy, S., Antoran, J., Tripp, A., Terenin, A.,
#'   Szepesvari, C., Hernandez-Lobato, J. M. and Janz, D. (2024). Stochastic
#'   gradient descent for Gaussian processes done right. *ICLR*.
#' @examples
#' sdd_control(iterations = 5000, batch_size = 256)
#' @export
sdd_control <- function(iterations = 10000, batch_size = 512, step_size = NULL,
                        step_size_samples = NULL, momentum = 0.9,
                        averaging = c("geometric", "none"),
                        averaging_rate = NULL,
                        batch_sampling = c("uniform", "permutation"),
                        tolerance = 0, check_every = 100, probe_size = 256,
                        step_fraction = 0.8, features = 2000,
                        cache = c("auto", "always", "never"), cache_limit = 2e9) {
  check_number(iterations, "iterations", lower = 1, upper = .Machine$integer.max,
               integer = TRUE)
  check_number(batch_size, "batch_size", lower = 1, upper = .Machine$integer.max,
               integer = TRUE)
  if (!is.null(step_size)) check_number(step_size, "step_size", lower = 0, lower_open = TRUE)
  if (!is.null(step_size_samples)) {
    check_number(step_size_samples, "step_size_samples", lower = 0, lower_open = TRUE)
  }
  check_number(momentum, "momentum", lower = 0, upper = 1, upper_open = TRUE)
  if (is.character(averaging) && length(averaging) == 2L) averaging <- averaging[1L]
  check_choice(averaging, "averaging", c("geometric", "none"))
  if (!is.null(averaging_rate)) {
    check_number(averaging_rate, "averaging_rate", lower = 0, upper = 1, lower_open = TRUE)
  }
  if (is.character(batch_sampling) && length(batch_sampling) == 2L) {
    batch_sampling <- batch_sampling[1L]
  }
  check_choice(batch_sampling, "batch_sampling", c("uniform", "permutation"))
  check_number(tolerance, "tolerance", lower = 0, upper = 1)
  check_number(check_every, "check_every", lower = 1, upper = .Machine$integer.max,
               integer = TRUE)
  check_number(probe_size, "probe_size", lower = 1, upper = 1e6, integer = TRUE)
  check_number(step_fraction, "step_fraction", lower = 0, upper = 1, lower_open = TRUE)
  check_number(features, "features", lower = 1, upper = 1e6, integer = TRUE)
  if (is.character(cache) && length(cache) == 3L) cache <- cache[1L]
  check_choice(cache, "cache", c("auto", "always", "never"))
  check_number(cache_limit, "cache_limit", lower = 0)
  structure(list(iterations = as.integer(iterations),
                 batch_size = as.integer(batch_size),
                 step_size = step_size, step_size_samples = step_size_samples,
                 momentum = momentum, averaging = averaging,
                 averaging_rate = averaging_rate, batch_sampling = batch_sampling,
                 tolerance = tolerance, check_every = as.integer(check_every),
                 probe_size = as.integer(probe_size), step_fraction = step_fraction,
                 features = as.integer(features), cache = cache,
                 cache_limit = cache_limit),
            class = "sddgp_control")
}

#' @export
print.sddgp_control <- function(x, ...) {
  cat("SDD settings\n")
  show <- function(v) if (is.null(v)) "auto" else format(v)
  cat(sprintf("  iterations %d, batch size %d (%s), momentum %s\n", x$iterations,
              x$batch_size, x$batch_sampling, format(x$momentum)))
  cat(sprintf("  step size %s (samples %s), averaging %s (rate %s)\n",
              show(x$step_size), show(x$step_size_samples), x$averaging,
              show(x$averaging_rate)))
  cat(sprintf("  tolerance %s, residual check every %d iterations on %d rows\n",
              format(x$tolerance), x$check_every, x$probe_size))
  cat(sprintf("  %d random features for prior draws; kernel cache %s (limit %s bytes)\n",
              x$features, x$cache, format(x$cache_limit)))
  invisible(x)
}

# Settings as the C solver takes them, with the data-dependent ones resolved.
resolve_sdd_control <- function(control, n) {
  control$batch_size <- min(control$batch_size, n)
  control$averaging_rate <- if (control$averaging == "none") 1 else
    control$averaging_rate %||% min(1, 100 / control$iterations)
  control$probe_size <- min(control$probe_size, n)
  control$batch_code <- match(control$batch_sampling, c("uniform", "permutation"))
  control$use_cache <- control$cache == "always" ||
    (control$cache == "auto" && 8 * as.numeric(n)^2 <= control$cache_limit)
  control
}

`%||%` <- function(a, b) if (is.null(a)) b else a
