# What the benchmark scripts (uci_table.R, peers.R, cholesky.R) share:
# option("name", default) reads --name=value from the arguments,
# split_list() splits a comma-separated value, load_average() notes how
# busy the machine was, append_result() records a result as soon as it
# exists (the long scripts resume from their CSV).
args <- commandArgs(trailingOnly = TRUE)
option <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit)) sub(paste0("^--", name, "="), "", hit[1L]) else default
}
split_list <- function(x) strsplit(x, ",", fixed = TRUE)[[1L]]

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
    for (col in setdiff(names(row), names(done))) done[[col]] <- NA
    for (col in setdiff(names(done), names(row))) row[[col]] <- NA
    row <- row[names(done)]
  }
  done <- rbind(done, row)
  dir.create(dirname(path), showWarnings = FALSE, recursive = TRUE)
  utils::write.csv(done, path, row.names = FALSE)
  done
}
