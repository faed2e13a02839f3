# sddgp_mpi(): an SDD solve shared by the processes of an MPI job gives the
# single process's fit, predictions and fresh draws, bit for bit, with
# even (2 processes) and uneven (3) shards of the 1000 points' 4 tiles, and
# with the 5000 points' 20 tiles dealt in many rounds (batches of 100 are 2
# groups: 10 rounds of 2 processes, 6 of 3).

skip_on_cran()
# Not loaded here: MPI_Init in this process would leave settings in the
# environment that confuse the mpirun it starts.
skip_if(!nzchar(system.file(package = "Rmpi")), "Rmpi is not installed")
mpirun <- Sys.which("mpirun")
skip_if(!nzchar(mpirun), "mpirun is not installed")

# Runs mpi/fit.R on n points (as P processes under mpirun, or as one
# without MPI) and returns what rank 0 saved.
run_fit <- function(np, n = 1000L, iterations = 2000L) {
  out <- tempfile(fileext = ".rds")
  script <- test_path("mpi", "fit.R")
  cmd <- if (np == 0L) file.path(R.home("bin"), "Rscript") else mpirun
  args <- c(if (np > 0L) c("--allow-run-as-root", "--oversubscribe", "-np", np,
                           file.path(R.home("bin"), "Rscript")),
            shQuote(script), shQuote(out), if (np > 0L) "mpi" else "none", n, iterations)
  log <- withr::with_envvar(
    c(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep), OMP_NUM_THREADS = "1"),
    suppressWarnings(system2(cmd, args, stdout = TRUE, stderr = TRUE, timeout = 240)))
  if (!file.exists(out)) stop(paste(c("the run saved nothing:", log), collapse = "\n"))
  readRDS(out)
}

test_that("mpirun -np 2 and -np 3 give the single process's results exactly", {
  single <- run_fit(0L)
  expect_identical(single$status, "tolerance")
  for (np in 2:3) {
    shared <- run_fit(np)
    for (part in names(single)) expect_identical(shared[[part]], single[[part]], label = part)
  }
})

test_that("many rounds of pieces give the single process's results exactly", {
  single <- run_fit(0L, 5000L, 300L)
  for (np in 2:3) {
    shared <- run_fit(np, 5000L, 300L)
    for (part in names(single)) expect_identical(shared[[part]], single[[part]], label = part)
  }
})

test_that("sddgp_mpi() refuses what the sharded solve does not support", {
  mpi <- structure(list(comm = 0L, rank = 0L, size = 2L), class = "sddgp_mpi")
  settings <- list(estimator = "dual_coordinates", time_limit = Inf, precision = "double")
  expect_error(sddgp:::mpi_settings(modifyList(settings, list(estimator = "dual_features")),
                                    mpi, 1000), class = "sddgp_error_argument")
  expect_error(sddgp:::mpi_settings(modifyList(settings, list(time_limit = 5)), mpi, 1000),
               class = "sddgp_error_argument")
  expect_error(sddgp:::mpi_settings(modifyList(settings, list(precision = "single")), mpi, 1000),
               class = "sddgp_error_argument")
  expect_error(sddgp:::mpi_settings(settings, mpi, 256), class = "sddgp_error_argument")
  expect_named(sddgp:::mpi_settings(settings, mpi, 1000)$shard,
               c("rank", "size", "send", "recv", "bcast"))
})
