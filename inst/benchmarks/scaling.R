# Scaling of SDD with n, and with the number of threads, on synthetic
# Matern-3/2 data in d = 8 (kernel computed on the fly, no cache: the
# large-n regime).
#
#   Rscript inst/benchmarks/scaling.R [steps] [sizes] [output.csv] [precisions] [reps]
#
# defaults: 100 steps, sizes 10000,100000,1000000, output
# inst/extdata/benchmarks/scaling.csv, precisions double,single (the kernel
# values, sdd_control(precision =)), 3 repetitions.  Each repetition of a
# size and precision runs in a fresh R process (so its peak resident memory,
# VmHWM, is its own): the posterior mean (B = 512), on 2 threads, and at
# 100000 points also on 1 thread, where the two fits must be identical.
# Reported: seconds per 1000 steps (SDD iterations only, from the fit's
# own clock; medians over the repetitions) and the peak RSS of the process.
# The CSV keeps other machines' rows and replaces this machine's for the
# precisions run.
source(file.path("inst", "benchmarks", "options.R"))
steps <- if (length(args) >= 1L) as.integer(args[[1L]]) else 100L
sizes <- if (length(args) >= 2L) as.numeric(strsplit(args[[2L]], ",")[[1L]]) else
  c(1e4, 1e5, 1e6)
out_csv <- if (length(args) >= 3L) args[[3L]] else
  file.path("inst", "extdata", "benchmarks", "scaling.csv")
precisions <- if (length(args) >= 4L) strsplit(args[[4L]], ",")[[1L]] else
  c("double", "single")
reps <- if (length(args) >= 5L) as.integer(args[[5L]]) else 3L

one_size <- function(n, steps, threads_list, precision) {
  code <- sprintf('
    suppressPackageStartupMessages(library(sddgp))
    n <- %d; d <- 8L
    set.seed(1)
    x <- matrix(runif(n * d), n, d)
    # Targets: a smooth function plus noise; hyperparameters fixed, so no
    # estimation, and the step size comes from the data as by default.
    y <- sin(4 * x[, 1]) + cos(3 * x[, 2]) * x[, 3] + rnorm(n, sd = 0.1)
    fits <- list()
    for (threads in c(%s)) {
      set.seed(2)
      fits[[as.character(threads)]] <- gp_sdd(x, y, kernel = matern(3/2, 0.5, 1),
        noise = 0.01, threads = threads,
        control = sdd_control(tolerance = 0, iterations = %d, cache = "never", precision = "%s"))
    }
    status <- readLines("/proc/self/status")
    hwm <- as.numeric(gsub("[^0-9]", "", grep("^VmHWM", status, value = TRUE))) / 1024
    same <- if (length(fits) == 2L) identical(fits[[1]]$alpha, fits[[2]]$alpha) else NA
    for (k in names(fits)) cat(sprintf("%%s,%%s,%%.3f,%%.1f,%%s\\n", n, k,
      fits[[k]]$seconds, hwm, same))
  ', as.integer(n), paste(threads_list, collapse = ", "), as.integer(steps), precision)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)),
                 stdout = TRUE, stderr = FALSE)
  lines <- grep("^[0-9]", out, value = TRUE)
  do.call(rbind, lapply(strsplit(lines, ","), function(f) data.frame(
    n = as.numeric(f[1]), precision = precision, threads = as.integer(f[2]), steps = steps,
    seconds = as.numeric(f[3]), seconds_per_1000_steps = as.numeric(f[3]) * 1000 / steps,
    peak_rss_mb = as.numeric(f[4]), identical_across_threads = as.logical(f[5]))))
}

# Repetitions outermost, so that a slow spell of the shared machine falls
# on one repetition of every size rather than on all of one size.
rows <- list()
for (rep in seq_len(reps)) for (precision in precisions) for (n in sizes) {
  threads <- if (n == 1e5) c(1L, 2L) else 2L
  res <- cbind(one_size(n, steps, threads, precision), rep = rep)
  print(res, row.names = FALSE)
  rows[[length(rows) + 1L]] <- res
}
res <- do.call(rbind, rows)
res$machine <- machine_description()
res$date <- format(Sys.Date())
for (precision in precisions) {
  two <- res[res$threads == 2L & res$precision == precision, ]
  t100k <- stats::median(two$seconds_per_1000_steps[two$n == 1e5])
  for (n in sizes) {
    at <- two[two$n == n, ]
    cat(sprintf("%s, n = %8.0f: %7.1f s per 1000 steps on 2 threads (median of %d; %s), peak RSS %6.0f MB, t(n)/t(100k) = %.2f\n",
                precision, n, stats::median(at$seconds_per_1000_steps), nrow(at),
                paste(sprintf("%.1f", at$seconds_per_1000_steps), collapse = ", "),
                max(at$peak_rss_mb), stats::median(at$seconds_per_1000_steps) / t100k))
  }
  one <- res[res$n == 1e5 & res$precision == precision, ]
  if (any(one$threads == 1L)) {
    cat(sprintf("%s, n = 100000: 1 -> 2 threads speed-up %.2f (medians), identical results in every repetition: %s\n",
                precision, stats::median(one$seconds[one$threads == 1L]) / stats::median(one$seconds[one$threads == 2L]),
                all(one$identical_across_threads)))
  }
}
replace_rows(res, out_csv, c("machine", "precision"))
cat("written", out_csv, "\n")
