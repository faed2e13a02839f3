#' Posterior function samples
#'
#' Draws of the latent function \eqn{f}{f} from the posterior (or, with `type =
#' "response"`, of new observations \eqn{y = f + \epsilon}{y = f + epsilon}) at
#' new inputs, in the units of the original target. Each draw of \eqn{f}{f} is a
#' pathwise sample \eqn{f(x_*) = \mu(x_*) + f_0(x_*) - k(x_*, X) \alpha_s}{f(x*)
#' = mu(x*) + f0(x*) - k(x*, X) alpha_s}: a random-feature prior draw
#' \eqn{f_0}{f0} corrected by the solution \eqn{\alpha_s}{alpha_s} of \eqn{(K +
#' \lambda I) \alpha_s = f_0(X) + \zeta}{(K + lambda I) alpha_s = f0(X) + zeta}.
#'
#' As [stats::simulate()], every call draws afresh from R's random number
#' generator, unless `seed` is given: then the draws are reproducible, and
#' the global random state is left as it was. Fresh draws of \eqn{f}{f} cost
#' one solve with the fit's solver and settings (for `nsim` right-hand
#' sides at once). `stored = TRUE` instead returns the first `nsim` of the
#' samples drawn at fit time (`samples` in [gp_sdd()]): no solve, and the
#' same paths on every call (they are the ones behind [predict.sddgp()]'s
#' standard errors).
#'
#' @param object An `sddgp` fit.
#' @param nsim Number of sample paths.
#' @param seed `NULL`, or an integer seed for reproducible draws.
#' @param newdata Inputs as for [predict.sddgp()]; missing: the training
#'   inputs. Rows with missing values give `NA` draws. Rows more than 1000
#'   length scales outside the range of the training inputs, where
#'   [predict.sddgp()] gives the prior, are an error (class
#'   `sddgp_error_argument`): the random features of the sample paths are
#'   not evaluated that far out.
#' @param type `"function"`: draws of the latent function \eqn{f}{f};
#'   `"response"`: draws of new observations, \eqn{f}{f} plus Gaussian noise of
#'   variance `noise / weights`.
#' @param weights For `type = "response"`: weights of the new observations
#'   (noise variance `noise / weights`), one value or one per row of
#'   `newdata`; `NULL`: 1 for `newdata`, and the fit's weights at the
#'   training inputs.
#' @param stored Return the fit's stored samples rather than fresh draws
#'   (`nsim` at most their number; see Details).
#' @param threads Number of threads; `NULL` uses [sddgp_threads()].
#' @param parallel `NULL`, [sddgp_future()] to solve the fresh draws'
#'   systems in chunks and evaluate the paths in blocks of rows as futures
#'   on the current [future::plan()], or [sddgp_mpi()] (in a script run by
#'   `mpirun`) to share their solve among the MPI processes; with the same
#'   result. Default `getOption("sddgp.parallel")`.
#' @param ... Unused.
#' @return A data frame with one row per input and columns `sim_1`, ...,
#'   `sim_<nsim>`, with attribute `"seed"` as [stats::simulate()] sets it:
#'   the value of `.Random.seed` before the draws when `seed` is `NULL`,
#'   else `seed` with attribute `"kind"` ([RNGkind()]).
#' @examples
#' set.seed(2)
#' x <- matrix(seq(0, 1, length.out = 100))
#' y <- sin(8 * x[, 1]) + rnorm(100, sd = 0.1)
#' fit <- gp_sdd(x, y, kernel = matern(5/2, lengthscale = 0.4, variance = 1),
#'               noise = 0.01, solver = "cholesky", samples = 8, threads = 1)
#' draws <- simulate(fit, nsim = 3, newdata = matrix(c(0.25, 0.5, 0.75)))
#' draws
#' # new observations, reproducibly
#' simulate(fit, nsim = 3, newdata = matrix(0.5), type = "response", seed = 1)
#' # the samples stored in the fit, no solve
#' simulate(fit, nsim = 3, newdata = matrix(0.5), stored = TRUE)
#' @importFrom stats simulate
#' @export
simulate.sddgp <- function(object, nsim = 1, seed = NULL, newdata,
                           type = c("function", "response"), weights = NULL,
                           stored = FALSE, threads = NULL,
                           parallel = getOption("sddgp.parallel"), ...) {
  check_dots_empty(...)
  parallel <- check_parallel(parallel)
  check_single_output(object, "simulate()")
  check_number(nsim, "nsim", lower = 1, upper = 1e5, integer = TRUE)
  type <- choose_one(type, "type", c("function", "response"), partial = TRUE)
  check_flag(stored, "stored")
  if (stored && nsim > ncol(object$alpha_samples)) {
    abort_argument("nsim", sprintf(
      "is %d but the fit holds %d stored sample%s (`stored = TRUE`); refit with more `samples`",
      as.integer(nsim), ncol(object$alpha_samples),
      if (ncol(object$alpha_samples) == 1L) "" else "s"))
  }
  threads <- sddgp_threads(threads)
  at_training <- missing(newdata)
  xnew <- if (at_training) object$x else check_near(object, new_inputs(object, newdata))
  noise <- if (type == "response") simulation_noise(object, weights, at_training, nrow(xnew))

  # The random state as stats::simulate.lm() records it.
  if (is.null(seed)) {
    if (!exists(".Random.seed", envir = globalenv(), inherits = FALSE)) stats::runif(1)
    rng_state <- get(".Random.seed", envir = globalenv())
  } else {
    check_number(seed, "seed", lower = -.Machine$integer.max,
                 upper = .Machine$integer.max, integer = TRUE)
    restore <- preserve_random_state()
    on.exit(restore())
    set.seed(seed)
    rng_state <- structure(seed, kind = as.list(RNGkind()))
  }
  if (stored) {
    keep <- seq_len(nsim)
    alpha_s <- object$alpha_samples[, keep, drop = FALSE]
    prior <- prior_columns(object$prior, keep)
  } else {
    draws <- draw_posterior_samples(object, nsim, threads, parallel)
    alpha_s <- draws$alpha
    prior <- draws$prior
  }
  sc <- object$scaling
  paths <- matrix(NA_real_, nrow(xnew), nsim)
  complete <- which(complete_rows(xnew))
  parts <- map_pieces(xnew[complete, , drop = FALSE], chunks(length(complete), 4096L),
                      paths_piece, list(object = object, alpha = alpha_s, prior = prior),
                      parallel, threads, "Evaluating sample paths")
  if (length(parts)) paths[complete, ] <- do.call(rbind, parts)
  if (type == "response") paths <- paths + sqrt(noise) * stats::rnorm(length(paths))
  out <- as.data.frame(unstandardize_targets(paths, sc))
  names(out) <- paste0("sim_", seq_len(nsim))
  attr(out, "seed") <- rng_state
  out
}

# The noise variances (standardised units) of simulated observations, one
# per row: noise / weights, with the fit's weights at the training inputs.
simulation_noise <- function(object, weights, at_training, n) {
  if (is.null(weights)) {
    return(if (at_training) observation_noise(object) else rep(object$noise, n))
  }
  check_new_weights(weights, n)
  rep_len(object$noise / weights, n)
}

# The sample paths at the rows xc of one chunk (ctx: the fit, the samples'
# weights and prior draws).
paths_piece <- function(ctx, xc, threads) {
  post <- posterior_at(ctx$object, xc, TRUE, threads, alpha_samples = ctx$alpha,
                       prior = ctx$prior)
  post$mean + post$centred
}

# New posterior samples for a fitted model: prior draws and one solve, with
# the solver state of the fit (step sizes, inducing points, features) so
# that they are consistent with its mean; its systems in chunks over
# future's workers with `parallel`.
draw_posterior_samples <- function(object, nsim, threads, parallel = NULL) {
  prior <- draw_prior(object$kernel, object$d, object$control$features, nsim)
  problem <- new_problem(object$x, NULL, object$kernel, observation_noise(object),
                         prior, threads)
  problem$parallel <- parallel
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
