# Mini-META against plain GP-UCB / GP-EI on noisy functions (?mini_meta).
#
#   Rscript inst/benchmarks/mini_meta.R [scale] [seeds] [output]
#
# run from the package root; the defaults 1 5 inst/extdata/benchmarks/mini_meta.csv
# reproduce the committed CSVs (it also writes <output>_curves.csv, the
# cumulative regret after every 5% of the budget).  That run took 7 min 39 s
# on the machine named in the CSV's `machine` column (2 cores, shared with
# other work).
#
# Three noisy maximisation problems, each observation f(x) + N(0, sd^2):
#   branin:    -Branin on [-5, 10] x [0, 15] (max -0.397887), noise sd 5,
#              box domain, budget 1000 * scale;
#   hartmann6: Hartmann-6 on [0, 1]^6 (max 3.32237), noise sd 0.5, box
#              domain, budget 1000 * scale;
#   synthetic: a draw of a GP with squared-exponential kernel (length scale
#              0.15, variance 1) in [0, 1]^3 by 2000 random Fourier
#              features, on a fixed set of 10000 uniform candidates, noise
#              sd 1 (signal-to-noise 1), budget 400 * scale.
# Each is run by Mini-GP-UCB and Mini-GP-EI (C = 1.5) and by plain GP-UCB
# and GP-EI (mini = FALSE: one evaluation per step), beta = 2, the same 10
# initial points for all four in a seed, `seeds` seeds.  The noise variance
# is known; the kernel (Matern-5/2, or SE for the synthetic problem, whose
# hyperparameters are the true ones) is fitted once per problem by maximum
# marginal likelihood to 500 uniform noisy evaluations that are not counted.
# Regret uses the noise-free f at every evaluated point: cumulative regret
# sum_t (f* - f(x_t)) over all `budget` evaluations (initial design
# included), the simple regret f* - f(recommended) of the final
# recommendation (the evaluated point of largest posterior mean), the number
# of switches H (steps), the number of unique points, and the wall time.
# Threads: getOption("sddgp.threads", 2).
library(sddgp)
source(file.path("inst", "benchmarks", "options.R"))

scale <- if (length(args) >= 1) as.numeric(args[1]) else 1
seeds <- if (length(args) >= 2) as.integer(args[2]) else 5L
output <- if (length(args) >= 3) args[3] else "inst/extdata/benchmarks/mini_meta.csv"
threads <- getOption("sddgp.threads", 2L)

branin <- function(x) {
  -((x[2] - 5.1 / (4 * pi^2) * x[1]^2 + 5 / pi * x[1] - 6)^2 +
      10 * (1 - 1 / (8 * pi)) * cos(x[1]) + 10)
}
hartmann6 <- function(x) {
  a <- c(1, 1.2, 3, 3.2)
  A <- rbind(c(10, 3, 17, 3.5, 1.7, 8), c(0.05, 10, 17, 0.1, 8, 14),
             c(3, 3.5, 1.7, 10, 17, 8), c(17, 8, 0.05, 10, 0.1, 14))
  P <- 1e-4 * rbind(c(1312, 1696, 5569, 124, 8283, 5886), c(2329, 4135, 8307, 3736, 1004, 9991),
                    c(2348, 1451, 3522, 2883, 3047, 6650), c(4047, 8828, 8732, 5743, 1091, 381))
  sum(a * exp(-rowSums(A * (rep(x, each = 4) - P)^2)))
}
synthetic <- local({
  set.seed(2022)
  m <- 2000
  omega <- matrix(stats::rnorm(3 * m, sd = 1 / 0.15), m, 3)
  phase <- stats::runif(m, 0, 2 * pi)
  w <- stats::rnorm(m)
  candidates <- matrix(stats::runif(30000), 10000, 3)
  f <- function(x) {
    x <- matrix(x, ncol = 3)
    drop(sqrt(2 / m) * cos(x %*% t(omega) + rep(phase, each = nrow(x))) %*% w)
  }
  list(f = f, candidates = candidates, max = max(f(candidates)))
})

problems <- list(
  branin = list(f = branin, lower = c(-5, 0), upper = c(10, 15), max = -0.397887,
                sd = 5, budget = 1000, family = "matern52"),
  hartmann6 = list(f = hartmann6, lower = rep(0, 6), upper = rep(1, 6), max = 3.32237,
                   sd = 0.5, budget = 1000, family = "matern52"),
  synthetic = list(f = synthetic$f, candidates = synthetic$candidates, max = synthetic$max,
                   sd = 1, budget = 400,
                   kernel = squared_exponential(lengthscale = 0.15, variance = 1)))
methods <- list(`Mini-GP-UCB` = list(acquisition = "ucb", mini = TRUE),
                `Mini-GP-EI` = list(acquisition = "ei", mini = TRUE),
                `GP-UCB` = list(acquisition = "ucb", mini = FALSE),
                `GP-EI` = list(acquisition = "ei", mini = FALSE))

machine <- sprintf("%s; %d threads; sddgp %s", machine_description(), threads,
                   utils::packageVersion("sddgp"))
cat(machine, "\n", format(Sys.time()), "\n", sep = "")
started <- proc.time()[["elapsed"]]
rows <- list()
curves <- list()
for (name in names(problems)) {
  p <- problems[[name]]
  budget <- round(p$budget * scale)
  if (is.null(p$kernel)) {
    set.seed(1)
    x <- sweep(matrix(stats::runif(500 * length(p$lower)), 500), 2, p$upper - p$lower, "*")
    x <- sweep(x, 2, p$lower, "+")
    y <- apply(x, 1, p$f) + stats::rnorm(500, sd = p$sd)
    # Fitted on standardised data (noise given in those units), then back
    # in the original units, where mini_meta() works.
    sc <- stats::sd(y) * sqrt(499 / 500)
    fit <- gp_sdd(x, y, kernel = p$family, noise = p$sd^2 / sc^2, solver = "cholesky",
                  threads = threads)
    p$kernel <- fit$kernel
    p$kernel$lengthscale <- fit$kernel$lengthscale * fit$scaling$x_scale
    p$kernel$variance <- fit$kernel$variance * fit$scaling$y_scale^2
  }
  cat(sprintf("\n%s: budget %d, noise sd %g, kernel %s, length scales %s, variance %.3g\n",
              name, budget, p$sd, p$kernel$family,
              paste(format(p$kernel$lengthscale, digits = 3), collapse = " "),
              p$kernel$variance))
  noisy <- function(x) p$f(x) + stats::rnorm(1, sd = p$sd)
  for (seed in seq_len(seeds)) {
    for (label in names(methods)) {
      m <- methods[[label]]
      set.seed(seed)
      t0 <- proc.time()[["elapsed"]]
      res <- mini_meta(noisy, candidates = p$candidates, lower = p$lower, upper = p$upper,
                       budget = budget, acquisition = m$acquisition, mini = m$mini,
                       beta = 2, kernel = p$kernel, noise = p$sd^2, initial = 10,
                       threads = threads)
      seconds <- proc.time()[["elapsed"]] - t0
      fx <- apply(res$x, 1, p$f)
      rows[[length(rows) + 1L]] <- data.frame(
        problem = name, method = label, acquisition = m$acquisition, mini = m$mini,
        seed = seed, budget = budget, noise_sd = p$sd, f_max = p$max,
        cumulative_regret = sum(p$max - fx),
        simple_regret = p$max - p$f(res$recommended$x),
        switches = nrow(res$history), unique = length(res$compressed$counts),
        seconds = seconds)
      at <- round(budget * seq(0.05, 1, by = 0.05))
      curves[[length(curves) + 1L]] <- data.frame(
        problem = name, method = label, seed = seed, evaluations = at,
        cumulative_regret = cumsum(p$max - fx)[at])
      cat(sprintf("  seed %d %-12s cumulative regret %9.2f  simple regret %7.3f  H %4d  unique %4d  %6.1f s\n",
                  seed, label, sum(p$max - fx), p$max - p$f(res$recommended$x),
                  nrow(res$history), length(res$compressed$counts), seconds))
    }
  }
}
results <- do.call(rbind, rows)
results$machine <- machine

cat("\nMeans over seeds\n")
agg <- stats::aggregate(cbind(cumulative_regret, simple_regret, switches, unique, seconds) ~
                          problem + method, data = results, FUN = mean)
agg <- agg[order(agg$problem, match(agg$method, names(methods))), ]
print(format(agg, digits = 3), row.names = FALSE)
dir.create(dirname(output), showWarnings = FALSE, recursive = TRUE)
utils::write.csv(results, output, row.names = FALSE)
curves_output <- sub("(\\.csv)?$", "_curves.csv", output)
utils::write.csv(do.call(rbind, curves), curves_output, row.names = FALSE)
cat(sprintf("\nwrote %s and %s; total %.0f s\n", output, curves_output,
            proc.time()[["elapsed"]] - started))
