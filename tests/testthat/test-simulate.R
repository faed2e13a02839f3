# simulate(): posterior function samples by pathwise conditioning, checked
# against the exact Gaussian posterior computed here with base R.

post_x <- function() make_data(80, 2, seed = 51)
post_points <- rbind(c(0.5, 0.5), c(0.52, 0.47), c(0.1, 0.9), c(1.3, -0.2))
colnames(post_points) <- c("x1", "x2")
post_ls <- c(0.3, 0.5)

# Exact posterior of f at xt given the features behind a set of samples: the
# pathwise sample mu + f0(x*) - k*' A^{-1} (f0(X) + zeta) with f0 = Phi w and
# zeta ~ N(0, Lambda) has covariance B B' + k*' A^{-1} Lambda A^{-1} k*,
# B = Phi(x*) - k*' A^{-1} Phi(X), Lambda the observations' noise variances.
feature_posterior_cov <- function(fit, x, xt, family) {
  ker <- fit$kernel
  # Every sample's features with their amplitudes, scaled so that Phi Phi'
  # is the samples' mean covariance.
  feat <- function(z) {
    m <- nrow(fit$prior$omega)
    sweep(sqrt(2 * ker$variance / m) *
            cos(sweep(z, 2, ker$lengthscale, "/") %*% t(fit$prior$omega) +
                  rep(fit$prior$phase, each = nrow(z))), 2, fit$prior$amplitude, "*")
  }
  noise <- fit$noise / if (is.null(fit$weights)) 1 else fit$weights
  A <- ref_kernel(x, x, family, ker$lengthscale, ker$variance) + diag(noise, nrow(x))
  Ks <- ref_kernel(xt, x, family, ker$lengthscale, ker$variance)
  KA <- t(solve(A, t(Ks)))
  B <- feat(xt) - KA %*% feat(x)
  tcrossprod(B) + KA %*% (noise * t(KA))
}

test_that("Cholesky posterior samples have the exact posterior mean and covariance", {
  d <- post_x()
  ker <- matern(5/2, post_ls, 1)
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, solver = "cholesky",
                standardize = FALSE)
  ref <- ref_posterior(d$x, d$y, post_points, "matern52", post_ls, 1, 0.05)
  # 200 independent calls of 10 draws: each call draws fresh random
  # features, so over the calls the samples follow the exact posterior.
  draws <- simulate_batches(fit, post_points, G = 200)
  # Batch means over the independent calls (expect_batch_moments()).
  se_cov <- expect_batch_moments(draws, ref$mean, ref$cov)
  # And the standard errors are small enough for this to mean something:
  # about 3% of each variance (2000 draws: sqrt(2 / 2000) = 3.2%).
  expect_true(all(diag(se_cov) < 0.05 * diag(ref$cov)))
})

test_that("SDD posterior samples match the exact posterior", {
  d <- post_x()
  ker <- matern(5/2, post_ls, 1)
  ref <- ref_posterior(d$x, d$y, post_points, "matern52", post_ls, 1, 0.05)
  withr::local_seed(52)
  N <- 500
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, standardize = FALSE,
                samples = N,
                control = sdd_control(tolerance = 0, iterations = 1000, features = 4000),
                # Many small steps: on a busy machine two OpenMP threads mostly
                # wait for each other (results do not depend on threads).
                threads = 1)
  s <- as.matrix(simulate(fit, nsim = N, newdata = post_points, stored = TRUE))
  C_feat <- feature_posterior_cov(fit, d$x, post_points, "matern52")
  # Given the fit's features the samples are Gaussian with mean mu and
  # covariance C_feat: Gaussian standard errors sqrt(C_ii / N) for the mean
  # and sqrt((C_ii C_jj + C_ij^2) / N) for the covariance, 6 of them.
  se_mean <- sqrt(diag(C_feat) / N)
  expect_true(all(abs(rowMeans(s) - ref$mean) < 6 * se_mean))
  emp <- tcrossprod(s - ref$mean) / N
  se_cov <- sqrt((outer(diag(C_feat), diag(C_feat)) + C_feat^2) / N)
  expect_true(all(abs(emp - C_feat) < 6 * se_cov))
  # Against the exact posterior covariance, allow in addition 10% of the
  # scale sqrt(C_ii C_jj) for the single draw of 4000 features (whose kernel
  # entries are off by up to about 3 sqrt(1.5 / 4000) = 6%).
  scale <- sqrt(outer(diag(ref$cov), diag(ref$cov)))
  expect_true(all(abs(emp - ref$cov) < 6 * se_cov + 0.1 * scale))
})

test_that("SDD samples with observation weights match the exact heteroscedastic posterior", {
  d <- post_x()
  ker <- matern(5/2, post_ls, 1)
  w <- withr::with_seed(53, stats::runif(nrow(d$x), 0.2, 5))
  ref <- ref_posterior(d$x, d$y, post_points, "matern52", post_ls, 1, 0.05 / w)
  withr::local_seed(54)
  N <- 500
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, weights = w, standardize = FALSE,
                samples = N, control = sdd_control(tolerance = 0, iterations = 1500, features = 4000),
                threads = 1)
  s <- as.matrix(simulate(fit, nsim = N, newdata = post_points, stored = TRUE))
  # As in the unweighted test above: Gaussian standard errors given the
  # fit's features, then 10% of the scale for the features' kernel error.
  C_feat <- feature_posterior_cov(fit, d$x, post_points, "matern52")
  expect_true(all(abs(rowMeans(s) - ref$mean) < 6 * sqrt(diag(C_feat) / N)))
  emp <- tcrossprod(s - ref$mean) / N
  se_cov <- sqrt((outer(diag(C_feat), diag(C_feat)) + C_feat^2) / N)
  expect_true(all(abs(emp - C_feat) < 6 * se_cov))
  scale <- sqrt(outer(diag(ref$cov), diag(ref$cov)))
  expect_true(all(abs(emp - ref$cov) < 6 * se_cov + 0.1 * scale))
  # The weights matter here: the homoscedastic posterior's variances differ
  # from the weighted ones by more than the tolerance above.
  homo <- ref_posterior(d$x, d$y, post_points, "matern52", post_ls, 1, 0.05)
  expect_gt(max(abs(diag(homo$cov) - diag(ref$cov)) / diag(ref$cov)), 0.25)
})

test_that("simulate() returns a data frame sim_1 .. sim_nsim, one row per input", {
  d <- make_data(40, 2, seed = 53)
  withr::local_seed(53)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05,
                solver = "cholesky", samples = 5)
  s <- simulate(fit, nsim = 3, newdata = post_points)
  expect_s3_class(s, "data.frame")
  expect_named(s, c("sim_1", "sim_2", "sim_3"))
  expect_equal(nrow(s), 4L)
  s_train <- simulate(fit)
  expect_equal(dim(s_train), c(40L, 1L))
  expect_named(s_train, "sim_1")
  s_seed <- simulate(fit, 2, seed = 9, newdata = post_points)
  expect_equal(attr(s_seed, "seed"), 9, ignore_attr = TRUE)
})

test_that("stored = TRUE replays the fit's samples", {
  d <- make_data(60, 2, seed = 54)
  withr::local_seed(54)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05,
                samples = 6, control = sdd_control(tolerance = 0, iterations = 50))
  xt <- post_points
  s6 <- as.matrix(simulate(fit, nsim = 6, newdata = xt, stored = TRUE))
  # The stored samples rebuilt from the fit's parts in base R: mean
  # k(x*, X) alpha plus f0(x*) - k(x*, X) alpha_s, in original units.
  sc <- fit$scaling
  z <- function(m) sweep(sweep(m, 2, sc$x_center), 2, sc$x_scale, "/")
  xs <- z(d$x)
  Ks <- ref_kernel(z(xt), xs, "matern32", post_ls, 1)
  f0 <- ref_prior_paths(fit$prior, sweep(z(xt), 2, post_ls, "/"))
  paths <- drop(Ks %*% fit$alpha) + f0 - Ks %*% fit$alpha_samples
  expect_equal(unname(s6), sc$y_center + sc$y_scale * paths, tolerance = 1e-10)
  # No draw from the global generator, and the first columns are stable.
  seed_before <- .Random.seed
  s2 <- as.matrix(simulate(fit, nsim = 2, newdata = xt, stored = TRUE))
  expect_identical(.Random.seed, seed_before)
  # (equal to rounding: the kernel products sum column blocks differently)
  expect_equal(s2, s6[, 1:2], tolerance = 1e-12)
  # predict()'s standard errors come from exactly these paths.
  p <- predict(fit, xt, se.fit = TRUE)
  expect_equal(unname(p$se.fit), sqrt(rowMeans((s6 - p$fit)^2)), tolerance = 1e-10)
})

test_that("a seed gives reproducible fresh draws and restores the random state", {
  d <- make_data(40, 2, seed = 55)
  withr::local_seed(55)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05,
                solver = "cholesky", samples = 4)
  set.seed(123)
  before <- .Random.seed
  a <- simulate(fit, nsim = 3, seed = 1, newdata = post_points)
  expect_identical(.Random.seed, before)
  b <- simulate(fit, nsim = 3, seed = 1, newdata = post_points)
  expect_identical(a, b)
  c2 <- simulate(fit, nsim = 3, seed = 2, newdata = post_points)
  expect_false(isTRUE(all.equal(a, c2)))
  # Fresh draws, not the stored ones.
  stored <- simulate(fit, nsim = 3, newdata = post_points, stored = TRUE)
  expect_false(isTRUE(all.equal(unname(as.matrix(a)), unname(as.matrix(stored)))))
  # Without a prior random state, none is left behind.
  withr::local_preserve_seed()
  rm(".Random.seed", envir = globalenv())
  simulate(fit, nsim = 2, seed = 3, newdata = post_points)
  expect_false(exists(".Random.seed", envir = globalenv(), inherits = FALSE))
})

test_that("simulate() with a seed warm-starts the new sample systems as the fit did", {
  d <- make_data(60, 2, seed = 58)
  ker <- matern(3/2, post_ls, 1)
  fit <- function(solver, control = NULL) {
    withr::with_seed(59, gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, solver = solver,
                                control = control, samples = 2, threads = 2L))
  }
  # From a full-rank warm start (the exact solutions) two short steps stay at
  # the exact solutions: a seed gives the same prior draws and noise as the
  # Cholesky fit's, so the same paths, which a cold start is far from.
  control <- function(warm_start) {
    sdd_control(iterations = 2, averaging_rate = 0.01, warm_start = warm_start,
                warm_start_rank = 60)
  }
  exact <- as.matrix(simulate(fit("cholesky"), nsim = 3, seed = 8, newdata = post_points))
  warm <- fit("sdd", control("inducing"))
  s <- as.matrix(simulate(warm, nsim = 3, seed = 8, newdata = post_points))
  expect_equal(s, exact, tolerance = 1e-5)
  expect_identical(as.matrix(simulate(warm, nsim = 3, seed = 8, newdata = post_points)), s)
  cold <- suppressWarnings(fit("sdd", control("none")))
  expect_gt(max(abs(as.matrix(simulate(cold, nsim = 3, seed = 8, newdata = post_points)) -
                      exact)), 0.1)
})

test_that("without a seed every call draws afresh from the global generator", {
  d <- make_data(40, 2, seed = 56)
  withr::local_seed(56)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05,
                samples = 2, control = sdd_control(tolerance = 0, iterations = 50))
  stored <- as.matrix(simulate(fit, nsim = 2, newdata = post_points, stored = TRUE))
  set.seed(7)
  before <- .Random.seed
  s5 <- simulate(fit, nsim = 5, newdata = post_points)
  # As stats::simulate(): the seed attribute is the state the draws began from.
  expect_identical(attr(s5, "seed"), before)
  s5 <- as.matrix(s5)
  expect_equal(dim(s5), c(4L, 5L))
  expect_false(isTRUE(all.equal(unname(s5[, 1:2]), unname(stored))))
  # The next call draws new paths (also for nsim within the stored number).
  expect_false(isTRUE(all.equal(as.matrix(simulate(fit, nsim = 5, newdata = post_points)), s5)))
  s2 <- as.matrix(simulate(fit, nsim = 2, newdata = post_points))
  expect_false(isTRUE(all.equal(unname(s2), unname(stored))))
  set.seed(7)
  expect_identical(as.matrix(simulate(fit, nsim = 5, newdata = post_points)), s5)
  # So does a fit whose global random state is absent: one is made.
  withr::local_preserve_seed()
  rm(".Random.seed", envir = globalenv())
  s <- simulate(fit, nsim = 1, newdata = post_points)
  # (made before the draws, so the draws advanced it past the attribute)
  expect_true(exists(".Random.seed", envir = globalenv(), inherits = FALSE))
  expect_type(attr(s, "seed"), "integer")
  expect_false(identical(attr(s, "seed"), .Random.seed))
  # A fit without stored samples draws new ones too (SDD and Cholesky).
  f0 <- gp_sdd(d$x, d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05,
               control = sdd_control(tolerance = 0, iterations = 50))
  expect_equal(dim(simulate(f0, nsim = 2, newdata = post_points)), c(4L, 2L))
  fc <- gp_sdd(d$x, d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05,
               solver = "cholesky")
  expect_true(all(is.finite(as.matrix(simulate(fc, nsim = 2)))))
})

test_that("simulate() validates its arguments", {
  d <- make_data(30, 2, seed = 57)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05,
                solver = "cholesky", samples = 2)
  for (bad in list(0, -1, 1.5, NA, "2", c(1, 2), 1e6)) {
    expect_error(simulate(fit, nsim = bad), class = "sddgp_error_argument",
                 regexp = "`nsim`")
  }
  for (bad in list(1.5, NA, "a", c(1, 2), Inf)) {
    expect_error(simulate(fit, nsim = 1, seed = bad), class = "sddgp_error_argument",
                 regexp = "`seed`")
  }
  expect_error(simulate(fit, nsim = 1, newdata = post_points[, 1, drop = FALSE]),
               class = "sddgp_error_argument", regexp = "`newdata` lacks the input column `x2`")
  expect_error(simulate(fit, nsim = 1, foo = 2), class = "sddgp_error_argument",
               regexp = "`\\.\\.\\.` must be empty.*`foo`")
  expect_error(simulate(fit, nsim = 1, threads = 0), class = "sddgp_error_argument",
               regexp = "`threads`")
})

test_that("a seed outside the integer range gives a classed error", {
  d <- make_data(30, 2, seed = 58)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05,
                solver = "cholesky", samples = 2)
  expect_error(simulate(fit, nsim = 1, seed = 2^31), class = "sddgp_error_argument",
               regexp = "`seed`")
})

test_that("sample paths scale with huge targets and refuse far-away inputs", {
  d <- make_data(50, 2, seed = 79)
  ker <- matern(3/2, post_ls, 1)
  fit_at <- function(s) withr::with_seed(56, gp_sdd(d$x, d$y * s, kernel = ker, noise = 0.05,
                                                    solver = "cholesky", samples = 3))
  f1 <- fit_at(1)
  fs <- fit_at(1e300)
  s1 <- as.matrix(simulate(f1, nsim = 3, newdata = post_points, stored = TRUE))
  ss <- as.matrix(simulate(fs, nsim = 3, newdata = post_points, stored = TRUE))
  expect_true(all(is.finite(ss)))
  expect_equal(ss / 1e300, s1, tolerance = 1e-8)
  # Far from the data the paths would come from overflowed distances and
  # inaccurate cosines (NaN at 1e155): an error naming newdata.
  err <- expect_error(simulate(f1, newdata = rbind(post_points[1, ], c(1e155, 0.5))),
                      class = "sddgp_error_argument",
                      regexp = paste("`newdata` has 1 row \\(first: row 2\\) more than 1000",
                                     "length scales"))
  expect_equal(err$arg, "newdata")
})

test_that("the seed attribute is the seed with the generator's kind, as stats::simulate()", {
  d <- make_data(30, 2, seed = 60)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05,
                solver = "cholesky", samples = 2)
  s <- simulate(fit, nsim = 2, seed = 4, newdata = post_points)
  expect_identical(attr(s, "seed"), structure(4, kind = as.list(RNGkind())))
  # stored = TRUE draws nothing but still records the state.
  set.seed(1)
  before <- .Random.seed
  st <- simulate(fit, nsim = 2, newdata = post_points, stored = TRUE)
  expect_identical(attr(st, "seed"), before)
  expect_identical(.Random.seed, before)
})

test_that("type = \"response\" adds noise of variance noise / weights in the data's units", {
  d <- make_data(40, 2, seed = 61)
  w <- rep(c(0.25, 4), 20)
  fit <- gp_sdd(d$x, 10 * d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05, weights = w,
                solver = "cholesky")
  # With one seed the function draws come first and are the same: the
  # difference is the noise alone.
  f <- as.matrix(simulate(fit, nsim = 400, seed = 5))
  r <- as.matrix(simulate(fit, nsim = 400, seed = 5, type = "resp"))
  # At the training inputs the fit's weights: standard deviation sigma / sqrt(w).
  z <- (r - f) / (sigma(fit) / sqrt(w))
  # 8000 standard normals per weight: a variance within 0.05 of 1 (3 se).
  expect_lt(abs(mean(z[w == 0.25, ]^2) - 1), 0.05)
  expect_lt(abs(mean(z[w == 4, ]^2) - 1), 0.05)
  expect_lt(abs(mean(z)), 0.03)
  # sigma() is in the data's units: sqrt(noise) times the sd of y.
  expect_equal(sigma(fit), sqrt(0.05) * fit$scaling$y_scale)
  # At new inputs weights default to 1, or are given.
  f1 <- as.matrix(simulate(fit, nsim = 2000, seed = 6, newdata = post_points[1:2, ]))
  r1 <- as.matrix(simulate(fit, nsim = 2000, seed = 6, newdata = post_points[1:2, ],
                           type = "response", weights = c(1, 100)))
  v <- rowMeans((r1 - f1)^2) / sigma(fit)^2
  expect_lt(abs(v[1] - 1), 0.1)
  expect_lt(abs(v[2] * 100 - 1), 0.1)
})

test_that("rows of newdata with missing values give NA draws", {
  d <- make_data(30, 2, seed = 62)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05,
                solver = "cholesky", samples = 3)
  xt <- post_points
  xt[2, 2] <- NA
  s <- as.matrix(simulate(fit, nsim = 3, newdata = xt, stored = TRUE))
  expect_true(all(is.na(s[2, ])))
  expect_equal(s[-2, ], as.matrix(simulate(fit, nsim = 3, newdata = post_points[-2, ],
                                           stored = TRUE)), ignore_attr = TRUE)
})

test_that("simulate() validates type, stored and weights", {
  d <- make_data(30, 2, seed = 63)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, post_ls, 1), noise = 0.05,
                solver = "cholesky", samples = 2)
  expect_error(simulate(fit, type = "latent"), class = "sddgp_error_argument",
               regexp = "`type`")
  expect_error(simulate(fit, stored = NA), class = "sddgp_error_argument", regexp = "`stored`")
  expect_error(simulate(fit, nsim = 3, stored = TRUE), class = "sddgp_error_argument",
               regexp = "`nsim` is 3 but the fit holds 2 stored samples")
  expect_error(simulate(fit, newdata = post_points, type = "response", weights = c(1, 2)),
               class = "sddgp_error_argument", regexp = "`weights` must have length 1 or 4")
  expect_error(simulate(fit, type = "response", weights = -1),
               class = "sddgp_error_argument", regexp = "`weights` must be positive")
})
