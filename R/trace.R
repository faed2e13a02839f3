# The convergence traces of the C solvers as data frames.  The glue hands
# a trace back as named parts (src/glue.h, glue_solver_result()):
# `iteration`, `seconds`, and `residuals` (one column per right-hand side)
# or the solver's own parts.

# The mean's residual (the largest over the outputs of a multi-output
# fit: its first n_mean columns) and the root mean square over the sample
# systems', per recorded iteration.
solver_trace <- function(trace, n_mean) {
  r <- trace$residuals
  means <- seq_len(n_mean)
  samples <- r[, setdiff(seq_len(ncol(r)), means), drop = FALSE]
  data.frame(iteration = trace$iteration, seconds = trace$seconds,
             residual = if (n_mean > 0L) do.call(pmax, lapply(means, function(j) r[, j])) else
               rep(NA_real_, nrow(r)),
             residual_samples = if (ncol(samples) > 0L) sqrt(rowMeans(samples^2)) else
               rep(NA_real_, nrow(r)))
}

empty_trace <- function() {
  data.frame(iteration = integer(), seconds = numeric(), residual = numeric(),
             residual_samples = numeric())
}

# The trace of the SDD/SGD loop: solver_trace()'s residuals, timings
# without the metrics' evaluation time, and the metrics asked for.  The loop
# reports NaN for what a row did not probe or evaluate; the trace shows NA.
sdd_trace <- function(trace, n_mean, metrics) {
  na <- function(v) replace(v, is.nan(v), NA)
  tr <- solver_trace(list(iteration = trace$iteration,
                          seconds = trace$seconds - trace$metric_seconds,
                          residuals = na(trace$residuals)), n_mean)
  if (!is.null(metrics$reference)) {
    tr$knorm_error <- na(trace$knorm_error)
    tr$k2norm_error <- na(trace$k2norm_error)
  }
  if (!is.null(metrics$test_x)) tr$test_rmse <- na(trace$test_rmse)
  tr
}
