#' Parallel Thompson sampling
#'
#' Maximises a black-box function on a box by batch Thompson sampling with a
#' Gaussian process model, as in Section 4.2 of Lin, Padhy, Antoran et al.
#' (2024). Every step fits the model to all data so far with [gp_sdd()],
#' drawing `batch` pathwise posterior function samples together with the
#' posterior mean (one multi-right-hand-side solve), maximises each sample
#' over the box, evaluates `objective` at the `batch` maximisers and adds
#' them to the data.
#'
#' @section Maximising a posterior sample: Each sample path is maximised in
#'   two stages, all in R's random stream:
#'   1. `rounds` rounds of shared candidates. Each round draws `candidates`
#'      points used by every sample: a tenth uniform in the box, the rest
#'      data points drawn with probability proportional to \eqn{y_i -
#'      \min(y)}{y_i - min(y)} and moved by Gaussian noise with standard deviation half a
#'      length scale per coordinate, then clamped to the box (the scheme of
#'      the reference implementation, without its sign slip in the
#'      weights). All samples are evaluated on the round's candidates at
#'      once, in blocks of 4096 points, and each keeps its best point.
#'   2. `local_rounds` rounds of derivative-free local search per sample:
#'      `local_points` Gaussian perturbations of the sample's incumbent,
#'      clamped to the box and evaluated on that sample only; the best
#'      replaces the incumbent if it is higher, otherwise the sample's step
#'      (initially half a length scale per coordinate) is halved. The
#'      reference implementation runs Adam on the sample's gradient
#'      instead; sample-path gradients are not available here.
#'
#'   Samples are evaluated as in [simulate.sddgp()], through the fit's
#'   representer weights and random-feature prior draws; no sample is ever
#'   formed on a grid.
#'
#' @section Random numbers: Evaluation \eqn{k}{k} of `objective` (counting from
#'   the initial design) runs with R's generator set to the \eqn{k}{k}-th
#'   L'Ecuyer-CMRG substream ([parallel::nextRNGStream()]) after a seed made
#'   from the next number of R's stream when the loop starts (left in the
#'   stream), and R's generator and its state are restored after it,
#'   whether it runs in this process or as a future (which takes such a
#'   seed as it is). A random objective thus gives the same values in this
#'   process and on any plan for a given [set.seed()], and its draws do not
#'   shift the loop's own (the initial design, the maximisation of the
#'   samples), which are those of a deterministic objective.
#' @section Hyperparameters and units: Kernel hyperparameters and `noise`
#'   given by the user refer to the units of the box and of the objective's
#'   values (a length scale of 0.1 on a box of width 1 is a tenth of its
#'   width). Every fit standardises the data as [gp_sdd()] does by default
#'   (so the prior mean is the mean of the observations so far) and
#'   converts the hyperparameters to the standardised units of that step.
#'   Those not given are estimated by [gp_sdd()] on the first step, by
#'   marginal likelihood, and then kept fixed, in the original units, for
#'   the remaining steps; the result reports them.
#'
#' @param objective The function to maximise: called with one point (a
#'   numeric vector of length `length(lower)`), it must return a single
#'   finite number. Noisy objectives are fine.
#' @param lower,upper The box: numeric vectors of lower and upper bounds,
#'   one per input, with `lower < upper`.
#' @param x Initial inputs: a numeric matrix with `length(lower)` columns
#'   and at least 2 rows, all inside the box; `NULL` draws `initial` points
#'   uniformly in the box.
#' @param y Objective values at the rows of `x`; `NULL` evaluates
#'   `objective` there. Needs `x`.
#' @param initial Number of uniform initial points when `x` is `NULL`.
#' @param steps Number of Thompson-sampling steps.
#' @param batch Posterior samples per step, and so new evaluations per step.
#' @param kernel A kernel object ([matern()], [squared_exponential()]) or a
#'   kernel name, as in [gp_sdd()]; hyperparameters left `NULL` are
#'   estimated (see the section Hyperparameters and units).
#' @param noise Observation noise variance in the objective's units, or
#'   `NULL` to estimate it.
#' @param solver,control The solver and its settings, as in [gp_sdd()]:
#'   `NULL` takes the solver of `control`; without `control`, the solver
#'   [gp_sdd()] would choose for the number of points after the last step.
#' @param candidates Shared candidate points per round.
#' @param rounds Rounds of shared candidates.
#' @param local_rounds Rounds of local search per sample; 0 for none.
#' @param local_points Perturbations per sample and local round.
#' @param threads Number of threads; `NULL` uses [sddgp_threads()].
#' @param parallel `NULL` (every evaluation of `objective` in this
#'   process), or [sddgp_future()] to evaluate each step's batch (and the
#'   initial design) as futures on the current [future::plan()], in
#'   parallel: the batch's `batch` evaluations are independent. Each
#'   evaluation has its own random-number stream (section Random numbers),
#'   so the results are the same either way. Default
#'   `getOption("sddgp.parallel")`.
#' @return An object of class `c("sddgp_thompson", "sddgp_bo")`, a list
#'   with
#'   * `x`, `y`: every point evaluated (initial points first, then each
#'     step's batch) and its objective value;
#'   * `history`: a data frame with one row per step and columns `step`,
#'     `evaluations` (cumulative, initial points included), `best` (the
#'     largest `y` so far), `seconds` (the step's wall time),
#'     `fit_seconds` (fitting the model and drawing the samples) and
#'     `maximise_seconds` (maximising the samples); the rest of a step's
#'     time is spent in `objective`;
#'   * `initial`: the number of initial points;
#'   * `kernel`, `noise`: the hyperparameters used, in the original units;
#'   * `fit`: the model of the last step, an `sddgp` fit (it does not hold
#'     the last batch);
#'   * `settings`: the solver, its control and the maximisation settings;
#'   * `call`.
#'
#'   `print()` and `plot()` ([plot.sddgp_bo()]) show the progress.
#' @references Lin, J. A., Padhy, S., Antoran, J., Tripp, A., Terenin, A.,
#'   Szepesvari, C., Hernandez-Lobato, J. M. and Janz, D. (2024). Stochastic
#'   gradient descent for Gaussian processes done right. *ICLR*.
#'
#'   Hernandez-Lobato, J. M., Requeima, J., Pyzer-Knapp, E. O. and
#'   Aspuru-Guzik, A. (2017). Parallel and distributed Thompson sampling for
#'   large-scale accelerated exploration of chemical space. *ICML*.
#' @examples
#' set.seed(1)
#' # A bump with its maximum 1 at (0.3, 0.7).
#' bump <- function(p) exp(-sum((p - c(0.3, 0.7))^2) / 0.05)
#' res <- bo_thompson(bump, lower = c(0, 0), upper = c(1, 1), initial = 10,
#'                    steps = 4, batch = 4,
#'                    kernel = matern(5/2, lengthscale = 0.2, variance = 0.2),
#'                    noise = 1e-6, solver = "cholesky", candidates = 500,
#'                    rounds = 2, threads = 1)
#' res
#' res$history
#' plot(res, against = "evaluations")
#' @export
bo_thompson <- function(objective, lower, upper, x = NULL, y = NULL,
                        initial = 10 * length(lower), steps = 10, batch = 10,
                        kernel = "matern32", noise = NULL, solver = NULL,
                        control = NULL, candidates = 1000, rounds = 5,
                        local_rounds = 10, local_points = 10, threads = NULL,
                        parallel = getOption("sddgp.parallel")) {
  call <- match.call()
  check_objective(objective)
  box <- check_box(lower, upper)
  check_number(initial, "initial", lower = 2, upper = 1e8, integer = TRUE)
  check_number(steps, "steps", lower = 1, upper = 1e6, integer = TRUE)
  check_number(batch, "batch", lower = 1, upper = 1e5, integer = TRUE)
  check_number(candidates, "candidates", lower = 1, upper = 1e8, integer = TRUE)
  check_number(rounds, "rounds", lower = 1, upper = 1e6, integer = TRUE)
  check_number(local_rounds, "local_rounds", lower = 0, upper = 1e6, integer = TRUE)
  check_number(local_points, "local_points", lower = 1, upper = 1e6, integer = TRUE)
  kernel <- kernel_for_dimension(check_box_kernel(as_kernel(kernel), "bo_thompson"), box$d)
  if (!is.null(noise)) check_number(noise, "noise", lower = 0, lower_open = TRUE)
  threads <- sddgp_threads(threads)
  parallel <- check_parallel(parallel, mpi = FALSE)

  if (is.null(x)) {
    if (!is.null(y)) abort_argument("y", "is given without `x`: give the inputs it belongs to")
    x <- runif_box(initial, box)
  } else {
    x <- check_design(x, box)
  }
  # Known before any evaluation, so a solver unfit for the final data size
  # (cholesky beyond its limit) fails now rather than after hours of work.
  chosen <- resolve_solver(solver, control, nrow(x) + steps * batch)
  streams <- task_streams()
  y <- if (is.null(y)) evaluate_objective(objective, x, streams, parallel) else
    check_targets(y, nrow(x))
  initial <- nrow(x)

  search <- list(candidates = candidates, rounds = rounds,
                 local_rounds = local_rounds, local_points = local_points)
  history <- data.frame(step = seq_len(steps), evaluations = 0L, best = 0,
                        seconds = 0, fit_seconds = 0, maximise_seconds = 0)
  for (step in seq_len(steps)) {
    started <- elapsed()
    fit <- thompson_fit(x, y, kernel, noise, chosen, batch, threads)
    # Whatever the first fit estimated is kept from then on.
    model <- rescale_hyperparameters(fit$kernel, fit$noise, fit$scaling, "original")
    kernel <- model$kernel
    noise <- model$noise
    fitted <- elapsed()
    new_x <- maximise_samples(fit, x, y, box, kernel$lengthscale, search, threads)
    maximised <- elapsed()
    x <- rbind(x, new_x, deparse.level = 0)
    y <- c(y, evaluate_objective(objective, new_x, streams, parallel))
    history[step, -1L] <- list(length(y), max(y), elapsed() - started,
                               fitted - started, maximised - fitted)
  }
  new_bo_result("thompson", x, y, history, call, initial = initial,
                kernel = kernel, noise = noise, fit = fit,
                settings = c(list(solver = chosen$solver, control = chosen$control,
                                  batch = batch), search))
}

elapsed <- function() proc.time()[["elapsed"]]

# The initial inputs as a matrix of points inside the box.
check_design <- function(x, box) {
  x <- check_inputs(x)
  if (ncol(x) != box$d) {
    abort_argument("x", sprintf("has %d column%s but the box has %d dimension%s",
                                ncol(x), if (ncol(x) == 1L) "" else "s",
                                box$d, if (box$d == 1L) "" else "s"))
  }
  n <- nrow(x)
  outside <- which(rowSums(x < rep(box$lower, each = n) | x > rep(box$upper, each = n)) > 0)
  if (length(outside)) {
    abort_argument("x", sprintf(
      "has %d point%s outside the box [lower, upper] (first: row %d)",
      length(outside), if (length(outside) == 1L) "" else "s", outside[1L]))
  }
  x
}

# The model of one step with `batch` posterior samples: gp_sdd() on the
# standardised data, with the hyperparameters known in original units
# converted to the standardised units of these data.
thompson_fit <- function(x, y, kernel, noise, chosen, batch, threads) {
  model <- rescale_hyperparameters(kernel, noise, standardization(x, y, TRUE), "standard")
  gp_sdd(x, y, kernel = model$kernel, noise = model$noise, solver = chosen$solver,
         control = chosen$control, samples = batch, standardize = TRUE,
         threads = threads)
}

# The maximiser of each of the fit's posterior samples over the box (one
# row per sample), by shared candidate rounds and then local search; see
# the section "Maximising a posterior sample" of ?bo_thompson.
maximise_samples <- function(fit, x, y, box, lengthscale, search, threads) {
  k <- ncol(fit$alpha_samples)
  best_x <- matrix(0, k, box$d)
  best_f <- rep(-Inf, k)
  for (round in seq_len(search$rounds)) {
    cand <- thompson_candidates(search$candidates, x, y, box, lengthscale)
    for (rows in chunks(nrow(cand), 4096L)) {
      f <- sample_paths(fit, cand[rows, , drop = FALSE], seq_len(k), threads)
      top <- apply(f, 2L, which.max)
      value <- f[cbind(top, seq_len(k))]
      better <- value > best_f
      best_f[better] <- value[better]
      best_x[better, ] <- cand[rows[top[better]], ]
    }
  }
  m <- search$local_points
  step <- rep(0.5, k)
  for (round in seq_len(search$local_rounds)) {
    moves <- array(stats::rnorm(m * box$d * k), c(m, box$d, k))
    for (s in seq_len(k)) {
      pts <- clamp_box(matrix(rep(best_x[s, ], each = m) +
                                moves[, , s] * rep(step[s] * lengthscale, each = m),
                              m, box$d), box)
      f <- sample_paths(fit, pts, s, threads)
      top <- which.max(f)
      if (f[top] > best_f[s]) {
        best_f[s] <- f[top]
        best_x[s, ] <- pts[top, ]
      } else {
        step[s] <- step[s] / 2
      }
    }
  }
  structure(best_x, values = best_f)
}

# `m` shared candidates: a tenth uniform in the box, the rest data points
# chosen with probability proportional to y - min(y), moved by
# N(0, (lengthscale / 2)^2) per coordinate and clamped to the box.
thompson_candidates <- function(m, x, y, box, lengthscale) {
  uniform <- max(1L, m %/% 10L)
  near <- m - uniform
  weight <- y - min(y)
  if (!any(weight > 0)) weight <- rep(1, length(y))
  parents <- sample.int(nrow(x), near, replace = TRUE, prob = weight)
  moved <- x[parents, , drop = FALSE] +
    matrix(stats::rnorm(near * box$d), near, box$d) * rep(lengthscale / 2, each = near)
  rbind(runif_box(uniform, box), clamp_box(moved, box))
}

# Posterior samples number `keep` of the fit at points x (original units),
# one column per sample, in the standardised units of the fit's targets
# (which leave each sample's maximiser where it is).
sample_paths <- function(fit, x, keep, threads) {
  prior <- prior_columns(fit$prior, keep)
  post <- posterior_at(fit, standardize_inputs(x, fit$scaling), TRUE, threads,
                       alpha_samples = fit$alpha_samples[, keep, drop = FALSE],
                       prior = prior)
  post$mean + post$centred
}
