# Cost of an SDD step with posterior samples on a cached kernel, the
# setting of the UCI runs: pol split 0 (bundled with the package), its
# published hyperparameters and the paper's step sizes (50 for the mean, 10
# for the samples), B = 512, 64 samples, kernel cached in double precision.
# A step multiplies 512 cached kernel rows by the 65 columns of the mean and
# the samples, 512 x n x 65 multiply-adds, and that product is most of it.
# --solver=sgd times the SGD baseline instead (the UCI runs' settings: step
# sizes 0.5 and 0.1, clipping at 0.1): its step adds the transposed product
# K[:, I] U, as large again, and 100 random features for the regulariser.
#
#   Rscript inst/benchmarks/sample_steps.R [--solver=sdd] [--steps=1000]
#     [--reps=3] [--samples=64] [--threads=2] [--out=FILE]
#
# Prints the seconds per 1000 steps (the fit's own clock: iterations only,
# not the kernel cache or the setup) of each repetition and their median,
# and the multiply-adds per second of the kernel products they imply.
# --out appends the runs to a CSV (default: print only).
suppressPackageStartupMessages(library(sddgp))
source(file.path("inst", "benchmarks", "options.R"))

solver <- match.arg(option("solver", "sdd"), c("sdd", "sgd"))
steps <- as.integer(option("steps", "1000"))
reps <- as.integer(option("reps", "3"))
samples <- as.integer(option("samples", "64"))
threads <- as.integer(option("threads", "2"))
out <- option("out", "")

pol <- read_uci("pol", split = 0)
hp <- uci_hyperparameters("pol", split = 0)
n <- nrow(pol$x_train)
control <- switch(solver,
  sdd = sdd_control(tolerance = 0, iterations = steps, batch_size = 512, step_size = 50,
                    step_size_samples = 10, batch_sampling = "permutation",
                    cache = "always", precision = "double"),
  sgd = sgd_control(iterations = steps, batch_size = 512, step_size = 0.5,
                    step_size_samples = 0.1, clip = 0.1,
                    batch_sampling = "permutation", cache = "always",
                    precision = "double"))

seconds <- vapply(seq_len(reps), function(rep) {
  set.seed(rep)
  fit <- gp_sdd(pol$x_train, pol$y_train, kernel = hp$kernel, noise = hp$noise,
                solver = solver, control = control, samples = samples,
                threads = threads)
  s <- fit$seconds * 1000 / steps
  cat(sprintf("run %d: %.2f s per 1000 steps\n", rep, s))
  s
}, 0)
per_1000 <- stats::median(seconds)
products <- if (solver == "sgd") 2 else 1
madds <- products * 512 * n * (samples + 1) * 1000 / per_1000
cat(sprintf(paste0("%s on pol (n = %d), %d samples, %d thread%s: median %.2f s per 1000 ",
                   "steps (%d runs), %.3g multiply-adds per second in the product%s\n"),
            toupper(solver), n, samples, threads, if (threads == 1L) "" else "s",
            per_1000, reps, madds, if (products == 2) "s" else ""))

if (nzchar(out)) {
  row <- data.frame(solver = solver, n = n, samples = samples, threads = threads, steps = steps,
                    run = seq_len(reps), seconds_per_1000_steps = seconds,
                    sddgp = as.character(utils::packageVersion("sddgp")),
                    date = format(Sys.Date()), load_before = load_average(),
                    machine = machine_description())
  old <- if (file.exists(out)) utils::read.csv(out, stringsAsFactors = FALSE) else NULL
  invisible(append_result(old, row, out))
}
