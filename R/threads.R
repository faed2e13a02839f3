#' Number of threads sddgp uses
#'
#' Every function that takes `threads = NULL` uses this default, looked up in
#' order from `options(sddgp.threads)`, the environment variable
#' `SDDGP_NUM_THREADS`, 2 when `R CMD check` limits cores
#' (`_R_CHECK_LIMIT_CORES_`), and otherwise the number of logical CPUs.
#' Whatever is asked for is capped by OpenMP's thread limit
#' (`OMP_THREAD_LIMIT`). Results do not depend on the number of threads.
#'
#' @param threads `NULL` for the default, or a positive whole number.
#' @param verbose Print how the number was chosen and what OpenMP reports.
#' @return The number of threads, an integer.
#' @examples
#' sddgp_threads()
#' old <- options(sddgp.threads = 1)
#' sddgp_threads()
#' options(old)
#' @export
sddgp_threads <- function(threads = NULL, verbose = FALSE) {
  source <- "argument"
  if (is.null(threads)) {
    env <- Sys.getenv("SDDGP_NUM_THREADS")
    limit <- Sys.getenv("_R_CHECK_LIMIT_CORES_")
    if (!is.null(getOption("sddgp.threads"))) {
      threads <- getOption("sddgp.threads")
      source <- "options(sddgp.threads)"
    } else if (nzchar(env)) {
      threads <- suppressWarnings(as.numeric(env))
      source <- "SDDGP_NUM_THREADS"
    } else if (nzchar(limit) && !identical(tolower(limit), "false")) {
      threads <- 2L
      source <- "_R_CHECK_LIMIT_CORES_"
    } else {
      threads <- parallel::detectCores()
      if (is.na(threads)) threads <- 1L
      source <- "logical CPUs"
    }
  }
  check_number(threads, if (source == "argument") "threads" else source,
               lower = 1, integer = TRUE)
  info <- .Call(C_openmp_info)
  n <- as.integer(min(threads, info[4L]))
  if (verbose) {
    cat(sprintf("sddgp uses %d thread%s (from %s)\n", n, if (n == 1L) "" else "s",
                source))
    cat(sprintf("  OpenMP: %s; processors %d, max threads %d, thread limit %d\n",
                if (info[1L] == 1L) "yes" else "not compiled in",
                info[2L], info[3L], info[4L]))
  }
  n
}
