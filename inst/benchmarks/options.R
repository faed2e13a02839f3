# What the benchmark scripts share: option("name", default) reads
# --name=value from the arguments, split_list() splits a comma-separated
# value, choice_option() checks one against the known values,
# machine_description() and load_average() say where and how busy,
# append_result() records a result as soon as it exists (the long scripts
# resume from their CSV), replace_rows() replaces one machine's rows,
# engine_inputs() makes the inputs of the engine benchmarks,
# ascent_problem() the small problems of the estimation benchmarks,
# stamp() adds where and when a row was measured.
args <- commandArgs(trailingOnly = TRUE)
option <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit)) sub(paste0("^--", name, "="), "", hit[1L]) else default
}
split_list <- function(x) strsplit(x, ",", fixed = TRUE)[[1L]]
# The comma-separated values of --name=, each one of `known` (all of them
# by default).
choice_option <- function(name, known) {
  chosen <- split_list(option(name, paste(known, collapse = ",")))
  if (length(bad <- setdiff(chosen, known))) {
    stop("unknown --", name, ": ", paste(bad, collapse = ", "), "; choose from ",
         paste(known, collapse = ", "), call. = FALSE)
  }
  chosen
}

# The CPU's model name, and a line with it, the logical CPUs and the R
# version.  The machines this project runs on change from session to
# session (an Intel Xeon, an AMD EPYC), and times compare only within one
# CPU model.
cpu_model <- function() {
  info <- tryCatch(readLines("/proc/cpuinfo"), error = function(e) character())
  model <- grep("^model name", info, value = TRUE)
  if (length(model)) sub("^model name\\s*:\\s*", "", model[[1L]]) else Sys.info()[["machine"]]
}
machine_description <- function() {
  sprintf("%s, %d logical CPUs; %s", cpu_model(), parallel::detectCores(), R.version.string)
}

# 1-minute load average: the machine is shared, and wall times mean little
# without it (CPU time suffers less).
load_average <- function() {
  if (file.exists("/proc/loadavg")) {
    as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1L]][1L])
  } else NA_real_
}

# `done` (NULL when empty) with `row` appended, written to `path`.  Columns
# either lacks are filled with NA: older rows predate newer columns.
append_result <- function(done, row, path) {
  if (!is.null(done)) {
    for (col in setdiff(names(row), names(done))) done[[col]] <- rep(NA, nrow(done))
    for (col in setdiff(names(done), names(row))) row[[col]] <- rep(NA, nrow(row))
    row <- row[names(done)]
  }
  done <- rbind(done, row)
  dir.create(dirname(path), showWarnings = FALSE, recursive = TRUE)
  utils::write.csv(done, path, row.names = FALSE)
  done
}

# `rows` written to `path` in place of the rows there that agree with them
# in every column of `keys` (say the machine and precision), keeping the
# rest: a rerun on one machine leaves another machine's figures alone.
replace_rows <- function(rows, path, keys) {
  old <- if (file.exists(path)) utils::read.csv(path, stringsAsFactors = FALSE) else NULL
  if (!is.null(old)) {
    key <- function(x) do.call(paste, c(lapply(keys, function(k) as.character(x[[k]])), sep = "\r"))
    old <- old[!key(old) %in% key(rows), , drop = FALSE]
  }
  invisible(append_result(old, rows, path))
}

# The engine benchmarks' problem (engine.R, engine_ab.R): n points and a
# batch of B of them, Matern-3/2 with unit length scale.  Scaled inputs
# uniform on [0, sqrt(d)]^d: typical distances d / sqrt(6), so beyond d = 8
# most kernel values are tiny (the branch-free kernel code takes the same
# time whatever the values, but relative differences at d = 90 compare
# near-zero products).  Centred, as gp_sdd() centres its inputs (centred
# points get their squared distances from norms and inner products; see
# section Single precision of ?sdd_control).
engine_inputs <- function(n, d, B) {
  x <- (matrix(stats::runif(n * d), n, d) - 0.5) * sqrt(d)
  list(x = x, batch = x[sample.int(n, B), , drop = FALSE],
       spec = sddgp:::kernel_spec(sddgp::matern(3/2, 1, 1)))
}

# The small ascent problems of estimation_warm.R --part=ascent and
# estimation_path.R: 500 points uniform on [0, 1]^3, y = sin(3 x1) + x2^2 -
# x3 / 2 plus noise of sd `noise_sd`, from seed 100 + `seed`; `fit_with`
# fits them exactly with hyperparameters from `estimation`, from `seed`.
ascent_problem <- function(noise_sd, seed) {
  set.seed(100 + seed)
  x <- matrix(stats::runif(500 * 3), 500)
  y <- sin(3 * x[, 1]) + x[, 2]^2 - 0.5 * x[, 3] + stats::rnorm(500, sd = noise_sd)
  list(x = x, y = y, fit_with = function(estimation) {
    set.seed(seed)
    suppressWarnings(sddgp::gp_sdd(x, y, solver = "cholesky", threads = 1,
                                   estimation = estimation))
  })
}

# `row` with the columns that say where and when it was measured.
stamp <- function(row) {
  cbind(row, load = load_average(), date = format(Sys.time(), "%Y-%m-%d %H:%M"),
        sddgp = as.character(utils::packageVersion("sddgp")),
        machine = machine_description())
}

# Split `split` of a UCI data set's training points, standardised as
# gp_sdd() does, with the paper's hyperparameters: list(x, y, hp).
uci_standardized <- function(dataset, split, path) {
  data <- read_uci(dataset, split = split, path = path)
  sc <- sddgp:::standardization(data$x_train, data$y_train, TRUE)
  list(x = sddgp:::standardize_inputs(data$x_train, sc),
       y = sddgp:::standardize_targets(data$y_train, sc),
       hp = uci_hyperparameters(dataset, split = split))
}
