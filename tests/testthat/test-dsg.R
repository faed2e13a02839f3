# Doubly stochastic functional gradients: dsg_control() (defaults and
# validation), the replayed random-feature basis against an explicit R
# evaluation, the mean against the exact posterior (base R), convergence
# with the budget, heteroscedastic noise, thread independence, predict() /
# simulate(), divergence and interrupts.
#
# The runs here are small (T r B = a few million feature evaluations per
# fit) and use one thread: DSG's many short steps gain nothing from a
# second thread on a busy machine, where waiting for it can cost many
# times the work (results are bitwise the same for any thread count;
# tested below).

dsg_fit <- function(d, control, seed = 1, samples = 0, noise = 0.1, threads = 1) {
  withr::local_seed(seed)
  gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = noise, standardize = FALSE,
         solver = "dsg", control = control, samples = samples, threads = threads)
}

test_that("dsg_control() has documented defaults and keeps its settings", {
  ctl <- dsg_control()
  expect_s3_class(ctl, "sddgp_control_dsg")
  expect_s3_class(ctl, "sddgp_control")
  expect_identical(ctl$iterations, 500L)
  expect_identical(ctl$batch_size, 256L)
  expect_identical(ctl$block_size, 64L)
  expect_null(ctl$step_size)
  expect_identical(ctl$step_decay, Inf)
  expect_equal(ctl$step_fraction, 0.5)
  expect_identical(ctl$check_every, 50L)
  expect_identical(ctl$probe_size, 256L)
  expect_identical(ctl$features, 2000L)
  ctl2 <- dsg_control(iterations = 10, batch_size = 8, block_size = 4, step_size = 0.5,
                      step_decay = 20, step_fraction = 0.9, check_every = 5,
                      probe_size = 30, features = 100)
  expect_identical(ctl2$iterations, 10L)
  expect_identical(ctl2$block_size, 4L)
  expect_equal(ctl2$step_size, 0.5)
  expect_equal(ctl2$step_decay, 20)
  expect_output(print(ctl2), "Settings of solver \"dsg\" \\(doubly stochastic functional gradients\\)")
  expect_output(print(dsg_control()), "step_size +auto")
})

test_that("dsg_settings() holds exactly the fields of dsg_options and of its basis", {
  s <- sddgp:::dsg_settings(dsg_control(block_size = 16), 0.3, c(1, 2))
  expect_named(s, c("iterations", "batch_size", "step_size", "step_decay", "check_every",
                    "probe_size", "seed", "block", "feature_seed"))
  expect_identical(s[c("step_size", "block")], list(step_size = 0.3, block = 16L))
  expect_identical(s$feature_seed, c(1, 2))
})

test_that("every dsg_control() argument is validated with a classed error", {
  bad <- list(
    iterations = list(0, -1, 2.5, NA, "100", Inf, c(1, 2)),
    batch_size = list(0, 1.5, NA, "256", 2e6),
    block_size = list(0, 2.5, NA, "64", 2e5),
    step_size = list(0, -1, NA, Inf, "1", c(1, 2)),
    step_decay = list(0, -5, NA, "10", c(1, 2), NaN),
    step_fraction = list(0, -0.5, 1.5, NA),
    check_every = list(0, 1.5, NA, -10),
    probe_size = list(0, 2.5, NA, 2e6),
    features = list(0, 10.5, NA, 2e6, "100")
  )
  for (arg in names(bad)) {
    for (value in bad[[arg]]) {
      args <- stats::setNames(list(value), arg)
      expect_error(do.call(dsg_control, args), class = "sddgp_error_argument",
                   regexp = paste0("`", arg, "`"), label = paste(arg, "=", deparse(value)))
    }
  }
  # More features in a run than an R matrix can index.
  expect_error(dsg_control(iterations = 1e6, block_size = 1e4),
               class = "sddgp_error_argument", regexp = "`block_size` times `iterations`")
  expect_silent(dsg_control(iterations = 1, batch_size = 1, block_size = 1, step_fraction = 1,
                            check_every = 1, probe_size = 1, features = 1, step_decay = 1e-3))
  expect_error(dsg_control(steps = 10), "unused argument")
  # A control of another solver is refused.
  d <- make_data(20, 2)
  expect_error(gp_sdd(d$x, d$y, kernel = matern(3/2, 0.3, 1), noise = 0.1, solver = "dsg",
                      control = sdd_control()),
               class = "sddgp_error_argument", regexp = "use dsg_control\\(\\)")
})

test_that("the replayed basis is sqrt(2 sigma^2 / r) cos(omega' x + b) of the seed's features", {
  withr::local_options(sddgp.threads = 1)
  # A tiny basis evaluated explicitly in R: T = 3 blocks of r = 2 features,
  # drawn with the package's feature generator (features t r .. t r + r - 1
  # of the seed's sequence belong to block t).
  ker <- matern(5/2, c(0.7, 1.3), 2.5)
  basis <- list(type = "dsg", seed = c(12345, 678), block = 2L, iterations = 3L)
  feats <- .Call(sddgp:::C_rff_draw, sddgp:::kernel_spec(ker), 6L, 2L, basis$seed)
  x <- make_inputs(7, 2)
  A <- withr::with_seed(3, matrix(rnorm(12), 6, 2))
  xs <- sweep(x, 2, c(0.7, 1.3), "/")
  phi <- sqrt(2 * 2.5 / 2) * cos(xs %*% t(feats[[1]]) + rep(feats[[2]], each = 7))
  expect_equal(sddgp:::dsg_matmul(basis, ker, x, A, threads = 2), phi %*% A,
               tolerance = 1e-12)

  # predict() of a (tiny) fit is that formula with the fit's basis and
  # coefficients, in the fit's standardised units.
  d <- make_data(20, 2)
  fit <- withr::with_seed(1, gp_sdd(d$x, d$y, kernel = ker, noise = 0.1, solver = "dsg",
                                    control = dsg_control(iterations = 3, block_size = 2,
                                                          batch_size = 8),
                                    threads = 1))
  expect_identical(fit$basis[c("block", "iterations")], list(block = 2L, iterations = 3L))
  expect_identical(fit$basis$seed, fit$state$feature_seed)
  feats <- .Call(sddgp:::C_rff_draw, sddgp:::kernel_spec(ker), 6L, 2L, fit$basis$seed)
  sc <- fit$scaling
  xfs <- sweep(sweep(x, 2, sc$x_center), 2, sc$x_scale * c(0.7, 1.3), "/")
  phi_fit <- sqrt(2 * 2.5 / 2) * cos(xfs %*% t(feats[[1]]) + rep(feats[[2]], each = 7))
  expect_equal(unname(predict(fit, x)),
               drop(sc$y_center + sc$y_scale * phi_fit %*% fit$alpha), tolerance = 1e-12)

  # Scaling: each block of r features averages to the kernel, so the mean
  # over blocks of phi(x) phi(x')' estimates k(x, x') (from ref_kernel).
  # Feature j adds (sigma^2 / F)(cos(w'(x - x')) + cos(w'(x + x') + 2b)), a
  # bracket of variance <= 1, so with F = 500 x 20 features the sd is at
  # most sigma^2 / 100 = 0.025: tolerance 5 sd.
  big <- list(type = "dsg", seed = c(99, 1), block = 20L, iterations = 500L)
  F <- 500 * 20
  feats <- .Call(sddgp:::C_rff_draw, sddgp:::kernel_spec(ker), as.integer(F), 2L, big$seed)
  phi_x <- sqrt(2 * 2.5 / 20) * cos(xs %*% t(feats[[1]]) + rep(feats[[2]], each = 7))
  est <- sddgp:::dsg_matmul(big, ker, x, t(phi_x) / 500, threads = 2)
  expect_lt(max(abs(est - ref_kernel(x, x, "matern52", c(0.7, 1.3), 2.5))), 5 * 2.5 / 100)
})

# 300 training points, m test inputs and the exact posterior there.
dsg_problem <- function(seed, m) {
  d <- make_data(300, 2, seed = seed)
  xt <- make_inputs(m, 2)
  list(d = d, xt = xt, ref = ref_posterior(d$x, d$y, xt, family = "matern32",
                                           lengthscale = 0.3, variance = 1, noise = 0.1))
}

test_that("the DSG mean approaches the exact posterior mean, more closely with more steps", {
  withr::local_options(sddgp.threads = 1)
  p <- dsg_problem(41, 200)
  d <- p$d; xt <- p$xt; ref <- p$ref
  err <- function(fit) sqrt(mean((predict(fit, xt) - ref$mean)^2)) / sqrt(mean(ref$mean^2))
  long <- dsg_fit(d, dsg_control(iterations = 300, block_size = 32, batch_size = 64))
  short <- dsg_fit(d, dsg_control(iterations = 10, block_size = 32, batch_size = 64))
  # Error sources: the Monte Carlo error of T r = 9600 random features and
  # of the batches (~ 1 / sqrt(T r) relative, a few per cent) and the
  # unfinished optimisation, which acts like extra regularisation of about
  # n / sum(gamma_t) (0.4 against the noise 0.1 here). Measured 0.030-0.042
  # over seeds; 0.08 is the bound.
  expect_lt(err(long), 0.08)
  # 30 times fewer steps leave the optimisation far from done: measured
  # 0.14-0.15, a clear margin over the long run's error.
  expect_gt(err(short), 2.5 * err(long))
  expect_equal(long$status, "iterations")
  expect_identical(long$iterations, 300L)
  expect_identical(long$basis$type, "dsg")
  expect_length(long$alpha, 300L * 32L)
  # The automatic step: half the stability limit 2 / c, with curvature
  # c = lambda_max(K + lambda I) / n + sigma^2 / r + 4 sigma^2 / sqrt(r B)
  # (the per-point term (1 + 0.1) / 64 is below the first here); lambda_max
  # from the dense matrix, while the package estimates it by power iteration.
  lmax <- max(eigen(ref_kernel(d$x, d$x, "matern32", 0.3, 1), TRUE, TRUE)$values)
  expect_equal(long$state$step_size[["mean"]],
               0.5 * 2 / ((lmax + 0.1) / 300 + 1 / 32 + 4 / sqrt(32 * 64)),
               tolerance = 0.01)
  # The trace: the relative residual on a probe of training rows, which
  # tends to the exact mean's own training residual (0.10), not to 0. The
  # probe (256 rows drawn with replacement) and the remaining misfit put it
  # 8-19 per cent above over seeds; the bound is 30 per cent.
  expect_identical(long$trace$iteration, seq(50L, 300L, by = 50L))
  fitted_exact <- ref_kernel(d$x, d$x, "matern32", 0.3, 1) %*% ref$alpha
  exact_res <- sqrt(sum((fitted_exact - d$y)^2) / sum(d$y^2))
  expect_lt(abs(long$trace$residual[6] / exact_res - 1), 0.3)
})

test_that("heteroscedastic noise weights the loss so that the exact mean is the target", {
  # Noise 0.1 on the left half, 10 on the right: the exact posterior means
  # with these variances and with their mean differ by about 0.26 relative.
  d <- make_data(60, 2, seed = 42)
  noise <- ifelse(d$x[, 1] < 0.5, 0.1, 10)
  ker <- matern(3/2, 0.3, 1)
  K <- ref_kernel(d$x, d$x, "matern32", 0.3, 1)
  hetero <- drop(K %*% solve(K + diag(noise), d$y))
  homo <- drop(K %*% solve(K + diag(mean(noise), 60), d$y))
  withr::local_seed(5)
  sol <- sddgp:::run_solver("dsg", test_problem(d$x, ker, noise, matrix(d$y)),
                            dsg_control(iterations = 300, block_size = 32, batch_size = 32),
                            threads = 1)
  f <- drop(sddgp:::dsg_matmul(sol$basis, ker, d$x, sol$alpha, threads = 1))
  rel <- function(a, b) sqrt(sum((a - b)^2) / sum(b^2))
  # Error sources as in the test above (the step is 1 / max(weights) = 1/50
  # of the homoscedastic one, but n is small). Measured 0.034-0.055 against
  # the heteroscedastic mean and 0.30-0.34 against the homoscedastic one,
  # over seeds.
  expect_gt(rel(homo, hetero), 0.2)
  expect_lt(rel(f, hetero), 0.08)
  expect_gt(rel(f, homo), 3 * rel(f, hetero))
})

test_that("DSG fits are bitwise identical for 1 and 2 threads", {
  d <- make_data(150, 2, seed = 43)
  # One thread evaluates fewer than 32768 (points x features) at a time;
  # 64 points per batch reach that from step 32 on, and 100 new inputs
  # against 960 features do too, so both paths run here.
  ctl <- dsg_control(iterations = 60, block_size = 16, batch_size = 64, check_every = 20)
  f1 <- dsg_fit(d, ctl, seed = 7, samples = 2, threads = 1)
  f2 <- dsg_fit(d, ctl, seed = 7, samples = 2, threads = 2)
  expect_identical(f1$alpha, f2$alpha)
  expect_identical(f1$alpha_samples, f2$alpha_samples)
  expect_identical(f1$trace$residual, f2$trace$residual)
  xt <- make_inputs(100, 2)
  expect_identical(predict(f1, xt, threads = 1), predict(f1, xt, threads = 2))
})

test_that("predict() with standard errors and simulate() work for DSG fits", {
  withr::local_options(sddgp.threads = 1)
  p <- dsg_problem(44, 40)
  d <- p$d; xt <- p$xt; ref <- p$ref
  fit <- dsg_fit(d, dsg_control(iterations = 150, block_size = 16, batch_size = 64),
                 seed = 8, samples = 12)
  p <- predict(fit, xt, se.fit = TRUE, interval = "confidence")
  expect_true(all(is.finite(p$se.fit)) && all(p$se.fit > 0))
  # The posterior sd from 12 pathwise samples, against the exact one (mean
  # 0.17 here; the prior sd is 1). Each squared se is a mean of 12 squares
  # (relative sd 0.4 per point, much less averaged over 40 points), and the
  # sample systems are solved only approximately: an unfinished DSG
  # correction leaves part of the prior variance, so the bias is upwards.
  # Measured ratio 1.25-1.36 over seeds with 16 samples (1.2 with 200
  # steps); bounds [0.9, 1.7].
  exact_sd <- mean(sqrt(diag(ref$cov)))
  expect_gt(mean(p$se.fit) / exact_sd, 0.9)
  expect_lt(mean(p$se.fit) / exact_sd, 1.7)
  expect_equal(unname(p$fit[, "fit"]), unname(predict(fit, xt)))

  # Stored samples: the mean plus the centred paths of posterior_at().
  sims <- simulate(fit, nsim = 3, newdata = xt, stored = TRUE)
  post <- sddgp:::posterior_at(fit, xt, TRUE, threads = 1)
  expect_equal(as.matrix(sims), post$mean + post$centred[, 1:3], ignore_attr = TRUE)

  # New samples with a seed: reproducible, the global random state left
  # alone, solved in the basis of the mean (same feature seed and step size).
  withr::local_seed(100)
  before <- .Random.seed
  s1 <- simulate(fit, nsim = 12, seed = 11, newdata = xt)
  expect_identical(.Random.seed, before)
  expect_equal(attr(s1, "seed"), 11, ignore_attr = TRUE)
  # The first draws of a seed do not depend on how many follow: prior
  # weights and noise are drawn column by column, and DSG solves each column
  # on its own (shared batches and features).
  s2 <- simulate(fit, nsim = 2, seed = 11, newdata = xt)
  expect_identical(unname(as.matrix(s2)), unname(as.matrix(s1)[, 1:2]))
  # Their spread is the posterior's, as for the stored samples (measured
  # 1.22-1.26; same bounds).
  spread <- sqrt(rowMeans((as.matrix(s1) - predict(fit, xt))^2))
  expect_gt(mean(spread) / exact_sd, 0.9)
  expect_lt(mean(spread) / exact_sd, 1.7)
  problem <- sddgp:::new_problem(fit$x, NULL, fit$kernel, fit$noise,
                                 sddgp:::draw_prior(fit$kernel, 2L, 50L, 1L), threads = 1)
  again <- sddgp:::run_solver("dsg", problem, fit$control, threads = 1, state = fit$state)
  expect_identical(again$basis, fit$basis)
  expect_identical(again$state, fit$state)
})

test_that("a step size beyond the stability limit stops with a divergence error", {
  d <- make_data(200, 2, seed = 45)
  err <- expect_error(
    dsg_fit(d, dsg_control(iterations = 200, block_size = 8, batch_size = 32, step_size = 100)),
    class = "sddgp_error_divergence", regexp = "DSG diverged.*`step_size`")
  expect_lt(err$iterations, 50L)
  expect_equal(err$step_size, 100)
  # A step whose regularisation decay 1 - step * noise / n is not positive.
  expect_error(
    dsg_fit(d, dsg_control(iterations = 5, step_size = 3000)),
    class = "sddgp_error_argument", regexp = "`step_size`.*below 2000")
})

test_that("Ctrl-C stops a long DSG fit promptly and leaves R usable", {
  skip_on_cran()
  skip_if_not_installed("callr")
  expect_prompt_interrupt(20000, 2, dsg_control(iterations = 1e5, block_size = 16,
                                                 batch_size = 64),
                          "DSG interrupted by the user after [0-9]+ iterations")
})
