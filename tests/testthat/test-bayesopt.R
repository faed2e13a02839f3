test_that("check_box validates the domain and names the argument", {
  box <- check_box(c(0, -1), c(1, 2))
  expect_identical(box, list(lower = c(0, -1), upper = c(1, 2), d = 2L))
  expect_error(check_box(c(0, 1), c(1, 1)), class = "sddgp_error_argument",
               regexp = "domain is empty; coordinate 2")
  expect_error(check_box(0, c(1, 2)), class = "sddgp_error_argument",
               regexp = "`upper` has length 2 but `lower` has length 1")
  expect_error(check_box(c(0, NA), c(1, 2)), class = "sddgp_error_argument",
               regexp = "`lower` must not contain NA")
  expect_error(check_box("a", 1), class = "sddgp_error_argument",
               regexp = "`lower` must be a non-empty numeric vector")
  expect_error(check_box(numeric(), numeric()), class = "sddgp_error_argument")
})

test_that("runif_box and clamp_box stay in the box", {
  set.seed(1)
  box <- check_box(c(-2, 10), c(-1, 20))
  u <- runif_box(500, box)
  expect_equal(dim(u), c(500L, 2L))
  expect_true(all(u[, 1] >= -2 & u[, 1] <= -1 & u[, 2] >= 10 & u[, 2] <= 20))
  # Roughly uniform: the mean of each coordinate is the box's centre.
  expect_equal(colMeans(u), c(-1.5, 15), tolerance = 0.05)
  expect_equal(clamp_box(rbind(c(-5, 15), c(0, 30)), box),
               rbind(c(-2, 15), c(-1, 20)))
})

test_that("evaluate_objective calls the objective per row and checks its value", {
  x <- rbind(c(1, 2), c(3, 4))
  evaluate_objective <- function(f, x) sddgp:::evaluate_objective(f, x, task_streams())
  expect_identical(evaluate_objective(function(p) sum(p^2), x), c(5, 25))
  expect_identical(check_objective(sum), sum)
  expect_error(check_objective("sum"), class = "sddgp_error_argument",
               regexp = "`objective` must be a function.*<character>")
  expect_error(check_objective(NULL), class = "sddgp_error_argument", regexp = "not NULL")
  err <- expect_error(evaluate_objective(function(p) if (p[1] > 2) NA_real_ else 1, x),
                      class = "sddgp_error_objective")
  expect_match(conditionMessage(err), "returned NA at x = \\(3, 4\\)")
  expect_identical(err$x, c(3, 4))
  expect_error(evaluate_objective(function(p) p, x), class = "sddgp_error_objective",
               regexp = "<numeric> and length 2")
  expect_error(evaluate_objective(function(p) "a", x), class = "sddgp_error_objective",
               regexp = "<character>")
  expect_error(evaluate_objective(function(p) Inf, x), class = "sddgp_error_objective",
               regexp = "returned Inf")
})

test_that("print and plot of a loop's result show its progress", {
  res <- new_bo_result("thompson", x = rbind(c(0.1, 0.2), c(0.5, 0.6)), y = c(1, 3),
                       history = data.frame(step = 1:2, evaluations = 1:2,
                                            best = c(1, 3), seconds = c(0.5, 0.25)),
                       call = quote(f()))
  expect_s3_class(res, c("sddgp_thompson", "sddgp_bo"))
  out <- capture.output(print(res))
  expect_match(out[1], "parallel Thompson sampling")
  expect_match(out[2], "2 evaluations in 2 steps, 0.75 s")
  expect_match(out[3], "best value: 3 at x = \\(0.5, 0.6\\)")
  pdf(NULL)
  on.exit(dev.off())
  expect_identical(plot(res, against = "seconds"), res)
  expect_error(plot(res, against = "time"), class = "sddgp_error_argument",
               regexp = "\"step\", \"evaluations\", \"seconds\"")
})

test_that("rescale_hyperparameters converts to standardised units and back", {
  scaling <- list(x_scale = c(2, 0.5), y_scale = 3)
  ker <- matern(3/2, c(1, 4), 9)
  std <- rescale_hyperparameters(ker, 0.9, scaling, "standard")
  expect_equal(std$kernel$lengthscale, c(0.5, 8))
  expect_equal(std$kernel$variance, 1)
  expect_equal(std$noise, 0.1)
  back <- rescale_hyperparameters(std$kernel, std$noise, scaling, "original")
  expect_equal(back$kernel$lengthscale, c(1, 4))
  expect_equal(back$kernel$variance, 9)
  expect_equal(back$noise, 0.9)
  # What is not known yet stays unknown.
  none <- rescale_hyperparameters(matern(3/2), NULL, scaling, "standard")
  expect_null(none$kernel$lengthscale)
  expect_null(none$kernel$variance)
  expect_null(none$noise)
})
