# The blocked Cholesky routines of src/chol.c, 1 and 2 threads, against
# base R (one LAPACK call per step, with the BLAS R is linked to) on the
# same matrix K + noise I, synthetic d = 8 data, median wall seconds of the
# repetitions:
# - the exact solver: factor and solve for the posterior mean and 16 sample
#   systems, against chol() and backsolve();
# - one evaluation of the log marginal likelihood and its gradient (factor,
#   solve, inverse and the gradient's traces), the unit of hyperparameter
#   estimation, against chol() and chol2inv() (dpotrf and dpotri), the
#   factor and inverse alone.
# The sddgp times include building K (a second or less); base R gets K
# ready-made.
#
#   Rscript inst/benchmarks/cholesky.R [--sizes=2000,4000] [--reps=3]
#       [--out=inst/extdata/benchmarks/cholesky.csv]
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))
sizes <- as.integer(split_list(option("sizes", "2000,4000")))
reps <- as.integer(option("reps", "3"))
out_csv <- option("out", file.path("inst", "extdata", "benchmarks", "cholesky.csv"))

kernel <- matern(3/2, rep(0.8, 8), 1)
noise <- 0.05
elapsed <- function(expr) system.time(expr)[["elapsed"]]

rows <- list()
for (n in sizes) {
  set.seed(n)
  x <- matrix(runif(n * 8), n)
  rhs <- cbind(sin(3 * x[, 1]) + rnorm(n, sd = 0.2), matrix(rnorm(n * 16), n))
  problem <- list(x = x, xs = sddgp:::scale_inputs(x, kernel), kernel = kernel,
                  noise = rep(noise, n), y = rhs[, 1], rhs = rhs, has_mean = TRUE)
  a <- sddgp:::run_solver("cholesky", problem, cholesky_control(), threads = 1L)$alpha
  k <- .Call(sddgp:::C_kernel_matrix, problem$xs, problem$xs,
             sddgp:::kernel_spec(kernel), 2L)
  diag(k) <- diag(k) + noise
  base_solve <- function() {
    u <- chol(k)
    backsolve(u, backsolve(u, rhs, transpose = TRUE))
  }
  b <- base_solve()
  mll <- function(threads) {
    .Call(sddgp:::C_mll, problem$xs, problem$y, sddgp:::kernel_spec(kernel), noise,
          NULL, threads)
  }
  times <- sapply(seq_len(reps), function(r) c(
    base = elapsed(base_solve()),
    sddgp_1 = elapsed(sddgp:::run_solver("cholesky", problem, cholesky_control(),
                                         threads = 1L)),
    sddgp_2 = elapsed(sddgp:::run_solver("cholesky", problem, cholesky_control(),
                                         threads = 2L)),
    mll_base = elapsed(chol2inv(chol(k))),
    mll_1 = elapsed(mll(1L)),
    mll_2 = elapsed(mll(2L))))
  med <- apply(times, 1L, stats::median)
  row <- data.frame(n = n, rhs = ncol(rhs), reps = reps, base_r = med[["base"]],
                    sddgp_1_thread = med[["sddgp_1"]], sddgp_2_threads = med[["sddgp_2"]],
                    speedup_2_threads = med[["base"]] / med[["sddgp_2"]],
                    max_rel_diff = max(abs(a - b)) / max(abs(b)),
                    mll_base_r = med[["mll_base"]], mll_1_thread = med[["mll_1"]],
                    mll_2_threads = med[["mll_2"]],
                    mll_same_bits = identical(mll(1L), mll(2L)),
                    load = load_average())
  print(row, digits = 4, row.names = FALSE)
  rows[[length(rows) + 1L]] <- row
  rm(k)
  invisible(gc())
}
utils::write.csv(do.call(rbind, rows), out_csv, row.names = FALSE)
cat("written", out_csv, "\n")
