# The SDD paper's molecule scale (DOCKSTRING: 250,000 molecules, 1024-bit
# fingerprints, 210k train / 40k test) with a synthetic stand-in, as the
# data itself is not reachable offline.
#
# Fingerprints: 250,000 sparse binary vectors of 1024 bits with the
# structure of a chemical library: 500 series cores of 20 bits, 5000
# scaffolds (a core's bits, each kept with probability 0.9, plus 10 bits),
# and molecules (a scaffold's bits, each kept with probability 0.85, plus
# a Poisson(15) number of bits); every bit not from a core is drawn with
# Zipf-like frequencies (column c with weight 1 / (c + 10)), so a few bits
# are common and most rare.  About 38 bits set a row, as ECFP4 at 1024 bits
# on drug-like molecules.
# Targets: y = f + e, f a draw of the Tanimoto GP prior (A = 1, prior mean
# 0) from the package's random hash features (MinHash, 2000 features, the
# prior draws of pathwise samples), e ~ N(0, 0.1).
# Fits, all at the true hyperparameters (A = 1, noise 0.1, mean 0), R^2
# and RMSE on the 40,000 test points:
#   gp_exact  the exact posterior mean (Cholesky) on the first `subset`
#             training points;
#   gp_sdd    SDD (batch 512, `steps` steps, no kernel cache) on the same
#             subset and on all 210,000 training points;
#   oracle    the prior draw f itself (the best any method can do: R^2 =
#             var(f) / var(y) on the test points).
# Seconds are the solve's (the prediction's apart).  Appends a row per fit
# to inst/extdata/benchmarks/molecules_synthetic.csv; rows already there are
# skipped (resumable: run under the lock one part at a time).  The data
# (seed 1) are cached in the temporary directory given as `cache`.
#
#   Rscript inst/benchmarks/molecules_synthetic.R [part: subset|full]
#           [steps] [subset] [threads] [cache file]
args <- commandArgs(trailingOnly = TRUE)
part <- if (length(args) >= 1L) args[[1L]] else "subset"
steps <- if (length(args) >= 2L) as.integer(args[[2L]]) else 1000L
subset <- if (length(args) >= 3L) as.integer(args[[3L]]) else 10000L
threads <- if (length(args) >= 4L) as.integer(args[[4L]]) else 2L
cache <- if (length(args) >= 5L) args[[5L]] else
  file.path(Sys.getenv("TMPDIR", "/tmp"), "sddgp_molecules_synthetic.rds")
library(sddgp)
stopifnot(requireNamespace("Matrix", quietly = TRUE))
out <- "inst/extdata/benchmarks/molecules_synthetic.csv"
n <- 250000L
n_train <- 210000L
d <- 1024L
noise <- 0.1

make_data <- function() {
  set.seed(1)
  zipf <- 1 / (seq_len(d) + 10)
  draw <- function(k) sample.int(d, k, prob = zipf)
  cores <- lapply(seq_len(500L), function(i) sample.int(d, 20L))
  scaffolds <- lapply(seq_len(5000L), function(i) {
    core <- cores[[sample.int(500L, 1L)]]
    unique(c(core[stats::runif(20L) < 0.9], draw(10L)))
  })
  which_scaffold <- sample.int(5000L, n, replace = TRUE)
  rows <- lapply(seq_len(n), function(i) {
    s <- scaffolds[[which_scaffold[i]]]
    unique(c(s[stats::runif(length(s)) < 0.85], draw(stats::rpois(1L, 15))))
  })
  empty <- lengths(rows) == 0L
  rows[empty] <- lapply(which(empty), function(i) draw(1L))
  x <- Matrix::sparseMatrix(i = rep(seq_len(n), lengths(rows)), j = unlist(rows),
                            x = 1, dims = c(n, d))
  kernel <- tanimoto(variance = 1, mean = 0)
  kernel$binary <- TRUE
  prior <- sddgp:::draw_prior(kernel, d, features = 2000L, samples = 1L)
  f <- sddgp:::prior_values(prior, kernel, x, threads)[, 1L]
  y <- f + stats::rnorm(n, sd = sqrt(noise))
  list(x = x, f = f, y = y)
}

data <- if (file.exists(cache)) readRDS(cache) else {
  made <- make_data()
  saveRDS(made, cache)
  made
}
cat(sprintf("%d fingerprints, %.1f bits set a row; var(f) %.3f, noise %.2f\n",
            n, mean(Matrix::rowSums(data$x)), stats::var(data$f), noise))

test <- (n_train + 1L):n
xte <- data$x[test, , drop = FALSE]
yte <- data$y[test]
kernel <- tanimoto(variance = 1, mean = 0)
kernel$binary <- TRUE
r2 <- function(y, f) 1 - sum((y - f)^2) / sum((y - mean(y))^2)
rmse <- function(y, f) sqrt(mean((y - f)^2))
done <- if (file.exists(out)) utils::read.csv(out) else NULL
seen <- function(method, m) {
  !is.null(done) && any(done$method == method & done$n_train == m)
}
record <- function(method, m, f, seconds, iterations = NA, predict_seconds = NA) {
  row <- data.frame(method = method, n_train = m, n_test = length(test),
                    steps = iterations, threads = threads, r2 = r2(yte, f),
                    rmse = rmse(yte, f), seconds = seconds,
                    predict_seconds = predict_seconds)
  row$machine <- tryCatch(trimws(sub("^model name\\s*:", "", grep(
    "^model name", readLines("/proc/cpuinfo"), value = TRUE)[1L])), error = function(e) NA)
  row$load <- tryCatch(readLines("/proc/loadavg")[1L], error = function(e) NA)
  print(row[, c("method", "n_train", "steps", "r2", "rmse", "seconds")], digits = 4)
  utils::write.table(row, out, sep = ",", row.names = FALSE, append = file.exists(out),
                     col.names = !file.exists(out))
}

# The posterior mean at the test points from a solve's alpha.
predict_mean <- function(xtr, alpha) {
  .Call(sddgp:::C_kernel_matmul, sddgp:::tanimoto_points(xte, TRUE),
        sddgp:::tanimoto_points(xtr, TRUE), sddgp:::kernel_spec(kernel),
        alpha, "double", threads)[, 1L]
}
fit <- function(method, m) {
  if (seen(method, m)) return(invisible())
  xtr <- data$x[seq_len(m), , drop = FALSE]
  problem <- sddgp:::new_problem(xtr, data$y[seq_len(m)], kernel, noise, NULL, threads)
  solver <- if (method == "gp_exact") "cholesky" else "sdd"
  control <- sdd_control(iterations = steps, tolerance = 0, cache = "never",
                         warm_start = "none")
  sol <- sddgp:::run_solver(solver, problem, control, threads)
  pt <- system.time(f <- predict_mean(xtr, sol$alpha))[["elapsed"]]
  record(method, m, f, sol$seconds, if (solver == "sdd") sol$iterations else NA, pt)
}

if (!seen("oracle", n_train)) record("oracle", n_train, data$f[test], NA)
if (part == "subset") {
  fit("gp_exact", subset)
  fit("gp_sdd", subset)
} else if (part == "full") {
  fit("gp_sdd", n_train)
}
