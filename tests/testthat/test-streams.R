# Random-number streams of independent tasks (R/streams.R).

test_that("each task has its own stream, and R's stream is left as it was", {
  draw <- function(item) runif(1)
  withr::local_seed(5)
  values <- unlist(stream_map(1:3, draw, next_streams(task_streams(), 3L), NULL))
  after <- runif(1)
  # By hand: R's next number, left in its stream, seeds L'Ecuyer-CMRG;
  # task k runs in the k-th substream after it.
  withr::local_seed(5)
  expected_after <- runif(1)
  withr::local_seed(5)
  seed <- sample.int(.Machine$integer.max, 1L)
  expected <- withr::with_seed(seed, {
    s <- .Random.seed
    vapply(1:3, function(k) {
      s <<- parallel::nextRNGStream(s)
      assign(".Random.seed", s, envir = globalenv())
      runif(1)
    }, 0)
  }, .rng_kind = "L'Ecuyer-CMRG")
  expect_identical(values, expected)
  expect_identical(after, expected_after)
  expect_identical(RNGkind()[1], "Mersenne-Twister")
  # The streams go on from one call to the next (the loops' steps).
  withr::local_seed(5)
  streams <- task_streams()
  expect_identical(c(unlist(stream_map(1:2, draw, next_streams(streams, 2L), NULL)),
                     unlist(stream_map(3, draw, next_streams(streams, 1L), NULL))), values)
  # So do the objective's evaluations.
  withr::local_seed(5)
  expect_identical(evaluate_objective(function(p) runif(1), matrix(0, 3, 1), task_streams()),
                   values)
})

test_that("the seeds are drawn from R's generator, not from the tasks' own", {
  # A lazily drawn seed would come from L'Ecuyer-CMRG once the first task
  # had switched to it.
  withr::local_seed(6)
  a <- stream_map(1:2, function(i) runif(1), next_streams(task_streams(), 2L), NULL)
  withr::local_seed(6)
  seeds <- next_streams(task_streams(), 2L)
  b <- stream_map(1:2, function(i) runif(1), seeds, NULL)
  expect_identical(a, b)
})
