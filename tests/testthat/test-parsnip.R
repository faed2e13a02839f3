# The parsnip engine: fits and predictions equal gp_sdd()'s directly.

test_that("gp_reg() errors with a classed error when a framework is missing", {
  expect_error(require_framework("sddgp.no.such.package", "gp_reg()"),
               class = "sddgp_error_missing_package")
})

test_that("a parsnip fit() and predict() equal gp_sdd() directly", {
  skip_if_not_installed("parsnip")
  d <- framework_data()
  new <- data.frame(x1 = c(0.1, 0.5, 0.9), x2 = c(0.3, 0.7, 0.2))
  spec <- parsnip::set_engine(gp_reg(kernel = "matern52"), "sddgp", solver = "cholesky")
  set.seed(2)
  fit <- parsnip::fit(spec, y ~ x1 + x2, data = d)
  # The same seed: the noise and length scales are estimated alike.
  set.seed(2)
  direct <- gp_sdd(as.matrix(d[c("x1", "x2")]), d$y, kernel = "matern52",
                   solver = "cholesky", threads = 1)
  expect_equal(predict(fit, new)$.pred, unname(predict(direct, new)), tolerance = 1e-10)
  for (type in c("conf_int", "pred_int")) {
    interval <- if (type == "conf_int") "confidence" else "prediction"
    got <- predict(fit, new, type = type, level = 0.9)
    want <- predict(direct, new, interval = interval, level = 0.9)
    expect_equal(got$.pred_lower, unname(want[, "lwr"]), tolerance = 1e-10)
    expect_equal(got$.pred_upper, unname(want[, "upr"]), tolerance = 1e-10)
  }
})

test_that("given hyperparameters and fit_xy() reach gp_sdd() unchanged", {
  skip_if_not_installed("parsnip")
  d <- framework_data()
  spec <- parsnip::set_engine(gp_reg(kernel = "se", noise = 0.05), "sddgp",
                              solver = "sdd", samples = 4,
                              control = sdd_control(iterations = 300, tolerance = 0))
  set.seed(3)
  fit <- parsnip::fit_xy(spec, d[c("x1", "x2")], d$y)
  set.seed(3)
  direct <- gp_sdd(as.matrix(d[c("x1", "x2")]), d$y, kernel = "se", noise = 0.05,
                   solver = "sdd", samples = 4, control = sdd_control(iterations = 300, tolerance = 0),
                   threads = 1)
  expect_identical(fit$fit$noise, direct$noise)
  expect_equal(predict(fit, d[1:5, ])$.pred, unname(predict(direct, d[1:5, 1:2])),
               tolerance = 1e-10)
})

test_that("the engine's threads default to 1 and can be set", {
  skip_if_not_installed("parsnip")
  d <- framework_data(50)
  spec <- gp_reg(noise = 0.1)
  expect_identical(parsnip::fit(spec, y ~ ., data = d)$fit$threads, 1L)
  two <- parsnip::set_engine(spec, "sddgp", threads = 2)
  expect_identical(parsnip::fit(two, y ~ ., data = d)$fit$threads, 2L)
})

test_that("update() changes the main arguments; registration is idempotent", {
  skip_if_not_installed("parsnip")
  spec <- update(gp_reg(kernel = "se"), noise = 0.2)
  expect_s3_class(spec, "gp_reg")
  expect_identical(rlang::eval_tidy(spec$args$noise), 0.2)
  expect_identical(rlang::eval_tidy(spec$args$kernel), "se")
  expect_silent(register_parsnip())
  expect_identical(sum(parsnip::get_model_env()$models == "gp_reg"), 1L)
})

test_that("tune finds a dials parameter for each main argument", {
  skip_if_not_installed("parsnip")
  skip_if_not_installed("dials")
  invisible(gp_reg())
  args <- parsnip::get_model_env()$gp_reg_args
  # As tune makes them: each argument's `func` called without arguments.
  params <- lapply(args$func, function(f) getExportedValue(f$pkg, f$fun)())
  names(params) <- args$parsnip
  expect_s3_class(params$kernel, "qual_param")
  expect_identical(params$kernel$values, c("matern12", "matern32", "matern52", "se"))
  expect_s3_class(params$noise, "quant_param")
})
