# print() and summary() of a fit.

test_that("print() and summary() report the key fields", {
  d <- make_data(60, 2, seed = 24)
  withr::local_seed(10)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.5, 0.7), 1.3), noise = 0.1,
                samples = 2, control = sdd_control(tolerance = 0, iterations = 100))
  expect_output(print(fit), "stochastic dual descent")
  expect_output(print(fit), "60 observations, 2 inputs; 2 posterior samples")
  expect_output(print(fit), "Matern-3/2, variance 1.3")
  expect_output(print(fit), "lengthscales: x1 0.5, x2 0.7")
  expect_output(print(fit), "hyperparameters of the standardised data")
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
  expect_output(print(s), "Kernel: Matern-3/2, variance 1.3")
  # Only the settings that differ from the defaults.
  expect_output(print(s), "differ from the defaults:\n  iterations +100\n  tolerance +0\n")
  expect_false(any(grepl("batch_size|momentum", capture.output(print(s)))))
  expect_output(print(s), sprintf("100 iterations \\(iterations\\), %d threads?,", sddgp_threads(2)))
  expect_output(print(s), "Posterior samples: 2")

  # CG's summary names the preconditioner it ran with.
  cg <- function(...) gp_sdd(..., noise = 0.1, solver = "cg", threads = 1)
  x120 <- withr::with_seed(5, matrix(runif(240), 120))
  expect_output(print(summary(cg(x120, sin(4 * x120[, 1]), kernel = matern(3/2, 0.5, 1)))),
                "Solver: preconditioned conjugate gradients \n  preconditioner: Vecchia's, 100 neighbours\n")
  expect_output(print(summary(cg(d$x[1:30, ], d$y[1:30], kernel = matern(3/2, 0.5, 1)))),
                "preconditioner: Vecchia's, 29 neighbours\n")
  bits <- matrix(withr::with_seed(3, rbinom(60 * 12, 1, 0.5)), 60)
  expect_output(print(summary(cg(bits, d$y, kernel = tanimoto(variance = 1)))),
                "preconditioner: pivoted Cholesky, rank at most 60\n")
  expect_null(fit$preconditioner)

  fc <- gp_sdd(d$x[, 1], d$y, kernel = squared_exponential(0.5, 1), noise = 0.1,
               solver = "cholesky")
  expect_output(print(fc), "exact Cholesky solve")
  expect_output(print(fc), "60 observations, 1 input; 0 posterior samples")
  expect_output(print(summary(fc)), "Solver: exact Cholesky")
  expect_output(print(summary(fc)), "Kernel: squared exponential")
  expect_output(print(summary(fc)), "Settings of solver \"cholesky\": the defaults")

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
  expect_match(out[4], "^  lengthscales: x1 0.5, x2 0.5$")
  expect_match(out[5], "^  noise variance: 0.1$")
  x30 <- matrix(withr::with_seed(1, runif(30 * 40)), 30)
  f30 <- gp_sdd(x30, d$y, kernel = matern(3/2, seq(0.51, 0.9, by = 0.01), 1),
                noise = 0.1, solver = "cholesky")
  out30 <- withr::with_options(list(width = 60), capture.output(print(f30)))
  expect_false(any(out30 == ""))
  expect_true(all(nchar(out30) <= 60))
  shown <- strsplit(trimws(sub("lengthscales:", "",
    paste(out30[grep("lengthscales", out30):(grep("noise variance", out30) - 1)],
          collapse = " "))), ", +")[[1]]
  expect_equal(shown, paste0("x", 1:40, " ", seq(0.51, 0.9, by = 0.01)))
})

test_that("print() and summary() say which hyperparameters were estimated", {
  d <- make_data(30, 1, seed = 25)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
                solver = "cholesky")
  expect_false(any(grepl("estimated", capture.output(print(fit)))))
  # Pretend the noise was estimated (estimation itself is tested elsewhere).
  fit$estimation <- list(method = "subset", estimated = c("lengthscale", "noise"),
                         subset_size = 30L, log_marginal_likelihood = -12.5,
                         seconds = 0.1)
  out <- capture.output(print(fit))
  expect_false(any(out == ""))
  expect_true(any(grepl("^  noise variance: 0.1$", out)))
  expect_true(any(grepl("estimated .*30 points: lengthscale, noise$", out)))
  expect_output(print(summary(fit)), "estimated \\(lengthscale, noise\\) on 30 points")
})

test_that("length scales are named by the formula's terms or the matrix's columns", {
  d <- make_data(30, 2, seed = 26)
  df <- data.frame(speed = d$x[, 1], load = d$x[, 2], y = d$y)
  ff <- gp_sdd(y ~ speed + load, data = df, kernel = matern(3/2, c(0.5, 0.7), 1),
               noise = 0.1, solver = "cholesky")
  expect_output(print(ff), "lengthscales: speed 0.5, load 0.7")
  expect_output(print(summary(ff)), "lengthscales: speed 0.5, load 0.7")
  expect_output(print(summary(ff)), "Call:\ngp_sdd\\(x = y ~ speed \\+ load")
  fn <- gp_sdd(unname(d$x), d$y, kernel = matern(3/2, c(0.5, 0.7), 1), noise = 0.1,
               solver = "cholesky", standardize = FALSE)
  expect_output(print(fn), "lengthscales: x1 0.5, x2 0.7")
  expect_output(print(fn), "(hyperparameters in the data's units)", fixed = TRUE)
})

test_that("estimates on a bound of the search box are flagged with a hint", {
  # y does not depend on x2 and has no noise: the length scale of x2 runs
  # to its upper bound and the noise to its lower one.
  x <- matrix(withr::with_seed(27, runif(120)), ncol = 2)
  y <- sin(3 * x[, 1])
  fit <- withr::with_seed(29, gp_sdd(x, y, kernel = "matern52", solver = "cholesky"))
  expect_identical(fit$estimation$at_bound, c("", "upper", "", "lower"))
  out <- capture.output(print(fit))
  expect_true(any(grepl("estimates at a bound of the search box", out)))
  expect_true(any(grepl("lengthscale x2 at its upper bound: y hardly varies", out)))
  expect_true(any(grepl("noise at its lower bound: a nearly noise-free fit", out)))
  expect_output(print(summary(fit)), "lengthscale x2 at its upper bound")
  # The noise bound: min_noise times the variance of (standardised) y.
  expect_equal(fit$noise, 1e-4, tolerance = 1e-6)
  # The bound itself: 1000 standard deviations of the (standardised) column.
  expect_equal(fit$kernel$lengthscale[2], 1000, tolerance = 1e-6)
  # Fixed hyperparameters are never flagged, whatever their value.
  fixed <- gp_sdd(x, y, kernel = squared_exponential(c(0.3, 1000), 1), noise = 1e-4,
                  solver = "cholesky")
  expect_false(any(grepl("bound", capture.output(print(fixed)))))
})

test_that("print() and summary() of a fit look as recorded", {
  d <- make_data(40, 2, seed = 30)
  df <- data.frame(d$x, y = 5 + 2 * d$y)
  fit <- withr::with_seed(31, gp_sdd(y ~ ., data = df, kernel = "matern52",
                                     solver = "cholesky", threads = 1))
  # Timings vary, and so do residuals at the level of rounding: the
  # snapshot has them replaced.
  scrub <- function(lines) {
    gsub("[0-9.]+e-[0-9]+", "<rounding>", gsub("[0-9.]+ s\\b", "<t> s", lines))
  }
  expect_snapshot(cat(scrub(capture.output(print(fit))), sep = "\n"))
  expect_snapshot(cat(scrub(capture.output(print(summary(fit)))), sep = "\n"))
  fs <- withr::with_seed(32, gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.4, 0.6), 1),
                                    noise = 0.05, samples = 2, threads = 1,
                                    control = sdd_control(tolerance = 0, iterations = 50,
                                                          batch_size = 16)))
  expect_snapshot(cat(scrub(capture.output(print(summary(fs)))), sep = "\n"))
})
