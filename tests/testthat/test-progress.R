# Progress bars: when they are shown, what they say, and that showing them
# changes no result.

# The bars of a run in a fresh R, as a terminal that cannot redraw shows
# them (a line per redraw): the text written to stderr.  CLI_TICK_TIME
# (milliseconds between cli's redraws; 3000 outside interactive sessions)
# is read when cli loads, hence the separate process.
progress_in_subprocess <- function(fun) {
  skip_if_not_installed("callr")
  err <- withr::local_tempfile(fileext = ".txt")
  value <- callr::r(function(fun) {
    options(sddgp.progress = TRUE, sddgp.threads = 2, cli.progress_show_after = 0,
            cli.dynamic = FALSE, cli.ansi = FALSE, cli.num_colors = 1, cli.width = 200)
    library(sddgp)
    fun()
  }, list(fun = fun), env = c(callr::rcmd_safe_env(), CLI_TICK_TIME = "10"), stderr = err)
  list(value = value, text = paste(readLines(err, warn = FALSE), collapse = "\n"))
}

test_that("sddgp_progress() follows the argument, then the option, then interactive()", {
  withr::local_options(sddgp.progress = NULL)
  expect_identical(sddgp_progress(), interactive())
  expect_false(sddgp_progress()) # the tests run non-interactively
  withr::local_options(sddgp.progress = TRUE)
  expect_true(sddgp_progress())
  expect_false(sddgp_progress(FALSE))
  withr::local_options(sddgp.progress = "yes")
  expect_error(sddgp_progress(), class = "sddgp_error_argument",
               regexp = "`options(sddgp.progress)`", fixed = TRUE)
  expect_error(sddgp_progress(NA), class = "sddgp_error_argument", regexp = "`progress`")
})

test_that("no bar is made when progress is off", {
  withr::local_options(sddgp.progress = FALSE)
  expect_null(progress_solver("SDD", 200))
  expect_null(progress_estimation())
})

test_that("a failing redraw returns quietly instead of stopping the fit", {
  withr::local_options(sddgp.progress = TRUE)
  tick <- (function() progress_solver("CG", 10))() # its bar closed with that frame
  expect_null(tick(3L, 0.5))
})

test_that("the C loops, estimation and prediction show bars with steps, residual and ETA", {
  res <- progress_in_subprocess(function() {
    d <- withr::with_seed(403, list(x = matrix(runif(2000), ncol = 2), y = rnorm(1000)))
    ker <- matern(3/2, 0.3, 1)
    fit <- function(solver, control, n = 1000) {
      gp_sdd(d$x[1:n, ], d$y[1:n], kernel = ker, noise = 0.01, solver = solver,
             control = control)
    }
    # Each loop runs for half a second or more on an idle machine: the C
    # loops call back at most every 0.1 s, so a shorter run shows no bar.
    suppressWarnings({ # not converged
      fit("sdd", sdd_control(iterations = 3000, tolerance = 1e-9, cache = "never"))
      fit("sgd", sgd_control(iterations = 1000, tolerance = 0, cache = "never"))
    })
    fit("dsg", dsg_control(iterations = 300), n = 300)
    f <- fit("cabcd", cabcd_control(iterations = 100, tolerance = 0))
    gp_sdd(d$x[1:300, ], d$y[1:300], solver = "cholesky", estimation = estimation_control(
      subset_size = 300, pilot_size = 100, polish_iterations = 1))
    gp_sdd(d$x, d$y, solver = "cholesky", estimation = estimation_control(
      method = "vecchia", subset_size = 100, pilot_size = 100))
    invisible(predict(f, matrix(runif(4e4), ncol = 2), chunk_size = 500))
    gp_cv(d$x, d$y, folds = 5, kernel = ker, noise = 0.01)
    TRUE
  })
  expect_match(res$text, "SDD .* [0-9]+/3000 steps \\| residual [0-9.e-]+ \\(tolerance 1e-09\\) \\| ETA")
  expect_match(res$text, "SGD .* [0-9]+/1000 steps \\| residual [0-9.e-]+ \\| ETA")
  expect_match(res$text, "DSG .* [0-9]+/300 steps \\| residual")
  expect_match(res$text, "CaBCD .* [0-9]+/100 steps \\| residual")
  expect_match(res$text, "Estimating hyperparameters .*stage 3/3 on 300 points \\| [0-9]+ likelihood evaluations")
  expect_match(res$text, paste("Estimating hyperparameters .*Vecchia's likelihood of all 1000",
                                "points, round [12]/2 \\| [0-9]+ likelihood evaluations"))
  expect_match(res$text, "Predicting")
  expect_match(res$text, "Cross-validating folds")
})

test_that("the fit is the same with and without a bar, and silent without", {
  d <- make_data(1000, 2, seed = 401)
  ker <- matern(3/2, 0.3, 1)
  fit <- function(solver, control) {
    withr::with_seed(401, gp_sdd(d$x, d$y, kernel = ker, noise = 0.01, solver = solver,
                                 control = control))
  }
  # Runs of about half a second: the loops call back every 0.1 s.
  runs <- list(sdd = sdd_control(iterations = 300, tolerance = 0, cache = "never"),
               cg = cg_control(tolerance = 1e-12))
  for (solver in names(runs)) {
    withr::with_options(list(sddgp.progress = TRUE, cli.progress_show_after = 0),
                        utils::capture.output(on <- fit(solver, runs[[solver]]),
                                              type = "message"))
    withr::local_options(sddgp.progress = FALSE)
    silent <- utils::capture.output(off <- fit(solver, runs[[solver]]), type = "message")
    expect_identical(silent, character(), info = solver)
    expect_identical(on$alpha, off$alpha, info = solver)
  }
})

test_that("the estimation bar names each stage and counts likelihood evaluations", {
  calls <- 0L
  objective <- list(fn = function(par) {
    calls <<- calls + 1L
    sum(par^2)
  }, gr = function(par) 2 * par)
  withr::local_options(sddgp.progress = TRUE)
  values <- (function() {
    bar <- progress_estimation()
    wrapped <- progress_stage(bar, "stage 2/2 on 400 points", objective)
    c(wrapped$fn(c(1, 2)), wrapped$fn(3))
  })()
  expect_identical(values, c(5, 9))
  expect_identical(calls, 2L)
  withr::local_options(sddgp.progress = FALSE)
  expect_null(progress_estimation())
  expect_identical(progress_stage(NULL, "stage 1/1 on 100 points", objective), objective)
})

test_that("hyperparameter estimation gives the same estimates with a bar", {
  d <- make_data(200, 1, seed = 402)
  est <- function() withr::with_seed(402, gp_sdd(
    d$x, d$y, solver = "cholesky",
    estimation = estimation_control(subset_size = 200, pilot_size = 50, polish_iterations = 1)))
  shown <- withr::with_options(list(sddgp.progress = TRUE), est())
  withr::local_options(sddgp.progress = FALSE)
  expect_identical(shown$kernel, est()$kernel)
})

test_that("progress_along() gives the indices, with or without a bar", {
  pieces <- chunks(10L, 3L)
  withr::local_options(sddgp.progress = FALSE)
  expect_identical(progress_along(pieces, "x"), seq_along(pieces))
  withr::local_options(sddgp.progress = TRUE)
  seen <- (function() {
    seen <- integer()
    for (i in progress_along(pieces, "Predicting")) seen <- c(seen, pieces[[i]][1L])
    seen
  })()
  expect_identical(seen, c(1L, 4L, 7L, 10L))
})
