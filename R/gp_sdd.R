#' Fit a Gaussian process by stochastic dual descent
#'
#' Fits the Gaussian process regression model \eqn{y = f(x) + \epsilon} with
#' \eqn{f \sim GP(0, k)} and \eqn{\epsilon \sim N(0, \lambda)}. The posterior
#' mean's representer weights solve \eqn{(K + \lambda I) \alpha = y}; with
#' `solver = "sdd"` (the default above 5000 observations) this system is
#' solved by stochastic dual descent, which touches `batch_size` rows of the
#' kernel matrix per step and never stores it, so `n` can be in the hundreds
#' of thousands or more. `solver = "cholesky"` solves exactly (O(n^3) time,
#' O(n^2) memory), which up to 5000 observations takes seconds and is the
#' default there. With `samples > 0` the fit also holds posterior function
#' samples by pathwise conditioning: prior draws from random Fourier
#' features, each corrected by the solution of its own linear system (solved
#' together with the mean's, sharing every kernel row).
#'
#' With `weights`, observation \eqn{i} has its own noise variance
#' \eqn{\lambda / w_i} and the system becomes
#' \eqn{(K + \lambda W^{-1}) \alpha = y} with \eqn{W = \mathrm{diag}(w)},
#' in every solver. As in [stats::lm()], a weight can stand for an observation
#' that is the mean of \eqn{w_i} replicates, or for a known precision: to
#' give per-observation noise variances \eqn{v_i} in the units of `y`, use
#' `standardize = FALSE`, `noise = 1` and `weights = 1 / v`.
#'
#' An iterative solver (SDD, SGD, CG, CaBCD) that stops, at its iteration
#' budget or time limit, with the estimated relative residual of the
#' posterior mean's system above 0.5 is far from converged: its predictions
#' are little or no better than the mean of `y` (a residual of 1). `gp_sdd()`
#' then warns, with a warning of class `sddgp_warning_not_converged` that
#' names the residual and what to change, and `print()` and `summary()` say
#' so.
#'
#' Kernel hyperparameters and `noise` that are not given are estimated first,
#' by maximising the exact log marginal likelihood on a random subset of the
#' data (see [estimation_control()]); the estimates are reported by `print()`
#' and `summary()`. With `standardize = TRUE` every input column and the
#' target are centred and scaled by their training mean and (population)
#' standard deviation before fitting (computed without overflow or underflow
#' for data of any magnitude, 1e-300 to 1e300); constant columns (spread
#' below 1e-12 of the largest magnitude) are only centred.
#' Hyperparameters (given or estimated) then refer to the standardised data,
#' and predictions come back in the original units. Without
#' standardisation, inputs beyond \eqn{10^{100}} length scales from 0
#' (where squared distances overflow) and estimates that would overflow or
#' underflow double precision (from a target variance beyond
#' \eqn{10^{308}}, say) are errors of class `sddgp_error_argument`.
#'
#' @param x A numeric matrix or data frame of inputs (one row per
#'   observation), or a formula `y ~ x1 + x2` (or `y ~ .`). Empty column
#'   names become `V<position>` and repeated ones are made unique (`a`,
#'   `a.1`, as [data.frame()] does); [predict.sddgp()] matches `newdata` by
#'   these names.
#' @param y Numeric vector of targets, one per row of `x`.
#' @param data For the formula method: a data frame holding the variables
#'   (as for [stats::lm()], not a matrix).
#' @param kernel A kernel object ([matern()], [squared_exponential()]) or one
#'   of the names `"matern12"`, `"matern32"`, `"matern52"`, `"se"`.
#' @param noise Observation noise variance \eqn{\lambda}, or `NULL` to
#'   estimate it. With `weights`, the noise variance of a unit weight.
#' @param weights `NULL` (every observation has noise variance `noise`), or
#'   positive observation weights, one per row of `x`: observation \eqn{i}
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
#'   `control`; without `control`, `"cholesky"` for at most 5000
#'   observations (exact, and faster there than SDD's default 10,000 steps)
#'   and `"sdd"` above.
#' @param control The solver's settings, made by its control function:
#'   [sdd_control()], [cholesky_control()], [cg_control()], [sgd_control()],
#'   [svgp_control()], [dsg_control()] or [cabcd_control()]. `NULL` uses the
#'   solver's defaults.
#' @param samples Number of posterior function samples to draw at fit time;
#'   needed for standard errors and intervals in [predict.sddgp()].
#' @param standardize Standardise inputs and targets (see Details).
#' @param threads Number of threads; `NULL` uses [sddgp_threads()].
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
#'   timings and, for the solvers with a kernel cache (SDD, SGD, CG),
#'   `cached`: whether the kernel matrix was cached. See [predict.sddgp()],
#'   [simulate.sddgp()], [summary.sddgp()] and [plot.sddgp()].
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
                           estimation = estimation_control(), ...) {
  call <- match.call()
  check_dots_empty(...)
  x <- check_inputs(x)
  y <- check_targets(y, nrow(x))
  chosen <- resolve_solver(solver, control, nrow(x))
  if (!inherits(estimation, "sddgp_estimation_control")) {
    abort_argument("estimation", "must be made by estimation_control()")
  }
  check_number(samples, "samples", lower = 0, upper = 1e5, integer = TRUE)
  check_flag(standardize, "standardize")
  kernel <- kernel_for_dimension(as_kernel(kernel), ncol(x))
  if (!is.null(noise)) check_number(noise, "noise", lower = 0, lower_open = TRUE)
  weights <- check_weights(weights, nrow(x))
  threads <- sddgp_threads(threads)

  scaling <- standardization(x, y, standardize)
  xs <- standardize_inputs(x, scaling)
  ys <- standardize_targets(y, scaling)

  estimated <- NULL
  if (!kernel_is_complete(kernel) || is.null(noise)) {
    estimated <- estimate_hyperparameters(xs, ys, kernel, noise, estimation, threads,
                                          weights)
    kernel <- estimated$kernel
    noise <- estimated$noise
    estimated <- estimated$estimation
  }

  check_input_magnitude(xs, kernel)
  fit <- new_sddgp(xs, ys, scaling, kernel, noise, weights, chosen$solver,
                   chosen$control, colnames(x), threads)
  fit$estimation <- estimated
  fit <- fit_posterior(fit, samples, threads)
  fit$call <- call
  warn_if_not_converged(fit)
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
  # As lm() (model.frame()): among the columns of `data`, then in the
  # formula's environment.
  weights <- tryCatch(eval(substitute(weights), data, environment(formula)),
    error = function(e) abort_argument("weights", paste(
      "could not be evaluated among the columns of `data` or in the formula's",
      "environment:", conditionMessage(e))))
  weights <- check_weights(weights, nrow(data), "`data` has %d rows")
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
  fit
}

new_sddgp <- function(xs, ys, scaling, kernel, noise, weights, solver, control,
                      input_names, threads) {
  structure(list(x = xs, y = ys, scaling = scaling, kernel = kernel,
                 noise = noise, weights = weights, solver = solver, control = control,
                 input_names = input_names, n = nrow(xs), d = ncol(xs),
                 threads = threads),
            class = "sddgp")
}

# Solve for the posterior mean and `samples` pathwise samples together.
fit_posterior <- function(fit, samples, threads) {
  prior <- if (samples > 0) draw_prior(fit$kernel, fit$d, fit$control$features, samples)
  problem <- new_problem(fit$x, fit$y, fit$kernel, observation_noise(fit), prior, threads)
  # Test data of trace metrics (sdd_control()) are standardised like the fit.
  problem$scaling <- fit$scaling
  sol <- run_solver(fit$solver, problem, fit$control, threads)
  fit$alpha <- sol$alpha[, 1L]
  fit$alpha_samples <- sol$alpha[, -1L, drop = FALSE]
  fit$basis <- sol$basis
  fit$state <- sol$state
  fit$prior <- prior
  fit$iterations <- sol$iterations
  fit$status <- sol$status
  fit$seconds <- sol$seconds
  fit$trace <- sol$trace
  fit$cached <- sol$cached  # whether K was cached; NULL for solvers without a cache
  fit
}

# The noise variance of every training observation, noise / weights.
observation_noise <- function(fit) {
  if (is.null(fit$weights)) rep(fit$noise, fit$n) else fit$noise / fit$weights
}

# NULL, or positive finite weights, one per observation.
check_weights <- function(weights, n, against = "`x` has %d rows") {
  if (is.null(weights)) return(NULL)
  check_positive_vector(weights, "weights")
  if (length(weights) != n) {
    abort_argument("weights", sprintf(paste("has length %d but", against),
                                      length(weights), n))
  }
  as.numeric(weights)
}

standardization <- function(x, y, standardize) {
  if (!standardize) {
    return(list(x_center = rep(0, ncol(x)), x_scale = rep(1, ncol(x)),
                y_center = 0, y_scale = 1))
  }
  mx <- col_moments(x)
  my <- col_moments(y)
  # A constant column is only centred: dividing by its zero spread would
  # turn it into NaN (the reference implementation's bug on keggdirected).
  # "Constant" is relative to the column's magnitude, which then does not
  # matter (data at 1e-300 are not constant).
  x_scale <- mx$sd
  x_scale[x_scale <= 1e-12 * apply(abs(x), 2L, max)] <- 1
  list(x_center = mx$mean, x_scale = x_scale, y_center = my$mean,
       y_scale = if (my$sd > 0) my$sd else 1)
}

# Column means and population standard deviations of x (a vector: one
# column), computed in units of a power of 2 near each column's largest
# magnitude (pow2_unit()): squares of values near 1e300 do not overflow,
# nor those near 1e-300 underflow to a zero spread.  Otherwise the same
# as the direct formulas up to rounding.
col_moments <- function(x) {
  x <- as.matrix(x)
  u <- apply(x, 2L, pow2_unit)
  xu <- x / rep(u, each = nrow(x))
  list(mean = colMeans(xu) * u,
       sd = apply(xu, 2L, function(v) sqrt(mean((v - mean(v))^2))) * u)
}

# The power of 2 at or below max |v| (1 if all are 0): dividing by it is
# exact and brings v into [-2, 2], where squares and sums of finite numbers
# cannot overflow.
pow2_unit <- function(v) {
  m <- max(abs(v))
  if (m > 0) 2^min(floor(log2(m)), 1023) else 1
}

# (v - center) / scale by columns (center and scale one number per column
# of v, or a vector v with one of each), computed as (v / u - center / u) *
# (u / scale) with u a power of 2 near scale: the same bits as (v - center)
# * (1 / scale), but no overflow of v - center for values near +-1.8e308, nor of
# 1 / scale for scales below 5.6e-309.  Far-away new inputs may still
# overflow to +-Inf (see far_rows()).
standardize_columns <- function(v, center, scale) {
  u <- vapply(scale, pow2_unit, numeric(1L))
  n <- NROW(v)
  (v / rep(u, each = n) - rep(center / u, each = n)) * rep(u / scale, each = n)
}

# center + scale * v, the inverse, in units of a power of 2 near scale so
# that neither the product nor the sum overflows on the way to a
# representable result; the same bits as that formula otherwise.
unstandardize <- function(v, center, scale) {
  u <- pow2_unit(scale)
  u * (center / u + (scale / u) * v)
}

standardize_inputs <- function(x, scaling) {
  standardize_columns(x, scaling$x_center, scaling$x_scale)
}

standardize_targets <- function(y, scaling) {
  standardize_columns(y, scaling$y_center, scaling$y_scale)
}

# Largest magnitude of the (standardised) training inputs, in length
# scales, that the kernel computations take: squared distances and norms
# stay far below overflow, and the Matern kernels' polynomial factors times
# their smallest exp (3e-308) negligible.
max_lengthscales <- 1e100

check_input_magnitude <- function(xs, kernel) {
  span <- apply(abs(xs), 2L, max) / kernel$lengthscale
  if (any(span > max_lengthscales)) {
    j <- which.max(span)
    abort_argument("x", sprintf(paste(
      "reaches %s length scales in column %d, beyond %s, where squared distances",
      "overflow; use `standardize = TRUE` or larger length scales"),
      format(signif(span[j], 3)), j, format(max_lengthscales)))
  }
}

check_inputs <- function(x) {
  x <- as_input_matrix(x, "x")
  if (nrow(x) < 2L) abort_argument("x", sprintf("must have at least 2 rows, not %d", nrow(x)))
  if (ncol(x) < 1L) abort_argument("x", "must have at least one column")
  colnames(x) <- repair_names(colnames(x))
  check_finite_rows(x, "x")
}

# Input column names made unique, so that predict() can match `newdata` by
# name: an empty or NA name becomes V<position> (as in as.data.frame()), and
# repeats get suffixes .1, .2, ... (make.unique(), as data.frame() does).
# predict() repairs the names of `newdata` alike before matching.
repair_names <- function(nm) {
  if (is.null(nm)) return(NULL)
  blank <- is.na(nm) | !nzchar(nm)
  nm[blank] <- paste0("V", which(blank))
  make.unique(nm)
}

# A double matrix from a numeric matrix, vector (one column) or data frame
# with only numeric columns; shared by the fit (`x`) and predict (`newdata`).
as_input_matrix <- function(x, arg) {
  if (is.data.frame(x)) {
    numeric_cols <- vapply(x, is.numeric, logical(1L))
    if (!all(numeric_cols)) {
      abort_argument(arg, sprintf(
        "must have only numeric columns; %s %s not numeric (use the formula interface to expand factors)",
        paste0("`", names(x)[!numeric_cols], "`", collapse = ", "),
        if (sum(!numeric_cols) == 1L) "is" else "are"))
    }
    x <- as.matrix(x)
  }
  if (is.numeric(x) && is.null(dim(x))) x <- matrix(x, ncol = 1L)
  if (!is.matrix(x) || !is.numeric(x)) {
    abort_argument(arg, "must be a numeric matrix or data frame")
  }
  storage.mode(x) <- "double"
  x
}

check_finite_rows <- function(x, arg) {
  rows <- which(rowSums(!is.finite(x)) > 0)
  if (length(rows)) {
    abort_argument(arg, sprintf(
      "contains NA, NaN or infinite values in %d row%s (first: row %d)",
      length(rows), if (length(rows) == 1L) "" else "s", rows[1L]))
  }
  x
}

check_targets <- function(y, n, against = "`x` has %d rows") {
  if (is.data.frame(y) && ncol(y) == 1L) y <- y[[1L]]
  if (!is.numeric(y) || !is.null(dim(y)) && !(length(dim(y)) == 2L && ncol(y) == 1L)) {
    abort_argument("y", "must be a numeric vector")
  }
  y <- as.numeric(y)
  if (length(y) != n) {
    abort_argument("y", sprintf(paste("has length %d but", against), length(y), n))
  }
  bad <- which(!is.finite(y))
  if (length(bad)) {
    abort_argument("y", sprintf("contains %d NA, NaN or infinite value%s (first: element %d)",
                                length(bad), if (length(bad) == 1L) "" else "s", bad[1L]))
  }
  y
}

check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) abort_argument(arg, "must be TRUE or FALSE")
  x
}

check_dots_empty <- function(...) {
  if (...length() > 0L) {
    nm <- names(list(...))
    shown <- if (is.null(nm)) "unnamed" else paste0("`", nm[nzchar(nm)], "`", collapse = ", ")
    abort_argument("...", sprintf("must be empty; unused argument(s): %s", shown))
  }
}

#' @export
print.sddgp <- function(x, digits = 4, ...) {
  cat("Gaussian process fitted by", solver_label(x), "\n")
  cat(sprintf("  %d observations, %d input%s; %d posterior sample%s\n", x$n, x$d,
              if (x$d == 1L) "" else "s", ncol(x$alpha_samples),
              if (ncol(x$alpha_samples) == 1L) "" else "s"))
  cat(sprintf("  kernel: %s, variance %s\n", kernel_label(x$kernel),
              format(x$kernel$variance, digits = digits)))
  cat(strwrap(paste(format(x$kernel$lengthscale, digits = digits), collapse = " "),
              indent = 0, exdent = 4, initial = "  lengthscales: "),
      sep = "\n")
  cat(noise_label(x$noise, x$weights, digits), "\n", sep = "")
  if (!is.null(x$estimation)) {
    cat(sprintf("  estimated by marginal likelihood on %d points: %s\n",
                x$estimation$subset_size, paste(x$estimation$estimated, collapse = ", ")))
  }
  if (x$iterations > 0L) {
    # Why a run stopped, when it was not the iteration count.
    why <- if (x$status %in% c("tolerance", "time limit")) sprintf(" (%s)", x$status) else ""
    cat(sprintf("  %d iterations in %.1f s%s; relative residual %s\n", x$iterations,
                x$seconds, why, format(final_residual(x), digits = 3)))
  }
  if (far_from_converged(x)) cat("  ", not_converged_note(x), "\n", sep = "")
  invisible(x)
}

solver_label <- function(fit) solver_labels[[fit$solver]]

noise_label <- function(noise, weights, digits) {
  if (is.null(weights)) return(sprintf("  noise variance: %s", format(noise, digits = digits)))
  sprintf("  noise variance: %s / weights (weights from %s to %s)",
          format(noise, digits = digits), format(min(weights), digits = digits),
          format(max(weights), digits = digits))
}

final_residual <- function(fit) {
  if (nrow(fit$trace) == 0L) return(NA_real_)
  fit$trace$residual[nrow(fit$trace)]
}

#' Summarise a Gaussian process fit
#'
#' @param object,x An `sddgp` fit, or its summary.
#' @param digits Significant digits to print.
#' @param ... Unused.
#' @return `summary()` returns an object of class `summary.sddgp`: a list with
#'   the data size, kernel and hyperparameters (in standardised units), noise,
#'   solver settings, iterations, timings, the final estimated relative
#'   residuals of the mean and sample systems, `not_converged` (a note when
#'   the mean's residual shows the solver stopped far from converged, else
#'   `NULL`) and `cached` (whether the kernel matrix was cached, for the
#'   solvers with a cache: SDD, SGD, CG; else `NULL`).
#' @export
summary.sddgp <- function(object, ...) {
  tr <- object$trace
  last <- if (nrow(tr)) tr[nrow(tr), ] else NULL
  structure(list(
    call = object$call, n = object$n, d = object$d, kernel = object$kernel,
    noise = object$noise, weights = object$weights, solver = object$solver,
    control = object$control,
    step_size = object$state$step_size, backoffs = object$state$backoffs,
    samples = ncol(object$alpha_samples),
    iterations = object$iterations, status = object$status,
    seconds = object$seconds, threads = object$threads,
    residual = if (!is.null(last)) last$residual else NA_real_,
    residual_samples = if (!is.null(last)) last$residual_samples else NA_real_,
    not_converged = if (far_from_converged(object)) not_converged_note(object),
    cached = object$cached,
    estimation = object$estimation, scaling = object$scaling),
    class = "summary.sddgp")
}

#' @rdname summary.sddgp
#' @export
print.summary.sddgp <- function(x, digits = 4, ...) {
  if (!is.null(x$call)) {
    cat("Call:\n")
    print(x$call)
    cat("\n")
  }
  cat(sprintf("Data: %d observations, %d input%s\n", x$n, x$d, if (x$d == 1L) "" else "s"))
  cat("\nKernel (standardised units):\n")
  print(x$kernel, digits = digits)
  cat(noise_label(x$noise, x$weights, digits), "\n", sep = "")
  if (!is.null(x$estimation)) {
    cat(sprintf("  estimated (%s) on %d points: log marginal likelihood %s, %.1f s\n",
                paste(x$estimation$estimated, collapse = ", "), x$estimation$subset_size,
                format(x$estimation$log_marginal_likelihood, digits = digits),
                x$estimation$seconds))
  }
  cat("\nSolver:", solver_labels[[x$solver]], "\n")
  if (!is.null(x$step_size)) {
    cat(sprintf("  step size %s (samples %s)%s\n", format(signif(x$step_size[["mean"]], 4)),
                format(signif(x$step_size[["samples"]], 4)),
                if (isTRUE(x$backoffs > 0L)) sprintf(
                  ", halved %d time%s after the iterates diverged", x$backoffs,
                  if (x$backoffs == 1L) "" else "s") else ""))
  }
  cat(sprintf("  %d iteration%s (%s), %d thread%s, %.2f s\n", x$iterations,
              if (x$iterations == 1L) "" else "s", x$status, x$threads,
              if (x$threads == 1L) "" else "s", x$seconds))
  if (is.finite(x$residual) || is.finite(x$residual_samples)) {
    cat(sprintf("  final relative residual: mean %s, samples %s\n",
                format(x$residual, digits = 3), format(x$residual_samples, digits = 3)))
  }
  if (!is.null(x$not_converged)) cat("  ", x$not_converged, "\n", sep = "")
  if (!is.null(x$cached)) {
    cat(if (x$cached) "  kernel matrix cached in memory\n" else
      "  kernel matrix not cached: its rows are computed as needed\n")
  }
  cat("\n")
  print(x$control)
  cat(sprintf("Posterior samples: %d\n", x$samples))
  invisible(x)
}
