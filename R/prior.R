# Prior function draws for pathwise conditioning (Wilson et al. 2020):
# f0(x) = Phi(x) w with random Fourier features Phi and w ~ N(0, I).  The
# features and weights are stored in the fit, so prior draws can be replayed
# at any new input.

# The draws share one set of features, or, with `independent`, each has a
# set of its own (rows (s - 1) features + 1 .. s features of omega and
# phase for draw s).  Shared features make every draw's covariance the
# same approximation Phi Phi' of K; independent ones make it K on average
# over the draws, which the trace estimate of hyperparameter estimation
# needs: with shared features it is biased by
# tr(H^-1 dH H^-1 (Phi Phi' - K)), which H^-1 magnifies when the noise is
# small.
draw_prior <- function(kernel, d, features, samples, independent = FALSE) {
  sets <- if (independent) samples else 1L
  rff <- .Call(C_rff_draw, kernel_spec(kernel), as.integer(features * sets),
               as.integer(d), new_seed())
  weights <- matrix(.Call(C_rng_normal, new_seed(), "weights",
                          as.numeric(features) * samples), features, samples)
  list(omega = rff[[1L]], phase = rff[[2L]], weights = weights,
       independent = independent)
}

# f0 at standardised inputs x: an nrow(x) x samples matrix.
prior_values <- function(prior, kernel, x, threads) {
  xs <- scale_inputs(x, kernel)
  if (!isTRUE(prior$independent)) {
    return(.Call(C_rff_matmul, prior$omega, prior$phase, kernel$variance, xs,
                 prior$weights, threads))
  }
  features <- nrow(prior$weights)
  matrix(vapply(seq_len(ncol(prior$weights)), function(s) {
    rows <- (s - 1L) * features + seq_len(features)
    .Call(C_rff_matmul, prior$omega[rows, , drop = FALSE], prior$phase[rows],
          kernel$variance, xs, prior$weights[, s, drop = FALSE], threads)[, 1L]
  }, numeric(nrow(x))), nrow(x))
}

# The prior draws `columns` of `prior`.
prior_columns <- function(prior, columns) {
  if (isTRUE(prior$independent)) {
    features <- nrow(prior$weights)
    rows <- as.vector(outer(seq_len(features), (columns - 1L) * features, "+"))
    prior$omega <- prior$omega[rows, , drop = FALSE]
    prior$phase <- prior$phase[rows]
  }
  prior$weights <- prior$weights[, columns, drop = FALSE]
  prior
}

