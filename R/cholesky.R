# The exact solver: the Cholesky factorisation of K + diag(noise).

# Largest n for which the exact solver may form the n x n kernel matrix
# (8 n^2 bytes: 3.2 GB at 20000).
cholesky_max_n <- 20000L

#' Settings of the exact (Cholesky) solver
#'
#' `solver = "cholesky"` forms the kernel matrix and solves by its Cholesky
#' factorisation: O(n^3) time and O(n^2) memory, so at most 20000 points. It
#' is the reference the iterative solvers are tested against.
#'
#' The factorisation and the solves work on blocks of 128 rows and columns
#' (512 with OpenBLAS), spread over the fit's `threads`, one BLAS call per
#' block and thread, with the same result for any thread count under a
#' given BLAS; between blocks, and between slabs of columns while the
#' kernel matrix is built, the solver checks for Ctrl-C, so a long exact
#' fit can be interrupted. Its time is almost all in the BLAS that R is
#' linked to: an optimised one such as OpenBLAS makes it several times
#' faster than R's reference BLAS (see the README, section "A faster exact
#' solver"). OpenBLAS's own threads are switched off while the solver runs
#' (and restored after), so that `threads` threads use `threads` cores.
#'
#' After factoring, the solver estimates the condition number of
#' \eqn{K + \lambda W^{-1}}{K + lambda W^(-1)} (LAPACK's `dpocon`, \eqn{O(n^2)}{O(n^2)} work against
#' the factorisation's \eqn{O(n^3)}{O(n^3)}). Above \eqn{10^{12}}{10^12} the solution has
#' lost digits that show in the posterior mean (with three copies of every
#' input, errors of a few millionths of the targets' standard deviation
#' there, and of 0.03 to 0.08 of it at \eqn{5 \times 10^{15}}{5 x 10^15} to
#' \eqn{2 \times 10^{16}}{2 x 10^16}, noise \eqn{10^{-14}}{10^(-14)}), and the fit
#' warns with class `sddgp_warning_ill_conditioned` (also `sddgp_warning`),
#' whose fields `condition_number`, `jitter` and `noise_factor` give the
#' estimate and the increase of `noise` that brings it to \eqn{10^{10}}{10^10}.
#' Duplicated inputs with a small `noise` are the usual cause: merging them
#' (their mean target, with `weights` counting the copies) gives the same
#' posterior, well conditioned.
#'
#' @param features Random Fourier features of the prior draws behind
#'   posterior samples.
#' @return An object of class `sddgp_control`.
#' @examples
#' cholesky_control()
#' @export
cholesky_control <- function(features = 2000) {
  new_control("cholesky", list(), features)
}

solve_cholesky <- function(problem, control, threads, state) {
  res <- .Call(C_chol_solve, problem$xs, kernel_spec(problem$kernel), problem$noise,
               problem$rhs, threads)
  if (res$interrupted) signal_interrupt("The Cholesky factorisation was interrupted by the user")
  if (res$info != 0L) abort_not_positive_definite()
  check_conditioning(res$rcond, res$norm, problem$noise)
  # log det(K + diag(noise)): the fit's log marginal likelihood for free (logLik()).
  list(alpha = res$alpha, iterations = 0L, status = "exact", trace = empty_trace(),
       log_det = res$log_det)
}

abort_not_positive_definite <- function() {
  sddgp_abort(paste(
    "The Cholesky factorisation of K + noise * I failed: the matrix is not",
    "numerically positive definite. Increase `noise` or check for",
    "duplicated inputs."), class = "sddgp_error_numerical")
}

# Reciprocal condition numbers (1-norm) of K + diag(noise) below which the
# exact solve warns, and that the jitter it suggests reaches.  The solution
# may lose log10(1 / rcond) of its 16 digits.  With three copies of 100
# inputs (targets differing between copies, sd 0.75), the posterior mean
# was off by 4e-6 at rcond 1e-12 and by 0.07 at 4e-17 (noise 1e-14); noise
# 0.01 on 1000 random points gives rcond 7e-5.
chol_rcond_warn <- 1e-12
chol_rcond_safe <- 1e-10

# Warn (class sddgp_warning_ill_conditioned) when the factored matrix is
# nearly singular, naming the noise that would make it safe: adding a
# jitter j to every diagonal entry lifts the smallest eigenvalue, about
# rcond * norm, by j and the norm by at most j.
check_conditioning <- function(rcond, norm, noise) {
  if (!is.finite(rcond) || rcond < 0 || rcond >= chol_rcond_warn) return(invisible())
  jitter <- (chol_rcond_safe - rcond) * norm / (1 - chol_rcond_safe)
  # Scaling `noise` by `factor` lifts every noise / weights entry by at least the jitter.
  factor <- 1 + jitter / min(noise)
  advice <- if (all(noise == noise[1L])) {
    sprintf("increase `noise` to at least %s (a jitter of %s)",
            format(signif(noise[1L] * factor, 2)), format(signif(jitter, 2)))
  } else {
    sprintf("multiply `noise` by at least %s (a jitter of %s on the noise variances)",
            format(signif(factor, 2)), format(signif(jitter, 2)))
  }
  sddgp_warn(sprintf(paste(
    "The exact solve is ill-conditioned: K + noise * I has estimated condition",
    "number %s (above %s), so the fit may have lost most of its digits. To bring",
    "it to %s, %s, or merge duplicated inputs (their mean target, with `weights`",
    "counting them)."),
    format(signif(1 / rcond, 2)), format(1 / chol_rcond_warn), format(1 / chol_rcond_safe),
    advice),
    class = "sddgp_warning_ill_conditioned", condition_number = 1 / rcond,
    jitter = jitter, noise_factor = factor)
}

# The predicted wall time in seconds of solve_cholesky() for n points in d
# dimensions and nrhs right-hand sides on `threads` threads, with the BLAS
# R runs on, on this machine as busy as it is when first asked: the phases
# of small exact solves, timed once per session, thread count and BLAS
# (exact_calibration()), scaled to n.  The factorisation is the work of
# chol_work() at the two rates measured; the rest scales by n^2: building
# K, about 64 + d per entry (Matern-3/2, n = 4000, one thread: 0.085 s at
# d = 8, 0.17 s at 64, 0.23 s at 128; at most a tenth of the total with
# OpenBLAS, a hundredth with the reference BLAS), the 1-norm and
# condition estimate, and the solves, one more per right-hand side.
exact_seconds <- function(n, nrhs, threads, d = 8L) {
  cal <- exact_calibration(threads)
  work <- vapply(n, chol_work, numeric(2), block = cal[["block"]], threads = cal[["threads"]])
  r <- n / cal[["m"]]
  build <- cal[["build"]] * (64 + d) / (64 + exact_timing_d)
  per_rhs <- max(0, (cal[["solve"]] - cal[["solve_1"]]) / (exact_timing_rhs - 1))
  unname(cal[["update"]] * work[1L, ] + cal[["panel"]] * work[2L, ] +
    (build + cal[["norm"]] + cal[["rcond"]] + cal[["solve_1"]] + per_rhs * (nrhs - 1)) * r^2)
}

exact_timing_d <- 8L
exact_timing_rhs <- 16L

# The work of chol_lower() on n points in blocks of `block` rows on
# `threads` threads, in units of one block x block x block matrix product,
# in two parts with their own speeds: `update`, the off-diagonal tiles of
# the trailing updates (n^3 / (6 block^3) in all), shared out among the
# threads; and `panel`, the rest of each step (n^2 / block^2 in all): the
# diagonal block's factorisation (1/6, on one thread), the panel's
# triangular solves (1/2 per block of rows) and the updates' diagonal
# tiles (1/2 each), fewer to share.  At a few blocks the panel is most of
# the work, at many almost none: scaling one timing by n^3 alone predicted
# 15000 points with OpenBLAS 1.3 (1 thread) to 1.7 (2 threads) times too
# slow from 2048.
chol_work <- function(n, block, threads) {
  below <- ceiling(n / block) - seq_len(ceiling(n / block))
  c(update = sum(below * (below - 1) / 2) / threads,
    panel = sum(1 / 6 + 0.5 * ceiling(below / threads) + 0.5 * below / threads))
}

# Phase timings (C_chol_timing) by thread count and BLAS, for the session.
exact_timings <- new.env(parent = emptyenv())

# Seconds per unit of chol_work() (`update`, `panel`) and the other
# phases' seconds on m points.  m doubles from 1024 until the factorisation
# takes 0.04 s on at least 4 blocks (or m reaches 4096), and the quickest
# of up to 3 runs there (while they take 0.2 s) counts: the machine may be
# shared, and a run that catches a burst of other work (a compiler, say)
# would slow every prediction of the session.  The panel's speed comes from
# 2 blocks, where there is no update (the quickest of up to 3 runs while
# they take 0.05 s), if they take a tenth of m's factorisation or more (a
# fifth with OpenBLAS); otherwise one speed serves both (with the reference
# BLAS 2 blocks take a fiftieth, 3 ms unloaded, which one time slice of
# other work can double, and its routines run at one speed anyway).  In all
# about 0.3-0.4 s unloaded with the reference BLAS (m = 1024) and with
# OpenBLAS (m = 2048).  Points of a Weyl sequence, so that R's random number
# stream is left alone.
exact_calibration <- function(threads) {
  threads <- sddgp_threads(threads)
  key <- paste(threads, blas_libraries(), sep = "\r")
  if (!is.null(cal <- exact_timings[[key]])) return(cal)
  kernel <- matern(3/2, lengthscale = rep(1, exact_timing_d), variance = 1)
  steps <- sqrt(c(2, 3, 5, 7, 11, 13, 17, 19))
  run <- function(m) {
    x <- outer(seq_len(m), steps) %% 1
    res <- .Call(C_chol_timing, scale_inputs(x, kernel), kernel_spec(kernel),
                 exact_timing_rhs, threads)
    if (is.null(res)) signal_interrupt("Timing the exact solver was interrupted by the user")
    res
  }
  quickest <- function(m, first, budget) {
    runs <- list(first)
    seconds <- function() vapply(runs, function(r) sum(r[1:6]), numeric(1))
    while (length(runs) < 3L && sum(seconds()) < budget) runs <- c(runs, list(run(m)))
    runs[[which.min(seconds())]]
  }
  m <- 1024L
  repeat {
    first <- run(m)
    block <- first[["block"]]
    if ((first[["factor"]] >= 0.04 && m >= 4L * block) || m >= 4096L) break
    m <- as.integer(min(4096L, max(4L * block, 2L * m)))
  }
  cal <- quickest(m, first, 0.2)
  two <- quickest(2L * block, run(2L * block), 0.05)[["factor"]]
  large <- chol_work(m, block, threads)
  if (two >= 0.1 * cal[["factor"]]) {
    # Both speeds reproduce the factorisation of m points; the update at
    # least a quarter of it, whatever noise the short runs caught.
    panel <- two / chol_work(2L * block, block, threads)[["panel"]]
    update <- max(cal[["factor"]] - panel * large[["panel"]], 0.25 * cal[["factor"]]) /
      large[["update"]]
    panel <- (cal[["factor"]] - update * large[["update"]]) / large[["panel"]]
  } else {
    update <- panel <- cal[["factor"]] / sum(large)
  }
  cal <- c(cal, m = m, threads = threads, update = update, panel = panel)
  exact_timings[[key]] <- cal
  cal
}
