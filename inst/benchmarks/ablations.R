# Ablations of stochastic dual descent on pol split 0: the SDD paper's
# Figures 1-4 (Lin, Padhy, Antoran et al. 2024), scaled down to one thread.
#
#   Rscript inst/benchmarks/ablations.R [--out=inst/extdata/benchmarks/ablations.csv]
#       [--figures=1,2,3,4] [--threads=1] [--cache-dir=DIR]
#
# The defaults reproduce the committed CSVs (ablations.csv, the traces;
# ablations_machine.csv, one row per invocation). Committed run, 2026-11-22,
# Intel Xeon, 2 cores shared with another benchmark running on both, R 4.2.2
# with the reference BLAS, 1 thread: 1653 s for the first 34 configurations,
# then 140 s (a resumed run) for the 3 larger random-feature steps added
# after it, 30 minutes in all, plus 1035 s once for the exact reference.
# The diverged runs then cost about six times what they needed: the package
# retried a diverged fit with a given step_size five times, a bug since
# fixed: a rerun is faster, and its diverging runs may stop a check or two
# earlier or later (each retry drew a new seed).
#
# Every configuration is one gp_sdd() fit of the posterior mean (samples = 0)
# with the package's ablation options (sdd_control(objective =, estimator =,
# momentum =, averaging =)); its trace (test RMSE, squared K- and K^2-norm
# distances to the exact representer weights) is evaluated at about 20
# log-spaced iterations and appended to the CSV as soon as the fit ends, so an
# interrupted run continues where it stopped: configurations already in the
# CSV are skipped. The exact weights come from one Cholesky fit, kept in
# --cache-dir (default tools::R_user_dir("sddgp", "cache")) for later runs.
# Differences from the paper: far fewer iterations (it runs 100,000 steps;
# here 5000 for Figures 2-4, 300 for Figure 1 and the random-feature
# estimator, whose steps cost far more), so geometric averaging uses r = 100 / T; Figure 1 runs plain gradient
# descent (no momentum, no averaging) on all 13,500 points; a run that
# diverges raises an error without its trace, so the trace up to the last
# residual check before the divergence comes from a second, shorter fit with
# the same seed.
suppressPackageStartupMessages(library(sddgp))

source(file.path("inst", "benchmarks", "options.R"))
out_csv <- option("out", file.path("inst", "extdata", "benchmarks", "ablations.csv"))
figures <- as.integer(strsplit(option("figures", "1,2,3,4"), ",")[[1L]])
threads <- as.integer(option("threads", "1"))
cache_dir <- option("cache-dir", tools::R_user_dir("sddgp", "cache"))
machine_csv <- sub("\\.csv$", "_machine.csv", out_csv)

# The configurations: one row per fit. Columns left NA take the defaults of
# `base`. Figure 1: full-batch gradient descent (batch_size >= n), primal
# against dual. Figures 2-4: B coordinates per step, Nesterov momentum 0.9,
# geometric averaging with r = 100 / T, unless the row says otherwise.
n_train <- 13500L
base <- list(objective = "dual", estimator = "coordinates", step_size = 50,
             batch_size = 512L, momentum = 0.9, averaging = "geometric",
             iterations = 5000L, check_every = 100L)
configs <- function() {
  fig1 <- data.frame(
    figure = 1L, objective = rep(c("primal", "dual"), c(4L, 5L)),
    step_size = c(0.1, 0.2, 0.3, 0.5, 0.1, 1, 10, 50, 100),
    batch_size = n_train, momentum = 0, averaging = "none",
    iterations = 300L, check_every = 10L)
  # Random-feature gradients cost about 0.2 s a step here (100 fresh features
  # over all n points), hence their short runs.
  fig2 <- data.frame(
    figure = 2L, estimator = rep(c("features", "coordinates_kalpha"), c(3L, 2L)),
    step_size = c(5e-4, 5e-3, 5e-2, 50, 5), iterations = c(300L, 300L, 300L, NA, NA),
    check_every = c(10L, 10L, 10L, NA, NA))
  fig3 <- expand.grid(figure = 3L, batch_size = c(512L, 128L), momentum = c(0.9, 0),
                      averaging = c("geometric", "arithmetic", "none"),
                      stringsAsFactors = FALSE)
  fig4 <- rbind(
    data.frame(figure = 4L, step_size = c(5, 10, 25, 75, 100), batch_size = 512L),
    data.frame(figure = 4L, step_size = 50, batch_size = c(64L, 256L, 1024L)))
  # Larger random-feature steps, looking for where they diverge. Each fit's
  # seed is its row number, so configurations are only ever added at the end.
  fig2_larger <- data.frame(figure = 2L, estimator = "features", step_size = c(0.5, 5, 50),
                            iterations = 300L, check_every = 10L)
  parts <- list(fig1, fig2, fig3, fig4, fig2_larger)
  all <- do.call(rbind, lapply(parts, function(part) {
    for (col in setdiff(names(base), names(part))) part[[col]] <- NA
    part[c("figure", names(base))]
  }))
  for (col in names(base)) all[[col]][is.na(all[[col]])] <- base[[col]]
  all$id <- with(all, sprintf("%s_%s_bn%g_B%d_rho%g_%s_T%d", objective, estimator,
                              step_size, batch_size, momentum, averaging, iterations))
  all <- all[!duplicated(all$id), ]
  all$seed <- seq_len(nrow(all))
  all
}

# About 20 log-spaced iterations (each evaluation is a full kernel product).
trace_points <- function(iterations) {
  unique(round(10^seq(0, log10(iterations), length.out = 20L)))
}

# The trace is evaluated at the configuration's points up to `iterations`
# (fewer than planned when rerunning a diverged configuration).
control_for <- function(cfg, iterations, reference, data) {
  at <- trace_points(cfg$iterations)
  at <- unique(c(at[at <= iterations], iterations))
  sdd_control(tolerance = 0, iterations = iterations, batch_size = cfg$batch_size,
              step_size = cfg$step_size, momentum = cfg$momentum,
              averaging = cfg$averaging,
              averaging_rate = if (cfg$averaging == "geometric") min(1, 100 / cfg$iterations),
              # Arithmetic (tail) averaging of the second half of the run.
              averaging_start = if (cfg$averaging == "arithmetic") cfg$iterations %/% 2L,
              objective = cfg$objective, estimator = cfg$estimator,
              # The paper's algorithm starts at 0.
              warm_start = "none", check_every = cfg$check_every,
              trace_at = at,
              reference = reference, test_x = data$x_test, test_y = data$y_test)
}

# One configuration: the fit, or for a diverged one the trace up to the last
# residual check before the blow-up (rerun with the same seed) and a final
# row marking the divergence.
run_config <- function(cfg, seed, reference, data, hp) {
  fit_for <- function(iterations) {
    set.seed(seed)
    gp_sdd(data$x_train, data$y_train, kernel = hp$kernel, noise = hp$noise,
           control = control_for(cfg, iterations, reference, data),
           samples = 0, threads = threads)
  }
  start <- proc.time()[["elapsed"]]
  fit <- tryCatch(fit_for(cfg$iterations), sddgp_error_divergence = function(e) e)
  elapsed <- proc.time()[["elapsed"]] - start
  if (!inherits(fit, "sddgp_error_divergence")) {
    return(list(rows = trace_rows(cfg, fit$trace, "ok"), seconds = elapsed))
  }
  at <- fit$iterations
  before <- at - cfg$check_every
  # The package retries a diverged fit with fresh seeds (see above), so the
  # rerun may diverge earlier; then only the marker row remains.
  rerun <- if (before >= 1L) tryCatch(fit_for(before), sddgp_error_divergence = function(e) NULL)
  pre <- if (!is.null(rerun)) trace_rows(cfg, rerun$trace, "before divergence")
  marker <- trace_rows(cfg, data.frame(iteration = at, seconds = NA_real_,
                                       residual = NA_real_), "diverged")
  list(rows = rbind(pre, marker), seconds = elapsed)
}

# The long-format rows of one trace: the iterations where a metric was
# evaluated, with the configuration's settings.
trace_rows <- function(cfg, trace, status) {
  metrics <- c("test_rmse", "knorm_error", "k2norm_error")
  for (m in metrics) if (is.null(trace[[m]])) trace[[m]] <- NA_real_
  keep <- status == "diverged" | rowSums(is.finite(as.matrix(trace[metrics]))) > 0
  trace <- trace[keep, , drop = FALSE]
  settings <- as.data.frame(cfg[c("id", "figure", "objective", "estimator", "step_size",
                                  "batch_size", "momentum", "averaging", "iterations")])
  names(settings)[names(settings) == "iterations"] <- "planned_iterations"
  cbind(settings[rep(1L, nrow(trace)), , drop = FALSE], threads = threads,
        trace[c("iteration", "seconds", "residual", metrics)], status = status,
        row.names = NULL)
}

# The exact representer weights (standardised units) by Cholesky, cached.
exact_reference <- function(data, hp) {
  file <- file.path(cache_dir, "ablations_pol0_reference.rds")
  if (file.exists(file)) return(readRDS(file))
  start <- proc.time()[["elapsed"]]
  fit <- gp_sdd(data$x_train, data$y_train, kernel = hp$kernel, noise = hp$noise,
                solver = "cholesky", samples = 0, threads = threads)
  ref <- list(alpha = fit$alpha, seconds = proc.time()[["elapsed"]] - start,
              test_rmse = sqrt(mean((predict(fit, data$x_test) - data$y_test)^2)) /
                fit$scaling$y_scale)
  dir.create(cache_dir, recursive = TRUE, showWarnings = FALSE)
  saveRDS(ref, file)
  ref
}

pol <- read_uci("pol", split = 0)
hp <- uci_hyperparameters("pol", split = 0)
stopifnot(nrow(pol$x_train) == n_train)
run_start <- proc.time()[["elapsed"]]
reference <- exact_reference(pol, hp)
cat(sprintf("exact reference: test RMSE %.4f (Cholesky, %.0f s when computed)\n",
            reference$test_rmse, reference$seconds))

todo <- configs()
todo <- todo[todo$figure %in% figures, ]
done <- if (file.exists(out_csv)) unique(read.csv(out_csv)$id) else character()
for (i in seq_len(nrow(todo))) {
  cfg <- as.list(todo[i, ])
  if (cfg$id %in% done) next
  res <- run_config(cfg, cfg$seed, reference$alpha, pol, hp)
  last <- res$rows[nrow(res$rows), ]
  cat(sprintf("[%s] fig %d %-55s %-18s it %6d  RMSE %.4f  %.1f s\n",
              format(Sys.time(), "%H:%M:%S"), cfg$figure, cfg$id, last$status,
              last$iteration, last$test_rmse, res$seconds))
  write.table(res$rows, out_csv, sep = ",", row.names = FALSE,
              col.names = !file.exists(out_csv), append = file.exists(out_csv))
}

machine <- data.frame(
  date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), r_version = R.version.string,
  cpu = cpu_model(), cores = parallel::detectCores(), threads = threads,
  figures = paste(figures, collapse = ","),
  reference_test_rmse = reference$test_rmse, reference_seconds = reference$seconds,
  seconds = proc.time()[["elapsed"]] - run_start)
write.table(machine, machine_csv, sep = ",", row.names = FALSE,
            col.names = !file.exists(machine_csv), append = file.exists(machine_csv))
cat(sprintf("done in %.0f s\n", machine$seconds))
