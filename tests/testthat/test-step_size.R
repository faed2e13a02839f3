# The automatic step size of SDD: the stability limit and its use.

test_that("the automatic step size follows the stability limit", {
  d <- make_data(400, 2, seed = 32)
  ker <- matern(5/2, c(0.3, 0.5), 1.5)
  xs <- sddgp:::scale_inputs(d$x, ker)
  K <- ref_kernel(d$x, d$x, "matern52", c(0.3, 0.5), 1.5)
  lmax <- max(eigen(K, symmetric = TRUE, only.values = TRUE)$values)
  rho <- 0.9
  # The documented rule: Nesterov momentum rho is stable while
  # step * lambda_max(K + noise I) / n < 2 (1 + rho) / (1 + 2 rho) (1.36 at
  # 0.9). With a full batch on this dense kernel matrix the eigenvalue
  # decides; n <= 1000, so no subsampling, and power iteration stops at a
  # relative change of 1e-4 per step.
  eigen_limit <- 2 * (1 + rho) / (1 + 2 * rho) / (lmax / 400 + 0.1 / 400)
  lim_full <- sddgp:::sdd_step_limit(xs, ker, 0.1, rho, 400, threads = 2)
  expect_equal(lim_full, eigen_limit, tolerance = 1e-2)
  # Smaller batches can only lower the limit.
  lim64 <- sddgp:::sdd_step_limit(xs, ker, 0.1, rho, 64, threads = 2)
  expect_lte(lim64, lim_full)
  expect_gt(lim64, 0)

  st <- sddgp:::sdd_step_sizes(sdd_control(batch_size = 64, step_fraction = 0.5),
                               xs, ker, 0.1, 2)
  expect_equal(st[["mean"]], 0.5 * lim64)
  expect_equal(st[["samples"]], st[["mean"]])
  st2 <- sddgp:::sdd_step_sizes(sdd_control(step_size = 3, step_size_samples = 2),
                                xs, ker, 0.1, 2)
  expect_identical(st2, c(mean = 3, samples = 2))
  st3 <- sddgp:::sdd_step_sizes(sdd_control(step_size = 3), xs, ker, 0.1, 2)
  expect_identical(st3, c(mean = 3, samples = 3))
})

test_that("the automatic step size is stable when the kernel matrix is nearly diagonal", {
  # Length scales far below the spacing of the points: K is close to
  # (variance) I, the batch term of the stability limit decides the step size,
  # and each coordinate is only hit now and then.
  cases <- list(list(n = 300, d = 3, ls = 0.05, batch = 512, tol = 1e-6),
                list(n = 50, d = 2, ls = 0.01, batch = 512, tol = 1e-6),
                # Batches of 64 of 1000: converging, if slowly.
                list(n = 1000, d = 3, ls = 0.1, batch = 64, tol = 0.1))
  for (cs in cases) {
    d <- make_data(cs$n, cs$d, seed = 3)
    ref <- ref_posterior(d$x, d$y, family = "matern32", lengthscale = cs$ls,
                         variance = 1, noise = 0.1)
    withr::local_seed(1)
    withr::local_options(sddgp.threads = 1)  # many tiny steps, as above
    expect_no_error(
      fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, cs$ls, 1), noise = 0.1,
                    standardize = FALSE,
                    control = sdd_control(tolerance = 0, iterations = 1000, batch_size = cs$batch)))
    expect_lt(max_rel_err(fit$alpha, ref$alpha), cs$tol)
  }
})
