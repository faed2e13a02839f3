# Hyperparameter estimation on all the data by Vecchia's approximation of
# the log marginal likelihood (estimation_control(method = "vecchia"), and
# "auto" where the exact ascent costs too much): every point's response
# given its `neighbours` nearest earlier points in a fixed random order
# (Vecchia 1988), the likelihood that GpGp maximises (Guinness 2021,
# "Gaussian process learning via Fisher scoring of Vecchia's
# approximation", Statistics and Computing 31:25).  O(n m^2 (m + d)) an evaluation with its gradient (src/vecchia.c),
# against O(n^2) a step of the exact ascent.

# Rounds of L-BFGS-B, each with the neighbours found at its start: the
# first round's are those of the subset's length scales, which may switch
# inputs off that all the data turn on (GpGp finds them again too).
vecchia_rounds <- 2L

# Maximise Vecchia's log likelihood of all n points (x, y standardised,
# weights NULL or the observation weights) over the free log
# hyperparameters of `space`, from theta, with the estimation's progress
# `bar` (progress_estimation(), or NULL).  Returns list(theta, record =
# list(neighbours, rounds, evaluations (per round), log_likelihood (at the
# start and at the end of each round, all n points), message, seconds)).
estimate_vecchia <- function(x, y, weights, family, theta, space, control, threads,
                             bar = NULL) {
  start_time <- proc.time()[["elapsed"]]
  # One governed run over the whole stage: an evaluation is too short for
  # the thread governor to judge a team size on its own.
  .Call(C_threads_stage, threads)
  on.exit(.Call(C_threads_stage, 0L), add = TRUE)
  free <- space$free
  log_likelihood <- evaluations <- numeric(0)
  messages <- character(0)
  for (round in seq_len(vecchia_rounds)) {
    neighbours <- vecchia_neighbours(x, theta_kernel(family, theta),
                                     control$neighbours, threads)
    objective <- mll_objective(x, y, weights, family, theta, free, threads,
                               likelihood = vecchia_likelihood(neighbours))
    objective <- progress_stage(bar, sprintf(
      "Vecchia's likelihood of all %d points, round %d/%d", nrow(x), round, vecchia_rounds),
      objective)
    if (round == 1L) log_likelihood <- -nrow(x) * objective$fn(theta[free])
    opt <- stats::optim(theta[free], objective$fn, objective$gr, method = "L-BFGS-B",
                        lower = space$lower[free], upper = space$upper[free],
                        control = list(maxit = control$max_iterations,
                                       factr = control$tolerance / .Machine$double.eps))
    theta[free] <- opt$par
    log_likelihood <- c(log_likelihood, -nrow(x) * opt$value)
    evaluations <- c(evaluations, objective$count())
    messages <- c(messages, if (opt$convergence == 0L) "converged" else stage_message(opt))
  }
  # The last round's optimum is the estimate: one cut short says so.
  if (opt$convergence == 1L) {
    sddgp_warn(sprintf(paste(
      "Hyperparameter estimation by Vecchia's likelihood of all %d points stopped at",
      "its limit of %d L-BFGS-B iterations before converging: raise `max_iterations`",
      "in estimation_control()."), nrow(x), control$max_iterations),
      class = c("sddgp_warning_estimation_not_converged", "sddgp_warning_not_converged"))
  }
  list(theta = theta,
       record = list(neighbours = control$neighbours, rounds = vecchia_rounds,
                     evaluations = evaluations, log_likelihood = log_likelihood,
                     message = paste(messages, collapse = "; "),
                     seconds = proc.time()[["elapsed"]] - start_time))
}

# Every point's m nearest earlier points in Vecchia's order, in the kernel's
# length scales: an m x n matrix, as C_vecchia_factor() gives them.
vecchia_neighbours <- function(x, kernel, m, threads) {
  found <- .Call(C_vecchia_neighbours, scale_inputs(x, kernel), as.integer(m), threads)
  if (found$interrupted) {
    signal_interrupt("Hyperparameter estimation was interrupted by the user")
  }
  found$neighbours
}

# The likelihood mll_objective() evaluates: Vecchia's, with these neighbours.
vecchia_likelihood <- function(neighbours) {
  function(x, y, spec, noise, weights, threads) {
    .Call(C_mll_vecchia, x, y, spec, noise, weights, neighbours, threads)
  }
}

# What summary() says of the stage, of n points.
vecchia_summary <- function(record, n) {
  ll <- record$log_likelihood
  strwrap(sprintf(paste(
    "then on all %d points by Vecchia's approximation (%d neighbours): log",
    "likelihood %+.1f in %d rounds of L-BFGS-B (%s evaluations; %s), %.1f s"),
    n, record$neighbours, ll[length(ll)] - ll[1L], record$rounds,
    paste(record$evaluations, collapse = " + "), record$message, record$seconds),
    indent = 2, exdent = 4)
}
