# Every solver of gp_sdd() on pol split 0 with the published hyperparameters,
# at its default settings: test RMSE (and, with samples, NLL) in normalised
# units, and the wall time of the fit.
#
#   Rscript inst/benchmarks/solvers_pol.R [solver ...] [--samples=S] [--threads=T] [--out=file.csv]
#
# With no solver named, all of them run, the exact Cholesky solve last (it
# takes minutes with the reference BLAS).  The exact GP gives RMSE 0.0834
# and NLL -1.214 here.
library(sddgp)

args <- commandArgs(trailingOnly = TRUE)
option <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit)) sub(paste0("^--", name, "="), "", hit[1L]) else default
}
samples <- as.integer(option("samples", "0"))
threads <- as.integer(option("threads", "2"))
out <- option("out", "")
chosen <- args[!startsWith(args, "--")]
if (!length(chosen)) chosen <- c("sdd", "cg", "sgd", "svgp", "dsg", "cabcd", "cholesky")

pol <- read_uci("pol", split = 0)
hp <- uci_hyperparameters("pol", split = 0)
cat(sprintf("pol split 0: %d training, %d test points, %d inputs; %d thread%s, %d samples\n",
            nrow(pol$x_train), nrow(pol$x_test), ncol(pol$x_train), threads,
            if (threads == 1L) "" else "s", samples))

rows <- list()
for (solver in chosen) {
  set.seed(1)
  seconds <- system.time(
    fit <- gp_sdd(pol$x_train, pol$y_train, kernel = hp$kernel, noise = hp$noise,
                  solver = solver, samples = samples, threads = threads)
  )[["elapsed"]]
  pred <- predict(fit, pol$x_test, threads = threads)
  rmse <- sqrt(mean((pred - pol$y_test)^2)) / fit$scaling$y_scale
  nll <- if (samples > 0) {
    predictive_scores(fit, pol$x_test, pol$y_test, normalised = TRUE,
                      threads = threads)[["nll"]]
  } else NA_real_
  rows[[solver]] <- data.frame(solver = solver, rmse = rmse, nll = nll,
                               seconds = seconds, iterations = fit$iterations,
                               status = fit$status)
  cat(sprintf("%-9s RMSE %.4f  NLL %7.3f  %7.1f s  %6d iterations (%s)\n", solver,
              rmse, nll, seconds, fit$iterations, fit$status))
}
res <- do.call(rbind, rows)
if (nzchar(out)) utils::write.csv(res, out, row.names = FALSE)
