# Command-line options of the benchmark scripts (uci_table.R, peers.R):
# option("name", default) reads --name=value from the arguments,
# split_list() splits a comma-separated value.
args <- commandArgs(trailingOnly = TRUE)
option <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit)) sub(paste0("^--", name, "="), "", hit[1L]) else default
}
split_list <- function(x) strsplit(x, ",", fixed = TRUE)[[1L]]
