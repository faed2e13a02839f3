# Random numbers for independent tasks (the loops' evaluations of the
# objective, the folds of gp_cv()) that are the same whether a task runs in
# this process or as a future, on any plan.

# The random-number streams of a run of tasks, in an environment that the
# tasks advance: task k runs in the k-th L'Ecuyer-CMRG substream after a
# seed taken from R's stream when the run starts, whether it runs here or as
# a future (which takes such a seed as it is).  R's stream goes on as if
# there were no tasks: the seed is the stream's next number, left in place,
# so that loops with a deterministic objective draw what they drew before
# the streams.
task_streams <- function() {
  if (!exists(".Random.seed", envir = globalenv(), inherits = FALSE)) set.seed(NULL)
  draw <- with_saved_rng(sample.int(.Machine$integer.max, 1L))
  streams <- new.env(parent = emptyenv())
  streams$seed <- with_rng_state(NULL, {
    set.seed(draw)
    .Random.seed
  })
  streams
}

# The next k streams' seeds.
next_streams <- function(streams, k) {
  lapply(seq_len(k), function(i) streams$seed <- parallel::nextRNGStream(streams$seed))
}

# fn(item) for every item, the k-th in the stream seeds[[k]]: as futures
# when `parallel` asks for them, else here (with a progress bar named
# `label`, if any).  The values in order.
stream_map <- function(items, fn, seeds, parallel, label = NULL) {
  force(seeds) # drawn from R's generator, before with_rng_state() switches it
  if (uses_futures(parallel)) return(future_map(items, without_threads(fn), parallel, seeds))
  index <- if (is.null(label)) seq_along(items) else progress_along(items, label)
  lapply(index, function(k) with_rng_state(seeds[[k]], fn(items[[k]])))
}

# fn as future_map() calls it, fn(item, threads), for an fn that takes its
# threads from elsewhere; in a closure of its own, so that a future ships
# fn alone.
without_threads <- function(task) {
  force(task)
  function(item, threads) task(item)
}

# `expr` evaluated, R's generator and its state restored after.
with_saved_rng <- function(expr) {
  kinds <- RNGkind()
  had <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
  saved <- if (had) get(".Random.seed", envir = globalenv())
  on.exit({
    do.call(RNGkind, as.list(kinds))
    if (had) assign(".Random.seed", saved, envir = globalenv()) else
      rm(".Random.seed", envir = globalenv())
  })
  expr
}

# `expr` evaluated with R's generator set to L'Ecuyer-CMRG at `seed` (or
# any state, NULL), the caller's generator and state restored after.
with_rng_state <- function(seed, expr) {
  with_saved_rng({
    RNGkind("L'Ecuyer-CMRG")
    if (!is.null(seed)) assign(".Random.seed", seed, envir = globalenv())
    expr
  })
}
