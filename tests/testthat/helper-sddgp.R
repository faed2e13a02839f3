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
  if (family == "tanimoto") return(variance * ref_tanimoto(x1, x2))
  r <- ref_distance(x1, x2, lengthscale)
  switch(family,
    matern12 = variance * exp(-r),
    matern32 = variance * (1 + sqrt(3) * r) * exp(-sqrt(3) * r),
    matern52 = variance * (1 + sqrt(5) * r + 5 * r^2 / 3) * exp(-sqrt(5) * r),
    se = variance * exp(-r^2 / 2),
    stop("unknown family ", family))
}

# The Tanimoto (MinMax) similarity sum(min) / sum(max) of the rows of two
# dense non-negative matrices, pair by pair.
ref_tanimoto <- function(x1, x2 = x1) {
  t2 <- t(x2)
  out <- vapply(seq_len(nrow(x1)), function(i) {
    colSums(pmin(t2, x1[i, ])) / colSums(pmax(t2, x1[i, ]))
  }, numeric(nrow(x2)))
  t(matrix(out, nrow(x2), nrow(x1)))
}

# Posterior draws from independent calls (a matrix each, a column per
# draw) against the exact mean and covariance by batch means: the calls are
# independent, so the spread of the per-call averages gives an honest
# Monte-Carlo standard error (including the random features' extra
# variation); within 5 of them.  Returns the covariance's standard errors.
expect_batch_moments <- function(draws, mean, cov) {
  G <- length(draws)
  means <- sapply(draws, rowMeans)
  se_mean <- apply(means, 1, sd) / sqrt(G)
  expect_true(all(abs(rowMeans(means) - mean) < 5 * se_mean))
  covs <- sapply(draws, function(s) tcrossprod(s - mean) / ncol(s))
  k <- length(mean)
  se_cov <- matrix(apply(covs, 1, sd) / sqrt(G), k)
  expect_true(all(abs(matrix(rowMeans(covs), k) - cov) < 5 * se_cov))
  se_cov
}

# The families on scaled distances, which the kernel tests loop over (the
# Tanimoto kernel, on fingerprints, has test-tanimoto.R).
stationary_families <- function() {
  fams <- sddgp:::kernel_families
  fams$family[fams$stationary]
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
# The kernel at log hyperparameters theta = (log lengthscales, log
# variance, log noise), with d length scales.
kernel_of <- function(theta, d) {
  list(family = "matern32", lengthscale = exp(theta[seq_len(d)]),
       variance = exp(theta[[d + 1L]]))
}

# The responses' covariance K + diag(noise / weights) in base R, and the
# exact log marginal likelihood, of log hyperparameters theta.
ref_cov <- function(x, theta, family = "matern32", weights = 1) {
  d <- ncol(x)
  ref_kernel(x, x, family, exp(theta[seq_len(d)]), exp(theta[[d + 1L]])) +
    diag(exp(theta[[d + 2L]]) / weights, nrow(x))
}
ref_mll <- function(x, y, theta, family = "matern32", weights = 1) {
  R <- chol(ref_cov(x, theta, family, weights))
  a <- backsolve(R, forwardsolve(t(R), y))
  -sum(y * a) / 2 - sum(log(diag(R))) - nrow(x) / 2 * log(2 * pi)
}

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

# Prior draws f0 at inputs xs (already divided by the length scales) from
# a prior's stored frequencies, phases and weights, written out: each draw
# has random Fourier features of its own, rows (s - 1) m + 1 .. s m of
# omega and phase for draw s, m = nrow(weights).
ref_prior_paths <- function(prior, xs, variance = 1) {
  m <- nrow(prior$weights)
  vapply(seq_len(ncol(prior$weights)), function(s) {
    rows <- (s - 1L) * m + seq_len(m)
    drop(sqrt(2 * variance / m) * cos(xs %*% t(prior$omega[rows, , drop = FALSE]) +
                                        rep(prior$phase[rows], each = nrow(xs))) %*%
           (prior$amplitude[rows] * prior$weights[, s]))
  }, numeric(nrow(xs)))
}

max_rel_err <- function(a, b) max(abs(a - b)) / max(abs(b))

# Runs a long fit in a background R, sends Ctrl-C once it has been going for
# two seconds, and returns what the background R did and how long the fit
# took to stop: from the signal to the interrupt handler, timed on the same
# clock, so the work done after it (and the exit of the background R, slow
# on a loaded machine) does not count.  `args` replace gp_sdd()'s arguments
# (NULL removes one).  With `then`, a function(fit, x), the fit is quick and
# the signal comes during then(fit, x) instead.  With `signal_in`, the name of
# one of the package's functions, the two seconds start when that function is
# entered, not when gp_sdd() is: the signal then lands in the compiled work
# that follows it however fast the machine checks and copies the inputs.
interrupt_fit <- function(n, d, control, args = list(), then = NULL,
                          signal_in = NULL) {
  ready <- tempfile()
  on.exit(unlink(ready), add = TRUE)
  p <- callr::r_bg(function(ready, n, d, control, args, then, signal_in) {
    library(sddgp)
    set.seed(1)
    x <- matrix(runif(d * n), n)
    y <- sin(6 * x[, 1]) + rnorm(n, sd = 0.1)
    if (!is.null(signal_in)) {
      suppressMessages(trace(signal_in, bquote(file.create(.(ready))),
                             where = asNamespace("sddgp"), print = FALSE))
    } else if (is.null(then)) {
      file.create(ready)
    }
    res <- tryCatch({
      fit <- do.call(gp_sdd, utils::modifyList(
        list(x, y, kernel = matern(3/2, 0.3, 1), noise = 0.1, threads = 2,
             control = control), args))
      if (!is.null(then)) {
        file.create(ready)
        then(fit, x)
      }
      list(interrupted = FALSE)
    }, interrupt = function(e) {
      list(interrupted = TRUE, caught = Sys.time(),
           sddgp = inherits(e, "sddgp_interrupt"), message = conditionMessage(e))
    })
    small <- gp_sdd(x[1:50, ], y[1:50], kernel = matern(3/2, 0.3, 1), noise = 0.1,
                    solver = "cholesky", threads = 1)
    c(res, list(after = sum(1:10), prediction = predict(small, x[1:2, ]),
                staged = .Call(sddgp:::C_openmp_info)$staged))
  }, args = list(ready = ready, n = n, d = d, control = control, args = args,
                 then = then, signal_in = signal_in),
  libpath = .libPaths())
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  deadline <- Sys.time() + 60
  while (!file.exists(ready) && p$is_alive() && Sys.time() < deadline) Sys.sleep(0.05)
  expect_true(file.exists(ready))
  Sys.sleep(2)
  expect_true(p$is_alive())
  sent <- Sys.time()
  p$interrupt()
  p$wait(10000)
  expect_false(p$is_alive())
  res <- p$get_result()
  c(res, waited = as.numeric(difftime(res$caught %||% Sys.time(), sent, units = "secs")))
}

# Ctrl-C during a long fit: the fit stops within 3 s of the signal (a
# fraction of a second on an idle machine) with the package's interrupt
# condition and `message` (NULL: with R's own interrupt condition), and
# the same R then fits and predicts as usual, with no governed stage left
# running.
expect_prompt_interrupt <- function(n, d, control, message, args = list(),
                                    then = NULL, signal_in = NULL) {
  out <- interrupt_fit(n, d, control, args, then, signal_in)
  expect_lt(out$waited, 3)
  expect_true(out$interrupted)
  if (is.null(message)) {
    expect_false(out$sddgp)
  } else {
    expect_true(out$sddgp)
    expect_match(out$message, message)
  }
  expect_equal(out$after, 55L)
  expect_false(out$staged)
  expect_length(out$prediction, 2)
  expect_true(all(is.finite(out$prediction)))
}

# The problem a solver is given (see new_problem()), with right-hand sides
# supplied directly.
test_problem <- function(x, kernel, noise, rhs, has_mean = TRUE) {
  list(x = x, xs = sddgp:::scale_inputs(x, kernel), kernel = kernel,
       noise = rep_len(noise, nrow(x)), y = if (has_mean) rhs[, 1], rhs = rhs,
       has_mean = has_mean)
}

# A smooth 2-d regression problem for the framework (parsnip, mlr3) tests.
framework_data <- function(n = 200) {
  set.seed(1)
  d <- data.frame(x1 = runif(n), x2 = runif(n))
  d$y <- sin(6 * d$x1) + d$x2^2 + rnorm(n, sd = 0.1)
  d
}

# `G` independent simulate() calls of 10 draws at `newdata` (seeds 1..G, one
# thread: many small calls), for expect_batch_moments().
simulate_batches <- function(fit, newdata, G) {
  lapply(seq_len(G), function(i) {
    as.matrix(simulate(fit, nsim = 10, seed = i, newdata = newdata, threads = 1))
  })
}
