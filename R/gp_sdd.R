#' Fit a Gaussian process by stochastic dual descent
#'
#' Fits the Gaussian process regression model \eqn{y = f(x) + \epsilon}{y = f(x) + epsilon} with
#' \eqn{f \sim GP(0, k)}{f ~ GP(0, k)} and \eqn{\epsilon \sim N(0, \lambda)}{epsilon ~ N(0, lambda)}. The posterior
#' mean's representer weights solve \eqn{(K + \lambda I) \alpha = y}{(K + lambda I) alpha = y}; with
#' `solver = "sdd"` this system is solved by stochastic dual descent, which
#' touches `batch_size` rows of the kernel matrix per step and never needs
#' to store it, so `n` can be in the hundreds of thousands or more.
#' `solver = "cholesky"` solves exactly (O(n^3) time, O(n^2) memory). By
#' default `gp_sdd()` chooses between them (section Choice of solver). With `samples > 0` the fit also holds posterior function
#' samples by pathwise conditioning: prior draws from random Fourier
#' features, each corrected by the solution of its own linear system (solved
#' together with the mean's, sharing every kernel row).
#'
#' With `weights`, observation \eqn{i}{i} has its own noise variance
#' \eqn{\lambda / w_i}{lambda / w_i} and the system becomes
#' \eqn{(K + \lambda W^{-1}) \alpha = y}{(K + lambda W^(-1)) alpha = y} with \eqn{W = \mathrm{diag}(w)}{W = diag(w)},
#' in every solver. As in [stats::lm()], a weight can stand for an observation
#' that is the mean of \eqn{w_i}{w_i} replicates, or for a known precision: to
#' give per-observation noise variances \eqn{v_i}{v_i} in the units of `y`, use
#' `standardize = FALSE`, `noise = 1` and `weights = 1 / v`.
#'
#' SDD and CG stop by default once their predictions are within a tenth
#' (SDD) or a twentieth (CG) of a noise standard deviation of the exact
#' solution's (the section Stopping of [sdd_control()] says how that is
#' judged and what it means for test error). A fit that reaches its iteration budget or time limit first
#' warns, with a warning of class `sddgp_warning_not_converged` that names
#' the residual reached, the tolerance and what to change, and `print()` and
#' `summary()` say so. Solvers run without a tolerance (SGD, and SDD or CG
#' with `tolerance = 0`) warn when the estimated relative residual of the
#' posterior mean's system ends above 0.5 (at 1, predictions are no better
#' than the mean of `y`); CaBCD likewise.
#'
#' @section Choice of solver: Without `solver` and `control`, `gp_sdd()`
#'   chooses the solver that reaches the exact GP's accuracy first. The
#'   two iterative solvers run in turn, each to its default tolerance and
#'   the second from the first's iterate, within one budget of work
#'   (counted from operation counts and the costs per operation of
#'   `inst/benchmarks/defaults.R`, with an optimised BLAS cheaper than the
#'   reference one): first conjugate gradients with Vecchia's
#'   preconditioner ([cg_control()]), which reached the tolerance faster
#'   than SDD on every UCI and synthetic case of that benchmark; for the
#'   [tanimoto()] kernel, which has no distances for Vecchia's neighbours,
#'   first SDD, then CG with the pivoted-Cholesky preconditioner. The
#'   first solver gets the whole budget (SDD at most its default 10,000
#'   steps), the second what is left; a run that reaches its tolerance is
#'   kept. Up to 20000 observations the budget is what the exact solve
#'   costs, and the exact solver runs if neither iterative solver made it
#'   (at worst twice the exact solve's time), or at once where the exact
#'   solve costs less than the first solver's least run: CG's
#'   preconditioner and 10 iterations (below about 1200 observations with
#'   the reference BLAS, 5000 with an optimised one), or 1000 SDD steps.
#'   Within that reach SDD gives up early, from its 1000th step on, when
#'   the recent decrease of its residuals, continued at the same rate,
#'   would need more than twice the steps left; that is a heuristic (SDD's
#'   residuals can also level off and then fall faster), and giving up
#'   wrongly costs time, not accuracy. Beyond 20000 observations, where the
#'   exact solver's n x n matrix would not fit, the budget is twice what
#'   SDD's default run costs, and if neither solver reaches its tolerance
#'   the last one's iterate is kept, with the warning of class
#'   `sddgp_warning_not_converged`: at 100,000 synthetic points in 8
#'   dimensions CG took the whole budget (99 iterations, 15 to 30
#'   minutes on two threads) and stopped 2 to 5 times above its
#'   tolerance; SDD's 10,000 steps came closer to the noise-free
#'   function in half the time at noise 1e-2, and six times further
#'   from it at noise 1e-4 (`inst/benchmarks/README.md`, section CG
#'   first). The fit's `choice` holds the reason
#'   (printed by `print()` and `summary()`) and the iterations, final
#'   relative residual and seconds of the SDD (`sdd_*`) and CG (`cg_*`)
#'   runs made; the choice depends on operation counts only, so like the
#'   fit itself it is the same for any thread count.
#'
#' Kernel hyperparameters and `noise` that are not given are estimated first,
#' by maximising the exact log marginal likelihood on a random subset of the
#' data, then by default above 2000 points the marginal likelihood of all
#' the data: the exact one with iterative solves where that is projected
#' to take at most 5 minutes, otherwise Vecchia's approximation of it (see
#' [estimation_control()]); the estimates are reported by `print()` and
#' `summary()`. With `standardize = TRUE` every input column and the
#' target are centred and scaled by their training mean and (population)
#' standard deviation before fitting (computed without overflow or underflow
#' for data of any magnitude, 1e-300 to 1e300); constant columns (spread
#' below 1e-12 of the largest magnitude) are only centred. Fingerprints
#' (the [tanimoto()] kernel) are never standardised: the targets are then
#' centred at the kernel's constant prior mean (given or estimated) and,
#' with `standardize = TRUE`, scaled by their standard deviation.
#' Hyperparameters (given or estimated) then refer to the standardised data,
#' and predictions come back in the original units. Without
#' standardisation, inputs beyond \eqn{10^{100}}{10^100} length scales from 0
#' (where squared distances overflow) and estimates that would overflow or
#' underflow double precision (from a target variance beyond
#' \eqn{10^{308}}{10^308}, say) are errors of class `sddgp_error_argument`.
#'
#' @section Several outputs: With `y` a matrix of `q` columns, `gp_sdd()`
#'   fits one GP per column, all with the same kernel and noise variance
#'   (of the standardised data, each column standardised on its own, so in
#'   the data's units each output has its own kernel variance and noise:
#'   see [coef.sddgp()]). The posterior means are solved together, as `q`
#'   right-hand sides of one system (with the samples' if any), by the
#'   solvers that take any right-hand sides: `"cholesky"`, `"sdd"` and
#'   `"cg"` (and the automatic choice among them). Estimated
#'   hyperparameters maximise the sum of the outputs' log marginal
#'   likelihoods, and [logLik.sddgp()] is that sum. [predict.sddgp()]
#'   returns a matrix with a column per output (standard errors too; no
#'   intervals), as do `fitted()` and `residuals()`; [simulate.sddgp()]
#'   takes fits of one output only.
#'
#' @param x A numeric matrix or data frame of inputs (one row per
#'   observation), or a formula `y ~ x1 + x2` (or `y ~ .`). Empty column
#'   names become `V<position>` and repeated ones are made unique (`a`,
#'   `a.1`, as [data.frame()] does); [predict.sddgp()] matches `newdata` by
#'   these names.
#' @param y Numeric vector of targets, one per row of `x`; or a numeric
#'   matrix (or data frame) with a column per output (section Several
#'   outputs). For the formula method, `cbind(y1, y2) ~ .` as for
#'   [stats::lm()].
#' @param data For the formula method: a data frame holding the variables
#'   (as for [stats::lm()], not a matrix).
#' @param kernel A kernel object ([matern()], [squared_exponential()],
#'   [tanimoto()]) or one of the names `"matern12"`, `"matern32"`,
#'   `"matern52"`, `"se"`, `"tanimoto"` (molecular fingerprints: `x` then
#'   holds non-negative bits or counts, dense or a sparse
#'   `Matrix::dgCMatrix`, which are never standardised; see [tanimoto()]).
#' @param noise Observation noise variance \eqn{\lambda}{lambda}, or `NULL` to
#'   estimate it. With `weights`, the noise variance of a unit weight.
#' @param weights `NULL` (every observation has noise variance `noise`), or
#'   positive observation weights, one per row of `x`: observation \eqn{i}{i}
#'   has noise variance `noise / weights[i]` (see Details). For the formula
#'   method, a vector as long as `data` has rows, evaluated as in
#'   [stats::lm()]: first among the columns of `data`, then in the formula's
#'   environment. As in `lm()`, `y ~ .` then still counts a weights column
#'   of `data` as an input; write `y ~ . - w` to leave it out.
#' @param solver The solver: `"sdd"` (stochastic dual descent, the
#'   default), `"cholesky"` (exact), `"cg"` (preconditioned conjugate
#'   gradients), `"sgd"` (the stochastic gradient descent of Lin et al.
#'   2023), `"svgp"` (sparse variational GP), `"dsg"` (doubly stochastic
#'   functional gradients) or `"cabcd"` (Caratheodory block coordinate
#'   descent on a random-feature model). `NULL` takes the solver of
#'   `control`; without `control`, the solver is chosen as the section
#'   Choice of solver describes.
#' @param control The solver's settings, made by its control function:
#'   [sdd_control()], [cholesky_control()], [cg_control()], [sgd_control()],
#'   [svgp_control()], [dsg_control()] or [cabcd_control()]. `NULL` uses the
#'   solver's defaults.
#' @param samples Number of posterior function samples to draw at fit time;
#'   needed for standard errors and intervals in [predict.sddgp()].
#' @param standardize Standardise inputs and targets (see Details).
#' @param threads Number of threads; `NULL` uses [sddgp_threads()].
#' @param parallel `NULL` (one process); [sddgp_future()] to solve the
#'   posterior samples' systems in chunks, and compute the fitted values in
#'   blocks of rows, as futures on the current [future::plan()]; or
#'   [sddgp_mpi()] in a script run by `mpirun`, to share each SDD solve
#'   among the MPI processes. Either gives the result of one process, bit
#'   for bit. Default `getOption("sddgp.parallel")`.
#' @param estimation Settings of hyperparameter estimation,
#'   [estimation_control()].
#' @param na.action For the formula method: what to do with missing values.
#'   With [stats::na.exclude()], `predict()` without `newdata`, `fitted()`
#'   and `residuals()` have `NA` at the excluded rows, as for `lm()`.
#' @param ... For the formula method, arguments passed to the default method.
#' @return An object of class `sddgp`: a list holding the standardised
#'   training data, the scaling, the kernel and noise, the representer
#'   weights of the mean (`alpha`) and of the samples (`alpha_samples`), the
#'   prior draws behind the samples, the solver settings, a convergence trace,
#'   timings, the posterior mean at the training inputs (`fitted.values`,
#'   in the units of `y`; `NULL` after a fit with a finite `time_limit`
#'   whose pass over the kernel matrix would have taken longer than the
#'   limit, where `fitted()` and `residuals()` compute it on each call),
#'   for the iterative solvers whose weights are over the training inputs
#'   the residuals of their solves (`training_residual`, standardised
#'   units, a column per output and then one per sample) by which
#'   [predict.sddgp()] corrects the mean and the samples,
#'   the log marginal likelihood when it was cheap to
#'   compute (`log_likelihood`, else `NULL`; see [logLik.sddgp()]) and, for
#'   the solvers with a kernel cache (SDD, SGD, CG), `cached`: whether the
#'   kernel matrix was cached. See [predict.sddgp()], [simulate.sddgp()],
#'   [summary.sddgp()], [plot.sddgp()], [logLik.sddgp()] and
#'   [coef.sddgp()] (with `sigma()`, `update()`, `fitted()`, ...).
#' @references Lin, J. A., Padhy, S., Antoran, J., Tripp, A., Terenin, A.,
#'   Szepesvari, C., Hernandez-Lobato, J. M. and Janz, D. (2024). Stochastic
#'   gradient descent for Gaussian processes done right. *ICLR*.
#'
#'   Wilson, J. T., Borovitskiy, V., Terenin, A., Mostowsky, P. and Deisenroth,
#'   M. P. (2020). Efficiently sampling functions from Gaussian process
#'   posteriors. *ICML*.
#' @examples
#' set.seed(1)
#' x <- matrix(runif(400), ncol = 2)
#' y <- sin(6 * x[, 1]) + x[, 2]^2 + rnorm(200, sd = 0.1)
#' fit <- gp_sdd(x, y, kernel = matern(3/2, lengthscale = c(0.3, 0.6), variance = 1),
#'               noise = 0.02, control = sdd_control(iterations = 2000),
#'               samples = 16, threads = 1)
#' fit
#' predict(fit, x[1:3, ], interval = "prediction")
#'
#' # formula interface, hyperparameters estimated; without `solver` or
#' # `control`, 200 observations are solved exactly (Cholesky)
#' d <- data.frame(x1 = x[, 1], x2 = x[, 2], y = y)
#' fit2 <- gp_sdd(y ~ ., data = d, threads = 1)
#' summary(fit2)
#' @export
gp_sdd <- function(x, ...) UseMethod("gp_sdd")

#' @rdname gp_sdd
#' @export
gp_sdd.default <- function(x, y, kernel = "matern32", noise = NULL,
                           weights = NULL, solver = NULL, control = NULL,
                           samples = 0, standardize = TRUE, threads = NULL,
                           estimation = estimation_control(),
                           parallel = getOption("sddgp.parallel"), ...) {
  call <- match.call()
  check_dots_empty(...)
  parallel <- check_parallel(parallel)
  kernel <- as_kernel(kernel)
  tanimoto <- is_tanimoto(kernel)
  x <- if (tanimoto) check_fingerprints(x, "x") else check_inputs(x)
  y <- check_targets(y, nrow(x))
  chosen <- resolve_solver(solver, control, nrow(x))
  if (tanimoto && !is.null(chosen$solver)) check_tanimoto_solver(chosen$solver, chosen$control)
  check_multi_output_solver(chosen$solver, NCOL(y))
  if (!inherits(estimation, "sddgp_estimation_control")) {
    abort_argument("estimation", "must be made by estimation_control()")
  }
  check_number(samples, "samples", lower = 0, upper = 1e5, integer = TRUE)
  check_flag(standardize, "standardize")
  kernel <- kernel_for_dimension(kernel, ncol(x))
  if (tanimoto) kernel$binary <- fingerprints_binary(x)
  if (!is.null(noise)) check_number(noise, "noise", lower = 0, lower_open = TRUE)
  weights <- check_weights(weights, nrow(x))
  threads <- sddgp_threads(threads)

  scaling <- standardization(x, y, standardize, kernel)
  # Fingerprints are never standardised (see tanimoto()).
  xs <- if (tanimoto) x else standardize_inputs(x, scaling)
  ys <- standardize_targets(y, scaling)

  estimated <- NULL
  start <- NULL
  if (!kernel_is_complete(kernel) || is.null(noise)) {
    estimated <- estimate_hyperparameters(xs, ys, kernel, noise, estimation, threads,
                                          weights)
    kernel <- estimated$kernel
    noise <- estimated$noise
    start <- estimated$solution
    estimated <- estimated$estimation
  }

  if (tanimoto && is.null(kernel$mean)) {
    # The constant prior mean at the kernel and noise: the targets' centre.
    shift <- estimate_prior_mean(xs, ys, kernel, noise, weights,
                                 estimation$subset_size, threads)
    scaling$y_center <- scaling$y_center + scaling$y_scale * shift
    ys <- standardize_targets(y, scaling)
    start <- NULL # its solutions were for the old centre
    kernel$mean <- scaling$y_center
    # Counted among the estimates (logLik()'s degrees of freedom).
    if (!is.null(estimated)) estimated$estimated <- c(estimated$estimated, "mean")
  }
  if (!tanimoto) check_input_magnitude(xs, kernel)
  fit <- new_sddgp(xs, ys, scaling, kernel, noise, weights, chosen$solver,
                   chosen$control, colnames(x), threads)
  fit$estimation <- estimated
  fit <- fit_posterior(fit, samples, threads, start, parallel)
  # As gp_sdd(), not the method's name, so that update() finds it.
  call[[1L]] <- quote(gp_sdd)
  fit$call <- call
  warn_if_not_converged(fit)
  warn_if_samples_inaccurate(fit)
  fit
}

#' @rdname gp_sdd
#' @export
gp_sdd.formula <- function(x, data, weights = NULL, ..., na.action = stats::na.omit) {
  formula <- x
  if (missing(data)) abort_argument("data", "is missing: give the data frame holding the variables")
  if (is.array(data)) {
    abort_argument("data", "must be a data frame, not a matrix (as for lm()): use as.data.frame()")
  }
  weights <- formula_weights(substitute(weights), data, formula)
  mf <- stats::model.frame(formula, data = data, na.action = na.action)
  # Rows that na.action dropped lose their weights too.
  omitted <- attr(mf, "na.action")
  if (!is.null(weights) && length(omitted)) weights <- weights[-omitted]
  terms <- attr(mf, "terms")
  attr(terms, "intercept") <- 0L
  xm <- stats::model.matrix(terms, mf)
  attr(xm, "assign") <- NULL
  attr(xm, "contrasts") <- NULL
  y <- stats::model.response(mf)
  if (is.null(y)) abort_argument("x", "must be a formula with a response, such as y ~ .")
  # Before model.response(mf, "numeric"), which would coerce with a warning.
  if (!is.numeric(y) && !is.logical(y)) {
    abort_argument("x", sprintf("has the %s response `%s`: a GP needs a numeric response",
                                class(y)[1L], deparse1(formula[[2L]])))
  }
  if (ncol(xm) == 0L) {
    abort_argument("x", sprintf(paste(
      "has no input variables (%s): a GP needs at least one input column,",
      "as in y ~ x1 + x2"), deparse1(formula)))
  }
  fit <- gp_sdd.default(xm, stats::model.response(mf, "numeric"), weights = weights, ...)
  fit$terms <- terms
  fit$xlevels <- stats::.getXlevels(terms, mf)
  fit$na.action <- attr(mf, "na.action")
  fit$call <- match.call()
  fit$call[[1L]] <- quote(gp_sdd)
  fit
}

# The weights expression of a formula call, evaluated as lm() (through
# model.frame()) does: among the columns of `data`, then in the formula's
# environment.
formula_weights <- function(expr, data, formula) {
  weights <- tryCatch(eval(expr, data, environment(formula)),
    error = function(e) abort_argument("weights", paste(
      "could not be evaluated among the columns of `data` or in the formula's",
      "environment:", conditionMessage(e))))
  check_weights(weights, nrow(data), "`data` has %d rows")
}

new_sddgp <- function(xs, ys, scaling, kernel, noise, weights, solver, control,
                      input_names, threads) {
  structure(list(x = xs, y = ys, scaling = scaling, kernel = kernel,
                 noise = noise, weights = weights, solver = solver, control = control,
                 input_names = input_names, n = nrow(xs), d = ncol(xs),
                 threads = threads),
            class = "sddgp")
}

# Solve for the posterior mean and `samples` pathwise samples together,
# with the fit's solver or, when it has none, the one solve_automatic()
# chooses.  `start` is NULL, or the last solve of estimation on all the
# data (estimate_iterative()'s solution), at these hyperparameters: the
# solve starts from it, and its probes are the samples when there are
# enough of them.
fit_posterior <- function(fit, samples, threads, start = NULL, parallel = NULL) {
  features <- (fit$control %||% sdd_control())$features
  reuse <- !is.null(start) && samples <= ncol(start$alpha) - 1L
  prior <- if (samples > 0) {
    if (reuse) prior_columns(start$prior, seq_len(samples)) else
      draw_prior(fit$kernel, fit$d, features, samples)
  }
  problem <- new_problem(fit$x, fit$y, fit$kernel, observation_noise(fit), prior, threads,
                         if (reuse && samples > 0)
                           start$noise_base[, seq_len(samples), drop = FALSE])
  if (reuse) problem$alpha0 <- start$alpha[, seq_len(samples + 1L), drop = FALSE]
  # Sample systems in chunks over future's workers (sddgp_future()).
  problem$parallel <- parallel
  # Test data of trace metrics (sdd_control()) are standardised like the fit.
  problem$scaling <- fit$scaling
  if (is.null(fit$solver)) {
    sol <- solve_automatic(fit, problem, threads)
    fit$solver <- sol$solver
    fit$control <- sol$control
    fit$choice <- sol$choice
  } else {
    sol <- run_solver(fit$solver, problem, fit$control, threads)
  }
  sol <- refine_samples(fit$solver, fit$control, problem, sol, threads)
  # One column of mean weights per output (a vector for one output).
  means <- seq_len(NCOL(fit$y))
  fit$alpha <- if (length(means) == 1L) sol$alpha[, 1L] else sol$alpha[, means, drop = FALSE]
  fit$alpha_samples <- sol$alpha[, -means, drop = FALSE]
  fit$basis <- sol$basis
  fit$state <- sol$state
  fit$prior <- prior
  fit$iterations <- sol$iterations
  fit$status <- sol$status
  fit$tolerance <- sol$tolerance  # NULL for the solvers without one
  fit$seconds <- sol$seconds
  fit$trace <- sol$trace
  fit$sample_accuracy <- sol$sample_accuracy
  fit$cached <- sol$cached  # whether K was cached; NULL for solvers without a cache
  fit$preconditioner <- sol$preconditioner  # CG's, in words; else NULL
  fit$log_likelihood <- fit_log_likelihood(fit, sol, threads)  # NULL: logLik() computes it
  # A pass over K(X, X), as long as an epoch of SDD: the fitted values and
  # the residuals that predict() corrects by (correction.R).
  pass <- training_pass(fit, problem$rhs, threads, parallel)
  if (!is.null(pass)) {
    fit$fitted.values <- named_fitted(fit, pass$mean)
    fit$training_residual <- pass$residual
  }
  fit
}

# The noise variance of every training observation, noise / weights.
observation_noise <- function(fit) {
  if (is.null(fit$weights)) rep(fit$noise, fit$n) else fit$noise / fit$weights
}
