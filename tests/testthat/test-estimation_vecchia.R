# Vecchia's approximate likelihood (C_mll_vecchia) against base-R
# conditionals, the exact likelihood and finite differences; the estimation
# stage on all the points (estimation_control(method = "vecchia")) against
# the exact maximum likelihood estimate of all the points.

# Every point's conditional given its neighbours (an m x n matrix, NA past
# a point's count, as C_vecchia_factor() returns them), summed: Vecchia's
# likelihood by its definition.
ref_vecchia <- function(x, y, theta, weights, neighbours) {
  H <- ref_cov(x, theta, weights = weights)
  sum(vapply(seq_len(nrow(x)), function(i) {
    nb <- neighbours[!is.na(neighbours[, i]), i]
    if (!length(nb)) return(stats::dnorm(y[i], 0, sqrt(H[i, i]), log = TRUE))
    b <- solve(H[nb, nb], H[nb, i])
    stats::dnorm(y[i], sum(b * y[nb]), sqrt(H[i, i] - sum(b * H[nb, i])), log = TRUE)
  }, numeric(1)))
}

theta_kernel_of <- function(theta) kernel_of(theta, length(theta) - 2L)

find_neighbours <- function(x, theta, m, threads = 2L) {
  sddgp:::vecchia_neighbours(x, theta_kernel_of(theta), m, as.integer(threads))
}

vecchia_at <- function(x, y, theta, neighbours, weights = NULL, threads = 2L) {
  kernel <- theta_kernel_of(theta)
  d <- ncol(x)
  .Call(sddgp:::C_mll_vecchia, sddgp:::scale_inputs(x, kernel), y,
        sddgp:::kernel_spec(kernel), exp(theta[[d + 2L]]), weights, neighbours,
        as.integer(threads))
}

theta_of <- function(kernel, noise) log(c(kernel$lengthscale, kernel$variance, noise))

set.seed(31)
n_v <- 150
x_v <- matrix(runif(n_v * 3), n_v)
y_v <- sin(4 * x_v[, 1]) + x_v[, 2] + rnorm(n_v, sd = 0.1)
w_v <- runif(n_v, 0.5, 2)
theta_v <- log(c(0.3, 0.5, 2, 1.3, 0.02))

test_that("Vecchia's likelihood is the sum of base-R conditionals", {
  for (m in c(1L, 5L, 20L)) {
    nb <- find_neighbours(x_v, theta_v, m)
    got <- vecchia_at(x_v, y_v, theta_v, nb, weights = w_v)
    expect_equal(got$value, ref_vecchia(x_v, y_v, theta_v, w_v, nb),
                 tolerance = 1e-10, info = m)
    expect_false(got$interrupted)
  }
})

test_that("with every earlier point a neighbour it is the exact likelihood", {
  nb <- find_neighbours(x_v, theta_v, n_v - 1L)
  got <- vecchia_at(x_v, y_v, theta_v, nb, weights = w_v)
  expect_equal(got$value, ref_mll(x_v, y_v, theta_v, weights = w_v), tolerance = 1e-10)
  exact <- .Call(sddgp:::C_mll, sddgp:::scale_inputs(x_v, theta_kernel_of(theta_v)), y_v,
                 sddgp:::kernel_spec(theta_kernel_of(theta_v)), exp(theta_v[5]), w_v, TRUE, 2L)
  expect_equal(got$gradient, exact$gradient, tolerance = 1e-8)
})

test_that("its gradient matches central differences with the neighbours fixed", {
  nb <- find_neighbours(x_v, theta_v, 10L)
  h <- 1e-5
  grad <- vecchia_at(x_v, y_v, theta_v, nb, weights = w_v)$gradient
  fd <- vapply(seq_along(theta_v), function(i) {
    step <- replace(numeric(length(theta_v)), i, h)
    (vecchia_at(x_v, y_v, theta_v + step, nb, weights = w_v)$value -
       vecchia_at(x_v, y_v, theta_v - step, nb, weights = w_v)$value) / (2 * h)
  }, numeric(1))
  expect_equal(grad, fd, tolerance = 1e-6)
})

test_that("its bits do not depend on the thread count", {
  # Large enough for the parallel region (over 1e6 operations a slab).
  set.seed(32)
  x <- matrix(runif(4000 * 2), ncol = 2)
  y <- sin(6 * x[, 1]) + rnorm(4000, sd = 0.1)
  theta <- log(c(0.2, 0.4, 1, 0.01))
  nb <- find_neighbours(x, theta, 30L)
  expect_identical(vecchia_at(x, y, theta, nb, threads = 1L),
                   vecchia_at(x, y, theta, nb, threads = 2L))
  expect_identical(nb, find_neighbours(x, theta, 30L, threads = 1L))
})

test_that("with every earlier point a neighbour, method 'vecchia' reaches the exact MLE of all the points", {
  # A 60-point subset's estimate, then Vecchia's likelihood of all 300
  # points, which with 299 neighbours is the exact one: the estimate must
  # be the base-R optimum from there.
  d <- make_data(300, d = 2, seed = 33, noise_sd = 0.05)
  y <- (d$y - mean(d$y)) / sd(d$y)
  control <- estimation_control(method = "vecchia", subset_size = 60, pilot_size = 60,
                                neighbours = 299)
  est <- withr::with_seed(3, sddgp:::estimate_hyperparameters(d$x, y, matern(3/2), NULL,
                                                              control, 2L))
  expect_identical(est$estimation$method, "vecchia")
  rec <- est$estimation$vecchia
  expect_identical(rec$neighbours, 299L)
  expect_identical(rec$rounds, 2L)
  expect_length(rec$log_likelihood, 3L)
  got <- ref_mll(d$x, y, theta_of(est$kernel, est$noise))
  expect_equal(rec$log_likelihood[3], got, tolerance = 1e-8)
  best <- stats::optim(theta_of(est$kernel, est$noise), function(t) -ref_mll(d$x, y, t),
                       method = "BFGS")
  expect_lt(-best$value - got, 1e-3)
  # and the subset's estimate alone is well below it
  sub <- withr::with_seed(3, sddgp:::estimate_hyperparameters(
    d$x, y, matern(3/2), NULL, estimation_control(method = "subset", subset_size = 60,
                                                  pilot_size = 60), 2L))
  expect_gt(got - ref_mll(d$x, y, theta_of(sub$kernel, sub$noise)), 1)
})

test_that("the stage runs as one governed run that ends with it, with the same bits on any team", {
  # Slabs of 1024 points with 30 neighbours in 2 dimensions are parallel.
  d <- make_data(2500, d = 2, seed = 34)
  seen <- new.env()
  staged <- function() .Call(sddgp:::C_openmp_info)$staged
  suppressMessages(trace("vecchia_likelihood", where = asNamespace("sddgp"), print = FALSE,
                         exit = bquote(assign("staged", c(.(seen)$staged, .(staged)()),
                                               envir = .(seen)))))
  on.exit(suppressMessages(untrace("vecchia_likelihood", where = asNamespace("sddgp"))))
  estimate <- function(threads) {
    seen$staged <- logical(0)
    est <- withr::with_seed(4, sddgp:::estimate_hyperparameters(
      d$x, d$y, matern(3/2), NULL, estimation_control(method = "vecchia", subset_size = 100),
      threads))
    list(staged = seen$staged, kernel = est$kernel, noise = est$noise,
         log_likelihood = est$estimation$vecchia$log_likelihood)
  }
  two <- estimate(2L)
  expect_identical(two$staged, c(TRUE, TRUE))
  expect_false(staged())
  # one thread is never governed, and gives the same estimate
  one <- estimate(1L)
  expect_identical(one$staged, c(FALSE, FALSE))
  expect_identical(one[-1], two[-1])
})

test_that("a stage cut short by its iteration limit warns", {
  d <- make_data(400, d = 2, seed = 34)
  estimate <- function(iterations) {
    withr::with_seed(4, sddgp:::estimate_hyperparameters(
      d$x, d$y, matern(3/2), NULL,
      estimation_control(method = "vecchia", subset_size = 100, max_iterations = iterations),
      1L))
  }
  expect_warning(est <- estimate(1L), class = "sddgp_warning_estimation_not_converged",
                 regexp = "limit of 1 L-BFGS-B iterations")
  expect_match(est$estimation$vecchia$message, "iteration limit reached$")
  expect_no_warning(est <- estimate(100L))
  expect_match(est$estimation$vecchia$message, "^converged; converged$")
})

test_that("the fit records the stage, and print() and summary() report it", {
  d <- make_data(400, d = 2, seed = 34)
  fit <- withr::with_seed(4, gp_sdd(d$x, d$y, threads = 2, samples = 0,
    estimation = estimation_control(method = "vecchia", subset_size = 100)))
  rec <- fit$estimation$vecchia
  expect_identical(fit$estimation$method, "vecchia")
  expect_identical(rec$neighbours, 30L)
  expect_true(all(rec$evaluations >= 1))
  expect_gte(rec$log_likelihood[3], rec$log_likelihood[2] - 1e-6)
  expect_output(print(fit), "Vecchia's approximate marginal likelihood on all 400 points")
  expect_output(print(summary(fit)),
                "then on all 400 points by Vecchia's approximation \\(30 neighbours\\)")
  expect_output(print(estimation_control(method = "vecchia")), "30 neighbours")
  # "subset" stops before it; so does a subset that is all the points
  sub <- withr::with_seed(4, gp_sdd(d$x, d$y, threads = 2, samples = 0,
    estimation = estimation_control(method = "subset", subset_size = 100)))
  expect_null(sub$estimation$vecchia)
  expect_identical(sub$estimation$method, "subset")
  all <- withr::with_seed(4, gp_sdd(d$x, d$y, threads = 2, samples = 0,
    estimation = estimation_control(method = "vecchia", subset_size = 400)))
  expect_identical(all$estimation$method, "subset")
  # and so does neighbours = 0
  none <- withr::with_seed(4, gp_sdd(d$x, d$y, threads = 2, samples = 0,
    estimation = estimation_control(method = "vecchia", subset_size = 100, neighbours = 0)))
  expect_identical(none$estimation$method, "subset")
  expect_identical(none$kernel, sub$kernel)
  expect_false(any(grepl("neighbours", utils::capture.output(
    print(estimation_control(neighbours = 0))))))
})

test_that("the Tanimoto kernel, without distances, keeps the subset's estimate", {
  set.seed(35)
  x <- matrix(rbinom(300 * 30, 1, 0.3), 300)
  y <- rowSums(x[, 1:5]) / 3 + rnorm(300, sd = 0.1)
  fit <- gp_sdd(x, y, kernel = tanimoto(), threads = 2, samples = 0,
                estimation = estimation_control(method = "vecchia", subset_size = 100))
  expect_identical(fit$estimation$method, "subset")
  expect_null(fit$estimation$vecchia)
})

test_that("bad settings of the stage are classed errors", {
  expect_error(estimation_control(neighbours = -1), class = "sddgp_error_argument",
               regexp = "`neighbours`")
  expect_error(estimation_control(neighbours = 2.5), class = "sddgp_error_argument")
  expect_error(estimation_control(method = "vechia"), class = "sddgp_error_argument")
})

test_that("Ctrl-C during the Vecchia stage stops it promptly", {
  skip_on_cran()
  skip_if_not_installed("callr")
  expect_prompt_interrupt(40000, 2, cg_control(), "interrupted",
                          args = list(kernel = "matern32", noise = NULL,
                                      estimation = estimation_control(
                                        method = "vecchia", subset_size = 200,
                                        neighbours = 60)),
                          signal_in = "estimate_vecchia")
})
