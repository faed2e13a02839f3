#' Settings of the SGD solver (Lin et al. 2023)
#'
#' `solver = "sgd"` is the stochastic gradient descent baseline of Lin,
#' Antoran, Padhy et al. (2023), the method SDD improves on: minibatch
#' gradients of the *primal* objective
#' \eqn{\frac12\|b_{err} - K\alpha\|^2 + \frac{\lambda}{2}\|\alpha -
#' b_{reg}/\lambda\|_K^2}{(1/2) ||b_err - K a||^2 + (lambda/2) ||a - b_reg/lambda||_K^2},
#' estimated at every step from a batch \eqn{I}{I} of `batch_size` rows and
#' `regularizer_features` random Fourier features \eqn{L}{L} (\eqn{L L^\top
#' \approx K}{L L' ~ K}), redrawn every step:
#' \deqn{g = [\tfrac{n}{B} K_I^\top (K_I \alpha - b_{err,I}) +
#'   L L^\top (\lambda \alpha - b_{reg})] / n.}{g = [(n/B) K_I' (K_I a - b_err[I]) + L L' (lambda a - b_reg)] / n.}
#' For the posterior mean \eqn{b_{err} = y}{b_err = y} and \eqn{b_{reg} = 0}{b_reg = 0}; for a
#' posterior sample \eqn{b_{err} = f_0(X)}{b_err = f_0(X)} and \eqn{b_{reg} = \zeta}{b_reg = zeta}, the
#' sample's noise draw (the low-variance objective of Lin et al. 2023). The
#' expected gradient is \eqn{K[(K + \lambda I)\alpha - b]/n}{K[(K + lambda I)alpha - b]/n}, so the iterates
#' approach the same solution as SDD's, but through the square of the kernel
#' matrix: much more slowly along its small eigenvalues, and the random
#' features leave a noise floor that only the iterate averaging reduces.
#' The loop is SDD's (`sdd_control(objective = "primal")`): Nesterov
#' momentum, iterate averaging, residual checks, divergence detection and
#' the trace metrics are the same, as is the scaling by \eqn{1/n}{1/n} that makes
#' the step size the paper's \eqn{\beta n}{beta n}. With `batch_size` at least `n`
#' the gradient is exact (full-batch gradient descent on the primal).
#'
#' The defaults are those of the reference implementation: step size 0.5
#' for the mean and 0.1 for the samples (not chosen from the data: the
#' primal iteration is stable only for step sizes far below SDD's, roughly
#' below \eqn{n / \lambda_{max}(K)^2}{n / lambda_max(K)^2}), batches of 512, 100 regulariser
#' features, momentum 0.9, geometric averaging with rate 100 / `iterations`,
#' and gradient clipping at global L2 norm 0.1 of the \eqn{1/n}{1/n}-scaled
#' gradient, applied to the posterior mean's system only (as in the
#' reference code; the sample systems were never clipped).
#'
#' @inheritParams sdd_control
#' @param iterations Number of SGD steps.
#' @param batch_size Rows of the data-fit term per step (capped at the number
#'   of data; `n` or more means the exact gradient).
#' @param step_size Step size \eqn{\beta n}{beta n} for the posterior mean.
#' @param step_size_samples Step size for the posterior-sample systems;
#'   `NULL` uses the mean's.
#' @param regularizer_features Random Fourier features of the regulariser,
#'   drawn afresh at every step.
#' @param clip Largest global L2 norm of the posterior mean's
#'   \eqn{1/n}{1/n}-scaled gradient (larger gradients are scaled down to it), or
#'   `NULL` for no clipping (kept as `Inf`). The sample systems are never
#'   clipped.
#' @return An object of class `sddgp_control`.
#' @references Lin, J. A., Antoran, J., Padhy, S., Janz, D., Hernandez-Lobato,
#'   J. M. and Terenin, A. (2023). Sampling from Gaussian process posteriors
#'   using stochastic gradient descent. *NeurIPS*.
#' @seealso [sdd_control()], whose `objective` and `estimator` arguments
#'   give the other gradient estimators of the SDD paper's ablations.
#' @examples
#' sgd_control()
#' sgd_control(iterations = 20000, step_size = 0.3, clip = NULL)
#' @export
sgd_control <- function(iterations = 10000, batch_size = 512, step_size = 0.5,
                        step_size_samples = 0.1, momentum = 0.9,
                        averaging = c("geometric", "none", "arithmetic"),
                        averaging_rate = NULL, averaging_start = NULL,
                        batch_sampling = c("uniform", "permutation"),
                        regularizer_features = 100, clip = 0.1, tolerance = 0,
                        time_limit = Inf, check_every = 100, probe_size = 256, trace_every = NULL,
                        trace_at = NULL, reference = NULL, test_x = NULL,
                        test_y = NULL, features = 2000,
                        cache = c("auto", "always", "never"), cache_limit = 2e9,
                        precision = c("double", "single")) {
  loop <- loop_settings(iterations, batch_size, momentum, averaging, averaging_rate,
                        averaging_start, batch_sampling, tolerance, time_limit,
                        check_every, probe_size, cache, cache_limit, precision)
  check_number(step_size, "step_size", lower = 0, lower_open = TRUE)
  if (!is.null(step_size_samples)) {
    check_number(step_size_samples, "step_size_samples", lower = 0, lower_open = TRUE)
  }
  check_number(regularizer_features, "regularizer_features", lower = 1, upper = 1e5,
               integer = TRUE)
  if (!is.null(clip)) check_number(clip, "clip", lower = 0, lower_open = TRUE)
  clip <- clip %||% Inf
  trace <- trace_settings(trace_every, trace_at, reference, test_x, test_y,
                          loop$iterations, loop$check_every)
  loop_control("sgd", loop, step_size, step_size_samples,
               own = list(regularizer_features = as.integer(regularizer_features),
                          clip = clip),
               trace = trace, features = features)
}

# SGD is SDD's loop with the primal estimator; its step sizes are the
# user's (kept in the state like SDD's, for summary() and simulate()).
solve_sgd <- function(problem, control, threads, state) {
  steps <- c(mean = control$step_size,
             samples = control$step_size_samples %||% control$step_size)
  clip <- if (is.finite(control$clip) && problem$has_mean) {
    per_system(control$clip, 0, problem)
  }
  lr <- per_system(steps[["mean"]], steps[["samples"]], problem)
  sol <- run_sdd_loop(problem, sdd_settings(control, problem, "primal", "coordinates",
                                            control$regularizer_features, lr, clip),
                      threads, label = "SGD")
  raise_status(sol$status, "sgd", sol$iterations, sprintf(paste(
    "The step size was %s; use a smaller `step_size` (or `step_size_samples`)",
    "in sgd_control()."), format(signif(max(lr), 4))), step_size = max(lr))
  sol$state <- list(step_size = steps)
  sol
}
