# The default fit: the default tolerance (solve_tolerance()), the automatic
# choice of solver (solve_automatic()) and its cost model, against exact
# solves in base R.

test_that("the default tolerance is a tenth (SDD) or a twentieth (CG) of the noise sd over the targets' rms", {
  p <- list(rhs = cbind(c(3, -4, 0, 0), 1), noise = c(0.01, 0.03, 0.02, 0.02))
  # rms(b) = sqrt(25 / 4) = 2.5, mean noise 0.02.
  expect_equal(sddgp:::solve_tolerance(NULL, p), 0.1 * sqrt(0.02) / 2.5)
  # CG's is a twentieth: its extra iterations are cheap.
  expect_equal(sddgp:::solve_tolerance(NULL, p, "cg"), 0.05 * sqrt(0.02) / 2.5)
  expect_identical(sddgp:::solve_tolerance(1e-3, p), 1e-3)
  expect_identical(sddgp:::solve_tolerance(0, p), 0)
  # Capped at 0.1 (noise as large as the targets themselves).
  p$noise <- rep(100, 4)
  expect_equal(sddgp:::solve_tolerance(NULL, p), 0.1)
  # b = 0: alpha = 0 solves it at once, whatever the tolerance.
  p$rhs[, 1] <- 0
  expect_equal(sddgp:::solve_tolerance(NULL, p), 0.1)
})

test_that("format_seconds() picks the unit", {
  expect_equal(sddgp:::format_seconds(12.34), "12 s")
  expect_equal(sddgp:::format_seconds(200), "3.3 min")
  expect_equal(sddgp:::format_seconds(7200), "2 h")
})

test_that("the cost model counts the exact solve's, an SDD step's and a CG iteration's operations", {
  ops <- sddgp:::operation_seconds
  n <- 3000
  d <- 4
  expect_equal(sddgp:::exact_cost(n, d, 5, "reference"),
               ops$flop[["reference"]] * (n^3 / 3 + 2 * n^2 * 5) +
                 (ops$kernel_value + 4 * ops$kernel_value_per_dim) * n^2 / 2)
  expect_lt(sddgp:::exact_cost(n, d, 5, "optimised"), sddgp:::exact_cost(n, d, 5, "reference"))
  ctl <- sdd_control()
  # Cached: every value read, for the batch and the probes' share.
  expect_equal(sddgp:::sdd_step_cost(n, d, ctl), n * ops$cached_value * (512 + 256 / 100))
  expect_equal(sddgp:::sdd_step_cost(n, d, sdd_control(cache = "never")),
               n * (ops$kernel_value + d * ops$kernel_value_per_dim) * (512 + 256 / 100))
  expect_true(sddgp:::blas_kind() %in% c("reference", "optimised"))
  # A CG iteration: all n^2 values, read from the cache where it fits.
  expect_equal(sddgp:::cg_iteration_cost(n, d, cg_control()), n^2 * ops$cached_value)
  expect_equal(sddgp:::cg_iteration_cost(n, d, cg_control(cache = "never")),
               n^2 * (ops$kernel_value + d * ops$kernel_value_per_dim))
  # Vecchia's factor: for every point a search of the n / 2 earlier points
  # on average (a distance each), (m + 1)^2 kernel values and a Cholesky
  # factorisation of m^3 / 3 flops, with m capped at n - 1; the pivoted
  # Cholesky factor: `rank` kernel columns and n rank^2 flops.
  value <- ops$kernel_value + d * ops$kernel_value_per_dim
  search <- ops$neighbour_candidate + d * ops$kernel_value_per_dim
  expect_equal(sddgp:::cg_setup_cost(n, d, cg_control(), "vecchia"),
               n * (n / 2 * search + 101^2 * value + 100^3 / 3 * ops$plain_flop))
  expect_equal(sddgp:::cg_setup_cost(40, d, cg_control(), "vecchia"),
               40 * (20 * search + 40^2 * value + 39^3 / 3 * ops$plain_flop))
  expect_equal(sddgp:::cg_setup_cost(n, d, cg_control(rank = 50), "pivoted_cholesky"),
               n * (50 * value + 50^2 * ops$plain_flop))
})

# The exact posterior mean at the training inputs and at `xt`, from one
# kernel matrix K (x, x) and Ks (xt, x).
exact_means <- function(K, Ks, y, noise) {
  alpha <- solve(K + diag(noise, nrow(K)), y)
  list(alpha = alpha, train = drop(K %*% alpha), test = drop(Ks %*% alpha))
}

# solve_automatic() on the data of make_data(n, 3) with noise `noise`, the
# exact solver allowed up to `exact_max` points and SDD's default run
# `sdd`, and CG's preconditioner `preconditioner` (NULL: the automatic
# choice's); returns the solution and the exact alpha (base R).
automatic_solve <- function(n, noise, exact_max, sdd, seed = 70, preconditioner = NULL,
                            threads = 1L, cg = NULL) {
  d <- make_data(n, 3, seed = seed, noise_sd = sqrt(noise))
  ls <- c(0.3, 0.4, 0.5)
  fit <- list(n = n, d = 3L, x = d$x, kernel = matern(3/2, ls, 1))
  problem <- sddgp:::new_problem(d$x, d$y, fit$kernel, noise, NULL, threads)
  withr::local_seed(seed + 1)
  args <- list(fit, problem, threads, exact_max = exact_max, sdd = sdd)
  if (!is.null(preconditioner)) {
    args$cg <- cg_control(features = sdd$features, preconditioner = preconditioner)
  }
  if (!is.null(cg)) args$cg <- cg
  sol <- do.call(sddgp:::solve_automatic, args)
  H <- ref_kernel(d$x, d$x, "matern32", ls, 1) + diag(noise, n)
  list(sol = sol, H = H, y = d$y)
}

# The relative residual of automatic_solve()'s solution, in base R.
base_residual <- function(r) {
  alpha <- drop(r$sol$alpha)
  sqrt(sum((r$H %*% alpha - r$y)^2) / sum(r$y^2))
}

test_that("from noise 1e-1 to 1e-6 the default fit is as accurate as documented, or warns", {
  skip_on_cran()
  n <- 2500
  d <- make_data(n, 3, seed = 61, noise_sd = 0)
  xt <- make_inputs(400, 3, seed = 62)
  ls <- c(0.3, 0.4, 0.5)
  K <- ref_kernel(d$x, d$x, "matern32", ls, 1)
  Ks <- ref_kernel(xt, d$x, "matern32", ls, 1)
  chosen <- character()
  for (noise in 10^-(1:6)) {
    y <- d$y + withr::with_seed(63, rnorm(n, sd = sqrt(noise)))
    ex <- exact_means(K, Ks, y, noise)
    withr::local_seed(64)
    warned <- NULL
    fit <- withCallingHandlers(
      gp_sdd(d$x, y, kernel = matern(3/2, ls, 1), noise = noise, standardize = FALSE,
             threads = 1),
      sddgp_warning_not_converged = function(w) {
        warned <<- w
        invokeRestart("muffleWarning")
      })
    chosen[[format(noise)]] <- fit$solver
    expect_false(is.null(fit$choice), label = format(noise))
    if (!is.null(warned)) next  # said so: the fit's accuracy is not claimed
    if (fit$solver == "cholesky") {
      expect_equal(fit$alpha, ex$alpha, tolerance = 1e-6, label = format(noise))
      next
    }
    # SDD or CG.  Documented (?sdd_control, Stopping; ?cg_control): the
    # posterior mean at the training inputs within a tenth (SDD) or a
    # twentieth (CG) of the noise sd (root mean square) of the exact one, up
    # to the error of the residual's estimate; at new inputs alike.
    bound <- c(sdd = 0.1, cg = 0.05)[[fit$solver]] * sqrt(noise)
    k_alpha <- drop(K %*% fit$alpha)
    expect_lt(sqrt(mean((k_alpha - ex$train)^2)), 1.5 * bound, label = format(noise))
    expect_lt(sqrt(mean((predict(fit, xt) - ex$test)^2)), 1.5 * bound,
              label = format(noise))
    expect_equal(fit$status, "tolerance")
  }
  # CG with Vecchia's preconditioner, tried first, reaches its tolerance at
  # every noise down to 1e-6, where CG with the pivoted-Cholesky
  # preconditioner fell short and the exact solve ran (the tests below
  # reach that branch with it).  An optimised BLAS makes the exact solve
  # of these 2500 points cheaper than the preconditioner.
  expected <- if (sddgp:::blas_kind() == "optimised") "cholesky" else "cg"
  expect_equal(unname(chosen), rep(expected, 6))
})

test_that("the automatic choice and its fit are the same for 1 and 2 threads", {
  skip_on_cran()
  skip_if(sddgp:::blas_kind() == "optimised", "the exact solve runs at once")
  d <- make_data(2500, 3, seed = 65)
  fit <- function(threads) {
    withr::local_seed(66)
    gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.3, 0.4, 0.5), 1), noise = 0.1,
           standardize = FALSE, samples = 2, threads = threads)
  }
  one <- fit(1)
  two <- fit(2)
  expect_equal(one$solver, "cg")
  expect_identical(one$alpha, two$alpha)
  expect_identical(one$alpha_samples, two$alpha_samples)
  expect_identical(one$choice$reason, two$choice$reason)
  expect_match(one$choice$reason, paste(
    "CG, which reached its tolerance in [0-9]+ of the [0-9,]+ iterations the budget",
    "allowed; the budget is what the exact solve costs[.]$"))
  expect_output(print(one), "Solver chosen automatically: CG")
  expect_output(print(summary(one)), "Solver chosen automatically: CG")
  expect_identical(summary(one)$choice, one$choice)
  expect_equal(one$choice$cg_iterations, one$iterations)
  expect_null(one$choice$sdd_iterations)
  # The CG it kept ran to its tolerance, on every system.
  expect_equal(one$status, "tolerance")
  expect_lt(max(tail(one$trace, 1)[, c("residual", "residual_samples")]), one$tolerance)

  # SDD first (the Tanimoto kernel's order, here through CG's pivoted-Cholesky
  # preconditioner): SDD reaches its tolerance at this noise, alike for 1
  # and 2 threads, and is kept with the settings it ran, without its
  # giving-up rule.
  sdd_first <- function(threads) {
    automatic_solve(2500, 0.1, exact_max = 20000, sdd = sdd_control(), seed = 65,
                    preconditioner = "pivoted_cholesky", threads = threads)$sol
  }
  one <- sdd_first(1)
  two <- sdd_first(2)
  expect_equal(one$solver, "sdd")
  expect_identical(one$alpha, two$alpha)
  expect_identical(one$choice$reason, two$choice$reason)
  expect_match(one$choice$reason, "SDD, which reached its tolerance in [0-9,]+ of the [0-9,]+ steps")
  expect_null(one$control$stop_stalled)
  expect_equal(one$status, "tolerance")
})

test_that("small data are solved exactly at once; given solvers are not second-guessed", {
  d <- make_data(300, 2, seed = 67)
  fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.3, 0.6), 1), noise = 0.05, threads = 1)
  expect_equal(fit$solver, "cholesky")
  expect_match(fit$choice$reason, "exact, as it costs less than CG's preconditioner and 10 iterations")
  expect_null(fit$choice$cg_iterations)
  expect_null(fit$choice$sdd_iterations)
  # And less than 1000 SDD steps, where SDD comes first.
  p <- sddgp:::new_problem(d$x, d$y, fit$kernel, 0.05, NULL, 1L)
  sol <- sddgp:::solve_automatic(list(n = 300, d = 2L, x = d$x, kernel = fit$kernel), p, 1L,
                                 cg = cg_control(preconditioner = "pivoted_cholesky"))
  expect_match(sol$choice$reason, "exact, as it costs less than 1000 SDD steps")
  withr::local_seed(1)
  sdd <- gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.3, 0.6), 1), noise = 0.05,
                solver = "sdd", threads = 1)
  expect_null(sdd$choice)
  expect_equal(sdd$solver, "sdd")
})

test_that("an SDD run short of its default tolerance warns with the residual and the tolerance", {
  d <- make_data(300, 2, seed = 68)
  withr::local_seed(2)
  w <- expect_warning(
    fit <- gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 1e-4, samples = 2,
                  control = sdd_control(iterations = 200), threads = 1),
    class = "sddgp_warning_not_converged")
  tol <- 0.1 * sqrt(1e-4) / sqrt(mean(fit$y^2))
  expect_equal(fit$tolerance, tol)
  expect_equal(w$threshold, tol)
  expect_equal(w$residual, tail(fit$trace$residual, 1))
  expect_gt(w$residual, tol)
  expect_equal(w$status, "iterations")
  expect_match(conditionMessage(w), sprintf(
    "after 200 iterations without reaching its tolerance: the estimated relative residual is %s (samples %s) against the tolerance %s",
    format(w$residual, digits = 3), format(tail(fit$trace$residual_samples, 1), digits = 3),
    format(signif(tol, 3))), fixed = TRUE)
  note <- sprintf("not converged: relative residual %s", format(w$residual, digits = 3))
  expect_output(print(fit), note, fixed = TRUE)
  expect_output(print(fit), sprintf("(tolerance %s)", format(signif(tol, 3))), fixed = TRUE)
  expect_match(summary(fit)$not_converged, note, fixed = TRUE)
  expect_equal(summary(fit)$tolerance, tol)

  # The automatic choice's trial gives up when the residuals seem too slow
  # to make it (a heuristic, not a setting of sdd_control()): here well
  # before its budget, with status "stalled".
  ctl <- sdd_control(iterations = 3000)
  ctl$stop_stalled <- TRUE
  withr::local_seed(2)
  stalled <- suppressWarnings(gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 1e-6,
                                     control = ctl, threads = 1))
  expect_equal(stalled$status, "stalled")
  expect_gte(stalled$iterations, 1000L)
  expect_lt(stalled$iterations, 3000L)
  expect_equal(stalled$iterations %% 100L, 0L)
})

test_that("the cost model counts fingerprints' kernel values by the work done", {
  x <- withr::with_seed(1, matrix(stats::rbinom(60 * 1024, 1, 0.05), 60, 1024))
  x[rowSums(x) == 0, 1L] <- 1
  y <- withr::with_seed(2, stats::rnorm(60))
  bits <- gp_sdd(x, y, kernel = tanimoto(1, 0), noise = 0.1, solver = "cholesky",
                 threads = 1)
  # Bit-packed rows: 16 words of 64 bits, not 1024 coordinates.
  expect_identical(sddgp:::cost_dims(bits), 16)
  counts <- 2 * x
  dense <- gp_sdd(counts, y, kernel = tanimoto(1, 0), noise = 0.1, solver = "cholesky",
                  threads = 1)
  expect_identical(sddgp:::cost_dims(dense), 1024L)
  skip_if_not_installed("Matrix")
  sparse <- gp_sdd(methods::as(Matrix::Matrix(counts, sparse = TRUE), "CsparseMatrix"),
                   y, kernel = tanimoto(1, 0), noise = 0.1, solver = "cholesky", threads = 1)
  expect_equal(sddgp:::cost_dims(sparse), 2 * sum(counts != 0) / 60)
  # Fewer dimensions, more SDD steps as cheap as the exact solve.
  expect_gt(floor(sddgp:::exact_cost(5000, 16, 1) /
                    sddgp:::sdd_step_cost(5000, 16, sdd_control(cache = "never"))),
            floor(sddgp:::exact_cost(5000, 1024, 1) /
                    sddgp:::sdd_step_cost(5000, 1024, sdd_control(cache = "never"))))
})

test_that("CG takes over from SDD where SDD falls short, also beyond the exact solver's reach", {
  skip_on_cran()
  # SDD first: the order of the Tanimoto kernel, reached here through CG's
  # pivoted-Cholesky preconditioner.  Beyond exact_max the budget is twice
  # SDD's default run (here 300 steps): SDD's run falls short, and CG, from
  # SDD's iterate, gets what is left after its preconditioner (about 100
  # iterations on 1500 points), enough for noise 1e-3.
  pc <- "pivoted_cholesky"
  sdd <- sdd_control(iterations = 300)
  r <- automatic_solve(1500, 1e-3, exact_max = 1000, sdd = sdd, preconditioner = pc)
  sol <- r$sol
  expect_equal(sol$solver, "cg")
  expect_equal(sol$status, "tolerance")
  expect_match(sol$choice$reason, paste(
    "CG, which reached its tolerance in [0-9]+ of the [0-9,]+ iterations the budget",
    "allowed, after SDD did not reach its tolerance [0-9.e-]+ \\(relative residual",
    "[0-9.e-]+ after 300 of the 300 steps the budget allowed, [0-9.]+ s\\); the budget",
    "is twice what SDD's default 300 steps cost[.]$"))
  expect_equal(sol$choice$sdd_iterations, 300L)
  expect_gt(sol$choice$sdd_residual, sol$tolerance)
  ctl <- cg_control(preconditioner = pc)
  step <- sddgp:::sdd_step_cost(1500, 3, sdd)
  allowed <- floor((2 * 300 * step - 300 * step - sddgp:::cg_setup_cost(1500, 3, ctl, pc)) /
                     sddgp:::cg_iteration_cost(1500, 3, ctl))
  expect_gt(allowed, 50)
  expect_equal(sol$control$max_iterations, allowed)
  expect_lte(sol$choice$cg_iterations, allowed)
  # Its relative residual, computed in base R, is below the tolerance.
  expect_lt(base_residual(r), sol$tolerance)
  # What CG reached is on record.
  expect_equal(sol$choice$cg_residual, tail(sol$trace$residual, 1))

  # Neither makes it (noise 1e-6): CG's iterate stands (CG only lowers the
  # error's H-norm from where it starts, SDD's iterate) and says why; the
  # fit then warns, as gp_sdd() checks the status.
  r <- automatic_solve(1500, 1e-6, exact_max = 1000, sdd = sdd, preconditioner = pc)
  sol <- r$sol
  expect_equal(sol$solver, "cg")
  expect_equal(sol$status, "iterations")
  expect_match(sol$choice$reason, paste(
    "CG's last iterate, as SDD did not reach its tolerance [0-9.e-]+ \\(relative residual",
    "[0-9.e-]+ after 300 of the 300 steps the budget allowed, [0-9.]+ s\\) and CG did not",
    "reach its tolerance [0-9.e-]+ \\(relative residual [0-9.e-]+ after ([0-9]+) of the \\1",
    "iterations the budget allowed"))
  expect_equal(base_residual(r), sol$choice$cg_residual, tolerance = 0.05)

  # Within exact_max, CG gets what is left of the exact solve's cost, and
  # the exact solver runs when CG does not make it either.
  r <- automatic_solve(2500, 1e-6, exact_max = 20000, sdd = sdd_control(), preconditioner = pc)
  expect_equal(r$sol$solver, "cholesky")
  expect_match(r$sol$choice$reason, paste(
    "exact, as SDD .* and CG did not reach its tolerance .*; the budget is what the",
    "exact solve costs[.]$"))
  expect_equal(drop(r$sol$alpha), solve(r$H, r$y), tolerance = 1e-6)
})

test_that("with Vecchia's preconditioner CG runs first, and its iterate stands if it falls short", {
  skip_on_cran()
  # The default preconditioner takes CG, run first, to the tolerance in the
  # cases where the pivoted Cholesky one fell short, each within a small
  # part of its budget.
  for (case in list(list(1500, 1000, sdd_control(iterations = 3000)),
                    list(2500, 20000, sdd_control()))) {
    r <- automatic_solve(case[[1]], 1e-6, exact_max = case[[2]], sdd = case[[3]])
    expect_equal(r$sol$solver, "cg")
    expect_equal(r$sol$status, "tolerance")
    expect_identical(r$sol$preconditioner, "Vecchia's, 100 neighbours")
    expect_null(r$sol$choice$sdd_iterations)
    expect_lt(r$sol$choice$cg_iterations * 4, r$sol$control$max_iterations)
    expect_lt(base_residual(r), r$sol$tolerance)
  }

  # A budget that leaves CG 12 iterations after its preconditioner (of 2
  # neighbours), too few at noise 1e-6, and SDD too little: CG's iterate
  # stands.
  ctl <- cg_control(neighbours = 2)
  setup <- sddgp:::cg_setup_cost(1500, 3, ctl, "vecchia")
  iteration <- sddgp:::cg_iteration_cost(1500, 3, ctl)
  steps <- ceiling((setup + 12.5 * iteration) / (2 * sddgp:::sdd_step_cost(1500, 3, sdd_control())))
  r <- automatic_solve(1500, 1e-6, exact_max = 1000, sdd = sdd_control(iterations = steps),
                       cg = ctl)
  sol <- r$sol
  expect_equal(sol$solver, "cg")
  expect_equal(sol$status, "iterations")
  expect_equal(sol$control$max_iterations, 12L)
  expect_match(sol$choice$reason, paste(
    "CG's last iterate, as CG did not reach its tolerance [0-9.e-]+ \\(relative residual",
    "[0-9.e-]+ after 12 of the 12 iterations the budget allowed, [0-9.]+ s\\) and too",
    "little of the budget was left for SDD; the budget is twice what SDD's default",
    "[0-9,]+ steps cost[.]$"))
  expect_equal(base_residual(r), sol$choice$cg_residual, tolerance = 0.05)
})
