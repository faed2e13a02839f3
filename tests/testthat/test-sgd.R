# solver = "sgd" (Lin et al. 2023) and the gradient estimators of the SDD
# paper's ablations, which all run in SDD's loop (src/sdd.c): R
# re-implementations of the deterministic recursions, the documented
# single-step formulas of the stochastic estimators, convergence to dense
# solves, predict()/simulate(), thread-count determinism and classed
# errors.  The loop's trace metrics: test-sdd_loop.R.

# 60 points on a jittered grid two length scales apart: K is well
# conditioned, so even the primal objective (condition number that of
# K (K + noise I), the square of the dual's) converges in a few hundred
# full-batch steps.
grid_problem <- function(k = 3, seed = 1) {
  withr::with_seed(seed, {
    x <- as.matrix(expand.grid(0:9, 0:5)) * 0.2 + matrix(stats::runif(120, 0, 0.06), 60)
    colnames(x) <- c("x1", "x2")
    rhs <- cbind(sin(3 * x[, 1]) + x[, 2]^2 + stats::rnorm(60, sd = 0.1),
                 matrix(stats::rnorm(60 * (k - 1)), 60))
  })
  K <- ref_kernel(x, x, "matern32", 0.1, 1)
  list(x = x, rhs = rhs, K = K, A = K + diag(0.4, 60), kernel = matern(3/2, 0.1, 1),
       problem = test_problem(x, matern(3/2, 0.1, 1), 0.4, rhs))
}

# Every iterate of optax's Nesterov recursion m <- g + rho m,
# a <- a - lr (g + rho m) from a = m = 0, with the gradient grad(a) and one
# step size (and optional L2 norm cap) per column.
ref_iterates <- function(grad, a0, steps, lr, rho, clip = NULL) {
  a <- m <- a0
  out <- vector("list", steps)
  for (t in seq_len(steps)) {
    g <- grad(a)
    for (j in seq_along(clip)) {
      norm <- sqrt(sum(g[, j]^2))
      if (clip[j] > 0 && norm > clip[j]) g[, j] <- g[, j] * clip[j] / norm
    }
    m <- g + rho * m
    a <- a - sweep(g + rho * m, 2L, lr, "*")
    out[[t]] <- a
  }
  out
}

ref_geometric <- function(iterates, r) {
  ab <- 0 * iterates[[1L]]
  for (a in iterates) ab <- r * a + (1 - r) * ab
  ab
}

# Relative error of predictions at the training inputs, ||K (a - b)|| / ||K b||.
pred_err <- function(K, a, b) sqrt(sum((K %*% (a - b))^2) / sum((K %*% b)^2))

test_that("full-batch dual and primal descent follow their recursions step by step", {
  g <- grid_problem()
  n <- 60
  lr <- c(20, 15, 15)
  rho <- 0.9
  dual <- function(a) (g$A %*% a - g$rhs) / n
  primal <- function(a) g$K %*% (g$A %*% a - g$rhs) / n
  it_dual <- ref_iterates(dual, 0 * g$rhs, 6, lr, rho)
  it_primal <- ref_iterates(primal, 0 * g$rhs, 6, lr / 4, rho)
  run <- function(..., iterations = 6) {
    withr::local_seed(1)
    sddgp:::run_solver("sdd", g$problem, sdd_control(tolerance = 0, iterations = iterations, step_size = 20,
                                                     step_size_samples = 15,
                                                     warm_start = "none", ...),
                       threads = 1)$alpha
  }
  # A batch of at least n is the exact gradient, whatever the sampling:
  # SDD, and the estimator that subsamples only K alpha, are then full-batch
  # dual descent. The recursions agree to rounding (different operation
  # order), far below the 1e-12 tolerance's scale of |alpha| ~ 1.
  for (est in c("coordinates", "coordinates_kalpha")) {
    expect_equal(run(batch_size = 1000, estimator = est, averaging_rate = 0.3),
                 ref_geometric(it_dual, 0.3), tolerance = 1e-12)
  }
  expect_equal(run(batch_size = 60, batch_sampling = "permutation", averaging = "none"),
               it_dual[[6]], tolerance = 1e-12)
  # Arithmetic averaging is the plain mean of the iterates from the start on.
  expect_equal(run(batch_size = 60, averaging = "arithmetic", averaging_start = 3),
               Reduce(`+`, it_dual[3:6]) / 4, tolerance = 1e-12)
  expect_equal(run(batch_size = 60, averaging = "arithmetic"),
               Reduce(`+`, it_dual) / 6, tolerance = 1e-12)
  # The primal objective's gradient K ((K + noise I) alpha - b) / n.
  withr::local_seed(1)
  pr <- sddgp:::run_solver("sdd", g$problem, sdd_control(
    tolerance = 0, iterations = 6, objective = "primal", batch_size = 60, step_size = 5,
    step_size_samples = 3.75, averaging_rate = 0.3, warm_start = "none"), threads = 1)
  expect_equal(pr$alpha, ref_geometric(it_primal, 0.3), tolerance = 1e-12)
  # Momentum 0 is plain gradient descent.
  it0 <- ref_iterates(dual, 0 * g$rhs, 4, lr, 0)
  expect_equal(run(iterations = 4, batch_size = 60, momentum = 0, averaging = "none"),
               it0[[4]], tolerance = 1e-12)
})

test_that("full-batch dual and primal descent converge to the dense solve", {
  g <- grid_problem()
  exact <- solve(g$A, g$rhs)
  ev <- max(eigen(g$K, symmetric = TRUE, only.values = TRUE)$values)
  withr::local_seed(2)
  # Step sizes at half the Nesterov stability limit 1.36 / curvature, with
  # curvature lambda_max(K + noise I) / n (dual) and
  # lambda_max(K (K + noise I)) / n (primal); the error contracts linearly,
  # by 1e-8 well within these runs (observed ~1e-15).
  dual <- sddgp:::run_solver("sdd", g$problem, sdd_control(
    tolerance = 0, iterations = 300, batch_size = 60, step_size = 0.68 * 60 / (ev + 0.4),
    averaging = "none"), threads = 1)
  primal <- sddgp:::run_solver("sdd", g$problem, sdd_control(
    tolerance = 0, iterations = 300, batch_size = 60, objective = "primal", averaging = "none",
    step_size = 0.68 * 60 / (ev * (ev + 0.4))), threads = 1)
  expect_lt(max_rel_err(dual$alpha, exact), 1e-8)
  expect_lt(max_rel_err(primal$alpha, exact), 1e-8)
})

test_that("one step of each stochastic estimator is the documented formula", {
  g <- grid_problem(k = 2)
  n <- 60
  B <- 16
  lr <- 2
  b <- g$rhs
  a1 <- lr * b / n  # every estimator's first step from 0 with momentum 0
  # The batch's counts c (B draws with replacement) from a vector known to
  # be c * v, and checks that they are whole numbers adding up to B.
  counts_from <- function(cv, v) {
    cnt <- cv / v
    expect_lt(max(abs(cnt - round(cnt))), 1e-8)
    expect_equal(sum(round(cnt)), B)
    expect_true(all(round(cnt) >= 0))
    round(cnt)
  }
  two_steps <- function(...) {
    withr::local_seed(3)
    sddgp:::run_solver("sdd", g$problem, sdd_control(
      tolerance = 0, iterations = 2, momentum = 0, averaging = "none", batch_size = B,
      step_size = lr, warm_start = "none", ...), threads = 1)$alpha
  }
  # K alpha only subsampled: a2 = a1 - lr [(1/B) sum_I e_i K_i a1 +
  # (noise a1 - b) / n], so the batch part is c * (K a1) / B.
  a2 <- two_steps(estimator = "coordinates_kalpha")
  s <- (a1 - a2) / lr - (0.4 * a1 - b) / n
  Ka1 <- g$K %*% a1
  c1 <- counts_from(s[, 1] * B, Ka1[, 1])
  expect_equal(counts_from(s[, 2] * B, Ka1[, 2]), c1)  # systems share batches

  # Random features: a2 = a1 - lr (L L' a1 + noise a1 - b) / n with L redrawn
  # each step. With m features, sd((L L' v)_i - (K v)_i) <= sqrt(2 s2 v'Kv / m)
  # (s2 = kernel variance = 1): the squared error norm has expectation at
  # most n 2 v'Kv / m, and we allow 5 times its square root.
  m <- 1e5
  a2 <- two_steps(estimator = "features", estimator_features = m)
  LLa1 <- n * (a1 - a2) / lr - 0.4 * a1 + b
  for (j in 1:2) {
    bound <- 5 * sqrt(n * 2 * sum(a1[, j] * Ka1[, j]) / m)
    expect_lt(sqrt(sum((LLa1[, j] - Ka1[, j])^2)), bound)
    # The check has teeth: a wrong scale or a missing term errs by O(K a1).
    expect_lt(bound, 0.5 * sqrt(sum(Ka1[, j]^2)))
  }

  # SGD, one step: a1 = (lr / B) [K_I' b_err_I] + (lr / n) L L' b_reg. For
  # the mean (b_reg = 0) that is (lr / B) K (c * y), exactly; for a sample
  # the noise draw zeta sits in the regulariser, b_err = f0.
  f0 <- withr::with_seed(4, stats::rnorm(n))
  zeta <- withr::with_seed(5, stats::rnorm(n, sd = sqrt(0.4)))
  p <- g$problem
  p$rhs <- cbind(b[, 1], f0 + zeta)
  p$f0 <- matrix(f0)
  p$zeta <- matrix(zeta)
  one <- function(solver, control) {
    withr::local_seed(6)
    sddgp:::run_solver(solver, p, control, threads = 1)$alpha
  }
  sgd <- one("sgd", sgd_control(iterations = 1, momentum = 0, averaging = "none",
                                batch_size = B, step_size = lr, step_size_samples = 1,
                                clip = NULL, regularizer_features = m))
  cnt <- counts_from(solve(g$K, sgd[, 1]) * B / lr, b[, 1])
  data_term <- g$K %*% (cnt * f0) / B
  reg_term <- g$K %*% zeta / n
  bound <- 5 * sqrt(n * 2 * sum(zeta * reg_term * n) / m) / n
  expect_lt(sqrt(sum((sgd[, 2] - data_term - reg_term)^2)), bound)
  # Not the unsplit target (f0 + zeta in the data term).
  expect_gt(sqrt(sum((sgd[, 2] - g$K %*% (cnt * (f0 + zeta)) / B)^2)), 10 * bound)
  # sdd_control(objective = "primal") runs the same estimator.
  sdd <- one("sdd", sdd_control(tolerance = 0, iterations = 1, momentum = 0, averaging = "none",
                                batch_size = B, step_size = lr, step_size_samples = 1,
                                objective = "primal", estimator_features = 100,
                                warm_start = "none"))
  expect_equal(sdd[, 1], sgd[, 1], tolerance = 1e-12)
})

test_that("the stochastic estimators converge to the dense solve up to their noise floor", {
  g <- grid_problem(k = 2)
  exact <- solve(g$A, g$rhs)
  ev <- max(eigen(g$K, symmetric = TRUE, only.values = TRUE)$values)
  h_dual <- (ev + 0.4) / 60
  h_primal <- ev * (ev + 0.4) / 60
  withr::local_options(sddgp.threads = 1)  # many tiny steps
  # Unlike SDD's, these estimates do not vanish at the solution (L L' alpha
  # != K alpha, (n/B) sum_I K_i alpha != K alpha), so constant-step
  # iterates hover around it; the arithmetic mean over the second half
  # removes most of that noise (its error shrinks like 1/sqrt(T)). The
  # tolerance on the prediction error is about 3 times the largest these
  # seeds give (0.012 to 0.026).
  runs <- list(
    list(control = sdd_control(tolerance = 0, iterations = 1500, estimator = "features",
                               step_size = 0.3 / h_dual, batch_size = 16,
                               averaging = "arithmetic", averaging_start = 750),
         tol = 0.075),
    list(control = sdd_control(tolerance = 0, iterations = 20000, estimator = "coordinates_kalpha",
                               step_size = 0.05 / h_dual, batch_size = 16,
                               averaging = "arithmetic", averaging_start = 10000),
         tol = 0.075),
    list(control = sdd_control(tolerance = 0, iterations = 2000, objective = "primal",
                               step_size = 0.05 / h_primal, batch_size = 16,
                               averaging = "arithmetic", averaging_start = 1000),
         tol = 0.075))
  for (r in runs) {
    withr::local_seed(7)
    sol <- sddgp:::run_solver("sdd", g$problem, r$control, threads = 1)
    for (j in 1:2) {
      expect_lt(pred_err(g$K, sol$alpha[, j], exact[, j]), r$tol,
                label = paste(r$control$objective, r$control$estimator, "system", j))
    }
  }
})

test_that("solver = 'sgd' approaches the exact posterior as far as the method allows", {
  d <- make_data(200, 2, seed = 5)
  ker <- matern(3/2, 0.5, 1)
  withr::local_options(sddgp.threads = 1)
  withr::local_seed(1)
  exact <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, solver = "cholesky", samples = 2)
  # The same seed gives the same prior draws and noise draws.
  withr::local_seed(1)
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, samples = 2,
                control = sgd_control(iterations = 3000))
  expect_equal(fit$solver, "sgd")
  expect_equal(fit$prior, exact$prior)
  expect_identical(fit$state$step_size, c(mean = 0.5, samples = 0.1))
  K <- ref_kernel(fit$x, fit$x, "matern32", 0.5, 1)
  # The reference's defaults (step sizes 0.5 / 0.1, 100 features, clipping)
  # leave SGD short of the exact weights: its gradient noise (minibatch and
  # random features) does not vanish at the solution, and the primal
  # objective moves slowly along the small eigenvalues of K, which barely
  # matter for predictions. So we compare predictions at the data: about
  # 3% off for the mean and 15% for the samples after 3000 steps (the
  # samples' smaller step size); the tolerances are twice that.
  expect_lt(pred_err(K, fit$alpha, exact$alpha), 0.06)
  for (j in 1:2) {
    expect_lt(pred_err(K, fit$alpha_samples[, j], exact$alpha_samples[, j]), 0.3)
  }
  # And more steps get closer.
  withr::local_seed(1)
  short <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1,
                  control = sgd_control(iterations = 500))
  expect_gt(pred_err(K, short$alpha, exact$alpha), pred_err(K, fit$alpha, exact$alpha))
  # Kernel values in single precision (the same draws) move the fit by
  # float rounding only, far less than SGD's own error.
  withr::local_seed(1)
  single <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, samples = 2,
                   control = sgd_control(iterations = 3000, precision = "single"))
  expect_lt(pred_err(K, single$alpha, fit$alpha), 1e-4)
  expect_false(identical(single$alpha, fit$alpha))
})

test_that("clipping caps the mean's gradient only, and a tiny cap slows convergence", {
  g <- grid_problem(k = 2)
  n <- 60
  exact <- solve(g$A, g$rhs)
  primal <- function(a) g$K %*% (g$A %*% a - g$rhs) / n
  sgd <- function(clip, iterations = 5) {
    withr::local_seed(8)
    sddgp:::run_solver("sgd", g$problem, sgd_control(
      iterations = iterations, batch_size = n, step_size = 5, step_size_samples = 4,
      averaging = "none", clip = clip), threads = 1)$alpha
  }
  # With a full batch SGD is deterministic primal descent; the mean's first
  # gradient K b / n has norm about 0.2, so a cap of 0.05 binds.
  expect_gt(sqrt(sum(primal(0 * g$rhs)[, 1]^2)), 0.05)
  ref <- ref_iterates(primal, 0 * g$rhs, 5, c(5, 4), 0.9, clip = c(0.05, 0))
  expect_equal(sgd(0.05), ref[[5]], tolerance = 1e-12)
  unclipped <- ref_iterates(primal, 0 * g$rhs, 5, c(5, 4), 0.9)
  expect_equal(sgd(NULL), unclipped[[5]], tolerance = 1e-12)
  expect_gt(max(abs(sgd(0.05)[, 1] - unclipped[[5]][, 1])), 1e-3)
  expect_equal(sgd(0.05)[, 2], unclipped[[5]][, 2], tolerance = 1e-12)
  # 300 steps: unclipped converges, a cap of 1e-4 moves the mean at most
  # 300 * 5 * 1e-4 * (1 + 0.9 + ...) < 1.5 in norm, while ||alpha*|| ~ 3.6.
  free <- sgd(NULL, 300)
  capped <- sgd(1e-4, 300)
  expect_lt(max_rel_err(free[, 1], exact[, 1]), 1e-6)
  expect_gt(max_rel_err(capped[, 1], exact[, 1]), 0.1)
  expect_lt(sqrt(sum(capped[, 1]^2)), 300 * 5 * 1e-4 / (1 - 0.9))
})

test_that("results do not depend on the number of threads", {
  # Big enough that every parallel region runs with 2 threads: kernel
  # blocks, the column product, the feature products and the dense update.
  d <- make_data(4200, 2, seed = 14)
  ker <- matern(3/2, 0.3, 1)
  fit_with <- function(threads, control) {
    withr::local_seed(15)
    # Three or four steps: far from converged by design.
    suppressWarnings(gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, samples = 1,
                            threads = threads, control = control),
                     classes = "sddgp_warning_not_converged")
  }
  controls <- list(
    sgd_control(iterations = 4, batch_size = 128, check_every = 2, step_size = 0.01,
                step_size_samples = 0.01, cache = "never"),
    sgd_control(iterations = 4, batch_size = 128, check_every = 2, step_size = 0.01,
                step_size_samples = 0.01, cache = "never", precision = "single"),
    sdd_control(tolerance = 0, iterations = 3, estimator = "features", step_size = 1, cache = "never"),
    sdd_control(tolerance = 0, iterations = 4, batch_size = 128, estimator = "coordinates_kalpha",
                step_size = 1, cache = "never"))
  for (ctl in controls) {
    f1 <- fit_with(1, ctl)
    f2 <- fit_with(2, ctl)
    expect_identical(f1$alpha, f2$alpha)
    expect_identical(f1$alpha_samples, f2$alpha_samples)
    expect_identical(f1$trace$residual, f2$trace$residual)
  }
})

test_that("predict() and simulate() work for an SGD fit", {
  d <- make_data(120, 2, seed = 16)
  ker <- matern(3/2, 0.4, 1)
  xt <- make_inputs(7, 2, seed = 17)
  withr::local_seed(18)
  exact <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, solver = "cholesky", samples = 8)
  withr::local_seed(18)
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, samples = 8,
                control = sgd_control(iterations = 1500), threads = 1)
  p <- predict(fit, xt, se.fit = TRUE, interval = "prediction")
  pe <- predict(exact, xt, se.fit = TRUE, interval = "prediction")
  expect_equal(dim(p$fit), c(7L, 3L))
  expect_true(all(is.finite(p$fit)) && all(p$se.fit > 0))
  # Same prior and noise draws as the exact fit: predictions and the
  # sample-based standard errors agree to SGD's accuracy (see above).
  expect_lt(max(abs(p$fit[, "fit"] - pe$fit[, "fit"])), 0.1 * sd(d$y))
  expect_lt(max(abs(p$se.fit / pe$se.fit - 1)), 0.5)
  # Stored samples, and new ones with a seed (a new solve without the mean,
  # with the fit's step sizes), reproducibly.
  s1 <- simulate(fit, nsim = 3, newdata = xt, stored = TRUE)
  expect_equal(dim(s1), c(7L, 3L))
  n1 <- simulate(fit, nsim = 2, seed = 42, newdata = xt, threads = 1)
  n2 <- simulate(fit, nsim = 2, seed = 42, newdata = xt, threads = 2)
  n3 <- simulate(fit, nsim = 2, seed = 43, newdata = xt, threads = 1)
  expect_identical(n1, n2)
  expect_false(isTRUE(all.equal(n1, n3)))
  expect_true(all(is.finite(as.matrix(n1))))
  # The new draws vary around the mean.
  expect_lt(max(abs(rowMeans(simulate(fit, nsim = 40, seed = 1, newdata = xt)) -
                      p$fit[, "fit"])), 4 * max(p$se.fit) / sqrt(40) + 0.05)
})

test_that("sgd_control() has the reference's defaults and validates every argument", {
  ctl <- sgd_control()
  expect_s3_class(ctl, "sddgp_control_sgd")
  expect_identical(ctl$iterations, 10000L)
  expect_identical(ctl$batch_size, 512L)
  expect_equal(ctl$step_size, 0.5)
  expect_equal(ctl$step_size_samples, 0.1)
  expect_equal(ctl$momentum, 0.9)
  expect_equal(ctl$averaging, "geometric")
  expect_null(ctl$averaging_rate)
  expect_equal(ctl$batch_sampling, "uniform")
  expect_identical(ctl$regularizer_features, 100L)
  expect_equal(ctl$clip, 0.1)
  expect_equal(ctl$tolerance, 0)
  expect_identical(ctl$check_every, 100L)
  expect_identical(ctl$probe_size, 256L)
  expect_identical(ctl$features, 2000L)
  expect_equal(ctl$cache, "auto")
  expect_equal(ctl$cache_limit, 2e9)
  expect_equal(ctl$trace, "none")
  expect_equal(sgd_control(clip = NULL)$clip, Inf)  # no cap
  expect_output(print(sgd_control(clip = NULL)), "clip +Inf\n")
  expect_output(print(ctl), "Settings of solver \"sgd\" \\(stochastic gradient descent")
  expect_output(print(ctl), "clip +0.1\n")

  bad <- list(
    iterations = list(0, 2.5, NA, "10"),
    batch_size = list(0, 1.5, NA),
    step_size = list(0, -1, NA, NULL, "0.5"),
    step_size_samples = list(0, -1, NA),
    momentum = list(-0.1, 1, NA),
    averaging = list("mean", NA),
    averaging_rate = list(0, 1.5),
    averaging_start = list(0, 1.5, 1e6),
    batch_sampling = list("random"),
    regularizer_features = list(0, 2.5, 1e6, NA),
    clip = list(0, -1, NA, "0.1", Inf),
    tolerance = list(-1, 2),
    check_every = list(0, NA),
    probe_size = list(0, 2e6),
    trace_every = list(0, 2.5, 1e6),
    reference = list("a", c(1, NA), numeric()),
    features = list(0, NA),
    cache = list("sometimes"),
    cache_limit = list(-1, NA),
    precision = list("half", NA)
  )
  for (arg in names(bad)) {
    for (value in bad[[arg]]) {
      args <- stats::setNames(list(value), arg)
      expect_error(do.call(sgd_control, args), class = "sddgp_error_argument",
                   regexp = paste0("`", arg, "`"), label = paste(arg, "=", deparse(value)))
    }
  }
  expect_error(sgd_control(averaging = "x"),
               regexp = "`averaging` must be one of \"geometric\", \"none\", \"arithmetic\"")
  # A control of the wrong solver is refused.
  expect_error(gp_sdd(matrix(1:4), 1:4, kernel = matern(3/2, 1, 1), noise = 1,
                      solver = "sdd", control = sgd_control()),
               class = "sddgp_error_argument", regexp = "sgd_control")
})

test_that("a step size beyond the primal's stability limit is a divergence error", {
  d <- make_data(100, 2, seed = 19)
  withr::local_seed(20)
  err <- expect_error(
    gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.1,
           control = sgd_control(iterations = 1000, step_size = 1e3, clip = NULL)),
    class = "sddgp_error_divergence", regexp = "SGD diverged.*`step_size`.*sgd_control")
  expect_equal(err$step_size, 1e3)
  # Clipping the mean does not protect the unclipped sample systems.
  expect_error(
    gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.1, samples = 2,
           control = sgd_control(iterations = 1000, step_size_samples = 1e3)),
    class = "sddgp_error_divergence")
})

test_that("Ctrl-C stops a long SGD fit promptly", {
  skip_on_cran()
  skip_if_not_installed("callr")
  expect_prompt_interrupt(20000, 2, sgd_control(iterations = 1e6, step_size = 1e-3,
                                                 cache = "never"),
                          "SGD interrupted by the user after [0-9]+ iterations")
})
