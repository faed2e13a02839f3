#' Number of threads sddgp uses
#'
#' Every function that takes `threads = NULL` uses this default, looked up in
#' order from `options(sddgp.threads)`, the environment variable
#' `SDDGP_NUM_THREADS`, and otherwise [parallelly::availableCores()], which
#' honours cgroup CPU quotas and CPU sets (containers), scheduler allocations
#' (Slurm, PBS, SGE, LSF), `options(mc.cores)` and the 2-core limit of
#' `R CMD check` (`_R_CHECK_LIMIT_CORES_`).
#'
#' Whatever is asked for, the argument included, is capped by the number of
#' processors OpenMP may use and by OpenMP's thread limit
#' (`OMP_THREAD_LIMIT`). In a process forked from R (`parallel::mclapply()`,
#' `future::plan("multicore")`) it is always 1: GNU OpenMP deadlocks in a
#' forked child that starts threads. Results do not depend on the number of
#' threads.
#'
#' @section Busy machines:
#' The iterative solvers, and the Vecchia stage of hyperparameter
#' estimation ([estimation_control()]), time their steps and, when other
#' jobs compete for the cores, run on fewer threads than asked for (trying
#' more again now and then), because threads waiting at the end of each parallel step would
#' otherwise take CPU time from the working ones. A fit too short to time its
#' own steps, started within 10 seconds of one that ran on fewer threads,
#' starts on that many while other processes still keep the CPUs busy; the
#' work outside the solvers' steps (set-up, predictions) runs on no more
#' threads than the CPUs that other processes leave free at that moment
#' (counted on Linux; elsewhere the first rule always applies and the second
#' never). Setting the environment
#' variable `OMP_WAIT_POLICY=passive` before R starts (in `~/.Renviron`, or
#' the job script) makes waiting threads sleep instead of spin, which helps
#' every OpenMP program on a shared machine, at a cost of a few per cent on
#' an idle one.
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
    if (!is.null(getOption("sddgp.threads"))) {
      threads <- getOption("sddgp.threads")
      source <- "options(sddgp.threads)"
    } else if (nzchar(env)) {
      threads <- suppressWarnings(as.numeric(env))
      source <- "SDDGP_NUM_THREADS"
    } else {
      threads <- available_cores()
      source <- sprintf("parallelly::availableCores(), %s", names(threads))
    }
  }
  check_number(threads, if (source == "argument") "threads" else source,
               lower = 1, integer = TRUE)
  info <- .Call(C_openmp_info)
  n <- as.integer(min(threads, info$processors, info$thread_limit))
  if (info$forked) n <- 1L
  if (verbose) {
    cat(sprintf("sddgp uses %d thread%s (from %s%s)\n", n, if (n == 1L) "" else "s",
                source, if (info$forked) "; 1 in a forked process" else ""))
    cat(sprintf("  OpenMP: %s; processors %d, max threads %d, thread limit %d\n",
                if (info$openmp) "yes" else "not compiled in",
                info$processors, info$max_threads, info$thread_limit))
  }
  n
}

# parallelly::availableCores(), read again only when something it looks at
# that can change within a session has changed: it reads cgroup and
# scheduler files (milliseconds), and predict() and simulate() ask on every
# call.
available_cores <- local({
  cached <- NULL
  key <- NULL
  function() {
    now <- list(Sys.getenv(c("_R_CHECK_LIMIT_CORES_", "OMP_THREAD_LIMIT", "OMP_NUM_THREADS",
                             "SLURM_CPUS_PER_TASK", "SLURM_CPUS_ON_NODE", "NSLOTS", "PBS_NUM_PPN",
                             "PBS_NP", "LSB_DJOB_NUMPROC", "MC_CORES")),
                options()[grep("^(mc\\.cores|parallelly\\.)", names(options()))])
    if (is.null(cached) || !identical(now, key)) {
      cached <<- parallelly::availableCores()
      key <<- now
    }
    cached
  }
})
