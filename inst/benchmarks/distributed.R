# A sharded SDD solve (sddgp_mpi()): per-step communication against
# compute, measured for P = 1 and 2 processes on this machine, and a model
# of the speed-up for P = 2..64 on a cluster.
#
#   Rscript inst/benchmarks/distributed.R --part=measure            (P = 1)
#   mpirun --allow-run-as-root -np 2 Rscript inst/benchmarks/distributed.R --part=measure
#   Rscript inst/benchmarks/distributed.R --part=model
#   Rscript inst/benchmarks/distributed.R --part=psock
#     [--n=100000] [--samples=0,64] [--steps=20] [--threads=1] [--latency=50e-6]
#     [--bandwidth=1.25e9] [--out=inst/extdata/benchmarks/distributed.csv]
#     [--variant=owner_update_fill50] [--fill=50]
#
# --variant labels the build measured (and the one modelled): rows of
# earlier builds stay in the CSV under their own label ("replicated_update":
# every process updated all the coefficients each step).  --fill is the
# build's SHARD_FILL (src/shard.h), which sets its rounds: a build with
# PKG_CPPFLAGS=-DSHARD_FILL=0 runs one round, the first rule.
#
# measure: n points in d = 8 dimensions (Matern-3/2), batches of 512, the
# posterior mean and `samples` sample systems, `steps` steps of the C loop
# (tolerance 0, no warm start), each process on `threads` threads.  Per
# step: the wall time, and the time spent in the message callbacks (sends,
# receives, the broadcast, including the waits for the other rank: the
# pipeline's fill and drain, and, on a shared machine, the other rank's
# slowness), rank 0's and the least over the ranks, both without the
# gathering of the state at the end (once per solve, gather_seconds, left
# out of the step time too); the time of the update
# of the coefficients, their momentum and average (rank 0's: its own n / P
# (s + 1), the whole of them in the "replicated_update" rows); and, with P = 2,
# the cost of one message of each kind alone (a group of 64 rows' running
# sums from rank 0 to 1, and the broadcast of all B (s + 1) sums) through
# Rmpi, as the solve's callbacks send them, the least of 5 blocks of 100.
# The time in messages split step by step (each process's work, the step
# less its time in the callbacks, gathered at the end): the step beyond
# the slowest process's work (beyond_slowest_seconds: the messages, the
# pipeline's fill and what imbalance within a step adds, at most what
# equally fast cores would see), and rank 0's wait for a slower process
# (waiting_slower_seconds; the two add up to about rank 0's time in
# messages), from the end of step 1's product to the last's.  A checksum of the solution shows that P = 2 gives P = 1's bits.  The
# figures of inst/benchmarks/README.md: --n=100000 and --n=1000000 apart,
# each P under `flock` of its own.
#
# model: the step time on P processes of a cluster, from the measured
# single-process step c(n) and its update D(n) (both proportional to n,
# from the largest n measured, of `variant`) and messages of latency `latency` and
# `bandwidth` bytes per second (10 GbE, 50 us), plus the measured software
# cost per message (R and Rmpi calls):
#   G = B / 64 groups and R rounds (shard_rounds() of src/shard.c: the
#   least with G R >= 20 (P - 1), at most a tile per piece and 64); a
#   group's compute on one piece u = (c(n) - D(n)) / (P G R); the
#   pipeline runs G R + P - 1 slots, each u plus one message of 64 (s + 1)
#   doubles; then a broadcast of B (s + 1) doubles, ceil(log2 P) hops;
#   then each process's update of its own coordinates, D(n) / P (D(n) for
#   "replicated_update", where every process updated them all).
#   T(P) = (G R + P - 1) (u + m) + ceil(log2 P) b + D(n) / P,
#   speed-up c(n) / T(P).  The residual probes' exchange (every
#   check_every steps) and the final gather of the state (once) are left
#   out.
#
# psock: what a fallback on a PSOCK cluster (parallel::makePSOCKcluster())
# would pay per step at the least, for comparison with Rmpi's messages.
# PSOCK workers talk to the master only, and only between calls, so the
# step loop would have to run in R on the master: per step, the master
# collects each of 2 local workers' B (s + 1) partial sums, adds them and
# sends the total back to both (two calls per worker), the least of 5
# blocks of 20 steps.
source(file.path("inst", "benchmarks", "options.R"))
suppressPackageStartupMessages(library(sddgp))
part <- choice_option("part", c("measure", "model", "psock"))
ns <- as.numeric(split_list(option("n", "100000")))
samples <- as.integer(split_list(option("samples", "0,64")))
steps <- as.integer(option("steps", "20"))
threads <- as.integer(option("threads", "1"))
latency <- as.numeric(option("latency", "50e-6"))
bandwidth <- as.numeric(option("bandwidth", "1.25e9"))
variant <- option("variant", "owner_update_fill50")
out_csv <- option("out", file.path("inst", "extdata", "benchmarks", "distributed.csv"))
d <- 8L
batch <- 512L
group <- 64L  # SHARD_GROUP of src/shard.h
fill <- as.numeric(option("fill", "50"))  # SHARD_FILL

# shard_rounds() of src/shard.c for batches of `batch` rows.
rounds_for <- function(n, P) {
  max(1, min(ceiling(fill * (P - 1) / (batch / group)), floor(ceiling(n / 256) / P), 32))
}

mpi <- if (part == "measure" && nzchar(Sys.getenv("OMPI_COMM_WORLD_SIZE"))) sddgp_mpi()
processes <- if (is.null(mpi)) 1L else mpi$size
rank0 <- is.null(mpi) || mpi$rank == 0L

# The C loop's problem and settings for n points and s samples.
loop_case <- function(n, s) {
  set.seed(1)
  x <- (matrix(stats::runif(n * d), n, d) - 0.5) * 2
  y <- sin(3 * x[, 1]) + x[, 2] * x[, d] + stats::rnorm(n, sd = 0.1)
  kernel <- matern(3/2, rep(0.8, d), 1)
  set.seed(2)
  prior <- if (s > 0) sddgp:::draw_prior(kernel, d, 2000L, s)
  problem <- sddgp:::new_problem(x, y, kernel, 0.01, prior, threads)
  control <- sdd_control(iterations = steps, batch_size = batch, tolerance = 0,
                         check_every = steps, cache = "never", warm_start = "none")
  settings <- sddgp:::sdd_settings(control, problem, "dual", "coordinates", 100L,
                                   rep(1, s + 1L))
  marks <- NULL
  if (!is.null(mpi)) {
    settings <- sddgp:::mpi_settings(settings, mpi, n)
    marks <- step_marks(settings$shard)
    settings$shard <- marks$shard
  }
  list(problem = problem, settings = settings, marks = marks)
}

# The message callbacks of `shard`, timed: get() gives, at the return of
# each broadcast (the end of a step's product, one a step; then the last
# probe's and the final gathering's), the time and the seconds spent in
# the callbacks so far.
step_marks <- function(shard) {
  inside <- 0
  at <- spent <- numeric()
  now <- function() as.numeric(Sys.time())
  timed <- function(f, mark) {
    force(f)
    force(mark)
    function(x, peer) {
      t0 <- now()
      out <- f(x, peer)
      t1 <- now()
      inside <<- inside + (t1 - t0)
      if (mark) {
        at <<- c(at, t1)
        spent <<- c(spent, inside)
      }
      out
    }
  }
  shard$send <- timed(shard$send, FALSE)
  shard$recv <- timed(shard$recv, FALSE)
  shard$bcast <- timed(shard$bcast, TRUE)
  list(shard = shard, get = function() list(at = at, spent = spent))
}

# Per step (from the end of step 1's product to that of the last's): each
# process's own work, the step less its time in the callbacks, gathered
# from every process.  The step's time beyond the slowest process's work
# is what the messages and the pipeline's fill cost; the slowest's work
# beyond the process's own is its wait for a slower one.  Seconds per
# step, averaged.
step_split <- function(marks, steps) {
  m <- marks$get()
  k <- seq_len(steps)
  step <- diff(m$at[k])
  work <- step - diff(m$spent[k])
  works <- matrix(Rmpi::mpi.allgather(work, 2L, double(length(work) * mpi$size), comm = 0L),
                  ncol = mpi$size)
  slowest <- apply(works, 1L, max)
  c(beyond_slowest = mean(step - slowest), waiting_slower = mean(slowest - work))
}

# Seconds per message from rank 0 to 1 (len doubles), and per broadcast
# from the last rank, through Rmpi as the callbacks call it: the least of
# 5 blocks of 100 (the machine is shared, and this is the software's cost).
message_seconds <- function(len, reps = 100L) {
  if (is.null(mpi) || mpi$size < 2L) return(c(NA_real_, NA_real_))
  x <- double(len)
  y <- double(len * batch / group)
  timed <- function(f) {
    Rmpi::mpi.barrier(0L)
    start <- Sys.time()
    for (i in seq_len(reps)) f()
    Rmpi::mpi.barrier(0L)
    as.numeric(Sys.time() - start, units = "secs") / reps
  }
  send <- function() {
    if (mpi$rank == 0L) Rmpi::mpi.send(x, 2L, 1L, 7L, comm = 0L)
    else if (mpi$rank == 1L) x <<- Rmpi::mpi.recv(x, 2L, 0L, 7L, comm = 0L)
  }
  bcast <- function() y <<- Rmpi::mpi.bcast(y, 2L, rank = mpi$size - 1L, comm = 0L)
  c(min(replicate(5L, timed(send))), min(replicate(5L, timed(bcast))))
}

if (part == "measure") {
  rows <- NULL
  for (n in ns) for (s in samples) {
    case <- loop_case(n, s)
    if (!is.null(mpi)) Rmpi::mpi.barrier(0L)
    load <- load_average()
    elapsed <- system.time(res <- sddgp:::sdd_loop_call(case$problem, case$settings,
                                                        threads))[["elapsed"]]
    # The gathering of the state at the end, once per solve, apart.
    gather <- res$gather_seconds
    waits <- if (is.null(mpi)) res$comm_seconds - gather
             else Rmpi::mpi.allgather(res$comm_seconds - gather, 2L, double(mpi$size), comm = 0L)
    split <- if (is.null(mpi)) c(0, 0) else step_split(case$marks, res$iterations)
    msg <- message_seconds(group * (s + 1L))
    rows <- rbind(rows, data.frame(
      part = "measured", machine = cpu_model(), n = n, d = d, samples = s, batch = batch,
      processes = processes, threads = threads,
      rounds = rounds_for(n, processes), steps = res$iterations,
      step_seconds = (elapsed - gather) / res$iterations,
      comm_wait_seconds = (res$comm_seconds - gather) / res$iterations,
      comm_wait_least_seconds = min(waits) / res$iterations,
      beyond_slowest_seconds = split[[1L]], waiting_slower_seconds = split[[2L]],
      update_seconds = res$update_seconds / res$iterations, variant = variant,
      gather_seconds = gather,
      message_seconds = msg[1L], bcast_seconds = msg[2L],
      checksum = sprintf("%.17g", sum(res$alpha * seq_along(res$alpha))),
      load = load, latency = NA, bandwidth = NA, speedup = NA, efficiency = NA))
    rm(case, res)
    gc()
  }
  if (rank0) {
    print(rows[, c("n", "samples", "processes", "step_seconds", "comm_wait_seconds",
                   "comm_wait_least_seconds", "beyond_slowest_seconds",
                   "waiting_slower_seconds", "update_seconds", "gather_seconds", "message_seconds",
                   "bcast_seconds", "checksum", "load")])
    replace_rows(rows, out_csv, c("part", "machine", "n", "samples", "processes", "threads",
                                  "variant"))
  }
  if (!is.null(mpi)) invisible(Rmpi::mpi.finalize())
} else if (part == "psock") {
  cl <- parallel::makePSOCKcluster(2L)
  rows <- NULL
  for (s in samples) {
    parallel::clusterCall(cl, function(len) assign("sums", double(len), globalenv()),
                          batch * (s + 1L))
    step <- function() {
      total <- Reduce(`+`, parallel::clusterEvalQ(cl, sums))
      parallel::clusterCall(cl, function(v) {
        assign("sums", v, globalenv())
        NULL
      }, total)
    }
    timed <- function(reps = 20L) {
      start <- Sys.time()
      for (i in seq_len(reps)) step()
      as.numeric(Sys.time() - start, units = "secs") / reps
    }
    load <- load_average()
    rows <- rbind(rows, data.frame(
      part = "psock", machine = cpu_model(), n = NA, d = d, samples = s, batch = batch,
      processes = 2L, threads = 1L, rounds = NA, steps = 100L, step_seconds = NA,
      comm_wait_seconds = min(replicate(5L, timed())), comm_wait_least_seconds = NA,
      beyond_slowest_seconds = NA, waiting_slower_seconds = NA, update_seconds = NA,
      variant = "psock_hub", gather_seconds = NA, message_seconds = NA, bcast_seconds = NA,
      checksum = NA, load = load, latency = NA, bandwidth = NA, speedup = NA,
      efficiency = NA))
  }
  parallel::stopCluster(cl)
  print(rows[, c("samples", "comm_wait_seconds", "load")])
  replace_rows(rows, out_csv, c("part", "machine", "samples", "variant"))
} else {
  measured <- utils::read.csv(out_csv, stringsAsFactors = FALSE)
  measured <- measured[measured$part == "measured" & measured$variant == variant, ]
  rows <- NULL
  for (s in samples) {
    one <- measured[measured$samples == s & measured$processes == 1L, ]
    two <- measured[measured$samples == s & measured$processes == 2L, ]
    if (!nrow(one) || !nrow(two)) stop("measure P = 1 and 2 with ", s, " samples first")
    one <- one[which.max(one$n), ]
    two <- two[which.max(two$n), ]
    # Compute per point and step on one process, the part of it that is
    # the update, and the software cost of a message (measured between
    # local processes: memory copies and the R and Rmpi calls).
    per_point <- one$step_seconds / one$n
    update_per_point <- one$update_seconds / one$n
    owners <- variant != "replicated_update"
    soft_send <- two$message_seconds
    soft_bcast <- two$bcast_seconds
    G <- batch / group
    for (n in c(1e5, 1e6, 1e7)) for (P in c(2L, 4L, 8L, 16L, 32L, 64L)) {
      c1 <- per_point * n
      D <- update_per_point * n
      own <- if (owners) D / P else D
      R <- rounds_for(n, P)
      u <- (c1 - D) / (P * G * R)
      m <- soft_send + latency + 8 * group * (s + 1) / bandwidth
      b <- soft_bcast + latency + 8 * batch * (s + 1) / bandwidth
      step <- (G * R + P - 1) * (u + m) + ceiling(log2(P)) * b + own
      rows <- rbind(rows, data.frame(
        part = "model", machine = one$machine, n = n, d = d, samples = s, batch = batch,
        processes = P, threads = one$threads, rounds = R, steps = NA, step_seconds = step,
        comm_wait_seconds = step - (c1 - D) / P - own, comm_wait_least_seconds = NA,
        update_seconds = own, variant = variant, message_seconds = m, bcast_seconds = b,
        checksum = NA, load = NA, latency = latency, bandwidth = bandwidth,
        speedup = c1 / step, efficiency = c1 / step / P))
    }
  }
  print(rows[rows$processes %in% c(2L, 16L, 64L),
             c("n", "samples", "processes", "step_seconds", "speedup", "efficiency")])
  replace_rows(rows, out_csv, c("part", "machine", "latency", "bandwidth", "variant"))
}
