# The exact solver and subset hyperparameter estimation under the BLAS R
# was started with, against exact_seconds()'s prediction.  Per size n and
# thread count, median wall seconds of the repetitions of
#   gp_sdd(x, y, kernel = matern(3/2, lengthscale = 0.8, variance = 1),
#          noise = 0.01, solver = "cholesky", threads = t)
# on synthetic d = 8 data, whether its weights are bit-identical to the
# 1-thread fit's, and exact_seconds(n, 1, t) twice: as calibrated at the
# start of the script (how the solver choice sees it) and recalibrated just
# before the fit (the same load).  Then one marginal-likelihood evaluation
# on 2000 points (task "mll") and the default estimation (task
# "estimation": estimation_control(), 2000 of 5000 points).
#
#   Rscript inst/benchmarks/blas.R [--sizes=2000,5000,10000,15000]
#       [--threads=1,2] [--reps=3] [--estimation=yes]
#       [--out=inst/extdata/benchmarks/blas.csv]
#
# Rows replace those of the same BLAS, task, n and threads in the CSV, so
# each BLAS is a run of its own.  Debian's R finds its BLAS through the
# update-alternatives links in /usr/lib/x86_64-linux-gnu, which its start
# script puts before LD_LIBRARY_PATH: to run under OpenBLAS without
# switching the system's BLAS, unpack it and name its directory in
# R_LD_LIBRARY_PATH instead:
#   apt-get download libopenblas0-pthread
#   dpkg -x libopenblas0-pthread_*.deb /tmp/ob
#   R_LD_LIBRARY_PATH=/tmp/ob/usr/lib/x86_64-linux-gnu/openblas-pthread:/usr/lib/R/lib:/usr/lib/x86_64-linux-gnu \
#     Rscript inst/benchmarks/blas.R
# The blas column says what R runs on (La_library()), with the kernel set
# that OPENBLAS_CORETYPE forces, if any.
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))
sizes <- as.integer(split_list(option("sizes", "2000,5000,10000,15000")))
threads <- as.integer(split_list(option("threads", "1,2")))
reps <- as.integer(option("reps", "3"))
estimation <- option("estimation", "yes") == "yes"
out_csv <- option("out", file.path("inst", "extdata", "benchmarks", "blas.csv"))

lapack <- La_library()
blas <- if (grepl("openblas", lapack)) sub(".*/(openblas[^/]*)/.*", "\\1", lapack) else
  if (grepl("/lapack/liblapack", lapack)) "reference" else basename(lapack)
if (nzchar(Sys.getenv("OPENBLAS_CORETYPE"))) {
  blas <- sprintf("%s (%s)", blas, Sys.getenv("OPENBLAS_CORETYPE"))
}
cat(machine_description(), "\nBLAS:", extSoftVersion()[["BLAS"]], "\nLAPACK:", lapack, "\n")

d <- 8L
kernel <- matern(3/2, lengthscale = rep(0.8, d), variance = 1)
elapsed <- function(expr) system.time(expr)[["elapsed"]]
predict_now <- function(n, t) {
  rm(list = ls(sddgp:::exact_timings), envir = sddgp:::exact_timings)
  sddgp:::exact_seconds(n, 1, t, d)
}
# Calibrated once, as a session that fits several times sees it.
for (t in threads) sddgp:::exact_calibration(t)
at_start <- as.list(sddgp:::exact_timings)
predict_start <- function(n, t) {
  list2env(at_start, envir = sddgp:::exact_timings)
  sddgp:::exact_seconds(n, 1, t, d)
}

record <- function(task, n, t, r, seconds, predicted_start, predicted_now, same_bits) {
  row <- data.frame(machine = cpu_model(), blas = blas, task = task, n = n, threads = t, reps = r,
                    seconds = seconds, predicted_start = predicted_start,
                    predicted = predicted_now, same_bits = same_bits,
                    load = load_average())
  print(row, digits = 4, row.names = FALSE)
  replace_rows(row, out_csv, c("blas", "task", "n", "threads"))
}

for (n in sizes) {
  set.seed(n)
  x <- matrix(runif(n * d), n)
  y <- sin(3 * x[, 1]) + rnorm(n, sd = 0.1)
  first <- NULL
  for (t in threads) {
    start <- predict_start(n, t)
    now <- predict_now(n, t)
    times <- vapply(seq_len(reps), function(r) elapsed(
      fit <<- gp_sdd(x, y, kernel = kernel, noise = 0.01, solver = "cholesky",
                     threads = t)), numeric(1))
    if (is.null(first)) first <- fit$alpha
    record("exact", n, t, reps, stats::median(times), start, now,
           identical(fit$alpha, first))
    rm(fit)
    invisible(gc())
  }
}

if (estimation) {
  set.seed(1)
  n <- 5000L
  x <- matrix(runif(n * d), n)
  y <- sin(3 * x[, 1]) + cos(2 * x[, 2]) + rnorm(n, sd = 0.1)
  xs <- sddgp:::scale_inputs(x[1:2000, ], kernel)
  mll <- function(t) .Call(sddgp:::C_mll, xs, y[1:2000], sddgp:::kernel_spec(kernel),
                           0.01, NULL, t)
  first <- NULL
  for (t in threads) {
    times <- vapply(seq_len(reps), function(r) elapsed(value <<- mll(t)), numeric(1))
    if (is.null(first)) first <- value
    record("mll", 2000L, t, reps, stats::median(times), NA, NA, identical(value, first))
  }
  first <- NULL
  for (t in threads) {
    times <- vapply(seq_len(reps), function(r) {
      set.seed(2)
      elapsed(est <<- sddgp:::estimate_hyperparameters(
        x, y, matern(3/2), NULL, estimation_control(), t))
    }, numeric(1))
    if (is.null(first)) first <- est[c("kernel", "noise")]
    record("estimation", 2000L, t, reps, stats::median(times), NA, NA,
           identical(est[c("kernel", "noise")], first))
  }
}
cat("written", out_csv, "\n")
