# CaBCD against plain block coordinate descent and Adam on the same
# random-feature ridge problem (solver = "cabcd"; see ?cabcd_control).
#
#   Rscript inst/benchmarks/cabcd.R [N] [m ...]      (defaults: 50000 50 200)
#
# For each number of features m it draws one synthetic data set (d = 3,
# Matern-3/2, noise 0.05) and one feature basis, computes the exact ridge
# solution in base R, and runs each algorithm three times (different seeds
# for blocks, recombination and mini-batches).  It prints the median data
# passes (see ?cabcd_control for how they are counted) and the median
# seconds (from the start of the solve, building the feature matrix
# included) needed to bring the loss gap (L - L*) / (L(0) - L*) below 1e-1,
# 1e-2 and 1e-3 ("-": not within the iteration budget), and the median gap
# reached at the end with the passes and seconds that took.  Two settings: the defaults (step_size 1, Adam 0.01)
# and the paper's small-step regime (step_size 0.1, Adam 0.001).
# Threads: getOption("sddgp.threads", 2).
library(sddgp)

args <- as.numeric(commandArgs(trailingOnly = TRUE))
N <- if (length(args) >= 1) args[1] else 50000
ms <- if (length(args) >= 2) args[-1] else c(50, 200)
threads <- getOption("sddgp.threads", 2L)
thresholds <- c(1e-1, 1e-2, 1e-3)

runs <- list(
  list(label = "CaBCD, Gauss-Southwell", algorithm = "cabcd", selection = "gauss_southwell",
       iterations = 40),
  list(label = "CaBCD, random", algorithm = "cabcd", selection = "random", iterations = 40),
  list(label = "BCD, Gauss-Southwell", algorithm = "bcd", selection = "gauss_southwell",
       iterations = 60),
  list(label = "BCD, random", algorithm = "bcd", selection = "random", iterations = 200),
  list(label = "Adam (batch 256)", algorithm = "adam", selection = "random",
       iterations = 100))
settings <- list(default = c(block = 1, adam = 0.01), small_steps = c(block = 0.1, adam = 0.001))

cat(sprintf("sddgp %s, N = %d, threads = %d, %s\n", utils::packageVersion("sddgp"), N,
            threads, format(Sys.time())))
for (m in ms) {
  set.seed(1)
  d <- 3
  x <- matrix(stats::runif(N * d), N, d)
  y <- sin(6 * x[, 1]) + x[, 2]^2 - x[, 3] + stats::rnorm(N, sd = 0.2)
  y <- (y - mean(y)) / stats::sd(y)
  kernel <- matern(3/2, c(0.3, 0.4, 0.5), 1)
  noise <- 0.05
  problem <- list(x = x, xs = sddgp:::scale_inputs(x, kernel), kernel = kernel,
                  noise = rep(noise, N), y = y, rhs = cbind(y), has_mean = TRUE)
  basis <- sddgp:::cabcd_basis(kernel, d, m)
  Phi <- .Call(sddgp:::C_rff_matmul, basis$omega, basis$phase, kernel$variance,
               problem$xs, diag(m), threads)
  t0 <- proc.time()[["elapsed"]]
  theta <- solve(crossprod(Phi) + noise * diag(m), crossprod(Phi, y))
  exact_seconds <- proc.time()[["elapsed"]] - t0
  loss <- function(th) (sum((Phi %*% th - y)^2) + noise * sum(th^2)) / N
  l_star <- loss(theta)
  l_zero <- loss(0 * theta)
  cat(sprintf("\nm = %d features: condition number of Phi'Phi + lambda I %.3g; base-R exact solve %.2f s\n",
              m, kappa(crossprod(Phi) + noise * diag(m), exact = TRUE), exact_seconds))
  for (setting in names(settings)) {
    cat(sprintf("  setting %s (step_size %g, Adam learning rate %g)\n", setting,
                settings[[setting]][["block"]], settings[[setting]][["adam"]]))
    cat(sprintf("    %-24s %s   %s   %s\n", "", "passes to gap 1e-1/1e-2/1e-3",
                "seconds to gap 1e-1/1e-2/1e-3", "final gap (passes, s)"))
    for (run in runs) {
      step <- if (run$algorithm == "adam") settings[[setting]][["adam"]] else
        settings[[setting]][["block"]]
      control <- cabcd_control(basis_features = m, algorithm = run$algorithm,
                               selection = run$selection, step_size = step,
                               iterations = run$iterations, tolerance = 0)
      res <- lapply(1:3, function(rep) {
        set.seed(100 + rep)
        sol <- sddgp:::run_solver("cabcd", problem, control, threads, state = list(basis = basis))
        gap <- (sol$trace$loss - l_star) / (l_zero - l_star)
        first <- vapply(thresholds, function(h) which(gap <= h)[1], integer(1))
        list(passes = sol$trace$passes[first], seconds = sol$trace$seconds[first],
             final = c(gap[length(gap)], sol$trace$passes[length(gap)], sol$seconds))
      })
      med <- function(what, j) stats::median(vapply(res, function(r) r[[what]][j], numeric(1)))
      fmt <- function(v, digits) ifelse(is.na(v), "-", formatC(v, digits = digits, format = "f"))
      passes <- vapply(seq_along(thresholds), function(j) med("passes", j), numeric(1))
      seconds <- vapply(seq_along(thresholds), function(j) med("seconds", j), numeric(1))
      cat(sprintf("    %-24s %8s %8s %8s   %8s %8s %8s   %.2e (%.0f, %.1f s)\n", run$label,
                  fmt(passes[1], 1), fmt(passes[2], 1), fmt(passes[3], 1),
                  fmt(seconds[1], 2), fmt(seconds[2], 2), fmt(seconds[3], 2),
                  med("final", 1), med("final", 2), med("final", 3)))
    }
  }
}
