# The Tanimoto kernel on fingerprints (tanimoto()): its values in the C
# engine against base R, its random hash features, and GP fits with it
# against the exact posterior computed here.

# n fingerprints of d bits (about a fifth set, none empty), or with
# counts 1..4 where bits are set.
make_fingerprints <- function(n, d, seed, counts = FALSE) {
  withr::with_seed(seed, {
    x <- matrix(stats::rbinom(n * d, 1, 0.2), n, d)
    x[rowSums(x) == 0, 1L] <- 1
    if (counts) x <- x * matrix(sample.int(4L, n * d, replace = TRUE), n, d)
  })
  storage.mode(x) <- "double"
  x
}

# A smooth function of the fingerprints plus noise, and a prior mean 2.
make_molecules <- function(n, d, seed, counts = FALSE) {
  x <- make_fingerprints(n, d, seed, counts)
  y <- withr::with_seed(seed + 1, 2 + sin(rowSums(x[, 1:6])) + 0.3 * x[, 7] +
                          stats::rnorm(n, sd = 0.1))
  list(x = x, y = y)
}

tanimoto_c <- function(x1, x2, variance = 1, binary = NULL, threads = 2) {
  spec <- sddgp:::kernel_spec(tanimoto(variance))
  .Call(sddgp:::C_kernel_matrix, sddgp:::tanimoto_points(x1, binary),
        sddgp:::tanimoto_points(x2, binary), spec, threads)
}

as_sparse <- function(x) methods::as(Matrix::Matrix(x, sparse = TRUE), "CsparseMatrix")

# The GP posterior with constant prior mean mu0 (base R).
ref_tanimoto_posterior <- function(x, y, xnew, variance, noise, mu0) {
  A <- variance * ref_tanimoto(x) + diag(noise, nrow(x))
  Ks <- variance * ref_tanimoto(xnew, x)
  list(mean = mu0 + drop(Ks %*% solve(A, y - mu0)),
       cov = variance * ref_tanimoto(xnew) - Ks %*% solve(A, t(Ks)))
}

test_that("the Tanimoto kernel matches base R on dense, sparse, binary and count inputs", {
  skip_if_not_installed("Matrix")
  # d = 100: two 64-bit words a row, and beyond one block of coordinates
  # in the dense loop; 300 columns: more than one tile.
  for (counts in c(FALSE, TRUE)) {
    x1 <- make_fingerprints(41, 100, seed = 1, counts = counts)
    x2 <- make_fingerprints(300, 100, seed = 2, counts = counts)
    x1[41, ] <- x1[1, ]
    ref <- 2.5 * ref_tanimoto(x1, x2)
    for (form in c("dense", "sparse")) {
      info <- paste(if (counts) "counts" else "binary", form)
      f <- if (form == "sparse") as_sparse else identity
      K <- tanimoto_c(f(x1), f(x2), 2.5)
      expect_lt(max(abs(K - ref)), 1e-12, label = info)
      Kxx <- tanimoto_c(f(x1), f(x1), 2.5)
      expect_identical(Kxx, t(Kxx), info = info)
      expect_identical(diag(Kxx), rep(2.5, 41), info = info)
      expect_identical(Kxx[1, 41], 2.5, info = info)
      expect_identical(tanimoto_c(f(x1), f(x2), 2.5, threads = 1), K, info = info)
      A <- withr::with_seed(3, matrix(stats::rnorm(300 * 3), 300))
      KA <- .Call(sddgp:::C_kernel_matmul, sddgp:::tanimoto_points(f(x1)),
                  sddgp:::tanimoto_points(f(x2)), sddgp:::kernel_spec(tanimoto(2.5)),
                  A, "double", 2L)
      expect_equal(KA, ref %*% A, tolerance = 1e-12, info = info)
    }
    # Counts that happen to be bits: the dense count loop agrees.
    if (!counts) {
      expect_lt(max(abs(tanimoto_c(x1, x2, 2.5, binary = FALSE) - ref)), 1e-12)
    }
  }
})

test_that("the AVX-512 popcount gives the portable loop's values", {
  # Where the CPU lacks it both runs take the portable loop.  d: one word,
  # a partial last chunk of eight words, exactly two chunks, four; 301
  # columns: more than one tile and not a multiple of eight.
  on.exit(sddgp:::tanimoto_popcount_path(TRUE))
  for (d in c(64L, 100L, 1000L, 1024L, 2048L)) {
    x1 <- make_fingerprints(13, d, seed = d)
    x2 <- make_fingerprints(301, d, seed = d + 1)
    sddgp:::tanimoto_popcount_path(FALSE)
    K0 <- tanimoto_c(x1, x2)
    expect_identical(sddgp:::tanimoto_popcount_path(), "portable")
    sddgp:::tanimoto_popcount_path(TRUE)
    expect_identical(tanimoto_c(x1, x2), K0, info = paste("d =", d))
    expect_lt(max(abs(K0 - ref_tanimoto(x1, x2))), 1e-12)
  }
})

test_that("a Tanimoto Gram matrix is positive semi-definite", {
  for (counts in c(FALSE, TRUE)) {
    x <- make_fingerprints(150, 40, seed = 4, counts = counts)
    ev <- eigen(tanimoto_c(x, x), symmetric = TRUE, only.values = TRUE)$values
    expect_gte(min(ev), -1e-10)
  }
})

test_that("random hash features have the Tanimoto kernel as covariance", {
  # E[phi(x)' phi(x')] = A T(x, x'): each of m features contributes
  # +-A / m, so an entry's Monte-Carlo standard deviation is
  # A sqrt((1 - T^2) / m).  MinHash for bits, weighted sampling for counts.
  m <- 4000
  spec <- sddgp:::kernel_spec(tanimoto(1.5))
  for (counts in c(FALSE, TRUE)) {
    x <- make_fingerprints(30, 60, seed = 5, counts = counts)
    fp <- sddgp:::tanimoto_points(x)
    Phi <- .Call(sddgp:::C_hash_matmul, c(11, 12), 0, spec, fp, diag(m), 2L)
    expect_identical(.Call(sddgp:::C_hash_matmul, c(11, 12), 0, spec, fp, diag(m), 1L), Phi)
    expect_true(all(abs(Phi) == sqrt(1.5 / m)))
    T <- ref_tanimoto(x)
    z <- (tcrossprod(Phi) - 1.5 * T) / (1.5 * sqrt(pmax(1 - T^2, 1e-12) / m))
    expect_lt(max(abs(z[upper.tri(z)])), 5)
    expect_equal(diag(tcrossprod(Phi)), rep(1.5, 30))
    # Features first.. of the same seed are a slice of the sequence (with
    # their own scale sqrt(A / 50)).
    part <- .Call(sddgp:::C_hash_matmul, c(11, 12), 100, spec, fp, diag(50), 2L)
    expect_identical(sign(part), sign(Phi[, 101:150]))
  }
  # Sparse input gives the same features.
  skip_if_not_installed("Matrix")
  x <- make_fingerprints(30, 60, seed = 5, counts = TRUE)
  expect_identical(
    .Call(sddgp:::C_hash_matmul, c(1, 2), 0, spec, sddgp:::tanimoto_points(as_sparse(x)),
          diag(64), 2L),
    .Call(sddgp:::C_hash_matmul, c(1, 2), 0, spec, sddgp:::tanimoto_points(x), diag(64), 2L))
})

test_that("SDD with the Tanimoto kernel matches the exact solve", {
  d <- make_molecules(200, 64, seed = 6)
  xt <- make_fingerprints(7, 64, seed = 7)
  ref <- ref_tanimoto_posterior(d$x, d$y, xt, 0.8, 0.05, 2)
  withr::local_seed(8)
  fit <- gp_sdd(d$x, d$y, kernel = tanimoto(variance = 0.8, mean = 2), noise = 0.05,
                standardize = FALSE, solver = "sdd",
                control = sdd_control(tolerance = 0, iterations = 3000), threads = 2)
  expect_lt(max(abs(predict(fit, xt) - ref$mean)), 1e-5)
  expect_lt(max(abs(fitted(fit) - ref_tanimoto_posterior(d$x, d$y, d$x, 0.8, 0.05, 2)$mean)),
            1e-5)
  exact <- gp_sdd(d$x, d$y, kernel = tanimoto(variance = 0.8, mean = 2), noise = 0.05,
                  standardize = FALSE, solver = "cholesky", threads = 2)
  expect_equal(predict(exact, xt), ref$mean, tolerance = 1e-10)
  pv <- predict(exact, xt, se.fit = TRUE)
  expect_equal(pv$se.fit^2, diag(ref$cov), tolerance = 1e-8)
  # Sparse fingerprints: the same fit.
  skip_if_not_installed("Matrix")
  sparse <- gp_sdd(as_sparse(d$x), d$y, kernel = tanimoto(variance = 0.8, mean = 2),
                   noise = 0.05, standardize = FALSE, solver = "cholesky", threads = 2)
  expect_equal(predict(sparse, as_sparse(xt)), ref$mean, tolerance = 1e-10)
  expect_equal(predict(sparse, xt), ref$mean, tolerance = 1e-10)
})

test_that("count fingerprints predict alike from dense and sparse new data", {
  skip_if_not_installed("Matrix")
  d <- make_molecules(80, 40, seed = 16, counts = TRUE)
  xt <- make_fingerprints(5, 40, seed = 17, counts = TRUE)
  ref <- ref_tanimoto_posterior(d$x, d$y, xt, 1, 0.1, 2)$mean
  for (x in list(d$x, as_sparse(d$x))) {
    fit <- gp_sdd(x, d$y, kernel = tanimoto(1, 2), noise = 0.1, standardize = FALSE,
                  solver = "cholesky", samples = 2, threads = 1)
    expect_false(fit$kernel$binary)
    expect_equal(predict(fit, xt), ref, tolerance = 1e-10)
    expect_equal(predict(fit, as_sparse(xt)), ref, tolerance = 1e-10)
    expect_equal(dim(simulate(fit, 2, newdata = as_sparse(xt), seed = 1)), c(5L, 2L))
  }
})

test_that("Tanimoto posterior samples have the exact posterior covariance", {
  # As in test-simulate.R: independent calls each draw fresh hash features,
  # so over the calls the samples follow the exact posterior; batch means
  # give honest standard errors.
  d <- make_molecules(60, 32, seed = 9)
  xt <- make_fingerprints(4, 32, seed = 10)
  fit <- gp_sdd(d$x, d$y, kernel = tanimoto(variance = 1, mean = 2), noise = 0.05,
                solver = "cholesky", standardize = FALSE, threads = 1)
  ref <- ref_tanimoto_posterior(d$x, d$y, xt, 1, 0.05, 2)
  draws <- simulate_batches(fit, xt, G = 150)
  se_cov <- expect_batch_moments(draws, ref$mean, ref$cov)
  expect_true(all(diag(se_cov) < 0.06 * diag(ref$cov)))
})

test_that("Tanimoto fits are identical on 1 and 2 threads", {
  d <- make_molecules(200, 64, seed = 11, counts = TRUE)
  fit <- function(threads, solver) {
    withr::with_seed(12, gp_sdd(d$x, d$y, kernel = tanimoto(1), noise = 0.05,
                                solver = solver, samples = 3, threads = threads,
                                control = if (solver == "sdd") sdd_control(iterations = 200) else
                                  sgd_control(iterations = 200)))
  }
  for (solver in c("sdd", "sgd")) {
    one <- fit(1, solver)
    two <- fit(2, solver)
    expect_identical(one$alpha, two$alpha, info = solver)
    expect_identical(one$alpha_samples, two$alpha_samples, info = solver)
    expect_identical(one$kernel, two$kernel, info = solver)
  }
})

test_that("Tanimoto hyperparameters: gradient, estimates and the prior mean", {
  d <- make_molecules(120, 48, seed = 13)
  fp <- sddgp:::tanimoto_points(d$x)
  y <- d$y - mean(d$y)
  mll <- function(theta) {
    .Call(sddgp:::C_mll, fp, y, sddgp:::kernel_spec(tanimoto(exp(theta[1]))),
          exp(theta[2]), NULL, TRUE, 2L)
  }
  theta <- log(c(0.7, 0.1))
  g <- mll(theta)$gradient
  expect_length(g, 2L) # log variance and log noise: no length scales
  fd <- vapply(1:2, function(i) {
    h <- replace(numeric(2), i, 1e-5)
    (mll(theta + h)$value - mll(theta - h)$value) / 2e-5
  }, numeric(1))
  expect_equal(g, fd, tolerance = 1e-6)
  # The value is the Gaussian log density.
  H <- 0.7 * ref_tanimoto(d$x) + diag(0.1, 120)
  expect_equal(mll(theta)$value,
               -0.5 * sum(y * solve(H, y)) - 0.5 * determinant(H)$modulus[[1]] -
                 60 * log(2 * pi), tolerance = 1e-10)

  withr::local_seed(14)
  fit <- gp_sdd(d$x, d$y, kernel = "tanimoto", threads = 2)
  expect_identical(fit$estimation$estimated, c("variance", "noise", "mean"))
  expect_identical(attr(logLik(fit), "df"), 3L)
  expect_null(fit$kernel$lengthscale)
  # With all 120 points in the subset, mu0 is the GLS estimate there.
  sc <- fit$scaling$y_scale
  H <- fit$kernel$variance * ref_tanimoto(d$x) + diag(fit$noise, 120)
  gls <- sum(solve(H, d$y / sc)) / sum(solve(H, rep(1, 120))) * sc
  expect_equal(fit$kernel$mean, gls, tolerance = 1e-8)
  expect_equal(fit$scaling$y_center, fit$kernel$mean)
  # Fingerprints are not standardised, and print() says so.
  expect_identical(fit$x, d$x)
  expect_output(print(fit), "prior mean .* binary fingerprints, not standardised")
  expect_output(print(summary(fit)), "not standardised")
  expect_output(print(tanimoto()), "prior mean: \\(to be estimated\\)")
})

test_that("bad fingerprints and unsupported settings are classed errors", {
  d <- make_molecules(30, 16, seed = 15)
  bad <- function(x, regexp) {
    expect_error(gp_sdd(x, d$y, kernel = "tanimoto", threads = 1),
                 class = "sddgp_error_fingerprints", regexp = regexp)
  }
  x <- d$x
  bad(replace(x, 5, -1), "`x` contains negative values")
  bad(replace(x, 5, NA), "`x` contains NA")
  bad(replace(x, 5, Inf), "`x` contains NA")
  empty <- x
  empty[3, ] <- 0
  bad(empty, "`x` has 1 all-zero row \\(first: row 3\\)")
  bad(matrix(as.character(x), 30), "`x` must be a numeric matrix")
  bad(data.frame(a = letters[1:30], b = 1), "`x` must have only numeric columns")
  fit <- gp_sdd(d$x, d$y, kernel = tanimoto(1, 2), noise = 0.1, solver = "cholesky",
                threads = 1)
  expect_error(predict(fit, d$x[1:2, ] * 2), class = "sddgp_error_fingerprints",
               regexp = "`newdata` has counts")
  expect_error(predict(fit, -d$x[1:2, ]), class = "sddgp_error_fingerprints",
               regexp = "`newdata` contains negative")
  for (solver in c("svgp", "dsg", "cabcd")) {
    expect_error(gp_sdd(d$x, d$y, kernel = "tanimoto", solver = solver),
                 class = "sddgp_error_unsupported", regexp = solver)
  }
  expect_error(gp_sdd(d$x, d$y, kernel = "tanimoto",
                      control = sdd_control(precision = "single")),
               class = "sddgp_error_unsupported", regexp = "precision")
  expect_error(gp_sdd(d$x, d$y, kernel = structure(list(family = "tanimoto", lengthscale = 1),
                                                   class = "sddgp_kernel")),
               class = "sddgp_error_argument", regexp = "`lengthscale` must be NULL")
  expect_error(bo_thompson(function(x) sum(x), 0, 1, kernel = "tanimoto"),
               class = "sddgp_error_unsupported", regexp = "bo_thompson")
  expect_error(tanimoto(mean = NA), class = "sddgp_error_argument", regexp = "`mean`")
  expect_error(tanimoto(variance = -1), class = "sddgp_error_argument", regexp = "`variance`")
})
