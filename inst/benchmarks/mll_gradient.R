# The pathwise gradient's pass over the pairs (C_mll_pathwise, all d + 2
# derivatives of the log marginal likelihood from the solutions of the
# mean's and `probes` probe systems), the cost that sets how many points
# estimation on all the data can afford.  CPU seconds per pair of points
# (n^2) on one thread, the median of `reps` runs, with the bits of the
# gradient on 1 and 2 threads compared.
#
#   R_LIBS=LIB Rscript inst/benchmarks/mll_gradient.R [--n=8000,20000]
#       [--d=9,20] [--probes=16] [--reps=3] [--build=LABEL]
#       [--out=inst/extdata/benchmarks/mll_gradient.csv]
#   R_LIBS=LIB Rscript inst/benchmarks/mll_gradient.R --loaded=true
#       [--n=12000] [--d=9] [--reps=5]
#
# --loaded=true instead times the pass's wall seconds on 1 and 2 threads
# (alternating, `reps` each) beside one busy-looping R process, and prints
# the medians and their ratio (2 threads / 1, no slower: at most 1).
#
# --build labels the installed package (run it once per build to compare
# two, e.g. before and after a change, in the same session).  CPU time
# rather than wall time: the shared machine's load stretches the latter.
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))
ns <- as.integer(split_list(option("n", "8000,20000")))
ds <- as.integer(split_list(option("d", "9,20")))
probes <- as.integer(option("probes", "16"))
reps <- as.integer(option("reps", "3"))
build <- option("build", as.character(utils::packageVersion("sddgp")))
out <- option("out", file.path("inst", "extdata", "benchmarks", "mll_gradient.csv"))

gradient <- function(xs, sols, spec, threads) {
  .Call(sddgp:::C_mll_pathwise, xs, sols, spec, 0.01, NULL, threads)
}
if (identical(option("loaded", "false"), "true")) {
  n <- ns[[1L]]
  d <- ds[[1L]]
  set.seed(1)
  kernel <- matern(3/2, rep(0.5, d), 1)
  xs <- sddgp:::scale_inputs(matrix(runif(n * d), n, d), kernel)
  sols <- matrix(rnorm(n * (probes + 1L)), n, probes + 1L)
  spec <- sddgp:::kernel_spec(kernel)
  busy <- parallel::mcparallel(repeat sum(sqrt(seq_len(1e6))))
  Sys.sleep(1)
  wall <- list(`1` = numeric(), `2` = numeric())
  for (r in seq_len(reps)) for (threads in if (r %% 2L) 1:2 else 2:1) {
    key <- as.character(threads)
    wall[[key]] <- c(wall[[key]], system.time(gradient(xs, sols, spec, threads))[["elapsed"]])
  }
  tools::pskill(busy$pid)
  parallel::mccollect(busy, wait = FALSE)
  cat(sprintf("n %d d %d beside a busy core: median %.2f s on 1 thread, %.2f s on 2, ratio %.2f, load %.1f\n",
              n, d, stats::median(wall$`1`), stats::median(wall$`2`),
              stats::median(wall$`2`) / stats::median(wall$`1`), load_average()))
  quit(save = "no")
}
done <- if (file.exists(out)) utils::read.csv(out, stringsAsFactors = FALSE) else NULL
for (n in ns) for (d in ds) {
  set.seed(1)
  kernel <- matern(3/2, rep(0.5, d), 1)
  xs <- sddgp:::scale_inputs(matrix(runif(n * d), n, d), kernel)
  sols <- matrix(rnorm(n * (probes + 1L)), n, probes + 1L)
  spec <- sddgp:::kernel_spec(kernel)
  load <- load_average()
  cpu <- vapply(seq_len(reps), function(r)
    system.time(g1 <- gradient(xs, sols, spec, 1L))[["user.self"]], numeric(1))
  same <- identical(gradient(xs, sols, spec, 1L)$gradient,
                    gradient(xs, sols, spec, 2L)$gradient)
  row <- data.frame(build = build, n = n, d = d, probes = probes,
                    cpu_seconds = stats::median(cpu),
                    ns_per_pair = 1e9 * stats::median(cpu) / n^2,
                    threads_identical = same, reps = reps, load = load,
                    date = format(Sys.time(), "%Y-%m-%d %H:%M"),
                    machine = machine_description())
  cat(sprintf("%-8s n %6d d %3d: %.2f CPU s, %.2f ns per pair (median of %d), 1 and 2 threads identical: %s, load %.1f\n",
              build, n, d, row$cpu_seconds, row$ns_per_pair, reps, same, load))
  done <- append_result(done, row, out)
}
