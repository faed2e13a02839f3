# The sparse variational GP: svgp_control(), k-means++ inducing points, the
# closed-form fit against base-R formulas (and against the exact GP when the
# inducing points are the training inputs), the ELBO, refinement of the
# inducing points, pathwise samples from q(u), predict() and simulate(),
# determinism across threads, and failures.

# The closed-form SVGP of Titsias (2009) in base R from inducing points z, in
# the units of x: Kmm (with the solver's relative jitter), Sigma, the mean
# coefficients a, q(u) = N(m, S), and at xnew the mean and covariance
# k(x, x') - k(x, Z) (Kmm^-1 - Sigma) k(Z, x'), and the collapsed bound.
ref_svgp <- function(x, y, z, xnew, family, ls, variance, noise, jitter) {
  n <- nrow(x)
  lam <- rep_len(noise, n)
  Kmm <- ref_kernel(z, z, family, ls, variance) + diag(jitter * variance, nrow(z))
  Kmn <- ref_kernel(z, x, family, ls, variance)
  Sigma <- solve(Kmm + Kmn %*% (t(Kmn) / lam))
  a <- drop(Sigma %*% Kmn %*% (y / lam))
  Ksz <- ref_kernel(xnew, z, family, ls, variance)
  Q <- t(Kmn) %*% solve(Kmm, Kmn)
  C <- Q + diag(lam)
  elbo <- -0.5 * sum(y * solve(C, y)) - 0.5 * c(determinant(C)$modulus) -
    n / 2 * log(2 * pi) - 0.5 * sum((variance - diag(Q)) / lam)
  list(Kmm = Kmm, a = a, m = drop(Kmm %*% a), S = Kmm %*% Sigma %*% Kmm,
       mean = drop(Ksz %*% a),
       cov = ref_kernel(xnew, xnew, family, ls, variance) -
         Ksz %*% (solve(Kmm) - Sigma) %*% t(Ksz),
       elbo = elbo)
}

ref_log_ml <- function(x, y, family, ls, variance, noise) {
  A <- ref_kernel(x, x, family, ls, variance) + diag(rep_len(noise, nrow(x)))
  -0.5 * sum(y * solve(A, y)) - 0.5 * c(determinant(A)$modulus) -
    nrow(x) / 2 * log(2 * pi)
}

# The covariance of the fitted SVGP at xnew from the Cholesky factors the
# fit keeps: Kmm^-1 - Sigma = L^-T (I - B^-1) L^-1, so with V = L^-1 k(Z, x)
# the covariance is k(x, x') - V'V + (LB^-1 V)'(LB^-1 V).
fit_covariance <- function(state, xnew, family, ls, variance) {
  V <- forwardsolve(state$chol_kmm, ref_kernel(state$inducing, xnew, family, ls, variance))
  W <- forwardsolve(state$chol_b, V)
  ref_kernel(xnew, xnew, family, ls, variance) - crossprod(V) + crossprod(W)
}

test_that("svgp_control() has documented defaults and prints them", {
  ctl <- svgp_control()
  expect_s3_class(ctl, c("sddgp_control_svgp", "sddgp_control"))
  expect_identical(ctl$inducing, 3000L)
  expect_identical(ctl$kmeans_iterations, 10L)
  expect_identical(ctl$optimize_inducing, 0L)
  expect_equal(ctl$learning_rate, 0.01)
  expect_equal(ctl$jitter, 1e-6)
  expect_identical(ctl$features, 2000L)
  expect_output(print(ctl), "Settings of solver \"svgp\" \\(sparse variational GP\\)")
  expect_output(print(ctl), "inducing +3000\n  kmeans_iterations +10\n  optimize_inducing +0")
  ctl2 <- svgp_control(inducing = 50, kmeans_iterations = 0, optimize_inducing = 7,
                       learning_rate = 0.2, jitter = 0, features = 10)
  expect_identical(ctl2$inducing, 50L)
  expect_identical(ctl2$kmeans_iterations, 0L)
  expect_identical(ctl2$optimize_inducing, 7L)
  expect_equal(ctl2$learning_rate, 0.2)
  expect_equal(ctl2$jitter, 0)
  expect_identical(ctl2$features, 10L)
})

test_that("svgp_settings() holds exactly the settings C reads, named as there", {
  s <- sddgp:::svgp_settings(svgp_control(optimize_inducing = 7, learning_rate = 0.2))
  expect_identical(s, list(jitter = 1e-6, iterations = 7L, learning_rate = 0.2))
})

test_that("every svgp_control() argument is validated with a classed error", {
  bad <- list(
    inducing = list(0, -3, 2.5, NA, "100", Inf, c(10, 20), 2^31),
    kmeans_iterations = list(-1, 1.5, NA, "10", 2e6),
    optimize_inducing = list(-1, 0.5, NA, "5", Inf),
    learning_rate = list(0, -0.1, NA, Inf, "0.01", c(0.1, 0.2)),
    jitter = list(-1e-6, 2, NA, "1e-6", NaN),
    features = list(0, 10.5, NA, 2e6)
  )
  for (arg in names(bad)) {
    for (value in bad[[arg]]) {
      args <- stats::setNames(list(value), arg)
      expect_error(do.call(svgp_control, args), class = "sddgp_error_argument",
                   regexp = paste0("`", arg, "`"), label = paste(arg, "=", deparse(value)))
    }
  }
  expect_error(svgp_control(learning_rate = 0), regexp = "`learning_rate` must lie in \\(0, Inf\\]")
  expect_error(svgp_control(inducing = 2.5), regexp = "whole number")
  expect_error(svgp_control(inducing_points = 10), "unused argument")
  # gp_sdd() checks that the settings belong to the solver.
  d <- make_data(20, 1)
  expect_error(gp_sdd(d$x, d$y, kernel = matern(3/2, 1, 1), noise = 0.1, solver = "svgp",
                      control = sdd_control()),
               class = "sddgp_error_argument", regexp = "use svgp_control\\(\\)")
})

test_that("with the training inputs as inducing points the SVGP is the exact GP", {
  d <- make_data(60, 2, seed = 41)
  ls <- c(0.4, 0.6)
  ker <- matern(3/2, ls, 1.1)
  xnew <- make_inputs(15, 2)
  exact <- ref_posterior(d$x, d$y, xnew, "matern32", ls, 1.1, 0.05)
  p <- test_problem(d$x, ker, 0.05, matrix(d$y))
  # With jitter e, Qnn = K (K + e I)^-1 K differs from K by about e; at
  # e = 1e-10 sigma_f^2 and noise 0.05 the mean, covariance and bound are
  # exact to ~1e-8, well inside 1e-6.
  f <- sddgp:::svgp_fit(p, svgp_control(jitter = 1e-10), threads = 2, inducing = d$x)
  st <- f$state
  expect_identical(st$inducing, d$x)
  mean <- drop(ref_kernel(xnew, st$inducing, "matern32", ls, 1.1) %*% st$coefficients)
  expect_lt(max_rel_err(mean, exact$mean), 1e-6)
  expect_lt(max_rel_err(fit_covariance(st, xnew, "matern32", ls, 1.1), exact$cov), 1e-6)
  expect_equal(st$elbo, ref_log_ml(d$x, d$y, "matern32", ls, 1.1, 0.05), tolerance = 1e-6)
  expect_equal(f$status, "exact")
  expect_identical(f$iterations, 0L)

  # Through gp_sdd(): with at least n inducing points k-means++ picks every
  # training input (each is at distance 0 from its own centre, so Lloyd
  # iterations keep them).
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, standardize = FALSE,
                control = svgp_control(inducing = 1000, jitter = 1e-10))
  z <- fit$basis$x
  expect_equal(nrow(z), 60L)
  expect_equal(z[order(z[, 1]), ], d$x[order(d$x[, 1]), ], tolerance = 1e-14,
               ignore_attr = TRUE)
  expect_lt(max_rel_err(predict(fit, xnew), exact$mean), 1e-6)
  expect_equal(fit$state$elbo, st$elbo, tolerance = 1e-6)
  expect_equal(fit$status, "exact")
})

test_that("with fewer inducing points the fit is the closed-form SVGP of base R", {
  d <- make_data(300, 2, seed = 42)
  noise <- withr::with_seed(3, runif(300, 0.02, 0.1))  # heteroscedastic
  ls <- c(0.3, 0.5)
  ker <- matern(5/2, ls, 0.9)
  xnew <- make_inputs(20, 2)
  p <- test_problem(d$x, ker, noise, matrix(d$y))
  withr::local_seed(5)
  f <- sddgp:::svgp_fit(p, svgp_control(inducing = 25), threads = 2)
  st <- f$state
  expect_equal(dim(st$inducing), c(25L, 2L))
  ref <- ref_svgp(d$x, d$y, st$inducing, xnew, "matern52", ls, 0.9, noise, 1e-6)
  # Base R and the C code differ only by rounding, amplified by the
  # condition number of Kmm + Kmn Lambda^-1 Knm (below 1e7 here): relative
  # differences of ~1e-10, so 1e-8 leaves room.
  expect_lt(max_rel_err(st$coefficients, ref$a), 1e-8)
  mean <- drop(ref_kernel(xnew, st$inducing, "matern52", ls, 0.9) %*% st$coefficients)
  expect_lt(max_rel_err(mean, ref$mean), 1e-8)
  expect_lt(max_rel_err(fit_covariance(st, xnew, "matern52", ls, 0.9), ref$cov), 1e-8)
  expect_equal(st$elbo, ref$elbo, tolerance = 1e-10)
  # The factors are triangular: L L' is the jittered Kmm.
  expect_true(all(st$chol_kmm[upper.tri(st$chol_kmm)] == 0))
  expect_true(all(st$chol_b[upper.tri(st$chol_b)] == 0))
  expect_lt(max_rel_err(tcrossprod(st$chol_kmm), ref$Kmm), 1e-12)
  # A lower bound: below the exact log marginal likelihood, by a margin
  # (25 inducing points for 300 data).
  exact <- ref_log_ml(d$x, d$y, "matern52", ls, 0.9, noise)
  expect_lt(st$elbo, exact - 1)
  # More inducing points, a tighter bound.
  withr::local_seed(5)
  f2 <- sddgp:::svgp_fit(p, svgp_control(inducing = 100), threads = 2)
  expect_gt(f2$state$elbo, st$elbo)
  expect_lt(f2$state$elbo, exact)
})

test_that("posterior samples draw u from q(u) and condition pathwise on it", {
  d <- make_data(200, 2, seed = 43)
  ls <- c(0.3, 0.4)
  ker <- matern(3/2, ls, 1)
  withr::local_seed(6)
  ns <- 4000
  prior <- sddgp:::draw_prior(ker, 2L, 300L, ns)
  p <- sddgp:::new_problem(d$x, d$y, ker, 0.05, prior, threads = 2)
  sol <- sddgp:::solve_svgp(p, svgp_control(inducing = 8), threads = 2, state = NULL)
  st <- sol$state
  expect_equal(dim(sol$alpha), c(8L, ns + 1L))
  expect_identical(sol$alpha[, 1], st$coefficients)
  expect_identical(sol$basis, list(type = "points", x = st$inducing))
  ref <- ref_svgp(d$x, d$y, st$inducing, st$inducing, "matern32", ls, 1, 0.05, 1e-6)
  # The convention sample = mean + f0 - basis alpha_s gives
  # alpha_s = a - Kmm^-1 (u_s - f0_s(Z)), so u_s = Kmm (a - alpha_s) + f0_s(Z),
  # which must be an exact draw from q(u) = N(m, S) whatever the prior.
  f0z <- sddgp:::prior_values(prior, ker, st$inducing, threads = 2)
  u <- ref$Kmm %*% (st$coefficients - sol$alpha[, -1]) + f0z
  S <- ref$S
  # 5 standard errors per entry: sqrt(S_ii / N) for the mean,
  # sqrt((S_ii S_jj + S_ij^2) / N) for the covariance (Gaussian draws).
  expect_true(all(abs(rowMeans(u) - ref$m) < 5 * sqrt(diag(S) / ns)))
  se <- sqrt((tcrossprod(diag(S)) + S^2) / ns)
  expect_true(all(abs(stats::cov(t(u)) - S) < 5 * se))
  # A wrong factor (LB^-1 for LB^-T) would give another covariance: the
  # test sees the difference.
  wrong <- st$chol_kmm %*% solve(st$chol_b)
  expect_false(all(abs(tcrossprod(wrong) - S) < 5 * se))
})

test_that("sample paths have the covariance pathwise conditioning implies", {
  d <- make_data(150, 1, seed = 44)
  ker <- matern(5/2, 0.3, 1)
  xnew <- matrix(c(0.1, 0.35, 0.6, 0.9, 1.2))
  withr::local_seed(7)
  ns <- 3000
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, standardize = FALSE, samples = ns,
                control = svgp_control(inducing = 12, features = 500))
  st <- fit$state
  # Given the random features Phi of the prior (f0 = Phi w, w ~ N(0, I)),
  # a path f0(x) + k(x, Z) Kmm^-1 (u - f0(Z)) has mean k(x, Z) a and
  # covariance, with H = k(x, Z) Kmm^-1 and Kf = Phi Phi',
  # Kf(x, x) - H Kf(Z, x) - Kf(x, Z) H' + H (Kf(Z, Z) + S) H'.
  # Phi(x) = amplitude sqrt(2 sigma_f^2 / m) cos(x omega' / l + phase), m
  # features (every sample's, scaled so that Phi Phi' is their mean).
  phi <- function(x) {
    sweep(sqrt(2 / nrow(fit$prior$omega)) *
            cos((x / 0.3) %*% t(fit$prior$omega) + rep(fit$prior$phase, each = nrow(x))),
          2, fit$prior$amplitude, "*")
  }
  ref <- ref_svgp(d$x, d$y, st$inducing, xnew, "matern52", 0.3, 1, 0.05, 1e-6)
  H <- ref_kernel(xnew, st$inducing, "matern52", 0.3, 1) %*% solve(ref$Kmm)
  Px <- phi(xnew)
  Pz <- phi(st$inducing)
  C <- tcrossprod(Px) - H %*% tcrossprod(Pz, Px) - tcrossprod(Px, Pz) %*% t(H) +
    H %*% (tcrossprod(Pz) + ref$S) %*% t(H)
  paths <- as.matrix(simulate(fit, nsim = ns, newdata = xnew, stored = TRUE))
  expect_lt(max_rel_err(predict(fit, xnew), ref$mean), 1e-8)
  # 5 standard errors, as above.
  expect_true(all(abs(rowMeans(paths) - ref$mean) < 5 * sqrt(diag(C) / ns)))
  se <- sqrt((tcrossprod(diag(C)) + C^2) / ns)
  expect_true(all(abs(stats::cov(t(paths)) - C) < 5 * se))
  # predict() takes its standard errors from the same zero-mean paths: the
  # mean of ns squares estimates diag(C) with standard error
  # sqrt(2 / ns) diag(C).
  pr <- predict(fit, xnew, se.fit = TRUE)
  expect_true(all(abs(pr$se.fit^2 - diag(C)) < 5 * sqrt(2 / ns) * diag(C)))
})

test_that("k-means++ seeds are distinct training points drawn by squared distance", {
  x <- make_inputs(500, 3, seed = 45)
  withr::local_seed(8)
  km <- sddgp:::svgp_kmeans(x, 40, 0, threads = 2)
  expect_length(unique(km$seeds), 40L)
  expect_true(all(km$seeds >= 1 & km$seeds <= 500))
  expect_identical(km$centres, x[km$seeds, ], ignore_attr = TRUE)
  expect_identical(km$iterations, 0L)
  nearest <- function(x, centres) {
    d2 <- outer(rowSums(x^2), rowSums(centres^2), "+") - 2 * x %*% t(centres)
    list(label = max.col(-d2, ties.method = "first"), dist = pmax(apply(d2, 1, min), 0))
  }
  expect_equal(km$objective, sum(nearest(x, km$centres)$dist), tolerance = 1e-10)

  # The seeding distribution on 4 points of a line: the first seed uniform,
  # the second j with probability (x_j - x_i)^2 / sum_k (x_k - x_i)^2.
  # A chi-square test on the 12 ordered pairs (11 degrees of freedom).
  pts <- matrix(c(0, 1, 3, 7))
  reps <- 3000
  draws <- vapply(seq_len(reps), function(r) {
    sddgp:::svgp_kmeans(pts, 2, 0, threads = 1)$seeds
  }, integer(2))
  observed <- table(factor(paste(draws[1, ], draws[2, ]),
                           levels = c(outer(1:4, 1:4, paste))[-c(1, 6, 11, 16)]))
  D2 <- outer(pts[, 1], pts[, 1], "-")^2
  P <- D2 / rowSums(D2) / 4
  expected <- reps * c(P)[-c(1, 6, 11, 16)]
  expect_lt(sum((observed - expected)^2 / expected), stats::qchisq(0.999, 11))
})

test_that("Lloyd iterations do not increase the k-means objective and end at cluster means", {
  x <- make_inputs(2000, 2, seed = 46)  # more than one chunk of 1024 points
  withr::local_seed(9)
  km <- sddgp:::svgp_kmeans(x, 30, 200, threads = 2)
  obj <- km$objective
  expect_length(obj, km$iterations + 1L)
  expect_gt(km$iterations, 1L)
  expect_lt(km$iterations, 200L)  # converged: no point changed cluster
  # Non-increasing, up to the rounding of sums of 2000 terms.
  expect_true(all(diff(obj) <= 1e-12 * obj[-1]))
  expect_lt(obj[length(obj)], obj[1])
  d2 <- outer(rowSums(x^2), rowSums(km$centres^2), "+") - 2 * x %*% t(km$centres)
  label <- max.col(-d2, ties.method = "first")
  expect_equal(obj[length(obj)], sum(pmax(apply(d2, 1, min), 0)), tolerance = 1e-10)
  means <- apply(x, 2, function(col) tapply(col, factor(label, levels = 1:30), mean))
  expect_equal(km$centres, means, tolerance = 1e-12, ignore_attr = TRUE)
  # The same bits with one thread.
  withr::local_seed(9)
  expect_identical(sddgp:::svgp_kmeans(x, 30, 200, threads = 1), km)
})

test_that("refining the inducing points raises the ELBO", {
  d <- make_data(250, 2, seed = 47)
  ker <- matern(3/2, c(0.3, 0.4), 1)
  withr::local_seed(10)
  fit0 <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, standardize = FALSE,
                 control = svgp_control(inducing = 10))
  withr::local_seed(10)
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, standardize = FALSE,
                control = svgp_control(inducing = 10, optimize_inducing = 15,
                                       learning_rate = 0.05))
  tr <- fit$trace
  expect_equal(fit$status, "iterations")
  expect_identical(fit$iterations, 15L)
  expect_identical(tr$iteration, 0:15)
  expect_true(all(is.na(tr$residual)))
  # The same k-means start, then a clearly better bound; the fit keeps the
  # best iterate.
  expect_equal(tr$elbo[1], fit0$state$elbo, tolerance = 1e-12)
  expect_gt(fit$state$elbo, fit0$state$elbo + 1)
  expect_equal(fit$state$elbo, max(tr$elbo))
  # The refined fit is the closed form at its inducing points.
  ref <- ref_svgp(d$x, d$y, fit$state$inducing, d$x[1:5, ], "matern32", c(0.3, 0.4), 1,
                  0.05, 1e-6)
  expect_equal(fit$state$elbo, ref$elbo, tolerance = 1e-10)
  expect_lt(max_rel_err(predict(fit, d$x[1:5, ]), ref$mean), 1e-8)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(fit))
  expect_message(plot(fit0, which = "trace"), "No convergence trace")
})

test_that("identical seeds give identical SVGP fits for 1 and 2 threads", {
  # Large enough that k-means' assignments, the BLAS splits and the gradient's
  # pairwise sums all run threaded.
  d <- make_data(1500, 10, seed = 48)
  ker <- matern(3/2, 2, 1)
  fit_with <- function(threads) {
    withr::local_seed(11)
    gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, samples = 3, threads = threads,
           control = svgp_control(inducing = 320, optimize_inducing = 2))
  }
  f1 <- fit_with(1)
  f2 <- fit_with(2)
  expect_identical(f1$alpha, f2$alpha)
  expect_identical(f1$alpha_samples, f2$alpha_samples)
  expect_identical(f1$state, f2$state)
  expect_identical(f1$trace$elbo, f2$trace$elbo)
})

test_that("predict() and simulate() work for SVGP fits; new samples need no refit", {
  d <- make_data(200, 2, seed = 49)
  ker <- matern(3/2, c(0.3, 0.5), 1)
  withr::local_seed(12)
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, samples = 6,
                control = svgp_control(inducing = 30))
  expect_s3_class(fit, "sddgp")
  expect_output(print(fit), "sparse variational GP")
  expect_output(print(summary(fit)), "0 iterations \\(exact\\)")
  xnew <- make_inputs(7, 2)
  pr <- predict(fit, xnew, se.fit = TRUE, interval = "prediction")
  expect_equal(dim(pr$fit), c(7L, 3L))
  expect_true(all(is.finite(pr$se.fit) & pr$se.fit > 0))
  expect_true(all(pr$fit[, "lwr"] < pr$fit[, "fit"] & pr$fit[, "fit"] < pr$fit[, "upr"]))
  s1 <- simulate(fit, nsim = 6, newdata = xnew, stored = TRUE)
  expect_equal(dim(s1), c(7L, 6L))
  # Stored samples: mean + f0 - basis alpha_s, by hand.
  sc <- fit$scaling
  xs <- sddgp:::standardize_inputs(xnew, sc)
  z <- fit$basis$x
  Kxz <- ref_kernel(xs, z, "matern32", c(0.3, 0.5), 1)
  by_hand <- sc$y_center + sc$y_scale *
    (drop(Kxz %*% fit$alpha) + sddgp:::prior_values(fit$prior, fit$kernel, xs, 2) -
       Kxz %*% fit$alpha_samples)
  expect_equal(as.matrix(s1), by_hand, tolerance = 1e-10, ignore_attr = TRUE)
  # New samples with a seed: reproducible, different for another seed.
  s2 <- simulate(fit, nsim = 20, seed = 1, newdata = xnew)
  expect_identical(simulate(fit, nsim = 20, seed = 1, newdata = xnew), s2)
  expect_false(identical(simulate(fit, nsim = 20, seed = 2, newdata = xnew), s2))
  # The state alone suffices: a problem without data cannot be refitted.
  prior <- sddgp:::draw_prior(fit$kernel, 2L, 100L, 3L)
  sol <- sddgp:::solve_svgp(list(has_mean = FALSE, kernel = fit$kernel, prior = prior),
                            fit$control, threads = 2, state = fit$state)
  expect_equal(dim(sol$alpha), c(30L, 3L))
  expect_identical(sol$state, fit$state)
})

test_that("a singular inducing kernel matrix and non-finite values are reported", {
  # 30 points within 1e-4 length scales under the squared exponential
  # kernel: Kmm is numerically of rank one or two; without jitter Cholesky
  # fails.
  x <- matrix(withr::with_seed(13, runif(30, 0, 1e-4)))
  y <- withr::with_seed(14, rnorm(30))
  expect_error(gp_sdd(x, y, kernel = squared_exponential(1, 1), noise = 0.1,
                      standardize = FALSE, control = svgp_control(jitter = 0)),
               class = "sddgp_error_numerical", regexp = "Increase `jitter`")
  # The default jitter makes it positive definite.
  expect_s3_class(gp_sdd(x, y, kernel = squared_exponential(1, 1), noise = 0.1,
                         standardize = FALSE, control = svgp_control()), "sddgp")
  # A non-finite bound is an error, never a NaN fit.
  d <- make_data(50, 1)
  yy <- d$y
  yy[3] <- NaN
  p <- test_problem(d$x, matern(3/2, 0.3, 1), 0.1, matrix(yy))
  expect_error(sddgp:::svgp_fit(p, svgp_control(inducing = 10), threads = 2),
               class = "sddgp_error_divergence", regexp = "SVGP diverged")
})

test_that("Ctrl-C stops a long SVGP fit promptly and leaves R usable", {
  skip_on_cran()
  skip_if_not_installed("callr")
  # 1500 inducing points for 20000 data take tens of seconds.
  expect_prompt_interrupt(20000, 2, svgp_control(inducing = 1500),
                          "SVGP interrupted by the user")
})
