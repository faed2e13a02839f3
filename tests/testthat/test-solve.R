# The solver machinery shared by all solvers: the registry, problems,
# statuses, the code tables shared with C and the convergence warning.

test_that("run_solver() solves many right-hand sides at once", {
  d <- make_data(300, 2, seed = 31)
  ker <- matern(3/2, c(0.2, 0.3), 1)
  rhs <- cbind(d$y, withr::with_seed(1, matrix(rnorm(300 * 3), 300)))
  ref <- solve(ref_kernel(d$x, d$x, "matern32", c(0.2, 0.3), 1) + diag(0.1, 300), rhs)
  problem <- test_problem(d$x, ker, 0.1, rhs)
  ch <- sddgp:::run_solver("cholesky", problem, cholesky_control(), threads = 2)
  expect_equal(ch$alpha, ref, tolerance = 1e-8)
  expect_equal(ch$status, "exact")
  expect_gte(ch$seconds, 0)

  withr::local_seed(2)
  # One thread: this runs many tiny steps, where on a busy machine two
  # OpenMP threads mostly wait for each other (results are bitwise the same
  # for any thread count; see test-gp_sdd.R).
  sd <- sddgp:::run_solver("sdd", problem, sdd_control(tolerance = 0, iterations = 1200), threads = 1)
  for (j in 1:4) expect_lt(max_rel_err(sd$alpha[, j], ref[, j]), 1e-6)
  expect_equal(nrow(sd$trace), 12L)

  # Without a mean column every column is a sample system; the state of the
  # first run (its step sizes) is reused.
  problem2 <- test_problem(d$x, ker, 0.1, rhs[, 2:3], has_mean = FALSE)
  sd2 <- sddgp:::run_solver("sdd", problem2, sdd_control(tolerance = 0, iterations = 1200), threads = 1,
                            state = sd$state)
  expect_lt(max_rel_err(sd2$alpha, ref[, 2:3]), 1e-6)
  expect_true(all(is.na(sd2$trace$residual)))
  expect_identical(sd2$state, sd$state)
})

test_that("new_problem() adds N(0, noise) to the prior draw for the sample systems", {
  ker <- matern(3/2, c(0.3, 0.5), 1)
  x <- make_inputs(100, 2)
  y <- x[, 1]
  withr::local_seed(45)
  prior <- sddgp:::draw_prior(ker, 2L, 100L, 200L)
  p <- sddgp:::new_problem(x, y, ker, 0.25, prior, threads = 2)
  expect_true(p$has_mean)
  expect_equal(p$noise, rep(0.25, 100))
  expect_equal(p$xs, sddgp:::scale_inputs(x, ker))
  expect_equal(p$f0, sddgp:::prior_values(prior, ker, x, threads = 2))
  expect_equal(p$rhs, cbind(y, p$f0 + p$zeta), ignore_attr = TRUE)
  zeta <- p$zeta
  # 20000 noise draws of variance 0.25.
  expect_lt(abs(mean(zeta)), 6 * 0.5 / sqrt(20000))
  expect_lt(abs(var(as.vector(zeta)) / 0.25 - 1), 6 * sqrt(2 / 20000))
  expect_lt(abs(cor(zeta[, 1], zeta[, 2])), 6 / sqrt(100))
  # No targets: only the sample systems; no prior: only the mean.
  p2 <- sddgp:::new_problem(x, NULL, ker, 0.25, prior, threads = 2)
  expect_false(p2$has_mean)
  expect_equal(ncol(p2$rhs), 200L)
  p3 <- sddgp:::new_problem(x, y, ker, 0.25, NULL, threads = 2)
  expect_equal(p3$rhs, matrix(y), ignore_attr = TRUE)
  expect_null(p3$f0)
})

test_that("decode_status() names the C status codes; raise_status() raises classed conditions", {
  res <- function(code) list(status = code, iterations = 7L)
  expect_equal(sddgp:::decode_status(res(0L)), "iterations")
  expect_equal(sddgp:::decode_status(res(1L)), "tolerance")
  expect_equal(sddgp:::raise_status("tolerance", "cg", 7L, "advice"), "tolerance")
  expect_equal(sddgp:::decode_status(res(2L)), "diverged")
  err <- expect_error(sddgp:::raise_status("diverged", "cg", 7L, "Try this.", step_size = 3),
                      class = "sddgp_error_divergence",
                      regexp = "CG diverged after 7 iterations.*Try this\\.")
  expect_equal(err$iterations, 7L)
  expect_equal(err$step_size, 3)
  # An interrupt condition, not an error: caught the way a user's
  # tryCatch(interrupt = ) would.
  expect_equal(sddgp:::decode_status(res(3L)), "interrupted")
  cond <- tryCatch(sddgp:::raise_status("interrupted", "cg", 7L, ""), interrupt = identity)
  expect_s3_class(cond, "sddgp_interrupt")
  expect_match(conditionMessage(cond), "CG interrupted by the user after 7 iterations")
  expect_equal(sddgp:::decode_status(res(4L)), "out of memory")
  expect_error(sddgp:::raise_status("out of memory", "cg", 7L, ""), class = "sddgp_error_memory")
  expect_equal(sddgp:::decode_status(res(5L)), "time limit")
})

test_that("every code table R shares with C is the one C reports", {
  codes <- .Call(sddgp:::C_glue_codes)
  # Codes that C returns and R decodes.
  statuses <- sddgp:::solver_statuses
  expect_identical(codes$status[statuses], stats::setNames(seq_along(statuses) - 1L, statuses))
  expect_setequal(names(codes$status), statuses)
  # Kernel family codes, which R sends (kernel_spec()), are checked against
  # C's kernel table in test-kernels.R.
  # Choices that R sends as strings: every one R can send is in C's table.
  choices <- function(f, arg) eval(formals(f)[[arg]])
  estimators <- unlist(lapply(c(TRUE, FALSE), function(full) c(
    vapply(choices(sdd_control, "estimator"), function(e)
      sddgp:::loop_estimator("dual", e, full), ""),
    sddgp:::loop_estimator("primal", "coordinates", full))))
  expect_setequal(estimators, names(codes$estimator))
  expect_setequal(choices(sdd_control, "batch_sampling"), names(codes$batch_sampling))
  expect_setequal(choices(sdd_control, "precision"), names(codes$precision))
  expect_setequal(setdiff(choices(sdd_control, "warm_start"), "none"),
                  names(codes$warm_start))
  expect_setequal(choices(cabcd_control, "algorithm"), names(codes$algorithm))
  expect_setequal(choices(cabcd_control, "selection"), names(codes$selection))
  expect_setequal(c("weights", "noise"), names(codes$rng_stream))
  # An unknown choice is an internal error, not a silent default.
  ker <- matern(3/2, 1, 1)
  expect_error(.Call(sddgp:::C_kernel_matmul, matrix(0, 2, 1), matrix(0, 2, 1),
                     sddgp:::kernel_spec(ker), matrix(1, 2, 1), "half", 1L),
               "internal error: unknown precision \"half\"")
  expect_error(.Call(sddgp:::C_rng_normal, c(1, 2), "other", 3),
               "internal error: unknown stream \"other\"")
})

test_that("the registry names every solver's label, control and solve function", {
  for (s in names(sddgp:::solver_registry())) {
    info <- sddgp:::solver_info(s)
    expect_type(info$label, "character")
    expect_identical(info$control, get(paste0(s, "_control"), asNamespace("sddgp")))
    expect_identical(info$solve, get(paste0("solve_", s), asNamespace("sddgp")))
    expect_identical(info$control()$solver, s)
  }
  expect_error(sddgp:::solver_info("lbfgs"), "unknown solver")
})

test_that("new_seed() is driven by set.seed()", {
  s1 <- withr::with_seed(1, sddgp:::new_seed())
  s2 <- withr::with_seed(1, sddgp:::new_seed())
  s3 <- withr::with_seed(2, sddgp:::new_seed())
  expect_identical(s1, s2)
  expect_false(identical(s1, s3))
  expect_length(s1, 2)
  expect_true(all(s1 >= 0 & s1 < 2^32 & s1 == floor(s1)))
})

test_that("a fit that stops far from converged warns, and print() and summary() say so", {
  d <- make_data(300, 2, seed = 38)
  # A nearly constant kernel and no noise: SDD's residual barely moves.
  withr::local_seed(3)
  w <- expect_warning(
    fit <- gp_sdd(d$x, d$y, kernel = matern(5/2, 1e4, 1), noise = 1e-12,
                  control = sdd_control(tolerance = 0, iterations = 200), threads = 1),
    class = "sddgp_warning_not_converged")
  expect_s3_class(w, c("sddgp_warning_not_converged", "sddgp_warning", "warning",
                       "condition"), exact = TRUE)
  r <- fit$trace$residual[nrow(fit$trace)]
  expect_gt(r, 0.5)
  # The true relative residual of the standardised system is as bad.
  K <- ref_kernel(fit$x, fit$x, "matern52", 1e4, 1)
  true_r <- sqrt(sum((K %*% fit$alpha + 1e-12 * fit$alpha - fit$y)^2) / sum(fit$y^2))
  expect_gt(true_r, 0.5)
  expect_equal(w$residual, r)
  expect_equal(w$threshold, 0.5)
  expect_equal(w$status, "iterations")
  msg <- conditionMessage(w)
  expect_match(msg, sprintf("mean's system is %s, above the threshold 0.5",
                            format(r, digits = 3)), fixed = TRUE)
  expect_match(msg, "at the end of its iteration budget after 200 iterations", fixed = TRUE)
  expect_match(msg, paste("more `iterations` or a larger `time_limit` in sdd_control\\(\\),",
                          "or solver = \"cholesky\" \\(exact, about [0-9.]+ s here\\),",
                          "or solver = \"cg\"\\."))
  # The fit keeps its residual, which predict() corrects by.
  expect_match(msg, "At new points predict() corrects for the residual", fixed = TRUE)
  note <- sprintf("far from converged: relative residual %s > 0.5", format(r, digits = 3))
  expect_output(print(fit), note, fixed = TRUE)
  expect_match(summary(fit)$not_converged, note, fixed = TRUE)
  expect_output(print(summary(fit)), note, fixed = TRUE)

  # Stopped by the time limit after a step or so (averaging rate 1e-4),
  # from zero.
  expect_warning(
    fit_t <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.01,
                    control = sdd_control(tolerance = 0, iterations = 1e6, time_limit = 1e-9, cache = "never",
                                          warm_start = "none"),
                    threads = 1),
    class = "sddgp_warning_not_converged", regexp = "at its time limit of 1e-09 s after")
  # From the default warm start the same stop is not far from converged
  # (without a tolerance, no warning).
  fit_w <- expect_silent(gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.01,
                                control = sdd_control(tolerance = 0, iterations = 1e6,
                                                      time_limit = 1e-9, cache = "never"),
                                threads = 1))
  expect_equal(fit_w$status, "time limit")
  expect_lt(sddgp:::final_residual(fit_w), 0.5)
  expect_equal(fit_t$status, "time limit")

  # CG: white-noise targets, a long length scale, one unpreconditioned step.
  yw <- withr::with_seed(4, rnorm(300))
  expect_warning(
    gp_sdd(d$x, yw, kernel = matern(5/2, 3, 1), noise = 1e-6, solver = "cg",
           control = cg_control(tolerance = 0, max_iterations = 1, preconditioner = "none"),
           standardize = FALSE, threads = 1),
    class = "sddgp_warning_not_converged",
    regexp = paste("CG stopped far from converged.* after 1 iteration: .*`max_iterations`",
                   "or a larger `time_limit` in cg_control"))
})

test_that("converged fits, exact fits and DSG do not warn", {
  d <- make_data(300, 2, seed = 38)
  withr::local_seed(5)
  expect_no_warning(
    fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.01,
                  control = sdd_control(tolerance = 0, iterations = 300), threads = 1))
  expect_lt(fit$trace$residual[nrow(fit$trace)], 0.5)
  expect_null(summary(fit)$not_converged)
  expect_false(any(grepl("far from converged", capture.output(print(fit), summary(fit)))))
  expect_no_warning(gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.01,
                           solver = "cholesky"))
  # DSG's residual is the training fit's, which stays high on white noise
  # whatever the solver does: not a sign of non-convergence.
  yw <- withr::with_seed(4, rnorm(300))
  expect_no_warning(
    fd <- gp_sdd(d$x, yw, kernel = matern(5/2, 3, 1), noise = 1e-6, solver = "dsg",
                 control = dsg_control(iterations = 50), standardize = FALSE, threads = 1))
  expect_gt(fd$trace$residual[nrow(fd$trace)], 0.5)
})
