## ---- include = FALSE---------------------------------------------------------
knitr::opts_chunk$set(collapse = TRUE, comment = "#>")
options(sddgp.threads = 1)
has_future <- requireNamespace("future", quietly = TRUE)
benchmark <- system.file("extdata", "benchmarks", "distributed.csv", package = "sddgp")

## ---- eval = has_future-------------------------------------------------------
library(sddgp)
set.seed(1)
x <- matrix(runif(1000), 500)
y <- sin(6 * x[, 1]) + x[, 2]^2 + rnorm(500, sd = 0.1)
fit_with <- function(parallel) {
  set.seed(2)
  gp_sdd(x, y, kernel = matern(3/2, c(0.3, 0.4), 1), noise = 0.01,
         control = sdd_control(iterations = 3000, batch_size = 64), samples = 16,
         threads = 1, parallel = parallel)
}
single <- fit_with(NULL)

old <- future::plan("multisession", workers = 2)
shared <- fit_with(sddgp_future(threads = 1))
newx <- matrix(runif(200), 100)
p <- predict(single, newx, se.fit = TRUE, chunk_size = 25,
             parallel = sddgp_future())
future::plan(old)

identical(shared$alpha_samples, single$alpha_samples)
identical(shared$iterations, single$iterations)
identical(p, predict(single, newx, se.fit = TRUE, chunk_size = 25))

## ---- eval = has_future-------------------------------------------------------
noisy <- function(p) sin(6 * p[1]) + p[2] + rnorm(1, sd = 0.1)
loop <- function(parallel) {
  set.seed(3)
  bo_thompson(noisy, c(0, 0), c(1, 1), initial = 6, steps = 2, batch = 3,
              candidates = 50, rounds = 1, local_rounds = 1, threads = 1,
              parallel = parallel)
}
here <- loop(NULL)
old <- future::plan("multisession", workers = 2)
there <- loop(sddgp_future())
future::plan(old)
identical(here$y, there$y)

## ---- eval = has_future-------------------------------------------------------
d <- data.frame(x1 = x[, 1], x2 = x[, 2], y = y)
cv_with <- function(parallel) {
  set.seed(4)
  gp_cv(y ~ x1 + x2, data = d, folds = 4, samples = 8, threads = 1,
        parallel = parallel)
}
cv_here <- cv_with(NULL)
old <- future::plan("multisession", workers = 2)
cv_there <- cv_with(sddgp_future())
future::plan(old)
cv_there
identical(cv_here$predictions, cv_there$predictions)

## ---- eval = FALSE------------------------------------------------------------
#  # fit.R
#  library(sddgp)
#  set.seed(1)
#  n <- 200000
#  x <- matrix(runif(n * 8), n)
#  y <- sin(4 * x[, 1]) + x[, 2] * x[, 8] + rnorm(n, sd = 0.1)
#  set.seed(2)
#  fit <- gp_sdd(x, y, kernel = matern(3/2, rep(0.5, 8), 1), noise = 0.01,
#                control = sdd_control(iterations = 20000), samples = 64,
#                threads = 1, parallel = sddgp_mpi())
#  if (Rmpi::mpi.comm.rank(0) == 0) saveRDS(fit, "fit.rds")
#  invisible(Rmpi::mpi.finalize())

## ---- eval = nzchar(benchmark)------------------------------------------------
b <- read.csv(benchmark, colClasses = c(checksum = "character"))
tidy <- function(d) {
  d[] <- lapply(d, function(v) if (is.double(v)) signif(v, 3) else v)
  rownames(d) <- NULL
  d
}
measured <- b[b$part == "measured" & b$variant == "owner_update_fill50", ]
measured <- measured[order(measured$n, measured$samples, measured$processes), ]
measured$comm_share <- measured$comm_wait_seconds / measured$step_seconds
measured$beyond_share <- measured$beyond_slowest_seconds / measured$step_seconds
tidy(measured[, c("n", "samples", "processes", "rounds", "step_seconds",
                  "comm_wait_seconds", "comm_share", "beyond_share", "update_seconds",
                  "load", "checksum")])
model <- b[b$part == "model" & b$variant == "owner_update_fill50" & b$processes %in% c(2, 16, 64), ]
model$comm_share <- model$comm_wait_seconds / model$step_seconds
tidy(model[, c("n", "samples", "processes", "rounds", "step_seconds", "comm_share",
               "update_seconds", "speedup", "efficiency")])

