#' Progress bars of long computations
#'
#' Long computations show a progress bar (with the \pkg{cli} package): the
#' iterative solvers' loops (SDD, SGD, conjugate gradients, DSG, CaBCD) with
#' their steps, the estimated time left for the step budget and the largest
#' current relative residual over the systems solved; hyperparameter
#' estimation with its stage and number of likelihood evaluations; and
#' [predict.sddgp()] and [simulate.sddgp()] over chunks of new inputs
#' (a [simulate.sddgp()] that solves for new samples shows its solver's bar
#' too), and [gp_cv()] over its folds when they run in this process. A bar appears only once a computation has run for two seconds (cli's
#' option `cli.progress_show_after`) and disappears when it ends, so short
#' runs print nothing.
#'
#' Whether bars are shown is looked up, in order, from the argument, from
#' `options(sddgp.progress =)` and otherwise from [interactive()]: by default
#' they are shown in an interactive session and never in scripts, tests,
#' `R CMD check` or knitted documents. Updates cost nothing measurable: the
#' solvers' C loops report at most ten times a second (when they also look
#' for Ctrl-C), and cli redraws only when its timer says a redraw is due.
#' With `options(cli.progress_handlers = "progressr")` the bars go to
#' \pkg{progressr} instead (see [cli::cli_progress_bar()]).
#'
#' @param progress `NULL` for the default, or `TRUE` or `FALSE`.
#' @return Whether progress bars are shown: `TRUE` or `FALSE`.
#' @examples
#' sddgp_progress()
#' old <- options(sddgp.progress = FALSE) # never show progress bars
#' sddgp_progress()
#' options(old)
#' @export
sddgp_progress <- function(progress = NULL) {
  arg <- "progress"
  if (is.null(progress)) {
    progress <- getOption("sddgp.progress")
    arg <- "options(sddgp.progress)"
  }
  if (is.null(progress)) return(interactive())
  check_flag(progress, arg)
  progress
}

# The progress function the C loop of an iterative solver calls (glue.c's
# glue_trace_progress()) as f(iteration, residual), or NULL when no progress
# is shown; the solver's .Call passes it as its settings' `progress`.  The
# bar belongs to the frame `.envir` (the caller's), which closes it on exit.
progress_solver <- function(label, total, tolerance = NULL, .envir = parent.frame()) {
  if (!sddgp_progress()) return(NULL)
  target <- if (isTRUE(tolerance > 0)) sprintf(" (tolerance %s)", format_residual(tolerance))
  id <- cli::cli_progress_bar(
    total = total, auto_terminate = FALSE, extra = list(residual = "--"),
    format = paste0(label, " {cli::pb_bar} {cli::pb_current}/{cli::pb_total} steps",
                    " | residual {cli::pb_extra$residual}", target, " | ETA {cli::pb_eta}"),
    .envir = .envir)
  function(iteration, residual) {
    # An error here would reach C as an interrupt: a failed redraw must not
    # stop the fit.
    tryCatch(cli::cli_progress_update(
      id = id, set = min(iteration, total),
      extra = list(residual = format_residual(residual)), .envir = .envir),
      error = function(e) NULL)
  }
}

format_residual <- function(r) if (is.finite(r)) format(signif(r, 3)) else "--"

# The bar of hyperparameter estimation, or NULL; progress_stage() moves it
# on from stage to stage.
progress_estimation <- function(.envir = parent.frame()) {
  if (!sddgp_progress()) return(NULL)
  id <- cli::cli_progress_bar(
    total = NA, extra = list(stage = ""),
    format = paste("Estimating hyperparameters {cli::pb_spin} {cli::pb_extra$stage}",
                   "| {cli::pb_current} likelihood evaluations | {cli::pb_elapsed}"),
    .envir = .envir)
  list(id = id, envir = .envir)
}

# The estimation `bar`'s stage `label` starts: the bar says so, and counts
# the evaluations of `objective` (mll_objective()), which is returned.
progress_stage <- function(bar, label, objective) {
  if (is.null(bar)) return(objective)
  update <- function(...) {
    tryCatch(cli::cli_progress_update(id = bar$id, ..., .envir = bar$envir),
             error = function(e) NULL)
  }
  update(inc = 0, extra = list(stage = label))
  fn <- objective$fn
  objective$fn <- function(par) {
    update()
    fn(par)
  }
  objective
}

# seq_along(x), which moves a bar named `what` on as a for loop runs over
# it when progress is shown.
progress_along <- function(x, what, .envir = parent.frame()) {
  if (!sddgp_progress()) return(seq_along(x))
  cli::cli_progress_along(x, name = what, .envir = .envir)
}
