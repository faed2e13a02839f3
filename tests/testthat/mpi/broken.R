# Run by test-mpi.R as every process of `mpirun -np 2 Rscript broken.R
# out.rds how`: rank 1 breaks in a long solve, killed (SIGKILL) two
# seconds in (`kill`), or with messages that fail (`fail`: a communicator
# that does not exist); rank 0 would save its fit if the solve ever ended.
args <- commandArgs(trailingOnly = TRUE)
library(sddgp)
parallel <- sddgp_mpi()
if (parallel$rank == 1L) {
  if (args[2] == "kill") system(sprintf("(sleep 2; kill -9 %d) > /dev/null 2>&1 &", Sys.getpid()))
  else parallel$comm <- 7L
}
set.seed(81)
n <- 2000
x <- matrix(runif(n * 2), n)
y <- sin(6 * x[, 1]) + cos(4 * x[, 2]) + rnorm(n, sd = 0.1)
fit <- gp_sdd(x, y, kernel = matern(3/2, c(0.3, 0.4), 1), noise = 0.01,
              control = sdd_control(iterations = 1e6, batch_size = 100, tolerance = 0,
                                    cache = "never"),
              threads = 1, parallel = parallel)
if (parallel$rank == 0L) saveRDS(fit, args[1])
invisible(Rmpi::mpi.finalize())
