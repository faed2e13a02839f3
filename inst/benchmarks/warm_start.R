# SDD's warm start (sdd_control()'s `warm_start`): the error of the
# averaged iterate against the exact solution at each iteration, started at
# zero or at a warm start of several ranks ("inducing" and "nystrom"), and
# the warm start's own cost.
#
#   Rscript inst/benchmarks/warm_start.R [--data=DIR]
#       [--problems=pol,synth_0.01,synth_0.1] [--n=0] [--iterations=10000]
#       [--variants=none,inducing_100,inducing_300,inducing_1000,nystrom_100,nystrom_1000]
#       [--samples=4]
#       [--threads=1] [--out=inst/extdata/benchmarks/warm_start.csv]
#       [--exact-cache=DIR]
#
# Problems: pol, split 0 with the published hyperparameters (inputs and
# targets z-scored with the training split's mean and population sd, as
# gp_sdd() does); synth_<sd>: 10,000 points (--n) uniform on [0, 1]^8,
# f(x) = sin(3 x1) + cos(2 x2) x3 + 0.5 x4^2 + 0.3 x5 x6 plus noise of sd
# <sd>, and 2,000 test points drawn alike, with the Matern-3/2 ARD
# hyperparameters that gp_sdd() estimates.  --n: at most this many
# training points of pol, drawn at random (0: all 13,500); the number of
# points of the synthetic sets (0: 10,000).
#
# The reference is the exact solve (solver = "cholesky") with the same
# hyperparameters.  Every variant is one SDD run with sdd_control()'s
# defaults otherwise (--iterations steps, averaging rate 100 / iterations)
# and the same seed, so the same step size and batches; variant
# <warm_start>_<rank> starts from sdd_control(warm_start = <warm_start>,
# warm_start_rank = <rank>).  Its trace gives, at iterations 10, 20, 50,
# ..., the estimated relative residual ||(K + noise I) alpha_bar - y|| /
# ||y|| of the mean's system (500 probed rows) and the mean over the --samples sample systems, the relative
# K-norm error sqrt((a - a*)' K (a - a*) / a*' K a*) and the test RMSE
# (standardised units) over the exact solve's.  Iteration 0 is the starting
# point itself (zero, or the warm start), evaluated exactly.  Such a run
# stopped early by `time_limit` at iteration t returns the iterate of row
# t.  None of these depend on the machine or its load; the warm start's
# seconds do (the 1-minute load average is recorded with them).  Each
# variant's rows replace those of the same problem, n and variant in --out
# as soon as they exist; other rows are kept, so a run can be resumed
# (--exact-cache: a folder that keeps the exact fits for that).  A variant
# whose start trips SDD's divergence check has only its row 0 and status
# "diverged".
library(sddgp)

source(file.path("inst", "benchmarks", "options.R"))
data_dir <- option("data", file.path("..", "shared", "data", "uci"))
problems <- split_list(option("problems", "pol,synth_0.01,synth_0.1"))
n_opt <- as.integer(option("n", "0"))
iterations <- as.integer(option("iterations", "10000"))
variants <- split_list(option("variants", paste(
  "none,inducing_100,inducing_300,inducing_1000,nystrom_100,nystrom_1000")))
samples <- as.integer(option("samples", "4"))
threads <- as.integer(option("threads", "1"))
out <- option("out", file.path("inst", "extdata", "benchmarks", "warm_start.csv"))
exact_cache <- option("exact-cache", "")
grid <- sort(unique(c(10 * c(1, 2, 5) %o% 10^(0:6))))
grid <- c(grid[grid < iterations], iterations)

done <- if (file.exists(out)) utils::read.csv(out, stringsAsFactors = FALSE) else NULL
is_done <- function(problem, n, variant) {
  !is.null(done) && any(done$problem == problem & done$n == n & done$variant == variant)
}

# The training and test data of a problem, with kernel and noise (NULL:
# estimated by gp_sdd()).
problem_data <- function(name) {
  if (name == "pol") {
    data <- read_uci("pol", 0, path = data_dir)
    hp <- uci_hyperparameters("pol", 0)
    set.seed(1)
    keep <- if (n_opt > 0 && n_opt < nrow(data$x_train)) sample(nrow(data$x_train), n_opt) else
      seq_len(nrow(data$x_train))
    return(list(x = data$x_train[keep, ], y = data$y_train[keep], x_test = data$x_test,
                y_test = data$y_test, kernel = hp$kernel, noise = hp$noise))
  }
  sd <- as.numeric(sub("^synth_", "", name))
  if (!grepl("^synth_", name) || is.na(sd)) stop("unknown problem ", name, call. = FALSE)
  f <- function(x) sin(3 * x[, 1]) + cos(2 * x[, 2]) * x[, 3] + 0.5 * x[, 4]^2 +
    0.3 * x[, 5] * x[, 6]
  set.seed(2)
  n <- if (n_opt > 0) n_opt else 10000L
  x <- matrix(stats::runif(n * 8), n)
  x_test <- matrix(stats::runif(2000 * 8), 2000)
  list(x = x, y = f(x) + stats::rnorm(n, sd = sd), x_test = x_test,
       y_test = f(x_test) + stats::rnorm(2000, sd = sd), kernel = "matern32", noise = NULL)
}

# K (scaled training inputs xs) or K(test, train) times A.
kmul <- function(x1s, xs, kernel, A) {
  .Call(sddgp:::C_kernel_matmul, x1s, xs, sddgp:::kernel_spec(kernel), as.matrix(A),
        "double", threads)
}

cat(machine_description(), "\n")
for (name in problems) {
  pd <- problem_data(name)
  n <- nrow(pd$x)
  if (all(vapply(variants, function(v) is_done(name, n, v), logical(1)))) next
  # The exact solve, which estimates the hyperparameters of the synthetic
  # sets first.
  cached <- if (nzchar(exact_cache)) file.path(exact_cache, sprintf("%s_%d.rds", name, n))
  if (!is.null(cached) && file.exists(cached)) {
    exact <- readRDS(cached)
  } else {
    set.seed(3)
    exact <- gp_sdd(pd$x, pd$y, kernel = pd$kernel, noise = pd$noise, solver = "cholesky",
                    threads = threads)
    if (!is.null(cached)) saveRDS(exact, cached)
  }
  kernel <- exact$kernel
  noise <- exact$noise
  sc <- exact$scaling
  xs <- sddgp:::scale_inputs(exact$x, kernel)
  ts <- sddgp:::scale_inputs(sddgp:::standardize_inputs(pd$x_test, sc), kernel)
  y_test <- sddgp:::standardize_targets(pd$y_test, sc)
  ref <- exact$alpha
  ref_knorm <- sum(ref * kmul(xs, xs, kernel, ref))
  rmse <- function(alpha) sqrt(mean((y_test - kmul(ts, xs, kernel, alpha))^2))
  rmse_exact <- rmse(ref)
  cat(sprintf("%s: n = %d, d = %d, noise variance %.4g, exact test RMSE %.4f\n", name, n,
              ncol(pd$x), noise, rmse_exact))
  # The starting point's own errors (iteration 0), exactly.
  start_row <- function(alpha0) {
    e <- alpha0 - ref
    r <- kmul(xs, xs, kernel, alpha0) + noise * alpha0 - exact$y
    data.frame(iteration = 0L, residual = sqrt(sum(r^2) / sum(exact$y^2)),
               knorm_rel = sqrt(sum(e * kmul(xs, xs, kernel, e)) / ref_knorm),
               test_rmse_rel = rmse(alpha0) / rmse_exact)
  }
  for (v in variants) {
    if (is_done(name, n, v)) next
    form <- sub("_.*$", "", v)
    rank <- if (v == "none") NA_integer_ else as.integer(sub("^[a-z]+_", "", v))
    control <- sdd_control(iterations = iterations, warm_start = form,
                           warm_start_rank = if (v == "none") 100 else rank,
                           check_every = 10, probe_size = min(n, 500), trace_at = grid,
                           reference = ref, test_x = pd$x_test, test_y = pd$y_test)
    # The warm start of the mean's system alone, timed.
    problem <- sddgp:::new_problem(exact$x, exact$y, kernel, rep(noise, n), NULL, threads)
    load <- load_average()
    warm_seconds <- system.time(
      alpha0 <- sddgp:::warm_start(problem, control, threads))[["elapsed"]]
    first <- start_row(if (is.null(alpha0)) numeric(n) else alpha0[, 1])
    set.seed(4)
    fit <- tryCatch(gp_sdd(pd$x, pd$y, kernel = kernel, noise = noise, solver = "sdd",
                           control = control, samples = samples, threads = threads),
                    sddgp_error_divergence = function(e) e)
    # A start whose residual is above the divergence threshold (1000) stops
    # the run at its first check, even after the step size is halved.
    status <- if (inherits(fit, "condition")) "diverged" else fit$status
    tr <- if (status == "diverged") fit$trace[0, ] else
      fit$trace[fit$trace$iteration %in% grid & !is.na(fit$trace$knorm_error), ]
    rows <- rbind(first, data.frame(
      iteration = tr$iteration, residual = tr$residual,
      knorm_rel = sqrt(tr$knorm_error / ref_knorm), test_rmse_rel = tr$test_rmse / rmse_exact))
    rows$residual_samples <- c(NA, tr$residual_samples)
    rows$status <- status
    rows <- cbind(data.frame(problem = name, n = n, d = ncol(pd$x), noise = noise,
                             variant = v, warm_start = form, rank = rank), rows,
                  data.frame(warm_seconds = if (v == "none") 0 else warm_seconds,
                             load = load,
                             step_size = if (status == "diverged") fit$step_size else
                               fit$state$step_size[[1L]],
                             total_iterations = iterations, samples = samples,
                             threads = threads, machine = cpu_model(),
                             sddgp = as.character(utils::packageVersion("sddgp")),
                             date = format(Sys.time(), "%Y-%m-%d")))
    for (i in seq_len(nrow(rows))) {
      cat(sprintf("  %-13s it %6d  residual %.3e  samples %.3e  K-norm error %.3e  RMSE/exact %.4f\n",
                  v, rows$iteration[i], rows$residual[i], rows$residual_samples[i],
                  rows$knorm_rel[i], rows$test_rmse_rel[i]))
    }
    cat(sprintf("  %-13s warm start %.2f s (load %.2f); SDD status: %s\n", v,
                rows$warm_seconds[1], load, status))
    replace_rows(rows, out, c("problem", "n", "variant"))
    done <- utils::read.csv(out, stringsAsFactors = FALSE)
  }
}
cat("results in", out, "\n")
