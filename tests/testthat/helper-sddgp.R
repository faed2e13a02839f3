# Shared settings and reference implementations for the sddgp tests.
#
# Everything the tests compare against is computed here in plain base R,
# independently of the package's C engine: the kernel formulas are written
# out from their textbook definitions and the exact GP posterior comes from
# solve() / chol() on the dense matrices.

# Never more than 2 threads (the test machines are shared).
options(sddgp.threads = 2)

# Euclidean distances between the rows of x1 and x2 after dividing each
# column by its length scale.
ref_distance <- function(x1, x2, lengthscale) {
  x1 <- as.matrix(x1)
  x2 <- as.matrix(x2)
  ls <- rep_len(lengthscale, ncol(x1))
  d2 <- matrix(0, nrow(x1), nrow(x2))
  for (j in seq_len(ncol(x1))) {
    d2 <- d2 + outer(x1[, j] / ls[j], x2[, j] / ls[j], "-")^2
  }
  sqrt(d2)
}

# k(x1, x2) for the four families, straight from their formulas.
ref_kernel <- function(x1, x2 = x1, family = "matern32", lengthscale = 1,
                       variance = 1) {
  r <- ref_distance(x1, x2, lengthscale)
  switch(family,
    matern12 = variance * exp(-r),
    matern32 = variance * (1 + sqrt(3) * r) * exp(-sqrt(3) * r),
    matern52 = variance * (1 + sqrt(5) * r + 5 * r^2 / 3) * exp(-sqrt(5) * r),
    se = variance * exp(-r^2 / 2),
    stop("unknown family ", family))
}

# The exact GP posterior with zero prior mean: representer weights
# alpha = (K + noise I)^{-1} y, and the mean and covariance of f at xnew.
ref_posterior <- function(x, y, xnew, family, lengthscale, variance, noise) {
  K <- ref_kernel(x, x, family, lengthscale, variance)
  A <- K + diag(noise, nrow(K))
  alpha <- solve(A, y)
  out <- list(alpha = alpha)
  if (!missing(xnew)) {
    Ks <- ref_kernel(xnew, x, family, lengthscale, variance)
    Kss <- ref_kernel(xnew, xnew, family, lengthscale, variance)
    out$mean <- drop(Ks %*% alpha)
    out$cov <- Kss - Ks %*% solve(A, t(Ks))
  }
  out
}

# A smooth test function on [0, 1]^d plus Gaussian noise, generated without
# touching the global random state.
make_data <- function(n, d = 2, seed = 1, noise_sd = 0.1) {
  withr::with_seed(seed, {
    x <- matrix(stats::runif(n * d), n, d)
    f <- sin(3 * x[, 1]) + if (d > 1) x[, 2]^2 - 0.5 * x[, d] else 0
    y <- f + stats::rnorm(n, sd = noise_sd)
  })
  colnames(x) <- paste0("x", seq_len(d))
  list(x = x, y = y)
}

# Test inputs on [0, 1]^d, also without touching the global random state.
make_inputs <- function(m, d = 2, seed = 99) {
  x <- withr::with_seed(seed, matrix(stats::runif(m * d), m, d))
  colnames(x) <- paste0("x", seq_len(d))
  x
}

max_rel_err <- function(a, b) max(abs(a - b)) / max(abs(b))
