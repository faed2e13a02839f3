# sdd_control(): defaults, validation of every argument, printing, and the
# settings handed to the C solver.

test_that("sdd_control() has the paper's defaults", {
  ctl <- sdd_control()
  expect_s3_class(ctl, "sddgp_control")
  expect_identical(ctl$iterations, 10000L)
  expect_identical(ctl$batch_size, 512L)
  expect_null(ctl$step_size)
  expect_null(ctl$step_size_samples)
  expect_equal(ctl$momentum, 0.9)
  expect_equal(ctl$averaging, "geometric")
  expect_null(ctl$averaging_rate)
  expect_equal(ctl$batch_sampling, "uniform")
  expect_equal(ctl$tolerance, 0)
  expect_identical(ctl$check_every, 100L)
  expect_identical(ctl$probe_size, 256L)
  expect_equal(ctl$step_fraction, 0.8)
  expect_identical(ctl$features, 2000L)
  expect_equal(ctl$cache, "auto")
  expect_equal(ctl$cache_limit, 2e9)
  ctl2 <- sdd_control(iterations = 5, averaging = "none", batch_sampling = "permutation",
                      cache = "never", step_size = 2, averaging_rate = 0.5)
  expect_identical(ctl2$iterations, 5L)
  expect_equal(ctl2$averaging, "none")
  expect_equal(ctl2$batch_sampling, "permutation")
  expect_equal(ctl2$cache, "never")
  expect_equal(ctl2$step_size, 2)
  expect_equal(ctl2$averaging_rate, 0.5)
})

test_that("every sdd_control() argument is validated with a classed error", {
  bad <- list(
    iterations = list(0, -5, 2.5, NA, "100", Inf, c(1, 2), 2^31),
    batch_size = list(0, 1.5, NA, "512", -1),
    step_size = list(0, -1, NA, Inf, "1", c(1, 2)),
    step_size_samples = list(0, -1, NA, Inf, "1"),
    momentum = list(-0.1, 1, 1.5, NA, "0.9"),
    averaging = list("mean", NA, 1, c("none", "geometric", "x")),
    averaging_rate = list(0, -0.5, 1.5, NA, "0.1"),
    batch_sampling = list("random", NA, 2),
    tolerance = list(-1e-3, 2, NA, "0"),
    check_every = list(0, 1.5, NA, -10),
    probe_size = list(0, 2.5, NA, 2e6),
    step_fraction = list(0, -0.5, 1.5, NA),
    features = list(0, 10.5, NA, 2e6, "100"),
    cache = list("sometimes", NA, TRUE),
    cache_limit = list(-1, NA, "1e9", Inf)
  )
  for (arg in names(bad)) {
    for (value in bad[[arg]]) {
      args <- stats::setNames(list(value), arg)
      expect_error(do.call(sdd_control, args), class = "sddgp_error_argument",
                   regexp = paste0("`", arg, "`"), label = paste(arg, "=", deparse(value)))
    }
  }
  # The choices are listed.
  expect_error(sdd_control(cache = "x"),
               regexp = "`cache` must be one of \"auto\", \"always\", \"never\", not \"x\"")
  expect_error(sdd_control(averaging = "x"),
               regexp = "`averaging` must be one of \"geometric\", \"none\"")
  expect_error(sdd_control(batch_sampling = "x"),
               regexp = "`batch_sampling` must be one of \"uniform\", \"permutation\"")
  expect_error(sdd_control(iterations = 2.5), regexp = "whole number")
  expect_error(sdd_control(momentum = 1), regexp = "`momentum` must lie in \\[0, 1\\)")
  # Boundaries that are allowed.
  expect_silent(sdd_control(momentum = 0, tolerance = 1, step_fraction = 1,
                            averaging_rate = 1, cache_limit = 0, iterations = 1,
                            batch_size = 1, check_every = 1, probe_size = 1,
                            features = 1))
  # Unknown settings are not silently dropped.
  expect_error(sdd_control(steps = 10), "unused argument")
})

test_that("resolve_sdd_control() caps sizes and fills in data-dependent settings", {
  r <- sddgp:::resolve_sdd_control(sdd_control(iterations = 400), n = 300)
  expect_equal(r$batch_size, 300)
  expect_equal(r$probe_size, 256L)
  expect_equal(r$averaging_rate, 100 / 400)
  expect_equal(r$batch_code, 1L)
  expect_true(r$use_cache)  # 300^2 doubles are well under 2e9 bytes
  r2 <- sddgp:::resolve_sdd_control(sdd_control(iterations = 50, probe_size = 500,
                                                batch_sampling = "permutation"), n = 100)
  expect_equal(r2$averaging_rate, 1)  # 100 / 50 capped at 1
  expect_equal(r2$probe_size, 100)
  expect_equal(r2$batch_code, 2L)
  r3 <- sddgp:::resolve_sdd_control(sdd_control(averaging = "none", averaging_rate = 0.1), 10)
  expect_equal(r3$averaging_rate, 1)
  r4 <- sddgp:::resolve_sdd_control(sdd_control(averaging_rate = 0.3), 10)
  expect_equal(r4$averaging_rate, 0.3)
  # The cache budget: 8 n^2 bytes.
  expect_true(sddgp:::resolve_sdd_control(sdd_control(cache_limit = 8e4), 100)$use_cache)
  expect_false(sddgp:::resolve_sdd_control(sdd_control(cache_limit = 8e4 - 1), 100)$use_cache)
  expect_false(sddgp:::resolve_sdd_control(sdd_control(cache = "never"), 100)$use_cache)
  expect_true(sddgp:::resolve_sdd_control(sdd_control(cache = "always", cache_limit = 0),
                                          100)$use_cache)
})

test_that("batch_size larger than n works (capped at n)", {
  d <- make_data(50, 2, seed = 81)
  ref <- ref_posterior(d$x, d$y, family = "matern32", lengthscale = 0.3,
                       variance = 1, noise = 0.2)
  withr::local_seed(81)
  withr::local_options(sddgp.threads = 1)  # 500 tiny steps: no use for threads
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.2,
                standardize = FALSE,
                control = sdd_control(iterations = 500, batch_size = 1000,
                                      probe_size = 1000,
                                      batch_sampling = "permutation"))
  expect_lt(max_rel_err(fit$alpha, ref$alpha), 1e-6)
  expect_output(print(summary(fit)), "batch size 50 \\(permutation\\)")
})

test_that("print() shows the settings", {
  expect_output(print(sdd_control()), "SDD settings")
  expect_output(print(sdd_control()),
                "iterations 10000, batch size 512 \\(uniform\\), momentum 0.9")
  expect_output(print(sdd_control()), "step size auto \\(samples auto\\), averaging geometric \\(rate auto\\)")
  expect_output(print(sdd_control(step_size = 2, averaging_rate = 0.1)),
                "step size 2 \\(samples auto\\), averaging geometric \\(rate 0.1\\)")
  expect_output(print(sdd_control(check_every = 50, probe_size = 64)),
                "residual check every 50 iterations on 64 rows")
  expect_output(print(sdd_control(features = 300, cache = "never")),
                "300 random features for prior draws; kernel cache never")
  expect_output(expect_invisible(print(sdd_control())))
})
