#' Settings of Caratheodory block coordinate descent
#'
#' `solver = "cabcd"` fits the random-feature approximation of the Gaussian
#' process and solves its ridge problem in the primal with Caratheodory block
#' coordinate descent (CaBCD, Cosentino, Oberhauser and Abate 2020), or for
#' comparison with plain block coordinate descent or Adam.
#'
#' **The model.** With `basis_features` = \eqn{m}{m} random Fourier features
#' \eqn{\phi(x)}{phi(x)} of the kernel (\eqn{\phi(x)^\top \phi(x') \approx k(x, x')}{phi(x)^T phi(x') ~= k(x, x')}),
#' the posterior mean is \eqn{\phi(x)^\top \theta}{phi(x)^T theta} with
#' \deqn{\theta = \arg\min_\theta \frac{1}{N} \sum_i w_i (\phi(x_i)^\top
#'   \theta - y_i)^2 + \frac{\lambda}{N} \|\theta\|^2
#'   = (\Phi^\top W \Phi + \lambda I)^{-1} \Phi^\top W y,}{theta = arg min_theta 1/N sum_i w_i (phi(x_i)^T theta - y_i)^2 + lambda/N ||theta||^2 = (Phi^T W Phi + lambda I)^(-1) Phi^T W y,}
#' where \eqn{w_i = \lambda / \mathrm{noise}_i}{w_i = lambda / noise_i} and \eqn{\lambda}{lambda} is the
#' harmonic mean of the noise variances (\eqn{w_i = 1}{w_i = 1} for a constant noise).
#' This is the exact posterior of the \eqn{m}{m}-feature model, not of the GP:
#' its accuracy is limited by \eqn{m}{m} whatever the solver does, and the
#' \eqn{N \times m}{N x m} feature matrix is kept in memory
#' (\eqn{8 N m}{8 N m} bytes). Posterior samples solve the same problem with targets
#' \eqn{f_0(X) + \zeta}{f_0(X) + zeta}.
#'
#' **The solver.** Each outer iteration of CaBCD (momentum version) takes a
#' heavy-ball step on all coordinates, chooses blocks of `block_size`
#' coordinates (Gauss-Southwell: largest gradients holding 75% of the
#' gradient's 1-norm; random: a random half), and for each block in turn
#' replaces the \eqn{N}{N} per-sample block gradients by `block_size` + 1
#' weighted samples with the same mean (Caratheodory recombination), then
#' takes up to `max_inner` momentum steps on those few samples while the
#' exact change of the loss (which uses the exact block Hessian) keeps
#' falling. It pays off when \eqn{N \gg m}{N >> m} and the blocks are
#' low-dimensional: a block's many inner steps cost about one pass over the
#' block's data. It inherits the primal problem's ill-conditioning.
#' `algorithm = "bcd"` takes one exact block gradient step per block instead
#' (no momentum); `"adam"` runs Adam (\eqn{\beta_1}{beta_1} = `momentum`,
#' \eqn{\beta_2 = 0.999}{beta_2 = 0.999}) on mini-batches of 256, one outer iteration being
#' one epoch.
#'
#' The run stops after `iterations` outer iterations, or once the relative
#' gradient norm \eqn{\|\nabla L(\theta)\| / \|\nabla L(0)\|}{||grad L(theta)|| / ||grad L(0)||} (the relative
#' residual of the normal equations) is below `tolerance` for every system.
#' The fit's `trace` holds that measure per outer iteration (`residual`,
#' `residual_samples`), the loss of the mean system (`loss`) and the data
#' passes used so far (`passes`: a gradient over all samples counts one, a
#' block's share of it `block_size` / \eqn{m}{m}, steps on recombined samples
#' and Adam's mini-batches their share of samples).
#'
#' @param basis_features Number \eqn{m}{m} of random Fourier features of the
#'   model.
#' @param block_size Coordinates per block (capped at `basis_features`);
#'   recombination costs grow with its cube, the paper uses 2 to 5.
#' @param selection `"gauss_southwell"` or `"random"` blocks.
#' @param algorithm `"cabcd"`, `"bcd"` (plain block coordinate descent) or
#'   `"adam"`.
#' @param step_size For `"cabcd"` and `"bcd"`, the step relative to the
#'   curvature: a block of \eqn{k}{k} coordinates moves by `step_size`
#'   \eqn{/ (k c)}{/ (k c)} times its gradient, where \eqn{c}{c} is the largest diagonal
#'   entry of the Hessian, so that values below 2 are stable. For `"adam"`,
#'   the learning rate. `NULL` means 1 for the block methods and 0.01 for
#'   Adam.
#' @param momentum Heavy-ball momentum of CaBCD in \[0, 1), and Adam's
#'   \eqn{\beta_1}{beta_1}.
#' @param max_inner Largest number of steps on one recombined measure (the
#'   paper's `1 / step / 10` at its step of 0.001).
#' @param iterations Largest number of outer iterations.
#' @param tolerance Stop once every system's relative gradient norm is
#'   below this; 0 never stops early.
#' @param features Random Fourier features of the prior draws behind
#'   posterior samples.
#' @return An object of class `sddgp_control`.
#' @references Cosentino, F., Oberhauser, H. and Abate, A. (2020). A
#'   randomized algorithm to reduce the support of discrete measures.
#'   *NeurIPS*, arXiv:2006.01757.
#'
#'   Cosentino, F., Oberhauser, H. and Abate, A. Caratheodory sampling for
#'   stochastic gradient descent. Preprint.
#' @examples
#' cabcd_control(basis_features = 200, block_size = 3)
#' cabcd_control(algorithm = "adam", step_size = 0.005)
#'
#' set.seed(1)
#' x <- matrix(runif(500))
#' y <- sin(6 * x[, 1]) + rnorm(500, sd = 0.1)
#' fit <- gp_sdd(x, y, kernel = matern(3/2, 0.3, 1), noise = 0.01,
#'               control = cabcd_control(basis_features = 30, iterations = 30),
#'               threads = 1)
#' fit$status
#' predict(fit, matrix(c(0.25, 0.5)))
#' @export
cabcd_control <- function(basis_features = 1000, block_size = 2,
                          selection = c("gauss_southwell", "random"),
                          algorithm = c("cabcd", "bcd", "adam"),
                          step_size = NULL, momentum = 0.9, max_inner = 100,
                          iterations = 200, tolerance = 1e-4,
                          features = 2000) {
  check_number(basis_features, "basis_features", lower = 1, upper = 1e5, integer = TRUE)
  check_number(block_size, "block_size", lower = 1, upper = 64, integer = TRUE)
  selection <- choose_one(selection, "selection", c("gauss_southwell", "random"))
  algorithm <- choose_one(algorithm, "algorithm", c("cabcd", "bcd", "adam"))
  if (!is.null(step_size)) check_number(step_size, "step_size", lower = 0, lower_open = TRUE)
  check_number(momentum, "momentum", lower = 0, upper = 1, upper_open = TRUE)
  check_number(max_inner, "max_inner", lower = 1, upper = 1e6, integer = TRUE)
  check_number(iterations, "iterations", lower = 1, upper = 1e5, integer = TRUE)
  check_number(tolerance, "tolerance", lower = 0, upper = 1)
  new_control("cabcd", list(
    basis_features = as.integer(basis_features), block_size = as.integer(block_size),
    selection = selection, algorithm = algorithm, step_size = step_size,
    momentum = momentum, max_inner = as.integer(max_inner),
    iterations = as.integer(iterations), tolerance = tolerance), features)
}

# Mini-batch of Adam, as in the paper's baselines.
cabcd_batch_size <- 256L

# The fields of cabcd_options (src/cabcd.h).  The seed is drawn here.
cabcd_settings <- function(control) {
  list(algorithm = control$algorithm, selection = control$selection,
       block_size = control$block_size,
       step_size = control$step_size %||% if (control$algorithm == "adam") 0.01 else 1,
       momentum = control$momentum, max_inner = control$max_inner,
       iterations = control$iterations, batch_size = cabcd_batch_size,
       tolerance = control$tolerance, seed = new_seed())
}

# The m random Fourier features of the model, drawn once per fit and kept
# in the state so that later sample draws use the same model.
cabcd_basis <- function(kernel, d, m) {
  rff <- .Call(C_rff_draw, kernel_spec(kernel), as.integer(m), as.integer(d), new_seed())
  list(type = "features", omega = rff[[1L]], phase = rff[[2L]])
}

solve_cabcd <- function(problem, control, threads, state) {
  basis <- state$basis %||% cabcd_basis(problem$kernel, ncol(problem$x),
                                        control$basis_features)
  # Heteroscedastic noise becomes weights around the harmonic-mean penalty.
  lambda <- 1 / mean(1 / problem$noise)
  settings <- cabcd_settings(control)
  settings$progress <- progress_solver("CaBCD", settings$iterations, settings$tolerance)
  res <- .Call(C_cabcd_solve, problem$xs, basis$omega, basis$phase,
               problem$kernel$variance, lambda / problem$noise, lambda, problem$rhs,
               settings, threads)
  fit <- res$fit
  status <- raise_status(decode_status(fit), "cabcd", fit$iterations, sprintf(paste(
    "The step size was %s; use a smaller `step_size` in cabcd_control()."),
    format(signif(settings$step_size, 4))), step_size = settings$step_size)
  trace <- solver_trace(fit$trace, mean_systems(problem))
  done <- seq_len(fit$iterations)
  trace$loss <- if (problem$has_mean) res$loss[done, 1L] else rep(NA_real_, length(done))
  trace$passes <- res$passes[done]
  list(alpha = fit$alpha, basis = basis, state = list(basis = basis),
       iterations = fit$iterations, status = status, trace = trace)
}
