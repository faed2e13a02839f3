# Conjugate gradients with and without the pivoted-Cholesky preconditioner,
# with the factor taken of K + jitter I for several jitters, and with the
# Vecchia preconditioner for several numbers of neighbours: iterations to
# the paper's tolerance on UCI data with the published hyperparameters.
#
#   Rscript inst/benchmarks/cg_preconditioner.R [--data=DIR]
#       [--datasets=pol,elevators,bike] [--n=4000] [--threads=1]
#       [--variants=none,jitter_1,jitter_0,jitter_noise,vecchia_30,vecchia_50,vecchia_100,
#                   vecchia_150]
#       [--cache-limit=2e9]
#       [--out=inst/extdata/benchmarks/cg_preconditioner.csv]
#
# Split 0 of each data set; --n random training points (0: all of them),
# the posterior mean's system only (samples = 0), tolerance 0.01 on the
# relative residual, at most 2000 iterations, rank 100 (cg_control()'s
# other defaults).  Variants: no preconditioner; jitter 1 (the reference
# implementation's value, which uci_table.R keeps); jitter 0 (the factor of
# K itself, cg_control()'s default); jitter = the noise variance; Vecchia's
# sparse inverse factor with 30, 50 (cg_control()'s first default), 100
# (its default) or 150 neighbours (preconditioner = "vecchia", not run
# unless named).  The iteration counts do not depend on the machine or its
# load; the seconds do (the kernel is cached when it fits in --cache-limit
# bytes, so an iteration is one pass over n^2 values).  Each result replaces the row of
# the same data set, n and variant in --out as soon as it exists; other
# rows are kept, so the large data sets can be added in separate runs.
library(sddgp)

source(file.path("inst", "benchmarks", "options.R"))
data_dir <- option("data", file.path("..", "shared", "data", "uci"))
datasets <- split_list(option("datasets", "pol,elevators,bike"))
n_max <- as.integer(option("n", "4000"))
threads <- as.integer(option("threads", "1"))
cache_limit <- as.numeric(option("cache-limit", "2e9"))
neighbours <- c(30, 50, 100, 150)
chosen <- choice_option("variants", c("none", "jitter_1", "jitter_0", "jitter_noise",
                                     paste0("vecchia_", neighbours)))
if (is.na(option("variants", NA))) chosen <- grep("^vecchia", chosen, invert = TRUE, value = TRUE)
out <- option("out", file.path("inst", "extdata", "benchmarks", "cg_preconditioner.csv"))

for (ds in datasets) {
  data <- read_uci(ds, 0, path = data_dir)
  hp <- uci_hyperparameters(ds, 0)
  set.seed(1)
  keep <- if (n_max > 0 && n_max < nrow(data$x_train)) sample(nrow(data$x_train), n_max) else
    seq_len(nrow(data$x_train))
  # preconditioner, jitter, neighbours
  variants <- c(list(none = list("none", 0, 50), jitter_1 = list("pivoted_cholesky", 1, 50),
                     jitter_0 = list("pivoted_cholesky", 0, 50),
                     jitter_noise = list("pivoted_cholesky", hp$noise, 50)),
                stats::setNames(lapply(neighbours, function(m) list("vecchia", 0, m)),
                                paste0("vecchia_", neighbours)))[chosen]
  for (v in names(variants)) {
    control <- cg_control(tolerance = 0.01, max_iterations = 2000,
                          preconditioner = variants[[v]][[1]], jitter = variants[[v]][[2]],
                          neighbours = variants[[v]][[3]], cache_limit = cache_limit)
    seconds <- system.time(fit <- gp_sdd(data$x_train[keep, ], data$y_train[keep],
                                         kernel = hp$kernel, noise = hp$noise, solver = "cg",
                                         control = control, samples = 0,
                                         threads = threads))[["elapsed"]]
    row <- data.frame(dataset = ds, n = length(keep), noise = hp$noise, variant = v,
                      jitter = if (variants[[v]][[1]] == "pivoted_cholesky")
                        variants[[v]][[2]] else NA_real_,
                      iterations = fit$iterations, status = fit$status,
                      seconds = seconds, threads = threads, load = load_average(),
                      sddgp = as.character(utils::packageVersion("sddgp")),
                      date = format(Sys.time(), "%Y-%m-%d"))
    cat(sprintf("%-10s n = %6d  %-12s iterations %5d (%s)  %6.1f s\n", ds, length(keep), v,
                fit$iterations, fit$status, seconds))
    replace_rows(row, out, c("dataset", "n", "variant"))
  }
}
cat("results in", out, "\n")
