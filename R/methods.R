# The stats generics of a fit besides predict(), simulate() and logLik():
# coefficients, noise, formula, update, fitted values and residuals.

#' Hyperparameters, noise, formula and refits of a Gaussian process fit
#'
#' `coef()` returns the kernel's hyperparameters and the noise variance,
#' given or estimated, in the units of the data: with `standardize = TRUE`
#' the fit works with (and `print()` and `summary()` show) hyperparameters
#' of the standardised data, which `coef()` converts back, each length
#' scale times its input column's standard deviation and the kernel and
#' noise variances times the variance of `y`. The kernel is the same
#' function either way.
#'
#' `sigma()` is the noise standard deviation in the units of `y` (of a unit
#' weight, for a fit with `weights`), `nobs()` the number of observations,
#' `formula()` the formula of a fit made with one (an error of class
#' `sddgp_error_argument` for a matrix fit), and `update()` refits with
#' changed arguments, as [stats::update()] does, from the call recorded as
#' `gp_sdd(...)` (a new formula, for a formula fit, as `formula.`).
#' `fitted()` and `residuals()` return the posterior mean at the training
#' inputs, computed once at the end of the fit, and the targets minus it.
#' That pass computes \eqn{n^2}{n^2} kernel values, the work of \eqn{n / 512}{n / 512}
#' SDD steps of the default batch size (a fifth of SDD's default 10,000
#' steps at a million points, a fraction of the exact solve up to 20,000).
#'
#' @param object,x An `sddgp` fit.
#' @param formula. For `update()`: changes to the formula, as in
#'   [stats::update.formula()] (`. ~ . - x2`).
#' @param evaluate For `update()`: refit (`TRUE`), or return the call.
#' @param ... For `update()`: arguments of [gp_sdd()] to change (`NULL`
#'   removes one); otherwise unused.
#' @return `coef()`: a named numeric vector, `lengthscale.<input>` for each
#'   input column (named as in `print()`), `variance` and `noise`; for the
#'   [tanimoto()] kernel, which has no length scales, `variance`, `noise`
#'   and its prior `mean`.
#'   `sigma()`, `nobs()`: a number. `formula()`: a formula. `update()`: the
#'   new fit, or its call. `fitted()`, `residuals()`: a vector, one value
#'   per observation (with `NA` at rows left out by `na.action =
#'   na.exclude`).
#' @seealso [logLik.sddgp()] for the log-likelihood, AIC and BIC.
#' @examples
#' set.seed(1)
#' d <- data.frame(x1 = runif(100), x2 = runif(100))
#' d$y <- sin(6 * d$x1) + d$x2^2 + rnorm(100, sd = 0.1)
#' fit <- gp_sdd(y ~ ., data = d, threads = 1)
#' coef(fit)
#' sigma(fit)
#' fit1 <- update(fit, . ~ . - x2)
#' formula(fit1)
#' head(residuals(fit1))
#' @name sddgp-methods
NULL

#' @rdname sddgp-methods
#' @export
coef.sddgp <- function(object, ...) {
  check_dots_empty(...)
  sc <- object$scaling
  # Several outputs share the kernel and noise of the standardised data:
  # in the data's units each has its own variance and noise.
  per_output <- function(name) {
    if (n_outputs(object) == 1L) name else paste(name, output_names(object), sep = ".")
  }
  c(if (!is_tanimoto(object$kernel)) {
      stats::setNames(object$kernel$lengthscale * sc$x_scale,
                      paste0("lengthscale.", input_labels(object)))
    },
    stats::setNames(object$kernel$variance * sc$y_scale^2, per_output("variance")),
    stats::setNames(object$noise * sc$y_scale^2, per_output("noise")),
    if (is_tanimoto(object$kernel)) {
      stats::setNames(rep_len(object$kernel$mean, n_outputs(object)), per_output("mean"))
    })
}

#' @rdname sddgp-methods
#' @importFrom stats sigma
#' @export
sigma.sddgp <- function(object, ...) {
  check_dots_empty(...)
  sigma <- object$scaling$y_scale * sqrt(object$noise)
  if (n_outputs(object) > 1L) names(sigma) <- output_names(object)
  sigma
}

#' @rdname sddgp-methods
#' @export
formula.sddgp <- function(x, ...) {
  if (is.null(x$terms)) {
    abort_argument("x", "was fitted with the matrix interface (gp_sdd(x, y)) and has no formula")
  }
  stats::formula(x$terms)
}

#' @rdname sddgp-methods
#' @importFrom stats update
#' @export
update.sddgp <- function(object, formula., ..., evaluate = TRUE) {
  call <- stats::getCall(object)
  if (is.null(call)) abort_argument("object", "holds no call to update")
  # As stats::update.default, but the formula is gp_sdd()'s argument `x`.
  if (!missing(formula.)) {
    if (is.null(object$terms)) {
      abort_argument("formula.", "applies to fits made with a formula, not the matrix interface")
    }
    call$x <- stats::update(stats::formula(object), formula.)
  }
  extras <- match.call(expand.dots = FALSE)$...
  if (length(extras) && (is.null(names(extras)) || !all(nzchar(names(extras))))) {
    abort_argument("...", "must be named arguments of gp_sdd()")
  }
  for (name in names(extras)) call[[name]] <- extras[[name]]
  if (evaluate) eval(call, parent.frame()) else call
}

#' @rdname sddgp-methods
#' @export
fitted.sddgp <- function(object, ...) {
  check_dots_empty(...)
  stats::napredict(object$na.action, training_fit(object))
}

#' @rdname sddgp-methods
#' @export
residuals.sddgp <- function(object, ...) {
  check_dots_empty(...)
  sc <- object$scaling
  r <- unstandardize_targets(object$y, sc) - training_fit(object)
  stats::naresid(object$na.action, r)
}

# The fitted values, stored by the fit or (after a fit with a time limit)
# computed now.
training_fit <- function(object) {
  object$fitted.values %||% fitted_at_training(object, object$threads)
}

# The names of the input columns: the model matrix's or the matrix's
# columns, else x1, ..., xd.
input_labels <- function(object) {
  object$input_names %||% paste0("x", seq_len(object$d))
}
