# sddgp_threads(): where the default comes from, and validation.

test_that("the argument beats the option, the environment and the check limit", {
  withr::local_options(sddgp.threads = 2)
  withr::local_envvar(SDDGP_NUM_THREADS = "2", "_R_CHECK_LIMIT_CORES_" = "true")
  expect_identical(sddgp_threads(1), 1L)
  expect_output(sddgp_threads(1, verbose = TRUE), "sddgp uses 1 thread \\(from argument\\)")
})

test_that("the option beats the environment variable", {
  withr::local_options(sddgp.threads = 1)
  withr::local_envvar(SDDGP_NUM_THREADS = "2", "_R_CHECK_LIMIT_CORES_" = "true")
  expect_identical(sddgp_threads(), 1L)
  expect_output(sddgp_threads(verbose = TRUE), "1 thread \\(from options\\(sddgp.threads\\)\\)")
})

test_that("SDDGP_NUM_THREADS beats _R_CHECK_LIMIT_CORES_", {
  withr::local_options(sddgp.threads = NULL)
  withr::local_envvar(SDDGP_NUM_THREADS = "1", "_R_CHECK_LIMIT_CORES_" = "true")
  expect_identical(sddgp_threads(), 1L)
  expect_output(sddgp_threads(verbose = TRUE), "\\(from SDDGP_NUM_THREADS\\)")
})

test_that("_R_CHECK_LIMIT_CORES_ limits to 2 threads unless it is false", {
  withr::local_options(sddgp.threads = NULL)
  withr::local_envvar(SDDGP_NUM_THREADS = NA, "_R_CHECK_LIMIT_CORES_" = "TRUE")
  limit <- .Call(sddgp:::C_openmp_info)[4]
  expect_identical(sddgp_threads(), as.integer(min(2, limit)))
  expect_output(sddgp_threads(verbose = TRUE), "\\(from _R_CHECK_LIMIT_CORES_\\)")
  withr::local_envvar("_R_CHECK_LIMIT_CORES_" = "false")
  expect_output(sddgp_threads(verbose = TRUE), "\\(from logical CPUs\\)")
  cores <- parallel::detectCores()
  if (is.na(cores)) cores <- 1L
  expect_identical(sddgp_threads(), as.integer(min(cores, limit)))
  withr::local_envvar("_R_CHECK_LIMIT_CORES_" = NA)
  expect_output(sddgp_threads(verbose = TRUE), "\\(from logical CPUs\\)")
})

test_that("verbose output reports OpenMP", {
  expect_output(sddgp_threads(1, verbose = TRUE), "OpenMP: (yes|not compiled in); processors")
  info <- .Call(sddgp:::C_openmp_info)
  expect_length(info, 4)
  expect_true(info[1] %in% c(0L, 1L))
  expect_gte(info[4], 1L)
})

test_that("invalid thread counts give classed errors naming their source", {
  for (bad in list(0, -1, 1.5, NA, "2", c(1, 2), Inf)) {
    expect_error(sddgp_threads(bad), class = "sddgp_error_argument", regexp = "`threads`")
  }
  withr::local_options(sddgp.threads = 0)
  expect_error(sddgp_threads(), class = "sddgp_error_argument",
               regexp = "`options\\(sddgp.threads\\)` must lie in")
  withr::local_options(sddgp.threads = "two")
  expect_error(sddgp_threads(), class = "sddgp_error_argument",
               regexp = "`options\\(sddgp.threads\\)` must be a single finite number")
  withr::local_options(sddgp.threads = NULL)
  withr::local_envvar(SDDGP_NUM_THREADS = "lots")
  expect_error(sddgp_threads(), class = "sddgp_error_argument",
               regexp = "`SDDGP_NUM_THREADS` must be a single finite number")
  withr::local_envvar(SDDGP_NUM_THREADS = "1.5")
  expect_error(sddgp_threads(), class = "sddgp_error_argument",
               regexp = "`SDDGP_NUM_THREADS` must be a whole number")
})

test_that("the fit records the threads it used", {
  d <- make_data(30, 1, seed = 91)
  withr::local_options(sddgp.threads = 1)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1, solver = "cholesky")
  expect_identical(fit$threads, 1L)
  fit2 <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
                 solver = "cholesky", threads = 2)
  expect_identical(fit2$threads, sddgp_threads(2))  # capped by OMP_THREAD_LIMIT
})
