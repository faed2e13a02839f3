# SDD steps with the Tanimoto kernel at the SDD paper's molecule scale:
# n synthetic binary fingerprints of 1024 bits, 45 set per row (Morgan-like
# density), built as a sparse Matrix::dgCMatrix (bit-packed by the engine,
# never dense), targets from a smooth function of the bits.  Times `steps`
# SDD steps (batch 512, no kernel cache nor warm start, the mean's system
# only) through the solver itself, without gp_sdd()'s estimation and
# fitted values (an n^2 pass), on the given thread counts.  The setup
# (making the data, packing the bits: `setup_seconds`) is timed apart from
# the steps; `seconds_per_1000` is 1000 steps' time, measured when
# steps >= 1000 and scaled from the steps run otherwise (`measured` says
# which).  `path` is the popcount the kernel took: "avx512" where the CPU
# has AVX-512's vector popcount, else (or when asked) "portable".
#
#   Rscript inst/benchmarks/tanimoto_scale.R [n] [steps] [threads, e.g. 1,2] [portable]
#
# appends one row per thread count to
# inst/extdata/benchmarks/tanimoto_scale.csv.
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.integer(args[[1L]]) else 250000L
steps <- if (length(args) >= 2L) as.integer(args[[2L]]) else 1000L
thread_counts <- if (length(args) >= 3L) {
  as.integer(strsplit(args[[3L]], ",")[[1L]])
} else 1:2
library(sddgp)
if (length(args) >= 4L && args[[4L]] == "portable") sddgp:::tanimoto_popcount_path(FALSE)
stopifnot(requireNamespace("Matrix", quietly = TRUE))
setup <- system.time({
  set.seed(1)
  d <- 1024L
  bits <- 45L
  cols <- as.vector(replicate(n, sample.int(d, bits)))
  x <- Matrix::sparseMatrix(i = rep(seq_len(n), each = bits), j = cols, x = 1,
                            dims = c(n, d))
  y <- sin(as.numeric(x[, 1:32] %*% stats::rnorm(32))) + stats::rnorm(n, sd = 0.1)
  kernel <- tanimoto(variance = 1, mean = 0)
  kernel$binary <- TRUE
})[["elapsed"]]
rows <- list()
for (threads in thread_counts) {
  pack <- system.time(
    problem <- sddgp:::new_problem(x, y, kernel, 0.01, NULL, threads))[["elapsed"]]
  control <- sdd_control(iterations = steps, tolerance = 0, cache = "never",
                         warm_start = "none")
  sol <- sddgp:::run_solver("sdd", problem, control, threads)
  rows[[length(rows) + 1L]] <- data.frame(
    n = n, d = d, steps = steps, threads = threads,
    setup_seconds = setup + pack, seconds = sol$seconds,
    seconds_per_step = sol$seconds / steps,
    seconds_per_1000 = 1000 * sol$seconds / steps, measured = steps >= 1000,
    path = sddgp:::tanimoto_popcount_path())
}
res <- do.call(rbind, rows)
res$machine <- tryCatch(trimws(sub("^model name\\s*:", "", grep(
  "^model name", readLines("/proc/cpuinfo"), value = TRUE)[1L])), error = function(e) NA)
res$load <- tryCatch(readLines("/proc/loadavg")[1L], error = function(e) NA)
print(res)
out <- "inst/extdata/benchmarks/tanimoto_scale.csv"
utils::write.table(res, out, sep = ",", row.names = FALSE, append = file.exists(out),
                   col.names = !file.exists(out))
