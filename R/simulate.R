#' Posterior function samples
#'
#' Draws of the latent function \eqn{f}{f} from the posterior, at new inputs, in
#' the units of the original target. Each draw is a pathwise sample
#' \eqn{f(x_*) = \mu(x_*) + f_0(x_*) - k(x_*, X) \alpha_s}{f(x_(*)) = mu(x_(*)) + f_0(x_(*)) - k(x_(*), X) alpha_s}: a random-feature
#' prior draw \eqn{f_0}{f_0} corrected by the solution \eqn{\alpha_s}{alpha_s} of
#' \eqn{(K + \lambda I) \alpha_s = f_0(X) + \zeta}{(K + lambda I) alpha_s = f_0(X) + zeta}.
#'
#' With `seed = NULL` and `nsim` no larger than the number of samples drawn at
#' fit time, the first `nsim` of those are returned (fast: no solve).
#' Otherwise `nsim` new samples are drawn, which costs one solve with the
#' fit's solver and settings; `seed` makes them reproducible (and, as in
#' [stats::simulate()], leaves the global random state as it was).
#'
#' @param object An `sddgp` fit.
#' @param nsim Number of sample paths.
#' @param seed `NULL`, or an integer seed for new draws.
#' @param newdata Inputs as for [predict.sddgp()]; missing: the training
#'   inputs. Rows more than 1000 length scales outside the range of the
#'   training inputs, where [predict.sddgp()] gives the prior, are an error
#'   (class `sddgp_error_argument`): the random features of the sample paths
#'   are not evaluated that far out.
#' @param threads Number of threads; `NULL` uses [sddgp_threads()].
#' @param ... Unused.
#' @return A data frame with one row per input and columns `sim_1`, ...,
#'   `sim_<nsim>`, with attribute `"seed"` when `seed` was given.
#' @examples
#' set.seed(2)
#' x <- matrix(seq(0, 1, length.out = 100))
#' y <- sin(8 * x[, 1]) + rnorm(100, sd = 0.1)
#' fit <- gp_sdd(x, y, kernel = matern(5/2, lengthscale = 0.4, variance = 1),
#'               noise = 0.01, solver = "cholesky", samples = 8, threads = 1)
#' draws <- simulate(fit, nsim = 3, newdata = matrix(c(0.25, 0.5, 0.75)))
#' draws
#' @importFrom stats simulate
#' @export
simulate.sddgp <- function(object, nsim = 1, seed = NULL, newdata, threads = NULL, ...) {
  check_dots_empty(...)
  check_number(nsim, "nsim", lower = 1, upper = 1e5, integer = TRUE)
  threads <- sddgp_threads(threads)
  xnew <- if (missing(newdata)) object$x else check_near(object, new_inputs(object, newdata))

  if (is.null(seed) && nsim <= ncol(object$alpha_samples)) {
    keep <- seq_len(nsim)
    alpha_s <- object$alpha_samples[, keep, drop = FALSE]
    prior <- object$prior
    prior$weights <- prior$weights[, keep, drop = FALSE]
  } else {
    if (!is.null(seed)) {
      check_number(seed, "seed", lower = -.Machine$integer.max,
                   upper = .Machine$integer.max, integer = TRUE)
      restore <- preserve_random_state()
      on.exit(restore())
      set.seed(seed)
    }
    draws <- draw_posterior_samples(object, nsim, threads)
    alpha_s <- draws$alpha
    prior <- draws$prior
  }
  sc <- object$scaling
  paths <- matrix(0, nrow(xnew), nsim)
  pieces <- chunks(nrow(xnew), 4096L)
  for (i in progress_along(pieces, "Evaluating sample paths")) {
    rows <- pieces[[i]]
    post <- posterior_at(object, xnew[rows, , drop = FALSE], TRUE, threads,
                         alpha_samples = alpha_s, prior = prior)
    paths[rows, ] <- unstandardize(post$mean + post$centred, sc$y_center, sc$y_scale)
  }
  out <- as.data.frame(paths)
  names(out) <- paste0("sim_", seq_len(nsim))
  if (!is.null(seed)) attr(out, "seed") <- seed
  out
}

# New posterior samples for a fitted model: prior draws and one solve, with
# the solver state of the fit (step sizes, inducing points, features) so
# that they are consistent with its mean.
draw_posterior_samples <- function(object, nsim, threads) {
  prior <- draw_prior(object$kernel, object$d, object$control$features, nsim)
  problem <- new_problem(object$x, NULL, object$kernel, observation_noise(object),
                         prior, threads)
  sol <- run_solver(object$solver, problem, object$control, threads, state = object$state)
  list(alpha = sol$alpha, prior = prior)
}

preserve_random_state <- function() {
  had_seed <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
  old <- if (had_seed) get(".Random.seed", envir = globalenv())
  function() {
    if (had_seed) assign(".Random.seed", old, envir = globalenv())
    else if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) {
      rm(".Random.seed", envir = globalenv())
    }
  }
}
