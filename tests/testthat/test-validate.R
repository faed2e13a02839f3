# The validators of the user's arguments.

test_that("check_number() enforces type, finiteness, integrality and bounds", {
  cn <- sddgp:::check_number
  expect_invisible(cn(3, "a"))
  expect_identical(cn(3, "a"), 3)
  for (bad in list("1", NA, NaN, Inf, -Inf, c(1, 2), numeric(0), NULL, TRUE)) {
    expect_error(cn(bad, "a"), class = "sddgp_error_argument",
                 regexp = "`a` must be a single finite number")
  }
  expect_error(cn(1.5, "a", integer = TRUE), class = "sddgp_error_argument",
               regexp = "`a` must be a whole number, not 1.5")
  expect_error(cn(0, "a", lower = 0, lower_open = TRUE), class = "sddgp_error_argument",
               regexp = "`a` must lie in \\(0, Inf\\], not 0")
  expect_error(cn(2, "a", lower = 0, upper = 1), class = "sddgp_error_argument",
               regexp = "`a` must lie in \\[0, 1\\], not 2")
  expect_error(cn(1, "a", upper = 1, upper_open = TRUE), class = "sddgp_error_argument",
               regexp = "`a` must lie in \\[-Inf, 1\\), not 1")
  expect_silent(cn(0, "a", lower = 0))
  expect_silent(cn(1, "a", upper = 1))
  expect_silent(cn(2L, "a", integer = TRUE))
})

test_that("check_choice() lists the valid choices", {
  cc <- sddgp:::check_choice
  expect_identical(cc("b", "opt", c("a", "b")), "b")
  expect_error(cc("z", "opt", c("a", "b")), class = "sddgp_error_argument",
               regexp = "`opt` must be one of \"a\", \"b\", not \"z\"")
  expect_error(cc(1, "opt", c("a", "b")), class = "sddgp_error_argument",
               regexp = "not that value")
  expect_error(cc(c("a", "b"), "opt", c("a", "b")), class = "sddgp_error_argument")
  expect_error(cc(NA_character_, "opt", c("a", "b")), class = "sddgp_error_argument")
})

test_that("check_positive_vector() and check_flag() name the argument", {
  cp <- sddgp:::check_positive_vector
  expect_silent(cp(c(1, 2), "v"))
  expect_error(cp(character(0), "v"), class = "sddgp_error_argument",
               regexp = "`v` must be a non-empty numeric vector")
  expect_error(cp(c(1, NaN), "v"), class = "sddgp_error_argument",
               regexp = "`v` must not contain NA")
  expect_error(cp(c(3, 0, -1), "v"), class = "sddgp_error_argument",
               regexp = "`v` must be positive; element 2 is 0")
  cf <- sddgp:::check_flag
  expect_identical(cf(TRUE, "f"), TRUE)
  expect_error(cf(NA, "f"), class = "sddgp_error_argument", regexp = "`f` must be TRUE or FALSE")
  expect_error(cf(0, "f"), class = "sddgp_error_argument")
})

test_that("choose_one() takes the first of the default choices and validates the rest", {
  ch <- c("a", "b")
  expect_equal(sddgp:::choose_one(ch, "arg", ch), "a")
  expect_equal(sddgp:::choose_one("b", "arg", ch), "b")
  expect_error(sddgp:::choose_one(c("b", "a"), "arg", ch), class = "sddgp_error_argument",
               regexp = "`arg` must be one of \"a\", \"b\"")
  expect_error(sddgp:::choose_one("c", "arg", ch), regexp = "not \"c\"")
})

test_that("without standardisation, inputs beyond 1e100 length scales are an argument error", {
  d <- make_data(40, 2, seed = 74)
  err <- expect_error(gp_sdd(d$x * 1e200, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.02,
                             solver = "cholesky", standardize = FALSE),
                      class = "sddgp_error_argument",
                      regexp = "`x` reaches .* length scales in column [12], beyond 1e\\+100")
  expect_equal(err$arg, "x")
  # Length scales in the inputs' units: the same model as at unit scale.
  xt <- make_inputs(5, 2)
  for (s in c(1e200, 1e-300)) {
    fs <- gp_sdd(d$x * s, d$y, kernel = matern(3/2, 0.3 * s, 1), noise = 0.02,
                 solver = "cholesky", standardize = FALSE)
    f1 <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.02,
                 solver = "cholesky", standardize = FALSE)
    expect_equal(predict(fs, xt * s), predict(f1, xt), tolerance = 1e-8)
  }
})
