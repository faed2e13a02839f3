# Why gp_sdd() solves small data sets exactly by default: on n = 1000,
# 2000 and 4000 points of a smooth function plus noise (d = 2,
# hyperparameters estimated), SDD at its defaults (solver = "sdd": 10,000
# steps, automatic step size) against the exact solve (solver =
# "cholesky", what gp_sdd() now picks up to 5000 points), both with 16
# posterior samples and the same estimated hyperparameters.
#
#   Rscript inst/benchmarks/small_data.R [threads = 2]
#
# Prints, per n: the solver's seconds (estimation excluded: it is shared),
# the test RMSE of each posterior mean against the noise-free function
# (noise standard deviation 0.1), the largest difference between the two
# means, and SDD's final estimated relative residual.
suppressPackageStartupMessages(library(sddgp))
args <- commandArgs(trailingOnly = TRUE)
threads <- if (length(args) >= 1L) as.integer(args[[1L]]) else 2L

f <- function(d) sin(6 * d$a) + d$b
rows <- list()
for (n in c(1000L, 2000L, 4000L)) {
  set.seed(1)
  train <- data.frame(a = runif(n), b = runif(n))
  train$y <- f(train) + rnorm(n, sd = 0.1)
  test <- data.frame(a = runif(1000), b = runif(1000))
  sdd <- gp_sdd(y ~ a + b, data = train, solver = "sdd", samples = 16, threads = threads)
  exact <- gp_sdd(y ~ a + b, data = train, kernel = sdd$kernel, noise = sdd$noise,
                  samples = 16, threads = threads)
  stopifnot(exact$solver == "cholesky")
  mu_sdd <- predict(sdd, test)
  mu_exact <- predict(exact, test)
  rows[[length(rows) + 1L]] <- data.frame(
    n = n, sdd_seconds = sdd$seconds, exact_seconds = exact$seconds,
    sdd_rmse = sqrt(mean((mu_sdd - f(test))^2)),
    exact_rmse = sqrt(mean((mu_exact - f(test))^2)),
    max_difference = max(abs(mu_sdd - mu_exact)),
    sdd_residual = summary(sdd)$residual)
}
res <- do.call(rbind, rows)
res$rmse_ratio <- res$sdd_rmse / res$exact_rmse
print(res, digits = 3, row.names = FALSE)
cat(sprintf("(%d threads; RMSE against the noise-free function, noise sd 0.1)\n", threads))
