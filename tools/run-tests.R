# Runs the package's tests against the installed sddgp, prints
# "N passed, N failed[, N skipped]" and exits non-zero on any failure.
# Usage (from the repository root, after R CMD INSTALL .):
#   Rscript tools/run-tests.R
options(sddgp.threads = 2L)
# The full suite: also the tests that skip_on_cran() keeps off CRAN.
Sys.setenv(NOT_CRAN = "true")
library(testthat)
results <- as.data.frame(test_dir("tests/testthat", package = "sddgp",
                                  load_package = "installed",
                                  reporter = ProgressReporter$new(show_praise = FALSE),
                                  stop_on_failure = FALSE))
passed <- sum(results$passed)
failed <- sum(results$failed) + sum(results$error)
skipped <- sum(results$skipped)
cat(sprintf("%d passed, %d failed%s\n", passed, failed,
            if (skipped > 0) sprintf(", %d skipped", skipped) else ""))
quit(status = if (failed > 0) 1L else 0L)
