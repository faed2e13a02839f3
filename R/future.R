#' Distribute independent work over the workers of future's plan
#'
#' `sddgp_future()` is the `parallel` argument of [gp_sdd()],
#' [predict.sddgp()], [simulate.sddgp()], [bo_thompson()], [mini_meta()] and
#' [gp_cv()]
#' (or `options(sddgp.parallel = sddgp_future())`, their default) that runs
#' their independent pieces of
#' work as futures, on whatever [future::plan()] the user has set:
#' `multisession` on this machine, `cluster` on several, or a scheduler
#' through future.batchtools. The pieces are
#' * the posterior-sample systems of an SDD (or SGD) solve, in chunks of
#'   columns: [gp_sdd()] with `samples`, and the fresh draws of
#'   [simulate.sddgp()];
#' * the rows of `newdata` in [predict.sddgp()] and [simulate.sddgp()], in
#'   contiguous blocks of their `chunk_size` pieces (and the fitted values
#'   that [gp_sdd()] computes at the training inputs);
#' * the evaluations of the objective in [bo_thompson()] and [mini_meta()],
#'   one future each, in random-number streams of their own (see
#'   [bo_thompson()], section Random numbers);
#' * the folds of [gp_cv()], one future each, in streams of their own.
#'
#' Results are identical, bit for bit, to those of the same call without
#' `parallel`, whatever the plan and the number of workers:
#' * The systems of a solve share each step's batch of coordinates, drawn
#'   by a counter-based generator from the step's index, never from the
#'   number of systems; every system's arithmetic is its own (the kernel
#'   products sum each column alone, the first column of a product by a
#'   code path of its own, which is why every chunk also solves the
#'   posterior mean's systems, or the first sample when there is no mean).
#' * One run stops when every system's probed residual is below the
#'   tolerance, at a check where all are below at once. Each chunk first
#'   runs to its own stop; the chunks that stopped earlier than the latest
#'   are then resumed from where they stopped (iterate, average and
#'   momentum) and may stop only from that step on, until all stop at the
#'   same step: the step the single run stops at.
#' * Diverged runs are halved and run again as a single run would be.
#'
#' A run with a `time_limit` (whose steps depend on the clock anyway) or
#' the trial run of the automatic solver choice is not split.
#'
#' Each future ships its share of the data and right-hand sides, and builds
#' its own kernel cache when `cache` allows one (memory per worker). A
#' chunk pays when each step's kernel rows cost less than the systems'
#' share of a step: many samples (hundreds), or a cached kernel.
#'
#' @section Threads: Each worker runs sddgp on `threads` threads (default
#'   1), set explicitly rather than inherited, so that `workers` processes
#'   on a machine with as many cores do not oversubscribe it: with
#'   `plan(multisession, workers = 4)` on 16 cores, `threads = 4`. (In a
#'   forked worker, `plan(multicore)`, sddgp always uses one thread; see
#'   [sddgp_threads()].)
#' @section Failures: A worker that dies (killed, out of memory) makes the
#'   call fail with an error of class `sddgp_error_worker` (its `parent` is
#'   future's `FutureError`) rather than wait for it; errors raised by
#'   sddgp in a worker reach the caller with their own classes.
#'
#' @param threads Threads of sddgp in each worker, a positive whole number.
#' @param chunks Futures per call, at most: `NULL` for
#'   [future::nbrOfWorkers()] of the plan current at the call.
#' @return An object of class `sddgp_future`.
#' @examples
#' if (requireNamespace("future", quietly = TRUE)) {
#'   old <- future::plan("sequential")
#'   x <- matrix(seq(0, 1, length.out = 200))
#'   y <- sin(8 * x[, 1])
#'   fit <- gp_sdd(x, y, kernel = matern(3/2, 0.2, 1), noise = 0.01,
#'                 control = sdd_control(iterations = 500), samples = 4,
#'                 parallel = sddgp_future(), threads = 1)
#'   future::plan(old)
#' }
#' @export
sddgp_future <- function(threads = 1L, chunks = NULL) {
  if (!requireNamespace("future", quietly = TRUE)) {
    sddgp_abort("sddgp_future() needs the package future: install.packages(\"future\").",
                class = "sddgp_error_dependency")
  }
  check_number(threads, "threads", lower = 1, upper = 1024, integer = TRUE)
  if (!is.null(chunks)) check_number(chunks, "chunks", lower = 1, upper = 1e5, integer = TRUE)
  structure(list(threads = as.integer(threads),
                 chunks = if (!is.null(chunks)) as.integer(chunks)),
            class = "sddgp_future")
}

#' @export
print.sddgp_future <- function(x, ...) {
  cat(sprintf("<sddgp_future> %s futures, %d thread%s each\n",
              if (is.null(x$chunks)) "nbrOfWorkers()" else format(x$chunks), x$threads,
              if (x$threads == 1L) "" else "s"))
  invisible(x)
}

# The `parallel` argument: NULL, sddgp_future() or, where a solve is
# shared, sddgp_mpi() (`mpi = FALSE` for runs of independent tasks, the
# loops' evaluations and gp_cv()'s folds: MPI shares a solve, not tasks).
check_parallel <- function(parallel, mpi = TRUE) {
  kinds <- c("sddgp_future", if (mpi) "sddgp_mpi")
  if (!is.null(parallel) && !inherits(parallel, kinds)) {
    abort_argument("parallel", paste("must be NULL or made by",
                                     paste0(kinds, "()", collapse = " or ")))
  }
  parallel
}

# Whether `parallel` asks for futures (sddgp_mpi() shares the solve only:
# every process does the rest of the work itself).
uses_futures <- function(parallel) inherits(parallel, "sddgp_future")

# How many futures a call makes.
future_count <- function(parallel) parallel$chunks %||% future::nbrOfWorkers()

# fn(item, threads) for every item, each a future on the current plan,
# the k-th with `seeds[[k]]` (future()'s `seed`; none by default); the
# values in order.
future_map <- function(items, fn, parallel, seeds = NULL) {
  threads <- parallel$threads
  worker_errors({
    futures <- lapply(seq_along(items), function(k) {
      item <- items[[k]]
      # future finds the globals: it ships a closure's environment, and what
      # a function of the global environment (a script's objective) uses.
      future::future(fn(item, threads), packages = "sddgp", seed = seeds[[k]])
    })
    lapply(futures, future::value)
  })
}

# `expr`, which makes futures and collects their values; a worker lost on
# the way (found when a value is collected, or when a later future is
# sent to it) is a classed error.
worker_errors <- function(expr) {
  tryCatch(expr, FutureError = function(e) {
    sddgp_abort(paste("A future worker failed, so sddgp's parallel work cannot finish:",
                      conditionMessage(e)),
                class = "sddgp_error_worker", parent = e)
  })
}

# fn(item, threads) for every item: as futures when `parallel` asks for
# them, else in this process (with `threads`).
map_items <- function(items, fn, parallel, threads) {
  if (uses_futures(parallel)) future_map(items, fn, parallel) else lapply(items, fn, threads)
}

# Consecutive runs of `pieces` (a list), one group per future: each
# future gets one contiguous share, so the data it needs ship once.
piece_groups <- function(pieces, parallel) {
  if (!uses_futures(parallel) || length(pieces) == 0L) return(list(pieces))
  m <- min(length(pieces), future_count(parallel))
  unname(split(pieces, sort(rep_len(seq_len(m), length(pieces)))))
}

# Whether run_sdd_loop() splits `problem`'s systems into chunks: asked
# for, at least two systems beyond the leading ones to split, and a run
# whose steps do not depend on the clock or on all systems' progress rate.
chunked_solve <- function(problem, settings) {
  uses_futures(problem$parallel) &&
    ncol(problem$rhs) - leading_systems(problem) >= 2L && future_count(problem$parallel) >= 2L &&
    !is.finite(settings$time_limit) && settings$stop_stalled == 0L
}

# The systems every chunk solves: the posterior means' (at least the first
# column, which the kernel products sum by a code path of their own).
leading_systems <- function(problem) max(1L, mean_systems(problem))

# The C loop of sdd_settings() `settings` on `problem`, its systems split
# into chunks run as futures, with the raw result of sdd_loop_call() for
# all of them, identical to one run's (?sddgp_future).
sdd_chunks <- function(problem, settings, parallel) {
  k <- ncol(problem$rhs)
  lead <- seq_len(leading_systems(problem))
  rest <- setdiff(seq_len(k), lead)
  m <- min(length(rest), future_count(parallel))
  cols <- lapply(unname(split(rest, sort(rep_len(seq_len(m), length(rest))))),
                 function(g) c(lead, g))
  settings$keep_state <- TRUE
  pieces <- lapply(seq_along(cols), function(i) chunk_piece(problem, settings, cols[[i]], i == 1L))
  runs <- future_map(pieces, run_chunk, parallel)
  repeat {
    status <- vapply(runs, decode_status, "")
    failed <- which(!status %in% c("iterations", "tolerance"))
    if (length(failed)) return(runs[[failed[1L]]])
    done <- vapply(runs, function(r) r$iterations, 0L)
    behind <- which(done < max(done))
    if (length(behind) == 0L) break
    pieces[behind] <- Map(resumed_piece, pieces[behind], runs[behind], max(done))
    runs[behind] <- Map(continued_run, runs[behind], future_map(pieces[behind], run_chunk, parallel))
  }
  joined_runs(runs, cols, k)
}

# The sub-problem of the systems `cols`: their right-hand sides and
# per-system settings; the trace metrics (of the first system) in the
# first chunk only.
chunk_piece <- function(problem, settings, cols, first) {
  per_column <- function(v) if (is.matrix(v)) v[, cols, drop = FALSE] else if (!is.null(v)) v[cols]
  for (field in c("step_size", "clip", "alpha0", "rhs_reg")) {
    if (!is.null(settings[[field]])) settings[[field]] <- per_column(settings[[field]])
  }
  if (!first) settings["metrics"] <- list(NULL)
  list(problem = list(xs = problem$xs, kernel = problem$kernel, noise = problem$noise,
                      rhs = problem$rhs[, cols, drop = FALSE]),
       settings = settings)
}

run_chunk <- function(piece, threads) {
  sdd_loop_call(piece$problem, piece$settings, sddgp_threads(threads))
}

# `piece` to go on from where `run` stopped, stopping at the tolerance
# only from step `from` on.
resumed_piece <- function(piece, run, from) {
  k <- ncol(run$alpha)
  s <- piece$settings
  s$first_iteration <- run$iterations
  s$alpha0 <- run$state[, seq_len(k), drop = FALSE]
  s$momentum0 <- run$state[, k + seq_len(k), drop = FALSE]
  s$alpha_bar0 <- run$alpha
  s$tolerance_from <- from
  piece$settings <- s
  piece
}

# The run `before` continued by the resumed run `after`: the latter's
# result, with both traces (its clocks continued from the former's).
continued_run <- function(before, after) {
  tr <- before$trace
  for (part in names(tr)) {
    add <- after$trace[[part]]
    if (part %in% c("seconds", "metric_seconds") && length(tr[[part]])) {
      add <- add + tr[[part]][length(tr[[part]])]
    }
    tr[[part]] <- if (is.matrix(add)) rbind(tr[[part]], add) else c(tr[[part]], add)
  }
  after$trace <- tr
  after
}

# One result for all k systems from the chunks' runs (all stopped at the
# same step) on the columns `cols`: the first chunk's trace, with every
# chunk's residuals where it probed them.
joined_runs <- function(runs, cols, k) {
  first <- runs[[1L]]
  alpha <- matrix(0, nrow(first$alpha), k)
  tr <- first$trace
  residuals <- matrix(NaN, length(tr$iteration), k)
  for (i in seq_along(runs)) {
    alpha[, cols[[i]]] <- runs[[i]]$alpha
    rows <- match(runs[[i]]$trace$iteration, tr$iteration)
    residuals[rows, cols[[i]]] <- runs[[i]]$trace$residuals
  }
  tr$residuals <- residuals
  status <- if (all(vapply(runs, decode_status, "") == "tolerance")) "tolerance" else "iterations"
  list(alpha = alpha, iterations = first$iterations,
       status = match(status, solver_statuses) - 1L, trace = tr)
}

# fn(ctx, x[rows, ], threads) for every piece of rows of x (`pieces`, a
# list of consecutive index vectors), labelled `label` in the progress
# bar: in this process, or as futures of contiguous groups of pieces.
# The results, a list in the pieces' order: the same pieces, so the same
# bits, either way.
map_pieces <- function(x, pieces, fn, ctx, parallel, threads, label) {
  items <- lapply(piece_groups(pieces, parallel), function(g) {
    list(x = x[unlist(g), , drop = FALSE], sizes = lengths(g), fn = fn, ctx = ctx,
         label = label)
  })
  unlist(map_items(items, run_pieces, parallel, threads), recursive = FALSE)
}

run_pieces <- function(item, threads) {
  threads <- sddgp_threads(threads)
  ends <- cumsum(item$sizes)
  lapply(progress_along(item$sizes, item$label), function(i) {
    rows <- seq.int(ends[i] - item$sizes[i] + 1L, length.out = item$sizes[i])
    item$fn(item$ctx, item$x[rows, , drop = FALSE], threads)
  })
}
