# bo_thompson(): parallel Thompson sampling.  The truth here is a function
# whose maximiser is known, brute-force maximisation of the posterior
# samples on the same candidates or a fine grid (through simulate()), and
# the loop's own bookkeeping recomputed from its x and y.

# Two bumps on [0, 1]^2: the global maximum 1 at (0.3, 0.7), a decoy of
# height 0.8 at (0.8, 0.2).
ts_peak <- c(0.3, 0.7)
ts_bumps <- function(p) {
  exp(-sum((p - ts_peak)^2) / 0.05) + 0.8 * exp(-sum((p - c(0.8, 0.2))^2) / 0.05)
}
ts_kernel <- matern(5/2, lengthscale = 0.2, variance = 0.2)

ts_run <- function(seed, ..., threads = 1) {
  withr::with_seed(seed, bo_thompson(
    ts_bumps, c(0, 0), c(1, 1), initial = 10, steps = 6, batch = 4,
    kernel = ts_kernel, noise = 1e-6, candidates = 500, rounds = 2,
    local_rounds = 5, local_points = 8, threads = threads, ...))
}

test_that("Thompson sampling finds the maximiser of a known function", {
  # Near the peak ts_bumps is exp(-r^2 / 0.05) (the decoy adds < 1e-8), so
  # a value of at least 0.99 means a point within r = sqrt(0.05 * -log(0.99))
  # = 0.0224 of the maximiser.  Uniform random search with the same 34
  # evaluations gets that close with probability 1 - (1 - pi r^2)^34 = 5%.
  radius <- sqrt(-0.05 * log(0.99))
  for (solver in c("cholesky", "sdd")) {
    control <- if (solver == "sdd") sdd_control(tolerance = 0, iterations = 2000, batch_size = 16)
    res <- ts_run(11, solver = solver, control = control)
    best <- which.max(res$y)
    expect_gt(res$y[best], 0.99)
    expect_lt(sqrt(sum((res$x[best, ] - ts_peak)^2)), radius)
  }
})

test_that("the history is consistent with the points evaluated", {
  x0 <- withr::with_seed(1, matrix(runif(16), 8, 2))
  res <- withr::with_seed(12, bo_thompson(
    ts_bumps, c(0, 0), c(1, 1), x = x0, steps = 3, batch = 5, kernel = ts_kernel,
    noise = 1e-6, solver = "cholesky", candidates = 200, rounds = 1,
    local_rounds = 2, threads = 1))
  expect_s3_class(res, c("sddgp_thompson", "sddgp_bo"))
  expect_identical(res$initial, 8L)
  expect_identical(res$x[1:8, ], x0)
  expect_identical(dim(res$x), c(23L, 2L))
  expect_true(all(res$x >= 0 & res$x <= 1))
  expect_identical(res$y, apply(res$x, 1, ts_bumps))
  h <- res$history
  expect_identical(h$step, 1:3)
  expect_identical(h$evaluations, c(13L, 18L, 23L))
  expect_identical(h$best, cummax(res$y)[h$evaluations])
  expect_true(all(h$seconds >= h$fit_seconds + h$maximise_seconds - 1e-9))
  # Given hyperparameters are kept, in the units of the box and of y; the
  # fit holds them in its standardised units.
  expect_identical(res$kernel$lengthscale, c(0.2, 0.2))
  expect_identical(res$noise, 1e-6)
  sc <- res$fit$scaling
  expect_equal(res$fit$kernel$lengthscale, 0.2 / sc$x_scale)
  expect_equal(res$fit$kernel$variance, 0.2 / sc$y_scale^2)
  expect_equal(res$fit$noise, 1e-6 / sc$y_scale^2)
  expect_identical(res$fit$n, 18L)
  out <- capture.output(print(res))
  expect_match(out[2], "23 evaluations in 3 steps")
})

test_that("one dimension and one sample per step work", {
  res <- withr::with_seed(19, bo_thompson(
    function(p) -(p - 0.42)^2, 0, 1, initial = 4, steps = 8, batch = 1,
    kernel = matern(5/2, lengthscale = 0.3, variance = 0.05), noise = 1e-8,
    solver = "cholesky", candidates = 50, rounds = 1, local_rounds = 5, threads = 1))
  expect_identical(dim(res$x), c(12L, 1L))
  expect_identical(res$history$evaluations, 5:12)
  # A value above -2.5e-5 is a point within 0.005 of the maximiser 0.42,
  # which 12 uniform points reach with probability 1 - 0.99^12 = 11%.
  expect_gt(max(res$y), -2.5e-5)
})

test_that("estimated hyperparameters come from the first fit and are kept", {
  res <- withr::with_seed(13, bo_thompson(
    ts_bumps, c(0, 0), c(1, 1), initial = 15, steps = 2, batch = 3,
    solver = "cholesky", candidates = 100, rounds = 1, local_rounds = 0, threads = 1))
  # The same random stream up to the first fit: the initial points, then
  # gp_sdd() estimating on them.
  first <- withr::with_seed(13, {
    x0 <- matrix(runif(30), 15, 2)
    gp_sdd(x0, apply(x0, 1, ts_bumps), solver = "cholesky", samples = 3, threads = 1)
  })
  expect_identical(res$x[1:15, ], x0)
  sc <- first$scaling
  expect_equal(res$kernel$lengthscale, first$kernel$lengthscale * sc$x_scale)
  expect_equal(res$kernel$variance, first$kernel$variance * sc$y_scale^2)
  expect_equal(res$noise, first$noise * sc$y_scale^2)
  # The last fit, on more data with another scaling, used the same values.
  last <- res$fit
  expect_equal(last$kernel$lengthscale * last$scaling$x_scale, res$kernel$lengthscale)
  expect_equal(last$kernel$variance * last$scaling$y_scale^2, res$kernel$variance)
  expect_null(last$estimation)
})

test_that("results are reproducible and do not depend on the number of threads", {
  control <- sdd_control(tolerance = 0, iterations = 300, batch_size = 8)
  a <- ts_run(14, solver = "sdd", control = control, threads = 1)
  b <- ts_run(14, solver = "sdd", control = control, threads = 2)
  expect_identical(a$x, b$x)
  expect_identical(a$y, b$y)
  expect_identical(a$history$best, b$history$best)
})

# A posterior model with 6 samples on [0, 1]^d for maximise_samples().
ts_model <- function(d, seed) {
  withr::with_seed(seed, {
    x <- matrix(runif(12 * d), 12, d)
    y <- sin(5 * rowSums(x))
    fit <- sddgp:::thompson_fit(x, y, matern(5/2, lengthscale = 0.3, variance = 1),
                                1e-4, list(solver = "cholesky",
                                           control = cholesky_control()),
                                batch = 6, threads = 1)
  })
  list(x = x, y = y, fit = fit, box = sddgp:::check_box(rep(0, d), rep(1, d)))
}

test_that("the shared candidate rounds return each sample's argmax over the candidates", {
  m <- ts_model(2, 15)
  search <- list(candidates = 300, rounds = 3, local_rounds = 0, local_points = 1)
  found <- withr::with_seed(16, sddgp:::maximise_samples(m$fit, m$x, m$y, m$box, 0.3,
                                                         search, 1))
  # The same candidates, drawn again from the same stream.
  cand <- withr::with_seed(16, do.call(rbind, lapply(1:3, function(r) {
    sddgp:::thompson_candidates(300, m$x, m$y, m$box, 0.3)
  })))
  expect_true(all(cand >= 0 & cand <= 1))
  # Brute force: every sample on every candidate, through simulate().
  paths <- as.matrix(simulate(m$fit, nsim = 6, newdata = cand, stored = TRUE))
  top <- apply(paths, 2, which.max)
  expect_equal(unname(found[, ]), unname(cand[top, ]))
  # The samples differ, and so do their maximisers.
  expect_gt(nrow(unique(round(cand[top, ], 8))), 1)
})

test_that("local search reaches each sample's maximum on a fine grid", {
  m <- ts_model(1, 17)
  grid <- matrix(seq(0, 1, length.out = 4001))
  paths <- as.matrix(simulate(m$fit, nsim = 6, newdata = grid, stored = TRUE))
  grid_max <- apply(paths, 2, max)
  spread <- apply(paths, 2, function(p) diff(range(p)))
  search <- list(candidates = 20, rounds = 1, local_rounds = 0, local_points = 10)
  coarse <- withr::with_seed(18, sddgp:::maximise_samples(m$fit, m$x, m$y, m$box, 0.3,
                                                          search, 1))
  search$local_rounds <- 15
  fine <- withr::with_seed(18, sddgp:::maximise_samples(m$fit, m$x, m$y, m$box, 0.3,
                                                        search, 1))
  at <- function(p) diag(as.matrix(simulate(m$fit, nsim = 6, newdata = p, stored = TRUE)))
  # The reported values are the samples' values at the points returned
  # (in the fit's standardised units of y).
  sc <- m$fit$scaling
  expect_equal(sc$y_center + sc$y_scale * attr(fine, "values"), at(fine), tolerance = 1e-10)
  # 20 candidates leave a visible gap; local search closes it to within
  # 1e-4 of each sample's range (the grid's spacing 2.5e-4 times a slope of
  # a few ranges per length scale bounds what the grid itself misses).
  expect_gt(max((grid_max - at(coarse)) / spread), 1e-3)
  expect_true(all(at(fine) > grid_max - 1e-4 * spread))
  expect_true(all(at(fine) >= at(coarse)))
})

test_that("bad inputs give classed errors naming the argument", {
  f <- function(p) sum(p)
  expect_error(bo_thompson(f, c(0, 1), c(1, 1)), class = "sddgp_error_argument",
               regexp = "domain is empty")
  expect_error(bo_thompson("sum", 0, 1), class = "sddgp_error_argument",
               regexp = "`objective` must be a function")
  err <- expect_error(withr::with_seed(1, bo_thompson(function(p) if (p[1] > 0.5) NA else 1,
                                                      0, 1, initial = 20)),
                      class = "sddgp_error_objective", regexp = "single finite number")
  expect_identical(err$arg, "objective")
  expect_error(withr::with_seed(1, bo_thompson(function(p) if (p[1] > 0.5) NA_real_ else 1,
                                               0, 1, initial = 20)),
               class = "sddgp_error_objective", regexp = "returned NA at x")
  # A failure in a later step is reported the same way.
  count <- 0
  grows <- function(p) {
    count <<- count + 1
    if (count > 10) NaN else sum(p)
  }
  expect_error(withr::with_seed(1, bo_thompson(grows, 0, 1, initial = 10, kernel = ts_kernel,
                                               noise = 1e-4, solver = "cholesky",
                                               candidates = 20, rounds = 1, threads = 1)),
               class = "sddgp_error_objective", regexp = "returned NaN")
  x2 <- matrix(c(0.1, 0.5, 0.2, 0.6), 2)
  expect_error(bo_thompson(f, c(0, 0, 0), c(1, 1, 1), x = x2), class = "sddgp_error_argument",
               regexp = "`x` has 2 columns but the box has 3")
  expect_error(bo_thompson(f, c(0, 0), c(1, 0.55), x = x2), class = "sddgp_error_argument",
               regexp = "`x` has 1 point outside the box.*row 2")
  expect_error(bo_thompson(f, c(0, 0), c(1, 1), x = x2, y = 1:3),
               class = "sddgp_error_argument", regexp = "`y` has length 3")
  expect_error(bo_thompson(f, c(0, 0), c(1, 1), x = x2, y = c(1, NA)),
               class = "sddgp_error_argument", regexp = "`y` contains 1 NA")
  expect_error(bo_thompson(f, c(0, 0), c(1, 1), y = 1:2), class = "sddgp_error_argument",
               regexp = "`y` is given without `x`")
  expect_error(bo_thompson(f, 0, 1, x = matrix(0.5)), class = "sddgp_error_argument",
               regexp = "at least 2 rows")
  for (arg in c("steps", "batch", "candidates", "rounds", "local_points")) {
    for (bad in list(0, 2.5, -1, "a", NA, c(1, 2))) {
      expect_error(do.call(bo_thompson, c(list(f, 0, 1), stats::setNames(list(bad), arg))),
                   class = "sddgp_error_argument", regexp = sprintf("`%s`", arg))
    }
  }
  expect_error(bo_thompson(f, 0, 1, local_rounds = -1), class = "sddgp_error_argument",
               regexp = "`local_rounds`")
  expect_error(bo_thompson(f, 0, 1, initial = 1), class = "sddgp_error_argument",
               regexp = "`initial` must lie in \\[2")
  expect_error(bo_thompson(f, 0, 1, noise = 0), class = "sddgp_error_argument",
               regexp = "`noise`")
  expect_error(bo_thompson(f, 0, 1, kernel = "linear"), class = "sddgp_error_argument",
               regexp = "`kernel`")
  expect_error(bo_thompson(f, c(0, 0), c(1, 1), kernel = matern(3/2, lengthscale = 1:3)),
               class = "sddgp_error_argument", regexp = "`lengthscale` has 3 values")
  expect_error(bo_thompson(f, 0, 1, solver = "qr"), class = "sddgp_error_argument",
               regexp = "`solver`")
  expect_error(bo_thompson(f, 0, 1, solver = "sdd", control = cg_control()),
               class = "sddgp_error_argument", regexp = "`control` was made by cg_control")
  expect_error(bo_thompson(f, 0, 1, threads = 0), class = "sddgp_error_argument",
               regexp = "`threads`")
  # The cholesky solver's size limit applies to the data at the last step,
  # and is checked before the objective is called.
  calls <- 0
  counted <- function(p) {
    calls <<- calls + 1
    0
  }
  expect_error(bo_thompson(counted, 0, 1, initial = 10, steps = 10, batch = 2000,
                           solver = "cholesky"),
               class = "sddgp_error_argument", regexp = "20010 x 20010")
  expect_identical(calls, 0)
})
