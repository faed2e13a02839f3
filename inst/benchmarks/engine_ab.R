# Two builds of sddgp compared on the engine's product K[I, :] A (as in
# engine.R: B = 512 rows, n columns, Matern-3/2, 2 threads), alternating
# build by build in fresh R processes, so that the shared machine's slow
# spells fall on both.
#
#   Rscript inst/benchmarks/engine_ab.R --libs=LIB_A,LIB_B [--rounds=3]
#       [--n=100000] [--dims=8,26] [--reps=5]
#
# LIB_A and LIB_B are library folders each holding an installed sddgp
# (R CMD INSTALL -l LIB). Each process times every (d, columns of A,
# precision) as the median of --reps calls; the script prints, per
# configuration, each build's kernel entries per second in every round,
# their medians over the rounds and the ratio B / A of the medians.
source(file.path("inst", "benchmarks", "options.R"))
libs <- split_list(option("libs", ""))
if (length(libs) != 2L) stop("give two library folders: --libs=LIB_A,LIB_B")
rounds <- as.integer(option("rounds", "3"))
n <- as.integer(option("n", "100000"))
dims <- as.integer(split_list(option("dims", "8,26")))
reps <- as.integer(option("reps", "5"))

one_build <- function(lib) {
  code <- sprintf('
    suppressPackageStartupMessages(library(sddgp, lib.loc = "%s"))
    source(file.path("inst", "benchmarks", "options.R"))
    n <- %d; B <- 512L
    set.seed(1)
    for (d in c(%s)) {
      inputs <- engine_inputs(n, d, B)
      for (cols in c(1L, 65L)) {
        A <- matrix(rnorm(n * cols), n, cols)
        for (precision in c("double", "single")) {
          f <- function() .Call(sddgp:::C_kernel_matmul, inputs$batch, inputs$x,
                                inputs$spec, A, precision, 2L)
          f()
          t <- median(vapply(seq_len(%d), function(i) system.time(f())[["elapsed"]], 0))
          cat(sprintf("%%d,%%d,%%s,%%.6g\\n", d, cols, precision, B * n / t))
        }
      }
    }', lib, n, paste(dims, collapse = ", "), reps)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)),
                 stdout = TRUE)
  f <- do.call(rbind, strsplit(grep("^[0-9]", out, value = TRUE), ","))
  data.frame(d = as.integer(f[, 1]), columns = as.integer(f[, 2]), precision = f[, 3],
             entries_per_s = as.numeric(f[, 4]))
}

runs <- list()
for (round in seq_len(rounds)) for (b in 1:2) {
  runs[[length(runs) + 1L]] <- cbind(one_build(libs[[b]]), build = c("A", "B")[b],
                                     round = round)
}
runs <- do.call(rbind, runs)
cat(sprintf("A = %s, B = %s; n = %d, B = 512, 2 threads, %d rounds; %s\n",
            libs[[1]], libs[[2]], n, rounds, machine_description()))
for (key in unique(paste(runs$d, runs$columns, runs$precision))) {
  at <- runs[paste(runs$d, runs$columns, runs$precision) == key, ]
  a <- at$entries_per_s[at$build == "A"]
  b <- at$entries_per_s[at$build == "B"]
  cat(sprintf("d = %2d, %2d column(s), %s: A %s (median %.3g), B %s (median %.3g), B / A %.2f\n",
              at$d[1], at$columns[1], at$precision[1],
              paste(sprintf("%.3g", a), collapse = ", "), stats::median(a),
              paste(sprintf("%.3g", b), collapse = ", "), stats::median(b),
              stats::median(b) / stats::median(a)))
}
