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

test_that("SDDGP_NUM_THREADS beats parallelly::availableCores()", {
  withr::local_options(sddgp.threads = NULL)
  withr::local_envvar(SDDGP_NUM_THREADS = "1", "_R_CHECK_LIMIT_CORES_" = "true")
  expect_identical(sddgp_threads(), 1L)
  expect_output(sddgp_threads(verbose = TRUE), "\\(from SDDGP_NUM_THREADS\\)")
})

test_that("the default follows parallelly::availableCores(), capped by the processors", {
  withr::local_options(sddgp.threads = NULL)
  withr::local_envvar(SDDGP_NUM_THREADS = NA, "_R_CHECK_LIMIT_CORES_" = "TRUE")
  info <- .Call(sddgp:::C_openmp_info)
  cap <- min(info$processors, info$thread_limit)
  expect_identical(sddgp_threads(), as.integer(min(2, cap)))
  expect_output(sddgp_threads(verbose = TRUE), "\\(from parallelly::availableCores\\(\\), ")
  # A scheduler's allocation of one core, as parallelly sees it.
  withr::local_options(parallelly.availableCores.custom = function() 1L)
  expect_identical(sddgp_threads(), 1L)
  expect_output(sddgp_threads(verbose = TRUE), "availableCores\\(\\), custom\\)")
  # Asking for more threads than processors gets the processors.
  expect_identical(sddgp_threads(10000), as.integer(cap))
})

test_that("verbose output reports OpenMP", {
  expect_output(sddgp_threads(1, verbose = TRUE), "OpenMP: (yes|not compiled in); processors")
  info <- .Call(sddgp:::C_openmp_info)
  expect_named(info, c("openmp", "processors", "max_threads", "thread_limit", "forked",
                       "staged"))
  expect_true(is.logical(info$openmp))
  expect_gte(info$thread_limit, 1L)
  expect_false(info$forked)
  expect_false(info$staged)
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
  expect_identical(fit2$threads, sddgp_threads(2))  # capped by the processors
  fit3 <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
                 solver = "cholesky", threads = 1e6)
  expect_lte(fit3$threads, .Call(sddgp:::C_openmp_info)$processors)
})

# A child forked from a parent whose OpenMP threads have run: 2 threads
# there deadlock GNU OpenMP, so every team in the child is one thread.  Run
# in a background R with a time limit, so that a deadlock fails the test
# instead of hanging it.
forked_fits <- function(fork) {
  p <- callr::r_bg(function(fork) {
    library(sddgp)
    set.seed(1)
    n <- 3000
    x <- matrix(runif(2 * n), n)
    y <- sin(6 * x[, 1]) + rnorm(n, sd = 0.1)
    fit_alpha <- function() {
      set.seed(2)
      fit <- gp_sdd(x, y, kernel = matern(3/2, 0.3, 1), noise = 0.01, solver = "sdd",
                    control = sdd_control(tolerance = 0, iterations = 60, cache = "never"), threads = 2)
      list(alpha = fit$alpha, threads = fit$threads, default = sddgp_threads(2))
    }
    parent <- fit_alpha()
    list(parent = parent, children = fork(fit_alpha))
  }, args = list(fork = fork), supervise = TRUE)
  on.exit(p$kill())
  p$wait(90000)
  if (p$is_alive()) return(NULL)
  p$get_result()
}

expect_forked_fits <- function(out) {
  expect_false(is.null(out), info = "the forked children did not finish in 90 s")
  expect_identical(out$parent$threads, sddgp_threads(2))
  expect_length(out$children, 2L)
  for (child in out$children) {
    expect_identical(child$threads, 1L)
    expect_identical(child$default, 1L)
    expect_identical(child$alpha, out$parent$alpha)
  }
}

test_that("mclapply children of a 2-thread parent fit on one thread, as the parent does", {
  skip_on_os("windows")
  skip_if_not_installed("callr")
  expect_forked_fits(forked_fits(function(f) {
    parallel::mclapply(1:2, function(i) f(), mc.cores = 2)
  }))
})

test_that("future's multicore workers of a 2-thread parent finish", {
  skip_on_os("windows")
  skip_if_not_installed("callr")
  skip_if_not_installed("future")
  expect_forked_fits(forked_fits(function(f) {
    future::plan(future::multicore, workers = 2)
    fs <- lapply(1:2, function(i) future::future(f(), seed = NULL))
    future::value(fs)
  }))
})
