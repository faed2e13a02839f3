#' Settings of stochastic dual descent (solver = "sdd")
#'
#' `sdd_control()` collects the settings of stochastic dual descent (the
#' paper's Algorithm 1) and of pathwise posterior sampling. The defaults follow
#' Lin, Padhy, Antoran et al. (2024): batches of 512 coordinates, Nesterov
#' momentum 0.9 and geometric iterate averaging with rate 100 / `iterations`.
#'
#' The step size is the paper's \eqn{\beta n}{beta n}. By default it is chosen from
#' the data: the dual iteration is stable while \eqn{\beta}{beta} times the largest
#' eigenvalue of \eqn{K + \lambda I}{K + lambda I} stays below about 1.36 (Nesterov momentum
#' 0.9); that eigenvalue over `n` is estimated by power iteration on a random
#' subset of 1000 points and the step size is set to `step_fraction` of the
#' stability limit. A run whose iterates blow up (a probed relative residual
#' 1000 times that of zero, or of the warm start where that is larger) is
#' stopped (at the next residual check, see `check_every`); with an
#' automatic step size it is then run again from the start with half the
#' step, up to five times, and
#' [summary()][summary.sddgp()] reports the halvings. A run that still
#' diverges, or one with a given `step_size`, is reported as an error of
#' class `sddgp_error_divergence`.
#'
#' @section Stopping: By default (`tolerance = NULL`) a run stops once the
#'   estimated relative residual of every system (the posterior mean's and
#'   each sample's) is below
#'   \deqn{\tau = 0.1 \sqrt{\bar\lambda} / \mathrm{rms}(y),}{tau = 0.1
#'   sqrt(mean noise) / rms(y),}
#'   capped at 0.1, where \eqn{\bar\lambda}{lambda_bar} is the mean noise variance and
#'   rms(y) the root mean square of the (standardised) targets: the
#'   residual's root mean square is then a tenth of the noise standard
#'   deviation. The posterior mean at the training inputs differs from the
#'   exact one by \eqn{K (K + \lambda I)^{-1}}{K (K + lambda I)^(-1)} times the residual, whose
#'   norm is at most the residual's (equal weights), so its root mean
#'   square error against the exact posterior mean is at most a tenth of
#'   the noise standard deviation. A test RMSE against noisy targets, at
#'   least the noise standard deviation, is then within 0.5% of the exact
#'   GP's when that error is independent of the exact GP's own, and within
#'   10% at worst. Against the noise-free function, whose error under the
#'   exact GP can be well below the noise, the same distance weighs more:
#'   on 6000 points with little noise (`inst/benchmarks/default_fit.R`),
#'   the default fit stopped at a relative residual of 0.00096 (computed
#'   from all of K; tolerance 0.001), 0.04 noise standard deviations from
#'   the exact posterior mean, and its RMSE against the function was 4.2%
#'   above the exact GP's (the two errors are correlated). The bound can be close: along 30,000 steps on 4000
#'   synthetic points with estimated hyperparameters (noise variance
#'   \eqn{10^{-2}}{10^(-2)} and \eqn{10^{-4}}{10^(-4)} of the signal's), the root mean square
#'   distance to the exact posterior mean at new inputs, in standard
#'   deviations of y, was 0.60 to 1.10 times the relative residual
#'   (`inst/benchmarks/defaults.R --part=link`). Residuals are estimated
#'   every `check_every` steps on `probe_size` random rows. With posterior
#'   samples, a run that reached this tolerance continues, from where it
#'   stopped, while the samples' residuals are large against their
#'   variance ([predict()][predict.sddgp()], section Standard errors).
#'
#'   A run that ends at `iterations` or `time_limit` before reaching its
#'   tolerance warns with class `sddgp_warning_not_converged` (fields
#'   `residual`, `threshold`, `status`), and `print()` and
#'   [summary()][summary.sddgp()] say so. With `tolerance = 0` (a fixed
#'   number of steps, as in the paper's experiments) it warns only when the
#'   posterior mean's residual ends above 0.5, far from converged.
#'
#' @section Warm start: The iterate \eqn{\alpha}{alpha} and its average
#'   \eqn{\bar\alpha}{alpha_bar} start from a cheap approximate solution of every
#'   system (the posterior mean's and the samples'), the momentum from 0.
#'   Both approximations come from the rank-`warm_start_rank` greedy pivoted
#'   Cholesky factor \eqn{L}{L} of \eqn{K}{K} (as [cg_control()]'s
#'   preconditioner, without jitter; \eqn{r}{r} = `warm_start_rank` kernel
#'   columns, \eqn{O(n r d + n r^2)}{O(n r d + n r^2)} operations and \eqn{2 n r}{2 n r} doubles of
#'   memory, plus \eqn{O(n r)}{O(n r)} per system through the Woodbury identity):
#'   * `"inducing"`: the subset-of-regressors (inducing-point) solution on
#'     the factor's \eqn{r}{r} pivot points, \eqn{\alpha_0 = c\,w}{alpha_0 = c w} on them
#'     and 0 elsewhere, with \eqn{w}{w} minimising
#'     \eqn{\|b - K_{:m} w\|^2_{\Lambda^{-1}} + w^\top K_{mm} w}{||b - K_(:m) w||^2_(Lambda^(-1)) + w^T K_mm w}; its
#'     predictions are those of the Nystrom approximation
#'     \eqn{L L^\top \approx K}{L L^T ~= K} (before scaling). The factor \eqn{c}{c}
#'     (close to 1 when the approximation is good) minimises the residual
#'     \eqn{\|b - c (K + \Lambda) w\|}{||b - c (K + Lambda) w||}, so the start's relative residual is
#'     never above 1, that of 0.
#'   * `"nystrom"`: \eqn{\alpha_0 = (L L^\top + \Lambda)^{-1} b}{alpha_0 = (L L^T + Lambda)^(-1) b}, the
#'     solution of the approximate system. Unless \eqn{L L^\top}{L L^T} matches
#'     \eqn{K}{K} to well within the noise variance, its weights put the
#'     low-rank fit's residuals, divided by the noise variance, on every
#'     point, and the start is far worse than 0.
#'   * `"none"`: \eqn{\alpha_0 = 0}{alpha_0 = 0} (the paper's algorithm).
#'
#'   With geometric averaging at rate \eqn{100 / T}{100 / T}, \eqn{\bar\alpha}{alpha_bar}
#'   moves towards the iterates slowly, so a run stopped early (`time_limit`)
#'   returns mostly its starting point: the warm start decides what such a
#'   run predicts. Its time is not counted by `time_limit`. Measured
#'   figures: `system.file("benchmarks", "README.md", package = "sddgp")`.
#'
#' @section Ablations: `objective` and `estimator` select the gradient
#'   estimates compared in the paper's ablations (its Figures 1 to 4); every
#'   one runs in the same loop, with the same momentum, averaging, stopping
#'   rules and trace, and is scaled by \eqn{1/n}{1/n} so that the step size is
#'   always \eqn{\beta n}{beta n}. With a batch \eqn{I}{I} of `batch_size` indices and an
#'   \eqn{n \times m}{n x m} matrix \eqn{L}{L} of `estimator_features` random
#'   Fourier features (\eqn{L L^\top \approx K}{L L' ~ K}) drawn afresh every
#'   step:
#'   * dual, `"coordinates"` (SDD): \eqn{\frac{1}{B}\sum_{i \in I} e_i
#'     [K_i \alpha + \lambda \alpha_i - b_i]}{1/B sum_(i in I) e_i [K_i alpha + lambda alpha_i - b_i]};
#'   * dual, `"features"`: \eqn{(L L^\top \alpha + \lambda\alpha - b) / n}{(L L^T alpha + lambda alpha - b) / n};
#'   * dual, `"coordinates_kalpha"` (only the \eqn{K\alpha}{K alpha} term
#'     subsampled): \eqn{(\frac{n}{B}\sum_{i \in I} e_i K_i \alpha +
#'     \lambda\alpha - b) / n}{(n/B sum_(i in I) e_i K_i alpha + lambda alpha - b) / n};
#'   * primal, `"coordinates"`: the estimator of the SGD baseline
#'     ([sgd_control()]), \eqn{[\frac{n}{B} K_I^\top (K_I \alpha - b_I) +
#'     L L^\top \lambda\alpha] / n}{[n/B K_I^T (K_I alpha - b_I) + L L^T lambda alpha] / n}, with the sample systems' noise draws in
#'     the regulariser.
#'
#'   A `batch_size` of at least `n` gives the exact gradient: full-batch
#'   gradient descent on the dual, \eqn{((K + \lambda I)\alpha - b) / n}{((K + lambda I)alpha - b) / n}, or
#'   on the primal, \eqn{K((K + \lambda I)\alpha - b) / n}{K((K + lambda I)alpha - b) / n}. The automatic step
#'   size is derived for the dual coordinate estimator only; the other
#'   variants need `step_size`.
#'
#' @section Single precision: With `precision = "single"` the kernel values
#'   the solver multiplies by are computed in single precision (float
#'   coordinates, distances and kernel function, 16 to an AVX-512 vector
#'   instead of 8) and a cached kernel matrix is stored in single precision,
#'   in half the memory (`cache = "auto"` then caches up to twice as many
#'   entries per byte of `cache_limit`). The products with the solver's
#'   vectors and all sums stay in double precision, as do predictions, the
#'   random features of posterior samples and the solver's own state. Each
#'   kernel value is then within about 1e-6 of its double-precision value
#'   (relative to the kernel variance), which moves the solution of the
#'   linear systems far less than the solvers' own stopping error; the
#'   reference implementation of Lin et al. runs entirely in float32.
#'   Kernel evaluation, the main cost without a cache, is about twice as
#'   fast (measurements: `system.file("benchmarks", "README.md", package =
#'   "sddgp")`).
#'
#'   In double precision, squared distances are formed from the points'
#'   squared norms and inner products, \eqn{|x|^2 + |y|^2 - 2 x^\top y}{|x|^2 + |y|^2 - 2 x^T y}
#'   (one multiply-add per coordinate instead of two operations), where
#'   that is accurate: for every kernel but Matern-1/2, whose value near zero
#'   distance is too sensitive to the cancellation, and when the training
#'   inputs are centred (the squared norm of their mean, in length scales, at
#'   most their mean squared distance from it; [gp_sdd()] centres them unless
#'   `standardize = FALSE`). A kernel value is then within a few times
#'   \eqn{d \epsilon (|x|^2 + |y|^2)}{d epsilon (|x|^2 + |y|^2)} of its exact value, relative to the
#'   kernel variance, with \eqn{\epsilon}{epsilon} = 1.1e-16 and the points in
#'   length scales; a point's distance to itself, or to an exact duplicate,
#'   is exactly zero. Otherwise, and in single precision, distances are sums
#'   of squared differences.
#'
#' @section Trace metrics: With `reference` or `test_x` and `test_y`, the
#'   fit's `trace` gains columns evaluated for the posterior mean's system at
#'   the iterations `trace_at` (or every `trace_every`, by default every
#'   `check_every`, and the last): `knorm_error`, the squared K-norm distance
#'   \eqn{(\bar\alpha - \alpha_{ref})^\top K (\bar\alpha - \alpha_{ref})}{(alpha_bar - alpha_ref)^T K (alpha_bar - alpha_ref)};
#'   `k2norm_error`, \eqn{\|K(\bar\alpha - \alpha_{ref})\|^2}{||K(alpha_bar - alpha_ref)||^2}; and `test_rmse`,
#'   the root mean squared error of the posterior mean on the test data in
#'   standardised units of y (the paper's normalised RMSE). Each evaluation
#'   costs a full kernel product, so keep them sparse; their time is left out
#'   of the trace's `seconds`. Rows where a value was not evaluated hold `NA`.
#'   [plot.sddgp()] draws them.
#'
#' @param iterations Largest number of SDD steps: the run stops earlier at
#'   its `tolerance` (see the section Stopping).
#' @param batch_size Coordinates per step (capped at the number of data;
#'   `n` or more means the exact gradient).
#' @param step_size Step size \eqn{\beta n}{beta n} for the posterior mean, or `NULL`
#'   to choose it from the data (see Details; dual coordinate estimator only).
#' @param step_size_samples Step size for the posterior-sample systems;
#'   `NULL` uses the mean's.
#' @param momentum Nesterov momentum in \[0, 1).
#' @param averaging `"geometric"` (iterate averaging, the paper's default),
#'   `"none"` (return the last iterate) or `"arithmetic"` (the mean of the
#'   iterates from iteration `averaging_start` on).
#' @param averaging_rate Rate `r` of geometric averaging,
#'   \eqn{\bar\alpha \leftarrow r \alpha + (1 - r) \bar\alpha}{alpha_bar <- r alpha + (1 - r) alpha_bar}; `NULL` means
#'   `100 / iterations` (capped at 1).
#' @param averaging_start First iteration of the arithmetic average (before
#'   it the current iterate is reported); `NULL` means 1. Used only with
#'   `averaging = "arithmetic"`.
#' @param batch_sampling `"uniform"`: each step draws its batch uniformly with
#'   replacement (Algorithm 1); `"permutation"`: batches run through a fresh
#'   random permutation each epoch, as the reference implementation does.
#' @param objective `"dual"` (SDD) or `"primal"` (the objective of the SGD
#'   baseline); see the section Ablations.
#' @param estimator The gradient estimate: `"coordinates"`, `"features"` or
#'   `"coordinates_kalpha"` for the dual, `"coordinates"` for the primal; see
#'   the section Ablations.
#' @param estimator_features Random Fourier features drawn at every step by
#'   the `"features"` estimator and by the primal's regulariser.
#' @param tolerance Stop once the estimated relative residual
#'   \eqn{\|(K + \lambda I)\bar\alpha - b\| / \|b\|}{||(K + lambda I)alpha_bar - b|| / ||b||} of every system is below
#'   this. `NULL`, the default of `sdd_control()`, chooses it from the noise
#'   (section Stopping of [sdd_control()]); 0 never stops early and runs
#'   `iterations` steps.
#' @param time_limit Stop once the iterations have run this many seconds
#'   (wall time; estimation, the kernel cache, the prior draws and SDD's
#'   warm start are not counted), keeping the averaged iterate reached, with status
#'   `"time limit"`; `Inf` for no limit. The fit ends with a pass over the
#'   kernel matrix, as long as an epoch of SDD, which the limit does not
#'   count: it gives the fitted values and the residuals by which
#'   [predict.sddgp()] corrects the mean and the samples (its
#'   `neighbours`), which makes a
#'   fit stopped by the limit predict far better. Under a finite limit the
#'   pass runs only if, timed on its first rows, it takes no longer than
#'   the limit; else the predictions are not corrected, and [fitted()] and
#'   [residuals()] compute the pass when called. How many steps fit depends on the
#'   machine and its load, so such a fit is reproduced by its recorded
#'   `iterations`, not by the limit (give `averaging_rate` too, whose
#'   default depends on `iterations`).
#' @param check_every Iterations between residual estimates (the convergence
#'   trace, divergence checks and the `tolerance` stop).
#' @param probe_size Random rows used by each residual estimate.
#' @param step_fraction Fraction of the estimated stability limit used when
#'   `step_size` is `NULL`. Values above 1 are bolder than the estimate and
#'   rely on the halving after a divergence (see Details).
#' @param warm_start Starting point of the iterations: `"inducing"`,
#'   `"nystrom"` or `"none"` (zero); see the section Warm start.
#' @param warm_start_rank Rank \eqn{r}{r} of the pivoted Cholesky factor of
#'   the warm start (capped at the number of data): its number of inducing
#'   points.
#' @param trace_every,trace_at Iterations at which the trace metrics are
#'   evaluated: every `trace_every`-th (and the last), or the whole numbers
#'   in `trace_at`; give at most one (see the section Trace metrics).
#' @param reference Reference representer weights of the posterior mean, in
#'   the fit's standardised units (for example `alpha` of a `solver =
#'   "cholesky"` fit to the same data), for the K-norm errors of the trace.
#' @param test_x,test_y Test inputs (a numeric matrix with the training
#'   input columns) and targets, in the original units, for the test RMSE of
#'   the trace.
#' @param features Random Fourier features of the prior draws behind
#'   posterior samples.
#' @param cache Keep the n x n kernel matrix in memory: `"auto"` does so when
#'   it fits in `cache_limit` bytes, `"always"` or `"never"` force the choice.
#'   A cached matrix is computed once, after which every step reads its rows
#'   instead of evaluating them, which is several times faster.
#' @param cache_limit Memory budget of the cached kernel matrix, in bytes.
#' @param precision `"double"` or `"single"`: the precision of the kernel
#'   values the solver multiplies by (section Single precision of
#'   [sdd_control()]).
#' @return An object of class `sddgp_control`.
#' @references Lin, J. A., Padhy, S., Antoran, J., Tripp, A., Terenin, A.,
#'   Szepesvari, C., Hernandez-Lobato, J. M. and Janz, D. (2024). Stochastic
#'   gradient descent for Gaussian processes done right. *ICLR*.
#' @examples
#' sdd_control(iterations = 5000, batch_size = 256)
#' # An ablation: random-feature gradients, arithmetic averaging.
#' sdd_control(estimator = "features", step_size = 0.1,
#'             averaging = "arithmetic", averaging_start = 1000)
#' @export
sdd_control <- function(iterations = 10000, batch_size = 512, step_size = NULL,
                        step_size_samples = NULL, momentum = 0.9,
                        averaging = c("geometric", "none", "arithmetic"),
                        averaging_rate = NULL, averaging_start = NULL,
                        batch_sampling = c("uniform", "permutation"),
                        objective = c("dual", "primal"),
                        estimator = c("coordinates", "features", "coordinates_kalpha"),
                        estimator_features = 100,
                        tolerance = NULL, time_limit = Inf, check_every = 100,
                        probe_size = 256, step_fraction = 0.8,
                        warm_start = c("inducing", "nystrom", "none"),
                        warm_start_rank = 100,
                        trace_every = NULL,
                        trace_at = NULL, reference = NULL, test_x = NULL, test_y = NULL,
                        features = 2000,
                        cache = c("auto", "always", "never"), cache_limit = 2e9,
                        precision = c("double", "single")) {
  loop <- loop_settings(iterations, batch_size, momentum, averaging, averaging_rate,
                        averaging_start, batch_sampling, tolerance, time_limit,
                        check_every, probe_size, cache, cache_limit, precision)
  if (!is.null(step_size)) check_number(step_size, "step_size", lower = 0, lower_open = TRUE)
  if (!is.null(step_size_samples)) {
    check_number(step_size_samples, "step_size_samples", lower = 0, lower_open = TRUE)
  }
  objective <- choose_one(objective, "objective", c("dual", "primal"))
  estimator <- choose_one(estimator, "estimator",
                          c("coordinates", "features", "coordinates_kalpha"))
  if (objective == "primal" && estimator != "coordinates") {
    abort_argument("estimator", sprintf(paste(
      "is \"%s\", which the primal objective does not support: use \"coordinates\"",
      "with objective = \"primal\"; \"coordinates\", \"features\" and",
      "\"coordinates_kalpha\" go with objective = \"dual\""), estimator))
  }
  if (is.null(step_size) && (objective != "dual" || estimator != "coordinates")) {
    abort_argument("step_size", sprintf(paste(
      "must be given with objective = \"%s\" and estimator = \"%s\": the automatic",
      "step size is derived for the dual coordinate estimator only"), objective, estimator))
  }
  check_number(estimator_features, "estimator_features", lower = 1, upper = 1e5,
               integer = TRUE)
  check_number(step_fraction, "step_fraction", lower = 0, upper = 10, lower_open = TRUE)
  warm_start <- choose_one(warm_start, "warm_start", c("inducing", "nystrom", "none"))
  check_number(warm_start_rank, "warm_start_rank", lower = 1, upper = 1e5, integer = TRUE)
  trace <- trace_settings(trace_every, trace_at, reference, test_x, test_y,
                          loop$iterations, loop$check_every)
  loop_control("sdd", loop, step_size, step_size_samples,
               own = list(objective = objective, estimator = estimator,
                          estimator_features = as.integer(estimator_features)),
               more = list(step_fraction = step_fraction, warm_start = warm_start,
                           warm_start_rank = as.integer(warm_start_rank)),
               trace = trace,
               features = features)
}

# The step sizes are chosen once per fit and kept in the state, so later
# sample draws (simulate() with a seed) run with the same ones.
solve_sdd <- function(problem, control, threads, state) {
  # Subsets of fingerprints are taken as given, not from the engine's form.
  xs <- if (is_tanimoto(problem$kernel)) problem$x else problem$xs
  steps <- state$step_size %||%
    sdd_step_sizes(control, xs, problem$kernel, problem$noise, threads)
  # Step sizes chosen here (not given, nor fixed by the fit that simulate()
  # draws for) are halved after a divergence, at most max_backoffs times.
  # The samples' step is chosen here only when neither step is given (it
  # defaults to the mean's) and there are sample systems to run.
  automatic <- if (is.null(state$step_size)) {
    c(mean = is.null(control$step_size),
      samples = is.null(control$step_size_samples) && is.null(control$step_size) &&
        ncol(problem$rhs) > 1L)
  } else c(mean = FALSE, samples = FALSE)
  alpha0 <- problem$alpha0 %||% warm_start(problem, control, threads)
  backoffs <- 0L
  repeat {
    lr <- per_system(steps[["mean"]], steps[["samples"]], problem)
    sol <- run_sdd_loop(problem, sdd_settings(control, problem, control$objective,
                                              control$estimator,
                                              control$estimator_features, lr,
                                              alpha0 = alpha0),
                        threads)
    if (sol$status != "diverged" || backoffs == max_backoffs || !any(automatic)) break
    backoffs <- backoffs + 1L
    steps[automatic] <- steps[automatic] / 2
  }
  raise_status(sol$status, "sdd", sol$iterations, sprintf(paste(
    "The step size was %s; use a smaller `step_size` (or `step_fraction`)",
    "in sdd_control()."), format(signif(max(lr), 4))), step_size = max(lr))
  sol$state <- list(step_size = steps, backoffs = backoffs)
  sol
}

# Halvings of an automatic step size after divergences before giving up.
max_backoffs <- 5L

# The warm start of `control` (sdd_control()'s `warm_start`) for every
# right-hand side of `problem`, or NULL (start at zero): the solution of
# (L L' + diag(noise)) alpha = b with L the pivoted Cholesky factor of K of
# rank `warm_start_rank`.  It depends on the data, kernel and right-hand
# sides only, so simulate() with a seed starts the sample systems where
# the fit did.  A control without the setting (a fit saved before it
# existed) starts at zero, as it did.
warm_start <- function(problem, control, threads) {
  if (is.null(control$warm_start) || control$warm_start == "none") return(NULL)
  res <- .Call(C_nystrom_solve, problem$xs, kernel_spec(problem$kernel), problem$noise,
               problem$rhs, min(control$warm_start_rank, nrow(problem$x)),
               control$warm_start, threads)
  raise_status(decode_status(res), "sdd", 0L, paste(
    "Its warm start failed: K + noise * I is not numerically positive definite.",
    "Increase `noise`, or use warm_start = \"none\" in sdd_control()."))
  res$alpha
}
