# The Tanimoto kernel's forms of fingerprints: kernel-block products
# K[I, :] a (one column, the posterior mean's product) on synthetic binary
# fingerprints of 1024 bits with a Morgan-like density (about 45 bits set
# in a row), computed from bit-packed rows (the binary fast path: "bits"
# with the popcount this CPU allows, AVX-512's vector one where it has it,
# and "bits_portable" with the portable loop), from
# the dense 0/1 matrix by the dense loop (sum of minima over all 1024
# columns), and from sparse rows (the form of count fingerprints given as
# a Matrix::dgCMatrix); and the random hash features' product Phi(x) W
# (MinHash on bits, weighted sampling on counts).  Pairs (or point x
# feature entries) per second, medians of `reps` runs, on 1 and 2 threads.
#
#   Rscript inst/benchmarks/tanimoto.R [n] [reps]
#
# writes inst/extdata/benchmarks/tanimoto.csv.
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.integer(args[[1L]]) else 4000L
reps <- if (length(args) >= 2L) as.integer(args[[2L]]) else 5L
library(sddgp)
stopifnot(requireNamespace("Matrix", quietly = TRUE))
ns <- asNamespace("sddgp")
d <- 1024L
set.seed(1)
x <- matrix(stats::rbinom(n * d, 1, 45 / 1024), n, d)
x[rowSums(x) == 0, 1L] <- 1
storage.mode(x) <- "double"
xs <- methods::as(Matrix::Matrix(x, sparse = TRUE), "CsparseMatrix")
spec <- sddgp:::kernel_spec(tanimoto(1))
forms <- list(
  bits = ns$tanimoto_points(x, TRUE),
  bits_portable = ns$tanimoto_points(x, TRUE),
  dense_loop = ns$tanimoto_points(x, FALSE),
  sparse_rows = ns$tanimoto_points(xs, FALSE))
a <- matrix(stats::rnorm(n), n)
median_time <- function(f) {
  stats::median(vapply(seq_len(reps), function(r) system.time(f())[["elapsed"]], 0))
}
rows <- list()
for (threads in 1:2) {
  ref <- NULL
  for (form in names(forms)) {
    p <- forms[[form]]
    path <- ns$tanimoto_popcount_path(form != "bits_portable")
    run <- function() .Call(ns$C_kernel_matmul, p, p, spec, a, "double", threads)
    out <- run()
    if (is.null(ref)) ref <- out
    stopifnot(max(abs(out - ref)) < 1e-9)
    if (form == "bits_portable") stopifnot(identical(out, ref))
    s <- median_time(run)
    rows[[length(rows) + 1L]] <- data.frame(
      what = "kernel_product", form = form, threads = threads, n = n, d = d,
      seconds = s, per_second = n^2 / s,
      popcount = if (startsWith(form, "bits")) path else NA_character_)
  }
  m <- 1000L
  W <- matrix(stats::rnorm(m * 4), m, 4)
  for (form in c("bits", "sparse_rows")) {
    p <- forms[[form]]
    run <- function() .Call(ns$C_hash_matmul, c(1, 2), 0, spec, p, W, threads)
    s <- median_time(run)
    rows[[length(rows) + 1L]] <- data.frame(
      what = "hash_features", form = form, threads = threads, n = n, d = d,
      seconds = s, per_second = n * m / s, popcount = NA_character_)
  }
}
res <- do.call(rbind, rows)
res$machine <- tryCatch({
  cpu <- grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1L]
  trimws(sub("^model name\\s*:", "", cpu))
}, error = function(e) NA_character_)
res$load <- tryCatch(readLines("/proc/loadavg")[1L], error = function(e) NA_character_)
print(res[, c("what", "form", "popcount", "threads", "seconds", "per_second")], digits = 3)
dir.create("inst/extdata/benchmarks", showWarnings = FALSE, recursive = TRUE)
utils::write.csv(res, "inst/extdata/benchmarks/tanimoto.csv", row.names = FALSE)
