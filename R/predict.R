#' Predict from a Gaussian process fit
#'
#' The posterior mean \eqn{k(x_*, X) \alpha}{k(x*, X) alpha} at new inputs, in the units of
#' the original target, optionally with standard errors and intervals in the
#' spirit of [stats::predict.lm()]. New inputs are processed in chunks of
#' `chunk_size` rows, so memory stays bounded for any number of them.
#'
#' @section Standard errors: `se.fit` is the posterior standard deviation
#'   of \eqn{f(x_*)}{f(x*)}, obtained according to the fit:
#'   * an exact fit (`solver = "cholesky"`) without samples: exactly,
#'     \eqn{k(x_*, x_*) - |L^{-1} k(X, x_*)|^2}{k(x*, x*) - |L^-1 k(X, x*)|^2}
#'     with \eqn{L}{L} the Cholesky factor of \eqn{K + \lambda W^{-1}}{K +
#'     lambda W^-1}. The fit does not keep the factor (\eqn{8 n^2}{8 n^2}
#'     bytes), so the first such call factors the kernel matrix again (about the
#'     time of the exact fit), and keeps the factor for later calls on the same
#'     fit in the session (one fit at a time, up to 8192 points); each chunk of
#'     new points then costs one triangular solve.
#'   * any fit with posterior samples (`samples > 0` in [gp_sdd()]), exact
#'     ones included: a Monte Carlo estimate from the fit's pathwise samples,
#'     the root mean square of the zero-mean sample paths \eqn{f_0(x_*) - k(x_*,
#'     X) \alpha_s}{f0(x*) - k(x*, X) alpha_s} (or the solver's basis in place
#'     of \eqn{k(\cdot, X)}{k(., X)}), whose relative error is about
#'     \eqn{1/\sqrt{2 s}}{1 / sqrt(2 s)} for \eqn{s}{s} samples (an eighth at
#'     32) on top of the solver's own error. Each sample's prior draw has
#'     random features of its own, so that the samples' covariance is the
#'     kernel's on average; one set shared by all would bias every standard
#'     error alike where the posterior variance is far below the prior's.
#'     A sample solved to residual \eqn{r}{r} errs at the training inputs by
#'     at most \eqn{|r|}{|r|}, which adds to its variance; so SDD and CG with
#'     their default tolerance solve the samples on, from where they stopped,
#'     until the mean square residual is at most 5% of the samples' variance
#'     at the training inputs ([summary()][summary.sddgp()] reports the
#'     further solves). A run that reaches its tolerance but leaves the
#'     samples short (a tolerance given, or further solves that run out of
#'     budget) warns with class `sddgp_warning_samples_inaccurate` and names
#'     the tolerance needed; one that stops short of its tolerance gives the
#'     warning of class `sddgp_warning_not_converged` instead. At new points
#'     the samples of SDD, SGD and CG are corrected from their nearest
#'     training points, which shrinks that error (see `neighbours`).
#'     On 3000 points with a kernel variance 100 times the
#'     targets' (`inst/benchmarks/standard_errors.R`), the relative residual
#'     that suffices for the mean overstated the variance 4.8 to 7.1 times.
#'     The random features' frequencies are importance-sampled, half of
#'     them from a heavier-tailed density than the kernel's spectral
#'     density, so that their error stays small where the noise is small
#'     against the kernel variance. On those 3000 points, with noise 2.5e-5
#'     of the kernel variance and 2000 features a sample, exact solves
#'     gave 1.000 times the exact variance on average over 24 seeds
#'     (standard error 0.011; 0.90 to 1.09 by seed; 2.86 and 0.44 for two
#'     seeds without importance sampling), and CG's default 1.07 and 1.06
#'     for the first two. The features add spread, not bias: 8000 features
#'     gave 1.001 (0.94 to 1.06), so raise `features` in the solver's
#'     control where a few percent matter.
#'   * other fits without samples: an error of class
#'     `sddgp_error_no_samples`; refit with `samples =`.
#'
#'   Prediction intervals add the noise variance (`noise / weights`) to the
#'   variance of \eqn{f(x_*)}{f(x*)}.
#'
#'   At new inputs more than 1000 length scales outside the range of the
#'   training inputs (in some coordinate), every kernel value underflows to 0
#'   and the posterior is the prior: there the prediction is the prior mean
#'   (the training targets' mean with `standardize = TRUE`, else 0) and the
#'   standard error the prior standard deviation, exactly rather than from
#'   the samples, however far out (inputs whose standardised values overflow
#'   included).
#'
#' @param object An `sddgp` fit.
#' @param newdata A matrix or data frame with the training input columns, or
#'   for a formula fit a data frame with the variables. For a matrix fit
#'   whose inputs had column names, columns of `newdata` with names are
#'   matched by name (a missing name is an error of class
#'   `sddgp_error_argument`); when either has no names, by position, and
#'   then `newdata` must have as many columns as the training inputs.
#'   Missing: the training inputs (for a formula fit with `na.action =
#'   na.exclude`, padded with `NA` at the rows it left out, as by
#'   [stats::napredict()]). Column names are repaired as [gp_sdd()]
#'   repaired the training names (an empty name becomes `V<position>`,
#'   repeated names `a`, `a.1`, ...) before matching, so a matrix with the
#'   training matrix's names matches column for column.
#' @param se.fit Return standard errors of the posterior mean of f (see
#'   section Standard errors).
#' @param interval `"none"`, `"confidence"` (for f) or `"prediction"` (for a
#'   new observation y, noise included); abbreviations such as `"conf"` are
#'   accepted, as by [match.arg()].
#' @param weights Weights of the new observations, for prediction intervals:
#'   a new observation has noise variance `noise / weights` (as the training
#'   observations of a fit with `weights`). One value, or one per row of
#'   `newdata`.
#' @param level Coverage of the intervals.
#' @param na.action What to do with rows of `newdata` with missing values:
#'   [stats::na.pass()] (the default) predicts `NA` there, as
#'   [stats::predict.lm()] does; [stats::na.omit()] leaves them out,
#'   [stats::na.exclude()] too but pads the result with `NA`, and
#'   [stats::na.fail()] makes them an error (class `sddgp_error_argument`).
#'   A function or its name.
#' @param chunk_size Rows of `newdata` handled at a time.
#' @param neighbours Training points that correct the mean and the sample
#'   paths at each new point; `0` for no correction. An iterative solver
#'   stops at weights \eqn{\alpha}{alpha} whose residual \eqn{r = y - (K +
#'   \lambda I)\alpha}{r = y - (K + lambda I) alpha} is not zero, and the
#'   exact mean adds \eqn{k(x_*, X)(K + \lambda I)^{-1} r}{k(x*, X) (K +
#'   lambda I)^-1 r}; the fit keeps \eqn{r}{r} (from its pass over the
#'   kernel matrix), and the prediction adds Vecchia's approximation of that
#'   term: the kriging prediction of \eqn{r}{r} at \eqn{x_*}{x*} from its
#'   `neighbours` nearest training points (Katzfuss, Guinness, Gong and
#'   Zilber 2020, "Vecchia approximations of Gaussian-process predictions",
#'   JABES 25). Each sample's system has a residual too, kept and corrected
#'   alike, so the standard errors and intervals from the samples follow.
#'   The correction vanishes as the solves converge, and with all training
#'   points as neighbours it gives the exact solution's mean and samples; it
#'   makes a fit stopped early by its time limit or iteration budget predict
#'   far better: on 100,000 points in 8 dimensions (`inst/benchmarks/peers.R
#'   --budgets`) see the benchmarks README. Without `newdata`, as [fitted()]
#'   and [residuals()], `predict()` gives the uncorrected mean and standard
#'   errors at the training inputs; [simulate()]'s paths are not corrected.
#'   Fits without residuals are not corrected: exact (Cholesky) fits, the
#'   solvers whose basis is not the training inputs (SVGP, random features),
#'   the Tanimoto kernel, and fits with a time limit whose pass over the
#'   kernel matrix would have taken longer than the limit.
#' @param threads Number of threads; `NULL` uses [sddgp_threads()].
#' @param parallel `NULL`, or [sddgp_future()] to predict blocks of
#'   `chunk_size` rows as futures on the current [future::plan()], with
#'   the same result (with [sddgp_mpi()], each process predicts all the
#'   rows). Default `getOption("sddgp.parallel")`.
#' @param ... Unused.
#' @return With `se.fit = FALSE` and `interval = "none"`: a numeric vector.
#'   With an interval: a matrix with columns `fit`, `lwr`, `upr`. With
#'   `se.fit = TRUE`: a list with `fit` (vector or matrix as before),
#'   `se.fit` and `residual.scale` (the noise standard deviation of a unit
#'   weight). For a fit of several outputs (`y` a matrix in [gp_sdd()]):
#'   `fit` and `se.fit` are matrices with a column per output and
#'   `residual.scale` has a value per output; intervals are not available.
#' @export
predict.sddgp <- function(object, newdata, se.fit = FALSE,
                          interval = c("none", "confidence", "prediction"),
                          level = 0.95, weights = 1, na.action = stats::na.pass,
                          chunk_size = 4096L, neighbours = 50L, threads = NULL,
                          parallel = getOption("sddgp.parallel"), ...) {
  check_dots_empty(...)
  check_number(neighbours, "neighbours", lower = 0, upper = 1000, integer = TRUE)
  parallel <- check_parallel(parallel)
  check_flag(se.fit, "se.fit")
  interval <- choose_one(interval, "interval", c("none", "confidence", "prediction"),
                         partial = TRUE)
  check_number(level, "level", lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  check_number(chunk_size, "chunk_size", lower = 1, integer = TRUE)
  threads <- sddgp_threads(threads)
  at_training <- missing(newdata)
  xnew <- if (at_training) object$x else new_inputs(object, newdata, na.action)
  omitted <- attr(xnew, "na.action")
  check_new_weights(weights, nrow(xnew) + length(omitted))
  if (length(weights) > 1L && length(omitted)) weights <- weights[-omitted]
  need_var <- se.fit || interval != "none"
  if (need_var && !exact_variance(object)) {
    require_samples(object, "standard errors and intervals")
  }

  sc <- object$scaling
  q <- n_outputs(object)
  if (q > 1L && interval != "none") {
    abort_argument("interval", sprintf(
      "must be \"none\" for a fit of %d outputs; use se.fit = TRUE (one column per output)", q))
  }
  # Rows with missing values (na.pass) predict NA.
  complete <- complete_rows(xnew)
  # Without newdata, the fitted values: fitted() does not correct them.
  post <- posterior_moments(object, xnew[complete, , drop = FALSE], need_var, threads,
                            chunk_size, parallel, if (at_training) 0L else neighbours)
  mean <- matrix(NA_real_, nrow(xnew), q)
  mean[complete, ] <- post$mean
  var <- rep(NA_real_, nrow(xnew))
  if (need_var) var[complete] <- post$var
  # NA at the rows na.exclude() left out (as lm): the fit's at the training
  # inputs, `na.action`'s for newdata.
  pad <- function(v) stats::napredict(if (at_training) object$na.action else omitted, v)
  # One output: vectors; several: a column each.
  shape <- function(m) {
    if (q == 1L) return(stats::setNames(m[, 1L], rownames(xnew)))
    dimnames(m) <- list(rownames(xnew), output_names(object))
    m
  }
  fit <- shape(unstandardize_targets(mean, sc))
  if (!need_var) return(pad(fit))

  # y_scale multiplies last: its square overflows for targets beyond 1e154.
  se <- shape(outer(sqrt(var), sc$y_scale))
  if (interval != "none") {
    spread <- if (interval == "prediction") sc$y_scale * sqrt(var + object$noise / weights) else se
    z <- stats::qnorm((1 + level) / 2)
    fit <- cbind(fit = fit, lwr = fit - z * spread, upr = fit + z * spread)
  }
  if (!se.fit) return(pad(fit))
  residual_scale <- sc$y_scale * sqrt(object$noise)
  if (q > 1L) names(residual_scale) <- output_names(object)
  list(fit = pad(fit), se.fit = pad(se), residual.scale = residual_scale)
}

# The posterior mean of f (a column per output) and, if need_var, its
# variance (standardised units, the same for every output) at the
# standardised inputs x, `chunk_size` rows at a time: from the exact factor
# (exact_variance()) or the fit's samples; both corrected from `neighbours`
# training points (correction.R).
posterior_moments <- function(object, x, need_var, threads, chunk_size = 4096L,
                              parallel = NULL, neighbours = 0L) {
  exact <- need_var && exact_variance(object)
  factor <- NULL
  if (exact) {
    factor <- exact_factor(object, threads)
    # K(X, x*) for a chunk takes 8 n bytes a point: at most 64 MB.
    chunk_size <- min(chunk_size, max(16L, floor(2^23 / object$n)))
  }
  ctx <- list(object = object, need_var = need_var, exact = exact, factor = factor,
              box = near_box(object), neighbours = neighbours)
  parts <- map_pieces(x, chunks(nrow(x), chunk_size), moments_piece, ctx, parallel,
                      threads, "Predicting")
  mean <- matrix(0, nrow(x), NCOL(object$alpha))
  if (length(parts)) mean[] <- do.call(rbind, lapply(parts, `[[`, "mean"))
  list(mean = mean, var = if (need_var) as.numeric(unlist(lapply(parts, `[[`, "var"))))
}

# posterior_moments() at the rows xc of one chunk.
moments_piece <- function(ctx, xc, threads) {
  object <- ctx$object
  # Far from the data the posterior is the prior, exactly: mean 0 and the
  # kernel's variance (no sample paths are evaluated there).
  far <- far_rows(xc, ctx$box)
  mean <- matrix(0, nrow(xc), NCOL(object$alpha))
  var <- if (ctx$need_var) rep(object$kernel$variance, nrow(xc))
  if (all(far)) return(list(mean = mean, var = var))
  xn <- xc[!far, , drop = FALSE]
  post <- posterior_at(object, xn, ctx$need_var && !ctx$exact, threads,
                       neighbours = ctx$neighbours)
  mean[!far, ] <- post$mean
  if (ctx$exact) var[!far] <- exact_variance_at(object, ctx$factor, xn, threads)
  else if (ctx$need_var) var[!far] <- rowMeans(post$centred^2)
  list(mean = mean, var = var)
}

# The posterior mean at the training inputs in the units of y, stored at
# fit time for fitted() and residuals(): one pass over K(X, X).
fitted_at_training <- function(fit, threads, parallel = NULL) {
  named_fitted(fit, posterior_moments(fit, fit$x, FALSE, threads, parallel = parallel)$mean)
}

# The mean at the training inputs (standardised, a column per output) in
# the units of y, named as fitted() gives it.
named_fitted <- function(fit, mean) {
  fitted <- unstandardize_targets(mean, fit$scaling)
  if (ncol(fitted) == 1L) return(stats::setNames(fitted[, 1L], rownames(fit$x)))
  dimnames(fitted) <- list(rownames(fit$x), output_names(fit))
  fitted
}

# Mean (standardised units) at standardised inputs x, and if asked the
# zero-mean sample paths f0_s(x) - basis(x) alpha_s (see solve.R), with
# basis(x) alpha corrected from `neighbours` training points (the fit's own
# samples only).  Rows of x must not be far_rows() (see check_near()).
posterior_at <- function(object, x, with_samples, threads,
                         alpha_samples = object$alpha_samples, prior = object$prior,
                         neighbours = 0L) {
  # The mean's weights: a column per output.
  means <- seq_len(NCOL(object$alpha))
  A <- if (with_samples) cbind(object$alpha, alpha_samples) else as.matrix(object$alpha)
  BA <- basis_matmul(object, x, A, threads) +
    residual_correction(object, x, neighbours, seq_len(ncol(A)), threads)
  out <- list(mean = BA[, means])
  if (with_samples) {
    out$centred <- prior_values(prior, object$kernel, x, threads) - BA[, -means, drop = FALSE]
  }
  out
}

# basis(x) %*% A at standardised inputs x, for the fit's basis: kernel
# functions at the training inputs (NULL basis) or at other points, random
# Fourier features, or the replayed features of doubly stochastic gradients.
basis_matmul <- function(object, x, A, threads) {
  basis <- object$basis
  kernel <- object$kernel
  switch(basis$type %||% "points",
    points = .Call(C_kernel_matmul, scale_inputs(x, kernel),
                   scale_inputs(basis$x %||% object$x, kernel), kernel_spec(kernel),
                   A, "double", threads),
    features = .Call(C_rff_matmul, basis$omega, basis$phase, kernel$variance,
                     scale_inputs(x, kernel), A, threads),
    dsg = dsg_matmul(basis, kernel, x, A, threads))
}

require_samples <- function(object, what) {
  if (ncol(object$alpha_samples) == 0L) {
    sddgp_abort(sprintf(paste(
      "The fit holds no posterior samples, which %s need.",
      "Refit with `samples =` (e.g. 64)."), what),
      class = "sddgp_error_no_samples")
  }
}

# Standardised input matrix from user-supplied new data, with the rows
# that `na.action` left out as its attribute "na.action" (as model.frame()
# does); rows with missing values that it kept are NA.
new_inputs <- function(object, newdata, na.action = stats::na.pass) {
  na.action <- as_na_action(na.action)
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata)) abort_argument("newdata", "must be a data frame for a formula fit")
    tt <- stats::delete.response(object$terms)
    mf <- tryCatch(
      stats::model.frame(tt, newdata, na.action = na.action, xlev = object$xlevels),
      error = function(e) abort_argument("newdata", paste0(
        "does not hold the model's variables, or has missing values that `na.action`",
        " refused: ", conditionMessage(e))))
    x <- stats::model.matrix(tt, mf)
    omitted <- attr(mf, "na.action")
  } else {
    if (is.data.frame(newdata) || is.matrix(newdata) || is_sparse_input(newdata)) {
      nm <- repair_names(colnames(newdata))
      if (!is.null(object$input_names) && !is.null(nm)) {
        # By index, not name: `newdata` may repeat a name the fit repaired.
        cols <- match(object$input_names, nm)
        missing_cols <- object$input_names[is.na(cols)]
        if (length(missing_cols)) {
          abort_argument("newdata", sprintf("lacks the input column%s %s",
                                            if (length(missing_cols) == 1L) "" else "s",
                                            paste0("`", missing_cols, "`", collapse = ", ")))
        }
        newdata <- newdata[, cols, drop = FALSE]
      }
    } else if (is.numeric(newdata) && is.null(dim(newdata)) && object$d > 1L) {
      newdata <- matrix(newdata, nrow = 1L)
    }
    # Fingerprints: as given, sparse ones too (checked below).
    x <- if (is_tanimoto(object$kernel)) newdata else as_input_matrix(newdata, "newdata")
    if (ncol(x) == object$d && !is_tanimoto(object$kernel)) {
      x <- tryCatch(na.action(x), error = function(e) abort_argument("newdata", paste0(
        "has missing values that `na.action` refused: ", conditionMessage(e))))
    }
    omitted <- attr(x, "na.action")
  }
  if (ncol(x) != object$d) {
    abort_argument("newdata", sprintf("has %d input column%s but the model has %d",
                                      ncol(x), if (ncol(x) == 1L) "" else "s", object$d))
  }
  if (is_tanimoto(object$kernel)) {
    # Fingerprints are never standardised, nor missing (see tanimoto()).
    return(check_fingerprints(x, "newdata", like = object))
  }
  check_finite_rows(x, "newdata", allow_na = TRUE)
  x <- standardize_inputs(x, object$scaling)
  attr(x, "na.action") <- omitted
  x
}

# Rows without missing values (fingerprints, dense or sparse, have none).
complete_rows <- function(x) {
  if (is_sparse_input(x)) rep(TRUE, nrow(x)) else !rowSums(is.na(x))
}

# An na.action function from a function or its name.
as_na_action <- function(na.action) {
  if (is.character(na.action) && length(na.action) == 1L && !is.na(na.action)) {
    na.action <- tryCatch(match.fun(na.action), error = function(e) NULL)
  }
  if (!is.function(na.action)) {
    abort_argument("na.action", "must be a function such as na.pass or na.omit, or its name")
  }
  na.action
}

# Length scales beyond the training inputs' range past which a point is
# "far": every kernel's value there, below exp(-1000) of its variance,
# underflows to 0, so the posterior is the prior.  Further out the squared
# distances overflow (NaN) and the random features' cosines lose accuracy.
far_lengthscales <- 1000

# The box outside which a point is far: the range of the (standardised)
# training inputs widened by far_lengthscales length scales, as a 2 x d
# matrix of lower and upper limits.  (Inducing points lie within that range.)
# The Tanimoto kernel has no far points (it is a similarity of
# fingerprints): NULL.
near_box <- function(object) {
  if (is_tanimoto(object$kernel)) return(NULL)
  lim <- apply(object$x, 2L, range)
  far <- far_lengthscales * object$kernel$lengthscale
  rbind(lim[1L, ] - far, lim[2L, ] + far)
}

# Which rows of standardised inputs x (+-Inf where standardising
# overflowed) lie outside the near_box() `box` in some coordinate.
far_rows <- function(x, box) {
  n <- nrow(x)
  if (is.null(box)) return(logical(n))
  rowSums(x < rep(box[1L, ], each = n) | x > rep(box[2L, ], each = n)) > 0
}

# Sample paths are not evaluated at far rows of `newdata`: an error rather
# than values from overflowed distances or inaccurate cosines.
check_near <- function(object, x, arg = "newdata") {
  far <- which(far_rows(x, near_box(object)))
  if (length(far)) {
    abort_argument(arg, sprintf(paste(
      "has %d row%s (first: row %d) more than %d length scales outside the range",
      "of the training inputs, where the posterior is the prior and sample paths",
      "are not evaluated; predict() gives the prior mean and standard error there"),
      length(far), if (length(far) == 1L) "" else "s", far[1L], far_lengthscales))
  }
  x
}

chunks <- function(n, size) {
  if (n == 0L) return(list())
  starts <- seq.int(1L, n, by = size)
  lapply(starts, function(s) s:min(n, s + size - 1L))
}
