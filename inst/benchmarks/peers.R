# sddgp against R's scalable GP packages at equal wall time, on synthetic
# data with known hyperparameters: GpGp (Vecchia approximation,
# fit_model() + predictions()) and laGP (local approximate GPs, aGP()), and
# the exact GP on the largest random subset that fits the same time.
#
#   Rscript inst/benchmarks/peers.R [--n=100000] [--dims=8,26]
#       [--methods=gpgp,sdd_double,sdd_single,cg,lagp,exact,lagp_budget]
#       [--budget=SECONDS] [--out=inst/extdata/benchmarks/peers.csv]
#   Rscript inst/benchmarks/peers.R --budgets=30,60,120,300,600
#       [--n=100000] [--dims=8,26] [--methods=sdd_double,sdd_single,cg]
#       [--out=inst/extdata/benchmarks/peers_curve.csv]
#       [--peers=inst/extdata/benchmarks/peers.csv] [--table=true]
#
# n training and 2000 test points per dimension d.  Resumable: one CSV row
# per (d, method), written as soon as the method finishes; rows already in
# --out are skipped, so a long protocol can be completed over several runs.
# GpGp and laGP are needed for their rows only: install.packages(c("GpGp",
# "fields", "laGP")) (GpGp's fit_model() loads fields, which GpGp only
# suggests).  They are not in Suggests: R CMD check --as-cran then needs them
# installed or looks them up on CRAN, which the offline CI machine cannot.
#
# Data: x uniform on [0, 1]^d; f a draw of a zero-mean GP with Matern-3/2
# kernel, variance 1 and isotropic length scale 0.25 sqrt(d) (so that
# neighbouring points stay correlated as d grows), by 4000 random Fourier
# features; y = f + N(0, 0.01).  The same seed (d) gives the same data in
# every run.  Scores: test RMSE against the noisy test y (the noise alone
# gives 0.1) and against the noise-free f.
#
# Protocol: GpGp (nugget fixed at the truth, variance and range estimated
# starting from the truth) sets the time budget T (fit and prediction),
# read from its row in --out when GpGp is not run now, or given by
# --budget.  sddgp gets the same T, once with double and once with
# single-precision kernel values: a 50-step pilot run (default batch 512,
# the true hyperparameters, kernel on the fly) measures the time outside
# the iterations and the prediction time, and the remainder of T is the
# fit's time_limit.  cg: conjugate gradients with cg_control()'s defaults
# (Vecchia's preconditioner, 100 neighbours; the cg rows in
# peers_curve.csv ran with 50, the default then; the tolerance chosen from
# the noise) and the time limit T less the predictions' time, which is
# measured on a 2000-point fit and scaled by n / 2000 (CG's time limit
# counts the preconditioner's construction and no iteration starts that
# would end past it).  laGP (its own local length scales, nugget the true noise ratio,
# 2 OpenMP threads) predicts at all test points with its default 50
# neighbours (lagp), and its own time is reported; lagp_budget gives it the
# neighbourhood size whose time fits T.  The exact GP uses the largest subset m whose Cholesky time,
# scaled by m^3 from a 4000-point pilot, fits T (at most 20000 points and n).
#
# Time to accuracy (--budgets): sddgp alone, by the same protocol at each
# budget in turn (one CSV row per d, method and budget, in its own file),
# with sdd_control()'s defaults otherwise (the inducing-point warm start
# among them), predicting with predict()'s default correction of the mean
# (`neighbours`); the columns rmse_uncorrected and rmse_f_uncorrected score
# the same fit predicting without it (neighbours = 0, untimed).  The column load is the 1-minute load average at the end
# of the run (its own 2 threads included).  A table then compares each row
# with the most accurate peer in --peers (GpGp, laGP, the exact subset)
# that finished within the budget; --table=true prints it alone, running
# nothing.
suppressPackageStartupMessages(library(sddgp))

source(file.path("inst", "benchmarks", "options.R"))
n <- as.integer(option("n", "100000"))
dims <- as.integer(split_list(option("dims", "8,26")))
known <- c("gpgp", "sdd_double", "sdd_single", "lagp", "exact", "lagp_budget", "cg")
budget_option <- as.numeric(option("budget", NA))
budgets <- as.numeric(split_list(option("budgets", "")))
curve <- length(budgets) > 0L
if (curve) {
  methods <- choice_option("methods", c("sdd_double", "sdd_single", "cg"))
  if (anyNA(budgets) || any(budgets <= 0)) stop("--budgets: positive seconds, comma-separated")
} else {
  methods <- choice_option("methods", known)
}
table_only <- curve && identical(option("table", "false"), "true")
benchmarks_dir <- file.path("inst", "extdata", "benchmarks")
out_csv <- option("out", file.path(benchmarks_dir, if (curve) "peers_curve.csv" else "peers.csv"))
peers_csv <- option("peers", file.path(benchmarks_dir, "peers.csv"))
needed <- list(gpgp = c("GpGp", "fields"), lagp = "laGP", lagp_budget = "laGP")
for (pkg in unlist(needed[intersect(names(needed), methods)])) {
  if (!requireNamespace(pkg, quietly = TRUE)) stop("this benchmark needs the package ", pkg)
}
n_test <- 2000L
noise <- 0.01
threads <- 2L
elapsed <- function(expr) {
  start <- proc.time()[["elapsed"]]
  value <- force(expr)
  list(value = value, seconds = proc.time()[["elapsed"]] - start)
}
package_version_or_na <- function(pkg) {
  if (requireNamespace(pkg, quietly = TRUE)) as.character(utils::packageVersion(pkg)) else NA
}
machine <- sprintf("%s; %d threads", machine_description(), threads)
done <- if (file.exists(out_csv)) utils::read.csv(out_csv, stringsAsFactors = FALSE) else NULL
have <- function(d, method, budget = NULL) {
  if (is.null(done)) return(FALSE)
  hit <- done$d == d & done$n == n & done$method == method
  if (!is.null(budget)) hit <- hit & done$budget %in% budget
  any(hit)
}

for (d in dims) {
  if (table_only || curve && all(outer(methods, budgets, Vectorize(function(m, b) have(d, m, b))))) next
  set.seed(d)
  ell <- 0.25 * sqrt(d)
  m <- 4000L
  omega <- matrix(rnorm(m * d), m, d) * sqrt(3 / rchisq(m, df = 3))
  phase <- runif(m, -pi, pi)
  w <- rnorm(m) * sqrt(2 / m)
  f <- function(x) drop(cos(x %*% t(omega) / ell + rep(phase, each = nrow(x))) %*% w)
  x <- matrix(runif(n * d), n, d)
  xt <- matrix(runif(n_test * d), n_test, d)
  ft <- f(xt)
  y <- f(x) + rnorm(n, sd = sqrt(noise))
  yt <- ft + rnorm(n_test, sd = sqrt(noise))
  # `columns` go between the method and the scores (the curve's budget).
  score <- function(method, pred, seconds, detail, columns = list()) {
    r <- do.call(data.frame, c(
      list(d = d, n = n, method = method), columns,
      list(seconds = seconds, rmse = sqrt(mean((pred - yt)^2)),
           rmse_f = sqrt(mean((pred - ft)^2)), detail = detail, machine = machine,
           date = format(Sys.time(), "%Y-%m-%d"))))
    cat(sprintf("d = %2d  %-11s %7.1f s  RMSE %.4f (noise-free f: %.4f)  %s\n",
                d, method, seconds, r$rmse, r$rmse_f, detail))
    done <<- append_result(done, r, out_csv)
  }
  # Each method draws its random numbers from a seed of its own, so its
  # result does not depend on which methods ran before it in this run.
  run <- function(method, body, budget = NULL) {
    if (!(method %in% methods) || have(d, method, budget)) return(invisible())
    set.seed(1000L * d + match(method, known))
    body()
  }

  # GpGp, the nugget (noise) fixed at the truth and the variance and range
  # estimated from the true values (fixing two or all three parameters
  # breaks its Fisher scoring, GpGp 1.0.0): sigma^2 (1 + r / a) exp(-r / a), a = ell / sqrt(3),
  # nugget as a fraction of the variance.
  run("gpgp", function() {
    gp <- elapsed({
      fit <- GpGp::fit_model(y, x, covfun_name = "matern15_isotropic",
                             start_parms = c(1, ell / sqrt(3), noise),
                             fixed_parms = 3, silent = TRUE)
      GpGp::predictions(fit, xt, X_pred = matrix(1, n_test, 1))
    })
    score("gpgp", gp$value, gp$seconds,
          sprintf("GpGp %s, Vecchia m = 30; nugget fixed, variance and range estimated",
                  package_version_or_na("GpGp")))
  })
  budget <- if (!is.na(budget_option)) budget_option else
    if (have(d, "gpgp")) done$seconds[done$d == d & done$n == n & done$method == "gpgp"][1] else NA
  if (!curve && is.na(budget) &&
      any(c("sdd_double", "sdd_single", "cg", "lagp_budget", "exact") %in% methods)) {
    stop("d = ", d, ": no time budget; run gpgp first or give --budget=SECONDS")
  }

  # sddgp fitted and predicting in `budget` seconds, with kernel values in
  # double or single precision (sdd_control(precision =)): its predictions,
  # wall time, fit and a line on the steps.
  kern <- matern(3/2, ell, 1)
  sdd_within <- function(precision, budget) {
    sdd_at <- function(steps, time_limit = Inf, averaging_rate = NULL) {
      gp_sdd(x, y, kernel = kern, noise = noise, standardize = FALSE,
             control = sdd_control(tolerance = 0, iterations = steps, time_limit = time_limit,
                                   averaging_rate = averaging_rate, cache = "never",
                                   precision = precision),
             threads = threads)
    }
    # The iterations' own time is the trace's last: fit$seconds also counts
    # the step-size estimate and the warm start, which time_limit does not.
    iteration_seconds <- function(fit) fit$trace$seconds[nrow(fit$trace)]
    # (A finite time limit also skips the fitted values, not needed here.)
    pilot <- elapsed(sdd_at(50L, time_limit = budget))
    per_step <- iteration_seconds(pilot$value) / pilot$value$iterations
    overhead <- pilot$seconds - iteration_seconds(pilot$value)
    predict_time <- elapsed(predict(pilot$value, xt, threads = threads))$seconds
    # A budget below the time outside the iterations still runs a few steps.
    limit <- max(budget - overhead - predict_time, 10 * per_step)
    # The time limit ends the run; the pilot's step count only sets the
    # averaging rate (100 / steps, the default for a run of that length)
    # and a generous cap on the steps.
    planned <- max(50L, floor(limit / per_step))
    sdd <- elapsed({
      fit <- sdd_at(10L * planned, time_limit = limit, averaging_rate = min(1, 100 / planned))
      predict(fit, xt, threads = threads)
    })
    uncorrected <- predict(fit, xt, neighbours = 0, threads = threads)
    c(sdd, list(fit = fit, uncorrected = uncorrected, detail = sprintf(paste(
      "sddgp %s, %d steps in a time limit of %.0f s at a budget of %.0f s (%.1f ms a step",
      "in the 50-step pilot, %.1f ms in the run; %.1f s outside the iterations)"),
      utils::packageVersion("sddgp"), fit$iterations, limit, budget,
      1000 * per_step, 1000 * iteration_seconds(fit) / fit$iterations, overhead)))
  }
  for (precision in c("double", "single")) {
    method <- paste0("sdd_", precision)
    if (curve) {
      for (b in budgets) {
        run(method, function() {
          sdd <- sdd_within(precision, b)
          score(method, sdd$value, sdd$seconds, sdd$detail,
                list(budget = b, steps = sdd$fit$iterations, load = load_average(),
                     corrected = !is.null(sdd$fit$training_residual),
                     rmse_uncorrected = sqrt(mean((sdd$uncorrected - yt)^2)),
                     rmse_f_uncorrected = sqrt(mean((sdd$uncorrected - ft)^2))))
        }, budget = b)
      }
    } else {
      run(method, function() {
        sdd <- sdd_within(precision, budget)
        score(method, sdd$value, sdd$seconds, sdd$detail)
      })
    }
  }

  # CG within `budget` seconds, fit and predictions.
  cg_within <- function(budget) {
    cg_fit <- function(rows, time_limit = Inf, max_iterations = 1000L) {
      gp_sdd(x[rows, , drop = FALSE], y[rows], kernel = kern, noise = noise,
             standardize = FALSE, solver = "cg",
             control = cg_control(time_limit = time_limit, max_iterations = max_iterations),
             threads = threads)
    }
    small <- suppressWarnings(cg_fit(seq_len(2000L), max_iterations = 1L))
    predict_time <- elapsed(predict(small, xt, threads = threads))$seconds * n / 2000
    limit <- max(budget - predict_time, 1)
    cg <- elapsed({
      fit <- suppressWarnings(cg_fit(seq_len(n), time_limit = limit))
      predict(fit, xt, threads = threads)
    })
    c(cg, list(fit = fit, detail = sprintf(paste(
      "sddgp %s, CG (%s), %d iterations (%s) in a time limit of %.0f s at a budget of %.0f s",
      "(predictions %.1f s, from a 2000-point fit); relative residual %.3g"),
      utils::packageVersion("sddgp"), fit$preconditioner, fit$iterations, fit$status,
      limit, budget, predict_time, fit$trace$residual[nrow(fit$trace)])))
  }
  if (curve) {
    for (b in budgets) {
      run("cg", function() {
        cg <- cg_within(b)
        score("cg", cg$value, cg$seconds, cg$detail,
              list(budget = b, steps = cg$fit$iterations, load = load_average()))
      }, budget = b)
    }
    next
  }
  run("cg", function() {
    cg <- cg_within(budget)
    score("cg", cg$value, cg$seconds, cg$detail)
  })

  # aGP's predictions at the test points `rows` with `end` neighbours, timed.
  a_gp <- function(end, rows = seq_len(n_test)) {
    elapsed(laGP::aGP(x, y, xt[rows, , drop = FALSE], end = end, g = noise,
                      omp.threads = threads, verb = 0)$mean)
  }
  # laGP: local GPs of 50 points (ALC), Gaussian kernel with local MLE of
  # the length scale, nugget the true noise-to-variance ratio.
  run("lagp", function() {
    la <- a_gp(50L)
    score("lagp", la$value, la$seconds,
          sprintf("laGP %s, aGP with 50 neighbours, local length scales",
                  package_version_or_na("laGP")))
  })

  # laGP given the whole budget: the neighbourhood size whose time fits it,
  # from a power law t = a * end^p through two pilots (50 and 100
  # neighbours on 200 test points), at most 500 (laGP searches the 1000
  # nearest points by default, and end must stay below that).
  run("lagp_budget", function() {
    pilot_rows <- seq_len(200L)
    t50 <- a_gp(50L, pilot_rows)$seconds
    t100 <- a_gp(100L, pilot_rows)$seconds
    power <- log(t100 / t50) / log(2)
    per_point_50 <- t50 / length(pilot_rows)
    end <- as.integer(min(500, max(50, floor(50 * (budget / (n_test * per_point_50))^(1 / power)))))
    la <- a_gp(end)
    score("lagp_budget", la$value, la$seconds,
          sprintf("laGP %s, aGP with %d neighbours (pilots on 200 points: %.1f s with 50, %.1f s with 100, time ~ end^%.2f) at a budget of %.0f s",
                  package_version_or_na("laGP"), end, t50, t100, power, budget))
  })

  # Exact GP on the largest subset that fits the budget.
  run("exact", function() {
    sub_time <- function(m) {
      idx <- seq_len(m)
      elapsed(predict(gp_sdd(x[idx, ], y[idx], kernel = kern, noise = noise,
                             standardize = FALSE, solver = "cholesky", threads = threads),
                      xt, threads = threads))
    }
    m_pilot <- min(4000L, n)
    pilot_exact <- sub_time(m_pilot)
    m_exact <- as.integer(min(20000, n, m_pilot * (budget / pilot_exact$seconds)^(1 / 3)))
    ex <- if (m_exact > m_pilot) sub_time(m_exact) else pilot_exact
    score("exact", ex$value, ex$seconds,
          sprintf("exact GP on %d random points at a budget of %.0f s",
                  max(m_exact, m_pilot), budget))
  })
}
cat("results in", out_csv, "\n")

# The curve against the peers: at each budget, the most accurate peer that
# finished within it (none at budgets below every peer's time) and whether
# sddgp is at least as accurate.
if (curve && !is.null(done) && file.exists(peers_csv)) {
  options(width = 150)
  peers <- utils::read.csv(peers_csv, stringsAsFactors = FALSE)
  peers <- peers[peers$n == n & !startsWith(peers$method, "sdd_"), ]
  rows <- done[done$n == n & done$d %in% dims & done$budget %in% budgets, ]
  rows <- rows[order(rows$d, rows$method, rows$budget), ]
  best <- t(vapply(seq_len(nrow(rows)), function(i) {
    p <- peers[peers$d == rows$d[i] & peers$seconds <= rows$budget[i], ]
    if (!nrow(p)) return(c(peer = "none", seconds = NA, rmse = NA))
    p <- p[which.min(p$rmse), ]
    c(peer = p$method, seconds = round(p$seconds), rmse = sprintf("%.4f", p$rmse))
  }, character(3)))
  peer_rmse <- as.numeric(best[, "rmse"])
  print(data.frame(d = rows$d, budget = rows$budget, method = rows$method,
                   seconds = round(rows$seconds, 1), steps = rows$steps,
                   rmse = sprintf("%.4f", rows$rmse), best_peer = best[, "peer"],
                   peer_seconds = best[, "seconds"], peer_rmse = best[, "rmse"],
                   as_accurate = ifelse(is.na(peer_rmse), NA, rows$rmse <= peer_rmse)),
        row.names = FALSE)
}
