#' Settings of doubly stochastic functional gradients
#'
#' `solver = "dsg"` fits the posterior mean by the doubly stochastic
#' functional gradients of Dai et al. (2014): kernel ridge regression with
#' the averaged loss \eqn{\frac{1}{2}(f(x) - y)^2}{1/2(f(x) - y)^2} and regulariser
#' \eqn{\frac{\nu}{2}\|f\|_H^2}{nu/2||f||_H^2}, \eqn{\nu = \lambda / n}{nu = lambda / n}, whose minimiser is
#' the GP posterior mean \eqn{k(\cdot, X)(K + \lambda I)^{-1} y}{k(*, X)(K + lambda I)^(-1) y}. Step
#' \eqn{t}{t} draws `batch_size` data points and a block of `block_size` random
#' Fourier features (regenerated from a seed, never stored), evaluates the
#' current function at the batch from all earlier blocks, shrinks all older
#' coefficients by \eqn{1 - \gamma_t \nu}{1 - gamma_t nu} and appends the block's
#' coefficients \eqn{-\gamma_t B^{-1} \sum_j (f(x_j) - y_j) \phi_{t,k}(x_j)}{-gamma_t B^(-1) sum_j (f(x_j) - y_j) phi_t,k(x_j)}.
#' With a noise variance per observation the loss of point \eqn{i}{i} is
#' weighted by \eqn{\bar\lambda / \lambda_i}{lambda_bar / lambda_i} (with \eqn{\nu = \bar\lambda /
#' n}{nu = lambda_bar / n}), which makes the minimiser the heteroscedastic posterior mean exactly.
#'
#' **Cost.** Step \eqn{t}{t} evaluates \eqn{t}{t} blocks of features at the batch,
#' so it costs \eqn{O(t \cdot r B d)}{O(t * r B d)} and a run \eqn{O(T^2 r B d / 2)}{O(T^2 r B d / 2)}: that
#' is the method. Memory is the \eqn{T r}{T r} coefficients per right-hand side;
#' predictions replay the features from the seed, \eqn{O(T r d)}{O(T r d)} per point.
#' The defaults (\eqn{T = 500}{T = 500}, \eqn{r = 64}{r = 64}, \eqn{B = 256}{B = 256}) make about
#' \eqn{2 \cdot 10^9}{2 * 10^9} feature evaluations, each a cosine: on a problem of the
#' size of pol (13500 points, 26 inputs, no samples) that took about 80 s
#' of CPU time. Each posterior sample adds a multiply-add per evaluation.
#'
#' **Step size.** The step is \eqn{\gamma_t = \gamma_0 / (1 + t /}{gamma_t = gamma_0 / (1 + t /}
#' `step_decay`\eqn{)}{)}, the paper's \eqn{\theta / (t + t_0)}{theta / (t + t_0)} with
#' \eqn{t_0 =}{t_0 =} `step_decay` and \eqn{\theta = \gamma_0 t_0}{theta = gamma_0 t_0}. The theory asks
#' for \eqn{\theta \nu \in (1, 2)}{theta nu in (1, 2)}, i.e. \eqn{t_0 \approx n / (\gamma_0
#' \lambda)}{t_0 ~= n / (gamma_0 lambda)}: far more steps than any run takes, so the default is a
#' constant step (`step_decay = Inf`). By default \eqn{\gamma_0}{gamma_0} is
#' `step_fraction` times an estimated stability limit \eqn{2 / c}{2 / c} with
#' curvature \eqn{c = \lambda_{max}(K + \lambda I) / n + \sigma_f^2 / r +
#' 4 \sigma_f^2 / \sqrt{r B}}{c = lambda_max(K + lambda I) / n + sigma_f^2 / r + 4 sigma_f^2 / sqrt(r B)}: the first term is that of the full-batch functional gradient step (estimated
#' as for [sdd_control()], with a per-point term for small batches), the
#' others the extra curvature of one step's random features at its batch
#' (with an empirical safety factor). With heteroscedastic noise it is
#' divided by the largest loss weight, so widely varying noise makes the
#' steps small. The step size is kept for later [simulate()] calls. A run
#' whose probed residual (below) exceeds twice its starting value stops
#' with an error of class `sddgp_error_divergence`.
#'
#' **Accuracy.** After \eqn{T}{T} steps the mean is, roughly, that of an
#' early-stopped gradient flow: directions of \eqn{K}{K} with eigenvalue below
#' about \eqn{n / \sum_t \gamma_t}{n / sum_t gamma_t} are not fitted yet, which for large
#' \eqn{n}{n} and small noise means a much smoother mean than the exact
#' posterior's. On top of that it carries the Monte Carlo error of its
#' random features and batches. On 2000 points in 4 dimensions the default
#' run's mean was 18 per cent (relative) away from the exact posterior mean,
#' and the noise-free full-batch gradient flow with the same steps itself 16
#' per cent; on 5000 points in 8 dimensions DSG was 35-55 per cent away.
#' For GP regression the ablation of Lin et al. (2024) found random-feature
#' gradients slower and noisier than SDD's random coordinates, and their
#' accuracy is limited by the random features: prefer `solver = "sdd"`;
#' DSG is here as a baseline, accurate only for small or strongly
#' regularised problems.
#'
#' The trace's `residual` is the relative training residual
#' \eqn{\|f(X_P) - y_P\| / \|y_P\|}{||f(X_P) - y_P|| / ||y_P||} on a fixed probe of `probe_size`
#' training points. It tends to the exact posterior mean's own relative
#' residual, not to 0.
#'
#' @param iterations Number of steps \eqn{T}{T}.
#' @param batch_size Data points per step \eqn{B}{B}, drawn uniformly with
#'   replacement.
#' @param block_size Random features per step \eqn{r}{r}.
#' @param step_size Initial step size \eqn{\gamma_0}{gamma_0}, or `NULL` to choose it
#'   from the data (see Details). Must satisfy \eqn{\gamma_0 \lambda / n <
#'   1}{gamma_0 lambda / n < 1}.
#' @param step_decay Steps after which the step size has halved, \eqn{t_0}{t_0};
#'   `Inf` keeps it constant.
#' @param step_fraction Fraction of the estimated stability limit used when
#'   `step_size` is `NULL`.
#' @param check_every Steps between the records of the convergence trace.
#' @param probe_size Training points of the residual probe.
#' @param features Random Fourier features of the prior draws behind
#'   posterior samples.
#' @return An object of class `sddgp_control`.
#' @references Dai, B., Xie, B., He, N., Liang, Y., Raj, A., Balcan, M.-F.
#'   and Song, L. (2014). Scalable kernel methods via doubly stochastic
#'   gradients. *NeurIPS*.
#'
#'   Lin, J. A., Padhy, S., Antoran, J., Tripp, A., Terenin, A.,
#'   Szepesvari, C., Hernandez-Lobato, J. M. and Janz, D. (2024). Stochastic
#'   gradient descent for Gaussian processes done right. *ICLR*.
#' @examples
#' dsg_control(iterations = 500, block_size = 32)
#'
#' set.seed(1)
#' x <- matrix(runif(200), ncol = 2)
#' y <- sin(6 * x[, 1]) + rnorm(100, sd = 0.1)
#' fit <- gp_sdd(x, y, kernel = matern(3/2, lengthscale = 0.5, variance = 1),
#'               noise = 0.05, solver = "dsg",
#'               control = dsg_control(iterations = 100, batch_size = 32,
#'                                     block_size = 32),
#'               threads = 1)
#' predict(fit, x[1:3, ])
#' @export
dsg_control <- function(iterations = 500, batch_size = 256, block_size = 64,
                        step_size = NULL, step_decay = Inf, step_fraction = 0.5,
                        check_every = 50, probe_size = 256, features = 2000) {
  check_number(iterations, "iterations", lower = 1, upper = .Machine$integer.max,
               integer = TRUE)
  check_number(batch_size, "batch_size", lower = 1, upper = 1e6, integer = TRUE)
  check_number(block_size, "block_size", lower = 1, upper = 1e5, integer = TRUE)
  if (iterations * block_size > .Machine$integer.max) {
    abort_argument("block_size", sprintf(
      "times `iterations` is %s features, more than the %d a run can hold",
      format(iterations * block_size), .Machine$integer.max))
  }
  if (!is.null(step_size)) check_number(step_size, "step_size", lower = 0, lower_open = TRUE)
  if (!is.numeric(step_decay) || length(step_decay) != 1L || is.na(step_decay) ||
      step_decay <= 0) {
    abort_argument("step_decay", "must be a single positive number (Inf: constant step)")
  }
  check_number(step_fraction, "step_fraction", lower = 0, upper = 1, lower_open = TRUE)
  check_number(check_every, "check_every", lower = 1, upper = .Machine$integer.max,
               integer = TRUE)
  check_number(probe_size, "probe_size", lower = 1, upper = 1e6, integer = TRUE)
  new_control("dsg", list(
    iterations = as.integer(iterations), batch_size = as.integer(batch_size),
    block_size = as.integer(block_size), step_size = step_size,
    step_decay = as.numeric(step_decay), step_fraction = step_fraction,
    check_every = as.integer(check_every), probe_size = as.integer(probe_size)),
    features)
}

# gamma_0 from the data, as step_fraction times 2 / curvature.  Without
# random features the step u <- u - gamma ((K W / n)(u - y) + nu u) on the
# training predictions u has the curvature of SDD's dual step without
# momentum: lambda_max(K + lambda I) / n, or the per-point term
# (sigma_f^2 + lambda) / B for small batches (sdd_step_limit(momentum = 0) is
# 2 / that curvature).  One step's features add to it: the r x r matrix
# Phi_B' Phi_B / (r B) of the block at the batch has sigma_f^2 / r on its
# diagonal and entries fluctuating by sigma_f^2 / (r sqrt(B)), which lift
# its top eigenvalue by about 2 sigma_f^2 / sqrt(r B) (random-matrix edge).
# We add sigma_f^2 / r + 4 sigma_f^2 / sqrt(r B): the factor 4 is an
# empirical margin, measured (2-4 inputs, r = 8-128, B = 32-256, length
# scales giving lambda_max / n from 0.05 to 0.3) to put the limit at or
# below the step where the probed residual starts to grow.  The loss
# weights W raise lambda_max(K W) by up to max(W).
dsg_step_size <- function(control, problem, weights, threads) {
  r <- control$block_size
  B <- control$batch_size
  s2 <- problem$kernel$variance
  curvature <- 2 / sdd_step_limit(problem$xs, problem$kernel, problem$noise,
                                  momentum = 0, batch_size = B, threads = threads) +
    s2 / r + 4 * s2 / sqrt(r * B)
  control$step_fraction * 2 / curvature / max(weights)
}

# The features are drawn from a seed kept in the state, so that sample
# systems solved later (simulate() with a seed) use the basis of the mean.
solve_dsg <- function(problem, control, threads, state) {
  n <- nrow(problem$x)
  weights <- mean(problem$noise) / problem$noise
  step <- state$step_size[["mean"]] %||% control$step_size %||%
    dsg_step_size(control, problem, weights, threads)
  if (step * mean(problem$noise) / n >= 1) {
    abort_argument("step_size", sprintf(paste(
      "is %s, but the regularisation decay 1 - step_size * noise / n must stay",
      "positive: use a step size below %s"), format(signif(step, 4)),
      format(signif(n / mean(problem$noise), 4))))
  }
  feature_seed <- state$feature_seed %||% new_seed()
  settings <- dsg_settings(control, step, feature_seed)
  settings$progress <- progress_solver("DSG", settings$iterations)
  res <- .Call(C_dsg_solve, problem$xs, kernel_spec(problem$kernel), problem$noise,
               problem$rhs, settings, threads)
  status <- raise_status(decode_status(res), "dsg", res$iterations, sprintf(paste(
    "The step size was %s; use a smaller `step_size` (or `step_fraction`)",
    "in dsg_control()."), format(signif(step, 4))), step_size = step)
  list(alpha = res$alpha, iterations = res$iterations, status = status,
       trace = solver_trace(res$trace, mean_systems(problem)),
       basis = list(type = "dsg", seed = feature_seed, block = control$block_size,
                    iterations = control$iterations),
       state = list(feature_seed = feature_seed, step_size = c(mean = step, samples = step)))
}

# The fields of dsg_options (src/dsg.h) and of its basis (dsg_basis: `block`
# features per step, drawn from `feature_seed`).  The seed of the batches is
# drawn here.
dsg_settings <- function(control, step_size, feature_seed) {
  list(iterations = control$iterations, batch_size = control$batch_size,
       step_size = as.numeric(step_size), step_decay = control$step_decay,
       check_every = control$check_every, probe_size = control$probe_size,
       seed = new_seed(), block = control$block_size, feature_seed = feature_seed)
}

# basis(x) %*% A for a DSG basis at standardised inputs x, replaying its
# features from the seed.
dsg_matmul <- function(basis, kernel, x, A, threads) {
  out <- .Call(C_dsg_matmul, scale_inputs(x, kernel), kernel_spec(kernel), basis$seed,
               as.integer(basis$block), as.integer(basis$iterations * basis$block),
               A, threads)
  if (is.null(out)) {
    sddgp_abort("DSG could not allocate the memory to evaluate its basis.",
                class = "sddgp_error_memory")
  }
  out
}
