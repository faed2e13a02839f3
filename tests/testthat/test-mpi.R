# sddgp_mpi(): an SDD solve shared by the processes of an MPI job gives the
# single process's fit, predictions and fresh draws, bit for bit, with
# even (2 processes) and uneven (3) shards of the 1000 points' 4 tiles, and
# with the 5000 points' 20 tiles dealt in many rounds (batches of 100 are 2
# groups: 10 rounds of 2 processes, 6 of 3), and with a step size that
# diverges and is halved; a killed or failing process ends the job.

skip_on_cran()
# Not loaded here: MPI_Init in this process would leave settings in the
# environment that confuse the mpirun it starts.
skip_if(!nzchar(system.file(package = "Rmpi")), "Rmpi is not installed")
mpirun <- Sys.which("mpirun")
skip_if(!nzchar(mpirun), "mpirun is not installed")

# Runs mpi/<script> with `args` as np processes under mpirun (or as one
# without MPI when np is 0); its output, with attribute "status" when it
# failed (124 when it ran past `timeout` seconds).
run_script <- function(np, script, args, timeout = 240) {
  cmd <- if (np == 0L) file.path(R.home("bin"), "Rscript") else mpirun
  args <- c(if (np > 0L) c("--allow-run-as-root", "--oversubscribe", "-np", np,
                           file.path(R.home("bin"), "Rscript")),
            shQuote(test_path("mpi", script)), args)
  withr::with_envvar(
    c(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep), OMP_NUM_THREADS = "1"),
    suppressWarnings(system2(cmd, args, stdout = TRUE, stderr = TRUE, timeout = timeout)))
}

# Runs mpi/fit.R on n points and returns what rank 0 saved.
run_fit <- function(np, n = 1000L, iterations = 2000L, step_fraction = NULL) {
  out <- tempfile(fileext = ".rds")
  log <- run_script(np, "fit.R", c(shQuote(out), if (np > 0L) "mpi" else "none", n,
                                   iterations, step_fraction))
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

test_that("a diverging step size is found and halved as one process does", {
  # Each process updates only its own coefficients: the divergence (a
  # residual too large, or an iterate no longer finite) must be judged
  # alike by all of them, at the same step as by one process.
  single <- run_fit(0L, 1000L, 300L, step_fraction = 10)
  expect_gt(single$backoffs, 0L)
  for (np in 2:3) {
    shared <- run_fit(np, 1000L, 300L, step_fraction = 10)
    for (part in names(single)) expect_identical(shared[[part]], single[[part]], label = part)
  }
})

test_that("a process killed or failing mid-solve ends the whole job instead of hanging", {
  # Open MPI's mpirun ends the other processes when one dies, and a failed
  # message aborts the job: it fails within seconds (the solve would take
  # minutes), nothing saved.
  for (how in c("kill", "fail")) {
    out <- tempfile(fileext = ".rds")
    started <- Sys.time()
    log <- run_script(2L, "broken.R", c(shQuote(out), how), timeout = 120)
    seconds <- as.numeric(Sys.time() - started, units = "secs")
    status <- attr(log, "status")
    expect_false(is.null(status) || status == 0L || status == 124L, label = how)
    expect_lt(seconds, 60, label = how)
    expect_false(file.exists(out), label = how)
  }
  expect_match(log, "message of the sharded solve failed on process 1", all = FALSE)
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
