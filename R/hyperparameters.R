#' Settings of hyperparameter estimation
#'
#' Kernel hyperparameters and a noise variance left `NULL` in [gp_sdd()] are
#' estimated by maximising the Gaussian process log marginal likelihood:
#' first the exact one of a random subset of `subset_size` training points,
#' with analytic gradients and L-BFGS-B ([stats::optim()]) on the log scale;
#' then, from the subset's estimate, that of all the points: the exact one
#' by gradient ascent with iterative solves where `method = "auto"` projects
#' that to pay or with `method = "iterative"`, otherwise (`"auto"` beyond
#' that, or `"vecchia"`) Vecchia's approximation of it (sections "Vecchia's
#' approximation on all the data" and "Estimation on all the data").
#'
#' An evaluation costs \eqn{O(m^3)}{O(m^3)} time and \eqn{O(m^2)}{O(m^2)} memory for `m`
#' points: with R's reference BLAS, about 4 seconds on one thread (3 on two)
#' and 32 MB at `m = 2000`, an eighth of that at `m = 1000`; with OpenBLAS
#' about 0.4 seconds (see the README, section "A faster exact solver"). The
#' optimisation therefore runs in
#' stages on nested subsets, each started from the previous one's estimates:
#' first on `pilot_size` of the points until it converges (at most
#' `max_iterations` iterations), then on doublings of the pilot that are
#' well below the subset size, and last on the whole subset for at most
#' `polish_iterations` iterations. A stage with half the points of the next
#' gets four times its iterations, at an eighth of the cost each. After the
#' pilot, L-BFGS-B works on the scale of the pilot optimum's curvature. The
#' stages before the last keep the noise variance above \eqn{10^{-3}}{10^-3} times
#' the target variance: small subsets often cannot tell little noise from
#' none, and their optimum then lies at `min_noise`, in a different mode
#' from the whole subset's. An evaluation's factorisation and inverse run by
#' blocks over the fit's threads and answer Ctrl-C between blocks.
#'
#' The optimisation starts from length scales \eqn{\sqrt{d}}{sqrt(d)} times the
#' standard deviation of each input column (the median-distance heuristic:
#' typical distances between points are then about one length scale), the
#' variance of the targets as kernel variance and a tenth of it as noise
#' variance. The pilot also converges from a second start, with length
#' scales \eqn{\sqrt{d}}{sqrt(d)} times shorter and a hundredth of the target variance as
#' noise, and the later stages go on from whichever of the two optima has
#' the higher likelihood on the whole subset (the pilot's own likelihood
#' often cannot tell them apart: on 2000 points of protein, split 2, it
#' preferred by 8 nats an optimum that switches five of the nine inputs
#' off, which on the whole subset was 137 nats worse). It is confined to length scales within \eqn{10^{-3}}{10^-3} and
#' \eqn{10^{3}}{10^3} times the column's standard deviation, kernel variances
#' within \eqn{10^{-4}}{10^-4} and \eqn{10^{3}}{10^3} times the target variance, and noise
#' variances within `min_noise` and 10 times the target variance. With
#' standardised data (the default in [gp_sdd()]) these standard deviations
#' and variances are 1. The marginal likelihood can have several local
#' maxima (typically a noisy smooth fit and a nearly interpolating one); the
#' estimate is a local maximum. Estimates that end on a bound of this box
#' are flagged by `print()` and `summary()` of the fit (and listed in its
#' `estimation$at_bound`): a length scale at its upper bound, for instance,
#' means the input hardly matters.
#'
#' @section Vecchia's approximation on all the data:
#' A subset's likelihood can prefer another mode than all the data's: on
#' protein (41,157 points), split 2, the 2000-point subset's optimum has
#' noise 0.0010, the full-data ascent's 0.019 and the paper's 0.011.
#' Vecchia's approximation (Vecchia 1988) writes the likelihood of all n
#' points as a product of each point's conditional given its `neighbours`
#' nearest earlier points, in a fixed random order, in the inputs scaled by
#' the length scales; it is the likelihood GpGp maximises (Guinness 2021,
#' "Gaussian process learning via Fisher scoring of Vecchia's
#' approximation", Statistics and Computing 31:25) and, with every earlier
#' point a neighbour, the exact one. An evaluation and its analytic
#' gradient, all d + 2 derivatives at once, cost
#' \eqn{O(n m^2 (m + d))}{O(n m^2 (m + d))} for m neighbours: 0.3 s for
#' protein's 41,157 points and 0.5 s for keggdirected's 43,945 on two
#' threads (`inst/benchmarks/vecchia_likelihood.R`), after 0.27 and 1.3 s to
#' find the neighbours with k-d trees (`inst/benchmarks/vecchia_neighbours.R`);
#' the whole default estimation of 1,000,000 points in 8 dimensions took
#' five minutes, mostly in 41 evaluations (`inst/benchmarks/estimation_scale.R`). Where the noise is small the
#' approximation is coarse: at the paper's hyperparameters, on 2000 points,
#' it was 0.0008 nats a point below the exact likelihood on protein but
#' 0.41 on bike (0.10 with 60 neighbours). From the subset's estimate, L-BFGS-B runs
#' twice (each to `tolerance`, at most `max_iterations` iterations): with
#' the neighbours of the subset's length scales, then with those of the
#' first round's estimate, since the subset's can switch inputs off that
#' all the data turn on. `fit$estimation$vecchia` records the rounds'
#' evaluations and likelihoods and the seconds; `summary()` reports them.
#' The stage runs when the subset is not all the points and the kernel has
#' distances (not [tanimoto()]). On protein split 2 it took 9 s after the
#' subset's 26 s and reached noise 0.020, with length scales near the
#' paper's: test RMSE 0.521 and NLL 0.647 against the subset estimate's
#' 0.528 and 1.457 and the paper's hyperparameters' 0.522 and 0.679
#' (`inst/benchmarks/estimation.R`; on the 25 splits of pol, elevators,
#' bike, protein and keggdirected, its test NLL was below the subset
#' estimate's on every one). The approximation is not the exact likelihood, and where the
#' data are smooth and the noise small it can be far from it: on the
#' 6000-point low-noise example of `inst/benchmarks/default_fit.R` the
#' exact ascent started from Vecchia's estimate gained 1497 nats of exact
#' likelihood in 100 steps and was still climbing. The exact ascent
#' therefore starts from the subset's estimate, and `method = "auto"` uses
#' Vecchia's only where the ascent is projected to cost more than
#' `auto_seconds`.
#'
#' @section Estimation on all the data:
#' With `method = "iterative"` the subset's estimate is the start of
#' gradient ascent (Adam) on the log marginal likelihood of all n points,
#' as in Lin, Padhy, Mlodozeniec, Antoran and Hernandez-Lobato (NeurIPS
#' 2024, "Improving linear system solvers for hyperparameter optimisation in
#' iterative Gaussian processes"). Every step solves
#' \eqn{H [a, V] = [y, Z]}{H [a, V] = [y, Z]} with
#' \eqn{H = K + \lambda I}{H = K + noise I} for the targets and the `probes`
#' columns of Z, prior function draws plus noise (so Z has covariance H),
#' by the inner solver of [iterative_control()] to a relative residual,
#' started from the previous step's solutions (`warm_start`); the
#' gradient of the log
#' marginal likelihood is then estimated by
#' \eqn{a' \partial H a / 2 - \sum_q v_q' \partial H v_q / (2 s)}{a' dH a / 2 - sum_q v_q' dH v_q / (2 s)}
#' (the pathwise estimator), all its d + 2 components in one pass over the
#' pairs of points, O(n^2 (d + s)) operations and O(n (d + s)) memory. The
#' probes' random numbers stay fixed, so the estimate is a smooth function
#' of the hyperparameters; each probe's prior draw has random Fourier
#' features of its own, which makes it unbiased (shared features bias it,
#' the more so the smaller the noise). Where the noise is small against
#' the signal variance, a random-feature draw's error in the directions the
#' noise dominates is amplified by \eqn{H^{-1}}{H^-1}; the features'
#' frequencies are therefore importance-sampled, half of them from a
#' heavier-tailed density (see [predict.sddgp()]). On 500 synthetic points
#' with noise 4.2e-4, 2.7e-6 and 2.1e-7 of the signal variance, the
#' estimate's mean over 200 probe sets lay within 1.85 standard errors of
#' the exact gradient in every component, with 0.95 to 5.6 times the spread of
#' probes drawn exactly from the prior (`inst/benchmarks/pathwise_probes.R`).
#' A probe whose solution still exceeds what any exact draw could give
#' (its \eqn{v' \Lambda v}{v' noise v} above
#' \eqn{n + 10 \sqrt{2n}}{n + 10 sqrt(2n)}, which for an exact draw has
#' probability below 1e-8) is left out of the step's gradient and of the
#' fit's samples, and the fit warns (`sddgp_warning_estimation_probes`).
#' The ascent stops when the likelihood,
#' estimated along the path from the gradients, stops rising (see
#' [iterative_control()]); `fit$estimation$iterative` records the path, the
#' gradients, the likelihood's estimated gain, and the inner iterations,
#' final relative residuals and seconds of every step, and `summary()`
#' reports them. The last step's
#' solutions are the fit's starting point and its probes the fit's first
#' posterior samples (when `samples` is at most `probes`), so the samples
#' cost no further prior draws and little further solving.
#'
#' `method = "auto"` (the default) runs the exact ascent on all the data
#' when there are more than `subset_size` points and it is projected to
#' take at most `auto_seconds`; otherwise it runs the Vecchia stage. The projection is 40 steps (elevators' ascent
#' converged in 43) at the cost of the first: its inner iterations times the
#' measured cost of a product of the n x n kernel matrix with 1 + `probes`
#' columns, plus the gradient's pass over the pairs, at the rates measured
#' on the 2-core machine of `inst/benchmarks/estimation.R`. Before the first
#' step it assumes one inner iteration a step, which rules out all the
#' data above 25,000 to 31,000 points (26 to 8 inputs); after it,
#' it counts the first step's own iterations: a badly conditioned system (little noise) stops the ascent at its start,
#' and the Vecchia stage runs from the subset's estimate instead. Every step's solves and pass over the pairs grow as
#' n^2: 15 minutes for elevators' 14,940 points and 51 for pol's 13,500 on
#' two cores (before the gradient's pass was made 3.6 times faster), against
#' under a minute for the subset. The projection counts
#' work rather than reading the clock, so a seed gives the same fit on any
#' machine, load and thread count. `"subset"` always stops at the subset's
#' estimate, `"vecchia"` after the Vecchia stage, `"iterative"` always goes
#' on, until the ascent converges or
#' reaches `max_steps` (which warns, with class
#' `sddgp_warning_estimation_not_converged`).
#'
#' Inner solves stopped by `inner_iterations` before their tolerance (Lin
#' et al.'s early stopping) give biased gradients, and the fit warns with
#' the same class, naming the steps. Their error carries into the next
#' step, and where the hyperparameters move faster than a few iterations
#' catch up (little noise) it grows: on pol (13,500 points, before this
#' guard) ten CG iterations a step drove the noise to 1.6e-4 and the test
#' RMSE from 0.074 to thousands. A step whose solves end at a relative residual above
#' 10 (ten times that of no solve) stops the ascent with an
#' `sddgp_error_divergence`.
#'
#' @param method `"auto"`, `"subset"`, `"vecchia"` or `"iterative"`, see
#'   the sections "Vecchia's approximation on all the data" and "Estimation
#'   on all the data".
#' @param subset_size Number of training points whose marginal likelihood is
#'   maximised (all of them if there are fewer).
#' @param pilot_size Number of points of the first stage; at least
#'   `subset_size` optimises on the whole subset only, up to
#'   `max_iterations` iterations.
#' @param max_iterations Maximum number of L-BFGS-B iterations of the pilot,
#'   and of each round of the Vecchia stage (whose last round warns, with
#'   class `sddgp_warning_estimation_not_converged`, when it reaches them).
#' @param polish_iterations Maximum number of L-BFGS-B iterations on the
#'   whole subset (each costs one or more evaluations).
#' @param tolerance L-BFGS-B stops a stage when an iteration reduces the
#'   negative log marginal likelihood per point by less than `tolerance`
#'   (relative, when it exceeds 1 in size) times `subset_size` over the
#'   stage's number of points.
#' @param min_noise Smallest noise variance allowed, relative to the variance
#'   of the targets. The marginal likelihood of smooth data can keep rising
#'   as the noise goes to zero, towards an interpolating fit whose kernel
#'   system is so badly conditioned that iterative solvers (SDD above all)
#'   converge very slowly; the default floor of \eqn{10^{-4}}{10^-4} is the one
#'   GPyTorch uses. Give `noise` explicitly to go below it.
#' @param neighbours Neighbours of every point in Vecchia's approximation
#'   (GpGp's default, 30); 0 skips the Vecchia stage.
#' @param iterative Settings of the estimation on all the data, made by
#'   [iterative_control()].
#' @param auto_seconds The longest ascent on all the data that
#'   `method = "auto"` starts, in projected seconds on the benchmarks'
#'   machine (see the section "Estimation on all the data").
#' @return An object of class `sddgp_estimation_control`, a list of the
#'   settings.
#' @seealso [gp_sdd()], whose `estimation` argument takes these settings.
#' @examples
#' estimation_control()
#' # a faster, rougher estimate
#' estimation_control(subset_size = 1000, polish_iterations = 2)
#' # the subset and Vecchia's approximation on all the points only
#' estimation_control(method = "vecchia", neighbours = 20)
#' # all the points, with more probes
#' estimation_control(method = "iterative",
#'                    iterative = iterative_control(probes = 32))
#' @export
estimation_control <- function(method = c("auto", "subset", "vecchia", "iterative"),
                               subset_size = 2000, pilot_size = 500,
                               max_iterations = 100, polish_iterations = 5,
                               tolerance = 2.5e-6, min_noise = 1e-4,
                               neighbours = 30, iterative = iterative_control(),
                               auto_seconds = 300) {
  method <- choose_one(method, "method", c("auto", "subset", "vecchia", "iterative"))
  if (!inherits(iterative, "sddgp_iterative_control")) {
    abort_argument("iterative", "must be made by iterative_control()")
  }
  check_number(subset_size, "subset_size", lower = 10, upper = 50000,
               integer = TRUE)
  check_number(pilot_size, "pilot_size", lower = 10, upper = 50000,
               integer = TRUE)
  check_number(max_iterations, "max_iterations", lower = 1, upper = 1e5,
               integer = TRUE)
  check_number(polish_iterations, "polish_iterations", lower = 1,
               upper = 1e5, integer = TRUE)
  check_number(tolerance, "tolerance", lower = 0, upper = 1, lower_open = TRUE,
               upper_open = TRUE)
  check_number(min_noise, "min_noise", lower = 0, upper = 1, lower_open = TRUE,
               upper_open = TRUE)
  check_number(neighbours, "neighbours", lower = 0, upper = 1000, integer = TRUE)
  check_number(auto_seconds, "auto_seconds", lower = 0)
  structure(list(method = method, subset_size = as.integer(subset_size),
                 pilot_size = as.integer(pilot_size),
                 max_iterations = as.integer(max_iterations),
                 polish_iterations = as.integer(polish_iterations),
                 tolerance = tolerance, min_noise = min_noise,
                 neighbours = as.integer(neighbours),
                 iterative = iterative, auto_seconds = auto_seconds),
            class = "sddgp_estimation_control")
}

#' @export
print.sddgp_estimation_control <- function(x, ...) {
  cat("Hyperparameter estimation settings\n")
  cat(sprintf("  exact marginal likelihood on %d points (pilot %d points)\n",
              x$subset_size, x$pilot_size))
  cat(sprintf("  L-BFGS-B: at most %d pilot and %d final iterations, tolerance %s\n",
              x$max_iterations, x$polish_iterations, format(x$tolerance)))
  cat(sprintf("  noise variance at least %s\n", format(x$min_noise)))
  if (x$method != "subset" && x$neighbours > 0L) {
    cat(sprintf("  then Vecchia's approximation on all the points, %d neighbours\n",
                x$neighbours))
  }
  cat(sprintf("  method \"%s\"%s\n", x$method, if (x$method == "auto")
    sprintf(", the exact ascent on all the data if projected within %s s",
            format(x$auto_seconds)) else ""))
  if (x$method %in% c("auto", "iterative")) print(x$iterative)
  invisible(x)
}

# Maximise the exact log marginal likelihood of a random subset of (x, y)
# over the hyperparameters left NULL in `kernel` and `noise`; the given ones
# stay fixed.  x and y are the (standardised) training data, `weights` NULL
# or the observation weights (noise variance noise / weights); the subset is
# drawn with R's generator.  Returns list(kernel = the completed kernel,
# noise, estimation = list(subset_size, log_marginal_likelihood (of the
# subset, at the estimates), counts (likelihood evaluations per stage, named
# by the stage's number of points), convergence (optim's code for the pilot,
# which runs to convergence; the later stages stop after a set number of
# iterations by design), message (optim's message for every stage), seconds,
# estimated (names of the estimated hyperparameters), at_bound
# (bounds_reached()))).
estimate_hyperparameters <- function(x, y, kernel, noise, control, threads,
                                     weights = NULL) {
  start_time <- proc.time()[["elapsed"]]
  n <- nrow(x)
  d <- ncol(x)
  m <- min(n, control$subset_size)
  # A random order of the subset: every stage uses its first points, so the
  # stages' subsets are nested.
  rows <- sample.int(n, m)
  xs <- x[rows, , drop = FALSE]
  # A matrix for several outputs, whose likelihoods add up.
  ys <- if (is.matrix(y)) y[rows, , drop = FALSE] else y[rows]
  ws <- weights[rows]

  kernel <- kernel_for_dimension(kernel, d)
  d <- n_lengthscales(kernel, d)
  space <- parameter_space(xs, ys, kernel, noise, control$min_noise)
  free <- space$free
  par <- space$start[free]
  scale <- rep(1, length(free))
  sizes <- if (length(free) > 0L) stage_sizes(control$pilot_size, m) else m
  last <- length(sizes)
  counts <- stats::setNames(integer(last), sizes)
  messages <- if (length(free) > 0L) character(last) else "nothing to estimate"
  convergence <- 0L

  # The pilot converges from each of space$starts, and the likelihood of
  # the whole subset at their optima picks the one the later stages go on
  # from: the pilot's own often cannot tell a mode that switches inputs
  # off from a better one (?estimation_control).
  whole <- mll_objective(xs, ys, ws, kernel$family, space$start, free, threads)
  starts <- space$starts[, free, drop = FALSE]
  bar <- progress_estimation()
  for (s in seq_len(last)) {
    stage <- seq_len(sizes[s])
    objective <- mll_objective(xs[stage, , drop = FALSE],
                               if (is.matrix(ys)) ys[stage, , drop = FALSE] else ys[stage],
                               ws[stage],
                               kernel$family, space$start, free, threads)
    objective <- progress_stage(bar, sprintf("stage %d/%d on %d points", s, last, sizes[s]),
                                objective)
    if (length(free) > 0L) {
      # Smaller stages cost (m / size)^3 less per evaluation: they get
      # (m / size)^2 times the final stage's iterations, and a looser
      # tolerance since their optimum is only a starting point.
      maxit <- if (s == 1L) control$max_iterations else
        ceiling(control$polish_iterations * (m / sizes[s])^2)
      lower <- if (s < last) space$stage_lower else space$lower
      run <- function(from) {
        stats::optim(from, objective$fn, objective$gr, method = "L-BFGS-B",
                     lower = lower[free], upper = space$upper[free],
                     control = list(maxit = maxit, parscale = scale,
                                    factr = control$tolerance * m / sizes[s] /
                                      .Machine$double.eps))
      }
      if (s == 1L) {
        opts <- lapply(seq_len(nrow(starts)), function(i) run(starts[i, ]))
        # With one stage the pilot is the whole subset: optim's values are
        # already its likelihood.
        score <- function(o) if (last == 1L) o$value else whole$fn(o$par)
        chosen <- if (length(opts) == 1L) 1L else which.min(vapply(opts, score, numeric(1)))
        opt <- opts[[chosen]]
      } else {
        opt <- run(par)
      }
      par <- opt$par
      messages[s] <- sprintf("%d points: %s", sizes[s], stage_message(opt))
      if (s == 1L) {
        if (nrow(starts) > 1L) {
          messages[s] <- sprintf("%s (start %d of %d, chosen by the likelihood of all %d points)",
                                 messages[s], chosen, nrow(starts), m)
        }
        convergence <- opt$convergence
        if (last > 1L) scale <- curvature_scale(objective, par)
      }
    }
    counts[s] <- objective$count()
  }
  value <- objective$fn(par) # cached: the final stage ended here
  counts[last] <- objective$count() + whole$count()

  estimated <- c("lengthscale", "variance", "noise")[
    c(is.null(kernel$lengthscale) && d > 0L, is.null(kernel$variance), is.null(noise))]
  theta <- space$start
  theta[free] <- par
  subset_seconds <- proc.time()[["elapsed"]] - start_time
  method <- estimation_method(control, n, d, length(free), NCOL(y))
  vecchia <- iterative <- NULL
  box <- space
  if (method != "subset") {
    box <- parameter_space(x, y, kernel, noise, control$min_noise)
    theta[free] <- pmin(pmax(theta[free], box$lower[free]), box$upper[free])
  }
  if (method == "iterative") {
    iterative <- estimate_iterative(
      x, y, kernel$family, box, theta, control$iterative, threads, weights,
      auto_seconds = if (control$method == "auto") control$auto_seconds else Inf)
    theta <- iterative$theta
    # Too costly for "auto": Vecchia's approximation instead.
    if (iterative$record$stopped == "over budget") method <- "vecchia"
  }
  # Vecchia's neighbours need distances, and a subset of all the points
  # leaves nothing to approximate.
  if (method == "vecchia") {
    if (n > m && !is_tanimoto(kernel) && control$neighbours > 0L) {
      vecchia <- estimate_vecchia(x, y, weights, kernel$family, theta, box, control, threads,
                                  bar)
      theta <- vecchia$theta
    } else {
      method <- "subset"
    }
  }
  # Given values are kept as they are, not passed through exp(log()).
  if (is.null(kernel$lengthscale) && d > 0L) kernel$lengthscale <- exp(theta[seq_len(d)])
  if (is.null(kernel$variance)) kernel$variance <- exp(theta[[d + 1L]])
  if (is.null(noise)) noise <- exp(theta[[d + 2L]])
  list(kernel = kernel,
       noise = noise,
       estimation = list(method = method,
                         subset_size = m,
                         log_marginal_likelihood = -m * value,
                         counts = counts,
                         convergence = convergence,
                         message = paste(messages, collapse = "; "),
                         subset_seconds = subset_seconds,
                         vecchia = vecchia$record,
                         iterative = iterative$record,
                         seconds = proc.time()[["elapsed"]] - start_time,
                         estimated = estimated,
                         at_bound = bounds_reached(theta, box)),
       # The ascent's solutions, unless Vecchia's stage moved on from them.
       solution = if (is.null(vecchia)) iterative$solution)
}

# "subset", "vecchia" or "iterative", for n points in d dimensions with
# `nfree` free hyperparameters and `outputs` columns of targets: the last
# stage to try.  "auto" tries the exact ascent on all the data unless even
# steps of one inner iteration are projected to take longer than its budget
# (estimate_iterative() checks again after the first step).
estimation_method <- function(control, n, d, nfree, outputs = 1L) {
  if (nfree == 0L || control$method == "subset") return("subset")
  if (outputs > 1L) {
    if (control$method != "iterative") return("vecchia")
    abort_argument("estimation", paste(
      "has method = \"iterative\", which estimates from one column of targets:",
      "use method = \"vecchia\" or \"subset\" for several"))
  }
  if (control$method != "auto") return(control$method)
  if (n <= control$subset_size) return("subset")
  cheapest <- projected_steps *
    projected_step_seconds(n, d, control$iterative$probes, passes = 1)
  if (cheapest <= control$auto_seconds) "iterative" else "vecchia"
}

# For each of the d + 2 log hyperparameters, "lower" or "upper" where the
# estimate lies on that bound of the search box (L-BFGS-B stops exactly on
# it), else "" (given ones too): print() flags them.
bounds_reached <- function(theta, space) {
  at <- character(length(theta))
  at[abs(theta - space$lower) < 1e-8] <- "lower"
  at[abs(theta - space$upper) < 1e-8] <- "upper"
  at[setdiff(seq_along(at), space$free)] <- ""
  at
}

# Subset sizes of the stages: the pilot, doublings of it that are well below
# the subset size, and the subset.
stage_sizes <- function(pilot_size, m) {
  if (pilot_size >= m) return(m)
  sizes <- pilot_size * 2^(0:30)
  as.integer(c(pilot_size, sizes[sizes > pilot_size & sizes <= m / 1.5], m))
}

# The optimisation runs after the pilot on the scale of the pilot optimum's
# curvature (optim's parscale), so L-BFGS-B's first steps on the costly
# stages are already about the right length in every direction.  The
# Hessian's diagonal comes from forward differences of the gradient; flat
# directions (parameters at a bound, irrelevant inputs) are capped at 10.
curvature_scale <- function(objective, par) {
  h <- 1e-4
  g <- objective$gr(par)
  curvature <- vapply(seq_along(par), function(i) {
    (objective$gr(replace(par, i, par[i] + h))[i] - g[i]) / h
  }, numeric(1))
  pmin(1 / sqrt(abs(curvature)), 10)
}

# Log hyperparameters theta = (log lengthscales, log variance, log noise):
# starting values (the given values for fixed ones), box bounds and the
# indices of the free ones.  Starting values and bounds follow the scale of
# the data, see ?estimation_control.
parameter_space <- function(x, y, kernel, noise, min_noise) {
  d <- n_lengthscales(kernel, ncol(x))
  # Spreads without overflow or underflow (unstandardised data may lie
  # near 1e+-300), and the targets' variance on the log scale.
  sd_x <- if (d > 0L) col_moments(x)$sd else numeric(0)
  sd_x[sd_x <= 0] <- 1
  # Several outputs: their mean variance.
  sd_y <- sqrt(mean(col_moments(y)$sd^2))
  log_var_y <- if (sd_y > 0) 2 * log(sd_y) else 0
  start <- c(log(sqrt(d) * sd_x), log_var_y + log(c(1, 0.1)))
  # The pilot's second start: length scales sqrt(d) times shorter and a
  # tenth of the noise, the side of the likelihood where every input
  # explains part of the signal.
  second <- c(log(sd_x), log_var_y + log(c(1, 0.01)))
  lower <- c(log(1e-3 * sd_x), log_var_y + log(c(1e-4, min_noise)))
  upper <- c(log(1e3 * sd_x), log_var_y + log(c(1e3, 10)))
  fixed <- c(if (!is.null(kernel$lengthscale)) seq_len(d),
             if (!is.null(kernel$variance)) d + 1L,
             if (!is.null(noise)) d + 2L)
  free <- setdiff(seq_len(d + 2L), fixed)
  # Hyperparameters are passed to the likelihood as doubles.
  unrepresentable <- free[upper[free] > log(.Machine$double.xmax) |
                          lower[free] < log(.Machine$double.xmin)]
  if (length(unrepresentable)) {
    abort_argument(if (unrepresentable[1L] <= d) "x" else "y", paste(
      "has a spread whose estimated length scales or (squared) variances would",
      "overflow or underflow double precision; use `standardize = TRUE` or give",
      "the kernel's hyperparameters and `noise`"))
  }
  start[fixed] <- second[fixed] <- log(as.numeric(c(kernel$lengthscale, kernel$variance, noise)))
  # Small subsets often cannot tell little noise from none, and their
  # optimum then sits at min_noise, far from the subset's; the stages before
  # the last keep the noise at least 1e-3 times the target variance.
  stage_lower <- lower
  stage_lower[d + 2L] <- max(lower[d + 2L], log_var_y + log(1e-3))
  list(start = start, starts = unique(rbind(start, second, deparse.level = 0)),
       lower = lower, upper = upper, stage_lower = stage_lower, free = free)
}

# The negative log marginal likelihood per point and its gradient as
# functions of the free log hyperparameters, for optim().  Per point, values
# and tolerances mean the same for the pilot and the whole subset.  optim()
# asks for the value and the gradient at the same point in separate calls;
# the last evaluation is cached so each point costs one evaluation.
# `likelihood` evaluates it: the exact one (O(m^3)), or Vecchia's
# (vecchia_likelihood()).
mll_objective <- function(x, y, weights, family, theta, free, threads,
                          likelihood = exact_likelihood) {
  d <- length(theta) - 2L # the length scales
  m <- nrow(x)
  last_par <- NULL
  last <- NULL
  count <- 0L
  evaluate <- function(par) {
    if (!identical(par, last_par)) {
      theta[free] <- par
      kernel <- theta_kernel(family, theta)
      # Several outputs (columns of y): the sum of their likelihoods.
      res <- list(value = 0, gradient = 0)
      for (j in seq_len(NCOL(y))) {
        one <- likelihood(scale_inputs(x, kernel), as.matrix(y)[, j], kernel_spec(kernel),
                          exp(theta[[d + 2L]]), weights, threads)
        if (one$interrupted) {
          signal_interrupt("Hyperparameter estimation was interrupted by the user")
        }
        res <- list(value = res$value + one$value, gradient = res$gradient + one$gradient)
      }
      count <<- count + 1L
      last_par <<- par
      # A matrix that is numerically not positive definite (only possible
      # near the noise bound) is treated as a very poor point, which sends
      # the line search back.
      last <<- if (is.na(res$value)) list(value = 1e10, gradient = 0 * par) else
        list(value = -res$value / m, gradient = -res$gradient[free] / m)
    }
    last
  }
  list(fn = function(par) evaluate(par)$value,
       gr = function(par) evaluate(par)$gradient,
       count = function() count)
}

exact_likelihood <- function(x, y, spec, noise, weights, threads) {
  .Call(C_mll, x, y, spec, noise, weights, TRUE, threads)
}

# The kernel of `family` at log hyperparameters theta = (log lengthscales,
# log variance, log noise).
theta_kernel <- function(family, theta) {
  d <- length(theta) - 2L
  list(family = family, lengthscale = exp(theta[seq_len(d)]),
       variance = exp(theta[[d + 1L]]))
}

stage_message <- function(opt) {
  if (opt$convergence == 1L) "iteration limit reached" else
    if (is.null(opt$message)) "converged" else tolower(opt$message)
}
