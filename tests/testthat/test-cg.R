# Conjugate gradients: cg_control() (defaults, validation), the pivoted
# Cholesky factor of the preconditioner against a base-R implementation,
# CG against the dense solve(), per-column stopping, the preconditioner's
# effect, breakdown, determinism, and fits with predict() and simulate();
# the Vecchia preconditioner against a base-R construction of its factor.

# The raw C result (per-column residual trace) for a problem.
cg_raw <- function(problem, control, threads = 2L) {
  .Call(sddgp:::C_cg_solve, problem$xs, sddgp:::kernel_spec(problem$kernel),
        problem$noise, problem$rhs,
        sddgp:::cg_settings(control, nrow(problem$x),
                            sddgp:::cg_preconditioner(control$preconditioner, problem$kernel)),
        threads)
}

# Greedy pivoted Cholesky of a dense matrix A, straight from the definition:
# pivot on the largest remaining diagonal (first on ties), subtract the
# projection on the previous columns, and track the remaining trace.
ref_pivchol <- function(A, rank) {
  n <- nrow(A)
  d <- diag(A)
  L <- matrix(0, n, rank)
  pivots <- integer(rank)
  trace <- numeric(rank)
  used <- logical(n)
  for (m in seq_len(rank)) {
    i <- which.max(ifelse(used, -Inf, d))
    prev <- seq_len(m - 1L)
    col <- (A[, i] - L[, prev, drop = FALSE] %*% L[i, prev]) / sqrt(d[i])
    col[used] <- 0
    L[, m] <- col
    used[i] <- TRUE
    pivots[m] <- i
    d <- ifelse(used, 0, d - col^2)
    trace[m] <- sum(abs(d)) / sum(diag(A))
  }
  list(L = L, pivots = pivots, trace = trace)
}

true_residual <- function(A, alpha, b) {
  sqrt(colSums((A %*% alpha - b)^2)) / sqrt(colSums(b^2))
}

test_that("cg_control() has its documented defaults", {
  ctl <- cg_control()
  expect_s3_class(ctl, c("sddgp_control_cg", "sddgp_control"))
  expect_equal(ctl$solver, "cg")
  expect_null(ctl$tolerance)  # chosen from the noise (solve_tolerance())
  expect_identical(ctl$max_iterations, 1000L)
  expect_equal(ctl$preconditioner, "auto")
  expect_identical(ctl$rank, 100L)
  expect_equal(ctl$jitter, 0)
  expect_identical(ctl$neighbours, 100L)
  expect_identical(ctl$features, 2000L)
  expect_equal(ctl$cache, "auto")
  expect_equal(ctl$cache_limit, 2e9)
  expect_equal(ctl$time_limit, Inf)
  # Every setting given is kept, with whole numbers stored as integers.
  given <- list(tolerance = 0, max_iterations = 5, time_limit = 30, preconditioner = "none", rank = 7,
                jitter = 1, neighbours = 3, features = 10, cache = "never")
  ctl2 <- do.call(cg_control, given)
  for (name in names(given)) expect_equal(ctl2[[name]], given[[name]], label = name)
  for (name in c("max_iterations", "rank", "neighbours", "features")) {
    expect_type(ctl2[[name]], "integer")
  }
  expect_output(print(cg_control()),
                "Settings of solver \"cg\" \\(preconditioned conjugate gradients\\)")
  expect_output(print(cg_control()), "preconditioner +auto\n  rank +100\n")
})

test_that("every cg_control() argument is validated with a classed error", {
  bad <- list(
    tolerance = list(-1e-3, 1, 2, NA, "0.01", Inf, c(0.1, 0.2)),
    max_iterations = list(0, -5, 2.5, NA, "100", Inf, 2^31),
    time_limit = list(0, -1, NA, "60", c(1, 2), -Inf),
    preconditioner = list("jacobi", NA, 1, TRUE, c("none", "pivoted_cholesky", "x")),
    rank = list(0, -1, 10.5, NA, "100", 2^31),
    neighbours = list(0, -1, 2.5, NA, "30", 1001),
    jitter = list(-1, NA, Inf, "1", c(1, 2)),
    features = list(0, 10.5, NA, 2e6),
    cache = list("sometimes", NA, TRUE),
    cache_limit = list(-1, NA, "1e9", Inf),
    precision = list("half", NA, 1)
  )
  for (arg in names(bad)) {
    for (value in bad[[arg]]) {
      args <- stats::setNames(list(value), arg)
      expect_error(do.call(cg_control, args), class = "sddgp_error_argument",
                   regexp = paste0("`", arg, "`"), label = paste(arg, "=", deparse(value)))
    }
  }
  expect_error(cg_control(preconditioner = "jacobi"), regexp = paste0(
    "`preconditioner` must be one of \"auto\", \"vecchia\", \"pivoted_cholesky\", \"none\", not",
    " \"jacobi\""))
  expect_error(cg_control(cache = "x"),
               regexp = "`cache` must be one of \"auto\", \"always\", \"never\"")
  expect_error(cg_control(tolerance = 1), regexp = "`tolerance` must lie in \\[0, 1\\)")
  expect_error(cg_control(rank = 2.5), regexp = "`rank` must be a whole number")
  expect_silent(cg_control(tolerance = 0, max_iterations = 1, rank = 1, jitter = 0,
                           features = 1, cache_limit = 0))
  expect_error(cg_control(iterations = 10), "unused argument")
  # gp_sdd() accepts it for solver "cg" only.
  d <- make_data(20, 1)
  expect_error(gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.1,
                      solver = "sdd", control = cg_control()),
               class = "sddgp_error_argument", regexp = "use sdd_control\\(\\)")
})

test_that("cg_settings() caps the rank at n and encodes 'none' as rank 0 and no neighbours", {
  settings <- function(control, n, pc = control$preconditioner) {
    sddgp:::cg_settings(control, n, pc)
  }
  r <- settings(cg_control(rank = 500), n = 300, "pivoted_cholesky")
  expect_identical(r$rank, 300L)
  expect_identical(r$neighbours, 0L)
  expect_true(r$use_cache)
  expect_identical(settings(cg_control(), 300, "pivoted_cholesky")$rank, 100L)
  expect_identical(settings(cg_control(preconditioner = "none"), 300)$rank, 0L)
  expect_identical(settings(cg_control(preconditioner = "none"), 300)$neighbours, 0L)
  # Vecchia's: neighbours capped at n - 1 (its exact factor), no rank.
  v <- settings(cg_control(preconditioner = "vecchia", neighbours = 500), 300)
  expect_identical(v$neighbours, 299L)
  expect_identical(v$rank, 0L)
  expect_identical(settings(cg_control(preconditioner = "vecchia"), 1)$neighbours, 1L)
  # The cache budget is 8 n^2 bytes, as for SDD.
  expect_true(settings(cg_control(cache_limit = 8e4), 100, "none")$use_cache)
  expect_false(settings(cg_control(cache_limit = 8e4 - 1), 100, "none")$use_cache)
  expect_false(settings(cg_control(cache = "never"), 100, "none")$use_cache)
})

test_that("\"auto\" resolves to Vecchia's preconditioner, or the pivoted Cholesky one for Tanimoto", {
  pc <- sddgp:::cg_preconditioner
  matern <- list(family = "matern32")
  tan <- list(family = "tanimoto")
  expect_identical(pc("auto", matern), "vecchia")
  expect_identical(pc("auto", tan), "pivoted_cholesky")
  for (p in c("vecchia", "pivoted_cholesky", "none")) expect_identical(pc(p, matern), p)
  for (p in c("pivoted_cholesky", "none")) expect_identical(pc(p, tan), p)
  expect_error(pc("vecchia", tan, "estimation"), class = "sddgp_error_argument",
               regexp = "`estimation`.*Tanimoto")
})

test_that("cg_settings() holds exactly the fields of cg_options that R sets and the operator's", {
  expect_named(sddgp:::cg_settings(cg_control(), 100, "vecchia"),
               c("tolerance", "max_iterations", "time_limit", "alpha0", "rank", "jitter",
                 "neighbours", "use_cache", "precision"))
})

test_that("the full-rank pivoted Cholesky factor reproduces K + jitter I", {
  d <- make_data(60, 2, seed = 101)
  ker <- matern(5/2, c(0.3, 0.4), 1.3)
  xs <- sddgp:::scale_inputs(d$x, ker)
  A <- ref_kernel(d$x, d$x, "matern52", c(0.3, 0.4), 1.3) + diag(0.5, 60)
  pc <- sddgp:::pivoted_cholesky(xs, ker, rank = 60, jitter = 0.5, rel_tol = 0,
                                 cache = FALSE, threads = 2L)
  expect_equal(dim(pc$L), c(60L, 60L))
  expect_setequal(pc$pivots, 1:60)
  # A complete factorisation: exact up to rounding (entries are O(1), n = 60).
  expect_lt(max(abs(tcrossprod(pc$L) - A)), 1e-10)
  # Lower triangular in pivot order.
  expect_true(all(pc$L[pc$pivots, ][upper.tri(diag(60))] == 0))
  # Asking for more than n columns gives n.
  expect_equal(ncol(sddgp:::pivoted_cholesky(xs, ker, 100, 0.5, 0, FALSE, 2L)$L), 60L)
})

test_that("a low-rank pivoted Cholesky factor follows the greedy largest-diagonal rule", {
  d <- make_data(150, 3, seed = 102)
  ls <- c(0.4, 0.5, 0.6)
  ker <- matern(3/2, ls, 1)
  xs <- sddgp:::scale_inputs(d$x, ker)
  for (jitter in c(1, 1e-3)) {
    A <- ref_kernel(d$x, d$x, "matern32", ls, 1) + diag(jitter, 150)
    ref <- ref_pivchol(A, 25)
    pc <- sddgp:::pivoted_cholesky(xs, ker, 25, jitter, 0, FALSE, 2L)
    expect_identical(pc$pivots, ref$pivots)
    # The same arithmetic in a different order: agreement to rounding.
    expect_lt(max(abs(pc$L - ref$L)), 1e-12)
    expect_equal(pc$trace, ref$trace, tolerance = 1e-12)
    # The remaining trace falls at every step and stays >= 0.
    expect_true(all(diff(pc$trace) < 0))
    expect_gt(min(pc$trace), 0)
    # LAPACK's pivoted Cholesky (dpstrf) uses the same greedy rule.
    lapack_pivots <- attr(suppressWarnings(chol(A, pivot = TRUE)), "pivot")
    expect_identical(pc$pivots, lapack_pivots[1:25])
    # K + jitter I - L L' is positive semi-definite (a Schur complement).
    expect_gt(min(eigen(A - tcrossprod(pc$L), symmetric = TRUE,
                        only.values = TRUE)$values), -1e-10)
  }
})

test_that("the pivoted Cholesky factor stops once the remaining trace is small", {
  # A long length scale and no jitter: K is numerically of low rank, so the
  # remaining trace falls below 1e-3 long before rank 100.
  d <- make_data(200, 2, seed = 103)
  ker <- squared_exponential(2, 1)
  xs <- sddgp:::scale_inputs(d$x, ker)
  pc <- sddgp:::pivoted_cholesky(xs, ker, 100, 0, 1e-3, FALSE, 2L)
  k <- length(pc$pivots)
  expect_lt(k, 20L)
  expect_lte(pc$trace[k], 1e-3)
  expect_gt(pc$trace[k - 1L], 1e-3)
  A <- ref_kernel(d$x, d$x, "se", 2, 1)
  expect_equal(pc$trace[k], sum(diag(A - tcrossprod(pc$L))) / 200, tolerance = 1e-6)
  # The same factor from the cached kernel matrix and with one thread.
  expect_identical(sddgp:::pivoted_cholesky(xs, ker, 100, 0, 1e-3, TRUE, 2L), pc)
  expect_identical(sddgp:::pivoted_cholesky(xs, ker, 100, 0, 1e-3, FALSE, 1L), pc)
})

test_that("CG matches the dense solve for many right-hand sides and heteroscedastic noise", {
  d <- make_data(300, 2, seed = 104)
  ls <- c(0.2, 0.3)
  ker <- matern(3/2, ls, 1)
  noise <- withr::with_seed(1, runif(300, 0.05, 0.3))
  rhs <- cbind(d$y, withr::with_seed(2, matrix(rnorm(300 * 5), 300)))
  A <- ref_kernel(d$x, d$x, "matern32", ls, 1) + diag(noise)
  exact <- solve(A, rhs)
  ev <- eigen(A, symmetric = TRUE, only.values = TRUE)$values
  # ||error|| / ||alpha|| <= cond(A) * relative residual: with cond(A) below
  # 1e3 here, a residual of 1e-12 bounds the error by 1e-9.
  expect_lt(ev[1] / ev[300], 1e3)
  problem <- test_problem(d$x, ker, noise, rhs)
  for (pc in c("pivoted_cholesky", "none", "vecchia")) {
    for (jitter in c(1, 0.1)) {
      if (pc != "pivoted_cholesky" && jitter != 1) next
      fit <- sddgp:::run_solver("cg", problem,
                                cg_control(tolerance = 1e-12, preconditioner = pc,
                                           jitter = jitter), threads = 2)
      expect_equal(fit$status, "tolerance")
      for (j in 1:6) expect_lt(max_rel_err(fit$alpha[, j], exact[, j]), 1e-8)
      expect_true(all(true_residual(A, fit$alpha, rhs) < 1e-11))
      expect_null(fit$state)
      expect_null(fit$basis)
      expect_equal(nrow(fit$trace), fit$iterations)
      expect_equal(fit$trace$iteration, seq_len(fit$iterations))
      expect_lte(fit$trace$residual[fit$iterations], 1e-12)
    }
  }
})

test_that("with a full-rank factor and no jitter the preconditioner is the system itself", {
  # Then P = diag(noise) + L L' = K + diag(noise) up to rounding, and PCG
  # converges in one step: a check of the Woodbury solve with a general
  # (heteroscedastic) diagonal.  A rough kernel keeps the remaining trace
  # above the 1e-3 early stop until the factor is complete.
  d <- make_data(60, 2, seed = 111)
  ker <- matern(1/2, 0.1, 1)
  noise <- withr::with_seed(5, runif(60, 0.01, 0.5))
  pc <- sddgp:::pivoted_cholesky(sddgp:::scale_inputs(d$x, ker), ker, 60, 0, 1e-3,
                                 FALSE, 1L)
  expect_length(pc$pivots, 60L)
  rhs <- cbind(d$y, withr::with_seed(6, matrix(rnorm(120), 60)))
  fit <- sddgp:::run_solver("cg", test_problem(d$x, ker, noise, rhs),
                            cg_control(tolerance = 1e-10, preconditioner = "pivoted_cholesky",
                                       rank = 60, jitter = 0), 1)
  expect_identical(fit$iterations, 1L)
  A <- ref_kernel(d$x, d$x, "matern12", 0.1, 1) + diag(noise)
  expect_true(all(true_residual(A, fit$alpha, rhs) < 1e-10))
})

test_that("each column stops on its own and every final residual meets the tolerance", {
  d <- make_data(250, 2, seed = 105)
  ls <- c(0.3, 0.3)
  ker <- matern(5/2, ls, 1)
  noise <- rep(c(0.02, 0.05), length.out = 250)
  A <- ref_kernel(d$x, d$x, "matern52", ls, 1) + diag(noise)
  # An eigenvector of A is solved exactly by the first CG step (its Krylov
  # space has dimension 1); a zero column needs no step at all.
  v <- eigen(A, symmetric = TRUE)$vectors[, 1]
  rhs <- cbind(d$y, v, withr::with_seed(3, matrix(rnorm(250 * 3), 250)), 0)
  tol <- 1e-6
  problem <- test_problem(d$x, ker, noise, rhs)
  res <- cg_raw(problem, cg_control(tolerance = tol, preconditioner = "none"))
  expect_equal(res$status, 1L)
  r <- res$trace$residuals
  expect_equal(nrow(r), res$iterations)
  # The easy column converged at iteration 1 and was frozen from then on;
  # the others needed many more iterations.
  expect_lte(r[1, 2], tol)
  expect_true(all(r[, 2] == r[1, 2]))
  expect_gt(res$iterations, 20L)
  first_below <- apply(r <= tol, 2, function(b) which(b)[1])
  expect_equal(first_below[2], 1L)
  # Every column stays frozen once below the tolerance.
  for (j in seq_len(ncol(r))) {
    expect_true(all(r[first_below[j]:nrow(r), j] == r[first_below[j], j]))
  }
  expect_true(all(r[, 6] == 0))
  expect_true(all(res$alpha[, 6] == 0))
  # The true residuals, computed here, all meet the tolerance.
  expect_true(all(true_residual(A, res$alpha[, 1:5], rhs[, 1:5]) <= tol))
  expect_equal(res$alpha[, 2], v / eigen(A, symmetric = TRUE, only.values = TRUE)$values[1],
               tolerance = 1e-10)
  # solver_trace(): the mean's residual and the RMS over the sample columns.
  tr <- sddgp:::run_solver("cg", problem, cg_control(tolerance = tol,
                                                     preconditioner = "none"), 2)$trace
  expect_equal(tr$residual, r[, 1])
  expect_equal(tr$residual_samples, sqrt(rowMeans(r[, -1]^2)))
})

test_that("max_iterations stops with status 'iterations'; tolerance 0 runs them all", {
  d <- make_data(200, 2, seed = 106)
  ker <- matern(3/2, 0.3, 1)
  problem <- test_problem(d$x, ker, 0.01, cbind(d$y))
  fit <- sddgp:::run_solver("cg", problem, cg_control(tolerance = 0.001, max_iterations = 3,
                                                      preconditioner = "pivoted_cholesky"), 2)
  expect_equal(fit$status, "iterations")
  expect_identical(fit$iterations, 3L)
  expect_equal(fit$trace$iteration, 1:3)
  expect_true(all(fit$trace$residual > 0.001))
  fit0 <- sddgp:::run_solver("cg", problem, cg_control(tolerance = 0, max_iterations = 40,
                                                       preconditioner = "pivoted_cholesky"), 2)
  expect_equal(fit0$status, "iterations")
  expect_identical(fit0$iterations, 40L)
  # The first 3 iterations are the same in both runs.
  expect_identical(fit0$trace$residual[1:3], fit$trace$residual)
})

test_that("time_limit stops CG after the iteration under way, with its iterate and a warning", {
  d <- make_data(1000, 3, seed = 116)
  ker <- matern(3/2, c(0.2, 0.3, 0.4), 1)
  run <- function(...) {
    withr::with_seed(3, gp_sdd(d$x, d$y, kernel = ker, noise = 1e-3, standardize = FALSE,
                               solver = "cg", threads = 1,
                               control = cg_control(tolerance = 1e-8, ...)))
  }
  expect_warning(fit <- run(time_limit = 1e-9), class = "sddgp_warning_not_converged",
                 regexp = "at its time limit of 1e-09 s after 1 iteration")
  expect_equal(fit$status, "time limit")
  expect_identical(fit$iterations, 1L)
  expect_output(print(fit), "(time limit)", fixed = TRUE)
  # A finite limit leaves the fitted values to fitted().
  expect_null(fit$fitted.values)
  # It is the run of one iteration, to the bit, and the trace ends with its
  # true relative residual (base R), which Vecchia's first step (100
  # neighbours) has cut to below a fifth.
  one <- suppressWarnings(run(max_iterations = 1))
  expect_equal(one$status, "iterations")
  expect_identical(one$alpha, fit$alpha)
  A <- ref_kernel(d$x, d$x, "matern32", c(0.2, 0.3, 0.4), 1) + diag(1e-3, 1000)
  r <- true_residual(A, cbind(fit$alpha), cbind(d$y))
  expect_equal(fit$trace$residual[nrow(fit$trace)], r, tolerance = 1e-6)
  expect_lt(r, 0.2)
  expect_equal(unname(fitted(fit)), drop(A %*% fit$alpha - 1e-3 * fit$alpha),
               tolerance = 1e-8)
})

test_that("the pivoted Cholesky preconditioner cuts the iterations on an ill-conditioned problem", {
  # Small noise and a long length scale: cond(K + noise I) is about 1e7.
  d <- make_data(500, 2, seed = 107)
  ker <- matern(3/2, 1, 1)
  problem <- test_problem(d$x, ker, 1e-4, cbind(d$y))
  plain <- sddgp:::run_solver("cg", problem,
                              cg_control(tolerance = 1e-3, preconditioner = "none"), 2)
  pivoted <- function(...) cg_control(tolerance = 1e-3, preconditioner = "pivoted_cholesky", ...)
  pre <- sddgp:::run_solver("cg", problem, pivoted(), 2)
  # The reference implementation factors K + I instead of K (jitter 1).
  reference <- sddgp:::run_solver("cg", problem, pivoted(jitter = 1), 2)
  expect_equal(plain$status, "tolerance")
  expect_equal(pre$status, "tolerance")
  expect_lt(pre$iterations * 4, plain$iterations)
  expect_lt(pre$iterations * 2, reference$iterations)
  A <- ref_kernel(d$x, d$x, "matern32", 1, 1) + diag(1e-4, 500)
  expect_lte(true_residual(A, pre$alpha, cbind(d$y)), 1e-3)
})

# Vecchia's factor in base R for the order `order`: each point in turn
# conditioned on its m nearest earlier points (squared distances in xs,
# ties to the earlier position), U[t, t] = 1 / sqrt(v), U[N, t] = -b / sqrt(v).
ref_vecchia <- function(xs, A, order, m) {
  n <- nrow(xs)
  nb <- vector("list", n)
  coef <- vector("list", n)
  scale <- numeric(n)
  for (t in seq_len(n)) {
    i <- order[t]
    earlier <- order[seq_len(t - 1L)]
    N <- integer(0)
    if (t > 1L) {
      d2 <- colSums((t(xs[earlier, , drop = FALSE]) - xs[i, ])^2)
      N <- earlier[order(d2, seq_along(d2))[seq_len(min(m, t - 1L))]]
    }
    b <- if (length(N)) solve(A[N, N, drop = FALSE], A[N, i]) else numeric(0)
    v <- A[i, i] - sum(A[N, i] * b)
    nb[[i]] <- N
    coef[[i]] <- -b / sqrt(v)
    scale[i] <- 1 / sqrt(v)
  }
  list(neighbours = nb, coef = coef, scale = scale)
}

test_that("the Vecchia factor conditions each point on its nearest earlier points", {
  d <- make_data(150, 3, seed = 121)
  ls <- c(0.3, 0.5, 0.8)
  ker <- matern(3/2, ls, 1.2)
  xs <- sddgp:::scale_inputs(d$x, ker)
  noise <- withr::with_seed(7, runif(150, 0.01, 0.2))
  A <- ref_kernel(d$x, d$x, "matern32", ls, 1.2) + diag(noise)
  f <- .Call(sddgp:::C_vecchia_factor, xs, sddgp:::kernel_spec(ker), noise, 10L, 2L)
  # The order is a permutation, not the data's (which may come sorted).
  expect_setequal(f$order, 1:150)
  expect_false(identical(f$order, 1:150))
  ref <- ref_vecchia(xs, A, f$order, 10)
  for (i in 1:150) {
    k <- length(ref$neighbours[[i]])
    expect_identical(sum(!is.na(f$neighbours[, i])), k)
    # The same neighbours, each with its coefficient.
    got <- f$neighbours[seq_len(k), i]
    expect_setequal(got, ref$neighbours[[i]])
    expect_equal(f$coef[seq_len(k), i], ref$coef[[i]][match(got, ref$neighbours[[i]])],
                 tolerance = 1e-10)
  }
  expect_equal(f$scale, ref$scale, tolerance = 1e-10)
  # U U' approximates A^-1: closer with more neighbours, exact with n - 1.
  dense_u <- function(f) {
    U <- diag(f$scale)
    for (i in seq_len(ncol(f$neighbours))) {
      k <- sum(!is.na(f$neighbours[, i]))
      U[f$neighbours[seq_len(k), i], i] <- f$coef[seq_len(k), i]
    }
    U
  }
  err <- function(m) {
    g <- .Call(sddgp:::C_vecchia_factor, xs, sddgp:::kernel_spec(ker), noise, m, 1L)
    U <- dense_u(g)
    norm(U %*% t(U) %*% A - diag(150), "F")
  }
  e <- vapply(c(2L, 10L, 40L, 149L), err, numeric(1))
  expect_true(all(diff(e) < 0))
  expect_lt(e[4], 1e-8)
})

test_that("the Vecchia factor's neighbours are an exhaustive search's, ties included", {
  # Enough points for a k-d tree of many levels; on a grid of 6^3 every
  # point is repeated about 12 times and distances tie everywhere.  The
  # neighbours alone (the estimation stage's) are the factor's.
  n <- 2600
  inputs <- withr::with_seed(125, list(
    grid = matrix(as.numeric(sample(0:5, 3 * n, replace = TRUE)), n),
    continuous = matrix(runif(2 * n), n)))
  for (xs in inputs) {
    f <- .Call(sddgp:::C_vecchia_factor, xs, sddgp:::kernel_spec(matern(3/2, 1, 1)),
               rep(0.1, n), 12L, 2L)
    alone <- .Call(sddgp:::C_vecchia_neighbours, xs, 12L, 2L)
    expect_identical(alone[c("order", "neighbours")], f[c("order", "neighbours")])
    expect_null(alone$coef)
    expected <- matrix(NA_integer_, 12, n)
    for (t in 2:n) {
      i <- f$order[t]
      earlier <- f$order[seq_len(t - 1L)]
      d2 <- colSums((t(xs[earlier, , drop = FALSE]) - xs[i, ])^2)
      # Nearest first, ties to the earlier position.
      expected[seq_len(min(12L, t - 1L)), i] <- earlier[order(d2, seq_along(d2))[seq_len(min(12L, t - 1L))]]
    }
    expect_identical(f$neighbours, expected)
  }
})

test_that("with n - 1 neighbours the Vecchia preconditioner is the exact inverse", {
  d <- make_data(80, 2, seed = 122)
  ker <- matern(5/2, c(0.2, 0.4), 1)
  noise <- withr::with_seed(8, runif(80, 1e-4, 0.05))
  rhs <- cbind(d$y, withr::with_seed(9, matrix(rnorm(160), 80)))
  fit <- sddgp:::run_solver("cg", test_problem(d$x, ker, noise, rhs),
                            cg_control(tolerance = 1e-10, preconditioner = "vecchia",
                                       neighbours = 1000), 1)
  expect_identical(fit$iterations, 1L)
  A <- ref_kernel(d$x, d$x, "matern52", c(0.2, 0.4), 1) + diag(noise)
  expect_true(all(true_residual(A, fit$alpha, rhs) < 1e-10))
})

test_that("the Vecchia preconditioner cuts the iterations where the low-rank one cannot", {
  # Short length scales and small noise: the kernel's spectrum decays
  # slowly, so a rank-100 factor leaves most of the ill-conditioning.
  d <- make_data(600, 3, seed = 123)
  ker <- matern(3/2, c(0.15, 0.2, 0.3), 1)
  problem <- test_problem(d$x, ker, 1e-3, cbind(d$y))
  run <- function(...) sddgp:::run_solver("cg", problem, cg_control(tolerance = 1e-6, ...), 2)
  plain <- run(preconditioner = "none")
  low_rank <- run(preconditioner = "pivoted_cholesky")
  vecchia <- run(preconditioner = "vecchia", neighbours = 30)
  for (fit in list(plain, low_rank, vecchia)) expect_equal(fit$status, "tolerance")
  expect_lt(vecchia$iterations * 4, low_rank$iterations)
  expect_lt(vecchia$iterations * 4, plain$iterations)
  A <- ref_kernel(d$x, d$x, "matern32", c(0.15, 0.2, 0.3), 1) + diag(1e-3, 600)
  expect_equal(drop(vecchia$alpha), solve(A, d$y), tolerance = 1e-4)
})

test_that("the Vecchia preconditioner is bitwise identical for 1 and 2 threads", {
  # Large enough that its build and both sparse products run in parallel.
  d <- make_data(2000, 3, seed = 124)
  ker <- matern(3/2, c(0.3, 0.4, 0.5), 1)
  rhs <- cbind(d$y, withr::with_seed(10, matrix(rnorm(2000 * 29), 2000)))
  problem <- test_problem(d$x, ker, 0.01, rhs)
  ctl <- cg_control(tolerance = 0, max_iterations = 5, preconditioner = "vecchia")
  a <- sddgp:::run_solver("cg", problem, ctl, threads = 1)
  b <- sddgp:::run_solver("cg", problem, ctl, threads = 2)
  expect_identical(a$alpha, b$alpha)
  xs <- sddgp:::scale_inputs(d$x, ker)
  f1 <- .Call(sddgp:::C_vecchia_factor, xs, sddgp:::kernel_spec(ker), rep(0.01, 2000), 50L, 1L)
  f2 <- .Call(sddgp:::C_vecchia_factor, xs, sddgp:::kernel_spec(ker), rep(0.01, 2000), 50L, 2L)
  expect_identical(f1, f2)
})

test_that("the Vecchia preconditioner refuses the Tanimoto kernel with a classed error", {
  x <- matrix(rbinom(40 * 16, 1, 0.4), 40)
  expect_error(gp_sdd(x, rnorm(40), kernel = tanimoto(variance = 1), noise = 0.1,
                      solver = "cg", control = cg_control(preconditioner = "vecchia")),
               class = "sddgp_error_argument", regexp = "`control`.*Tanimoto")
})

test_that("the default preconditioner is Vecchia's, and the pivoted Cholesky one for Tanimoto", {
  d <- make_data(300, 3, seed = 115)
  ker <- matern(3/2, 0.4, 1)
  fit <- function(x, y, kernel, pc) {
    withr::with_seed(5, gp_sdd(x, y, kernel = kernel, noise = 0.01, samples = 2, solver = "cg",
                               control = cg_control(preconditioner = pc, tolerance = 1e-6),
                               threads = 1))
  }
  auto <- fit(d$x, d$y, ker, "auto")
  expect_identical(auto$alpha, fit(d$x, d$y, ker, "vecchia")$alpha)
  x <- matrix(rbinom(120 * 16, 1, 0.4), 120)
  y <- rnorm(120)
  tan <- tanimoto(variance = 1)
  auto <- fit(x, y, tan, "auto")
  expect_identical(auto$alpha, fit(x, y, tan, "pivoted_cholesky")$alpha)
  exact <- gp_sdd(x, y, kernel = tan, noise = 0.01, samples = 0, solver = "cholesky",
                  threads = 1)
  expect_equal(as.numeric(auto$alpha), as.numeric(exact$alpha), tolerance = 1e-4)
})

test_that("breakdown on an indefinite system is reported as divergence, not NaN", {
  d <- make_data(100, 2, seed = 108)
  ker <- matern(3/2, 0.3, 1)
  # Noise far below -lambda_max(K): A is negative definite.
  bad <- test_problem(d$x, ker, -1000, cbind(d$y, 1))
  for (pc in c("none", "pivoted_cholesky", "vecchia")) {
    err <- expect_error(sddgp:::run_solver("cg", bad, cg_control(preconditioner = pc), 2),
                        class = "sddgp_error_divergence",
                        regexp = "CG diverged after 0 iterations.*not numerically positive")
    expect_s3_class(err, "sddgp_error")
  }
  # Mildly indefinite: curvature turns negative only after a few steps.
  ev <- eigen(ref_kernel(d$x, d$x, "matern32", 0.3, 1), symmetric = TRUE,
              only.values = TRUE)$values
  mixed <- test_problem(d$x, ker, -ev[5], cbind(d$y))
  expect_error(sddgp:::run_solver("cg", mixed, cg_control(preconditioner = "none"), 2),
               class = "sddgp_error_divergence")
  # Non-finite right-hand sides.
  nan <- test_problem(d$x, ker, 0.1, cbind(replace(d$y, 3, NaN)))
  expect_error(sddgp:::run_solver("cg", nan, cg_control(), 2),
               class = "sddgp_error_divergence")
})

test_that("CG is bitwise identical for 1 and 2 threads, cached or not", {
  # Sizes at which every threaded loop of an iteration runs in parallel
  # (the kernel product and both Woodbury products); 15 fixed iterations,
  # since on a busy machine each parallel region can wait for a core.
  d <- make_data(400, 3, seed = 109)
  ker <- matern(3/2, c(0.3, 0.4, 0.5), 1)
  rhs <- cbind(d$y, withr::with_seed(4, matrix(rnorm(400 * 29), 400)))
  problem <- test_problem(d$x, ker, 0.05, rhs)
  for (pc in c("pivoted_cholesky", "none")) {
    ctl <- function(cache) {
      cg_control(tolerance = 0, max_iterations = 15, preconditioner = pc, cache = cache)
    }
    a <- sddgp:::run_solver("cg", problem, ctl("never"), threads = 1)
    b <- sddgp:::run_solver("cg", problem, ctl("never"), threads = 2)
    c <- sddgp:::run_solver("cg", problem, ctl("always"), threads = 1)
    expect_identical(a$iterations, 15L)
    expect_identical(a$alpha, b$alpha)
    expect_identical(a$alpha, c$alpha)
    expect_identical(a$trace$residual, b$trace$residual)
    expect_identical(a$trace$residual, c$trace$residual)
  }
})

test_that("gp_sdd(solver = 'cg') fits, predicts with standard errors and simulates", {
  d <- make_data(120, 2, seed = 110)
  ker <- matern(3/2, c(0.4, 0.6), 1)
  xt <- make_inputs(7, 2)
  fit_with <- function(solver, control = NULL) {
    withr::with_seed(11, gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, solver = solver,
                                control = control, samples = 6))
  }
  cg <- fit_with("cg", cg_control(tolerance = 1e-10))
  ch <- fit_with("cholesky")
  expect_s3_class(cg, "sddgp")
  expect_equal(cg$solver, "cg")
  expect_equal(cg$status, "tolerance")
  expect_gt(cg$iterations, 0L)
  # The same prior draws (neither solver uses the random state), so CG's
  # samples and standard errors match the exact solver's; the residual of
  # 1e-10 and cond(A) < 1e4 bound the relative error by 1e-6.
  expect_equal(cg$alpha, ch$alpha, tolerance = 1e-6)
  expect_equal(cg$alpha_samples, ch$alpha_samples, tolerance = 1e-6)
  pc <- predict(cg, xt, se.fit = TRUE, interval = "prediction")
  ph <- predict(ch, xt, se.fit = TRUE, interval = "prediction")
  expect_equal(pc$fit, ph$fit, tolerance = 1e-6)
  expect_equal(pc$se.fit, ph$se.fit, tolerance = 1e-6)
  expect_true(all(pc$se.fit > 0))
  expect_equal(simulate(cg, nsim = 4, newdata = xt, stored = TRUE),
               simulate(ch, nsim = 4, newdata = xt, stored = TRUE),
               tolerance = 1e-6)
  # New samples with a seed: solved again by CG, reproducible, and equal to
  # the exact solver's draws for the same seed.
  s1 <- simulate(cg, nsim = 3, seed = 5, newdata = xt)
  expect_identical(s1, simulate(cg, nsim = 3, seed = 5, newdata = xt))
  expect_equal(s1, simulate(ch, nsim = 3, seed = 5, newdata = xt), tolerance = 1e-6)
  expect_equal(attr(s1, "seed"), 5, ignore_attr = TRUE)
  expect_false(isTRUE(all.equal(s1, simulate(cg, nsim = 3, seed = 6, newdata = xt))))
  # The default control, through `solver` alone.
  expect_equal(gp_sdd(d$x, d$y, kernel = ker, noise = 0.05, solver = "cg")$control,
               cg_control())
})

test_that("Ctrl-C stops a long CG fit promptly and leaves R usable", {
  skip_on_cran()
  skip_if_not_installed("callr")
  # 20000 points, no cache and no tolerance stop: one kernel product takes
  # seconds, so this checks the polling between slabs of a product.
  expect_prompt_interrupt(20000, 2, cg_control(tolerance = 0, cache = "never",
                                                preconditioner = "none"),
                          "CG interrupted by the user after [0-9]+ iterations")
})

test_that("CG in single precision reaches the exact solution to float accuracy", {
  d <- make_data(500, d = 2, seed = 21)
  ker <- matern(5 / 2, lengthscale = 0.3, variance = 0.8)
  exact <- ref_posterior(d$x, d$y, d$x[1:50, ], "matern52", 0.3, 0.8, 0.02)
  fits <- lapply(c("always", "never"), function(cache) {
    gp_sdd(d$x, d$y, kernel = ker, noise = 0.02, solver = "cg", standardize = FALSE,
           control = cg_control(tolerance = 1e-10, max_iterations = 2000,
                                precision = "single", cache = cache))
  })
  err <- max(abs(fits[[1]]$alpha - exact$alpha)) / max(abs(exact$alpha))
  expect_lt(err, 1e-4)
  expect_gt(err, 1e-10)
  expect_identical(fits[[1]]$alpha, fits[[2]]$alpha)
  expect_error(cg_control(precision = "float"), class = "sddgp_error_argument",
               regexp = "`precision`")
  # The preconditioner's factor from float kernel values: the same pivots
  # and a factor within float accuracy of the double one.
  xs <- sddgp:::scale_inputs(d$x, ker)
  pd <- sddgp:::pivoted_cholesky(xs, ker, 30, 0.01, 0, FALSE, 2L)
  ps <- sddgp:::pivoted_cholesky(xs, ker, 30, 0.01, 0, FALSE, 2L, precision = "single")
  expect_identical(ps$pivots, pd$pivots)
  expect_lt(max(abs(ps$L - pd$L)), 1e-5)
  expect_gt(max(abs(ps$L - pd$L)), 0)
})

