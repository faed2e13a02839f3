# The classed conditions every validation error uses.

test_that("sddgp errors carry their classes, the argument and the message", {
  e <- tryCatch(sddgp:::abort_argument("foo", "must be nice"), error = identity)
  expect_s3_class(e, c("sddgp_error_argument", "sddgp_error", "error", "condition"),
                  exact = TRUE)
  expect_equal(conditionMessage(e), "`foo` must be nice.")
  expect_equal(e$arg, "foo")
  expect_null(conditionCall(e))
  e2 <- tryCatch(sddgp:::sddgp_abort("boom", class = "sddgp_error_custom", value = 3),
                 error = identity)
  expect_s3_class(e2, c("sddgp_error_custom", "sddgp_error", "error", "condition"),
                  exact = TRUE)
  expect_equal(e2$value, 3)
  # Callers can catch them by class.
  caught <- tryCatch(gp_sdd(matrix(1:4, 2), c(1, NA), kernel = matern(3/2, 1, 1),
                            noise = 1),
                     sddgp_error_argument = function(e) e$arg)
  expect_equal(caught, "y")
})

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

test_that("sddgp warnings carry their classes, the message and extra fields", {
  w <- tryCatch(sddgp:::sddgp_warn("careful", class = "sddgp_warning_custom", value = 2),
                warning = identity)
  expect_s3_class(w, c("sddgp_warning_custom", "sddgp_warning", "warning", "condition"),
                  exact = TRUE)
  expect_equal(conditionMessage(w), "careful")
  expect_null(conditionCall(w))
  expect_equal(w$value, 2)
  # A muffled warning lets the code go on.
  out <- withCallingHandlers({
    sddgp:::sddgp_warn("careful")
    "went on"
  }, sddgp_warning = function(w) invokeRestart("muffleWarning"))
  expect_equal(out, "went on")
})
