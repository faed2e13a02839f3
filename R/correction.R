# Vecchia's correction of an iterative fit's predictions (predict()'s
# `neighbours`).  An iterative solve stops at weights alpha with residual
# r = b - (K + Lambda) alpha for each right-hand side b (the targets, and
# f0_s(X) + zeta_s for sample s); the exact solution's value at x* is
# k(x*, X) alpha + k(x*, X) (K + Lambda)^-1 r, and the fit keeps r so that
# predict() approximates the second term by Vecchia's prediction of r at
# x* from its nearest training points (vecchia_predict(), src/vecchia.h):
# the mean and every sample path at once, so the standard errors too.
# The correction vanishes at the exact solution; at alpha = 0 the whole
# prediction is the nearest-neighbour GP's, and on the way it recovers
# what the iterations have not reached yet near x*.

# Whether the fit's mean can be corrected: weights over its training
# inputs from an iterative solver, and a kernel of distances.
correctable <- function(fit) {
  is.null(fit$basis) && fit$solver != "cholesky" && !is_tanimoto(fit$kernel)
}

# The pass over K(X, X) at the end of a fit, given the right-hand sides
# `rhs` the solver had (n x (outputs + samples)): the mean at the training
# inputs (standardised units, a column per output) and, for a correctable
# fit, the residual r of every system (`residual`, the shape of `rhs`).
# Under a finite time limit the pass runs only for a correctable fit and
# only if, timed on its first rows, it would take no longer than the
# limit; else NULL.
training_pass <- function(fit, rhs, threads, parallel = NULL) {
  limit <- fit$control$time_limit %||% Inf
  correct <- correctable(fit)
  weights <- if (correct) cbind(fit$alpha, fit$alpha_samples) else as.matrix(fit$alpha)
  product_at <- function(rows) {
    parts <- map_pieces(fit$x[rows, , drop = FALSE], chunks(length(rows), 4096L),
                        product_piece, list(fit = fit, weights = weights), parallel, threads,
                        "Fitted values")
    do.call(rbind, parts)
  }
  if (!is.finite(limit)) {
    product <- product_at(seq_len(fit$n))
  } else {
    if (!correct) return(NULL)
    first <- seq_len(min(fit$n, 2048L))
    start <- proc.time()[["elapsed"]]
    product <- product_at(first)
    if (!pass_fits(limit, proc.time()[["elapsed"]] - start, length(first), fit$n)) return(NULL)
    if (fit$n > length(first)) product <- rbind(product, product_at(-first))
  }
  out <- list(mean = product[, seq_len(NCOL(fit$alpha)), drop = FALSE])
  if (correct) out$residual <- rhs - product - observation_noise(fit) * weights
  out
}

# training_pass()'s product at the rows xc of one chunk.
product_piece <- function(ctx, xc, threads) basis_matmul(ctx$fit, xc, ctx$weights, threads)

# Whether a pass over n rows, `seconds` for its first `rows`, takes no
# longer than the time limit.
pass_fits <- function(limit, seconds, rows, n) seconds * n / rows <= limit

# The correction at the standardised inputs x of the columns `columns` of
# the fit's weights (the means' first, then the samples'), rows x columns,
# from each row's `neighbours` nearest training inputs; 0 for a fit without
# residuals or with neighbours = 0.
residual_correction <- function(object, x, neighbours, columns, threads) {
  r <- object$training_residual
  if (is.null(r) || neighbours == 0L || nrow(x) == 0L) return(0)
  out <- .Call(C_vecchia_predict, scale_inputs(object$x, object$kernel),
               scale_inputs(x, object$kernel), kernel_spec(object$kernel),
               observation_noise(object), as.integer(neighbours),
               r[, columns, drop = FALSE], threads)
  if (is.null(out)) signal_interrupt("Predicting was interrupted by the user")
  out
}

# The relative residual of the mean's system that the pass measured
# (largest over outputs), or NA.
measured_residual <- function(fit) {
  if (is.null(fit$training_residual)) return(NA_real_)
  r <- fit$training_residual[, seq_len(NCOL(fit$y)), drop = FALSE]
  max(sqrt(colSums(r^2) / colSums(as.matrix(fit$y)^2)))
}

# print()'s and summary()'s line on the correction: NULL for a fit without
# residuals.
correction_line <- function(fit) {
  residual <- measured_residual(fit)
  if (is.na(residual)) return(NULL)
  strwrap(sprintf(paste(
    "relative residual %s on all points (one pass over the kernel matrix);",
    "predict() corrects the mean%s at new points from their nearest",
    "training points (`neighbours`)"), format(residual, digits = 3),
    if (ncol(fit$alpha_samples)) " and the samples" else ""), indent = 2, exdent = 4)
}
