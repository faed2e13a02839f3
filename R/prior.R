# Prior function draws for pathwise conditioning (Wilson et al. 2020):
# f0(x) = Phi(x) diag(amplitude) w with random Fourier features Phi, their
# importance weights `amplitude` (rff_draw_prior() in src/rff.c: half of
# the frequencies come from a heavier-tailed density, which keeps the
# draws' error small where the noise is small against the signal) and
# w ~ N(0, I).  The features and weights are stored in the fit, so prior
# draws can be replayed at any new input.  Priors without `amplitude`
# (sddgp 0.2.0 and the development versions before it) replay with
# amplitude 1.

# Each draw has a set of features of its own (rows (s - 1) features + 1 ..
# s features of omega and phase for draw s), so that its covariance is K on
# average over the draws.  Draws that share one set all have the same
# approximation Phi Phi' of K, whose error the posterior does not remove:
# the trace estimate of hyperparameter estimation is then biased by
# tr(H^-1 dH H^-1 (Phi Phi' - K)), and the samples' variance by
# P (Phi Phi' - K) P' with P = (1, -k(x, X) H^-1), both magnified where
# the noise is small (NEWS).  Priors of fits made by
# sddgp 0.2.0 and earlier share one set (no `independent` field), and
# replay as such.
# For the Tanimoto kernel the features are random hashes (src/minhash.h),
# drawn from one seed as they are needed: set s is features (s - 1) features
# + 1 .. s features of that sequence.
draw_prior <- function(kernel, d, features, samples) {
  if (is_tanimoto(kernel)) {
    return(list(hash_seed = new_seed(), sets = seq_len(samples),
                weights = matrix(.Call(C_rng_normal, new_seed(), "weights",
                                       as.numeric(features) * samples), features, samples),
                independent = TRUE))
  }
  rff <- .Call(C_rff_draw_prior, kernel_spec(kernel), as.integer(features * samples),
               as.integer(d), new_seed(), 1L)
  weights <- matrix(.Call(C_rng_normal, new_seed(), "weights",
                          as.numeric(features) * samples), features, samples)
  c(rff, list(weights = weights, independent = TRUE))
}

# f0 at standardised inputs x: an nrow(x) x samples matrix.
prior_values <- function(prior, kernel, x, threads) {
  xs <- scale_inputs(x, kernel)
  if (is_tanimoto(kernel)) return(hash_prior_values(prior, kernel, xs, threads))
  amplitude <- prior$amplitude %||% rep(1, length(prior$phase))
  if (!isTRUE(prior$independent)) {
    return(.Call(C_rff_matmul, prior$omega, prior$phase, kernel$variance, xs,
                 amplitude * prior$weights, threads))
  }
  features <- nrow(prior$weights)
  matrix(vapply(seq_len(ncol(prior$weights)), function(s) {
    rows <- (s - 1L) * features + seq_len(features)
    .Call(C_rff_matmul, prior$omega[rows, , drop = FALSE], prior$phase[rows],
          kernel$variance, xs, amplitude[rows] * prior$weights[, s, drop = FALSE],
          threads)[, 1L]
  }, numeric(nrow(x))), nrow(x))
}

# The same for random hash features at fingerprints xs (tanimoto_points()).
hash_prior_values <- function(prior, kernel, xs, threads) {
  features <- nrow(prior$weights)
  product <- function(set, columns) {
    .Call(C_hash_matmul, prior$hash_seed, as.numeric(set - 1L) * features,
          kernel_spec(kernel), xs, prior$weights[, columns, drop = FALSE], threads)
  }
  if (!isTRUE(prior$independent)) return(product(1L, seq_len(ncol(prior$weights))))
  matrix(vapply(seq_len(ncol(prior$weights)), function(s) product(prior$sets[s], s)[, 1L],
                numeric(xs$n)), xs$n)
}

# The prior draws `columns` of `prior`.
prior_columns <- function(prior, columns) {
  if (!is.null(prior$hash_seed)) {
    if (isTRUE(prior$independent)) prior$sets <- prior$sets[columns]
  } else if (isTRUE(prior$independent)) {
    features <- nrow(prior$weights)
    rows <- as.vector(outer(seq_len(features), (columns - 1L) * features, "+"))
    prior$omega <- prior$omega[rows, , drop = FALSE]
    prior$phase <- prior$phase[rows]
    prior$amplitude <- prior$amplitude[rows]
  }
  prior$weights <- prior$weights[, columns, drop = FALSE]
  prior
}

