# The machinery shared by every solver's settings: the control object,
# choosing the solver from `solver` and `control`, and the kernel cache rule.

test_that("a control object knows its solver and prints its settings", {
  ctl <- cholesky_control(features = 50)
  expect_s3_class(ctl, c("sddgp_control_cholesky", "sddgp_control"))
  expect_equal(ctl$solver, "cholesky")
  expect_identical(ctl$features, 50L)
  expect_output(print(ctl), "Settings of solver \"cholesky\" \\(exact Cholesky solve\\)\n  features +50")
  expect_error(cholesky_control(features = 0), class = "sddgp_error_argument",
               regexp = "`features`")
})

test_that("the solver comes from `solver`, else from `control`, else the fit chooses", {
  # Neither given: left to the fit (solve_automatic(), test-choice.R).
  expect_identical(sddgp:::resolve_solver(NULL, NULL, 100),
                   list(solver = NULL, control = NULL))
  expect_equal(sddgp:::resolve_solver(NULL, sdd_control(), 100)$solver, "sdd")
  r <- sddgp:::resolve_solver(NULL, cholesky_control(features = 10), 100)
  expect_equal(r$solver, "cholesky")
  expect_identical(r$control$features, 10L)
  r <- sddgp:::resolve_solver("cholesky", NULL, 100)
  expect_equal(r$control, cholesky_control())
  expect_error(sddgp:::resolve_solver("sdd", cholesky_control(), 100),
               class = "sddgp_error_argument",
               regexp = "`control` was made by cholesky_control\\(\\) but `solver` is \"sdd\"; use sdd_control\\(\\)")
  expect_error(sddgp:::resolve_solver("qr", NULL, 100), class = "sddgp_error_argument",
               regexp = "`solver` must be one of \"sdd\", \"cholesky\"")
  expect_error(sddgp:::resolve_solver(NULL, list(solver = "sdd"), 100),
               class = "sddgp_error_argument",
               regexp = "`control` must be made by a solver's control function, such as sdd_control\\(\\)")
  expect_error(sddgp:::resolve_solver("cg", list(), 100),
               class = "sddgp_error_argument", regexp = "`control` must be made by cg_control\\(\\)")
  expect_error(sddgp:::resolve_solver("qr", list(), 100), class = "sddgp_error_argument",
               regexp = "`solver` must be one of")
})

test_that("the kernel is cached when its n^2 entries fit the budget", {
  ctl <- function(cache, limit, precision = "double") {
    list(cache = cache, cache_limit = limit, precision = precision)
  }
  expect_true(sddgp:::use_kernel_cache(ctl("auto", 8e6), 1000))
  expect_false(sddgp:::use_kernel_cache(ctl("auto", 8e6 - 1), 1000))
  expect_true(sddgp:::use_kernel_cache(ctl("auto", 4e6, "single"), 1000))
  expect_false(sddgp:::use_kernel_cache(ctl("auto", 4e6 - 1, "single"), 1000))
  expect_true(sddgp:::use_kernel_cache(ctl("always", 0), 1000))
  expect_false(sddgp:::use_kernel_cache(ctl("never", Inf), 10))
  expect_equal(sddgp:::kernel_settings(c("auto", "always", "never"), 1,
                                       c("double", "single")),
               list(cache = "auto", cache_limit = 1, precision = "double"))
  expect_error(sddgp:::kernel_settings("x", 1, "double"), class = "sddgp_error_argument",
               regexp = "`cache`")
  expect_error(sddgp:::kernel_settings("auto", -1, "double"),
               class = "sddgp_error_argument", regexp = "`cache_limit`")
  expect_error(sddgp:::kernel_settings("auto", 1, "float"),
               class = "sddgp_error_argument",
               regexp = "`precision` must be one of \"double\", \"single\", not \"float\"")
})
