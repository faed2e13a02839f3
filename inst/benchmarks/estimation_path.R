# Where along its path the ascent of estimation on all the data
# (estimation_control(method = "iterative")) stops improving, and where
# the stopping rule of iterative_control() ends it: whole ascents without
# the rule (tolerance = 0), checked along the way against independent
# truth.
#
# --part=synthetic (default): the 8 problems of estimation_warm.R
# --part=ascent (500 points uniform on [0, 1]^3, y = sin(3 x1) + x2^2 -
# x3 / 2 plus noise of sd 0.01 or 0.1, 4 seeds each), `--steps` Adam steps;
# at every step the exact log marginal likelihood (base R's Cholesky, via
# the package's exact evaluation) against its maximum (the exact optimum on
# all 500 points), the estimated gain along the path (the rule's
# statistic) and the inner CG iterations.
#
#   Rscript inst/benchmarks/estimation_path.R [--steps=150]
#       [--out=inst/extdata/benchmarks/estimation_path_synthetic.csv]
#
# --part=uci: a `--steps`-step ascent on a UCI split (the protocol of
# estimation.R: its seed, CG predictions with 16 samples), then test RMSE
# and NLL with the hyperparameters of the steps in `--at`.  The ascent's
# record is kept in --work (default a temporary folder) and reused by
# later runs; every (data set, split, step) is appended to --out at once
# and skipped by later runs.
#
#   Rscript inst/benchmarks/estimation_path.R --part=uci --datasets=elevators
#       --splits=1 [--steps=100] [--at=1,5,10,20,30,40,50,60,80,100]
#       [--threads=1] [--work=DIR]
#       [--out=inst/extdata/benchmarks/estimation_path_uci.csv]
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))
ns <- asNamespace("sddgp")

part <- choice_option("part", c("synthetic", "uci"))[1L]
steps <- as.integer(option("steps", if (part == "uci") "100" else "150"))
# The first step at which the default stopping rule would have ended a
# path with estimated gains `gain` (NA: never).
rule_step <- function(gain, n) {
  control <- iterative_control()
  hit <- which(vapply(seq_along(gain), function(t) ns$ascent_levelled(gain, t, control, n),
                      logical(1)))
  if (length(hit)) hit[1L] else NA_integer_
}

if (part == "synthetic") {
  out <- option("out", file.path("inst", "extdata", "benchmarks",
                                 "estimation_path_synthetic.csv"))
  rows <- list()
  for (noise_sd in c(0.01, 0.1)) for (seed in 1:4) {
    problem <- ascent_problem(noise_sd, seed)
    x <- problem$x
    y <- problem$y
    fit_with <- problem$fit_with
    scaling <- ns$standardization(x, y, TRUE, NULL)
    xs <- ns$standardize_inputs(x, scaling)
    ys <- ns$standardize_targets(y, scaling)
    exact <- function(theta) {
      kernel <- ns$theta_kernel("matern32", theta)
      .Call(ns$C_mll, ns$scale_inputs(xs, kernel), ys, ns$kernel_spec(kernel),
            exp(theta[[5L]]), NULL, FALSE, 1L)$value
    }
    best <- fit_with(estimation_control(method = "subset", subset_size = 500))
    best <- exact(log(c(best$kernel$lengthscale, best$kernel$variance, best$noise)))
    it <- fit_with(estimation_control(
      method = "iterative", subset_size = 100,
      iterative = iterative_control(tolerance = 0, max_steps = steps)))$estimation$iterative
    rows[[length(rows) + 1L]] <- data.frame(
      noise_sd = noise_sd, seed = seed, step = seq_len(it$steps),
      shortfall = best - apply(it$path, 1L, exact),
      gain = it$log_marginal_likelihood_gain, inner_iterations = it$inner_iterations)
  }
  rows <- stamp(do.call(rbind, rows))
  utils::write.csv(rows, out, row.names = FALSE)
  # The rule's stop against fixed budgets and the best point of the path.
  summary <- do.call(rbind, lapply(split(rows, list(rows$noise_sd, rows$seed)), function(r) {
    stop <- rule_step(r$gain, 500)
    at <- function(t) r$shortfall[min(t, nrow(r))]
    data.frame(noise_sd = r$noise_sd[1L], seed = r$seed[1L], rule_step = stop,
               at_rule = at(if (is.na(stop)) 100 else stop),
               at_40 = at(40), at_60 = at(60), at_100 = at(100), at_last = at(nrow(r)),
               best_along = min(r$shortfall), best_step = which.min(r$shortfall))
  }))
  print(summary, digits = 3, row.names = FALSE)
  quit(save = "no")
}

data_dir <- option("data", file.path("..", "shared", "data", "uci"))
out <- option("out", file.path("inst", "extdata", "benchmarks", "estimation_path_uci.csv"))
datasets <- choice_option("datasets", c("pol", "elevators", "bike", "protein", "keggdirected"))
splits <- as.integer(split_list(option("splits", "0")))
at <- as.integer(split_list(option("at", "1,5,10,20,30,40,50,60,80,100")))
threads <- as.integer(option("threads", "1"))
work <- option("work", tempdir())

done <- if (file.exists(out)) utils::read.csv(out, stringsAsFactors = FALSE) else NULL
for (split in splits) for (dataset in datasets) {
  data <- read_uci(dataset, split = split, path = data_dir)
  saved <- file.path(work, sprintf("%s_%d.rds", dataset, split))
  if (!file.exists(saved)) {
    set.seed(1000 * split + 7)
    start <- proc.time()[["elapsed"]]
    fit <- gp_sdd(data$x_train, data$y_train, samples = 16, solver = "cg",
                  control = cg_control(), threads = threads,
                  estimation = estimation_control(
                    method = "iterative",
                    iterative = iterative_control(tolerance = 0, max_steps = steps)))
    saveRDS(list(record = fit$estimation$iterative, load = load_average(),
                 seconds = proc.time()[["elapsed"]] - start), saved)
  }
  record <- readRDS(saved)$record
  d <- ncol(data$x_train)
  stop <- rule_step(record$log_marginal_likelihood_gain, nrow(data$x_train))
  for (t in intersect(at, seq_len(record$steps))) {
    if (!is.null(done) && any(done$dataset == dataset & done$split == split & done$step == t)) next
    theta <- record$path[t, ]
    set.seed(1000 * split + 7)
    fit <- suppressWarnings(gp_sdd(
      data$x_train, data$y_train,
      kernel = matern(3/2, lengthscale = exp(theta[seq_len(d)]),
                      variance = exp(theta[[d + 1L]])),
      noise = exp(theta[[d + 2L]]), samples = 16, solver = "cg", control = cg_control(),
      threads = threads))
    scores <- predictive_scores(fit, data$x_test, data$y_test, normalised = TRUE,
                                threads = threads)
    row <- stamp(data.frame(
      dataset = dataset, split = split, step = t, rmse = scores[["rmse"]],
      nll = scores[["nll"]], gain = record$log_marginal_likelihood_gain[t],
      inner_iterations = sum(record$inner_iterations[seq_len(t)]),
      inner_seconds = sum(record$inner_seconds[seq_len(t)]),
      rule_step = stop, threads = threads))
    done <- append_result(done, row, out)
    cat(sprintf("%-10s split %d step %3d: RMSE %.4f NLL %.3f gain %8.1f, %5d CG iterations so far (the rule stops at %s)\n",
                dataset, split, t, row$rmse, row$nll, row$gain, row$inner_iterations,
                format(stop)))
  }
}
