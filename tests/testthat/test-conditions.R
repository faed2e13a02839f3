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
