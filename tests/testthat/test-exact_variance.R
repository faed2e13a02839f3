# Exact posterior variances of exact fits without samples (predict()),
# against base R's solve().

test_that("an exact fit without samples gives the exact posterior variances", {
  d <- make_data(70, 2, seed = 64)
  w <- withr::with_seed(64, stats::runif(70, 0.3, 3))
  y <- 10 + 3 * d$y
  fit <- gp_sdd(d$x, y, kernel = matern(5/2, c(0.4, 0.6), 1.2), noise = 0.05,
                weights = w, solver = "cholesky")
  xt <- rbind(make_inputs(9, 2), d$x[1:2, ], c(1e6, 0.5))
  # Base R in the data's units: the kernel with coef()'s hyperparameters.
  cf <- coef(fit)
  A <- ref_kernel(d$x, d$x, "matern52", cf[1:2], cf[["variance"]]) +
    diag(cf[["noise"]] / w)
  Ks <- ref_kernel(xt, d$x, "matern52", cf[1:2], cf[["variance"]])
  v <- cf[["variance"]] - rowSums(Ks * t(solve(A, t(Ks))))
  p <- predict(fit, xt, se.fit = TRUE, interval = "prediction", weights = 2)
  expect_equal(unname(p$se.fit), sqrt(v), tolerance = 1e-8)
  expect_equal(unname(p$fit[, "fit"]), drop(mean(y) + Ks %*% solve(A, y - mean(y))),
               tolerance = 1e-8)
  half <- qnorm(0.975) * sqrt(v + cf[["noise"]] / 2)
  expect_equal(unname(p$fit[, "upr"] - p$fit[, "fit"]), half, tolerance = 1e-8)
  # Far away (row 12) the prior's.
  expect_equal(unname(p$se.fit[12]), sqrt(cf[["variance"]]))
  # The factor is kept for the next call on this fit: the same numbers from
  # smaller chunks, and it belongs to this fit only.
  expect_identical(sddgp:::exact_factor_cache$key$x, fit$x)
  expect_equal(predict(fit, xt, se.fit = TRUE, chunk_size = 5)$se.fit, p$se.fit,
               tolerance = 1e-12)
  other <- gp_sdd(d$x, y, kernel = matern(5/2, c(0.4, 0.6), 1.2), noise = 0.05,
                  solver = "cholesky")
  expect_false(isTRUE(all.equal(predict(other, xt, se.fit = TRUE)$se.fit, p$se.fit)))
  expect_equal(predict(fit, xt, se.fit = TRUE)$se.fit, p$se.fit)
})

test_that("fits with samples, or of other solvers, do not use the exact factor", {
  d <- make_data(40, 2, seed = 65)
  ker <- matern(3/2, c(0.4, 0.6), 1)
  exact <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, solver = "cholesky")
  sampled <- withr::with_seed(66, gp_sdd(d$x, d$y, kernel = ker, noise = 0.05,
                                         solver = "cholesky", samples = 4))
  expect_true(sddgp:::exact_variance(exact))
  expect_false(sddgp:::exact_variance(sampled))
  # With 4 samples the standard errors are Monte Carlo estimates, not exact.
  xt <- make_inputs(5, 2)
  se_exact <- predict(exact, xt, se.fit = TRUE)$se.fit
  se_sampled <- predict(sampled, xt, se.fit = TRUE)$se.fit
  expect_gt(max(abs(se_sampled / se_exact - 1)), 1e-3)
})
