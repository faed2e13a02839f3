# Two threads against one on an idle machine and beside a competing
# CPU-bound process (another job on the cores), for SDD, CG and DSG fits.
#
#   Rscript inst/benchmarks/threads_loaded.R [--rounds=5] [--cases=sdd,cg,dsg,readme,vecchia]
#     [--label=current] [--out=inst/extdata/benchmarks/threads_loaded.csv]
#
# --label names the sddgp build measured (R_LIBS can point at another one,
# say the version before the thread governor): the CSV keeps other labels'
# rows and replaces this label's.
#
# Cases (hyperparameters fixed, so no estimation, except vecchia):
#   sdd     n = 4000, d = 8, 2000 SDD steps (kernel matrix cached)
#   cg      n = 4000, d = 8, noise 1e-4, preconditioned CG to tolerance 1e-8
#   dsg     n = 200, d = 8, doubly stochastic gradients, default settings
#   readme  the README's SDD fit: n = 1000, d = 2, 32 samples, 2000 steps
#   vecchia n = 8000, d = 4, hyperparameters estimated on a 200-point subset
#           and then by Vecchia's likelihood of all the points, then the fit
# Each round times every case on 1 and 2 threads (the order alternating
# between rounds), first alone, then beside one busy-looping R process.
# Fits on 1 and 2 threads must be identical.  Reported: median seconds and
# the ratios of medians, 1 thread / 2 threads alone (the speed-up) and
# 2 threads / 1 thread beside the competitor (the slow-down, target <= 1.2).
source(file.path("inst", "benchmarks", "options.R"))
suppressPackageStartupMessages(library(sddgp))
rounds <- as.integer(option("rounds", "5"))
cases <- choice_option("cases", c("sdd", "cg", "dsg", "readme", "vecchia"))
label <- option("label", "current")
out_csv <- option("out", file.path("inst", "extdata", "benchmarks", "threads_loaded.csv"))

problem <- function(n, d, seed = 1) {
  set.seed(seed)
  x <- matrix(runif(n * d), n, d)
  list(x = x, y = sin(4 * x[, 1]) + cos(3 * x[, 2]) * x[, d] + rnorm(n, sd = 0.1))
}
fits <- list(
  sdd = function(p, threads) gp_sdd(p$x, p$y, kernel = matern(3/2, 0.5, 1), noise = 0.01,
                                    control = sdd_control(tolerance = 0, iterations = 2000, cache = "always"),
                                    threads = threads),
  cg = function(p, threads) gp_sdd(p$x, p$y, kernel = matern(3/2, 0.5, 1), noise = 1e-4,
                                   control = cg_control(tolerance = 1e-8), threads = threads),
  dsg = function(p, threads) gp_sdd(p$x, p$y, kernel = matern(3/2, 0.5, 1), noise = 0.01,
                                    solver = "dsg", threads = threads),
  readme = function(p, threads) gp_sdd(p$x, p$y, kernel = matern(3/2, 0.3, 1), noise = 0.01,
                                       control = sdd_control(tolerance = 0, iterations = 2000), samples = 32,
                                       threads = threads),
  vecchia = function(p, threads) gp_sdd(p$x, p$y, threads = threads,
                                        estimation = estimation_control(method = "vecchia",
                                                                        subset_size = 200))
)
problems <- list(sdd = problem(4000, 8), cg = problem(4000, 8), dsg = problem(200, 8),
                 readme = problem(1000, 2), vecchia = problem(8000, 4))

time_fit <- function(case, threads) {
  set.seed(7)
  elapsed <- system.time(fit <- fits[[case]](problems[[case]], threads))[["elapsed"]]
  list(seconds = elapsed, alpha = fit$alpha)
}

competitor <- function() callr::r_bg(function() repeat NULL)

rows <- list()
for (round in seq_len(rounds)) {
  for (condition in c("idle", "loaded")) {
    busy <- if (condition == "loaded") competitor()
    if (!is.null(busy)) Sys.sleep(0.5)
    for (case in cases) {
      order <- if (round %% 2L) c(1L, 2L) else c(2L, 1L)
      res <- lapply(order, function(th) time_fit(case, th))
      if (!identical(res[[1]]$alpha, res[[2]]$alpha))
        stop(case, ": the fits on 1 and 2 threads differ", call. = FALSE)
      for (k in 1:2) {
        rows[[length(rows) + 1L]] <- data.frame(
          case = case, condition = condition, round = round, threads = order[k],
          seconds = res[[k]]$seconds, load = load_average())
      }
      cat(sprintf("round %d %-6s %-6s 1 thread %6.2f s, 2 threads %6.2f s\n", round,
                  condition, case, res[[match(1L, order)]]$seconds,
                  res[[match(2L, order)]]$seconds))
    }
    if (!is.null(busy)) busy$kill()
  }
}
results <- do.call(rbind, rows)
results$label <- label
results$machine <- machine_description()
replace_rows(results, out_csv, "label")

med <- stats::aggregate(seconds ~ case + condition + threads, results, stats::median)
wide <- reshape(med, idvar = c("case", "condition"), timevar = "threads",
                direction = "wide")
cat("\n", label, ": ", machine_description(), "\n", sep = "")
cat(sprintf("medians of %d rounds; 'idle' ratio = 1-thread / 2-thread time (speed-up), ",
            rounds), "'loaded' ratio = 2-thread / 1-thread time (slow-down)\n", sep = "")
for (i in seq_len(nrow(wide))) {
  w <- wide[i, ]
  ratio <- if (w$condition == "idle") w$seconds.1 / w$seconds.2 else w$seconds.2 / w$seconds.1
  cat(sprintf("%-6s %-6s 1 thread %6.2f s  2 threads %6.2f s  ratio %.2f\n", w$case,
              w$condition, w$seconds.1, w$seconds.2, ratio))
}
