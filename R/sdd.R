#' Settings of the solvers
#'
#' `sdd_control()` collects the settings of stochastic dual descent (the
#' paper's Algorithm 1) and of pathwise posterior sampling. The defaults follow
#' Lin, Padhy, Antoran et al. (2024): batches of 512 coordinates, Nesterov
#' momentum 0.9 and geometric iterate averaging with rate 100 / `iterations`.
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
  averaging <- choose_one(averaging, "averaging", c("geometric", "none"))
  if (!is.null(averaging_rate)) {
    check_number(averaging_rate, "averaging_rate", lower = 0, upper = 1, lower_open = TRUE)
  }
  batch_sampling <- choose_one(batch_sampling, "batch_sampling", c("uniform", "permutation"))
  check_number(tolerance, "tolerance", lower = 0, upper = 1)
  check_number(check_every, "check_every", lower = 1, upper = .Machine$integer.max,
               integer = TRUE)
  check_number(probe_size, "probe_size", lower = 1, upper = 1e6, integer = TRUE)
  check_number(step_fraction, "step_fraction", lower = 0, upper = 1, lower_open = TRUE)
  cache <- check_cache(cache, cache_limit)
  new_control("sdd", list(
    iterations = as.integer(iterations), batch_size = as.integer(batch_size),
    step_size = step_size, step_size_samples = step_size_samples,
    momentum = momentum, averaging = averaging, averaging_rate = averaging_rate,
    batch_sampling = batch_sampling, tolerance = tolerance,
    check_every = as.integer(check_every), probe_size = as.integer(probe_size),
    step_fraction = step_fraction, cache = cache, cache_limit = cache_limit),
    features)
}

# Settings as the C solver takes them, with the data-dependent ones resolved.
resolve_sdd_control <- function(control, n) {
  control$batch_size <- min(control$batch_size, n)
  control$averaging_rate <- if (control$averaging == "none") 1 else
    control$averaging_rate %||% min(1, 100 / control$iterations)
  control$probe_size <- min(control$probe_size, n)
  control$batch_code <- match(control$batch_sampling, c("uniform", "permutation"))
  control$use_cache <- use_kernel_cache(control, n)
  control
}


# Stability limit of the step size beta n: Nesterov momentum rho on a
# quadratic with curvature h is stable while lr h < 2 (1 + rho) / (1 + 2 rho),
# and the expected SDD step has curvature lambda_max(K + lambda I) / n.  That
# eigenvalue over n is estimated on a random subset (kernel matrices' top
# eigenvalue grows linearly in n).
sdd_step_limit <- function(xs, kernel, noise, momentum, batch_size, threads,
                           subset = 1000L) {
  n <- nrow(xs)
  idx <- if (n > subset) sort(sample.int(n, subset)) else seq_len(n)
  xsub <- xs[idx, , drop = FALSE]
  K <- .Call(C_kernel_matrix, xsub, xsub, kernel_spec(kernel), threads)
  v <- rep(1 / sqrt(length(idx)), length(idx))
  ev <- 0
  for (i in seq_len(50L)) {
    w <- K %*% v
    ev_new <- sqrt(sum(w^2))
    v <- w / ev_new
    if (abs(ev_new - ev) < 1e-4 * ev_new) break
    ev <- ev_new
  }
  # Each sampled coordinate must be stable too.  Between the steps that
  # sample it, momentum keeps pushing it for about 1 / (1 - rho) steps with
  # no feedback, which amplifies its own curvature (sigma_f^2 + lambda) / B;
  # ignoring that diverges when K is nearly diagonal (short length scales).
  curvature <- max(ev_new / length(idx) + mean(noise) / n,
                   (kernel$variance + mean(noise)) /
                     ((1 - momentum) * min(batch_size, n)))
  2 * (1 + momentum) / (1 + 2 * momentum) / curvature
}

sdd_step_sizes <- function(control, xs, kernel, noise, threads) {
  mean_step <- control$step_size
  if (is.null(mean_step) || is.null(control$step_size_samples)) {
    auto <- control$step_fraction *
      sdd_step_limit(xs, kernel, noise, control$momentum, control$batch_size,
                   threads)
    mean_step <- mean_step %||% auto
  }
  c(mean = mean_step, samples = control$step_size_samples %||% mean_step)
}

# The step sizes are chosen once per fit and kept in the state, so later
# sample draws (simulate() with a seed) run with the same ones.
solve_sdd <- function(problem, control, threads, state) {
  steps <- state$step_size %||%
    sdd_step_sizes(control, problem$xs, problem$kernel, problem$noise, threads)
  k <- ncol(problem$rhs)
  lr <- if (problem$has_mean) c(steps[["mean"]], rep(steps[["samples"]], k - 1L)) else
    rep(steps[["samples"]], k)
  res <- .Call(C_sdd_solve, problem$xs, kernel_spec(problem$kernel), problem$noise,
               problem$rhs, as.numeric(lr), resolve_sdd_control(control, nrow(problem$x)),
               new_seed(), threads)
  status <- solver_status(res, "sdd", sprintf(paste(
    "The step size was %s; use a smaller `step_size` (or `step_fraction`)",
    "in sdd_control()."), format(signif(max(lr), 4))), step_size = max(lr))
  list(alpha = res$alpha, iterations = res$iterations, status = status,
       trace = solver_trace(res, problem$has_mean), state = list(step_size = steps))
}
