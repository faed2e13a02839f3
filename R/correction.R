# Vecchia's correction of an iterative fit's mean (predict()'s
# `neighbours`).  An iterative solve stops at weights alpha with residual
# r = y - (K + Lambda) alpha; the exact mean at x* is
# k(x*, X) alpha + k(x*, X) (K + Lambda)^-1 r, and the fit keeps r so that
# predict() approximates the second term by Vecchia's prediction of r at
# x* from its nearest training points (vecchia_predict(), src/vecchia.h).
# The correction vanishes at the exact solution; at alpha = 0 the whole
# prediction is the nearest-neighbour GP's, and on the way it recovers
# what the iterations have not reached yet near x*.

# Whether the fit's mean can be corrected: weights over its training
# inputs from an iterative solver, and a kernel of distances.
correctable <- function(fit) {
  is.null(fit$basis) && fit$solver != "cholesky" && !is_tanimoto(fit$kernel)
}

# The pass over K(X, X) at the end of a fit: the mean at the training
# inputs (standardised units, a column per output) and, for a correctable
# fit, its residual r (`residual`, the same shape).  Under a finite time
# limit the pass runs only for a correctable fit and only if, timed on its
# first rows, it would take no longer than the limit; else NULL.
training_pass <- function(fit, threads, parallel = NULL) {
  limit <- fit$control$time_limit %||% Inf
  mean_at <- function(rows) {
    posterior_moments(fit, fit$x[rows, , drop = FALSE], FALSE, threads,
                      parallel = parallel)$mean
  }
  if (!is.finite(limit)) {
    mean <- mean_at(seq_len(fit$n))
  } else {
    if (!correctable(fit)) return(NULL)
    first <- seq_len(min(fit$n, 2048L))
    start <- proc.time()[["elapsed"]]
    mean <- mean_at(first)
    if (!pass_fits(limit, proc.time()[["elapsed"]] - start, length(first), fit$n)) return(NULL)
    if (fit$n > length(first)) mean <- rbind(mean, mean_at(-first))
  }
  out <- list(mean = mean)
  if (correctable(fit)) {
    out$residual <- as.matrix(fit$y) - mean - observation_noise(fit) * as.matrix(fit$alpha)
  }
  out
}

# Whether a pass over n rows, `seconds` for its first `rows`, takes no
# longer than the time limit.
pass_fits <- function(limit, seconds, rows, n) seconds * n / rows <= limit

# The correction of the mean at the standardised inputs x (rows x
# outputs), from each row's `neighbours` nearest training inputs; 0 for a
# fit without residuals or with neighbours = 0.
mean_correction <- function(object, x, neighbours, threads) {
  r <- object$training_residual
  if (is.null(r) || neighbours == 0L || nrow(x) == 0L) return(0)
  out <- .Call(C_vecchia_predict, scale_inputs(object$x, object$kernel),
               scale_inputs(x, object$kernel), kernel_spec(object$kernel),
               observation_noise(object), as.integer(neighbours), r, threads)
  if (is.null(out)) signal_interrupt("Predicting was interrupted by the user")
  out
}

# The relative residual of the mean's system that the pass measured
# (largest over outputs), or NA.
measured_residual <- function(fit) {
  r <- fit$training_residual
  if (is.null(r)) return(NA_real_)
  max(sqrt(colSums(r^2) / colSums(as.matrix(fit$y)^2)))
}

# print()'s and summary()'s line on the correction: NULL for a fit without
# residuals.
correction_line <- function(fit) {
  residual <- measured_residual(fit)
  if (is.na(residual)) return(NULL)
  strwrap(sprintf(paste(
    "relative residual %s on all points (one pass over the kernel matrix);",
    "predict() corrects the mean at new points from their nearest training",
    "points (`neighbours`)"), format(residual, digits = 3)), indent = 2, exdent = 4)
}
