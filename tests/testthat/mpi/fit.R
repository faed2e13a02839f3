# Run by test-mpi.R as every process of `mpirun -np P Rscript fit.R out.rds
# mpi n iterations [step_fraction]` (P = 1: the single-process reference,
# `none` instead of `mpi`): the same fit, predictions and fresh draws on
# every process; rank 0 saves them.
args <- commandArgs(trailingOnly = TRUE)
library(sddgp)
parallel <- if (args[2] == "mpi") sddgp_mpi()
n <- as.integer(args[3])
set.seed(81)
x <- matrix(runif(n * 2), n)
y <- sin(6 * x[, 1]) + cos(4 * x[, 2]) + rnorm(n, sd = 0.1)
control <- list(iterations = as.integer(args[4]), batch_size = 100, check_every = 50,
                test_x = x[1:50, ], test_y = y[1:50], trace_every = 100, cache = "never")
if (length(args) > 4) control$step_fraction <- as.numeric(args[5])
set.seed(82)
fit <- gp_sdd(x, y, kernel = matern(3/2, c(0.3, 0.4), 1), noise = 0.01,
              control = do.call(sdd_control, control), samples = 5, threads = 1,
              parallel = parallel)
newx <- matrix(runif(40), 20)
out <- list(alpha = fit$alpha, alpha_samples = fit$alpha_samples, iterations = fit$iterations,
            status = fit$status, backoffs = fit$state$backoffs, trace = fit$trace[names(fit$trace) != "seconds"],
            predict = predict(fit, newx, se.fit = TRUE, threads = 1),
            simulate = simulate(fit, nsim = 3, newdata = newx, seed = 83, threads = 1,
                                parallel = parallel))
if (is.null(parallel) || parallel$rank == 0L) saveRDS(out, args[1])
if (!is.null(parallel)) invisible(Rmpi::mpi.finalize())
