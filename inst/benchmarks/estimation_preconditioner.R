# The first steps of the ascent on all the data (estimation_control(method
# = "iterative")) with each preconditioner of its inner CG solves
# (iterative_control(preconditioner =)): the CG iterations and seconds of
# every step's solve of the targets and 16 probes, on a UCI training split
# (or a random `n` of its points), from the same subset estimate, seed and
# probes.  The ascents are the default ones cut at `--steps` steps; the
# prediction solve that follows is skipped (one CG iteration).  Iteration
# counts do not depend on the machine or its load; seconds do.
#
#   Rscript inst/benchmarks/estimation_preconditioner.R [--dataset=pol]
#       [--split=0] [--n=0] [--steps=4]
#       [--preconditioners=vecchia,pivoted_cholesky] [--threads=1]
#       [--data=../shared/data/uci]
#       [--out=inst/extdata/benchmarks/estimation_preconditioner.csv]
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))

dataset <- option("dataset", "pol")
split <- as.integer(option("split", "0"))
n <- as.integer(option("n", "0"))
steps <- as.integer(option("steps", "4"))
preconditioners <- choice_option("preconditioners", c("vecchia", "pivoted_cholesky"))
threads <- as.integer(option("threads", "1"))
data_dir <- option("data", file.path("..", "shared", "data", "uci"))
out <- option("out", file.path("inst", "extdata", "benchmarks",
                               "estimation_preconditioner.csv"))

data <- read_uci(dataset, split = split, path = data_dir)
set.seed(11)
rows <- if (n > 0 && n < nrow(data$x_train)) sample(nrow(data$x_train), n) else
  seq_len(nrow(data$x_train))
for (pc in preconditioners) {
  set.seed(7)
  cpu <- system.time(fit <- suppressWarnings(gp_sdd(
    data$x_train[rows, , drop = FALSE], data$y_train[rows], kernel = "matern32",
    solver = "cg", samples = 0, control = cg_control(max_iterations = 1), threads = threads,
    estimation = estimation_control(method = "iterative", iterative = iterative_control(
      max_steps = steps, preconditioner = pc)))))
  it <- fit$estimation$iterative
  row <- stamp(data.frame(
    dataset = dataset, split = split, n = length(rows), preconditioner = pc,
    step = seq_len(it$steps), inner_iterations = it$inner_iterations,
    inner_seconds = it$inner_seconds, inner_residual = it$inner_residuals,
    cpu_seconds = cpu[["user.self"]] + cpu[["sys.self"]], threads = threads))
  cat(sprintf("%-10s n = %6d  %-16s inner CG iterations by step: %s (%s s)\n", dataset,
              length(rows), pc, paste(it$inner_iterations, collapse = ", "),
              paste(round(it$inner_seconds), collapse = ", ")))
  replace_rows(row, out, c("dataset", "split", "n", "preconditioner", "step"))
}
cat("results in", out, "\n")
