# Vecchia's approximate log marginal likelihood (the estimation stage of
# estimation_control(method = "vecchia")): what an evaluation with its
# gradient costs on the UCI sets' training points, and how far the
# approximation is from the exact likelihood, by number of neighbours.
#
#   Rscript inst/benchmarks/vecchia_likelihood.R [--data=DIR]
#       [--datasets=pol,elevators,bike,protein,keggdirected] [--neighbours=10,30,60]
#       [--threads=2] [--rounds=3] [--exact-points=3000]
#
# For each data set (split 0, standardised as gp_sdd() does, the paper's
# hyperparameters) and number of neighbours m:
# - neighbour_seconds: finding every point's m neighbours (C_vecchia_factor);
# - evaluation_seconds: the median over --rounds of one evaluation of the
#   value and its d + 2 derivatives on all the training points;
# - gap_per_point: (Vecchia's - the exact log likelihood) / points, on the
#   first --exact-points training points, where the exact one (C_mll) is
#   affordable;
# - gradient_error: the largest difference of the two gradients there,
#   over the largest exact component.
# Rows go to inst/extdata/benchmarks/vecchia_likelihood.csv (replaced per
# data set and m).
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))

data_dir <- option("data", file.path("..", "shared", "data", "uci"))
datasets <- choice_option("datasets", c("pol", "elevators", "bike", "protein", "keggdirected"))
neighbours <- as.integer(split_list(option("neighbours", "10,30,60")))
threads <- as.integer(option("threads", "2"))
rounds <- as.integer(option("rounds", "3"))
exact_points <- as.integer(option("exact-points", "3000"))
out <- file.path("inst", "extdata", "benchmarks", "vecchia_likelihood.csv")

likelihoods <- function(x, y, kernel, noise, m) {
  xs <- sddgp:::scale_inputs(x, kernel)
  spec <- sddgp:::kernel_spec(kernel)
  found <- system.time(nb <- .Call(sddgp:::C_vecchia_factor, xs, spec, rep(noise, nrow(x)),
                                   m, threads)$neighbours)[["elapsed"]]
  list(found = found, evaluate = function() {
    .Call(sddgp:::C_mll_vecchia, xs, y, spec, noise, NULL, nb, threads)
  })
}

for (dataset in datasets) for (m in neighbours) {
  data <- uci_standardized(dataset, 0, data_dir)
  x <- data$x
  y <- data$y
  hp <- data$hp
  all <- likelihoods(x, y, hp$kernel, hp$noise, m)
  seconds <- stats::median(vapply(seq_len(rounds), function(r) {
    system.time(all$evaluate())[["elapsed"]]
  }, numeric(1)))
  first <- seq_len(min(exact_points, nrow(x)))
  part <- likelihoods(x[first, , drop = FALSE], y[first], hp$kernel, hp$noise, m)$evaluate()
  exact <- .Call(sddgp:::C_mll, sddgp:::scale_inputs(x[first, , drop = FALSE], hp$kernel),
                 y[first], sddgp:::kernel_spec(hp$kernel), hp$noise, NULL, TRUE, threads)
  row <- stamp(data.frame(
    dataset = dataset, n = nrow(x), d = ncol(x), neighbours = m, threads = threads,
    neighbour_seconds = all$found, evaluation_seconds = seconds,
    exact_points = length(first),
    gap_per_point = (part$value - exact$value) / length(first),
    gradient_error = max(abs(part$gradient - exact$gradient)) / max(abs(exact$gradient))))
  replace_rows(row, out, c("dataset", "neighbours"))
  with(row, cat(sprintf(
    "%-12s n %6d d %2d m %3d: neighbours %5.1f s, evaluation %5.2f s; on %d points gap %+.4f nats a point, gradient error %.3f (load %.1f)\n",
    dataset, n, d, neighbours, neighbour_seconds, evaluation_seconds, exact_points,
    gap_per_point, gradient_error, load)))
}
