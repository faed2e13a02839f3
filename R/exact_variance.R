# Exact posterior variances of an exact (Cholesky) fit without samples:
# k(x*, x*) - |L^-1 k(X, x*)|^2 with L the Cholesky factor of
# K + diag(noise).  The fit does not keep L (8 n^2 bytes would go into
# every saved fit); it is computed again on first use and kept for the
# session, for one fit at a time, up to exact_factor_max_n points.

exact_factor_max_n <- 8192L

exact_factor_cache <- new.env(parent = emptyenv())

# Whether predict() takes the variance of `object` from the exact factor.
exact_variance <- function(object) {
  identical(object$solver, "cholesky") && ncol(object$alpha_samples) == 0L
}

# The factor L of the fit's K + diag(noise), from the cache when it holds
# this fit's (the same inputs, kernel and noise).
exact_factor <- function(object, threads) {
  noise <- observation_noise(object)
  key <- list(x = object$x, kernel = object$kernel, noise = noise)
  if (identical(exact_factor_cache$key, key)) return(exact_factor_cache$factor)
  factor <- .Call(C_chol_factor, scale_inputs(object$x, object$kernel),
                  kernel_spec(object$kernel), noise, threads)
  if (is.null(factor)) signal_interrupt("The Cholesky factorisation was interrupted by the user")
  if (attr(factor, "info") != 0L) abort_not_positive_definite()
  # Drop the old one first: two factors need not be held at once.
  rm(list = ls(exact_factor_cache), envir = exact_factor_cache)
  if (object$n <= exact_factor_max_n) {
    exact_factor_cache$key <- key
    exact_factor_cache$factor <- factor
  }
  factor
}

# The exact posterior variances (standardised units) at standardised
# inputs x, given the factor.
exact_variance_at <- function(object, factor, x, threads) {
  kernel <- object$kernel
  var <- .Call(C_chol_variance, factor, scale_inputs(object$x, kernel),
               scale_inputs(x, kernel), kernel_spec(kernel), threads)
  if (is.null(var)) signal_interrupt("The posterior variances were interrupted by the user")
  var
}
