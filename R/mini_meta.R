#' Mini-META: GP-UCB and GP-EI with few switches
#'
#' Maximises a noisy function by Bayesian optimisation with the Mini-META
#' rule of Calandriello et al. (2022): the chosen point is evaluated not once
#' but \eqn{B_h}{B_h} times in a row before the next one is chosen, so the
#' acquisition function is maximised (and the Gaussian process updated) only
#' \eqn{H}{H} times for a budget of \eqn{T}{T} evaluations. After \eqn{h}{h} switches
#' the GP is kept compressed on the \eqn{H}{H} unique points \eqn{X_H}{X_H}: their
#' counts \eqn{B_h}{B_h} and mean observations \eqn{\bar y_h}{y_bar_h} carry all the data
#' say about \eqn{f}{f}, so the posterior costs \eqn{O(H^3)}{O(H^3)} instead of
#' \eqn{O(T^3)}{O(T^3)}.
#'
#' @section The loop: After an initial design of `initial` points drawn
#'   uniformly from the domain (each evaluated once), every step
#'   1. computes the posterior mean \eqn{\mu}{mu} and variance \eqn{\sigma^2}{sigma^2} of
#'      the compressed GP (below) on the domain;
#'   2. chooses \eqn{x}{x} maximising the acquisition function, Mini-GP-UCB
#'      \eqn{\mu(x) + \beta_h \sigma(x)}{mu(x) + beta_h sigma(x)} or Mini-GP-EI
#'      \eqn{\beta_h\sigma(x)[(z/\beta_h)\Phi(z/\beta_h) + \phi(z/\beta_h)]}{beta_h sigma(x)[(z/beta_h)Phi(z/beta_h) + phi(z/beta_h)]}
#'      with \eqn{z = (\mu(x) - \max_{x'} \mu(x'))/\sigma(x)}{z = (mu(x) - max_(x') mu(x'))/sigma(x)}, the
#'      expected improvement over the largest posterior mean with the
#'      standard deviation inflated by \eqn{\beta_h}{beta_h};
#'   3. evaluates `objective` \eqn{B = \max(1, \lfloor (C^2 - 1)
#'      \lambda/\sigma^2(x) \rfloor)}{B = max(1, floor((C^2 - 1) noise /
#'      sigma^2(x)))} times at \eqn{x}{x} (each a separate, noisy call; the
#'      last block is cut to what is left of `budget`). After \eqn{B}{B}
#'      repeats the posterior standard deviation anywhere falls by at most
#'      the factor \eqn{C}{C}, its fall at \eqn{x}{x} itself being the largest,
#'      which is what keeps the regret within a factor \eqn{C}{C} of the
#'      algorithm that updates after every evaluation. With `mini = FALSE`,
#'      \eqn{B = 1}{B = 1} always: plain GP-UCB or GP-EI.
#'
#' @inheritSection bo_thompson Random numbers
#' @section The compressed posterior: With \eqn{W = \mathrm{diag}(B_h)}{W = diag(B_h)}
#'   and prior mean \eqn{m_0}{m_0},
#'   \deqn{\mu(x) = m_0 + k(x, X_H)(K_H + \lambda W^{-1})^{-1}(\bar y_H - m_0),}{mu(x) = m_0 + k(x, X_H)(K_H + lambda W^(-1))^(-1)(y_bar_H - m_0),}
#'   \deqn{\sigma^2(x) = k(x, x) - k(x, X_H)(K_H + \lambda W^{-1})^{-1} k(X_H, x),}{sigma^2(x) = k(x, x) - k(x, X_H)(K_H + lambda W^(-1))^(-1) k(X_H, x),}
#'   a GP on the \eqn{H}{H} unique points whose noise variance
#'   \eqn{\lambda / B_h}{lambda / B_h} is that of a mean of \eqn{B_h}{B_h} observations. This
#'   equals the posterior given every repeated observation exactly. (The
#'   poster of the paper writes the sums of the observations where their
#'   means belong.) While \eqn{H \le}{H <=} `threshold`, \eqn{\mu}{mu} and
#'   \eqn{\sigma^2}{sigma^2} come from one Cholesky factorisation (`solver =
#'   "cholesky"`, or `"auto"`); the variance on \eqn{m}{m} points costs
#'   \eqn{O(m H^2)}{O(m H^2)}. Beyond it, [gp_sdd()] with `weights = B_h` fits the
#'   mean by stochastic dual descent and the variances on the domain are the
#'   mean squares of `samples` pathwise posterior samples, with relative
#'   error about \eqn{\sqrt{2/S}}{sqrt(2 / samples)}: an approximation that
#'   falls outside the regret analysis. \eqn{B}{B} (and the information gain
#'   behind `beta = "theory"`) then use the variance at the chosen point from
#'   one extra SDD solve with right-hand side \eqn{k(X_H, x)}{k(X_H, x)}, as accurate as
#'   the solver's convergence.
#'
#' @section Exploration parameter \eqn{\beta_h}{beta_h}: A number is used as it is
#'   at every step. `beta = "theory"` uses a reconstruction of the
#'   confidence width of the paper's analysis (in the style of BBKB,
#'   Calandriello et al. 2020; the poster only says that \eqn{\beta_h}{beta_h} grows
#'   with the information gain):
#'   \deqn{\beta_h = \sqrt{2\hat\gamma_h + 2\log(1/\delta)} + F,}{beta_h = sqrt(2gamma_hat_h + 2 log(1/delta)) + F,}
#'   with \eqn{F}{F} = `rkhs_norm`, a bound on the RKHS norm of \eqn{f - m_0}{f - m_0},
#'   and \eqn{\hat\gamma_h = \frac12 \log\det(I + \lambda^{-1} W^{1/2}
#'   K_H W^{1/2})}{gamma_hat_h = 1/2 log det(I + lambda^(-1) W^(1/2) K_H W^(1/2))}, the information gain of all observations so far (equal
#'   to \eqn{\frac12\log\det(I + \lambda^{-1}K_T)}{1/2 log det(I + lambda^(-1)K_T)} over the \eqn{T}{T} repeated
#'   rows). It is updated after each block by \eqn{\frac12 \log(1 + B
#'   \sigma^2(x)/\lambda)}{1/2 log(1 + B sigma^2(x)/lambda)}. The sub-Gaussian scale of the noise is taken to
#'   be its standard deviation \eqn{\sqrt\lambda}{sqrt(lambda)}, which cancels. Theoretical
#'   widths are conservative (they explore much); practice often uses a
#'   constant between 1 and 3.
#'
#' @section Domain: Either a finite set `candidates` (the acquisition is
#'   maximised exactly over its rows), or the box \[`lower`, `upper`\]: there
#'   the acquisition is evaluated on 1000 uniform random points and on the
#'   points evaluated so far; when a new point wins, it is refined by
#'   L-BFGS-B ([stats::optim()], numerical gradients, at most 50
#'   iterations) inside the box, and when an evaluated point wins it is
#'   repeated exactly. The EI incumbent is the largest posterior mean over
#'   the candidates, or over those random and evaluated points.
#'
#' @section Hyperparameters: The kernel and the noise variance are kept
#'   fixed during the loop. Known noise is natural with repeated
#'   evaluations; anything left `NULL` (kernel length scales or variance,
#'   `noise`) is estimated once, by maximum marginal likelihood on the
#'   initial data (the initial design plus `x`, `y`) after standardising
#'   them as [gp_sdd()] does, and reported in the original units. The prior
#'   mean \eqn{m_0}{m_0} is the mean of the initial observations. Kernel length
#'   scales and variance, and `noise`, are in the units of the domain and of
#'   the objective's values.
#'
#' @param objective The function to maximise: called with one point (a
#'   numeric vector), it must return a single finite number, a noisy
#'   observation of \eqn{f}{f} at that point.
#' @param candidates A finite domain: a numeric matrix (or data frame) with
#'   one candidate point per row. Give either `candidates` or `lower` and
#'   `upper`.
#' @param lower,upper A box domain: numeric vectors of the lower and upper
#'   bounds of each coordinate.
#' @param budget Total number of evaluations of `objective`, the initial
#'   design included; respected exactly.
#' @param acquisition `"ucb"` (Mini-GP-UCB) or `"ei"` (Mini-GP-EI).
#' @param C The switching constant, greater than 1: a larger `C` means
#'   longer blocks and fewer switches (about \eqn{\gamma_T(1 + 1/(C^2 -
#'   1))}{gamma_T(1 + 1/(C^2 - 1))} of them), and a regret bound larger by the factor `C`. The
#'   paper leaves its value open; the default 1.5 allows \eqn{1.25\lambda /
#'   \sigma^2(x)}{1.25 lambda / sigma^2(x)} repeats.
#' @param beta The exploration parameter: a positive number, or `"theory"`
#'   (see the section Exploration parameter).
#' @param delta,rkhs_norm Confidence level \eqn{\delta}{delta} in (0, 1) and the
#'   RKHS norm bound \eqn{F}{F} of `beta = "theory"`.
#' @param kernel A kernel object ([matern()], [squared_exponential()]) or one
#'   of the names `"matern12"`, `"matern32"`, `"matern52"`, `"se"`; length
#'   scales and variance left `NULL` are estimated (see the section
#'   Hyperparameters).
#' @param noise The noise variance \eqn{\lambda}{lambda} of an evaluation, or `NULL`
#'   to estimate it.
#' @param initial Number of initial points, drawn uniformly from the domain
#'   (for `candidates`, distinct rows) and evaluated once each; counts
#'   towards `budget`. `NULL`: 10 (at most `budget - 1`), or none when `x`
#'   is given.
#' @param x,y Optional earlier evaluations: a matrix of points (one per
#'   row) and their observed values. They join the initial data but are not
#'   counted in `budget` nor returned in the result's `x` and `y`.
#' @param mini `TRUE` for Mini-META's repeated evaluations; `FALSE` for
#'   plain GP-UCB or GP-EI (one evaluation per step), on the same
#'   machinery.
#' @param solver How the compressed posterior is computed: `"auto"` (exact
#'   while there are at most `threshold` unique points, SDD beyond),
#'   `"cholesky"` (always exact) or `"sdd"` (always SDD; needs at least 2
#'   unique points).
#' @param threshold Largest number of unique points for which `solver =
#'   "auto"` is exact.
#' @param samples Number of posterior samples behind the SDD variances.
#' @param control SDD settings, [sdd_control()]; `NULL` uses its defaults.
#' @param threads Number of threads; `NULL` uses [sddgp_threads()].
#' @param parallel `NULL` (every evaluation of `objective` in this
#'   process), or [sddgp_future()] to evaluate each as a future on the
#'   current [future::plan()] (pays when an evaluation takes seconds).
#'   Each evaluation has its own random-number stream (section Random
#'   numbers), so the results are the same either way. Default
#'   `getOption("sddgp.parallel")`.
#' @return An object of class `c("sddgp_mini_meta", "sddgp_bo")`, a list
#'   with
#'   * `x`, `y`: every evaluation the call made (initial design first,
#'     repeats as separate rows), in order;
#'   * `history`: a data frame with one row per step (switch): `step`,
#'     `evaluations` (cumulative, initial design included), `best` (the
#'     largest mean observation \eqn{\bar y_h}{y_bar_h} over the points evaluated so
#'     far, `x`, `y` included: repeats are averaged before comparing),
#'     `seconds` (the step's wall time, evaluations included), `repeats`
#'     (\eqn{B}{B}), `sd` (\eqn{\sigma(x)}{sigma(x)} at the chosen point before its
#'     evaluations), `beta` (\eqn{\beta_h}{beta_h}), `unique` (\eqn{H}{H} after the
#'     step) and `solver` (`"cholesky"` or `"sdd"`);
#'   * `compressed`: the compressed data, a list of the unique points `x`
#'     (one per row), their `counts` and `means`;
#'   * `recommended`: the evaluated point with the largest posterior mean at
#'     the end, a list of `x` and `mean`;
#'   * `best`: the evaluated point with the largest mean observation, a list
#'     of `label`, `value` and `x` (what `print()` reports as the best value;
#'     the largest single noisy `y` says little);
#'   * `kernel`, `noise`, `prior_mean`: the model, in the original units;
#'     `estimation`: what hyperparameter estimation reported, or `NULL`;
#'   * `acquisition`, `C`, `mini`, `call`, `method` (`"mini_meta"`).
#'
#'   `print()` and [plot()][plot.sddgp_bo()] show it.
#' @references Calandriello, D., Carratino, L., Lazaric, A., Valko, M. and
#'   Rosasco, L. (2022). Scaling Gaussian process optimization by evaluating
#'   a few unique candidates multiple times. *ICML*, PMLR 162, 2523--2541.
#'
#'   Calandriello, D., Carratino, L., Lazaric, A., Valko, M. and Rosasco, L.
#'   (2020). Near-linear time Gaussian process optimization with adaptive
#'   batching and resparsification. *ICML*.
#'
#'   Srinivas, N., Krause, A., Kakade, S. and Seeger, M. (2010). Gaussian
#'   process optimization in the bandit setting: no regret and experimental
#'   design. *ICML*.
#' @examples
#' set.seed(1)
#' grid <- matrix(seq(0, 1, length.out = 201))
#' f <- function(x) sin(6 * x[1]) + x[1]
#' noisy <- function(x) f(x) + rnorm(1, sd = 0.5)
#' res <- mini_meta(noisy, candidates = grid, budget = 200, beta = 2,
#'                  kernel = matern(5/2, lengthscale = 0.2, variance = 1),
#'                  noise = 0.25, threads = 1)
#' res
#' tail(res$history)
#' # plain GP-UCB on the same budget switches at every evaluation
#' plain <- mini_meta(noisy, candidates = grid, budget = 200, beta = 2,
#'                    kernel = res$kernel, noise = 0.25, mini = FALSE,
#'                    threads = 1)
#' c(mini = nrow(res$history), plain = nrow(plain$history))
#' @export
mini_meta <- function(objective, candidates = NULL, lower = NULL, upper = NULL,
                      budget, acquisition = c("ucb", "ei"), C = 1.5,
                      beta = "theory", delta = 0.05, rkhs_norm = 1,
                      kernel = "matern52", noise = NULL,
                      initial = NULL, x = NULL, y = NULL,
                      mini = TRUE, solver = c("auto", "cholesky", "sdd"),
                      threshold = 2000, samples = 64, control = NULL,
                      threads = NULL, parallel = getOption("sddgp.parallel")) {
  call <- match.call()
  check_objective(objective)
  domain <- bo_domain(candidates, lower, upper)
  if (missing(budget)) abort_argument("budget", "is missing: give the number of evaluations")
  check_number(budget, "budget", lower = 1, upper = 1e7, integer = TRUE)
  acquisition <- choose_one(acquisition, "acquisition", c("ucb", "ei"))
  check_number(C, "C", lower = 1, lower_open = TRUE)
  if (!identical(beta, "theory")) {
    if (!is.numeric(beta)) abort_argument("beta", "must be \"theory\" or a positive number")
    check_number(beta, "beta", lower = 0, lower_open = TRUE)
  }
  check_number(delta, "delta", lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  check_number(rkhs_norm, "rkhs_norm", lower = 0)
  kernel <- kernel_for_dimension(check_box_kernel(as_kernel(kernel), "mini_meta"), domain$d)
  if (!is.null(noise)) check_number(noise, "noise", lower = 0, lower_open = TRUE)
  earlier <- check_earlier_data(x, y, domain$d)
  initial_given <- !is.null(initial)
  if (!initial_given) initial <- if (is.null(x)) min(10, budget - 1) else 0
  check_number(initial, "initial", lower = 0, upper = budget - 1, integer = TRUE)
  if (!is.null(domain$candidates) && initial > nrow(domain$candidates)) {
    # Blame what the user gave: the default `initial` is not theirs.
    if (initial_given) {
      abort_argument("initial", sprintf("is %d but there are only %d candidates",
                                        as.integer(initial), nrow(domain$candidates)))
    }
    abort_argument("candidates", sprintf(paste(
      "has %d rows, too few for the default `initial` of %d distinct initial",
      "points: give more candidates, or `initial` of at most %d"),
      nrow(domain$candidates), as.integer(initial), nrow(domain$candidates)))
  }
  estimate <- !kernel_is_complete(kernel) || is.null(noise)
  needed <- if (estimate) 2L else 1L
  if (initial + nrow(earlier$x) < needed) {
    abort_argument("initial", sprintf(
      "must give at least %d initial point%s (with `x`)%s", needed,
      if (needed == 1L) "" else "s", if (estimate) " to estimate the hyperparameters" else ""))
  }
  check_flag(mini, "mini")
  solver <- choose_one(solver, "solver", c("auto", "cholesky", "sdd"))
  check_number(threshold, "threshold", lower = 1, integer = TRUE)
  check_number(samples, "samples", lower = 2, upper = 1e5, integer = TRUE)
  if (is.null(control)) control <- sdd_control()
  if (!inherits(control, "sddgp_control_sdd")) abort_argument("control", "must be made by sdd_control()")
  threads <- sddgp_threads(threads)
  parallel <- check_parallel(parallel, mpi = FALSE)

  evaluated_x <- matrix(0, budget, domain$d)
  evaluated_y <- numeric(budget)
  used <- 0L
  if (initial > 0L) {
    x0 <- if (is.null(domain$candidates)) runif_box(initial, domain$box) else
      domain$candidates[sample.int(nrow(domain$candidates), initial), , drop = FALSE]
    evaluated_x[seq_len(initial), ] <- x0
  }
  streams <- task_streams()
  if (initial > 0L) {
    evaluated_y[seq_len(initial)] <- evaluate_objective(objective, x0, streams, parallel)
    used <- as.integer(initial)
  }
  data_x <- rbind(earlier$x, evaluated_x[seq_len(used), , drop = FALSE])
  data_y <- c(earlier$y, evaluated_y[seq_len(used)])
  model <- complete_hyperparameters(kernel, noise, data_x, data_y, estimate, threads)
  kernel <- model$kernel
  noise <- model$noise
  prior_mean <- mean(data_y)
  state <- add_observations(new_compressed(domain$d), data_x, data_y)
  if (solver == "sdd" && length(state$counts) < 2L) {
    abort_argument("solver", "is \"sdd\", which needs at least 2 distinct initial points")
  }
  gamma <- if (identical(beta, "theory")) {
    information_gain(compressed_cholesky(state, kernel, noise, threads), state, noise)
  }

  steps <- list()
  while (used < budget) {
    start <- proc.time()[["elapsed"]]
    method <- if (solver == "auto") {
      if (length(state$counts) <= threshold) "cholesky" else "sdd"
    } else solver
    posterior <- compressed_posterior(state, kernel, noise, prior_mean, method,
                                      samples, control, threads)
    beta_h <- if (is.null(gamma)) beta else
      sqrt(2 * gamma + 2 * log(1 / delta)) + rkhs_norm
    chosen <- if (is.null(domain$candidates)) {
      propose_in_box(posterior, state, domain$box, acquisition, beta_h)
    } else {
      propose_candidate(posterior, domain$candidates, acquisition, beta_h)
    }
    variance <- posterior$variance(chosen)
    repeats <- if (mini) switch_after(C, noise, variance) else 1
    repeats <- as.integer(min(repeats, budget - used))
    block <- matrix(chosen, repeats, domain$d, byrow = TRUE)
    values <- evaluate_objective(objective, block, streams, parallel)
    evaluated_x[used + seq_len(repeats), ] <- block
    evaluated_y[used + seq_len(repeats)] <- values
    used <- used + repeats
    state <- add_observations(state, block, values)
    if (!is.null(gamma)) gamma <- gamma + 0.5 * log1p(repeats * variance / noise)
    steps[[length(steps) + 1L]] <- data.frame(
      step = length(steps) + 1L, evaluations = used,
      best = max(state$sums / state$counts),
      seconds = proc.time()[["elapsed"]] - start, repeats = repeats,
      sd = sqrt(variance), beta = beta_h, unique = length(state$counts),
      solver = method)
  }

  history <- do.call(rbind, steps)
  means <- state$sums / state$counts
  final <- compressed_posterior(state, kernel, noise, prior_mean, history$solver[nrow(history)],
                                samples, control, threads)
  fitted <- final$at(state$x)$mean
  top <- which.max(fitted)
  colnames(evaluated_x) <- domain$names
  new_bo_result("mini_meta", x = evaluated_x, y = evaluated_y, history = history,
                call = call,
                compressed = list(x = state$x, counts = state$counts, means = means),
                recommended = list(x = state$x[top, ], mean = fitted[top]),
                best = list(label = "best mean of a point's evaluations",
                            value = max(means), x = state$x[which.max(means), ]),
                kernel = kernel, noise = noise, prior_mean = prior_mean,
                estimation = model$estimation, acquisition = acquisition, C = C,
                mini = mini)
}

#' @export
print.sddgp_mini_meta <- function(x, digits = 4, ...) {
  NextMethod()
  cat(sprintf("  %s, %d unique points (%s)\n",
              c(ucb = "GP-UCB", ei = "GP-EI")[[x$acquisition]],
              length(x$compressed$counts),
              if (x$mini) sprintf("Mini-META, C = %s", format(x$C, digits = digits)) else
                "one evaluation per step"))
  cat(sprintf("  recommended (largest posterior mean): %s at x = (%s)\n",
              format(x$recommended$mean, digits = digits),
              paste(format(x$recommended$x, digits = digits), collapse = ", ")))
  invisible(x)
}

# The domain as list(candidates, box, d, names): exactly one of a finite
# candidate set and a box.
bo_domain <- function(candidates, lower, upper) {
  has_box <- !is.null(lower) || !is.null(upper)
  if (!is.null(candidates) && has_box) {
    abort_argument("candidates", "cannot be given together with `lower` and `upper`: give one domain")
  }
  if (is.null(candidates) && !has_box) {
    abort_argument("candidates", "is missing: give a candidate set or the box `lower`, `upper`")
  }
  if (has_box) {
    box <- check_box(lower, upper)
    return(list(box = box, d = box$d, names = names(lower)))
  }
  candidates <- as_input_matrix(candidates, "candidates")
  if (nrow(candidates) == 0L || ncol(candidates) == 0L) {
    abort_argument("candidates", "must have at least one row and one column: the domain is empty")
  }
  check_finite_rows(candidates, "candidates")
  list(candidates = candidates, d = ncol(candidates), names = colnames(candidates))
}

# Earlier evaluations x, y (or none) as a matrix with d columns and a vector.
check_earlier_data <- function(x, y, d) {
  if (is.null(x) != is.null(y)) {
    abort_argument(if (is.null(x)) "x" else "y", "must be given together with `x` and `y` both")
  }
  if (is.null(x)) return(list(x = matrix(0, 0L, d), y = numeric()))
  x <- check_finite_rows(as_input_matrix(x, "x"), "x")
  if (ncol(x) != d) {
    abort_argument("x", sprintf("has %d column%s but the domain has %d", ncol(x),
                                if (ncol(x) == 1L) "" else "s", d))
  }
  list(x = x, y = check_targets(y, nrow(x)))
}

# Hyperparameters left NULL, estimated on the standardised initial data as
# gp_sdd() would, and returned in the original units.
complete_hyperparameters <- function(kernel, noise, x, y, estimate, threads) {
  if (!estimate) return(list(kernel = kernel, noise = noise, estimation = NULL))
  scaling <- standardization(x, y, TRUE)
  given <- rescale_hyperparameters(kernel, noise, scaling, "standard")
  est <- estimate_hyperparameters(standardize_inputs(x, scaling),
                                  standardize_targets(y, scaling),
                                  given$kernel, given$noise, estimation_control(), threads)
  # Given values are kept as they are, not passed through the scaling.
  back <- rescale_hyperparameters(est$kernel, est$noise, scaling, "original")
  kernel$lengthscale <- kernel$lengthscale %||% back$kernel$lengthscale
  kernel$variance <- kernel$variance %||% back$kernel$variance
  list(kernel = kernel, noise = noise %||% back$noise, estimation = est$estimation)
}

# ---- The compressed data and posterior --------------------------------------

# The unique points evaluated (rows of x, identified by the exact bits of
# their coordinates), how often each was evaluated and the sum of its values.
new_compressed <- function(d) {
  list(x = matrix(0, 0L, d), keys = character(), counts = numeric(), sums = numeric())
}

point_keys <- function(x) {
  do.call(paste, c(lapply(seq_len(ncol(x)), function(j) sprintf("%a", x[, j] + 0)),
                   sep = " "))
}

add_observations <- function(state, x, y) {
  keys <- point_keys(x)
  new <- !duplicated(keys) & !keys %in% state$keys
  state$x <- rbind(state$x, x[new, , drop = FALSE], deparse.level = 0)
  state$keys <- c(state$keys, keys[new])
  state$counts <- c(state$counts, numeric(sum(new)))
  state$sums <- c(state$sums, numeric(sum(new)))
  h <- match(keys, state$keys)
  sums <- rowsum(y, h, reorder = FALSE)
  at <- as.integer(rownames(sums))
  state$sums[at] <- state$sums[at] + sums[, 1L]
  state$counts <- state$counts + tabulate(h, length(state$keys))
  state
}

# Upper-triangular R with R'R = K_H + noise W^{-1}.
compressed_cholesky <- function(state, kernel, noise, threads) {
  xs <- scale_inputs(state$x, kernel)
  K <- .Call(C_kernel_matrix, xs, xs, kernel_spec(kernel), threads)
  diag(K) <- diag(K) + noise / state$counts
  tryCatch(chol(K), error = function(e) sddgp_abort(paste(
    "The Cholesky factorisation of the compressed kernel matrix failed: it is",
    "not numerically positive definite. Increase `noise`."),
    class = "sddgp_error_numerical"))
}

# gamma = 1/2 log det(I + W^{1/2} K_H W^{1/2} / noise)
#       = 1/2 [log det(K_H + noise W^{-1}) - log det(noise W^{-1})].
information_gain <- function(R, state, noise) {
  sum(log(diag(R))) - 0.5 * sum(log(noise / state$counts))
}

# The switching rule: repeats that shrink the posterior sd by at most C.
switch_after <- function(C, noise, variance) {
  pmax(1, floor((C^2 - 1) * noise / variance))
}

# The posterior of the compressed GP, as list(at, variance): at(x) gives
# the mean and variance at the rows of x, variance(x) the variance at the
# single point x, which sets the number of repeats.
compressed_posterior <- function(state, kernel, noise, prior_mean, method,
                                 samples, control, threads) {
  if (method == "cholesky") {
    exact_posterior(state, kernel, noise, prior_mean, threads)
  } else {
    sdd_posterior(state, kernel, noise, prior_mean, samples, control, threads)
  }
}

exact_posterior <- function(state, kernel, noise, prior_mean, threads) {
  R <- compressed_cholesky(state, kernel, noise, threads)
  xs <- scale_inputs(state$x, kernel)
  spec <- kernel_spec(kernel)
  alpha <- backsolve(R, backsolve(R, state$sums / state$counts - prior_mean,
                                  transpose = TRUE))
  at <- function(x) {
    mean <- var <- numeric(nrow(x))
    for (rows in chunks(nrow(x), 4096L)) {
      Kxh <- .Call(C_kernel_matrix, xs, scale_inputs(x[rows, , drop = FALSE], kernel),
                   spec, threads)
      mean[rows] <- prior_mean + drop(crossprod(Kxh, alpha))
      var[rows] <- kernel$variance - colSums(backsolve(R, Kxh, transpose = TRUE)^2)
    }
    list(mean = mean, var = pmax(var, 0))
  }
  list(at = at, variance = function(x) at(matrix(x, 1L))$var)
}

# Beyond `threshold` unique points: the mean by SDD, the variances from
# pathwise samples (approximate), the chosen point's by one more solve.
sdd_posterior <- function(state, kernel, noise, prior_mean, samples, control, threads) {
  fit <- gp_sdd(state$x, state$sums / state$counts - prior_mean, kernel = kernel,
                noise = noise, weights = state$counts, solver = "sdd",
                control = control, samples = samples, standardize = FALSE,
                threads = threads)
  at <- function(x) {
    mean <- var <- numeric(nrow(x))
    for (rows in chunks(nrow(x), 4096L)) {
      post <- posterior_at(fit, x[rows, , drop = FALSE], TRUE, threads)
      mean[rows] <- prior_mean + post$mean
      var[rows] <- rowMeans(post$centred^2)
    }
    list(mean = mean, var = var)
  }
  variance <- function(x) {
    x <- matrix(x, 1L)
    kx <- .Call(C_kernel_matrix, scale_inputs(state$x, kernel), scale_inputs(x, kernel),
                kernel_spec(kernel), threads)[, 1L]
    problem <- new_problem(fit$x, kx, kernel, observation_noise(fit), NULL, threads)
    sol <- run_solver("sdd", problem, fit$control, threads, state = fit$state)
    max(kernel$variance - sum(kx * sol$alpha[, 1L]), 0)
  }
  list(at = at, variance = variance)
}

# ---- Acquisition --------------------------------------------------------------

# UCB, or EI over `incumbent` with the sd inflated by beta.
acquisition_value <- function(post, acquisition, beta, incumbent) {
  spread <- beta * sqrt(post$var)
  if (acquisition == "ucb") return(post$mean + spread)
  gap <- post$mean - incumbent
  z <- gap / pmax(spread, .Machine$double.xmin)
  gap * stats::pnorm(z) + spread * stats::dnorm(z)
}

propose_candidate <- function(posterior, candidates, acquisition, beta) {
  post <- posterior$at(candidates)
  u <- acquisition_value(post, acquisition, beta, max(post$mean))
  candidates[which.max(u), ]
}

propose_in_box <- function(posterior, state, box, acquisition, beta, random = 1000L) {
  # Earlier evaluations (`x`) may lie outside the box.
  inside <- rowSums(state$x < rep(box$lower, each = nrow(state$x)) |
                      state$x > rep(box$upper, each = nrow(state$x))) == 0
  pool <- rbind(runif_box(random, box), state$x[inside, , drop = FALSE])
  post <- posterior$at(pool)
  incumbent <- max(post$mean)
  u <- acquisition_value(post, acquisition, beta, incumbent)
  best <- which.max(u)
  # An evaluated point is repeated exactly; refining it would replace a
  # repeat by a near-duplicate.
  if (best > random) return(pool[best, ])
  value <- function(p) {
    -acquisition_value(posterior$at(matrix(p, 1L)), acquisition, beta, incumbent)
  }
  opt <- stats::optim(pool[best, ], value, method = "L-BFGS-B", lower = box$lower,
                      upper = box$upper,
                      control = list(maxit = 50L, parscale = box$upper - box$lower))
  if (-opt$value > u[best]) clamp_box(matrix(opt$par, 1L), box)[1L, ] else pool[best, ]
}
