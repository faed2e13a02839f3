# The loop of src/sdd.c, shared by the sdd and sgd solvers (sgd.R): the
# validation of the settings sdd_control() and sgd_control() have in
# common, the settings contract with C (sdd_settings()), and one run.

# The validated settings of the shared SDD/SGD loop that sdd_control() and
# sgd_control() have in common.
loop_settings <- function(iterations, batch_size, momentum, averaging, averaging_rate,
                          averaging_start, batch_sampling, tolerance, time_limit,
                          check_every, probe_size, cache, cache_limit, precision) {
  check_number(iterations, "iterations", lower = 1, upper = .Machine$integer.max,
               integer = TRUE)
  check_number(batch_size, "batch_size", lower = 1, upper = .Machine$integer.max,
               integer = TRUE)
  check_number(momentum, "momentum", lower = 0, upper = 1, upper_open = TRUE)
  averaging <- choose_one(averaging, "averaging", c("geometric", "none", "arithmetic"))
  if (!is.null(averaging_rate)) {
    check_number(averaging_rate, "averaging_rate", lower = 0, upper = 1, lower_open = TRUE)
  }
  if (!is.null(averaging_start)) {
    check_number(averaging_start, "averaging_start", lower = 1, upper = iterations,
                 integer = TRUE)
  }
  batch_sampling <- choose_one(batch_sampling, "batch_sampling", c("uniform", "permutation"))
  if (!is.null(tolerance)) check_number(tolerance, "tolerance", lower = 0, upper = 1)
  time_limit <- check_time_limit(time_limit)
  check_number(check_every, "check_every", lower = 1, upper = .Machine$integer.max,
               integer = TRUE)
  check_number(probe_size, "probe_size", lower = 1, upper = 1e6, integer = TRUE)
  c(list(iterations = as.integer(iterations), batch_size = as.integer(batch_size),
         momentum = momentum, averaging = averaging, averaging_rate = averaging_rate,
         averaging_start = if (!is.null(averaging_start)) as.integer(averaging_start),
         batch_sampling = batch_sampling, tolerance = tolerance,
         time_limit = time_limit,
         check_every = as.integer(check_every), probe_size = as.integer(probe_size)),
    kernel_settings(cache, cache_limit, precision))
}

# The control object of a solver on the SDD loop (SDD, SGD): the loop's
# settings, always in this order, around the solver's own (`own` after the
# batch settings, `more` before the trace).
loop_control <- function(solver, loop, step_size, step_size_samples, own,
                         more = NULL, trace, features) {
  new_control(solver, c(
    loop[c("iterations", "batch_size")],
    list(step_size = step_size, step_size_samples = step_size_samples),
    loop[c("momentum", "averaging", "averaging_rate", "averaging_start",
           "batch_sampling")],
    own,
    loop[c("tolerance", "time_limit", "check_every", "probe_size")],
    more,
    list(trace = trace),
    loop[c("cache", "cache_limit", "precision")]),
    features)
}

# The trace metrics' settings ("none" when none are asked for): the
# iterations to evaluate them at, the reference weights and the test data.
trace_settings <- function(trace_every, trace_at, reference, test_x, test_y,
                           iterations, check_every) {
  if (!is.null(trace_every)) {
    check_number(trace_every, "trace_every", lower = 1, upper = iterations, integer = TRUE)
  }
  if (!is.null(trace_at)) {
    if (!is.null(trace_every)) {
      abort_argument("trace_at", "cannot be given together with `trace_every`; give one")
    }
    if (!is.numeric(trace_at) || length(trace_at) == 0L || anyNA(trace_at) ||
        any(trace_at != round(trace_at)) || any(trace_at < 1 | trace_at > iterations)) {
      abort_argument("trace_at", sprintf(
        "must be whole numbers of iterations in [1, %d]", iterations))
    }
  }
  if (!is.null(reference)) {
    if (!is.numeric(reference) || !is.null(dim(reference)) && ncol(as.matrix(reference)) != 1L ||
        length(reference) == 0L || any(!is.finite(reference))) {
      abort_argument("reference", "must be a numeric vector of finite representer weights")
    }
    reference <- as.numeric(reference)
  }
  if (is.null(test_x) != is.null(test_y)) {
    abort_argument(if (is.null(test_x)) "test_x" else "test_y",
                   "is missing: give `test_x` and `test_y` together")
  }
  if (!is.null(test_x)) {
    test_x <- check_finite_rows(as_input_matrix(test_x, "test_x"), "test_x")
    if (!is.numeric(test_y) || !is.null(dim(test_y)) || length(test_y) != nrow(test_x) ||
        any(!is.finite(test_y))) {
      abort_argument("test_y", sprintf(
        "must be a numeric vector of %d finite targets, one per row of `test_x`",
        nrow(test_x)))
    }
  }
  if (is.null(reference) && is.null(test_x)) {
    if (!is.null(trace_every) || !is.null(trace_at)) {
      abort_argument(if (!is.null(trace_at)) "trace_at" else "trace_every", paste(
        "has nothing to trace: give `reference` and/or `test_x` and `test_y`"))
    }
    return("none")
  }
  every <- trace_every %||% check_every
  at <- if (!is.null(trace_at)) trace_at else c(seq_len(iterations %/% every) * every, iterations)
  structure(list(at = sort(unique(as.integer(at))), reference = reference,
                 test_x = test_x, test_y = if (!is.null(test_y)) as.numeric(test_y)),
            class = "sddgp_trace_settings")
}

#' @export
format.sddgp_trace_settings <- function(x, ...) {
  at <- x$at
  shown <- if (length(at) <= 4L) paste(at, collapse = ", ") else
    paste(c(at[1:2], "...", at[length(at)]), collapse = ", ")
  what <- c(if (!is.null(x$reference))
              sprintf("K-norm errors to %d reference weights", length(x$reference)),
            if (!is.null(x$test_x)) sprintf("test RMSE on %d points", nrow(x$test_x)))
  sprintf("%s at %d iteration%s (%s)", paste(what, collapse = ", "), length(at),
          if (length(at) == 1L) "" else "s", shown)
}

# The C loop's gradient estimator (glue.c's glue_estimators): the exact
# primal gradient has its own, which draws no regulariser features.
loop_estimator <- function(objective, estimator, full_batch) {
  if (objective == "primal" && full_batch) "primal_full" else paste(objective, estimator, sep = "_")
}

# The fields of sdd_options (src/sdd.h), and of the kernel operator, for a
# run of `control` (made by sdd_control() or sgd_control()) on `problem`:
# the gradient estimate of `objective` and `estimator` with `features`
# random features, per right-hand side the step size and the clipping
# norm (NULL: none), and the initial iterate alpha0 (n x right-hand sides;
# NULL: zero).  The seed is drawn last.
sdd_settings <- function(control, problem, objective, estimator, features, step_size,
                         clip = NULL, alpha0 = NULL) {
  n <- nrow(problem$x)
  batch_size <- min(control$batch_size, n)
  estimator <- loop_estimator(objective, estimator, batch_size >= n)
  c(list(
    iterations = control$iterations, batch_size = batch_size,
    batch_sampling = control$batch_sampling, estimator = estimator,
    features = as.integer(features),
    # Lin et al. (2023) put the sample systems' noise draws in the
    # regulariser of the primal SGD objective; the mean's b_reg is zero.
    rhs_reg = if (estimator == "primal_coordinates" && !is.null(problem$zeta)) {
      cbind(matrix(0, n, mean_systems(problem)), problem$zeta, deparse.level = 0)
    },
    step_size = as.numeric(step_size), clip = clip, alpha0 = alpha0,
    momentum = control$momentum,
    averaging_rate = if (control$averaging != "geometric") 1 else
      control$averaging_rate %||% min(1, 100 / control$iterations),
    # 0: no arithmetic average.
    averaging_start = if (control$averaging == "arithmetic")
      control$averaging_start %||% 1L else 0L,
    check_every = control$check_every, probe_size = min(control$probe_size, n),
    tolerance = solve_tolerance(control$tolerance, problem),
    # Set only by solve_automatic(), within the exact solver's reach.
    stop_stalled = as.integer(isTRUE(control$stop_stalled)), time_limit = control$time_limit,
    metrics = trace_metrics(control$trace, problem), seed = new_seed(),
    # A fresh run; sdd_chunks() resumes runs (R/future.R).
    first_iteration = 0L, alpha_bar0 = NULL, momentum0 = NULL, tolerance_from = 0L,
    keep_state = FALSE,
    # One process; mpi_settings() (R/mpi.R) shares the kernel's columns.
    shard = NULL),
    operator_settings(control, n))
}

# One value per right-hand side of `problem`: `mean` for the mean's systems
# (one per output), `samples` for the sample systems'.
per_system <- function(mean, samples, problem) {
  k <- ncol(problem$rhs)
  c(rep(mean, mean_systems(problem)), rep(samples, k - mean_systems(problem)))
}

# One run of the C loop with sdd_settings() `settings`, its progress bar
# labelled `label`: in this process, or split into chunks of systems over
# future's workers when problem$parallel asks for it (sdd_chunks()), with
# the same result.  Its status is returned, not raised: solve_sdd()
# retries a diverged run.
run_sdd_loop <- function(problem, settings, threads, label = "SDD") {
  if (inherits(problem$parallel, "sddgp_mpi")) {
    settings <- mpi_settings(settings, problem$parallel, nrow(problem$xs))
  }
  res <- if (chunked_solve(problem, settings)) {
    sdd_chunks(problem, settings, problem$parallel)
  } else {
    settings$progress <- progress_solver(label, settings$iterations, settings$tolerance)
    sdd_loop_call(problem, settings, threads)
  }
  list(alpha = res$alpha, iterations = res$iterations, status = decode_status(res),
       trace = sdd_trace(res$trace, mean_systems(problem), settings$metrics),
       cached = settings$use_cache, tolerance = settings$tolerance)
}

# The C loop's raw result: list(alpha, iterations, status, trace, state,
# comm_failed, comm_seconds, update_seconds, gather_seconds).
sdd_loop_call <- function(problem, settings, threads) {
  res <- .Call(C_sdd_solve, problem$xs, kernel_spec(problem$kernel), problem$noise,
               problem$rhs, settings, threads)
  if (res$comm_failed) {
    sddgp_abort("A message between the processes of the sharded solve failed.",
                class = "sddgp_error_worker")
  }
  res
}

# The trace metrics' operands for the C loop, in the units of the problem
# (standardised as the fit, inputs divided by the length scales), or NULL.
# Only the posterior mean's system is traced.
trace_metrics <- function(trace, problem) {
  if (!inherits(trace, "sddgp_trace_settings") || !problem$has_mean) return(NULL)
  n <- nrow(problem$x)
  if (!is.null(trace$reference) && length(trace$reference) != n) {
    abort_argument("reference", sprintf(
      "has %d weights but the data have %d points", length(trace$reference), n))
  }
  out <- list(at = trace$at, reference = trace$reference, test_x = NULL, test_y = NULL)
  if (!is.null(trace$test_x)) {
    if (ncol(trace$test_x) != ncol(problem$x)) {
      abort_argument("test_x", sprintf("has %d columns but the model has %d inputs",
                                       ncol(trace$test_x), ncol(problem$x)))
    }
    sc <- problem$scaling %||% standardization(problem$x, problem$y, FALSE)
    out$test_x <- scale_inputs(standardize_inputs(trace$test_x, sc), problem$kernel)
    out$test_y <- standardize_targets(trace$test_y, sc)
  }
  out
}
