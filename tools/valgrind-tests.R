# A subset of the test suite for R under valgrind (memcheck), as CRAN's
# additional checks run it.  From the repository root, after R CMD INSTALL:
#   R -d "valgrind --leak-check=full --error-exitcode=1" --vanilla -f tools/valgrind-tests.R
# Every solver's .Call entry is reached through these files (small sizes).
options(sddgp.threads = 2L)
Sys.setenv(NOT_CRAN = "false")  # skip_on_cran() keeps the slow tests out
library(testthat)
files <- file.path("tests", "testthat",
                   c("test-kernels.R", "test-solve.R", "test-prior.R", "test-predict.R"))
results <- as.data.frame(do.call(rbind, lapply(files, function(f)
  as.data.frame(test_file(f, package = "sddgp", load_package = "installed",
                          reporter = "summary")))))
failed <- sum(results$failed) + sum(results$error)
cat(sprintf("valgrind subset: %d passed, %d failed\n", sum(results$passed), failed))
if (failed > 0) quit(status = 1L)
