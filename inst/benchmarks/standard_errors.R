# Standard errors from pathwise posterior samples against the exact
# posterior variance, where the posterior variance is far below the
# prior's.
#
# --part=subsets (default), against base R's Cholesky factor: 3000 points
# of elevators split 1 and of bike split 0 with their published
# hyperparameters, and 3000 synthetic points in [0, 1]^3 whose kernel
# variance is 100 times the targets' (length scale 2), with a noise
# variance 1e-3 of it (large_prior_variance: the regime of the estimates
# on elevators, 0.114 against 104) and 2.5e-5 of it (tiny_noise).
#
# For each case and seed, 32 samples at 1000 new inputs, summarised by the
# mean predicted variance over the mean exact variance (var_ratio) and the
# median of the pointwise ratios:
#   shared_exact    one set of 2000 random features shared by the samples
#                   (as in sddgp 0.2.0, whose frequencies were not yet
#                   importance-sampled), solved exactly;
#   own_exact       a set of 2000 features per sample (draw_prior() now),
#                   solved exactly; own_exact_8000 with 8000 features;
#   cg_default      gp_sdd(solver = "cg"), default tolerance, which solves
#                   the samples on until their residual is small against
#                   their variance (refine_samples());
#   cg_mean_tol     CG to the default tolerance of the mean's system
#                   (sddgp 0.2.0's for all systems), given, so that the
#                   samples are not solved on and the fit warns instead;
#   sdd_default     gp_sdd(solver = "sdd") with its defaults.
# The fitted methods' standard errors are predict()'s, whose samples are
# corrected from 50 nearest training points (`neighbours`, correction.R);
# a row <method>_uncorrected each gives them with neighbours = 0.
#
#   Rscript inst/benchmarks/standard_errors.R [--seeds=1,2] [--threads=2]
#       [--cases=elevators_published,bike_published,large_prior_variance,tiny_noise]
#       [--methods=shared_exact,own_exact,own_exact_8000,cg_default,cg_mean_tol,sdd_default]
#       [--data=../shared/data/uci] [--out=inst/extdata/benchmarks/standard_errors.csv]
#
# --seeds also takes a range, first:last.  Over many seeds the exact
# solves alone say whether a ratio is a bias or the spread of the random
# features (standard_errors_seeds.csv):
#   Rscript inst/benchmarks/standard_errors.R --cases=tiny_noise --seeds=1:24
#       --methods=own_exact,own_exact_8000 --out=inst/extdata/benchmarks/standard_errors_seeds.csv
#
# --part=elevators: all of elevators split 1 with the hyperparameters of
# step 100 of the ascent that `estimation_path.R --part=uci --datasets=elevators
# --splits=1 --work=DIR` records in DIR (signal variance 104, noise 0.114,
# standardised): test RMSE, NLL and the mean standard error of
# gp_sdd(solver = "cg", samples = 16) with its defaults, and with
# --exact=TRUE of the exact solve (about 40 minutes on one thread: the
# fit and the standard errors each factor K).
#
#   Rscript inst/benchmarks/standard_errors.R --part=elevators --work=DIR
#       [--exact=FALSE] [--threads=1]
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))
ns <- asNamespace("sddgp")
`%||%` <- ns[["%||%"]]

part <- choice_option("part", c("subsets", "elevators"))[1L]
seeds <- option("seeds", "1,2")
seeds <- if (grepl(":", seeds, fixed = TRUE)) {
  do.call(seq, as.list(as.integer(strsplit(seeds, ":", fixed = TRUE)[[1L]])))
} else as.integer(split_list(seeds))
threads <- as.integer(option("threads", if (part == "subsets") "2" else "1"))
data_dir <- option("data", file.path("..", "shared", "data", "uci"))

if (part == "elevators") {
  data <- read_uci("elevators", split = 1L, path = data_dir)
  record <- readRDS(file.path(option("work", tempdir()), "elevators_1.rds"))$record
  theta <- record$path[100L, ]
  d <- ncol(data$x_train)
  solvers <- c("cg", if (as.logical(option("exact", "FALSE"))) "cholesky")
  for (solver in solvers) {
    set.seed(1007)
    start <- proc.time()[["elapsed"]]
    fit <- gp_sdd(data$x_train, data$y_train,
                  kernel = matern(3/2, lengthscale = exp(theta[seq_len(d)]),
                                  variance = exp(theta[[d + 1L]])),
                  noise = exp(theta[[d + 2L]]), solver = solver,
                  samples = if (solver == "cg") 16L else 0L, threads = threads)
    seconds <- proc.time()[["elapsed"]] - start
    # One prediction (the exact standard errors factor K again), scored
    # as predictive_scores(normalised = TRUE) scores it.
    pred <- predict(fit, data$x_test, se.fit = TRUE, threads = threads)
    se <- pred$se.fit
    scores <- ns$scaled_scores(data$y_test, pred$fit, se, pred$residual.scale,
                               1 / fit$scaling$y_scale)
    cat(sprintf(paste("elevators split 1, step 100: %-8s test RMSE %.4f, NLL %.3f, mean",
                      "standard error %.4f (units of y); %.0f s%s\n"),
                solver, scores[["rmse"]], scores[["nll"]], mean(se), seconds,
                if (solver == "cg") sprintf(", %d iterations, %d more solves of the samples",
                                            fit$iterations,
                                            fit$sample_accuracy$refinements) else ""))
  }
  quit(save = "no")
}
out <- option("out", file.path("inst", "extdata", "benchmarks", "standard_errors.csv"))
n <- 3000L
samples <- 32L
features <- 2000L

# The Matern-3/2 kernel between the rows of a and b, written out.
matern32 <- function(a, b, kernel) {
  a <- sweep(a, 2, kernel$lengthscale, "/")
  b <- sweep(b, 2, kernel$lengthscale, "/")
  r <- sqrt(3 * pmax(outer(rowSums(a^2), rowSums(b^2), "+") - 2 * tcrossprod(a, b), 0))
  kernel$variance * (1 + r) * exp(-r)
}

# Standardised training and test inputs and targets of one case.
uci_case <- function(dataset, split) {
  data <- read_uci(dataset, split = split, path = data_dir)
  scaling <- ns$standardization(data$x_train, data$y_train, TRUE, NULL)
  set.seed(split + 1)
  rows <- sample(nrow(data$x_train), n)
  hp <- uci_hyperparameters(dataset, split = split)
  list(x = ns$standardize_inputs(data$x_train, scaling)[rows, ],
       y = ns$standardize_targets(data$y_train, scaling)[rows],
       x_new = ns$standardize_inputs(data$x_test, scaling)[seq_len(1000), ],
       kernel = matern(3/2, lengthscale = hp$kernel$lengthscale,
                       variance = hp$kernel$variance),
       noise = hp$noise)
}
synthetic_case <- function(noise) {
  set.seed(11)
  x <- matrix(runif(n * 3), n)
  y <- sin(3 * x[, 1]) + x[, 2]^2 - x[, 3] / 2 + rnorm(n, sd = sqrt(noise))
  y <- (y - mean(y)) / sd(y)
  list(x = x, y = y, x_new = matrix(runif(3000), 1000),
       kernel = matern(3/2, lengthscale = 2, variance = 100), noise = noise)
}
cases <- list(elevators_published = function() uci_case("elevators", 1L),
              bike_published = function() uci_case("bike", 0L),
              large_prior_variance = function() synthetic_case(100 * 1e-3),
              tiny_noise = function() synthetic_case(100 * 2.5e-5))
cases <- cases[choice_option("cases", names(cases))]
methods <- choice_option("methods", c("shared_exact", "own_exact", "own_exact_8000",
                                      "cg_default", "cg_mean_tol", "sdd_default"))

rows <- list()
for (case in names(cases)) {
  p <- cases[[case]]()
  d <- ncol(p$x)
  L <- chol(matern32(p$x, p$x, p$kernel) + diag(p$noise, n))
  projected <- backsolve(L, matern32(p$x, p$x_new, p$kernel), transpose = TRUE)
  exact <- p$kernel$variance - colSums(projected^2)
  weights <- backsolve(L, projected) # H^-1 k(X, x*)
  # The exact variance subtracts nearly all of the prior's; one step of
  # iterative refinement of the solve checks that it kept its digits.
  H <- matern32(p$x, p$x, p$kernel) + diag(p$noise, n)
  cross <- matern32(p$x, p$x_new, p$kernel)
  refined <- weights + backsolve(L, backsolve(L, cross - H %*% weights, transpose = TRUE))
  cat(sprintf("%s: mean exact variance %.6g, with a refined solve %.6g\n", case,
              mean(exact), mean(p$kernel$variance - colSums(cross * refined))))
  rm(H)
  mean_tolerance <- ns$solve_tolerance(NULL, list(noise = p$noise, rhs = cbind(p$y)))
  record <- function(method, seed, variance, fit = NULL, warned = FALSE, seconds = NA,
                     used = features, short = FALSE) {
    rows[[length(rows) + 1L]] <<- stamp(data.frame(
      case = case, seed = seed, method = method, n = n, d = d, samples = samples,
      features = used, exact_se = mean(sqrt(exact)),
      var_ratio = mean(variance) / mean(exact), median_ratio = median(variance / exact),
      iterations = if (is.null(fit)) NA else fit$iterations,
      tolerance = if (is.null(fit)) NA else fit$tolerance %||% NA,
      refinements = fit$sample_accuracy$refinements %||% NA,
      fraction = fit$sample_accuracy$fraction %||% NA,
      warned = warned, not_converged = short, seconds = seconds, threads = threads))
    r <- rows[[length(rows)]]
    cat(sprintf("%-21s seed %d %-12s variance ratio %.3f (median %.3f)%s\n", case, seed, method,
                r$var_ratio, r$median_ratio,
                if (is.null(fit)) "" else sprintf(", %d iterations, tolerance %.2g, %d refinements%s%s",
                                                  fit$iterations, fit$tolerance %||% NA,
                                                  r$refinements, if (warned) ", warned" else "",
                                                  if (short) ", not converged" else "")))
  }
  # The samples' variance with the exact solve: the mean square of
  # f0(x*) - k(x*, X) H^-1 (f0(X) + e).
  exact_solve <- function(prior) {
    b <- ns$prior_values(prior, p$kernel, p$x, threads) +
      matrix(rnorm(n * samples, sd = sqrt(p$noise)), n)
    rowMeans((ns$prior_values(prior, p$kernel, p$x_new, threads) - crossprod(weights, b))^2)
  }
  for (seed in seeds) {
    if ("shared_exact" %in% methods) {
      set.seed(seed)
      shared <- ns$draw_prior(p$kernel, d, features, 1L)
      shared$weights <- matrix(rnorm(features * samples), features)
      shared$independent <- FALSE
      record("shared_exact", seed, exact_solve(shared))
    }
    if ("own_exact" %in% methods) {
      set.seed(seed)
      record("own_exact", seed, exact_solve(ns$draw_prior(p$kernel, d, features, samples)))
    }
    if ("own_exact_8000" %in% methods) {
      set.seed(seed)
      record("own_exact_8000", seed,
             exact_solve(ns$draw_prior(p$kernel, d, 4L * features, samples)),
             used = 4L * features)
    }
    for (method in intersect(c("cg_default", "cg_mean_tol", "sdd_default"), methods)) {
      set.seed(seed)
      warned <- short <- FALSE
      start <- proc.time()[["elapsed"]]
      fit <- withCallingHandlers(
        gp_sdd(p$x, p$y, kernel = p$kernel, noise = p$noise, samples = samples,
               standardize = FALSE, threads = threads,
               solver = if (method == "sdd_default") "sdd" else "cg",
               control = if (method == "cg_mean_tol") cg_control(tolerance = mean_tolerance)),
        sddgp_warning_samples_inaccurate = function(w) {
          warned <<- TRUE
          invokeRestart("muffleWarning")
        },
        sddgp_warning_not_converged = function(w) {
          short <<- TRUE
          invokeRestart("muffleWarning")
        })
      seconds <- proc.time()[["elapsed"]] - start
      for (neighbours in c(50L, 0L)) {
        se <- predict(fit, p$x_new, se.fit = TRUE, neighbours = neighbours)$se.fit
        record(paste0(method, if (neighbours == 0L) "_uncorrected"), seed, se^2, fit, warned,
               seconds, short = short)
      }
    }
  }
}
utils::write.csv(do.call(rbind, rows), out, row.names = FALSE)
