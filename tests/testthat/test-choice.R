# The default fit: the default tolerance (solve_tolerance()), the automatic
# choice of solver (solve_automatic()) and its cost model, against exact
# solves in base R.

test_that("the default tolerance is a tenth of the noise sd over the targets' rms", {
  p <- list(rhs = cbind(c(3, -4, 0, 0), 1), noise = c(0.01, 0.03, 0.02, 0.02))
  # rms(b) = sqrt(25 / 4) = 2.5, mean noise 0.02.
  expect_equal(sddgp:::solve_tolerance(NULL, p), 0.1 * sqrt(0.02) / 2.5)
  expect_identical(sddgp:::solve_tolerance(1e-3, p), 1e-3)
  expect_identical(sddgp:::solve_tolerance(0, p), 0)
  # Capped at 0.1 (noise as large as the targets themselves).
  p$noise <- rep(100, 4)
  expect_equal(sddgp:::solve_tolerance(NULL, p), 0.1)
  # b = 0: alpha = 0 solves it at once, whatever the tolerance.
  p$rhs[, 1] <- 0
  expect_equal(sddgp:::solve_tolerance(NULL, p), 0.1)
})

test_that("the cost model counts the exact solve's and an SDD step's operations", {
  ops <- sddgp:::operation_seconds
  n <- 3000
  d <- 4
  expect_equal(sddgp:::exact_cost(n, d, 5, "reference"),
               ops$flop[["reference"]] * (n^3 / 3 + 2 * n^2 * 5) +
                 (ops$kernel_value + 4 * ops$kernel_value_per_dim) * n^2 / 2)
  expect_lt(sddgp:::exact_cost(n, d, 5, "optimised"), sddgp:::exact_cost(n, d, 5, "reference"))
  ctl <- sdd_control()
  # Cached: every value read, for the batch and the probes' share.
  expect_equal(sddgp:::sdd_step_cost(n, d, ctl), n * ops$cached_value * (512 + 256 / 100))
  expect_equal(sddgp:::sdd_step_cost(n, d, sdd_control(cache = "never")),
               n * (ops$kernel_value + d * ops$kernel_value_per_dim) * (512 + 256 / 100))
  expect_true(sddgp:::blas_kind() %in% c("reference", "optimised"))
})

# The exact posterior mean at the training inputs and at `xt`, from one
# kernel matrix K (x, x) and Ks (xt, x).
exact_means <- function(K, Ks, y, noise) {
  alpha <- solve(K + diag(noise, nrow(K)), y)
  list(alpha = alpha, train = drop(K %*% alpha), test = drop(Ks %*% alpha))
}

test_that("from noise 1e-1 to 1e-6 the default fit is as accurate as documented, or warns", {
  skip_on_cran()
  n <- 2500
  d <- make_data(n, 3, seed = 61, noise_sd = 0)
  xt <- make_inputs(400, 3, seed = 62)
  ls <- c(0.3, 0.4, 0.5)
  K <- ref_kernel(d$x, d$x, "matern32", ls, 1)
  Ks <- ref_kernel(xt, d$x, "matern32", ls, 1)
  chosen <- character()
  for (noise in 10^-(1:6)) {
    y <- d$y + withr::with_seed(63, rnorm(n, sd = sqrt(noise)))
    ex <- exact_means(K, Ks, y, noise)
    withr::local_seed(64)
    warned <- NULL
    fit <- withCallingHandlers(
      gp_sdd(d$x, y, kernel = matern(3/2, ls, 1), noise = noise, standardize = FALSE,
             threads = 1),
      sddgp_warning_not_converged = function(w) {
        warned <<- w
        invokeRestart("muffleWarning")
      })
    chosen[[format(noise)]] <- fit$solver
    expect_false(is.null(fit$choice), label = format(noise))
    if (!is.null(warned)) next  # said so: the fit's accuracy is not claimed
    if (fit$solver == "cholesky") {
      expect_equal(fit$alpha, ex$alpha, tolerance = 1e-6, label = format(noise))
      next
    }
    # Documented (?sdd_control, Stopping): the posterior mean at the
    # training inputs within a tenth of the noise sd (root mean square) of
    # the exact one, up to the error of the residual's estimate; at new
    # inputs alike.
    bound <- 0.1 * sqrt(noise)
    k_alpha <- drop(K %*% fit$alpha)
    expect_lt(sqrt(mean((k_alpha - ex$train)^2)), 1.5 * bound, label = format(noise))
    expect_lt(sqrt(mean((predict(fit, xt) - ex$test)^2)), 1.5 * bound,
              label = format(noise))
    expect_equal(fit$status, "tolerance")
  }
  # Both branches are exercised: SDD kept where the noise is large, the
  # exact solve where SDD cannot get there.
  expect_equal(chosen[["0.1"]], "sdd")
  expect_equal(chosen[["1e-06"]], "cholesky")
})
