# sddgp_future(): independent work as futures on the user's plan, with the
# results of a single process, bit for bit (R/future.R).

skip_if_not_installed("future")

# A fit with samples, made with `parallel` under the current plan.
# The samples' smaller step makes some of them slower than the mean, so
# that chunks of them stop at different steps.
future_fit <- function(parallel, control = sdd_control(iterations = 3000, batch_size = 32,
                                                       check_every = 10, tolerance = 0.02,
                                                       step_size_samples = 10)) {
  d <- make_data(400, 2, seed = 71)
  withr::with_seed(72, gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.3, 0.4), 1), noise = 0.01,
                              control = control, samples = 7, threads = 1,
                              parallel = parallel))
}

same_fit <- function(a, b) {
  expect_identical(b$alpha, a$alpha)
  expect_identical(b$alpha_samples, a$alpha_samples)
  expect_identical(b$iterations, a$iterations)
  expect_identical(b$status, a$status)
  expect_identical(b$trace[names(b$trace) != "seconds"], a$trace[names(a$trace) != "seconds"])
  expect_identical(b$fitted.values, a$fitted.values)
}

test_that("sddgp_future() validates its settings and the `parallel` argument", {
  expect_s3_class(sddgp_future(), "sddgp_future")
  expect_identical(sddgp_future(threads = 2)$threads, 2L)
  expect_error(sddgp_future(threads = 0), class = "sddgp_error_argument")
  expect_error(sddgp_future(chunks = 1.5), class = "sddgp_error_argument")
  expect_error(predict(future_fit(NULL), matrix(0.5, 1, 2), parallel = 2),
               class = "sddgp_error_argument")
  expect_output(print(sddgp_future(threads = 2)), "2 threads each")
})

test_that("chunked sample systems equal one run, with resumed chunks and a metric trace", {
  withr::local_options(future.plan = NULL)
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  single <- future_fit(NULL)
  resumed <- new.env()
  resumed$n <- 0L
  # Chunks stop at different steps here: the early ones are resumed.
  trace(sddgp:::resumed_piece, bquote(assign("n", .(resumed)$n + 1L, envir = .(resumed))),
        print = FALSE,
        where = asNamespace("sddgp"))
  on.exit(untrace(sddgp:::resumed_piece, where = asNamespace("sddgp")), add = TRUE)
  for (chunks in c(2L, 3L, 6L)) same_fit(single, future_fit(sddgp_future(chunks = chunks)))
  expect_gt(resumed$n, 0L)
  # Permutation batches resumed mid-epoch; trace metrics in the first chunk.
  d <- make_data(100, 2, seed = 73)
  control <- sdd_control(iterations = 3000, batch_size = 48, check_every = 10,
                         tolerance = 0.02, batch_sampling = "permutation",
                         test_x = d$x, test_y = d$y, trace_every = 25)
  same_fit(future_fit(NULL, control), future_fit(sddgp_future(chunks = 3), control))
  # A run to the iteration budget.
  control <- sdd_control(iterations = 200, batch_size = 32, tolerance = 1e-6)
  expect_warning(a <- future_fit(NULL, control), class = "sddgp_warning_not_converged")
  expect_warning(b <- future_fit(sddgp_future(chunks = 2), control),
                 class = "sddgp_warning_not_converged")
  same_fit(a, b)
})

test_that("a multisession plan gives the sequential fit, predictions and draws", {
  skip_on_cran()
  single <- future_fit(NULL)
  d <- make_data(300, 2, seed = 74)
  pred <- predict(single, d$x, se.fit = TRUE, chunk_size = 64)
  draws <- simulate(single, nsim = 5, newdata = d$x, seed = 75)
  old <- future::plan("multisession", workers = 2)
  on.exit(future::plan(old), add = TRUE)
  par <- sddgp_future()
  same_fit(single, future_fit(par))
  expect_identical(predict(single, d$x, se.fit = TRUE, chunk_size = 64, parallel = par), pred)
  expect_identical(simulate(single, nsim = 5, newdata = d$x, seed = 75, parallel = par), draws)
  # The option is the default of `parallel`.
  withr::local_options(sddgp.parallel = par)
  expect_identical(predict(single, d$x, se.fit = TRUE, chunk_size = 64), pred)
})

test_that("the loops' evaluations as futures give the sequential loops, random objectives too", {
  skip_on_cran()
  g <- function(x) sin(6 * x[1]) + x[2]
  noisy <- function(x) g(x) + rnorm(1, sd = 0.1)
  thompson <- function(parallel) withr::with_seed(3, bo_thompson(
    noisy, c(0, 0), c(1, 1), initial = 6, steps = 2, batch = 3, candidates = 50,
    rounds = 1, local_rounds = 1, threads = 1, parallel = parallel))
  meta <- function(parallel) withr::with_seed(4, mini_meta(
    noisy, lower = c(0, 0), upper = c(1, 1), budget = 14, noise = 0.01,
    kernel = matern(5/2, c(0.3, 0.3), 1), threads = 1, parallel = parallel))
  single <- list(thompson(NULL), meta(NULL))
  old <- future::plan("multisession", workers = 2)
  on.exit(future::plan(old), add = TRUE)
  shared <- list(thompson(sddgp_future()), meta(sddgp_future()))
  for (k in 1:2) {
    expect_identical(shared[[k]]$x, single[[k]]$x)
    expect_identical(shared[[k]]$y, single[[k]]$y)
  }
  # A script's objective, which uses a variable of the global environment
  # that the workers do not have.
  assign("sddgp_test_shift", 0.5, envir = globalenv())
  withr::defer(rm("sddgp_test_shift", envir = globalenv()))
  script <- eval(quote(function(x) sin(6 * x[1]) + sddgp_test_shift), globalenv())
  run_script <- function(parallel) withr::with_seed(5, bo_thompson(
    script, c(0, 0), c(1, 1), initial = 4, steps = 1, batch = 2, candidates = 50,
    rounds = 1, local_rounds = 1, threads = 1, parallel = parallel))
  expect_identical(run_script(sddgp_future())$y, run_script(NULL)$y)
  # A bad value from a worker stops the loop as it does here.
  bad <- function(x) if (x[1] > 2) 1 else NA_real_
  expect_error(bo_thompson(bad, c(0, 0), c(1, 1), initial = 4, steps = 1, batch = 2,
                           threads = 1, parallel = sddgp_future()),
               class = "sddgp_error_objective")
  expect_error(bo_thompson(g, c(0, 0), c(1, 1), parallel = "futures"),
               class = "sddgp_error_argument", regexp = "`parallel` must be NULL or made by sddgp_future")
})

test_that("gp_cv()'s folds as futures give the sequential cross-validation", {
  skip_on_cran()
  d <- make_data(150, 2, seed = 12)
  data <- data.frame(d$x, y = d$y)
  cv <- function(parallel, ...) withr::with_seed(13, gp_cv(y ~ ., data, folds = 3, ...,
                                                         threads = 1, parallel = parallel))
  sdd <- function(parallel) cv(parallel, samples = 4, control = sdd_control(iterations = 300))
  single <- list(cv(NULL), sdd(NULL))
  old <- future::plan("multisession", workers = 2)
  on.exit(future::plan(old), add = TRUE)
  shared <- list(cv(sddgp_future()), sdd(sddgp_future()))
  for (k in 1:2) {
    expect_identical(shared[[k]]$predictions, single[[k]]$predictions)
    expect_identical(shared[[k]]$coefficients, single[[k]]$coefficients)
    timed <- names(single[[k]]$folds) == "seconds"
    expect_identical(shared[[k]]$folds[!timed], single[[k]]$folds[!timed])
  }
  # Hyperparameters estimated on each fold, and samples drawn: random work.
  expect_false(identical(single[[1]]$coefficients[1, ], single[[1]]$coefficients[2, ]))
  expect_true(all(is.finite(single[[2]]$predictions$sd)))
})

test_that("a worker that dies is a classed error, not a hang", {
  skip_on_cran()
  skip_on_os("windows")
  fit <- future_fit(NULL)
  old <- future::plan("multisession", workers = 2)
  on.exit(future::plan(old), add = TRUE)
  # A worker that kills itself while it predicts.
  die <- function(ctx, xc, threads) tools::pskill(Sys.getpid(), tools::SIGKILL)
  expect_error(sddgp:::map_pieces(matrix(1:4, 4), list(1:2, 3:4), die, NULL,
                                  sddgp_future(), 1L, "dying"),
               class = "sddgp_error_worker")
  # And one that dies in a task of its own stream (the loops, gp_cv()).
  seeds <- withr::with_seed(1, sddgp:::next_streams(sddgp:::task_streams(), 2L))
  expect_error(sddgp:::stream_map(list(1, 2), function(i) tools::pskill(Sys.getpid(), tools::SIGKILL),
                                  seeds, sddgp_future()),
               class = "sddgp_error_worker")
})
