# What building Vecchia's factor costs (C_vecchia_factor: every point's m
# nearest earlier points, then n small factorisations), the step that
# Vecchia's preconditioner and the Vecchia estimation stage start with,
# for the build in --lib (a library path; the default, the one on the
# search path), so that an older build's exhaustive neighbour search and
# the k-d tree compare on the same machine.
#
#   Rscript inst/benchmarks/vecchia_neighbours.R [--lib=PATH] [--build=LABEL]
#       [--sizes=25000,100000,400000] [--dims=8,26] [--neighbours=30]
#       [--datasets=protein,keggdirected] [--data=DIR] [--rounds=3] [--threads=2]
#
# Inputs: uniform on the unit cube (--sizes x --dims; the worst case for a
# k-d tree, every dimension effective), and the UCI sets' training points
# of split 0 (--datasets; "" for none), standardised and scaled by the
# paper's length scales.  Each row: the median of --rounds builds, and an
# MD5 sum of the neighbour sets (each point's neighbours sorted), equal
# between builds that find the same neighbours.  Where the build has it,
# `neighbours_seconds` is the median time of finding the neighbours alone
# (C_vecchia_neighbours, what the estimation stage needs), whose neighbours
# must be the factor's.  Rows go to
# inst/extdata/benchmarks/vecchia_neighbours.csv, replaced per build,
# input and m.
source(file.path("inst", "benchmarks", "options.R"))
lib <- option("lib", "")
suppressPackageStartupMessages(
  if (nzchar(lib)) library(sddgp, lib.loc = lib) else library(sddgp))

build <- option("build", as.character(utils::packageVersion("sddgp")))
sizes <- as.integer(split_list(option("sizes", "25000,100000,400000")))
dims <- as.integer(split_list(option("dims", "8,26")))
neighbours <- as.integer(split_list(option("neighbours", "30")))
datasets <- split_list(option("datasets", "protein,keggdirected"))
data_dir <- option("data", file.path("..", "shared", "data", "uci"))
rounds <- as.integer(option("rounds", "3"))
threads <- as.integer(option("threads", "2"))
out <- file.path("inst", "extdata", "benchmarks", "vecchia_neighbours.csv")

neighbour_sum <- function(nb) {
  path <- tempfile()
  on.exit(unlink(path))
  writeBin(as.vector(apply(nb, 2L, sort, na.last = TRUE)), path)
  unname(tools::md5sum(path))
}

time_factor <- function(input, xs, kernel, m) {
  spec <- sddgp:::kernel_spec(kernel)
  noise <- rep(0.01, nrow(xs))
  factor <- NULL
  seconds <- vapply(seq_len(rounds), function(r) {
    system.time(factor <<- .Call(sddgp:::C_vecchia_factor, xs, spec, noise, m, threads))[["elapsed"]]
  }, numeric(1))
  alone <- NA_real_
  if (exists("C_vecchia_neighbours", asNamespace("sddgp"))) {
    found <- NULL
    alone <- stats::median(vapply(seq_len(rounds), function(r) {
      system.time(found <<- .Call(sddgp:::C_vecchia_neighbours, xs, m, threads))[["elapsed"]]
    }, numeric(1)))
    if (!identical(found$neighbours, factor$neighbours))
      stop(input, ": the neighbours found alone are not the factor's", call. = FALSE)
  }
  row <- stamp(data.frame(build = build, input = input, n = nrow(xs), d = ncol(xs),
                          neighbours = m, threads = threads, rounds = rounds,
                          seconds = stats::median(seconds), seconds_min = min(seconds),
                          neighbours_seconds = alone,
                          neighbour_md5 = neighbour_sum(factor$neighbours)))
  replace_rows(row, out, c("build", "input", "n", "neighbours"))
  with(row, cat(sprintf("%-10s %-12s n %7d d %2d m %2d: %7.2f s, neighbours alone %.2f s (median of %d; load %.1f)\n",
                        build, input, n, d, neighbours, seconds, neighbours_seconds, rounds, load)))
}

for (d in dims) for (n in sizes) for (m in neighbours) {
  xs <- matrix(withr::with_seed(n + d, stats::runif(n * d)), n)
  time_factor(sprintf("uniform_d%d", d), xs, matern(3/2, 1, 1), m)
}
for (dataset in datasets[nzchar(datasets)]) for (m in neighbours) {
  data <- uci_standardized(dataset, 0, data_dir)
  time_factor(dataset, sddgp:::scale_inputs(data$x, data$hp$kernel), data$hp$kernel, m)
}
