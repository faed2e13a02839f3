# gp_sdd(): the fitted posterior against exact linear algebra done here in
# base R, the interfaces (matrix, data frame, formula), reproducibility and
# input validation.

test_that("SDD representer weights match the exact solve (Matern-3/2, n = 500, d = 3)", {
  d <- make_data(500, 3, seed = 11)
  xt <- make_inputs(7, 3)
  ls <- c(0.2, 0.3, 0.4)
  ref <- ref_posterior(d$x, d$y, xt, "matern32", ls, 1, 0.1)
  withr::local_seed(1)
  # One thread: this runs many tiny steps, where on a busy machine two
  # OpenMP threads mostly wait for each other (results are bitwise the same
  # for any thread count; see test-gp_sdd.R).
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, ls, 1), noise = 0.1,
                standardize = FALSE, control = sdd_control(tolerance = 0, iterations = 1500),
                threads = 1)
  expect_s3_class(fit, "sddgp")
  expect_equal(fit$status, "iterations")
  expect_equal(fit$iterations, 1500L)
  # A well-conditioned problem (condition number about 800): 1500 steps of
  # full-batch SDD reach about 1e-10, so 1e-6 relative is a tight check
  # that still leaves room for other compilers' rounding.
  expect_lt(max_rel_err(fit$alpha, ref$alpha), 1e-6)
  expect_lt(max_rel_err(predict(fit, xt), ref$mean), 1e-6)
})

test_that("SDD matches the exact solve for every kernel family", {
  d <- make_data(300, 3, seed = 12)
  xt <- make_inputs(5, 3)
  ls <- c(0.2, 0.3, 0.4)
  kernels <- list(matern12 = matern(1/2, ls, 1.5), matern32 = matern(3/2, ls, 1.5),
                  matern52 = matern(5/2, ls, 1.5),
                  se = squared_exponential(ls, 1.5))
  for (fam in names(kernels)) {
    ref <- ref_posterior(d$x, d$y, xt, fam, ls, 1.5, 0.1)
    withr::local_seed(2)
    fit <- gp_sdd(d$x, d$y, kernel = kernels[[fam]], noise = 0.1,
                  standardize = FALSE, control = sdd_control(tolerance = 0, iterations = 1400),
                  threads = 1)  # many tiny steps: see the note above
    expect_equal(fit$kernel$family, fam)
    expect_lt(max_rel_err(fit$alpha, ref$alpha), 1e-6)
    expect_lt(max_rel_err(predict(fit, xt), ref$mean), 1e-6)
  }
})

test_that("SDD converges on a larger problem with mini-batches (n = 2000)", {
  skip_on_cran()
  d <- make_data(2000, 2, seed = 13)
  xt <- make_inputs(5, 2)
  ref <- ref_posterior(d$x, d$y, xt, "matern52", c(0.15, 0.25), 1, 0.2)
  withr::local_seed(3)
  fit <- gp_sdd(d$x, d$y, kernel = matern(5/2, c(0.15, 0.25), 1), noise = 0.2,
                standardize = FALSE,
                control = sdd_control(tolerance = 0, iterations = 3000, batch_size = 256),
                threads = 1)  # many small steps: see the note above
  # Batches of 256 out of 2000 rows: the averaged iterate is accurate to
  # about 4e-8 after 3000 steps on this problem.
  expect_lt(max_rel_err(fit$alpha, ref$alpha), 1e-6)
  expect_lt(max_rel_err(predict(fit, xt), ref$mean), 1e-6)
})

test_that("the Cholesky solver is exact for every kernel family", {
  d <- make_data(200, 2, seed = 14)
  xt <- make_inputs(6, 2)
  ls <- c(0.3, 0.6)
  kernels <- list(matern12 = matern(1/2, ls, 2), matern32 = matern(3/2, ls, 2),
                  matern52 = matern(5/2, ls, 2), se = squared_exponential(ls, 2))
  for (fam in names(kernels)) {
    ref <- ref_posterior(d$x, d$y, xt, fam, ls, 2, 0.05)
    fit <- gp_sdd(d$x, d$y, kernel = kernels[[fam]], noise = 0.05,
                  solver = "cholesky", standardize = FALSE)
    expect_equal(fit$status, "exact")
    expect_equal(fit$iterations, 0L)
    expect_equal(fit$alpha, ref$alpha, tolerance = 1e-8)
    expect_equal(unname(predict(fit, xt)), ref$mean, tolerance = 1e-8)
  }
})

test_that("without `solver` or `control` a small data set is solved exactly", {
  d <- make_data(300, 2, seed = 15)
  xt <- make_inputs(5, 2)
  ref <- ref_posterior(d$x, d$y, xt, "matern32", c(0.3, 0.6), 1, 0.05)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.3, 0.6), 1), noise = 0.05,
                standardize = FALSE, threads = 1)
  expect_equal(fit$solver, "cholesky")
  expect_equal(fit$status, "exact")
  expect_equal(unname(predict(fit, xt)), ref$mean, tolerance = 1e-8)
  expect_output(print(fit), "exact Cholesky")
  # Asking for SDD by name, or by its control, still runs SDD.
  sdd <- gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.3, 0.6), 1), noise = 0.05,
                standardize = FALSE, solver = "sdd",
                control = sdd_control(tolerance = 0, iterations = 20), threads = 1)
  expect_equal(sdd$solver, "sdd")
  expect_equal(sdd$iterations, 20L)
})

test_that("observation weights give the exact heteroscedastic posterior in SDD, CG and Cholesky", {
  d <- make_data(300, 2, seed = 16)
  xt <- make_inputs(6, 2)
  ls <- c(0.3, 0.6)
  # Noise variances from 0.02 to 0.5: far from the homoscedastic answer.
  w <- withr::with_seed(17, stats::runif(300, 0.2, 5))
  ref <- ref_posterior(d$x, d$y, xt, "matern32", ls, 1, 0.1 / w)
  homo <- ref_posterior(d$x, d$y, xt, "matern32", ls, 1, 0.1)
  expect_gt(max_rel_err(homo$mean, ref$mean), 0.01)
  fit <- function(solver, control = NULL) {
    gp_sdd(d$x, d$y, kernel = matern(3/2, ls, 1), noise = 0.1, weights = w,
           solver = solver, control = control, standardize = FALSE, threads = 1)
  }
  chol_fit <- fit("cholesky")
  expect_equal(chol_fit$alpha, ref$alpha, tolerance = 1e-8)
  expect_equal(unname(predict(chol_fit, xt)), ref$mean, tolerance = 1e-8)
  expect_identical(chol_fit$weights, w)
  # CG to a relative residual of 1e-10: its answer is that close, up to the
  # condition number (about 1e3 here).
  cg_fit <- fit("cg", cg_control(tolerance = 1e-10))
  expect_lt(max_rel_err(cg_fit$alpha, ref$alpha), 1e-6)
  # Full-batch SDD (B >= n) converges linearly: 6000 steps reach about 1e-8.
  withr::local_seed(3)
  sdd_fit <- fit("sdd", sdd_control(tolerance = 0, iterations = 6000, batch_size = 300))
  expect_lt(max_rel_err(predict(sdd_fit, xt), ref$mean), 1e-6)
})

test_that("a weight w stands for the mean of w replicates of an observation", {
  # The full data: 40 distinct inputs, each observed 1 to 4 times.  The
  # compressed data: each input once, with the mean of its observations and
  # its count as weight.  The posteriors of f are the same.
  d <- make_data(40, 2, seed = 18)
  counts <- rep_len(1:4, 40)
  rows <- rep(seq_len(40), counts)
  y_full <- d$y[rows] + withr::with_seed(19, stats::rnorm(length(rows), sd = 0.3))
  y_mean <- as.numeric(tapply(y_full, rows, mean))
  ker <- matern(5/2, c(0.4, 0.7), 1.5)
  xt <- make_inputs(5, 2)
  full <- gp_sdd(d$x[rows, ], y_full, kernel = ker, noise = 0.09, solver = "cholesky",
                 standardize = FALSE)
  compressed <- gp_sdd(d$x, y_mean, kernel = ker, noise = 0.09, weights = counts,
                       solver = "cholesky", standardize = FALSE)
  expect_equal(predict(compressed, xt), predict(full, xt), tolerance = 1e-8)
  ref <- ref_posterior(d$x[rows, ], y_full, xt, "matern52", c(0.4, 0.7), 1.5, 0.09)
  expect_equal(unname(predict(compressed, xt)), ref$mean, tolerance = 1e-8)
})

test_that("with weights, the noise variance is estimated with its weights", {
  # Heteroscedastic data drawn exactly from the model with noise 0.04 / w.
  set.seed(20)
  n <- 600
  x <- matrix(runif(n), ncol = 1)
  w <- rep(c(0.25, 1, 4), length.out = n)
  cov <- ref_kernel(x, x, "matern32", 0.3, 1) + diag(0.04 / w)
  y <- drop(crossprod(chol(cov), rnorm(n)))
  withr::local_seed(1)
  weighted <- gp_sdd(x, y, kernel = matern(3/2, 0.3, 1), weights = w,
                     solver = "cholesky", standardize = FALSE)
  unweighted <- gp_sdd(x, y, kernel = matern(3/2, 0.3, 1), solver = "cholesky",
                       standardize = FALSE)
  # The asymptotic standard error of log(noise) here is about sqrt(2 / 600)
  # = 0.06: allow 4 of them.  Ignoring the weights finds the average noise
  # (0.04 * (4 + 1 + 0.25) / 3 = 0.07), which this test tells apart.
  expect_lt(abs(log(weighted$noise / 0.04)), 0.24)
  expect_gt(abs(log(unweighted$noise / 0.04)), 0.3)
  expect_equal(weighted$estimation$estimated, "noise")
})

test_that("the formula interface takes weights and drops them with incomplete rows", {
  d <- make_data(30, 2, seed = 21)
  df <- data.frame(d$x, y = d$y)
  df$x1[3] <- NA
  w <- seq(0.5, 3, length.out = 30)
  ker <- matern(3/2, 0.5, 1)
  f <- gp_sdd(y ~ ., data = df, weights = w, kernel = ker, noise = 0.1,
              solver = "cholesky", standardize = FALSE)
  m <- gp_sdd(d$x[-3, ], d$y[-3], weights = w[-3], kernel = ker, noise = 0.1,
              solver = "cholesky", standardize = FALSE)
  expect_identical(f$weights, w[-3])
  expect_equal(f$alpha, m$alpha, tolerance = 1e-12)
  expect_error(gp_sdd(y ~ ., data = df, weights = w[-1], kernel = ker, noise = 0.1),
               class = "sddgp_error_argument",
               regexp = "`weights` has length 29 but `data` has 30 rows")
})

test_that("formula weights are looked up in `data` first, as lm() does", {
  d <- make_data(30, 2, seed = 21)
  df <- data.frame(d$x, y = d$y, w = seq(0.5, 3, length.out = 30))
  ker <- matern(3/2, 0.5, 1)
  fit <- function(...) gp_sdd(..., kernel = ker, noise = 0.1, solver = "cholesky")
  m <- fit(d$x, d$y, weights = df$w)
  f <- fit(y ~ x1 + x2, data = df, weights = w)
  expect_identical(f$weights, df$w)
  expect_equal(f$alpha, m$alpha, tolerance = 1e-12)
  # An expression of columns, and a column hiding a variable of the same name.
  w <- rev(df$w)
  expect_identical(fit(y ~ x1 + x2, data = df, weights = 2 * w)$weights, 2 * df$w)
  # As in lm(), `.` still counts the weights column as an input ...
  ref <- lm(y ~ ., data = df, weights = w)
  f_dot <- fit(y ~ ., data = df, weights = w)
  expect_equal(f_dot$input_names, setdiff(names(coef(ref)), "(Intercept)"))
  expect_identical(f_dot$weights, df$w)
  # ... unless the formula leaves it out.
  f_out <- fit(y ~ . - w, data = df, weights = w)
  expect_equal(f_out$alpha, m$alpha, tolerance = 1e-12)
  # Variables of the formula's environment, as in lm().
  local_fit <- function() {
    wl <- df$w
    fit(y ~ x1 + x2, data = df[c("x1", "x2", "y")], weights = wl)
  }
  expect_equal(local_fit()$alpha, m$alpha, tolerance = 1e-12)
  expect_error(fit(y ~ x1, data = df, weights = nonexistent_column),
               class = "sddgp_error_argument",
               regexp = "`weights` could not be evaluated among the columns of `data`.*nonexistent_column")
})

test_that("the fit object holds what the documentation promises", {
  d <- make_data(60, 2, seed = 19)
  withr::local_seed(4)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
                samples = 3, control = sdd_control(tolerance = 0, iterations = 100, check_every = 25))
  expect_equal(fit$n, 60L)
  expect_equal(fit$d, 2L)
  expect_equal(fit$kernel$lengthscale, c(0.5, 0.5))  # recycled to d
  expect_equal(fit$input_names, c("x1", "x2"))
  expect_length(fit$alpha, 60)
  expect_equal(dim(fit$alpha_samples), c(60L, 3L))
  expect_equal(dim(fit$prior$weights), c(2000L, 3L))
  expect_equal(dim(fit$prior$omega), c(3L * 2000L, 2L))  # features of its own per sample
  expect_named(fit$trace, c("iteration", "seconds", "residual", "residual_samples"))
  expect_equal(fit$trace$iteration, c(25L, 50L, 75L, 100L))
  expect_true(all(fit$trace$residual_samples > 0))
  expect_named(fit$state$step_size, c("mean", "samples"))
  expect_null(fit$basis)  # representer weights over the training inputs
  expect_equal(fit$threads, sddgp_threads(2))  # 2 unless OMP_THREAD_LIMIT is 1
  expect_true(is.call(fit$call))
  expect_null(fit$estimation)

  f0 <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
               solver = "cholesky")
  expect_equal(dim(f0$alpha_samples), c(60L, 0L))
  expect_null(f0$prior)
  expect_equal(nrow(f0$trace), 0L)
})

test_that("matrix, data frame and formula interfaces give the same fit", {
  d <- make_data(70, 2, seed = 20)
  df <- data.frame(d$x, y = d$y)
  ker <- matern(5/2, c(0.4, 0.6), 1)
  ctl <- sdd_control(tolerance = 0, iterations = 50)
  withr::local_seed(5)
  fm <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, control = ctl, samples = 2)
  withr::local_seed(5)
  fd <- gp_sdd(df[c("x1", "x2")], df$y, kernel = ker, noise = 0.1, control = ctl,
               samples = 2)
  withr::local_seed(5)
  ff <- gp_sdd(y ~ x1 + x2, data = df, kernel = ker, noise = 0.1, control = ctl,
               samples = 2)
  withr::local_seed(5)
  fdot <- gp_sdd(y ~ ., data = df, kernel = ker, noise = 0.1, control = ctl,
                 samples = 2)
  expect_identical(fd$alpha, fm$alpha)
  expect_identical(ff$alpha, fm$alpha)
  expect_identical(ff$alpha_samples, fm$alpha_samples)
  expect_identical(fdot$alpha, fm$alpha)
  expect_equal(ff$input_names, c("x1", "x2"))
  expect_false(is.null(ff$terms))
  # y as a one-column data frame or matrix is accepted
  withr::local_seed(5)
  fy <- gp_sdd(d$x, data.frame(y = d$y), kernel = ker, noise = 0.1, control = ctl,
               samples = 2)
  expect_identical(fy$alpha, fm$alpha)
  withr::local_seed(5)
  fy2 <- gp_sdd(d$x, matrix(d$y), kernel = ker, noise = 0.1, control = ctl,
                samples = 2)
  expect_identical(fy2$alpha, fm$alpha)
})

test_that("a one-dimensional vector x is a single input column", {
  x <- seq(0, 1, length.out = 40)
  y <- sin(5 * x)
  f1 <- gp_sdd(x, y, kernel = matern(3/2, 0.3, 1), noise = 0.01, solver = "cholesky")
  expect_equal(f1$d, 1L)
  ref <- ref_posterior(matrix((x - mean(x)) / sqrt(mean((x - mean(x))^2))),
                       (y - mean(y)) / sqrt(mean((y - mean(y))^2)),
                       family = "matern32", lengthscale = 0.3, variance = 1,
                       noise = 0.01)
  expect_equal(f1$alpha, ref$alpha, tolerance = 1e-8)
})

test_that("the formula interface drops incomplete rows and expands factors", {
  d <- make_data(50, 2, seed = 21)
  df <- data.frame(d$x, y = d$y)
  df$x1[3] <- NA
  df$y[7] <- NA
  fit <- gp_sdd(y ~ x1 + x2, data = df, kernel = matern(3/2, 0.5, 1), noise = 0.1,
                solver = "cholesky")
  expect_equal(fit$n, 48L)
  expect_equal(unname(as.integer(fit$na.action)), c(3L, 7L))
  ref <- gp_sdd(d$x[-c(3, 7), ], d$y[-c(3, 7)], kernel = matern(3/2, 0.5, 1),
                noise = 0.1, solver = "cholesky")
  expect_equal(unname(fit$alpha), unname(ref$alpha), tolerance = 1e-12)
  expect_error(gp_sdd(y ~ x1 + x2, data = df, kernel = matern(3/2, 0.5, 1),
                      noise = 0.1, solver = "cholesky", na.action = stats::na.fail),
               "missing values")

  df2 <- data.frame(d$x, g = factor(rep(c("a", "b"), 25)), y = d$y)
  f2 <- gp_sdd(y ~ ., data = df2, kernel = matern(3/2, 0.5, 1), noise = 0.1,
               solver = "cholesky")
  expect_equal(f2$d, 4L)  # x1, x2 and one indicator per level
  expect_equal(f2$xlevels, list(g = c("a", "b")))
})

test_that("identical seeds give identical fits for 1 and 2 threads; different seeds differ", {
  d <- make_data(300, 2, seed = 22)
  ker <- matern(3/2, c(0.3, 0.5), 1)
  ctl <- sdd_control(tolerance = 0, iterations = 100, batch_size = 64)
  fit_with <- function(seed, threads) {
    withr::local_seed(seed)
    gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, control = ctl, samples = 4,
           threads = threads)
  }
  f1 <- fit_with(7, 1)
  f2 <- fit_with(7, 2)
  expect_identical(f1$alpha, f2$alpha)
  expect_identical(f1$alpha_samples, f2$alpha_samples)
  expect_identical(f1$prior, f2$prior)
  expect_identical(f1$trace$residual, f2$trace$residual)
  # More than 4096 points: the dense part of each step runs in parallel too.
  big <- make_data(5000, 2, seed = 30)
  fit_big <- function(threads) {
    withr::local_seed(3)
    gp_sdd(big$x, big$y, kernel = ker, noise = 0.1, samples = 2, threads = threads,
           control = sdd_control(tolerance = 0, iterations = 20, batch_size = 64, cache = "never",
                                 check_every = 10))
  }
  b1 <- fit_big(1)
  b2 <- fit_big(2)
  expect_identical(b1$alpha, b2$alpha)
  expect_identical(b1$alpha_samples, b2$alpha_samples)
  xt <- make_inputs(5000, 2)
  expect_identical(predict(b1, xt, se.fit = TRUE, threads = 1),
                   predict(b1, xt, se.fit = TRUE, threads = 2))
  f3 <- fit_with(8, 2)
  # 100 steps of batches of 64 are far from converged, so the random batches
  # show in the mean's weights, and the prior draws differ entirely.
  expect_gt(max(abs(f3$alpha - f1$alpha)), 1e-6)
  expect_false(isTRUE(all.equal(f3$alpha_samples, f1$alpha_samples)))
  expect_false(isTRUE(all.equal(f3$prior$omega, f1$prior$omega)))
})

test_that("the cached and the on-the-fly kernel give identical fits", {
  d <- make_data(300, 2, seed = 23)
  ker <- matern(5/2, c(0.3, 0.5), 1)
  fit_with <- function(cache) {
    withr::local_seed(9)
    gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, samples = 3,
           control = sdd_control(tolerance = 0, iterations = 100, batch_size = 100, cache = cache))
  }
  fa <- fit_with("always")
  fn <- fit_with("never")
  fauto <- fit_with("auto")
  expect_identical(fa$alpha, fn$alpha)
  expect_identical(fa$alpha_samples, fn$alpha_samples)
  expect_identical(fa$trace$residual, fn$trace$residual)
  expect_identical(fauto$alpha, fn$alpha)
})

test_that("the fit records whether the kernel matrix was cached", {
  d <- make_data(100, 2, seed = 30)
  fit_with <- function(solver, control) {
    # Few steps: only the cache decision matters here.
    suppressWarnings(gp_sdd(d$x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.1,
                            solver = solver, control = control, threads = 1),
                     classes = "sddgp_warning_not_converged")
  }
  bytes <- 8 * 100^2  # K in double precision
  expect_true(fit_with("sdd", sdd_control(tolerance = 0, iterations = 10, cache_limit = bytes))$cached)
  expect_false(fit_with("sdd", sdd_control(tolerance = 0, iterations = 10, cache_limit = bytes - 1))$cached)
  expect_true(fit_with("sdd", sdd_control(tolerance = 0, iterations = 10, cache_limit = bytes / 2,
                                          precision = "single"))$cached)
  expect_true(fit_with("sdd", sdd_control(tolerance = 0, iterations = 10, cache = "always",
                                          cache_limit = 0))$cached)
  never <- fit_with("sdd", sdd_control(tolerance = 0, iterations = 10, cache = "never"))
  expect_false(never$cached)
  expect_false(fit_with("sgd", sgd_control(iterations = 10, cache_limit = bytes - 1))$cached)
  cg <- fit_with("cg", cg_control())
  expect_true(cg$cached)
  expect_false(fit_with("cg", cg_control(cache = "never"))$cached)
  exact <- fit_with("cholesky", NULL)
  expect_null(exact$cached)
  expect_true(summary(cg)$cached)
  expect_output(print(summary(cg)), "kernel matrix cached in memory")
  expect_output(print(summary(never)), "kernel matrix not cached")
  expect_false(any(grepl("kernel matrix", capture.output(print(summary(exact))))))
})

test_that("a fit survives saveRDS() / readRDS() and predicts identically", {
  d <- make_data(80, 2, seed = 26)
  xt <- make_inputs(5, 2)
  withr::local_seed(11)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.5, 0.7), 1), noise = 0.1,
                samples = 4, control = sdd_control(tolerance = 0, iterations = 50))
  path <- withr::local_tempfile(fileext = ".rds")
  saveRDS(fit, path)
  back <- readRDS(path)
  expect_identical(predict(back, xt, se.fit = TRUE), predict(fit, xt, se.fit = TRUE))
  expect_identical(simulate(back, 4, newdata = xt, stored = TRUE),
                   simulate(fit, 4, newdata = xt, stored = TRUE))
})

test_that("bad data give classed errors naming the argument", {
  d <- make_data(20, 2, seed = 27)
  ker <- matern(3/2, 0.5, 1)
  fit <- function(x = d$x, y = d$y, ...) {
    gp_sdd(x, y, kernel = ker, noise = 0.1, solver = "cholesky", ...)
  }
  xna <- d$x; xna[4, 2] <- NA
  expect_error(fit(x = xna), class = "sddgp_error_argument", regexp = "`x`.*row 4")
  xinf <- d$x; xinf[2, 1] <- Inf
  expect_error(fit(x = xinf), class = "sddgp_error_argument", regexp = "`x`.*infinite")
  yna <- d$y; yna[5] <- NA
  expect_error(fit(y = yna), class = "sddgp_error_argument", regexp = "`y`.*element 5")
  yinf <- d$y; yinf[1] <- -Inf
  expect_error(fit(y = yinf), class = "sddgp_error_argument", regexp = "`y`")
  expect_error(fit(y = d$y[-1]), class = "sddgp_error_argument",
               regexp = "`y` has length 19 but `x` has 20 rows")
  expect_error(fit(y = as.character(d$y)), class = "sddgp_error_argument",
               regexp = "`y` must be a numeric vector")
  # A matrix is several outputs (test-multi_output.R); an array is not.
  expect_error(fit(y = array(d$y, c(20, 1, 1))), class = "sddgp_error_argument",
               regexp = "`y` must be a numeric vector, or a numeric matrix")
  expect_error(fit(y = cbind(d$y, d$y)[-1, ]), class = "sddgp_error_argument",
               regexp = "`y` has 19 rows but `x` has 20 rows")
  expect_error(fit(x = data.frame(a = d$x[, 1], b = letters[1:20])),
               class = "sddgp_error_argument", regexp = "`x`.*`b` is not numeric")
  expect_error(fit(x = matrix(letters[1:20], 10)), class = "sddgp_error_argument",
               regexp = "`x` must be a numeric matrix")
  expect_error(fit(x = list(1, 2)), class = "sddgp_error_argument", regexp = "`x`")
  expect_error(fit(x = d$x[1, , drop = FALSE], y = 1), class = "sddgp_error_argument",
               regexp = "`x` must have at least 2 rows")
  expect_error(fit(x = matrix(numeric(0), 20, 0)), class = "sddgp_error_argument",
               regexp = "`x` must have at least one column")
  expect_error(fit(weights = rep(1, 19)), class = "sddgp_error_argument",
               regexp = "`weights` has length 19 but `x` has 20 rows")
  expect_error(fit(weights = replace(rep(1, 20), 7, 0)), class = "sddgp_error_argument",
               regexp = "`weights` must be positive; element 7 is 0")
  expect_error(fit(weights = replace(rep(1, 20), 2, NA)), class = "sddgp_error_argument",
               regexp = "`weights` must not contain NA")
  expect_error(fit(weights = rep("1", 20)), class = "sddgp_error_argument",
               regexp = "`weights` must be a non-empty numeric vector")
})

test_that("bad hyperparameters and settings give classed errors naming the argument", {
  d <- make_data(20, 2, seed = 28)
  g <- function(...) gp_sdd(d$x, d$y, ...)
  ker <- matern(3/2, 0.5, 1)
  for (bad in list(0, -1, NA, Inf, "a", c(0.1, 0.2))) {
    expect_error(g(kernel = ker, noise = bad), class = "sddgp_error_argument",
                 regexp = "`noise`")
  }
  for (bad in list(-1, 0, NA, c(0.5, NA), c(0.5, -2), Inf)) {
    expect_error(g(kernel = matern(3/2, bad, 1), noise = 0.1),
                 class = "sddgp_error_argument", regexp = "`lengthscale`")
  }
  expect_error(g(kernel = squared_exponential(0.5, -1), noise = 0.1),
               class = "sddgp_error_argument", regexp = "`variance`")
  expect_error(g(kernel = matern(3/2, c(0.5, 1, 2), 1), noise = 0.1),
               class = "sddgp_error_argument",
               regexp = "`lengthscale` has 3 values but the inputs have 2 columns")
  expect_error(g(kernel = "gauss", noise = 0.1), class = "sddgp_error_argument",
               regexp = "`kernel` must be a kernel object.*\"matern32\"")
  expect_error(g(kernel = ker, noise = 0.1, solver = "lu"),
               class = "sddgp_error_argument",
               regexp = "`solver` must be one of \"sdd\", \"cholesky\", \"cg\", .*, not \"lu\"")
  expect_error(g(kernel = ker, noise = 0.1, solver = c("sdd", "cholesky")),
               class = "sddgp_error_argument", regexp = "`solver`")
  expect_error(g(kernel = "matern32", estimation = list(subset_size = 10)),
               class = "sddgp_error_argument", regexp = "`estimation` must be made by")
  expect_error(g(kernel = ker, noise = 0.1, control = list(iterations = 10)),
               class = "sddgp_error_argument",
               regexp = "`control` must be made by a solver's control function, such as sdd_control")
  expect_error(g(kernel = ker, noise = 0.1, solver = "cholesky", control = sdd_control()),
               class = "sddgp_error_argument",
               regexp = "`control` was made by sdd_control\\(\\) but `solver` is \"cholesky\"; use cholesky_control\\(\\)")
  for (bad in list(-1, 1.5, NA, "2", 1e6)) {
    expect_error(g(kernel = ker, noise = 0.1, samples = bad),
                 class = "sddgp_error_argument", regexp = "`samples`")
  }
  for (bad in list(NA, "yes", c(TRUE, FALSE), 1)) {
    expect_error(g(kernel = ker, noise = 0.1, standardize = bad),
                 class = "sddgp_error_argument", regexp = "`standardize` must be TRUE or FALSE")
  }
  for (bad in list(0, 1.5, -2, NA, "two")) {
    expect_error(g(kernel = ker, noise = 0.1, threads = bad),
                 class = "sddgp_error_argument", regexp = "`threads`")
  }
  expect_error(g(kernel = ker, noise = 0.1, iterations = 10),
               class = "sddgp_error_argument",
               regexp = "`...` must be empty; unused argument\\(s\\): `iterations`")
})

test_that("the formula interface validates its own arguments", {
  d <- make_data(20, 2, seed = 29)
  df <- data.frame(d$x, y = d$y)
  expect_error(gp_sdd(y ~ x1), class = "sddgp_error_argument", regexp = "`data` is missing")
  # As lm(), which also refuses a matrix.
  expect_error(lm(y ~ ., data = as.matrix(df)), "must be a data.frame")
  expect_error(gp_sdd(y ~ ., data = as.matrix(df), kernel = matern(3/2, 1, 1), noise = 0.1),
               class = "sddgp_error_argument",
               regexp = "`data` must be a data frame, not a matrix .*as.data.frame")
  expect_error(gp_sdd(y ~ 1, data = df, kernel = matern(3/2, 1, 1), noise = 0.1),
               class = "sddgp_error_argument",
               regexp = "`x` has no input variables \\(y ~ 1\\): a GP needs at least one input column")
  expect_error(gp_sdd(y ~ ., data = df["y"], kernel = matern(3/2, 1, 1), noise = 0.1),
               class = "sddgp_error_argument", regexp = "at least one input column")
  # A non-numeric response is named, without a coercion warning first.
  df$label <- rep(c("a", "b"), 10)
  df$group <- factor(df$label)
  expect_no_warning(expect_error(
    gp_sdd(label ~ x1, data = df, kernel = matern(3/2, 1, 1), noise = 0.1),
    class = "sddgp_error_argument",
    regexp = "`x` has the character response `label`: a GP needs a numeric response"))
  expect_no_warning(expect_error(
    gp_sdd(group ~ x1, data = df, kernel = matern(3/2, 1, 1), noise = 0.1),
    class = "sddgp_error_argument", regexp = "factor response `group`"))
  expect_error(gp_sdd(~ x1, data = df, kernel = matern(3/2, 1, 1), noise = 0.1),
               class = "sddgp_error_argument", regexp = "formula with a response")
  expect_error(gp_sdd(y ~ ., data = df, kernel = matern(3/2, 1, 1), noise = 0.1,
                      solver = "cholesky", foo = 1),
               class = "sddgp_error_argument", regexp = "`foo`")
})
