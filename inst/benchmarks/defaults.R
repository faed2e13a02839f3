# The default fit, gp_sdd() without `solver` or `control` (solve_automatic():
# CG or SDD to its default tolerance, or the exact solve), against the exact GP
# with the same hyperparameters and against sddgp 0.2.0's default (exact up
# to 5000 points, else SDD for a fixed 10,000 steps), and the costs per
# operation behind the automatic choice (operation_seconds in R/choice.R).
#
# Usage, from the repository root after R CMD INSTALL:
#   Rscript inst/benchmarks/defaults.R --part=costs
#   Rscript inst/benchmarks/defaults.R --part=link
#   Rscript inst/benchmarks/defaults.R --part=tolerance
#   Rscript inst/benchmarks/defaults.R --part=cases [--cases=s5k_d8_1e-02,pol,...]
#     [--methods=default,exact,reference,old_default] [--exact_max=16000]
#     [--rank=100] [--neighbours=100] [--cache_limit=4e9] [--progress=yes] [--threads=2]
#     [--data=../shared/data/uci]
# `costs` prints the seconds per operation on one core (median of 3) and
# writes inst/extdata/benchmarks/defaults_costs.csv.  `cases` appends one
# row per case, method and kind of BLAS (reference or optimised, the
# exact solve's speed and so the automatic choice depend on it) to
# inst/extdata/benchmarks/defaults.csv and skips those already there
# (resumable; run one case, or one method, at a time).  A run starts by writing its row as "unfinished": one stopped from
# outside (`timeout`) leaves that row, with the load and date, and is
# skipped until the row is deleted.  `link` measures how far SDD's
# posterior mean is from the exact one at new inputs against its relative
# residual along a fixed 30,000-step run (synthetic sets, 4000 points,
# noise ratios 1e-2 and 1e-4, estimated hyperparameters) and writes
# inst/extdata/benchmarks/defaults_link.csv.  `tolerance` runs CG to 1,
# 1/2, 1/5 and 1/10 of SDD's default tolerance (a tenth of the noise
# standard deviation, solve_tolerance()) on the synthetic sets of 5000
# points in 8 dimensions (noise ratios 1e-2, 1e-4, 1e-5) and writes their
# iterations and test RMSEs over the exact GP's to
# inst/extdata/benchmarks/defaults_tolerance.csv.  A case is a UCI data set's split 0
# with the paper's hyperparameters, or a synthetic set s<n>_d<d>_<ratio>:
# f(x) = sin(3 x1) + cos(2 x2) x3 + 0.5 x4^2 + 0.3 x5 x6 on [0, 1]^d plus
# noise of variance `ratio` times var(f), with the hyperparameters gp_sdd()
# estimates (on its default 2000-point subset).  Methods: `default` (the
# automatic choice, hyperparameters given, so estimation is not timed),
# `exact` (solver = "cholesky", up to --exact_max points: 20000 with an
# optimised BLAS, 16000 with the reference one), `reference` above that
# (CG with cg_control()'s default preconditioner, Vecchia's since
# 2026-11-28 with --neighbours (300 needed less than half the iterations
# of 100 at n = 100,000), and the pivoted Cholesky one of rank --rank
# before, to a relative residual of 1e-8, the kernel matrix cached up to
# --cache_limit bytes: 14e9 caches protein's and 16e9 keggdirected's), and
# `old_default` (above 5000 points).  RMSEs are in standard deviations of
# the training targets: `rmse` against the noisy test targets, `rmse_f`
# against f (synthetic sets); `rmse_ratio` and `rmse_f_ratio` divide them by
# those of the method named in `versus` (exact, else reference).  The exact
# solve, and hence the whole run, takes hours with the reference BLAS.
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))
`%||%` <- function(a, b) if (is.null(a)) b else a

part <- choice_option("part", c("costs", "link", "tolerance", "cases"))
threads <- as.integer(option("threads", "2"))
data_dir <- option("data", file.path("..", "shared", "data", "uci"))
out_dir <- file.path("inst", "extdata", "benchmarks")

median_seconds <- function(expr_fn, reps = 3) median(replicate(reps, expr_fn()))

if ("costs" %in% part) {
  set.seed(1)
  rows <- list()
  # The blocked Cholesky: n^3 / 3 flops (the kernel matrix and the solve are
  # small next to it at this n).
  n <- 3000
  x <- matrix(runif(n * 4), n)
  y <- rnorm(n)
  k <- matern(3/2, rep(1, 4), 1)
  s <- median_seconds(function() system.time(gp_sdd(x, y, kernel = k, noise = 0.1,
                                                    solver = "cholesky", threads = 1))[[3]])
  rows$flop <- s / (n^3 / 3)
  # SDD steps, without and with the kernel cache; fit$seconds counts the
  # iterations only.
  per_value <- function(n, d, cache, steps) {
    x <- matrix(runif(n * d), n)
    y <- sin(3 * x[, 1]) + rnorm(n, sd = 0.1)
    ctl <- sdd_control(iterations = steps, tolerance = 0, cache = cache, step_size = 1)
    median_seconds(function() suppressWarnings(gp_sdd(x, y, kernel = matern(3/2, rep(1, d), 1), noise = 0.01,
                                     solver = "sdd", control = ctl, threads = 1))$seconds) /
      steps / (n * (512 + 256 / 100))
  }
  v8 <- per_value(10000, 8, "never", 300)
  v20 <- per_value(10000, 20, "never", 300)
  rows$kernel_value_per_dim <- (v20 - v8) / 12
  rows$kernel_value <- v8 - 8 * rows$kernel_value_per_dim
  rows$cached_value <- per_value(10000, 8, "always", 1000)
  # The Vecchia factor of 100 neighbours at two sizes, d = 8: per point, a
  # fixed part ((m + 1)^2 kernel values and m^3 / 3 flops of its small
  # Cholesky factorisation) and a search of the n / 2 earlier points on
  # average, each a candidate and a distance (cg_setup_cost()).
  vecchia_seconds <- function(n, m = 100, d = 8) {
    x <- matrix(runif(n * d), n)
    spec <- sddgp:::kernel_spec(matern(3/2, rep(1, d), 1))
    median_seconds(function() system.time(
      .Call(sddgp:::C_vecchia_factor, x, spec, rep(0.01, n), as.integer(m), 1L))[[3]]) / n
  }
  small <- 2000
  large <- 8000
  per_small <- vecchia_seconds(small)
  per_large <- vecchia_seconds(large)
  per_candidate <- (per_large - per_small) / ((large - small) / 2)
  rows$neighbour_candidate <- per_candidate - 8 * rows$kernel_value_per_dim
  rows$plain_flop <- (per_small - per_candidate * small / 2 -
                        101^2 * (rows$kernel_value + 8 * rows$kernel_value_per_dim)) / (100^3 / 3)
  costs <- data.frame(operation = names(rows), seconds = unlist(rows), blas = sddgp:::blas_kind(),
                      blas_library = extSoftVersion()[["BLAS"]], load = load_average(),
                      date = format(Sys.time(), "%Y-%m-%d %H:%M"),
                      machine = machine_description(), row.names = NULL)
  print(costs[, c("operation", "seconds", "blas", "load")], digits = 3)
  path <- file.path(out_dir, "defaults_costs.csv")
  old <- if (file.exists(path)) utils::read.csv(path) else NULL
  if (!is.null(old)) old <- old[old$blas_library != costs$blas_library[1], , drop = FALSE]
  utils::write.csv(rbind(old, costs), path, row.names = FALSE)
}

synthetic_f <- function(x) {
  sin(3 * x[, 1]) + cos(2 * x[, 2]) * x[, 3] + 0.5 * x[, 4]^2 + 0.3 * x[, 5] * x[, 6]
}
synthetic <- function(n, d, ratio) {
  set.seed(5)
  x <- matrix(runif(n * d), n)
  xt <- matrix(runif(2000 * d), 2000)
  f <- synthetic_f(x)
  sd_noise <- sqrt(ratio * var(f))
  list(x_train = x, y_train = f + rnorm(n, sd = sd_noise), x_test = xt,
       f_test = synthetic_f(xt), y_test = synthetic_f(xt) + rnorm(2000, sd = sd_noise))
}
# The hyperparameters gp_sdd() estimates on `data` (standardised as it does)
# on its 2000-point subset (not on all the data, which "auto" tries up to
# about 25,000 points: minutes of untimed work).
estimated <- function(data) {
  sc <- sddgp:::standardization(data$x_train, data$y_train, TRUE)
  set.seed(7)
  sddgp:::estimate_hyperparameters(
    sddgp:::standardize_inputs(data$x_train, sc), sddgp:::standardize_targets(data$y_train, sc),
    sddgp:::kernel_for_dimension(matern(3/2), ncol(data$x_train)), NULL,
    estimation_control(method = "subset"), threads)
}

if ("link" %in% part) {
  rows <- NULL
  for (ratio in c(1e-2, 1e-4)) {
    data <- synthetic(4000, 8, ratio)
    est <- estimated(data)
    exact <- gp_sdd(data$x_train, data$y_train, kernel = est$kernel, noise = est$noise,
                    solver = "cholesky", threads = threads)
    # test_y = the exact posterior mean: the trace's test_rmse is then the
    # root mean square distance to it, in standardised units.
    at <- c(100, 300, 1000, 3000, 10000, 30000)
    set.seed(11)
    fit <- gp_sdd(data$x_train, data$y_train, kernel = est$kernel, noise = est$noise,
                  solver = "sdd", threads = threads, control = sdd_control(
                    iterations = max(at), tolerance = 0, trace_at = at,
                    test_x = data$x_test, test_y = predict(exact, data$x_test)))
    tr <- fit$trace[!is.na(fit$trace$test_rmse), ]
    rows <- rbind(rows, data.frame(noise_ratio = ratio, noise = est$noise,
                                   variance = est$kernel$variance,
                                   iteration = tr$iteration, residual = tr$residual,
                                   distance = tr$test_rmse,
                                   distance_over_residual = tr$test_rmse / tr$residual,
                                   load = load_average()))
  }
  print(rows, digits = 3)
  utils::write.csv(rows, file.path(out_dir, "defaults_link.csv"), row.names = FALSE)
}

if ("tolerance" %in% part) {
  rows <- NULL
  for (ratio in c(1e-2, 1e-4, 1e-5)) {
    data <- synthetic(5000, 8, ratio)
    est <- estimated(data)
    y_sd <- sqrt(mean((data$y_train - mean(data$y_train))^2))
    fit <- function(...) gp_sdd(data$x_train, data$y_train, kernel = est$kernel,
                                noise = est$noise, threads = threads, ...)
    exact <- predict(fit(solver = "cholesky"), data$x_test)
    rmse <- function(pred, truth) sqrt(mean((pred - truth)^2))
    # SDD's default tolerance on this problem: the standardised targets
    # and the estimated noise.
    scale <- sddgp:::standardization(data$x_train, data$y_train, TRUE)
    sdd_tolerance <- sddgp:::solve_tolerance(NULL, list(
      rhs = cbind(sddgp:::standardize_targets(data$y_train, scale)), noise = est$noise))
    for (fraction in c(1, 1 / 2, 1 / 5, 1 / 10)) {
      cg <- fit(solver = "cg", control = cg_control(tolerance = fraction * sdd_tolerance))
      pred <- predict(cg, data$x_test)
      rows <- rbind(rows, data.frame(
        noise_ratio = ratio, noise = est$noise, fraction_of_sdd = fraction,
        tolerance = cg$tolerance, iterations = cg$iterations,
        rmse_ratio = rmse(pred, data$y_test) / rmse(exact, data$y_test),
        rmse_f_ratio = rmse(pred, data$f_test) / rmse(exact, data$f_test),
        distance_over_noise_sd = rmse(pred, exact) / y_sd / sqrt(est$noise),
        load = load_average(), date = format(Sys.time(), "%Y-%m-%d %H:%M")))
    }
  }
  print(rows, digits = 4)
  utils::write.csv(rows, file.path(out_dir, "defaults_tolerance.csv"), row.names = FALSE)
}

if ("cases" %in% part) {
  all_cases <- c(paste0("s5k_d8_", c("1e-02", "1e-03", "1e-04", "1e-05")),
                 "pol", "elevators", "bike",
                 paste0("s5k_d20_", c("1e-02", "1e-03", "1e-04", "1e-05")),
                 paste0("s20k_d", rep(c(8, 20), each = 4), "_",
                        c("1e-02", "1e-03", "1e-04", "1e-05")),
                 "protein", "keggdirected",
                 paste0("s100k_d", rep(c(8, 20), each = 4), "_",
                        c("1e-02", "1e-03", "1e-04", "1e-05")))
  cases <- choice_option("cases", all_cases)
  methods <- choice_option("methods", c("default", "exact", "reference", "old_default"))
  # The exact solve runs up to exact_max points: with the reference BLAS it
  # took 1048 s at 15,000 (blas.csv), and n^3 makes 20,000 about 40 min.
  exact_max <- as.numeric(option("exact_max", if (sddgp:::blas_kind() == "optimised")
    sddgp:::cholesky_max_n else 16000))
  path <- file.path(out_dir, "defaults.csv")
  done <- if (file.exists(path)) utils::read.csv(path, stringsAsFactors = FALSE) else NULL
  # Progress bars in the log show where a run stopped from outside got to.
  if (option("progress", "no") == "yes") options(sddgp.progress = TRUE, cli.width = 150)

  # Each row's RMSEs over those of the case's exact solve, or where there is
  # none, of its reference (CG to a relative residual of 1e-8), under the
  # same BLAS, if both had the same hyperparameters (rows from before a
  # change of the estimation have other ones; the same estimate on another
  # machine or version differs in its last digits).
  blas <- sddgp:::blas_kind()
  with_ratios <- function(done) {
    done$versus <- NA_character_
    done$rmse_ratio <- done$rmse_f_ratio <- NA_real_
    for (rows in split(seq_len(nrow(done)), paste(done$case, done$blas))) {
      base <- rows[done$method[rows] == "exact" & done$status[rows] %in% "exact"]
      if (!length(base)) base <- rows[done$method[rows] == "reference" &
                                        done$status[rows] %in% "tolerance"]
      if (!length(base)) next
      base <- base[1L]
      rows <- rows[abs(done$noise[rows] / done$noise[base] - 1) < 1e-8]
      done$versus[rows] <- done$method[base]
      done$rmse_ratio[rows] <- done$rmse[rows] / done$rmse[base]
      done$rmse_f_ratio[rows] <- done$rmse_f[rows] / done$rmse_f[base]
    }
    done
  }
  record <- function(done, row) {
    if (!is.null(done)) done <- done[!(done$case == row$case & done$method == row$method &
                                         done$blas == row$blas), , drop = FALSE]
    done <- append_result(done, row, path)
    done <- with_ratios(done)
    utils::write.csv(done, path, row.names = FALSE)
    done
  }

  for (case in cases) {
    if (startsWith(case, "s")) {
      parts <- strsplit(case, "_", fixed = TRUE)[[1L]]
      ratio <- as.numeric(parts[3])
      data <- synthetic(as.numeric(sub("k$", "", sub("^s", "", parts[1]))) * 1000,
                        as.integer(sub("^d", "", parts[2])), ratio)
    } else {
      data <- read_uci(case, split = 0, path = data_dir)
      ratio <- NA
    }
    n <- nrow(data$x_train)
    wanted <- c("default", if (n <= exact_max) "exact" else "reference",
                if (n > 5000) "old_default")
    todo <- setdiff(intersect(methods, wanted),
                    done$method[done$case == case & done$blas == blas])
    if (!length(todo)) next
    if (startsWith(case, "s")) {
      est <- estimated(data)
      kernel <- est$kernel
      noise <- est$noise
      estimation_seconds <- est$estimation$seconds
    } else {
      hp <- uci_hyperparameters(case, split = 0)
      kernel <- hp$kernel
      noise <- hp$noise
      estimation_seconds <- NA
    }
    y_sd <- sqrt(mean((data$y_train - mean(data$y_train))^2))
    about <- function(method, status, load) {
      data.frame(case = case, method = method, n = n, d = ncol(data$x_train),
                 noise_ratio = ratio, noise = noise, status = status,
                 estimation_seconds = estimation_seconds, threads = threads, load = load,
                 blas = blas, date = format(Sys.time(), "%Y-%m-%d %H:%M"),
                 sddgp = as.character(utils::packageVersion("sddgp")),
                 machine = machine_description())
    }
    # The seconds of the automatic choice's runs that were not kept.
    trial_seconds <- function(fit) {
      s <- unlist(fit$choice[paste0(setdiff(c("sdd", "cg"), fit$solver), "_seconds")])
      if (length(s)) sum(s) else NA
    }
    run <- function(method, ...) {
      load <- load_average()
      # Stays "unfinished" if the run is stopped from outside (a time limit
      # on the process): a later run skips it until the row is deleted.
      done <<- record(done, about(method, "unfinished", load))
      warned <- FALSE
      seconds <- system.time(fit <- withCallingHandlers(
        gp_sdd(data$x_train, data$y_train, kernel = kernel, noise = noise,
               threads = threads, ...),
        sddgp_warning_not_converged = function(w) {
          warned <<- TRUE
          invokeRestart("muffleWarning")
        }))[[3]]
      pred <- predict(fit, data$x_test, threads = threads)
      row <- cbind(about(method, fit$status, load), data.frame(
        solver = fit$solver, reason = fit$choice$reason %||% NA, seconds = seconds,
        trial_seconds = trial_seconds(fit), iterations = fit$iterations,
        tolerance = fit$tolerance %||% NA,
        residual = if (nrow(fit$trace)) fit$trace$residual[nrow(fit$trace)] else NA,
        warned = warned,
        rmse = sqrt(mean((pred - data$y_test)^2)) / y_sd,
        rmse_f = if (!is.null(data$f_test))
          sqrt(mean((pred - data$f_test)^2)) / y_sd else NA))
      done <<- record(done, row)
      print(done[done$case == case & done$blas == blas, c("case", "method", "solver", "seconds", "iterations",
                                      "residual", "warned", "rmse", "rmse_ratio",
                                      "rmse_f_ratio", "versus", "load")], digits = 4)
    }
    settings <- list(
      default = list(),
      exact = list(solver = "cholesky"),
      # The reference where the exact solve is out of reach: preconditioned
      # CG far below any tolerance that changes predictions; the kernel
      # matrix cached where it fits in --cache_limit bytes (4e9: 20,000 points).
      reference = list(solver = "cg", control = cg_control(
        tolerance = 1e-8, max_iterations = 20000, rank = as.integer(option("rank", "100")),
        neighbours = as.integer(option("neighbours", "100")),
        cache_limit = as.numeric(option("cache_limit", "4e9")))),
      old_default = list(solver = "sdd", control = sdd_control(tolerance = 0)))
    for (method in todo) {
      set.seed(11)
      do.call(run, c(list(method), settings[[method]]))
    }
  }
}
