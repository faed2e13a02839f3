# One outer step's inner solve of the ascent on all the data with its
# kernel values in double or single precision (iterative_control(precision
# =)): the CG solve of the targets and 16 probes, from zero, to the
# default inner tolerance, on a random `n` points of a UCI training split
# (standardised, as gp_sdd() standardises them) at the paper's published
# hyperparameters; seconds, CG iterations, seconds an iteration, and how
# far single precision's solutions lie from double's (relative 2-norm,
# largest over the columns).  The kernel matrix is not cached, as in the
# ascent above 15,811 points (cg_control()'s cache_limit in double
# precision; protein and keggdirected have 41,000 to 44,000), so a small
# n measures the same per-pair cost.  The precisions alternate, `reps`
# times, in one process, so that the ratio of their medians compares them
# under the same load.
#
#   Rscript inst/benchmarks/estimation_precision.R [--dataset=protein]
#       [--split=0] [--n=10000] [--reps=3] [--threads=1]
#       [--data=../shared/data/uci]
#       [--out=inst/extdata/benchmarks/estimation_precision.csv]
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))
ns <- asNamespace("sddgp")

dataset <- option("dataset", "protein")
split <- as.integer(option("split", "0"))
n <- as.integer(option("n", "10000"))
reps <- as.integer(option("reps", "3"))
threads <- as.integer(option("threads", "1"))
data_dir <- option("data", file.path("..", "shared", "data", "uci"))
out <- option("out", file.path("inst", "extdata", "benchmarks", "estimation_precision.csv"))

data <- read_uci(dataset, split = split, path = data_dir)
scaling <- ns$standardization(data$x_train, data$y_train, TRUE, NULL)
set.seed(1)
rows <- sample(nrow(data$x_train), min(n, nrow(data$x_train)))
x <- ns$standardize_inputs(data$x_train, scaling)[rows, , drop = FALSE]
y <- ns$standardize_targets(data$y_train, scaling)[rows]
hp <- uci_hyperparameters(dataset, split = split)
kernel <- matern(3/2, lengthscale = hp$kernel$lengthscale, variance = hp$kernel$variance)
control <- iterative_control()
set.seed(2)
prior <- ns$draw_prior(kernel, ncol(x), control$features, control$probes)
problem <- ns$new_problem(x, y, kernel, hp$noise, prior, threads)

solve <- function(precision) {
  inner <- cg_control(tolerance = control$inner_tolerance, features = control$features,
                      precision = precision, cache = "never")
  start <- proc.time()[["elapsed"]]
  sol <- ns$run_solver("cg", problem, inner, threads)
  list(alpha = sol$alpha, iterations = sol$iterations,
       seconds = proc.time()[["elapsed"]] - start)
}

results <- list()
alphas <- list()
for (rep in seq_len(reps)) for (precision in c("double", "single")) {
  sol <- solve(precision)
  alphas[[precision]] <- sol$alpha
  results[[length(results) + 1L]] <- data.frame(
    dataset = dataset, split = split, n = length(y), d = ncol(x),
    noise = hp$noise, kernel_variance = hp$kernel$variance, columns = ncol(sol$alpha),
    precision = precision, rep = rep, iterations = sol$iterations, seconds = sol$seconds,
    seconds_per_iteration = sol$seconds / sol$iterations, threads = threads)
  r <- results[[length(results)]]
  cat(sprintf("%-6s rep %d: %d CG iterations, %.1f s, %.3f s an iteration\n",
              precision, rep, r$iterations, r$seconds, r$seconds_per_iteration))
}
rows <- do.call(rbind, results)
rows$solution_difference <- max(sqrt(colSums((alphas$single - alphas$double)^2) /
                                       colSums(alphas$double^2)))
rows <- stamp(rows)
med <- function(p) stats::median(rows$seconds_per_iteration[rows$precision == p])
cat(sprintf(paste("median seconds an iteration: double %.3f, single %.3f (ratio %.2f);",
                  "solutions differ by %.2g (relative, largest column)\n"),
            med("double"), med("single"), med("double") / med("single"),
            rows$solution_difference[1]))
replace_rows(rows, out, c("dataset", "split", "n", "machine"))
