# Prior function draws for pathwise conditioning (Wilson et al. 2020):
# f0(x) = Phi(x) w with random Fourier features Phi and w ~ N(0, I).  The
# features and weights are stored in the fit, so prior draws can be replayed
# at any new input.

draw_prior <- function(kernel, d, features, samples) {
  rff <- .Call(C_rff_draw, kernel_spec(kernel), as.integer(features), as.integer(d),
               new_seed())
  weights <- matrix(.Call(C_rng_normal, new_seed(), "weights",
                          as.numeric(features) * samples), features, samples)
  list(omega = rff[[1L]], phase = rff[[2L]], weights = weights)
}

# f0 at standardised inputs x: an nrow(x) x samples matrix.
prior_values <- function(prior, kernel, x, threads) {
  .Call(C_rff_matmul, prior$omega, prior$phase, kernel$variance,
        scale_inputs(x, kernel), prior$weights, threads)
}
