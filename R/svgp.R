#' Settings of the sparse variational GP solver
#'
#' `solver = "svgp"` fits the sparse variational Gaussian process of Titsias
#' (2009): `inducing` inducing points \eqn{Z}{Z} and the optimal Gaussian
#' \eqn{q(u)}{q(u)} in closed form (the collapsed bound), with the kernel
#' hyperparameters and noise of the fit held fixed. It approximates the exact
#' posterior, which it recovers when the inducing points are the training
#' inputs.
#'
#' The inducing points are chosen by k-means++ seeding (Arthur and
#' Vassilvitskii 2007) on the inputs divided by their length scales, followed
#' by `kmeans_iterations` Lloyd iterations. With
#' \eqn{K_{mm} = k(Z, Z) + \epsilon \sigma_f^2 I}{K_mm = k(Z, Z) + epsilon sigma_f^2 I} (\eqn{\epsilon}{epsilon} = `jitter`,
#' relative to the kernel variance, keeps the Cholesky factorisation stable
#' when inducing points nearly coincide), \eqn{K_{mn} = k(Z, X)}{K_mn = k(Z, X)} and
#' \eqn{\Lambda}{Lambda} the diagonal matrix of noise variances,
#' \eqn{\Sigma = (K_{mm} + K_{mn} \Lambda^{-1} K_{nm})^{-1}}{Sigma = (K_mm + K_mn Lambda^(-1) K_nm)^(-1)}; the posterior
#' mean is \eqn{k(x, Z) a}{k(x, Z) a} with \eqn{a = \Sigma K_{mn} \Lambda^{-1} y}{a = Sigma K_mn Lambda^(-1) y}, and
#' \eqn{q(u) = N(K_{mm} a, K_{mm} \Sigma K_{mm})}{q(u) = N(K_mm a, K_mm Sigma K_mm)}. The evidence lower bound
#' \eqn{\log N(y \mid 0, Q_{nn} + \Lambda) -
#' \mathrm{tr}(\Lambda^{-1}(K_{nn} - Q_{nn}))/2}{log N(y | 0, Q_nn + Lambda)
#' - tr(Lambda^-1 (K_nn - Q_nn)) / 2} with
#' \eqn{Q_{nn} = K_{nm} K_{mm}^{-1} K_{mn}}{Q_nn = K_nm K_mm^(-1) K_mn} is kept as `fit$state$elbo`.
#' A fit takes \eqn{O(n M^2)}{O(n M^2)} time and \eqn{O(M^2)}{O(M^2)} memory: the data are
#' processed in chunks, so no \eqn{n \times M}{n x M} matrix is stored. The fit
#' keeps two \eqn{M \times M}{M x M} Cholesky factors (in `fit$state`) for drawing
#' further posterior samples.
#'
#' With `optimize_inducing > 0` the inducing locations are then refined by
#' that many Adam steps up the bound, using its exact gradient; each step costs
#' about as much as two fits. The bound at every iterate is recorded in
#' `fit$trace` (column `elbo`) and the fit keeps the best inducing points
#' visited, so refinement never lowers the bound. A step size too large for
#' the problem can make the iterates blow up, which is reported as an error of
#' class `sddgp_error_divergence`.
#'
#' Posterior samples are drawn by pathwise conditioning (Wilson et al. 2020):
#' \eqn{f_0(x) + k(x, Z) K_{mm}^{-1} (u_s - f_0(Z))}{f_0(x) + k(x, Z) K_mm^(-1) (u_s - f_0(Z))} with
#' \eqn{u_s \sim q(u)}{u_s ~ q(u)}
#' and \eqn{f_0}{f_0} a random Fourier feature prior draw.
#'
#' @param inducing Number of inducing points \eqn{M}{M} (capped at the number of
#'   data).
#' @param kmeans_iterations Lloyd iterations after the k-means++ seeding (they
#'   stop early once no point changes cluster); 0 keeps the seeds, which are
#'   training inputs.
#' @param optimize_inducing Adam steps refining the inducing locations on the
#'   evidence lower bound; 0 keeps the k-means centres.
#' @param learning_rate Adam step size, in units of the length scales.
#' @param jitter Added to the diagonal of \eqn{K_{mm}}{K_mm}, relative to the kernel
#'   variance.
#' @param features Random Fourier features of the prior draws behind
#'   posterior samples.
#' @return An object of class `sddgp_control`.
#' @references Titsias, M. (2009). Variational learning of inducing variables
#'   in sparse Gaussian processes. *AISTATS*.
#'
#'   Arthur, D. and Vassilvitskii, S. (2007). k-means++: the advantages of
#'   careful seeding. *SODA*.
#'
#'   Wilson, J. T., Borovitskiy, V., Terenin, A., Mostowsky, P. and Deisenroth,
#'   M. P. (2020). Efficiently sampling functions from Gaussian process
#'   posteriors. *ICML*.
#' @examples
#' svgp_control(inducing = 500, optimize_inducing = 20)
#'
#' set.seed(1)
#' x <- matrix(runif(600), ncol = 2)
#' y <- sin(6 * x[, 1]) + x[, 2]^2 + rnorm(300, sd = 0.1)
#' fit <- gp_sdd(x, y, kernel = matern(3/2, lengthscale = c(0.3, 0.6), variance = 1),
#'               noise = 0.02, control = svgp_control(inducing = 40),
#'               samples = 8, threads = 1)
#' fit$state$elbo
#' predict(fit, x[1:3, ], interval = "confidence")
#' @export
svgp_control <- function(inducing = 3000, kmeans_iterations = 10,
                         optimize_inducing = 0, learning_rate = 0.01,
                         jitter = 1e-6, features = 2000) {
  check_number(inducing, "inducing", lower = 1, upper = .Machine$integer.max,
               integer = TRUE)
  check_number(kmeans_iterations, "kmeans_iterations", lower = 0, upper = 1e6,
               integer = TRUE)
  check_number(optimize_inducing, "optimize_inducing", lower = 0, upper = 1e6,
               integer = TRUE)
  check_number(learning_rate, "learning_rate", lower = 0, lower_open = TRUE)
  check_number(jitter, "jitter", lower = 0, upper = 1)
  new_control("svgp", list(
    inducing = as.integer(inducing), kmeans_iterations = as.integer(kmeans_iterations),
    optimize_inducing = as.integer(optimize_inducing), learning_rate = learning_rate,
    jitter = jitter), features)
}

# The fit (inducing points, mean coefficients, the factors behind q(u) and
# the ELBO) is the state: new samples need only it, never the data.
solve_svgp <- function(problem, control, threads, state) {
  fitted <- if (is.null(state)) svgp_fit(problem, control, threads)
  state <- state %||% fitted$state
  alpha <- if (problem$has_mean) matrix(state$coefficients, ncol = 1L)
  if (!is.null(problem$prior)) {
    alpha <- cbind(alpha, svgp_sample_coefficients(state, problem$prior, problem$kernel,
                                                   threads))
  }
  list(alpha = alpha, basis = list(type = "points", x = state$inducing), state = state,
       iterations = fitted$iterations %||% 0L, status = fitted$status %||% "exact",
       trace = fitted$trace %||% svgp_trace(integer(), numeric(), numeric()))
}

# The closed-form fit at k-means inducing points, or at `inducing` (in the
# standardised units of problem$x) when given.
svgp_fit <- function(problem, control, threads, inducing = NULL) {
  kernel <- problem$kernel
  unscale <- function(zs) zs * rep(kernel$lengthscale, each = nrow(zs))
  # The fit sees the inducing points as predictions will: scale_inputs() of
  # the standardised points kept in the basis.
  z <- inducing %||% unscale(svgp_kmeans(problem$xs, min(control$inducing, nrow(problem$xs)),
                                         control$kmeans_iterations, threads)$centres)
  res <- .Call(C_svgp_fit, problem$xs, kernel_spec(kernel), problem$noise, problem$y,
               scale_inputs(z, kernel), svgp_settings(control), threads)
  if (res$not_positive_definite) {
    sddgp_abort(paste(
      "The Cholesky factorisation of the inducing points' kernel matrix failed:",
      "it is not numerically positive definite. Increase `jitter` in",
      "svgp_control()."), class = "sddgp_error_numerical")
  }
  r <- res$result
  status <- raise_status(decode_status(r), "svgp", r$iterations, sprintf(paste(
    "The learning rate was %s; use a smaller `learning_rate` in svgp_control()."),
    format(control$learning_rate)), learning_rate = control$learning_rate)
  refined <- control$optimize_inducing > 0L
  list(state = list(inducing = if (refined) unscale(res$inducing) else z,
                    coefficients = drop(r$alpha), chol_kmm = res$chol_kmm,
                    chol_b = res$chol_b, elbo = res$elbo),
       iterations = r$iterations,
       status = if (refined) status else "exact",
       trace = svgp_trace(r$trace$iteration, r$trace$seconds, r$trace$elbo))
}

# The settings of src/svgp.h: svgp_problem's jitter, and the iterations
# and learning rate of svgp_fit()'s refinement.
svgp_settings <- function(control) {
  list(jitter = control$jitter, iterations = control$optimize_inducing,
       learning_rate = control$learning_rate)
}

# k-means++ seeds and Lloyd iterations on the scaled inputs xs.
svgp_kmeans <- function(xs, m, iterations, threads) {
  res <- .Call(C_kmeans, xs, as.integer(m), as.integer(iterations), new_seed(), threads)
  raise_status(decode_status(res), "svgp", res$iterations, "")
  res
}

# Sample coefficients in the package's convention (sample = mean + f0 -
# basis alpha_s): with u_s = Kmm a + L LB^-T xi_s ~ q(u),
# alpha_s = a - Kmm^-1 (u_s - f0_s(Z)) = L^-T (L^-1 f0_s(Z) - LB^-T xi_s).
svgp_sample_coefficients <- function(state, prior, kernel, threads) {
  L <- state$chol_kmm
  m <- nrow(L)
  s <- ncol(prior$weights)
  f0z <- prior_values(prior, kernel, state$inducing, threads)
  xi <- matrix(.Call(C_rng_normal, new_seed(), "weights", as.numeric(m) * s), m, s)
  backsolve(L, forwardsolve(L, f0z) -
              backsolve(state$chol_b, xi, upper.tri = FALSE, transpose = TRUE),
            upper.tri = FALSE, transpose = TRUE)
}

# The trace of inducing-point refinement: the ELBO at each iterate (the
# residual columns every trace has do not apply).
svgp_trace <- function(iteration, seconds, elbo) {
  na <- rep(NA_real_, length(iteration))
  data.frame(iteration = iteration, seconds = seconds, residual = na,
             residual_samples = na, elbo = elbo)
}
