# Prior draws by random Fourier features: the frequencies, importance
# sampled, and their amplitudes must give inner products that converge to
# the kernel, and the weights must be independent standard normals.

# The features at x (standardised units) computed here in base R from the
# stored frequencies, phases and amplitudes:
# amplitude sqrt(2 variance / m) cos(omega' x / l + phase).
ref_features <- function(prior, kernel, x) {
  xs <- sweep(x, 2, kernel$lengthscale, "/")
  m <- nrow(prior$omega)
  sweep(sqrt(2 * kernel$variance / m) *
          cos(xs %*% t(prior$omega) + rep(prior$phase, each = nrow(x))),
        2, prior$amplitude, "*")
}

# The log density of a d-variate Student-t with df degrees of freedom (0:
# the standard normal), written out.
ref_log_t <- function(w, df) {
  d <- ncol(w)
  if (df == 0) return(-d / 2 * log(2 * pi) - rowSums(w^2) / 2)
  lgamma((df + d) / 2) - lgamma(df / 2) - d / 2 * log(df * pi) -
    (df + d) / 2 * log1p(rowSums(w^2) / df)
}

# Five points at scaled distances between about 0.3 and 2, where every
# kernel is far from 0 and 1 and so sensitive to the spectral density.
prior_points <- rbind(c(0, 0, 0), c(0.1, 0.2, -0.3), c(0.5, -0.2, 0.4),
                      c(-0.4, 0.6, 0.2), c(0.3, 0.3, 0.9))
prior_ls <- c(0.5, 0.8, 1.2)

test_that("random Fourier features reproduce the kernel (all families, d = 3)", {
  m <- 1e5
  kernels <- list(matern12 = matern(1/2, prior_ls, 1.7), matern32 = matern(3/2, prior_ls, 1.7),
                  matern52 = matern(5/2, prior_ls, 1.7),
                  se = squared_exponential(prior_ls, 1.7))
  withr::local_seed(41)
  for (fam in names(kernels)) {
    ker <- kernels[[fam]]
    prior <- sddgp:::draw_prior(ker, 3L, m, 1L)
    expect_equal(dim(prior$omega), c(m, 3L))
    expect_true(all(prior$phase > 0 & prior$phase < 2 * pi))
    Phi <- ref_features(prior, ker, prior_points)
    K <- ref_kernel(prior_points, prior_points, fam, prior_ls, 1.7)
    # Each entry of Phi Phi' is variance / m times a sum of m iid terms
    # amplitude^2 (cos(w'(xi - xj)) + cos(w'(xi + xj) + 2 phase)), with
    # amplitude^2 at most 2, of variance at most 4 (1/2 + 1); its standard
    # deviation is at most 1.7 sqrt(6 / m) = 0.013.  Six standard
    # deviations over the 15 distinct entries are a safe bound, while a
    # wrong spectral density or importance weight (say independent
    # Student-t coordinates for the Matern kernels in d = 3, frequencies
    # off by 10%, or amplitudes of 1) moves some entries by 0.05 or more.
    expect_lt(max(abs(tcrossprod(Phi) - K)), 6 * 1.7 * sqrt(6 / m))
  }
})

test_that("prior draws' frequencies are importance-weighted against a Cauchy-tailed mixture", {
  # amplitude^2 = p / ((p + q) / 2): p the spectral density (Student-t with
  # 2 nu degrees of freedom, or normal), q a Student-t with one.
  withr::local_seed(45)
  for (case in list(list(matern(3/2, prior_ls, 1), 3), list(matern(5/2, prior_ls, 1), 5),
                    list(squared_exponential(prior_ls, 1), 0),
                    list(matern(1/2, prior_ls, 1), 1))) {
    prior <- sddgp:::draw_prior(case[[1]], 3L, 500L, 2L)
    p <- ref_log_t(prior$omega, case[[2]])
    q <- ref_log_t(prior$omega, 1)
    expect_equal(prior$amplitude^2, exp(p) / ((exp(p) + exp(q)) / 2), tolerance = 1e-10)
    expect_true(all(prior$amplitude <= sqrt(2)))
  }
  # Half of the frequencies from each: beyond the spectral density's 99th
  # percentile of |omega|^2 / 3 (an F(3, 3) for the Matern-3/2) lie
  # 0.5 * 0.01 + 0.5 * 0.135 = 0.07 of them (the one-degree t's share
  # there by simulation), not 0.01.
  prior <- sddgp:::draw_prior(matern(3/2, prior_ls, 1), 3L, 20000L, 1L)
  beyond <- mean(rowSums(prior$omega^2) / 3 > stats::qf(0.99, 3, 3))
  expect_gt(beyond, 0.055)
  expect_lt(beyond, 0.085)
})

test_that("prior_values() is the feature expansion Phi W", {
  ker <- matern(3/2, prior_ls, 0.6)
  withr::local_seed(42)
  prior <- sddgp:::draw_prior(ker, 3L, 300L, 4L)
  expect_equal(dim(prior$weights), c(300L, 4L))
  x <- rbind(prior_points, make_inputs(20, 3))
  f0 <- sddgp:::prior_values(prior, ker, x, threads = 2)
  expect_equal(dim(f0), c(25L, 4L))
  # Each draw has 300 features of its own.
  expect_equal(dim(prior$omega), c(1200L, 3L))
  expect_equal(f0, ref_prior_paths(prior, sweep(x, 2, prior_ls, "/"), 0.6), tolerance = 1e-12)
  expect_identical(sddgp:::prior_values(prior, ker, x, threads = 1), f0)
})

test_that("the prior weights are independent standard normals", {
  ker <- squared_exponential(prior_ls, 1)
  withr::local_seed(43)
  N <- 20000
  prior <- sddgp:::draw_prior(ker, 3L, 20L, N)
  w <- prior$weights
  # 400,000 draws: mean within 6 sd of 0, variance within 6 sqrt(2 / 4e5)
  # of 1.
  expect_lt(abs(mean(w)), 6 / sqrt(length(w)))
  expect_lt(abs(mean(w^2) - 1), 6 * sqrt(2 / length(w)))
  expect_lt(abs(stats::ks.test(w[1:5000], "pnorm")$statistic), 0.03)
})

test_that("prior draws averaged over fresh features have the kernel as covariance", {
  # Each call draws new frequencies, so over many calls the covariance of
  # f0 is exactly the kernel (the features are unbiased).
  ker <- matern(3/2, prior_ls, 1)
  withr::local_seed(44)
  N <- 4000
  f0 <- vapply(seq_len(N), function(i) {
    pr <- sddgp:::draw_prior(ker, 3L, 50L, 1L)
    drop(sddgp:::prior_values(pr, ker, prior_points[1:3, ], threads = 1))
  }, numeric(3))
  # So are the draws of one call, each with features of its own.
  pr <- sddgp:::draw_prior(ker, 3L, 50L, N)
  together <- t(sddgp:::prior_values(pr, ker, prior_points[1:3, ], threads = 1))
  K <- ref_kernel(prior_points[1:3, ], prior_points[1:3, ], "matern32", prior_ls, 1)
  emp <- tcrossprod(f0) / N
  # f0 is a normal mixture over the features: the Gaussian standard error
  # of a covariance, sqrt((K_ii K_jj + K_ij^2) / N) = at most 0.022, with a
  # margin of 6 for the mixture's heavier tails.
  sdev <- sqrt((outer(diag(K), diag(K)) + K^2) / N)
  expect_true(all(abs(emp - K) < 6 * sdev))
  expect_true(all(abs(crossprod(together) / N - K) < 6 * sdev))
})

test_that("prior draws are reproducible with set.seed()", {
  ker <- matern(5/2, prior_ls, 1)
  p1 <- withr::with_seed(5, sddgp:::draw_prior(ker, 3L, 100L, 2L))
  p2 <- withr::with_seed(5, sddgp:::draw_prior(ker, 3L, 100L, 2L))
  p3 <- withr::with_seed(6, sddgp:::draw_prior(ker, 3L, 100L, 2L))
  expect_identical(p1, p2)
  expect_false(isTRUE(all.equal(p1$omega, p3$omega)))
  expect_false(isTRUE(all.equal(p1$weights, p3$weights)))
})
