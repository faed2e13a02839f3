# How the pathwise gradient estimate (estimation on all the data, 16 probes
# of 2000 random features each, solves to relative residual 1e-6) spreads
# over probe sets, by the noise's share of the signal variance, with every
# probe and with the probes that no exact prior draw could give left out
# (implausible_probes(), R/estimation_iterative.R): mean and standard
# deviation over `sets` probe sets of each component (d length scales,
# variance, noise) against the exact gradient (central differences of the
# exact log marginal likelihood, base R's Cholesky), on 500 points uniform
# on [0, 1]^3, y = sin(3 x1) + x2^2 - x3 / 2 plus noise of sd 0.1, 0.03 or
# 0.01, at the 100-point subset estimate; one thread.  Two more estimates,
# solved exactly by base R's Cholesky factor of H, tell where the spread
# comes from:
#   exact_prior  the same pathwise estimate with probes drawn exactly from
#                the prior (Cholesky factor of K) instead of random features;
#   hutchinson   the standard estimate, probes z ~ N(0, I) and
#                tr(H^-1 dH) ~ mean_q (H^-1 z_q)' dH z_q, whose bilinear
#                forms come from two passes of the pathwise gradient,
#                with columns (v + z) / 2 and (v - z) / 2.
#
#   Rscript inst/benchmarks/pathwise_probes.R [--sets=30]
#       [--out=inst/extdata/benchmarks/pathwise_probes.csv]
#
# --part=uci: how many probes are implausible on the UCI data: one outer
# step (default iterative_control() but 64 probes) at the paper's
# hyperparameters on a random `subset` points of split 0, `sets` times.
#
#   Rscript inst/benchmarks/pathwise_probes.R --part=uci [--data=DIR]
#       [--subset=3000] [--sets=4]
#       [--out=inst/extdata/benchmarks/pathwise_probes_uci.csv]
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))
ns <- asNamespace("sddgp")

if (option("part", "spread") == "uci") {
  data_dir <- option("data", file.path("..", "shared", "data", "uci"))
  subset <- as.integer(option("subset", "3000"))
  sets <- as.integer(option("sets", "4"))
  out <- option("out", file.path("inst", "extdata", "benchmarks", "pathwise_probes_uci.csv"))
  rows <- do.call(rbind, lapply(c("pol", "elevators", "bike", "protein"), function(dataset) {
    data <- read_uci(dataset, split = 0, path = data_dir)
    hp <- uci_hyperparameters(dataset, split = 0)
    set.seed(1)
    rows <- sample(nrow(data$x_train), subset)
    fit <- gp_sdd(data$x_train[rows, ], data$y_train[rows], kernel = hp$kernel,
                  noise = hp$noise, solver = "cholesky", threads = 2)
    theta <- log(c(fit$kernel$lengthscale, fit$kernel$variance, fit$noise))
    space <- ns$parameter_space(fit$x, fit$y, matern(3/2), NULL, 1e-6)
    excluded <- sum(vapply(seq_len(sets), function(s) {
      set.seed(100 + s)
      suppressWarnings(ns$estimate_iterative(
        fit$x, fit$y, fit$kernel$family, space, theta,
        iterative_control(max_steps = 1, probes = 64), 2L))$record$excluded_probes
    }, numeric(1)))
    stamp(data.frame(dataset = dataset, n = subset,
                     noise_to_variance = fit$noise / fit$kernel$variance,
                     excluded = excluded, probes_drawn = 64L * sets))
  }))
  print(rows[, c("dataset", "noise_to_variance", "excluded", "probes_drawn")], digits = 3,
        row.names = FALSE)
  utils::write.csv(rows, out, row.names = FALSE)
  quit(save = "no")
}

sets <- as.integer(option("sets", "30"))
out <- option("out", file.path("inst", "extdata", "benchmarks", "pathwise_probes.csv"))

rows <- list()
for (noise_sd in c(0.1, 0.03, 0.01)) {
  set.seed(103)
  x <- matrix(runif(500 * 3), 500)
  y <- sin(3 * x[, 1]) + x[, 2]^2 - 0.5 * x[, 3] + rnorm(500, sd = noise_sd)
  set.seed(3)
  fit <- gp_sdd(x, y, solver = "cholesky", threads = 1,
                estimation = estimation_control(method = "subset", subset_size = 100))
  kernel <- fit$kernel
  xs <- ns$scale_inputs(fit$x, kernel)
  log_likelihood <- function(theta) {
    k <- ns$theta_kernel(kernel$family, theta)
    z <- ns$scale_inputs(fit$x, k)
    R <- chol(.Call(ns$C_kernel_matrix, z, z, ns$kernel_spec(k), 1L) +
                diag(exp(theta[[length(theta)]]), nrow(z)))
    a <- backsolve(R, fit$y, transpose = TRUE)
    -sum(a^2) / 2 - sum(log(diag(R))) - nrow(z) * log(2 * pi) / 2
  }
  theta <- log(c(kernel$lengthscale, kernel$variance, fit$noise))
  exact <- vapply(seq_along(theta), function(j) {
    h <- replace(numeric(length(theta)), j, 1e-4)
    (log_likelihood(theta + h) - log_likelihood(theta - h)) / 2e-4
  }, numeric(1))
  K <- .Call(ns$C_kernel_matrix, xs, xs, ns$kernel_spec(kernel), 1L)
  R <- chol(K + diag(fit$noise, nrow(K)))
  solve_h <- function(b) backsolve(R, backsolve(R, b, transpose = TRUE))
  # The prior's exact factor; the jitter, 1e-10 of the kernel variance, is
  # far below every noise here.
  prior_factor <- chol(K + diag(1e-10 * kernel$variance, nrow(K)))
  pathwise <- function(sols) {
    .Call(ns$C_mll_pathwise, xs, sols, ns$kernel_spec(kernel), fit$noise, NULL, 1L)$gradient
  }
  n <- nrow(x)
  excluded <- 0L
  estimates <- lapply(seq_len(sets), function(s) {
    set.seed(1000 + s)
    prior <- ns$draw_prior(kernel, ncol(x), 2000, 16)
    problem <- ns$new_problem(fit$x, fit$y, kernel, fit$noise, prior, 1L)
    sols <- ns$run_solver("cg", problem, cg_control(tolerance = 1e-6), 1L)$alpha
    bad <- ns$implausible_probes(sols, problem$noise)
    excluded <<- excluded + sum(bad)
    a <- sols[, 1L]
    exact_draws <- crossprod(prior_factor, matrix(rnorm(n * 16), n)) +
      matrix(rnorm(n * 16, sd = sqrt(fit$noise)), n)
    z <- matrix(rnorm(n * 16), n)
    v <- solve_h(z)
    rbind(all = pathwise(sols), screened = pathwise(sols[, c(TRUE, !bad), drop = FALSE]),
          exact_prior = pathwise(cbind(a, solve_h(exact_draws))),
          hutchinson = pathwise(cbind(a, (v + z) / 2)) - pathwise(cbind(0, (v - z) / 2)))
  })
  for (probes in c("all", "screened", "exact_prior", "hutchinson")) {
    g <- do.call(rbind, lapply(estimates, function(e) e[probes, ]))
    rows[[length(rows) + 1L]] <- data.frame(
      noise_sd = noise_sd, noise_to_variance = fit$noise / kernel$variance,
      probes = probes, excluded = if (probes %in% c("all", "screened")) excluded else NA,
      probes_drawn = 16L * sets,
      component = c(paste0("lengthscale", seq_len(ncol(x))), "variance", "noise"),
      exact = exact, mean = colMeans(g), sd = apply(g, 2, stats::sd),
      min = apply(g, 2, min), max = apply(g, 2, max),
      load = load_average(), date = format(Sys.time(), "%Y-%m-%d %H:%M"),
      sddgp = as.character(utils::packageVersion("sddgp")),
      machine = machine_description())
  }
}
rows <- do.call(rbind, rows)
print(rows[, c("noise_to_variance", "probes", "excluded", "component", "exact", "mean", "sd",
               "min", "max")],
      digits = 3, row.names = FALSE)
utils::write.csv(rows, out, row.names = FALSE)
