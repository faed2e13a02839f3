# Throughput of the kernel engine: the kernel-block product K[I, :] A that
# every SDD step, every prediction and every sample evaluation is made of,
# against a naive OpenMP loop compiled here with R's default flags.
#
#   Rscript inst/benchmarks/engine.R [n] [reps] [output.csv]
#
# defaults: n = 100000 points, 5 repetitions (the median is reported),
# output inst/extdata/benchmarks/engine.csv.  B = 512 rows of K (an SDD
# batch) against all n columns, Matern-3/2, d = 8, 26 and 90, A with 1
# column (the mean) and 65 (the mean and 64 samples), 1 and 2 threads,
# kernel values in double and in single precision (precision = "single").
# Kernel entries per second = B * n / time; the naive loop computes exactly
# the same product in double (every entry once, with libm's exp and sqrt,
# summed row by row), and both results are compared with it.
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "compile_c.R"))
source(file.path("inst", "benchmarks", "options.R"))
n <- if (length(args) >= 1L) as.integer(args[[1L]]) else 100000L
reps <- if (length(args) >= 2L) as.integer(args[[2L]]) else 5L
out_csv <- if (length(args) >= 3L) args[[3L]] else
  file.path("inst", "extdata", "benchmarks", "engine.csv")
B <- 512L

naive_src <- "
#include <math.h>
#include <stdlib.h>
#include <R.h>
#include <Rinternals.h>
/* out = K(x1, x2) A for Matern-3/2 with unit variance: the textbook loop,
 * given cache-friendly layouts (points and rows of A contiguous: x1t, x2t
 * are d x n, At is m x n2). */
SEXP naive_matmul(SEXP x1t, SEXP x2t, SEXP At, SEXP threads)
{
  const int d = nrows(x1t), n1 = ncols(x1t), n2 = ncols(x2t), m = nrows(At);
  const double *p = REAL(x1t), *q = REAL(x2t), *a = REAL(At);
  SEXP out = PROTECT(allocMatrix(REALSXP, n1, m));
  double *o = REAL(out);
  #pragma omp parallel num_threads(asInteger(threads))
  {
    double *acc = malloc(sizeof(double) * m);
    #pragma omp for schedule(static)
    for (int i = 0; i < n1; i++) {
      for (int c = 0; c < m; c++) acc[c] = 0.0;
      for (int j = 0; j < n2; j++) {
        double r2 = 0.0;
        for (int k = 0; k < d; k++) {
          const double diff = p[k + (size_t)i * d] - q[k + (size_t)j * d];
          r2 += diff * diff;
        }
        const double r = sqrt(3.0 * r2), kv = (1.0 + r) * exp(-r);
        for (int c = 0; c < m; c++) acc[c] += kv * a[c + (size_t)j * m];
      }
      for (int c = 0; c < m; c++) o[i + (size_t)c * n1] = acc[c];
    }
    free(acc);
  }
  UNPROTECT(1);
  return out;
}
"
dll <- compile_c(naive_src, "naive",
                 makevars = "PKG_CFLAGS = $(SHLIB_OPENMP_CFLAGS)\nPKG_LIBS = $(SHLIB_OPENMP_CFLAGS)")

time_median <- function(f) {
  f() # warm-up: page in, thread pool
  stats::median(vapply(seq_len(reps), function(i) system.time(f())[["elapsed"]], 0))
}

set.seed(1)
rows <- list()
for (d in c(8L, 26L, 90L)) {
  inputs <- engine_inputs(n, d, B)
  x <- inputs$x
  batch <- inputs$batch
  spec <- inputs$spec
  for (cols in c(1L, 65L)) {
    A <- matrix(stats::rnorm(n * cols), n, cols)
    for (threads in 1:2) {
      xt <- t(x)
      batch_t <- t(batch)
      At <- t(A)
      naive <- function() .Call(dll$naive_matmul, batch_t, xt, At, threads)
      reference <- naive()
      t_naive <- time_median(naive)
      for (precision in c("double", "single")) {
        engine <- function() {
          .Call(sddgp:::C_kernel_matmul, batch, x, spec, A, precision, threads)
        }
        diff <- max(abs(engine() - reference)) / max(abs(reference))
        t_engine <- time_median(engine)
        rows[[length(rows) + 1L]] <- data.frame(
          n = n, d = d, columns = cols, threads = threads, batch = B,
          precision = precision, engine_seconds = t_engine, naive_seconds = t_naive,
          engine_entries_per_s = B * n / t_engine, naive_entries_per_s = B * n / t_naive,
          speedup = t_naive / t_engine, max_rel_difference = diff)
        r <- rows[[length(rows)]]
        cat(sprintf("d = %2d, %2d column%s, %d thread%s, %s: engine %.3g entries/s, naive %.3g, ratio %.1f (max rel. difference %.1e)\n",
                    d, cols, if (cols == 1L) "" else "s", threads, if (threads == 1L) "" else "s",
                    precision, r$engine_entries_per_s, r$naive_entries_per_s, r$speedup, diff))
      }
    }
  }
}
res <- do.call(rbind, rows)
res$machine <- machine_description()
res$sddgp <- utils::packageDescription("sddgp")$Version
replace_rows(res, out_csv, "machine")
cat("written", out_csv, "\n")
