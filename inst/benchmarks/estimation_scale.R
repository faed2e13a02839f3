# The default hyperparameter estimation (estimation_control()'s "auto":
# the 2000-point subset, then, where the exact ascent is projected over its
# budget, Vecchia's likelihood of all n points) at sizes where only
# Vecchia's stage can use all the data: how long each stage takes and what
# it estimates.  Issue 38's function of d = 8 inputs (default_fit.R) with
# noise standard deviation --sd, standardised as gp_sdd() does; the noise
# variance to recover is sd^2 / var(y).
#
#   Rscript inst/benchmarks/estimation_scale.R [--sizes=100000,400000,1000000]
#       [--sd=0.1] [--threads=2] [--label=current]
#
# Rows go to inst/extdata/benchmarks/estimation_scale.csv (replaced per n,
# sd and --label, which names the build measured).
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))

sizes <- as.integer(split_list(option("sizes", "100000,400000,1000000")))
sd <- as.numeric(option("sd", "0.1"))
threads <- as.integer(option("threads", "2"))
label <- option("label", "current")
out <- file.path("inst", "extdata", "benchmarks", "estimation_scale.csv")
options(sddgp.progress = FALSE)

f <- function(x) sin(3 * x[, 1]) + cos(2 * x[, 2]) * x[, 3] + 0.5 * x[, 4]^2 +
  0.3 * x[, 5] * x[, 6]
for (n in sizes) {
  set.seed(n)
  x <- matrix(runif(n * 8), n)
  y <- f(x) + rnorm(n, sd = sd)
  scaling <- sddgp:::standardization(x, y, TRUE)
  xs <- sddgp:::standardize_inputs(x, scaling)
  ys <- sddgp:::standardize_targets(y, scaling)
  load <- load_average()
  est <- sddgp:::estimate_hyperparameters(xs, ys, matern(3/2), NULL, estimation_control(),
                                          threads)
  e <- est$estimation
  v <- e$vecchia
  row <- stamp(data.frame(
    n = n, d = 8, sd = sd, threads = threads, method = e$method,
    seconds = e$seconds, subset_seconds = e$subset_seconds,
    vecchia_seconds = if (is.null(v)) NA else v$seconds,
    vecchia_evaluations = if (is.null(v)) NA else sum(v$evaluations),
    vecchia_gain_per_point = if (is.null(v)) NA else
      (v$log_likelihood[length(v$log_likelihood)] - v$log_likelihood[1L]) / n,
    noise = est$noise, noise_true = sd^2 / stats::var(y),
    variance = est$kernel$variance,
    lengthscales = paste(signif(est$kernel$lengthscale, 4), collapse = " "),
    load_before = load, label = label))
  replace_rows(row, out, c("n", "sd", "label"))
  with(row, cat(sprintf(
    "n %7d: %s, %.0f s (subset %.0f s, Vecchia %.0f s, %d evaluations, %+.4f nats a point); noise %.2e (true %.2e); load %.1f to %.1f\n",
    n, method, seconds, subset_seconds, vecchia_seconds, vecchia_evaluations,
    vecchia_gain_per_point, noise, noise_true, load_before, load)))
}
