# The whole default fit, estimation included, on issue 38's low-noise
# example: gp_sdd(x, y) against the exact GP (solver = "cholesky") with the
# hyperparameters the default fit estimated, both scored by RMSE against
# the noise-free function on 2000 fresh points.  Before the auto budget of
# estimation_control() this fit ran for over 30 minutes; before issue 38's
# solver choice its RMSE was 58 times the exact GP's.
#
#   Rscript inst/benchmarks/default_fit.R [--threads=2] [--reps=3]
#
# Appends one row per repetition and method to
# inst/extdata/benchmarks/default_fit.csv and prints the medians.
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))
`%||%` <- function(a, b) if (is.null(a)) b else a

threads <- as.integer(option("threads", "2"))
reps <- as.integer(option("reps", "3"))
out <- file.path("inst", "extdata", "benchmarks", "default_fit.csv")
options(sddgp.progress = FALSE)

set.seed(5)
n <- 6000
d <- 8
x <- matrix(runif(n * d), n)
f <- function(x) sin(3 * x[, 1]) + cos(2 * x[, 2]) * x[, 3] + 0.5 * x[, 4]^2 +
  0.3 * x[, 5] * x[, 6]
y <- f(x) + rnorm(n, sd = 0.003)
xt <- matrix(runif(2000 * d), 2000)

rows <- list()
for (r in seq_len(reps)) {
  load <- load_average()
  warned <- character()
  seconds <- system.time(fit <- withCallingHandlers(
    gp_sdd(x, y, threads = threads),
    warning = function(w) warned <<- c(warned, class(w)[1L])))[[3]]
  exact_seconds <- system.time(exact <- gp_sdd(
    x, y, kernel = fit$kernel, noise = fit$noise, solver = "cholesky",
    threads = threads))[[3]]
  it <- fit$estimation$iterative
  rows[[r]] <- data.frame(
    rep = r, method = c("default", "exact"),
    seconds = c(seconds, exact_seconds),
    estimation_seconds = c(fit$estimation$seconds, NA),
    estimation_method = c(fit$estimation$method, NA),
    iterative_stopped = c(it$stopped %||% NA, NA),
    projected_seconds = c(it$projected_seconds %||% NA, NA),
    solver = c(fit$solver, "cholesky"), iterations = c(fit$iterations, 0L),
    warnings = c(paste(warned, collapse = ";"), ""),
    rmse_f = c(sqrt(mean((predict(fit, xt) - f(xt))^2)),
               sqrt(mean((predict(exact, xt) - f(xt))^2))),
    threads = threads, load = load, date = format(Sys.time(), "%Y-%m-%d %H:%M"),
    sddgp = as.character(utils::packageVersion("sddgp")), machine = machine_description())
  done <- if (file.exists(out)) utils::read.csv(out, stringsAsFactors = FALSE)
  append_result(done, rows[[r]], out)
}
all <- do.call(rbind, rows)
print(stats::aggregate(cbind(seconds, rmse_f) ~ method, all, stats::median))
