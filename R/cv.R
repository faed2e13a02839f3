#' Cross-validate a Gaussian process fit, its folds as futures
#'
#' Splits the observations into folds and, for each fold, fits [gp_sdd()] to
#' the other folds and predicts the held-out one: the folds' test RMSE and
#' mean negative log predictive density (NLL), and the prediction of every
#' observation from the fit that did not see it. With `parallel =
#' sddgp_future()` the folds run as futures on the user's [future::plan()]:
#' `plan(multisession)` on this machine, `cluster` or future.batchtools
#' beyond it.
#'
#' Each fold repeats everything [gp_sdd()] does with the same arguments:
#' hyperparameters given in `...` are kept, those left out are estimated on
#' the fold's training rows (so the scores include the estimation, as they
#' should), and the automatic solver choice is made afresh.
#'
#' @section Random numbers: Folds drawn at random (`folds` a number) come
#'   from R's generator, which advances by those draws only. Fold k is then
#'   fitted in the k-th L'Ecuyer-CMRG substream after a seed taken from R's
#'   stream, as [bo_thompson()] runs its evaluations, so that a seed gives
#'   the same folds, fits and scores whether they run in this process or as
#'   futures, on any plan and any number of workers.
#' @section Scores: The NLL of an observation is \eqn{-\log N(y_i \mid \mu_i,
#'   \sigma_i^2 + \lambda / w_i)}{-log N(y_i | mu_i, sigma_i^2 + lambda /
#'   w_i)}, as in [predictive_scores()], in the units of `y`. It needs
#'   posterior variances: an exact fit (`solver = "cholesky"`, the
#'   automatic choice on small data) or posterior samples (`samples =`);
#'   without them it is `NA`. The scores of the whole are pooled over all
#'   held-out observations, not averaged over folds.
#'
#' @param x A formula with `data`, or a matrix (or data frame) of inputs
#'   with `y`, as for [gp_sdd()].
#' @param y For a matrix `x`: the targets, one output.
#' @param data For a formula `x`: the data frame. Rows with missing values
#'   in the formula's variables are left out, as by [stats::na.omit()].
#' @param weights Optional positive weights, one per row (for a formula,
#'   evaluated among the columns of `data` first), as for [gp_sdd()]; they
#'   weight the held-out observations' noise too.
#' @param folds The number of folds, at least 2 (rows assigned at random, in
#'   sizes that differ by at most one), or a vector with a fold label for
#'   every row of `data` (or of `x`), such as rsample's or caret's folds.
#' @param ... Further arguments of [gp_sdd()]: `kernel`, `noise`, `solver`,
#'   `control`, `samples`, `estimation`, `standardize`.
#' @param threads Threads of each fit run in this process; `NULL` uses
#'   [sddgp_threads()]. Folds run as futures use `sddgp_future()`'s
#'   `threads`.
#' @param parallel `NULL` (the folds one after another, here), or
#'   [sddgp_future()] (a future per fold). Default
#'   `getOption("sddgp.parallel")`.
#' @return An object of class `sddgp_cv`, a list with
#'   * `scores`: `rmse` and `nll` pooled over all held-out observations;
#'   * `folds`: a data frame with a row per fold: `fold` (its label),
#'     `train` and `test` (rows), `rmse`, `nll`, `solver` (the one used),
#'     `converged` (`FALSE` where the fit stopped short of its solver's
#'     accuracy: then `gp_cv()` warns once, with class
#'     `sddgp_warning_not_converged`, for all such folds) and `seconds`
#'     (fit and prediction);
#'   * `predictions`: a data frame with a row per observation used:
#'     `row` (in `data` or `x`), `fold`, `observed`, `fit` (the posterior
#'     mean from the fit without its fold) and `sd` (the predictive standard
#'     deviation, noise included; `NA` without variances);
#'   * `coefficients`: a matrix with each fold's [coef.sddgp()] as a row;
#'   * `call`.
#' @seealso [predictive_scores()] for a fit and a test set;
#'   `vignette("distributed", package = "sddgp")`.
#' @examples
#' set.seed(1)
#' d <- data.frame(x1 = runif(120), x2 = runif(120))
#' d$y <- sin(6 * d$x1) + d$x2^2 + rnorm(120, sd = 0.1)
#' cv <- gp_cv(y ~ x1 + x2, data = d, folds = 4, threads = 1)
#' cv
#' \donttest{
#' if (requireNamespace("future", quietly = TRUE)) {
#'   old <- future::plan("multisession", workers = 2)
#'   set.seed(2)
#'   cv2 <- gp_cv(y ~ x1 + x2, data = d, folds = 4,
#'                parallel = sddgp_future(threads = 1))
#'   future::plan(old)
#' }
#' }
#' @export
gp_cv <- function(x, ...) UseMethod("gp_cv")

#' @rdname gp_cv
#' @export
gp_cv.default <- function(x, y, weights = NULL, folds = 5L, ..., threads = NULL,
                          parallel = getOption("sddgp.parallel")) {
  if (length(dim(x)) != 2L) {
    abort_argument("x", "must be a formula (with `data`) or a matrix or data frame of inputs (with `y`)")
  }
  if (missing(y)) abort_argument("y", "is missing: give the targets, one per row of `x`")
  y <- check_targets(y, nrow(x))
  check_one_output(y, "y")
  weights <- check_weights(weights, nrow(x))
  rows <- list(observed = y, given = nrow(x), kept = seq_len(nrow(x)), weights = weights,
               train = function(i) list(x = x[i, , drop = FALSE], y = y[i], weights = weights[i]),
               test = function(i) x[i, , drop = FALSE])
  cross_validate(rows, folds, list(...), threads, parallel, match.call())
}

#' @rdname gp_cv
#' @export
gp_cv.formula <- function(x, data, weights = NULL, folds = 5L, ..., threads = NULL,
                          parallel = getOption("sddgp.parallel")) {
  if (missing(data)) abort_argument("data", "is missing: give the data frame holding the variables")
  if (!is.data.frame(data)) abort_argument("data", "must be a data frame")
  weights <- formula_weights(substitute(weights), data, x)
  frame <- stats::model.frame(x, data = data, na.action = stats::na.pass)
  observed <- stats::model.response(frame)
  if (is.null(observed)) abort_argument("x", "must be a formula with a response, such as y ~ .")
  check_one_output(observed, "x")
  # Rows with missing values are left out, as by na.omit().
  kept <- which(stats::complete.cases(frame))
  formula <- x
  given <- nrow(data)
  data <- data[kept, , drop = FALSE]
  weights <- weights[kept]
  rows <- list(observed = as.numeric(observed[kept]), given = given, kept = kept,
               weights = weights,
               train = function(i) list(x = formula, data = data[i, , drop = FALSE],
                                        weights = weights[i]),
               test = function(i) data[i, , drop = FALSE])
  cross_validate(rows, folds, list(...), threads, parallel, match.call())
}

# The folds of `rows` (observed targets, `kept` rows of the `given` ones,
# weights; train(i) gp_sdd()'s data arguments for rows i, test(i)
# predict()'s newdata) fitted with gp_sdd()'s further arguments `args`.
cross_validate <- function(rows, folds, args, threads, parallel, call) {
  if (length(args) && (is.null(names(args)) || any(names(args) == ""))) {
    abort_argument("...", "must be named arguments of gp_sdd(), such as `kernel =`")
  }
  parallel <- check_parallel(parallel, mpi = FALSE)
  threads <- if (uses_futures(parallel)) parallel$threads else sddgp_threads(threads)
  labels <- fold_labels(folds, rows)
  fold_order <- sort(unique(labels))
  # Each fold's copy of its rows is made when the fold runs, so that a run
  # in this process holds one at a time.
  run_fold <- function(label) {
    test <- labels == label
    cv_fold(list(fit_args = c(rows$train(!test), args), newdata = rows$test(test),
                 weights = rows$weights[test], threads = threads))
  }
  results <- stream_map(as.list(fold_order), run_fold,
                        next_streams(task_streams(), length(fold_order)), parallel,
                        "Cross-validating folds")
  cv <- new_sddgp_cv(results, labels, rows, call)
  short <- which(!cv$folds$converged)
  if (length(short)) {
    sddgp_warn(sprintf(paste(
      "The fits of %d of the %d folds stopped short of their solver's accuracy, so their",
      "scores may be worse than the exact GP's. Fold %s: %s"), length(short), nrow(cv$folds),
      format(cv$folds$fold[short[1L]]), results[[short[1L]]]$short),
      class = "sddgp_warning_not_converged", folds = cv$folds$fold[short])
  }
  cv
}

check_one_output <- function(y, arg) {
  if (NCOL(y) > 1L) {
    abort_argument(arg, sprintf("has %d outputs; gp_cv() cross-validates one", NCOL(y)))
  }
}

# A fold label for each row kept: `folds` random folds, or the labels
# given for every row.
fold_labels <- function(folds, rows) {
  n <- length(rows$kept)
  if (is.numeric(folds) && length(folds) == 1L) {
    check_number(folds, "folds", lower = 2, upper = n, integer = TRUE)
    return(sample(rep_len(seq_len(folds), n)))
  }
  if (!is.atomic(folds) || is.null(folds) || anyNA(folds)) {
    abort_argument("folds", "must be a number of folds or a vector of fold labels without NA")
  }
  if (length(folds) != rows$given) {
    abort_argument("folds", sprintf(
      "has %d labels: give one per row of the data (%d), or a number of folds",
      length(folds), rows$given))
  }
  labels <- folds[rows$kept]
  if (length(unique(labels)) < 2L) abort_argument("folds", "must hold at least two folds")
  labels
}

# One fold: gp_sdd() on its training rows, predictions at its held-out rows.
cv_fold <- function(task) {
  started <- proc.time()[["elapsed"]]
  # A call of symbols, so that it does not hold the data, but for the
  # weights, which gp_sdd()'s formula method looks up among the columns of
  # `data` and then in the formula's environment.
  args <- c(task$fit_args, list(threads = task$threads, parallel = NULL))
  call <- c(quote(gp_sdd), sapply(names(args), as.name, simplify = FALSE))
  call["weights"] <- list(args$weights)
  # gp_cv() warns once for all folds that stopped short.
  short <- NULL
  fit <- withCallingHandlers(eval(as.call(call), list2env(args, parent = environment())),
    sddgp_warning_not_converged = function(w) {
      short <<- conditionMessage(w)
      invokeRestart("muffleWarning")
    })
  variances <- exact_variance(fit) || ncol(fit$alpha_samples) > 0L
  pred <- stats::predict(fit, task$newdata, se.fit = variances, threads = task$threads,
                         parallel = NULL)
  if (!variances) pred <- list(fit = pred, se.fit = NA_real_, residual.scale = NA_real_)
  list(fit = unname(pred$fit), se = unname(pred$se.fit),
       noise_sd = unname(pred$residual.scale) / sqrt(task$weights %||% 1),
       solver = fit$solver, converged = is.null(short), short = short, coef = stats::coef(fit),
       seconds = proc.time()[["elapsed"]] - started)
}

new_sddgp_cv <- function(results, labels, rows, call) {
  fold_order <- sort(unique(labels))
  n <- length(labels)
  fit <- se <- noise_sd <- numeric(n)
  for (k in seq_along(fold_order)) {
    test <- labels == fold_order[k]
    fit[test] <- results[[k]]$fit
    se[test] <- results[[k]]$se
    noise_sd[test] <- results[[k]]$noise_sd
  }
  y <- rows$observed
  scores <- function(i) scaled_scores(y[i], fit[i], se[i], noise_sd[i])
  per_fold <- vapply(fold_order, function(label) scores(labels == label), numeric(2L))
  structure(list(
    scores = scores(seq_len(n)),
    folds = data.frame(
      fold = fold_order,
      train = vapply(fold_order, function(label) sum(labels != label), integer(1L)),
      test = vapply(fold_order, function(label) sum(labels == label), integer(1L)),
      rmse = per_fold["rmse", ], nll = per_fold["nll", ],
      solver = vapply(results, `[[`, character(1L), "solver"),
      converged = vapply(results, `[[`, logical(1L), "converged"),
      seconds = vapply(results, `[[`, numeric(1L), "seconds"),
      row.names = NULL, stringsAsFactors = FALSE),
    predictions = data.frame(row = rows$kept, fold = labels, observed = y, fit = fit,
                             sd = sqrt(se^2 + noise_sd^2)),
    coefficients = do.call(rbind, lapply(results, `[[`, "coef")),
    call = call), class = "sddgp_cv")
}

#' @export
print.sddgp_cv <- function(x, digits = 4, ...) {
  f <- x$folds
  cat(sprintf("Cross-validation of a Gaussian process: %d folds, %d observations\n",
              nrow(f), nrow(x$predictions)))
  cat(sprintf("  pooled over the held-out observations: RMSE %s, NLL %s\n",
              format(x$scores[["rmse"]], digits = digits),
              if (is.na(x$scores[["nll"]])) "NA (needs samples or an exact fit)" else
                format(x$scores[["nll"]], digits = digits)))
  shown <- f
  shown$rmse <- format(f$rmse, digits = digits)
  shown$nll <- format(f$nll, digits = digits)
  shown$seconds <- format(round(f$seconds, 1), nsmall = 1)
  print(shown, row.names = FALSE)
  if (!all(f$converged)) {
    cat(sprintf("  %d fold%s stopped short of the solver's accuracy\n",
                sum(!f$converged), if (sum(!f$converged) == 1L) "" else "s"))
  }
  invisible(x)
}
