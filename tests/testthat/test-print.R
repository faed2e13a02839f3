# print() and summary() of a fit.

test_that("print() and summary() report the key fields", {
  d <- make_data(60, 2, seed = 24)
  withr::local_seed(10)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.5, 0.7), 1.3), noise = 0.1,
                samples = 2, control = sdd_control(tolerance = 0, iterations = 100))
  expect_output(print(fit), "stochastic dual descent")
  expect_output(print(fit), "60 observations, 2 inputs; 2 posterior samples")
  expect_output(print(fit), "Matern-3/2, variance 1.3")
  expect_output(print(fit), "lengthscales: 0.5 0.7")
  expect_output(print(fit), "noise variance: 0.1")
  expect_output(print(fit), "100 iterations")
  expect_output(expect_invisible(print(fit)))

  s <- summary(fit)
  expect_s3_class(s, "summary.sddgp")
  expect_equal(s$samples, 2L)
  expect_equal(s$iterations, 100L)
  expect_equal(s$residual, fit$trace$residual[nrow(fit$trace)])
  expect_output(print(s), "Call:")
  expect_output(print(s), "Data: 60 observations, 2 inputs")
  expect_output(print(s), "Matern-3/2 kernel")
  expect_output(print(s), "batch_size +512")
  expect_output(print(s), "momentum +0.9")
  expect_output(print(s), sprintf("100 iterations \\(iterations\\), %d threads?,", sddgp_threads(2)))
  expect_output(print(s), "Posterior samples: 2")

  fc <- gp_sdd(d$x[, 1], d$y, kernel = squared_exponential(0.5, 1), noise = 0.1,
               solver = "cholesky")
  expect_output(print(fc), "exact Cholesky solve")
  expect_output(print(fc), "60 observations, 1 input; 0 posterior samples")
  expect_output(print(summary(fc)), "Solver: exact Cholesky")
  expect_output(print(summary(fc)), "squared exponential kernel")

  fw <- gp_sdd(d$x[, 1], d$y, kernel = squared_exponential(0.5, 1), noise = 0.1,
               weights = rep(c(0.5, 2), 30), solver = "cholesky")
  expect_output(print(fw), "noise variance: 0.1 / weights \\(weights from 0.5 to 2\\)")
  expect_output(print(summary(fw)), "noise variance: 0.1 / weights \\(weights from 0.5 to 2\\)")
})

test_that("print() writes no empty lines and wraps long length-scale lists", {
  d <- make_data(30, 2, seed = 25)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
                solver = "cholesky")
  out <- capture.output(print(fit))
  expect_false(any(out == ""))
  expect_match(out[4], "^  lengthscales: 0.5 0.5 ?$")
  expect_match(out[5], "^  noise variance: 0.1$")
  x30 <- matrix(withr::with_seed(1, runif(30 * 40)), 30)
  f30 <- gp_sdd(x30, d$y, kernel = matern(3/2, seq(0.51, 0.9, by = 0.01), 1),
                noise = 0.1, solver = "cholesky")
  out30 <- withr::with_options(list(width = 60), capture.output(print(f30)))
  expect_false(any(out30 == ""))
  expect_true(all(nchar(out30) <= 60))
  shown <- as.numeric(strsplit(trimws(sub("lengthscales:", "",
    paste(out30[grep("lengthscales", out30):(grep("noise variance", out30) - 1)],
          collapse = " "))), " +")[[1]])
  expect_equal(shown, seq(0.51, 0.9, by = 0.01))
})

test_that("print() and summary() say which hyperparameters were estimated", {
  d <- make_data(30, 1, seed = 25)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
                solver = "cholesky")
  expect_false(any(grepl("estimated", capture.output(print(fit)))))
  # Pretend the noise was estimated (estimation itself is tested elsewhere).
  fit$estimation <- list(estimated = c("lengthscale", "noise"), subset_size = 30L,
                         log_marginal_likelihood = -12.5, seconds = 0.1)
  out <- capture.output(print(fit))
  expect_false(any(out == ""))
  expect_true(any(grepl("^  noise variance: 0.1$", out)))
  expect_true(any(grepl("estimated .*30 points: lengthscale, noise$", out)))
  expect_output(print(summary(fit)), "estimated \\(lengthscale, noise\\) on 30 points")
})
