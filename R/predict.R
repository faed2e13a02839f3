#' Predict from a Gaussian process fit
#'
#' The posterior mean \eqn{k(x_*, X) \alpha}{k(x_(*), X) alpha} at new inputs, in the units of
#' the original target, optionally with standard errors and intervals in the
#' spirit of [stats::predict.lm()]. Standard errors come from the fit's
#' pathwise posterior samples (fit with `samples > 0`): the posterior variance
#' of \eqn{f(x_*)}{f(x_(*))} is estimated by the mean square of the zero-mean sample
#' paths \eqn{f_0(x_*) - k(x_*, X) \alpha_s}{f_0(x_(*)) - k(x_(*), X) alpha_s}; prediction intervals add the
#' noise variance. New inputs are processed in chunks of `chunk_size` rows, so
#' memory stays bounded for any number of them.
#'
#' At new inputs more than 1000 length scales outside the range of the
#' training inputs (in some coordinate), every kernel value underflows to 0
#' and the posterior is the prior: there the prediction is the prior mean
#' (the training targets' mean with `standardize = TRUE`, else 0) and the
#' standard error the prior standard deviation, exactly rather than from the
#' samples, however far out (inputs whose standardised values overflow
#' included).
#'
#' @param object An `sddgp` fit.
#' @param newdata A matrix or data frame with the training input columns (by
#'   name when both have names), or for a formula fit a data frame with the
#'   variables. Missing: the training inputs (for a formula fit with
#'   `na.action = na.exclude`, padded with `NA` at the rows it left out, as
#'   by [stats::napredict()]). Column names are repaired as
#'   [gp_sdd()] repaired the training names (an empty name becomes
#'   `V<position>`, repeated names `a`, `a.1`, ...) before matching, so a
#'   matrix with the training matrix's names matches column for column.
#' @param se.fit Return standard errors of the posterior mean of f.
#' @param interval `"none"`, `"confidence"` (for f) or `"prediction"` (for a
#'   new observation y, noise included).
#' @param weights Weights of the new observations, for prediction intervals:
#'   a new observation has noise variance `noise / weights` (as the training
#'   observations of a fit with `weights`). One value, or one per row of
#'   `newdata`.
#' @param level Coverage of the intervals.
#' @param chunk_size Rows of `newdata` handled at a time.
#' @param threads Number of threads; `NULL` uses [sddgp_threads()].
#' @param ... Unused.
#' @return With `se.fit = FALSE` and `interval = "none"`: a numeric vector.
#'   With an interval: a matrix with columns `fit`, `lwr`, `upr`. With
#'   `se.fit = TRUE`: a list with `fit` (vector or matrix as before),
#'   `se.fit` and `residual.scale` (the noise standard deviation of a unit
#'   weight).
#' @export
predict.sddgp <- function(object, newdata, se.fit = FALSE,
                          interval = c("none", "confidence", "prediction"),
                          level = 0.95, weights = 1, chunk_size = 4096L,
                          threads = NULL, ...) {
  check_dots_empty(...)
  check_flag(se.fit, "se.fit")
  if (is.character(interval) && length(interval) == 3L) interval <- interval[1L]
  check_choice(interval, "interval", c("none", "confidence", "prediction"))
  check_number(level, "level", lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  check_number(chunk_size, "chunk_size", lower = 1, integer = TRUE)
  threads <- sddgp_threads(threads)
  at_training <- missing(newdata)
  xnew <- if (at_training) object$x else new_inputs(object, newdata)
  check_positive_vector(weights, "weights")
  if (!length(weights) %in% c(1L, nrow(xnew))) {
    abort_argument("weights", sprintf("must have length 1 or %d (the rows of `newdata`), not %d",
                                      nrow(xnew), length(weights)))
  }
  need_var <- se.fit || interval != "none"
  if (need_var) require_samples(object, "standard errors and intervals")

  sc <- object$scaling
  mean <- numeric(nrow(xnew))
  var <- if (need_var) numeric(nrow(xnew))
  box <- near_box(object)
  pieces <- chunks(nrow(xnew), chunk_size)
  for (i in progress_along(pieces, "Predicting")) {
    rows <- pieces[[i]]
    # Far from the data the posterior is the prior, exactly: mean 0 and the
    # kernel's variance (no sample paths are evaluated there).
    x <- xnew[rows, , drop = FALSE]
    far <- far_rows(x, box)
    if (need_var) var[rows[far]] <- object$kernel$variance
    if (all(far)) next
    near <- rows[!far]
    post <- posterior_at(object, x[!far, , drop = FALSE], need_var, threads)
    mean[near] <- post$mean
    if (need_var) var[near] <- rowMeans(post$centred^2)
  }
  # At the training inputs, NA at the rows na.exclude() left out (as lm).
  pad <- function(v) if (at_training) stats::napredict(object$na.action, v) else v
  fit <- unstandardize(mean, sc$y_center, sc$y_scale)
  names(fit) <- rownames(xnew)
  if (!need_var) return(pad(fit))

  # y_scale multiplies last: its square overflows for targets beyond 1e154.
  se <- sc$y_scale * sqrt(var)
  if (interval != "none") {
    spread <- if (interval == "prediction") sc$y_scale * sqrt(var + object$noise / weights) else se
    q <- stats::qnorm((1 + level) / 2)
    fit <- cbind(fit = fit, lwr = fit - q * spread, upr = fit + q * spread)
  }
  if (!se.fit) return(pad(fit))
  list(fit = pad(fit), se.fit = pad(stats::setNames(se, rownames(xnew))),
       residual.scale = sc$y_scale * sqrt(object$noise))
}

#' @export
fitted.sddgp <- function(object, ...) {
  stats::predict(object, ...)
}

#' @export
residuals.sddgp <- function(object, ...) {
  sc <- object$scaling
  # Padded as fitted() is, with NA at the rows na.exclude() left out.
  stats::naresid(object$na.action, unstandardize(object$y, sc$y_center, sc$y_scale)) -
    stats::fitted(object, ...)
}

# Mean (standardised units) at standardised inputs x, and if asked the
# zero-mean sample paths f0_s(x) - basis(x) alpha_s (see solve.R).  Rows of
# x must not be far_rows() (see check_near()).
posterior_at <- function(object, x, with_samples, threads,
                         alpha_samples = object$alpha_samples, prior = object$prior) {
  A <- if (with_samples) cbind(object$alpha, alpha_samples) else
    matrix(object$alpha, ncol = 1L)
  BA <- basis_matmul(object, x, A, threads)
  out <- list(mean = BA[, 1L])
  if (with_samples) {
    out$centred <- prior_values(prior, object$kernel, x, threads) - BA[, -1L, drop = FALSE]
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

# Standardised input matrix from user-supplied new data.
new_inputs <- function(object, newdata) {
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata)) abort_argument("newdata", "must be a data frame for a formula fit")
    tt <- stats::delete.response(object$terms)
    mf <- tryCatch(
      stats::model.frame(tt, newdata, na.action = stats::na.pass, xlev = object$xlevels),
      error = function(e) abort_argument("newdata", paste0(
        "does not hold the model's variables: ", conditionMessage(e))))
    x <- stats::model.matrix(tt, mf)
  } else {
    if (is.data.frame(newdata) || is.matrix(newdata)) {
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
    x <- as_input_matrix(newdata, "newdata")
  }
  if (ncol(x) != object$d) {
    abort_argument("newdata", sprintf("has %d input column%s but the model has %d",
                                      ncol(x), if (ncol(x) == 1L) "" else "s", object$d))
  }
  check_finite_rows(x, "newdata")
  standardize_inputs(x, object$scaling)
}

# Length scales beyond the training inputs' range past which a point is
# "far": every kernel's value there, below exp(-1000) of its variance,
# underflows to 0, so the posterior is the prior.  Further out the squared
# distances overflow (NaN) and the random features' cosines lose accuracy.
far_lengthscales <- 1000

# The box outside which a point is far: the range of the (standardised)
# training inputs widened by far_lengthscales length scales, as a 2 x d
# matrix of lower and upper limits.  (Inducing points lie within that range.)
near_box <- function(object) {
  lim <- apply(object$x, 2L, range)
  far <- far_lengthscales * object$kernel$lengthscale
  rbind(lim[1L, ] - far, lim[2L, ] + far)
}

# Which rows of standardised inputs x (+-Inf where standardising
# overflowed) lie outside the near_box() `box` in some coordinate.
far_rows <- function(x, box) {
  n <- nrow(x)
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
