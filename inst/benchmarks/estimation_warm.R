# What warm starts save in estimation on all the data, by Adam's learning
# rate: the inner CG iterations of steps 2 to `steps` of the ascent
# (iterative_control()) with every solve started as `warm_start` says
# ("extrapolated", "previous") against the same ascent with none, on
# synthetic data (n points uniform on [0, 1]^3, y = sin(6 x1) + cos(4 x2) +
# x3 plus noise of sd 0.05), inner tolerance 0.01, 8 probes, one thread.
# And why: along the extrapolated run's path, each start's error in the
# norm of K + noise I relative to the exact solution's (base R solves), for
# the targets' system and (root mean square) the probes', median over
# steps 3 to `steps`.
#
#   Rscript inst/benchmarks/estimation_warm.R [--n=1500] [--steps=10]
#       [--rates=0.1,0.03,0.01,0.003]
#       [--out=inst/extdata/benchmarks/estimation_warm.csv]
#
# Every learning rate takes its own path, so the forms are compared within
# a rate.
#
# --part=ascent: whole ascents with the default iterative_control() but
# for the start ("extrapolated", "previous"), on 8 problems (500 points
# uniform on [0, 1]^3, y = sin(3 x1) + x2^2 - x3 / 2 plus noise of sd 0.01
# or 0.1, 4 seeds each), once with the default stopping rule and once for
# a fixed 60 steps: steps, inner CG iterations, and how far the end's log
# marginal likelihood falls short of the exact maximum (base R's optimum
# on all 500 points, estimation_control(method = "subset")).
#
#   Rscript inst/benchmarks/estimation_warm.R --part=ascent
#       [--out=inst/extdata/benchmarks/estimation_warm_ascent.csv]
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))

if (option("part", "rates") == "ascent") {
  out <- option("out", file.path("inst", "extdata", "benchmarks",
                                 "estimation_warm_ascent.csv"))
  rows <- list()
  for (noise_sd in c(0.01, 0.1)) for (seed in 1:4) {
    fit_with <- ascent_problem(noise_sd, seed)$fit_with
    best <- as.numeric(logLik(fit_with(estimation_control(method = "subset",
                                                          subset_size = 500))))
    for (stopping in c("rule", "60 steps")) for (form in c("extrapolated", "previous")) {
      control <- if (stopping == "rule") iterative_control(warm_start = form) else
        iterative_control(warm_start = form, tolerance = 0, max_steps = 60)
      fit <- fit_with(estimation_control(method = "iterative", subset_size = 100,
                                         iterative = control))
      it <- fit$estimation$iterative
      rows[[length(rows) + 1L]] <- data.frame(
        noise_sd = noise_sd, seed = seed, stopping = stopping, warm_start = form,
        steps = it$steps, stopped = it$stopped, inner_iterations = sum(it$inner_iterations),
        loglik_shortfall = best - as.numeric(logLik(fit)),
        load = load_average(), date = format(Sys.time(), "%Y-%m-%d %H:%M"),
        sddgp = as.character(utils::packageVersion("sddgp")),
        machine = machine_description())
    }
  }
  rows <- do.call(rbind, rows)
  print(stats::aggregate(cbind(steps, inner_iterations, loglik_shortfall) ~
                           noise_sd + stopping + warm_start, rows, stats::median), digits = 3)
  utils::write.csv(rows, out, row.names = FALSE)
  quit(save = "no")
}

n <- as.integer(option("n", "1500"))
steps <- as.integer(option("steps", "10"))
rates <- as.numeric(split_list(option("rates", "0.1,0.03,0.01,0.003")))
out <- option("out", file.path("inst", "extdata", "benchmarks", "estimation_warm.csv"))

set.seed(10)
x <- matrix(runif(n * 3), n)
y <- sin(6 * x[, 1]) + cos(4 * x[, 2]) + x[, 3] + rnorm(n, sd = 0.05)

ascent <- function(rate, form) {
  set.seed(11)
  fit <- suppressWarnings(gp_sdd(x, y, solver = "cholesky", threads = 1,
    estimation = estimation_control(method = "iterative", subset_size = 300,
      iterative = iterative_control(probes = 8, inner_tolerance = 0.01, max_steps = steps,
                                    tolerance = 0, learning_rate = rate, warm_start = form))))
  fit$estimation$iterative
}

# The starts' relative errors in the norm of H = K + noise I along `path`,
# from exact solutions: list(targets, probes) of "previous" and
# "extrapolated", medians over steps 3 on.
start_errors <- function(path, family) {
  ns <- asNamespace("sddgp")
  d <- ncol(x)
  prior <- ns$draw_prior(ns$theta_kernel(family, path[1, ]), d, 2000, 8, independent = TRUE)
  noise_base <- matrix(rnorm(n * 8), n, 8)
  solutions <- list()
  err <- matrix(NA_real_, nrow(path), 4,
                dimnames = list(NULL, c("targets_previous", "targets_extrapolated",
                                        "probes_previous", "probes_extrapolated")))
  for (t in seq_len(nrow(path))) {
    kernel <- ns$theta_kernel(family, path[t, ])
    p <- ns$new_problem(x, y, kernel, exp(path[t, d + 2]), prior, 1L, noise_base)
    H <- .Call(ns$C_kernel_matrix, p$xs, p$xs, ns$kernel_spec(kernel), 1L) + diag(p$noise)
    exact <- solve(H, p$rhs)
    energy <- function(e) sqrt(colSums(e * (H %*% e)) / colSums(exact * (H %*% exact)))
    if (t >= 3) {
      starts <- list(previous = solutions[[t - 1]],
                     extrapolated = ns$warm_start_alpha("extrapolated", solutions[[t - 1]],
                                                        solutions[[t - 2]], path[t, ],
                                                        path[seq_len(t - 1), , drop = FALSE]))
      for (form in names(starts)) {
        e <- energy(exact - starts[[form]])
        err[t, paste0("targets_", form)] <- e[1]
        err[t, paste0("probes_", form)] <- sqrt(mean(e[-1]^2))
      }
    }
    solutions[[t]] <- exact
  }
  apply(err, 2, stats::median, na.rm = TRUE)
}

rows <- do.call(rbind, lapply(rates, function(rate) {
  runs <- lapply(c(extrapolated = "extrapolated", previous = "previous", none = "none"),
                 function(form) ascent(rate, form))
  its <- vapply(runs, function(it) sum(it$inner_iterations[-1]), numeric(1))
  secs <- vapply(runs, function(it) sum(it$inner_seconds[-1]), numeric(1))
  errors <- start_errors(runs$extrapolated$path, "matern32")
  data.frame(n = n, steps = steps, learning_rate = rate,
             extrapolated_iterations = its[["extrapolated"]],
             previous_iterations = its[["previous"]], cold_iterations = its[["none"]],
             extrapolated_ratio = its[["extrapolated"]] / its[["none"]],
             previous_ratio = its[["previous"]] / its[["none"]],
             t(errors),
             extrapolated_seconds = secs[["extrapolated"]],
             previous_seconds = secs[["previous"]], cold_seconds = secs[["none"]],
             load = load_average(), date = format(Sys.time(), "%Y-%m-%d %H:%M"),
             sddgp = as.character(utils::packageVersion("sddgp")),
             machine = machine_description())
}))
print(rows[, c("learning_rate", "extrapolated_iterations", "previous_iterations",
               "cold_iterations", "targets_previous", "targets_extrapolated",
               "probes_previous", "probes_extrapolated", "load")],
      digits = 3, row.names = FALSE)
utils::write.csv(rows, out, row.names = FALSE)
