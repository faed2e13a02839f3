#' sddgp: Gaussian process regression by stochastic dual descent
#'
#' Fit Gaussian processes to large data with [gp_sdd()], predict with
#' [predict.sddgp()] and draw posterior function samples with
#' [simulate.sddgp()]. Threads are controlled by the `threads` argument or
#' `options(sddgp.threads =)`; see [sddgp_threads()].
#'
#' @keywords internal
#' @useDynLib sddgp, .registration = TRUE
"_PACKAGE"
