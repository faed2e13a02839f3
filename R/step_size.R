# The automatic step size of SDD (and DSG's, which starts from it): a
# fraction of the stability limit estimated on a subset of the data.

# Stability limit of the step size beta n: Nesterov momentum rho on a
# quadratic with curvature h is stable while lr h < 2 (1 + rho) / (1 + 2 rho),
# and the expected SDD step has curvature lambda_max(K + lambda I) / n.  That
# eigenvalue over n is estimated on a random subset (kernel matrices' top
# eigenvalue grows linearly in n).
sdd_step_limit <- function(xs, kernel, noise, momentum, batch_size, threads,
                           subset = 1000L) {
  n <- nrow(xs)
  idx <- if (n > subset) sort(sample.int(n, subset)) else seq_len(n)
  # The Tanimoto kernel's xs are the fingerprints as given (see solve_sdd()).
  xsub <- xs[idx, , drop = FALSE]
  if (is_tanimoto(kernel)) xsub <- tanimoto_points(xsub, kernel$binary)
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
  mean_step <- control$step_size %||% (control$step_fraction *
    sdd_step_limit(xs, kernel, noise, control$momentum, control$batch_size, threads))
  c(mean = mean_step, samples = control$step_size_samples %||% mean_step)
}
