# The mlr3 learner: trained models and predictions equal gp_sdd()'s directly.

test_that("an mlr3 train() and predict() equal gp_sdd() directly", {
  skip_if_not_installed("mlr3")
  d <- framework_data()
  new <- data.frame(x1 = c(0.1, 0.5, 0.9), x2 = c(0.3, 0.7, 0.2))
  learner <- mlr3::lrn("regr.sddgp", kernel = "matern52", solver = "cholesky",
                       predict_type = "se")
  set.seed(2)
  learner$train(mlr3::as_task_regr(d, target = "y"))
  # The same seed: the noise and length scales are estimated alike.
  set.seed(2)
  direct <- gp_sdd(as.matrix(d[c("x1", "x2")]), d$y, kernel = "matern52",
                   solver = "cholesky", threads = 1)
  pred <- learner$predict_newdata(new)
  want <- predict(direct, new, se.fit = TRUE)
  expect_equal(pred$response, unname(want$fit), tolerance = 1e-10)
  expect_equal(pred$se, unname(want$se.fit), tolerance = 1e-10)
})

test_that("iterative fits give standard errors from their samples", {
  skip_if_not_installed("mlr3")
  d <- framework_data()
  task <- mlr3::as_task_regr(d, target = "y")
  args <- list(kernel = "se", noise = 0.05, solver = "sdd",
               control = sdd_control(iterations = 300, tolerance = 0))
  learner <- do.call(mlr3::lrn, c(list("regr.sddgp", predict_type = "se", samples = 4), args))
  set.seed(3)
  learner$train(task)
  set.seed(3)
  direct <- do.call(gp_sdd, c(list(as.matrix(d[c("x1", "x2")]), d$y, samples = 4,
                                   threads = 1), args))
  pred <- learner$predict(task, row_ids = 1:5)
  want <- predict(direct, d[1:5, 1:2], se.fit = TRUE)
  expect_equal(pred$response, unname(want$fit), tolerance = 1e-10)
  expect_equal(pred$se, unname(want$se.fit), tolerance = 1e-10)

  without <- do.call(mlr3::lrn, c(list("regr.sddgp", predict_type = "se"), args))
  without$train(task)
  expect_error(without$predict(task), class = "sddgp_error_no_samples")
})

test_that("threads default to 1, and set_threads() sets them", {
  skip_if_not_installed("mlr3")
  task <- mlr3::as_task_regr(framework_data(50), target = "y")
  learner <- mlr3::lrn("regr.sddgp", noise = 0.1)
  expect_identical(learner$param_set$values$threads, 1L)
  expect_true("threads" %in% learner$param_set$tags$threads)
  learner$train(task)
  expect_identical(learner$model$threads, 1L)
  mlr3::set_threads(learner, 2)
  expect_identical(learner$param_set$values$threads, 2L)
  learner$train(task)
  expect_identical(learner$model$threads, 2L)
})

test_that("the learner is registered once, as LearnerRegrSddgp", {
  skip_if_not_installed("mlr3")
  expect_silent(register_mlr3())
  expect_s3_class(mlr3::lrn("regr.sddgp"), "LearnerRegrSddgp")
  expect_identical(sum(mlr3::mlr_learners$keys() == "regr.sddgp"), 1L)
})
