# How far Vecchia's approximate log likelihood is from the exact one under
# the package's random ordering and under a maxmin ordering (each point the
# farthest from those before it, started near the centre; Guinness 2018,
# "Permutation and grouping methods for sharpening Gaussian process
# approximations", Technometrics 60), with each point given its m nearest
# earlier points either way.  Split 0 of the UCI sets, standardised as
# gp_sdd() does, the paper's hyperparameters, the first --points training
# points (the exact likelihood must be affordable).  The maxmin ordering
# and its neighbours are found here in R; only the likelihood is the
# package's (C_mll_vecchia).
#
#   Rscript inst/benchmarks/vecchia_ordering.R [--data=DIR]
#       [--datasets=pol,elevators,bike,protein,keggdirected] [--neighbours=10,30]
#       [--points=2000] [--threads=2]
#
# Rows (gap per point: (Vecchia's - exact) / points) go to
# inst/extdata/benchmarks/vecchia_ordering.csv, replaced per data set and m.
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))

data_dir <- option("data", file.path("..", "shared", "data", "uci"))
datasets <- choice_option("datasets", c("pol", "elevators", "bike", "protein", "keggdirected"))
neighbours <- as.integer(split_list(option("neighbours", "10,30")))
points <- as.integer(option("points", "2000"))
threads <- as.integer(option("threads", "2"))
out <- file.path("inst", "extdata", "benchmarks", "vecchia_ordering.csv")

maxmin_order <- function(xs) {
  sq <- function(j) colSums((t(xs) - xs[j, ])^2)
  first <- which.min(colSums((t(xs) - colMeans(xs))^2))
  order <- first
  dmin <- sq(first)
  dmin[first] <- -Inf
  for (t in seq_len(nrow(xs) - 1L)) {
    j <- which.max(dmin)
    order <- c(order, j)
    dmin <- pmin(dmin, sq(j))
    dmin[order] <- -Inf
  }
  order
}

# The m x n neighbour matrix C_mll_vecchia() takes: each point's m nearest
# points earlier in `order` (1-based, NA past the first points' counts).
earlier_neighbours <- function(xs, order, m) {
  D <- as.matrix(stats::dist(xs))
  nb <- matrix(NA_integer_, m, nrow(xs))
  for (t in seq_along(order)[-1L]) {
    earlier <- order[seq_len(t - 1L)]
    k <- min(m, t - 1L)
    nb[seq_len(k), order[t]] <- earlier[order(D[order[t], earlier])[seq_len(k)]]
  }
  nb
}

for (dataset in datasets) {
  data <- uci_standardized(dataset, 0, data_dir)
  hp <- data$hp
  first <- seq_len(min(points, nrow(data$x)))
  x <- data$x[first, , drop = FALSE]
  y <- data$y[first]
  xs <- sddgp:::scale_inputs(x, hp$kernel)
  spec <- sddgp:::kernel_spec(hp$kernel)
  exact <- .Call(sddgp:::C_mll, xs, y, spec, hp$noise, NULL, FALSE, threads)$value
  gap <- function(nb) {
    (.Call(sddgp:::C_mll_vecchia, xs, y, spec, hp$noise, NULL, nb, threads)$value - exact) /
      length(first)
  }
  maxmin <- maxmin_order(xs)
  for (m in neighbours) {
    random <- .Call(sddgp:::C_vecchia_factor, xs, spec, rep(hp$noise, length(first)), m,
                    threads)$neighbours
    row <- stamp(data.frame(dataset = dataset, d = ncol(x), points = length(first),
                            neighbours = m, gap_random = gap(random),
                            gap_maxmin = gap(earlier_neighbours(xs, maxmin, m))))
    replace_rows(row, out, c("dataset", "neighbours"))
    with(row, cat(sprintf("%-12s m %2d: gap per point, random order %+.4f, maxmin %+.4f\n",
                          dataset, neighbours, gap_random, gap_maxmin)))
  }
}
