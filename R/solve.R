# Solving (K + lambda I) alpha = b for the posterior mean and the posterior
# samples' right-hand sides.  Every solver returns the same shape, so the
# fit object, predict() and simulate() never care which one ran.

solvers <- c("sdd", "cholesky")

# Largest n for which the exact solver may form the n x n kernel matrix
# (8 n^2 bytes: 3.2 GB at 20000).
cholesky_max_n <- 20000L

check_solver <- function(solver, n) {
  check_choice(solver, "solver", solvers)
  if (solver == "cholesky" && n > cholesky_max_n) {
    abort_argument("solver", sprintf(paste(
      "\"cholesky\" would need a %d x %d kernel matrix (%.1f GB);",
      "use solver = \"sdd\" for more than %d points"), n, n, 8 * n^2 / 1e9,
      cholesky_max_n))
  }
  solver
}

# Stability limit of the step size beta n: Nesterov momentum rho on a
# quadratic with curvature h is stable while lr h < 2 (1 + rho) / (1 + 2 rho),
# and the expected SDD step has curvature lambda_max(K + lambda I) / n.  That
# eigenvalue over n is estimated on a random subset (kernel matrices' top
# eigenvalue grows linearly in n).
sdd_step_limit <- function(xs, kernel, noise, momentum, batch_size, threads,
                           subset = 1000L) {
  n <- nrow(xs)
  idx <- if (n > subset) sort(sample.int(n, subset)) else seq_len(n)
  xsub <- xs[idx, , drop = FALSE]
  K <- .Call(C_kernel_matrix, xsub, xsub, kernel_spec(kernel), threads)
  v <- rep(1 / sqrt(length(idx)), length(idx))
  ev <- 0
  for (i in seq_len(50L)) {
    w <- K %*% v
    ev_new <- sqrt(sum(w^2))
    v <- w / ev_new
    if (abs(ev_new - ev) < 1e-4 * ev_new) break
    ev <- ev_new
  }
  # Each sampled coordinate must be stable too.  Between the steps that
  # sample it, momentum keeps pushing it for about 1 / (1 - rho) steps with
  # no feedback, which amplifies its own curvature (sigma_f^2 + lambda) / B;
  # ignoring that diverges when K is nearly diagonal (short length scales).
  curvature <- max(ev_new / length(idx) + mean(noise) / n,
                   (kernel$variance + mean(noise)) /
                     ((1 - momentum) * min(batch_size, n)))
  2 * (1 + momentum) / (1 + 2 * momentum) / curvature
}

sdd_step_sizes <- function(control, xs, kernel, noise, threads) {
  mean_step <- control$step_size
  if (is.null(mean_step) || is.null(control$step_size_samples)) {
    auto <- control$step_fraction *
      sdd_step_limit(xs, kernel, noise, control$momentum, control$batch_size,
                   threads)
    mean_step <- mean_step %||% auto
  }
  c(mean = mean_step, samples = control$step_size_samples %||% mean_step)
}

# Solve for the columns of rhs.  `steps` holds the SDD step sizes of the
# mean and sample columns; `has_mean` says whether column 1 is the mean.
solve_system <- function(solver, xs, kernel, noise, rhs, control, steps,
                         has_mean, threads) {
  noise <- rep_len(noise, nrow(xs))
  start <- proc.time()[["elapsed"]]
  if (solver == "cholesky") {
    res <- .Call(C_chol_solve, xs, kernel_spec(kernel), noise, rhs, threads)
    if (res[[2L]] != 0L) {
      sddgp_abort(paste(
        "The Cholesky factorisation of K + noise * I failed: the matrix is not",
        "numerically positive definite. Increase `noise` or check for",
        "duplicated inputs."), class = "sddgp_error_numerical")
    }
    return(list(alpha = res[[1L]], iterations = 0L, status = "exact",
                seconds = proc.time()[["elapsed"]] - start,
                trace = empty_trace(), step_size = NULL))
  }
  ctl <- resolve_sdd_control(control, nrow(xs))
  lr <- if (has_mean) c(steps[["mean"]], rep(steps[["samples"]], ncol(rhs) - 1L)) else
    rep(steps[["samples"]], ncol(rhs))
  res <- .Call(C_sdd_solve, xs, kernel_spec(kernel), noise, rhs, as.numeric(lr),
               ctl, new_seed(), threads)
  status <- c("iterations", "tolerance", "diverged", "interrupted",
              "out of memory")[res$status + 1L]
  if (status == "diverged") {
    sddgp_abort(sprintf(paste(
      "SDD diverged after %d iterations with step size %s: the iterates blew",
      "up. Use a smaller `step_size` (or `step_fraction`) in sdd_control()."),
      res$iterations, format(signif(max(lr), 4))),
      class = "sddgp_error_divergence", iterations = res$iterations,
      step_size = max(lr))
  }
  if (status == "interrupted") {
    stop(structure(class = c("sddgp_interrupt", "interrupt", "condition"),
                   list(message = sprintf("SDD interrupted by the user after %d iterations",
                                          res$iterations), call = NULL)))
  }
  if (status == "out of memory") {
    sddgp_abort("SDD could not allocate its working memory.",
                class = "sddgp_error_memory")
  }
  list(alpha = res$alpha, iterations = res$iterations, status = status,
       seconds = proc.time()[["elapsed"]] - start,
       trace = sdd_trace(res, has_mean), step_size = steps)
}

# The probed residuals per check: the mean's, and the root mean square over
# the sample systems.
sdd_trace <- function(res, has_mean) {
  r <- res$trace_residuals
  samples <- if (has_mean) r[, -1L, drop = FALSE] else r
  data.frame(iteration = res$trace_iteration, seconds = res$trace_seconds,
             residual = if (has_mean) r[, 1L] else NA_real_,
             residual_samples = if (ncol(samples) > 0L) sqrt(rowMeans(samples^2)) else
               NA_real_)
}

empty_trace <- function() {
  data.frame(iteration = integer(), seconds = numeric(), residual = numeric(),
             residual_samples = numeric())
}

# A seed for the counter-based generator in C, drawn from R's generator so
# that set.seed() makes every fit reproducible.
new_seed <- function() floor(stats::runif(2L) * 2^32)
