#' Share an SDD solve between MPI processes
#'
#' `sddgp_mpi()` is the `parallel` argument of [gp_sdd()] (and of
#' [simulate.sddgp()], whose fresh draws are solved the same way) for a
#' script that runs as every process of an MPI job, `mpirun -np P Rscript
#' script.R`: each process loads the same data and calls the same
#' functions with the same seed, and each SDD solve is shared among them.
#' The kernel matrix's columns are split: each process owns whole tiles of
#' 256 training points (one piece in each of a few rounds, see below).
#' Every step, all processes draw the same batch from the counter-based
#' generator, sum its kernel rows against their own
#' points' coefficients, and pass the sums on in rank order; every process
#' then holds the same finished sums and updates the coefficients of its own
#' points (with their momentum and average). At the end of the solve each
#' broadcasts its coefficients in turn, so each one returns the whole fit
#' (save it from rank 0). Everything but the solve's kernel products and
#' updates (hyperparameter estimation, the warm start, predictions) is done
#' by every process alike.
#'
#' @section Identical results: One process sums each row of a product over
#'   its columns in a fixed order, each partial sum going on from the last.
#'   A sum of per-process partial sums (an allreduce) would round
#'   differently, so the processes pass the running sums along instead:
#'   rank 0 sums a group of 64 batch rows over its shard and sends them to
#'   rank 1, which goes on over its own, and so on, while rank 0 starts on
#'   the next group (a pipeline); the last rank broadcasts the finished
#'   sums. Each coefficient is updated by its owner exactly as one process
#'   updates it. The residual checks (every `check_every` steps) and the
#'   trace's metrics read coefficients of every process: their owners pass
#'   them on in rank order first, as they do the whole state at the end.
#'   The fit is then bit for bit that of one process with the same
#'   seed, whatever the number of processes. Per step and round each
#'   process sends \eqn{B (s + 1)}{B (s + 1)} numbers to the next, and all
#'   receive a broadcast of as many (batch size \eqn{B}{B}, \eqn{s}{s}
#'   samples).
#'   The pipeline idles while it fills, \eqn{P - 1}{P - 1} of its
#'   \eqn{G = B / 64}{G = B / 64} group slots per process (a ninth of a
#'   step for \eqn{B = 512}{B = 512} and two processes), so the points are
#'   instead cut into \eqn{R P}{R P} pieces, piece \eqn{q}{q} owned by
#'   rank \eqn{q \bmod P}{q mod P}, so that the sums go round the ranks
#'   \eqn{R}{R} times, in \eqn{G R}{G R} slots of which the fill takes at
#'   most a fifty-first (\eqn{G R \ge 50 (P - 1)}{G R >= 50 (P - 1)}, as
#'   long as each piece keeps a tile of 256 points, and at most 32 rounds),
#'   at the price of \eqn{R}{R} times the messages. Measured and modelled
#'   costs: `inst/benchmarks/distributed.R`.
#'
#' @section Limits: The dual coordinate estimator (SDD itself, and not
#'   SGD's primal one), double precision, the kernel evaluated on the fly
#'   (a cached kernel matrix is not shared), and no `time_limit` (the
#'   processes must stop at the same step). Every process still holds all
#'   \eqn{n (s + 1)}{n (s + 1)} coefficients, momenta and averages in
#'   memory (only its own are current until the end), and all the training
#'   points.
#'
#' @section Failures: A process that dies (killed, out of memory, an R
#'   error it does not catch) makes Open MPI's `mpirun` end the others and
#'   exit with a non-zero status. A message that fails (an error in Rmpi)
#'   ends its process with status 1, which does the same, rather than leave
#'   the others waiting for it forever. Either way the whole job stops
#'   within seconds; plain MPI cannot let the surviving processes go on, so
#'   they raise no R error to catch: rerun the script.
#'
#' @section Installing: On Debian or Ubuntu, `apt-get install r-cran-rmpi
#'   libopenmpi-dev` (Rmpi loads `libmpi.so`, which the `-dev` package
#'   provides), then run the script with `mpirun -np 4 Rscript script.R`
#'   (as root, add `--allow-run-as-root`; more processes than cores,
#'   `--oversubscribe`). Give each process `threads` of its own cores.
#'
#' @section Why Rmpi: Rmpi is in Debian (`r-cran-rmpi`) and installs on
#'   the R versions Debian ships; pbdMPI's current release needs R 4.5.
#'   Both pass R vectors to the same MPI library. A cluster of PSOCK
#'   workers needs no MPI, but its workers talk only to the master and only
#'   between calls, so each step would be a round trip from R: measured at
#'   88 ms a step between two local workers without samples (10 % of a
#'   step at n = 1M on two processes), against a few microseconds a message
#'   with Rmpi (`inst/benchmarks/distributed.R --part=psock`).
#'
#' @param comm The Rmpi communicator: 0 is `MPI_COMM_WORLD`, all the
#'   processes `mpirun` started.
#' @return An object of class `sddgp_mpi`.
#' @examples
#' \dontrun{
#' # script.R, run as mpirun -np 2 Rscript script.R
#' library(sddgp)
#' set.seed(1)
#' x <- matrix(runif(20000 * 3), ncol = 3)
#' y <- sin(4 * x[, 1]) + x[, 2] + rnorm(20000, sd = 0.1)
#' set.seed(2)
#' fit <- gp_sdd(x, y, kernel = matern(3/2, c(0.5, 0.5, 0.5), 1), noise = 0.01,
#'               control = sdd_control(), samples = 16, threads = 1,
#'               parallel = sddgp_mpi())
#' if (Rmpi::mpi.comm.rank(0) == 0) saveRDS(fit, "fit.rds")
#' Rmpi::mpi.finalize()
#' }
#' @export
sddgp_mpi <- function(comm = 0L) {
  if (!requireNamespace("Rmpi", quietly = TRUE)) {
    sddgp_abort(paste("sddgp_mpi() needs the package Rmpi: on Debian,",
                      "apt-get install r-cran-rmpi libopenmpi-dev."),
                class = "sddgp_error_dependency")
  }
  check_number(comm, "comm", lower = 0, integer = TRUE)
  comm <- as.integer(comm)
  structure(list(comm = comm, rank = as.integer(rmpi("mpi.comm.rank")(comm)),
                 size = as.integer(rmpi("mpi.comm.size")(comm))),
            class = "sddgp_mpi")
}

#' @export
print.sddgp_mpi <- function(x, ...) {
  cat(sprintf("<sddgp_mpi> rank %d of %d processes (communicator %d)\n",
              x$rank, x$size, x$comm))
  invisible(x)
}

# sdd_settings() for a solve shared by the processes of `mpi` on n points:
# the messages (src/shard_r.c calls them) and the settings the sharded
# loop supports.
mpi_settings <- function(settings, mpi, n) {
  if (settings$estimator != "dual_coordinates") {
    abort_argument("parallel", sprintf(paste(
      "is sddgp_mpi(), which shares the dual coordinate estimator's solve only,",
      "not \"%s\""), settings$estimator))
  }
  if (is.finite(settings$time_limit)) {
    abort_argument("parallel", paste(
      "is sddgp_mpi(), whose processes must stop at the same step: leave",
      "`time_limit` at Inf"))
  }
  if (settings$precision != "double") {
    abort_argument("parallel", "is sddgp_mpi(), which needs precision = \"double\"")
  }
  # Each process owns whole tiles of 256 points (src/shard.h).
  if (ceiling(n / 256) < mpi$size) {
    abort_argument("parallel", sprintf(paste(
      "is sddgp_mpi() with %d processes, each of which needs a tile of 256 of",
      "the %d points: use at most %d processes"), mpi$size, n, ceiling(n / 256)))
  }
  comm <- mpi$comm
  # Tag of the running sums passed on (the broadcast has none).
  tag <- 4242L
  # Sends do not wait for their receive (between rounds the sums go round
  # a ring, where blocking sends could wait for each other): each is an
  # Rmpi request, its vector kept here until the product's broadcast,
  # which every process reaches only after receiving all its sums, waits
  # for them all (src/shard.h keeps them within Rmpi's 2000 requests).
  pending <- list()
  isend <- rmpi("mpi.isend")
  recv <- rmpi("mpi.recv")
  waitall <- rmpi("mpi.waitall")
  bcast <- rmpi("mpi.bcast")
  # A message that fails here leaves the other processes waiting in MPI
  # calls that would never return: end this process with status 1, which
  # makes mpirun end the others and fail (MPI_Abort through Rmpi would
  # report success), rather than hang.
  or_abort <- function(f) function(x, peer) withCallingHandlers(f(x, peer), error = function(e) {
    message(sprintf("sddgp: a message of the sharded solve failed on process %d (%s); %s",
                    mpi$rank, conditionMessage(e), "ending the MPI job"))
    quit(save = "no", status = 1L, runLast = FALSE)
  })
  settings$use_cache <- FALSE
  settings$shard <- list(
    rank = mpi$rank, size = mpi$size,
    send = or_abort(function(x, peer) {
      pending[[length(pending) + 1L]] <<- x
      isend(x, 2L, peer, tag, comm = comm, request = length(pending) - 1L)
    }),
    recv = or_abort(function(x, peer) recv(x, 2L, peer, tag, comm = comm)),
    bcast = or_abort(function(x, peer) {
      if (length(pending)) waitall(length(pending))
      pending <<- list()
      bcast(x, 2L, rank = peer, comm = comm)
    }))
  settings
}

# An Rmpi function, looked up once rather than by `::` on every message.
# (Not `Rmpi::` in the code: R CMD check would then load Rmpi, whose MPI
# initialisation leaves files in the session's temporary directory.)
rmpi <- function(name) getExportedValue("Rmpi", name)
