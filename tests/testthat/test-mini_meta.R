# Mini-META (mini_meta()) against base-R truth: the compressed posterior
# against the GP posterior given every repeated observation as its own row
# (ref_posterior() in helper-sddgp.R), the switching rule against the
# posterior sd before and after the repeats, beta against its formula.

# A compressed state from repeated observations, in shuffled order.
repeated_data <- function(seed = 3, h = 7, d = 2) {
  withr::with_seed(seed, {
    xu <- matrix(stats::runif(h * d), h, d)
    counts <- sample(1:6, h, replace = TRUE)
    rows <- sample(rep(seq_len(h), counts))
    x <- xu[rows, , drop = FALSE]
    y <- sin(4 * x[, 1]) + x[, d] + stats::rnorm(length(rows), sd = 0.3)
  })
  list(x = x, y = y)
}

# A noisy objective on a finite set with a clear maximiser.
finite_problem <- function() {
  grid <- matrix(seq(0, 1, length.out = 21))
  f <- function(x) exp(-100 * (x[1] - 0.7)^2) - 0.3 * x[1]
  list(grid = grid, f = f, noisy = function(x) f(x) + stats::rnorm(1, sd = 0.3),
       best = which.max(apply(grid, 1, f)))
}

kern <- matern(5/2, lengthscale = c(0.3, 0.5), variance = 1.3)
lambda <- 0.09

full_posterior <- function(x, y, xnew, prior_mean = 0) {
  ref <- ref_posterior(x, y - prior_mean, xnew, "matern52", c(0.3, 0.5), 1.3, lambda)
  list(mean = prior_mean + ref$mean, var = diag(ref$cov))
}

test_that("the compressed posterior equals the posterior given every repeat", {
  dat <- repeated_data()
  state <- sddgp:::add_observations(sddgp:::new_compressed(2), dat$x, dat$y)
  # Compression: unique points, their counts and mean observations.
  expect_equal(nrow(state$x), 7L)
  expect_equal(sum(state$counts), nrow(dat$x))
  key <- paste(dat$x[, 1], dat$x[, 2])
  first <- match(paste(state$x[, 1], state$x[, 2]), key)
  expect_equal(state$counts, as.numeric(table(key)[key[first]]), ignore_attr = TRUE)
  expect_equal(state$sums / state$counts, as.numeric(tapply(dat$y, key, mean)[key[first]]),
               ignore_attr = TRUE)

  xnew <- rbind(make_inputs(20), state$x)
  m0 <- mean(dat$y)
  post <- sddgp:::exact_posterior(state, kern, lambda, m0, threads = 2)
  got <- post$at(xnew)
  truth <- full_posterior(dat$x, dat$y, xnew, m0)
  # Both are exact solves of well-conditioned systems (condition number
  # below 1e3): agreement to 1e-8 leaves room for rounding only.
  expect_equal(got$mean, truth$mean, tolerance = 1e-8)
  expect_equal(got$var, truth$var, tolerance = 1e-8)
  expect_equal(post$variance(xnew[3, ]), truth$var[3], tolerance = 1e-8)
  # The poster's formula (sums in place of means) is far off.
  sums_instead <- sddgp:::exact_posterior(
    within(state, sums <- sums * counts), kern, lambda, m0, threads = 2)$at(xnew)$mean
  expect_gt(max(abs(sums_instead - truth$mean)), 0.1)

  # The information gain 1/2 log det(I + K_T / lambda) over all T rows.
  K <- ref_kernel(dat$x, dat$x, "matern52", c(0.3, 0.5), 1.3)
  gain <- 0.5 * determinant(diag(nrow(K)) + K / lambda)$modulus[[1]]
  R <- sddgp:::compressed_cholesky(state, kern, lambda, threads = 2)
  expect_equal(sddgp:::information_gain(R, state, lambda), gain, tolerance = 1e-10)
})

test_that("gp_sdd() with weights = counts fits the same posterior mean", {
  dat <- repeated_data()
  state <- sddgp:::add_observations(sddgp:::new_compressed(2), dat$x, dat$y)
  xnew <- make_inputs(20)
  m0 <- mean(dat$y)
  fit <- gp_sdd(state$x, state$sums / state$counts - m0, kernel = kern, noise = lambda,
                weights = state$counts, solver = "cholesky", standardize = FALSE)
  truth <- full_posterior(dat$x, dat$y, xnew, m0)
  expect_equal(m0 + predict(fit, xnew), truth$mean, tolerance = 1e-8)
})

test_that("beyond the threshold, SDD approximates the compressed posterior", {
  dat <- repeated_data(h = 30)
  state <- sddgp:::add_observations(sddgp:::new_compressed(2), dat$x, dat$y)
  xnew <- make_inputs(50)
  m0 <- mean(dat$y)
  truth <- full_posterior(dat$x, dat$y, xnew, m0)
  set.seed(1)
  # Batches of 10 of the 30 points: stochastic, yet 3000 steps converge.
  post <- sddgp:::sdd_posterior(state, kern, lambda, m0, samples = 256,
                                sdd_control(tolerance = 0, iterations = 3000, batch_size = 10), threads = 2)
  got <- post$at(xnew)
  expect_equal(got$mean, truth$mean, tolerance = 1e-6)
  # The chosen point's variance comes from its own solve: accurate.
  expect_equal(post$variance(xnew[7, ]), truth$var[7], tolerance = 1e-6)
  # The others are mean squares of 256 samples, relative sd sqrt(2 / 256)
  # = 0.09 each: within 4.5 sd everywhere, and unbiased on average.
  ratio <- got$var / truth$var
  expect_true(all(abs(ratio - 1) < 0.4))
  expect_lt(abs(median(ratio) - 1), 0.1)
  expect_gt(max(abs(ratio - 1)), 1e-3)

  # The loop switches from the exact posterior to SDD past `threshold`.
  p <- finite_problem()
  run <- function(threads) {
    set.seed(5)
    res <- mini_meta(p$noisy, candidates = p$grid, budget = 40, beta = 2,
                     kernel = matern(5/2, 0.1, 0.5), noise = 0.09, initial = 6, mini = FALSE,
                     threshold = 8, samples = 16, control = sdd_control(tolerance = 0, iterations = 300),
                     threads = threads)
    res$history$seconds <- NULL
    res
  }
  res <- run(2)
  h <- res$history
  # A step's solver depends on the unique points before it (6 initially).
  before <- c(6, h$unique[-nrow(h)])
  expect_identical(h$solver, ifelse(before > 8, "sdd", "cholesky"))
  expect_true(any(h$solver == "sdd") && any(h$solver == "cholesky"))
  expect_identical(res[c("x", "y", "history")], run(1)[c("x", "y", "history")])
})

test_that("the switching rule shrinks the posterior sd by at most C", {
  dat <- repeated_data(seed = 5)
  state <- sddgp:::add_observations(sddgp:::new_compressed(2), dat$x, dat$y)
  # A grid plus the evaluated points, where the sd is small and B large.
  grid <- rbind(as.matrix(expand.grid(seq(0, 1, length.out = 15), seq(0, 1, length.out = 15))),
                state$x)
  before <- full_posterior(dat$x, dat$y, grid)
  post <- sddgp:::exact_posterior(state, kern, lambda, 0, threads = 2)
  repeats <- NULL
  for (C in c(1.2, 2, 4)) {
    for (i in c(1, 113, 226, 229, 231)) {
      x <- grid[i, ]
      variance <- post$variance(x)
      B <- sddgp:::switch_after(C, lambda, variance)
      expect_equal(B, max(1, floor((C^2 - 1) * lambda / variance)))
      ratio <- function(repeats) {
        xr <- rbind(dat$x, matrix(x, repeats, 2, byrow = TRUE))
        after <- full_posterior(xr, c(dat$y, rep(0, repeats)), grid)
        sqrt(before$var / after$var)
      }
      r <- ratio(B)
      # The largest fall is at x itself, sqrt(1 + B sigma^2 / lambda) <= C
      # (unless one repeat alone exceeds C: B = 1 is the floor).
      expect_equal(max(r), r[i], tolerance = 1e-8)
      expect_equal(r[i], sqrt(1 + B * variance / lambda), tolerance = 1e-8)
      if (B > 1 || 1 + variance / lambda <= C^2) expect_true(all(r <= C + 1e-12))
      # One more repeat would exceed C.
      expect_gt(ratio(B + 1)[i], C)
      repeats <- c(repeats, B)
    }
  }
  # Both the floor B = 1 (one repeat already exceeds C) and long blocks.
  expect_true(min(repeats) == 1 && max(repeats) > 50)
})

test_that("EI with beta is the expected improvement of a beta-inflated sd", {
  post <- list(mean = c(-0.3, 0.1, -2), var = c(0.5, 0.02, 0.3))
  incumbent <- 0.1
  beta <- 1.7
  got <- sddgp:::acquisition_value(post, "ei", beta, incumbent)
  truth <- mapply(function(m, v) {
    s <- beta * sqrt(v)
    stats::integrate(function(e) (m + s * e - incumbent) * dnorm(e),
                     (incumbent - m) / s, Inf, rel.tol = 1e-10)$value
  }, post$mean, post$var)
  expect_equal(got, truth, tolerance = 1e-7)
  expect_equal(sddgp:::acquisition_value(post, "ucb", beta, incumbent),
               post$mean + beta * sqrt(post$var))
})

test_that("the loop concentrates its evaluations on the maximiser", {
  p <- finite_problem()
  k <- matern(5/2, lengthscale = 0.1, variance = 0.5)
  for (acquisition in c("ucb", "ei")) {
    set.seed(4)
    res <- mini_meta(p$noisy, candidates = p$grid, budget = 400, acquisition = acquisition,
                     beta = 2, kernel = k, noise = 0.09, initial = 5)
    at_best <- mean(res$x[, 1] == p$grid[p$best, 1])
    # The maximiser beats its neighbours by more than 0.2, two thirds of the
    # noise sd: a few dozen evaluations separate them.
    expect_gt(at_best, 0.8)
    expect_equal(res$recommended$x, p$grid[p$best, ])
    # Far fewer switches than evaluations.
    expect_lt(nrow(res$history), 60)
    # `best` is the largest mean observation of a point so far.
    means <- tapply(res$y, res$x[, 1], mean)
    expect_equal(res$history$best[nrow(res$history)], max(means), tolerance = 1e-12)
    expect_equal(res$compressed$counts, as.numeric(table(res$x[, 1])[
      as.character(res$compressed$x[, 1])]), ignore_attr = TRUE)
  }
})

test_that("plain mode evaluates once per step; budgets are exact", {
  p <- finite_problem()
  k <- matern(5/2, lengthscale = 0.1, variance = 0.5)
  set.seed(2)
  plain <- mini_meta(p$noisy, candidates = p$grid, budget = 30, beta = 2, kernel = k,
                     noise = 0.09, initial = 4, mini = FALSE)
  expect_true(all(plain$history$repeats == 1L))
  expect_equal(plain$history$evaluations, 5:30)
  expect_equal(nrow(plain$x), 30L)
  # A large C asks for long blocks; the last one is cut to the budget.
  for (budget in c(7, 23, 61)) {
    res <- mini_meta(p$noisy, candidates = p$grid, budget = budget, beta = 2, kernel = k,
                     noise = 0.09, initial = 3, C = 5)
    expect_equal(length(res$y), budget)
    expect_equal(sum(res$history$repeats) + 3, budget)
    expect_equal(res$history$evaluations, 3 + cumsum(res$history$repeats))
    h <- res$history
    full <- sddgp:::switch_after(5, 0.09, h$sd^2)
    expect_true(all(h$repeats[-nrow(h)] == full[-nrow(h)]))
    expect_lte(h$repeats[nrow(h)], full[nrow(h)])
  }
})

test_that("beta = \"theory\" follows its formula over the evaluations so far", {
  p <- finite_problem()
  set.seed(8)
  res <- mini_meta(p$noisy, candidates = p$grid, budget = 60, beta = "theory",
                   delta = 0.1, rkhs_norm = 0.5, kernel = matern(3/2, 0.2, 0.5),
                   noise = 0.09, initial = 5)
  h <- res$history
  for (s in c(1, 2, nrow(h))) {
    seen <- res$x[seq_len(if (s == 1) 5 else h$evaluations[s - 1]), , drop = FALSE]
    K <- ref_kernel(seen, seen, "matern32", 0.2, 0.5)
    gain <- 0.5 * determinant(diag(nrow(K)) + K / 0.09)$modulus[[1]]
    expect_equal(h$beta[s], sqrt(2 * gain + 2 * log(1 / 0.1)) + 0.5, tolerance = 1e-9)
  }
})

test_that("results are reproducible and do not depend on the threads", {
  p <- finite_problem()
  run <- function(threads, ...) {
    set.seed(11)
    res <- mini_meta(p$noisy, budget = 40, beta = 2, initial = 6, threads = threads, ...)
    res$history$seconds <- NULL
    res[c("x", "y", "history", "compressed", "recommended", "kernel", "noise")]
  }
  expect_identical(run(1, candidates = p$grid), run(2, candidates = p$grid))
  # The box, with hyperparameters estimated on the initial design.
  box1 <- run(1, lower = 0, upper = 1, acquisition = "ei")
  expect_identical(box1, run(2, lower = 0, upper = 1, acquisition = "ei"))
  expect_true(all(box1$x >= 0 & box1$x <= 1))
})

test_that("a box domain repeats evaluated points exactly and stays inside", {
  f <- function(x) -sum((x - c(0.3, -0.2))^2) + stats::rnorm(1, sd = 0.2)
  set.seed(3)
  res <- mini_meta(f, lower = c(-1, -1), upper = c(1, 1), budget = 80, beta = 1,
                   kernel = matern(5/2, 0.5, 0.5), noise = 0.04, initial = 5)
  expect_true(all(res$x >= -1 & res$x <= 1))
  expect_lt(length(res$compressed$counts), 60)
  expect_gt(max(res$compressed$counts), 5)
  expect_lt(sqrt(sum((res$recommended$x - c(0.3, -0.2))^2)), 0.3)
})

test_that("earlier evaluations join the data but not the budget", {
  p <- finite_problem()
  x0 <- p$grid[c(1, 5, 5, 20), , drop = FALSE]
  y0 <- c(0.1, 0.2, 0.4, 0.3)
  set.seed(1)
  res <- mini_meta(p$noisy, candidates = p$grid, budget = 20, x = x0, y = y0, beta = 2,
                   kernel = matern(5/2, 0.1, 0.5), noise = 0.09)
  expect_equal(length(res$y), 20L)
  expect_equal(res$prior_mean, mean(y0))
  expect_equal(sum(res$compressed$counts), 24)
  expect_equal(res$compressed$means[2], 0.3)
})

test_that("bad inputs give classed errors naming the argument", {
  p <- finite_problem()
  k <- matern(5/2, 0.1, 0.5)
  ok <- function(...) {
    args <- utils::modifyList(list(objective = p$noisy, candidates = p$grid, budget = 10,
                                   kernel = k, noise = 0.1), list(...))
    do.call(mini_meta, args)
  }
  arg_error <- function(expr, arg, regexp = NULL) {
    err <- expect_error(expr, class = "sddgp_error_argument", regexp = regexp)
    expect_identical(err$arg, arg)
  }
  arg_error(ok(candidates = p$grid[0, , drop = FALSE]), "candidates", "domain is empty")
  arg_error(ok(candidates = NULL, lower = 1, upper = 0), "upper", "domain is empty")
  arg_error(ok(lower = 0, upper = 1), "candidates", "not both|cannot be given together")
  arg_error(ok(candidates = NULL), "candidates", "is missing")
  arg_error(ok(candidates = rbind(0.1, NA)), "candidates", "NA")
  arg_error(ok(objective = "f"), "objective", "must be a function")
  err <- expect_error(ok(objective = function(x) if (x > 0.5) NA_real_ else 1, initial = 21, budget = 30),
                      class = "sddgp_error_objective")
  expect_match(conditionMessage(err), "returned NA")
  arg_error(ok(C = 1), "C", "\\(1, Inf\\]")
  arg_error(ok(C = "2"), "C")
  arg_error(ok(budget = 10.5), "budget", "whole number")
  arg_error(ok(budget = 0), "budget")
  arg_error(ok(budget = NULL), "budget")
  arg_error(mini_meta(p$noisy, candidates = p$grid), "budget", "is missing")
  arg_error(ok(beta = "large"), "beta", "\"theory\" or a positive number")
  arg_error(ok(beta = -1), "beta")
  arg_error(ok(beta = c(1, 2)), "beta")
  arg_error(ok(delta = 1), "delta")
  arg_error(ok(rkhs_norm = -1), "rkhs_norm")
  arg_error(ok(acquisition = "pi"), "acquisition", "\"ucb\", \"ei\"")
  arg_error(ok(noise = 0), "noise")
  arg_error(ok(kernel = "cubic"), "kernel")
  arg_error(ok(kernel = matern(5/2, c(1, 2), 1)), "lengthscale")
  arg_error(ok(initial = 10), "initial", "\\[0, 9\\]")
  arg_error(ok(initial = 0), "initial", "at least 1 initial point")
  arg_error(ok(initial = 1, noise = NULL), "initial", "estimate the hyperparameters")
  arg_error(ok(candidates = p$grid[1:3, , drop = FALSE], initial = 5, budget = 10),
            "initial", "only 3 candidates")
  # The default `initial` (min(10, budget - 1) = 9 here) is not the user's.
  arg_error(ok(candidates = p$grid[1:3, , drop = FALSE], budget = 10), "candidates",
            "has 3 rows, too few for the default `initial` of 9 .* at most 3")
  arg_error(ok(x = p$grid[1:2, , drop = FALSE]), "y")
  arg_error(ok(x = cbind(1, 2), y = 1), "x", "2 columns")
  arg_error(ok(x = p$grid[1:2, , drop = FALSE], y = c(1, NA)), "y", "NA")
  arg_error(ok(mini = NA), "mini")
  arg_error(ok(solver = "cg"), "solver")
  arg_error(ok(solver = "sdd", initial = 1), "solver", "2 distinct initial points")
  arg_error(ok(threshold = 0), "threshold")
  arg_error(ok(samples = 1), "samples")
  arg_error(ok(control = cg_control()), "control", "sdd_control")
  arg_error(ok(threads = 0), "threads")
})

test_that("print shows the switches and the recommendation", {
  p <- finite_problem()
  set.seed(1)
  res <- mini_meta(p$noisy, candidates = p$grid, budget = 50, beta = 2,
                   kernel = matern(5/2, 0.1, 0.5), noise = 0.09, initial = 5)
  expect_s3_class(res, c("sddgp_mini_meta", "sddgp_bo"))
  out <- capture.output(print(res))
  expect_match(out[1], "Mini-META")
  expect_match(out[2], sprintf("50 evaluations in %d steps", nrow(res$history)))
  expect_match(out[4], sprintf("GP-UCB, %d unique points \\(Mini-META, C = 1.5\\)",
                               length(res$compressed$counts)))
  expect_match(out[5], "recommended \\(largest posterior mean\\)")
  means <- res$compressed$means
  expect_match(out[3], sprintf("best mean of a point's evaluations: %s at x = \\(%s\\)",
                               format(max(means), digits = 4),
                               format(res$compressed$x[which.max(means), ], digits = 4)),
               fixed = FALSE)
})
