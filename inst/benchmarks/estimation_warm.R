# What warm starts save in estimation on all the data, by Adam's learning
# rate: the inner CG iterations of steps 2 to `steps` of the ascent
# (iterative_control()) with every solve started from the previous step's
# solutions against the same ascent started from zero, on synthetic data
# (n points uniform on [0, 1]^3, y = sin(6 x1) + cos(4 x2) + x3 plus noise
# of sd 0.05), inner tolerance 0.01, 8 probes, one thread.
#
#   Rscript inst/benchmarks/estimation_warm.R [--n=1500] [--steps=10]
#       [--rates=0.1,0.03,0.01,0.003]
#       [--out=inst/extdata/benchmarks/estimation_warm.csv]
#
# Every learning rate takes its own path, so warm and cold are compared
# within a rate.
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))

n <- as.integer(option("n", "1500"))
steps <- as.integer(option("steps", "10"))
rates <- as.numeric(split_list(option("rates", "0.1,0.03,0.01,0.003")))
out <- option("out", file.path("inst", "extdata", "benchmarks", "estimation_warm.csv"))

set.seed(10)
x <- matrix(runif(n * 3), n)
y <- sin(6 * x[, 1]) + cos(4 * x[, 2]) + x[, 3] + rnorm(n, sd = 0.05)

ascent <- function(rate, warm) {
  set.seed(11)
  fit <- suppressWarnings(gp_sdd(x, y, solver = "cholesky", threads = 1,
    estimation = estimation_control(method = "iterative", subset_size = 300,
      iterative = iterative_control(probes = 8, inner_tolerance = 0.01, max_steps = steps,
                                    tolerance = 0, learning_rate = rate, warm_start = warm))))
  it <- fit$estimation$iterative
  c(iterations = sum(it$inner_iterations[-1]), seconds = sum(it$inner_seconds[-1]))
}

rows <- do.call(rbind, lapply(rates, function(rate) {
  warm <- ascent(rate, TRUE)
  cold <- ascent(rate, FALSE)
  data.frame(n = n, steps = steps, learning_rate = rate,
             warm_iterations = warm[["iterations"]], cold_iterations = cold[["iterations"]],
             ratio = warm[["iterations"]] / cold[["iterations"]],
             warm_seconds = warm[["seconds"]], cold_seconds = cold[["seconds"]],
             load = load_average(), date = format(Sys.time(), "%Y-%m-%d %H:%M"),
             sddgp = as.character(utils::packageVersion("sddgp")),
             machine = machine_description())
}))
print(rows[, c("learning_rate", "warm_iterations", "cold_iterations", "ratio", "load")],
      digits = 3, row.names = FALSE)
utils::write.csv(rows, out, row.names = FALSE)
