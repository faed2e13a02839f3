# Standardisation of the data: inputs and targets centred and scaled by
# their training mean and standard deviation (gp_sdd(standardize = TRUE)),
# and back, without overflow or underflow at any magnitude.

# With the Tanimoto kernel the inputs (fingerprints) are never
# standardised, and the targets are centred at its prior mean (given, or
# their mean until estimate_prior_mean()).
standardization <- function(x, y, standardize, kernel = NULL) {
  if (is_tanimoto(kernel)) {
    my <- col_moments(y)
    return(list(x_center = rep(0, ncol(x)), x_scale = rep(1, ncol(x)),
                y_center = rep_len(kernel$mean %||% my$mean, NCOL(y)),
                y_scale = if (standardize) ifelse(my$sd > 0, my$sd, 1) else rep(1, NCOL(y))))
  }
  if (!standardize) {
    return(list(x_center = rep(0, ncol(x)), x_scale = rep(1, ncol(x)),
                y_center = rep(0, NCOL(y)), y_scale = rep(1, NCOL(y))))
  }
  mx <- col_moments(x)
  my <- col_moments(y)
  # A constant column is only centred: dividing by its zero spread would
  # turn it into NaN (the reference implementation's bug on keggdirected).
  # "Constant" is relative to the column's magnitude, which then does not
  # matter (data at 1e-300 are not constant).
  x_scale <- mx$sd
  x_scale[x_scale <= 1e-12 * apply(abs(x), 2L, max)] <- 1
  # One centre and scale per output (column of y).
  list(x_center = mx$mean, x_scale = x_scale, y_center = my$mean,
       y_scale = ifelse(my$sd > 0, my$sd, 1))
}

# Column means and population standard deviations of x (a vector: one
# column), computed in units of a power of 2 near each column's largest
# magnitude (pow2_unit()): squares of values near 1e300 do not overflow,
# nor those near 1e-300 underflow to a zero spread.  Otherwise the same
# as the direct formulas up to rounding.
col_moments <- function(x) {
  x <- as.matrix(x)
  u <- apply(x, 2L, pow2_unit)
  xu <- x / rep(u, each = nrow(x))
  list(mean = colMeans(xu) * u,
       sd = apply(xu, 2L, function(v) sqrt(mean((v - mean(v))^2))) * u)
}

# The power of 2 at or below max |v| (1 if all are 0): dividing by it is
# exact and brings v into [-2, 2], where squares and sums of finite numbers
# cannot overflow.
pow2_unit <- function(v) {
  m <- max(abs(v))
  if (m > 0) 2^min(floor(log2(m)), 1023) else 1
}

# (v - center) / scale by columns (center and scale one number per column
# of v, or a vector v with one of each), computed as (v / u - center / u) *
# (u / scale) with u a power of 2 near scale: the same bits as (v - center)
# * (1 / scale), but no overflow of v - center for values near +-1.8e308, nor of
# 1 / scale for scales below 5.6e-309.  Far-away new inputs may still
# overflow to +-Inf (see far_rows()).
standardize_columns <- function(v, center, scale) {
  u <- vapply(scale, pow2_unit, numeric(1L))
  n <- NROW(v)
  (v / rep(u, each = n) - rep(center / u, each = n)) * rep(u / scale, each = n)
}

# center + scale * v, the inverse, in units of a power of 2 near scale so
# that neither the product nor the sum overflows on the way to a
# representable result; the same bits as that formula otherwise.
unstandardize <- function(v, center, scale) {
  u <- pow2_unit(scale)
  u * (center / u + (scale / u) * v)
}

standardize_inputs <- function(x, scaling) {
  standardize_columns(x, scaling$x_center, scaling$x_scale)
}

standardize_targets <- function(y, scaling) {
  standardize_columns(y, scaling$y_center, scaling$y_scale)
}
