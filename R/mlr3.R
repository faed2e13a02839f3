#' Gaussian process regression learner for mlr3
#'
#' The [mlr3](https://mlr3.mlr-org.com) regression learner `"regr.sddgp"`
#' (R6 class `LearnerRegrSddgp`) fits [gp_sdd()]. It is added to
#' `mlr3::mlr_learners` when mlr3 is loaded (mlr3, paradox and R6 are only
#' suggested by sddgp), so `mlr3::lrn("regr.sddgp")` makes one.
#'
#' Its parameters are those of [gp_sdd()]: `kernel` (a family name,
#' `"matern12"`, `"matern32"`, `"matern52"` or `"se"`), `noise` (not set:
#' estimated), `solver` (not set: chosen automatically), `control`,
#' `samples`, `standardize`, `estimation`, and `threads`, used for training
#' and prediction. `threads` is 1 unless set (not [sddgp_threads()]), as for
#' mlr3's ranger and xgboost learners, so that parallel resampling does not
#' oversubscribe the cores; it carries the tag `"threads"`, so
#' `mlr3::set_threads()` sets it, and it can be tuned as any other
#' parameter. Features must be numeric or integer.
#'
#' Predict types are `"response"` and `"se"`, the standard error of the
#' posterior mean of f from [predict.sddgp()] (`se.fit = TRUE`): exact
#' fits (`solver = "cholesky"`, which the automatic choice picks below
#' about 1200 observations) have it, other solvers need `samples` (64,
#' say); see [predict.sddgp()]'s section Standard errors.
#'
#' @name mlr_learners_regr.sddgp
#' @aliases LearnerRegrSddgp
#' @examples
#' if (requireNamespace("mlr3", quietly = TRUE)) {
#'   learner <- mlr3::lrn("regr.sddgp", kernel = "matern52", predict_type = "se")
#'   task <- mlr3::tsk("mtcars")$select(c("wt", "hp"))
#'   learner$train(task)
#'   learner$predict(task)
#' }
NULL

# Adds the learner to mlr3's dictionary, once per load of mlr3.
register_mlr3 <- function() {
  learners <- mlr3::mlr_learners
  if (!"regr.sddgp" %in% learners$keys()) learners$add("regr.sddgp", learner_regr_sddgp())
  invisible()
}

# The R6 class, made here rather than at the top level so that installing
# sddgp needs neither R6 nor mlr3.  Its methods' `self` and `super` are
# bound by R6 when the class is instantiated, which R CMD check cannot see.
utils::globalVariables(c("self", "super"))
learner_regr_sddgp <- function() {
  R6::R6Class("LearnerRegrSddgp", inherit = mlr3::LearnerRegr,
    public = list(
      initialize = function() {
        param_set <- paradox::ps(
          kernel = paradox::p_fct(kernel_families$family, default = "matern32", tags = "train"),
          noise = paradox::p_dbl(lower = 0, tags = "train"),
          solver = paradox::p_fct(c("sdd", "cholesky", "cg", "sgd", "svgp", "dsg", "cabcd"),
                                  tags = "train"),
          control = paradox::p_uty(tags = "train"),
          samples = paradox::p_int(lower = 0L, upper = 1e5L, default = 0L, tags = "train"),
          standardize = paradox::p_lgl(default = TRUE, tags = "train"),
          estimation = paradox::p_uty(tags = "train"),
          threads = paradox::p_int(lower = 1L, default = 1L,
                                   tags = c("train", "predict", "threads")))
        param_set$set_values(threads = 1L)
        super$initialize(
          id = "regr.sddgp", param_set = param_set, predict_types = c("response", "se"),
          feature_types = c("integer", "numeric"), packages = "sddgp",
          label = "Gaussian Process by Stochastic Dual Descent",
          man = "sddgp::mlr_learners_regr.sddgp")
      }
    ),
    private = list(
      .train = function(task) {
        x <- as.matrix(task$data(cols = task$feature_names))
        do.call(gp_sdd, c(list(x = x, y = task$truth()),
                          self$param_set$get_values(tags = "train")))
      },
      .predict = function(task) {
        newdata <- as.matrix(task$data(cols = self$state$feature_names))
        threads <- self$param_set$get_values(tags = "predict")$threads
        if (self$predict_type == "response") {
          return(list(response = unname(stats::predict(self$model, newdata, threads = threads))))
        }
        pred <- stats::predict(self$model, newdata, se.fit = TRUE, threads = threads)
        list(response = unname(pred$fit), se = unname(pred$se.fit))
      }
    )
  )
}
