#' Gaussian process regression for tidymodels (parsnip)
#'
#' `gp_reg()` specifies a Gaussian process regression model for the
#' [parsnip](https://parsnip.tidymodels.org) package; its engine `"sddgp"`
#' fits it with [gp_sdd()]. The model and engine are registered with
#' parsnip when parsnip is loaded (it is only suggested by sddgp).
#'
#' Predictors are converted to a numeric matrix (factors to indicator
#' columns) and the fit is `gp_sdd(x, y, kernel, noise, ...)`; hyperparameters
#' not given (the kernel's length scales and variance, and `noise` when
#' `NULL`) are estimated as [gp_sdd()] describes.
#'
#' Engine arguments, given to `parsnip::set_engine()`, are passed on to
#' [gp_sdd()]: `solver`, `control`, `samples`, `standardize`, `estimation`,
#' and `threads`, which defaults to 1 (not to [sddgp_threads()]), as
#' parsnip's ranger and xgboost engines do, so that resampling in parallel
#' does not oversubscribe the cores: `set_engine("sddgp", threads = 2)` to
#' use more. Predictions use the same number of threads.
#'
#' `predict()` gives `type = "numeric"`, `"conf_int"` (for the function
#' f) and `"pred_int"` (for a new observation, noise included); the
#' intervals need standard errors, available as [predict.sddgp()]'s
#' section Standard errors says: exact fits (`solver = "cholesky"`, which
#' the automatic choice picks below about 1200 observations) have them,
#' other solvers need `set_engine("sddgp", samples = 64)`, say.
#'
#' @param mode The model's mode: only `"regression"`.
#' @param engine The engine: only `"sddgp"`.
#' @param kernel Kernel family, one of `"matern12"`, `"matern32"`,
#'   `"matern52"`, `"se"` (as for [gp_sdd()]); `NULL` is `"matern32"`.
#' @param noise Observation noise variance (of the standardised target, by
#'   default), or `NULL` to estimate it.
#' @return `gp_reg()` and `update()`: a model specification of class
#'   `gp_reg` (a parsnip `model_spec`). `kernel_family()`: the qualitative
#'   [dials](https://dials.tidymodels.org) parameter that tune uses for
#'   `gp_reg(kernel = tune())` (noise is tuned with `dials::penalty()`, a
#'   range of 1e-10 to 1). Without parsnip (or, for `kernel_family()`,
#'   dials) installed: an error of class `sddgp_error_missing_package`.
#' @examples
#' if (requireNamespace("parsnip", quietly = TRUE)) {
#'   spec <- parsnip::set_engine(gp_reg(kernel = "matern52"), "sddgp", threads = 1)
#'   fit <- parsnip::fit(spec, mpg ~ wt + hp, data = mtcars)
#'   print(predict(fit, mtcars[1:3, ]))
#'   predict(fit, mtcars[1:3, ], type = "pred_int")
#' }
#' @export
gp_reg <- function(mode = "regression", engine = "sddgp", kernel = NULL, noise = NULL) {
  require_framework("parsnip", "gp_reg()")
  args <- list(kernel = rlang::enquo(kernel), noise = rlang::enquo(noise))
  parsnip::new_model_spec("gp_reg", args = args, eng_args = NULL, mode = mode,
                          user_specified_mode = !missing(mode), method = NULL,
                          engine = engine, user_specified_engine = !missing(engine))
}

#' @rdname gp_reg
#' @param object A `gp_reg` model specification.
#' @param parameters A one-row data frame of parameter values (as made by
#'   tune), or `NULL`.
#' @param fresh Replace all the arguments (`TRUE`) or only those given.
#' @param ... Engine arguments to update.
#' @export
update.gp_reg <- function(object, parameters = NULL, kernel = NULL, noise = NULL,
                          fresh = FALSE, ...) {
  require_framework("parsnip", "update() of a gp_reg()")
  args <- list(kernel = rlang::enquo(kernel), noise = rlang::enquo(noise))
  parsnip::update_spec(object = object, parameters = parameters, args_enquo_list = args,
                       fresh = fresh, cls = "gp_reg", ...)
}

#' @rdname gp_reg
#' @param values For tuning with tune: the kernel families to try.
#' @export
kernel_family <- function(values = c("matern12", "matern32", "matern52", "se")) {
  require_framework("dials", "kernel_family()")
  dials::new_qual_param(type = "character", values = values,
                        label = c(kernel_family = "Kernel Family"))
}

# Adds gp_reg() and its engine to parsnip's model registry, once per load
# of parsnip.
register_parsnip <- function() {
  if ("gp_reg" %in% parsnip::get_model_env()$models) return(invisible())
  model <- "gp_reg"
  mode <- "regression"
  eng <- "sddgp"
  parsnip::set_new_model(model)
  parsnip::set_model_mode(model, mode)
  parsnip::set_model_engine(model, mode = mode, eng = eng)
  parsnip::set_dependency(model, eng = eng, pkg = "sddgp", mode = mode)
  parsnip::set_model_arg(model, eng = eng, parsnip = "kernel", original = "kernel",
                         func = list(pkg = "sddgp", fun = "kernel_family"),
                         has_submodel = FALSE)
  # The noise variance is the ridge penalty of the kernel ridge regression
  # that the posterior mean solves; dials' penalty() range (1e-10 to 1)
  # suits standardised targets.
  parsnip::set_model_arg(model, eng = eng, parsnip = "noise", original = "noise",
                         func = list(pkg = "dials", fun = "penalty"), has_submodel = FALSE)
  parsnip::set_fit(model, eng = eng, mode = mode, value = list(
    interface = "matrix", protect = c("x", "y"),
    func = c(pkg = "sddgp", fun = "gp_sdd"),
    defaults = list(threads = 1L)))
  parsnip::set_encoding(model, eng = eng, mode = mode, options = list(
    predictor_indicators = "traditional", compute_intercept = FALSE,
    remove_intercept = TRUE, allow_sparse_x = FALSE))
  # Prediction runs on the threads the fit was given.
  predict_args <- list(object = quote(object$fit), newdata = quote(new_data),
                       threads = quote(object$fit$threads))
  parsnip::set_pred(model, eng = eng, mode = mode, type = "numeric", value = list(
    pre = NULL, post = NULL, func = c(fun = "predict"), args = predict_args))
  for (type in c("conf_int", "pred_int")) {
    interval <- if (type == "conf_int") "confidence" else "prediction"
    parsnip::set_pred(model, eng = eng, mode = mode, type = type, value = list(
      pre = NULL, post = parsnip_interval,
      func = c(fun = "predict"),
      args = c(predict_args, list(interval = interval, level = quote(level)))))
  }
  invisible()
}

# predict.sddgp()'s fit/lwr/upr matrix as parsnip's interval columns.
parsnip_interval <- function(results, object) {
  data.frame(.pred_lower = unname(results[, "lwr"]), .pred_upper = unname(results[, "upr"]))
}
