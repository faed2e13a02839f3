#' Read a UCI regression data set and one of its train/test splits
#'
#' Reads a data set stored in the layout of the public `uci_datasets`
#' collection (Wang et al. 2019 preparation), as used in the benchmarks of
#' the stochastic dual descent paper: a folder per data set holding
#' `data.csv.gz` (comma-separated, no header; the last column is the target,
#' all other columns are inputs, none is dropped) and `test_mask.csv.gz` (one
#' row per data row and ten 0/1 columns; column `split + 1` marks the test
#' rows of the 0-based split `split`, about 10% of the rows). The training
#' set is every row that is not a test row.
#'
#' The data are returned as stored, in original units. The published
#' hyperparameters ([uci_hyperparameters()]) refer to inputs and targets
#' z-scored with the training split's mean and population standard deviation,
#' which is what [gp_sdd()] does with `standardize = TRUE`.
#'
#' Only `pol` (15,000 rows, 26 inputs; UCI Machine Learning Repository,
#' distributed in `uci_datasets` under the MIT licence) is bundled with the
#' package. Other data sets are read from `path`.
#'
#' @param dataset Name of the data set: the name of its sub-folder, such as
#'   `"pol"`, `"elevators"`, `"bike"`, `"protein"` or `"keggdirected"`.
#' @param split The 0-based split, a whole number from 0 to 9. The paper
#'   reports splits 0 to 4.
#' @param path `NULL` for the copy bundled with the package (only `"pol"`),
#'   or the folder that holds one sub-folder per data set, as in the
#'   `uci_datasets` layout: `file.path(path, dataset, "data.csv.gz")`. A
#'   second data file `data1.csv.gz`, present for `song`, is appended.
#' @return A list of class `sddgp_uci` with elements `x_train` and `x_test`
#'   (numeric matrices with columns `x1`, ..., `xd`), `y_train` and `y_test`
#'   (numeric vectors), `dataset` and `split`.
#' @seealso [uci_hyperparameters()] for the hyperparameters published for
#'   each data set and split.
#' @examples
#' pol <- read_uci("pol", split = 0)
#' pol
#' dim(pol$x_train)
#' @export
read_uci <- function(dataset = "pol", split = 0, path = NULL) {
  check_dataset_name(dataset)
  check_number(split, "split", lower = 0, upper = 9, integer = TRUE)
  split <- as.integer(split)
  dir <- uci_dataset_dir(dataset, path)

  data_file <- file.path(dir, "data.csv.gz")
  mask_file <- file.path(dir, "test_mask.csv.gz")
  for (f in c(data_file, mask_file)) {
    if (!file.exists(f)) {
      sddgp_abort(sprintf(
        "Data set \"%s\": file %s does not exist.", dataset, f),
        class = "sddgp_error_data", file = f)
    }
  }
  data <- read_csv_matrix(data_file)
  extra <- file.path(dir, "data1.csv.gz")
  if (file.exists(extra)) {
    more <- read_csv_matrix(extra)
    if (ncol(more) != ncol(data)) {
      sddgp_abort(sprintf("Data set \"%s\": %s has %d columns but %s has %d.",
                          dataset, extra, ncol(more), data_file, ncol(data)),
                  class = "sddgp_error_data", file = extra)
    }
    data <- rbind(data, more)
  }
  if (ncol(data) < 2L) {
    sddgp_abort(sprintf(
      "Data set \"%s\": %s needs at least 2 columns (inputs and a target), not %d.",
      dataset, data_file, ncol(data)), class = "sddgp_error_data", file = data_file)
  }
  mask <- read_csv_matrix(mask_file)
  if (nrow(mask) != nrow(data)) {
    sddgp_abort(sprintf(
      "Data set \"%s\": %s has %d rows but the data have %d.",
      dataset, mask_file, nrow(mask), nrow(data)),
      class = "sddgp_error_data", file = mask_file)
  }
  if (ncol(mask) < split + 1L) {
    sddgp_abort(sprintf(
      "Data set \"%s\": %s has %d split columns, so there is no split %d.",
      dataset, mask_file, ncol(mask), split),
      class = "sddgp_error_data", file = mask_file)
  }
  test <- mask[, split + 1L]
  if (anyNA(test) || !all(test == 0 | test == 1)) {
    sddgp_abort(sprintf(
      "Data set \"%s\": column %d of %s must hold only 0 and 1.",
      dataset, split + 1L, mask_file), class = "sddgp_error_data", file = mask_file)
  }
  test <- test == 1
  if (!any(test) || all(test)) {
    sddgp_abort(sprintf(
      "Data set \"%s\": split %d has %d test rows out of %d.",
      dataset, split, sum(test), length(test)),
      class = "sddgp_error_data", file = mask_file)
  }

  d <- ncol(data) - 1L
  x <- data[, seq_len(d), drop = FALSE]
  colnames(x) <- paste0("x", seq_len(d))
  y <- data[, d + 1L]
  structure(list(x_train = x[!test, , drop = FALSE], y_train = y[!test],
                 x_test = x[test, , drop = FALSE], y_test = y[test],
                 dataset = dataset, split = split),
            class = "sddgp_uci")
}

#' @export
print.sddgp_uci <- function(x, ...) {
  cat(sprintf("UCI data set \"%s\", split %d: %d training and %d test points, %d inputs\n",
              x$dataset, x$split, nrow(x$x_train), nrow(x$x_test),
              ncol(x$x_train)))
  invisible(x)
}

#' Published hyperparameters for the UCI benchmark data sets
#'
#' The fixed Matern-3/2 hyperparameters used by the stochastic dual descent
#' paper for each UCI data set and split: one length scale per input column,
#' the signal scale \eqn{\sigma_f}{sigma_f} and the noise scale \eqn{\sigma_n}{sigma_n}. They
#' were obtained by maximising the exact marginal likelihood on subsets of
#' the data, and refer to inputs and targets z-scored with the training
#' split's mean and population standard deviation.
#'
#' The bundled file covers pol, elevators, bike, protein, keggdirected,
#' 3droad, song, buzz and houseelectric, splits 0 to 4. 3droad split 3 is
#' missing (NaN) in the source.
#'
#' @param dataset Name of the data set, as in [read_uci()].
#' @param split The 0-based split.
#' @param file `NULL` for the file bundled with the package, or the path of
#'   a CSV file with columns `dataset`, `split`, `noise_scale`,
#'   `signal_scale` and `length_scale` (length scales joined with `;`).
#' @return A list with `kernel`, a Matern-3/2 kernel object ([matern()]) with
#'   the published length scales and variance \eqn{\sigma_f^2}{sigma_f^2}, and `noise`,
#'   the likelihood variance \eqn{\sigma_n^2}{sigma_n^2}.
#' @seealso [read_uci()].
#' @examples
#' hp <- uci_hyperparameters("pol", split = 0)
#' hp$kernel
#' hp$noise
#' @export
uci_hyperparameters <- function(dataset = "pol", split = 0, file = NULL) {
  check_dataset_name(dataset)
  check_number(split, "split", lower = 0, integer = TRUE)
  if (is.null(file)) {
    file <- system.file("extdata", "uci_hparams.csv", package = "sddgp")
  } else if (!is.character(file) || length(file) != 1L || is.na(file)) {
    abort_argument("file", "must be NULL or a single file path")
  }
  if (!nzchar(file) || !file.exists(file)) {
    sddgp_abort(sprintf("Hyperparameter file %s does not exist.",
                        if (nzchar(file)) file else "uci_hparams.csv (bundled)"),
                class = "sddgp_error_data", file = file)
  }
  tab <- utils::read.csv(file, colClasses = "character", strip.white = TRUE)
  needed <- c("dataset", "split", "noise_scale", "signal_scale", "length_scale")
  missing <- setdiff(needed, names(tab))
  if (length(missing)) {
    sddgp_abort(sprintf("Hyperparameter file %s lacks the column(s) %s.",
                        file, paste(missing, collapse = ", ")),
                class = "sddgp_error_data", file = file)
  }
  rows <- tab[tab$dataset == dataset, , drop = FALSE]
  if (nrow(rows) == 0L) {
    abort_argument("dataset", sprintf(
      "has no published hyperparameters; known data sets are %s",
      paste0("\"", unique(tab$dataset), "\"", collapse = ", ")))
  }
  row <- rows[suppressWarnings(as.numeric(rows$split)) == split, , drop = FALSE]
  if (nrow(row) == 0L) {
    abort_argument("split", sprintf(
      "is %s, but \"%s\" has hyperparameters only for split(s) %s",
      format(split), dataset, paste(rows$split, collapse = ", ")))
  }
  row <- row[1L, ]
  noise_scale <- suppressWarnings(as.numeric(row$noise_scale))
  signal_scale <- suppressWarnings(as.numeric(row$signal_scale))
  lengthscale <- suppressWarnings(as.numeric(strsplit(row$length_scale, ";",
                                                      fixed = TRUE)[[1L]]))
  values <- c(noise_scale, signal_scale, lengthscale)
  if (length(lengthscale) == 0L || anyNA(values) || any(!is.finite(values)) ||
      any(values <= 0)) {
    sddgp_abort(sprintf(
      "The published hyperparameters of \"%s\" split %s are missing or invalid (NaN in the source); use another split.",
      dataset, format(split)), class = "sddgp_error_data", file = file)
  }
  list(kernel = matern(nu = 3/2, lengthscale = lengthscale,
                       variance = signal_scale^2),
       noise = noise_scale^2)
}

check_dataset_name <- function(dataset) {
  if (!is.character(dataset) || length(dataset) != 1L || is.na(dataset) ||
      !nzchar(dataset)) {
    abort_argument("dataset", "must be a single non-empty string such as \"pol\"")
  }
  invisible(dataset)
}

# The folder of one data set: bundled (path = NULL) or under `path`.
uci_dataset_dir <- function(dataset, path) {
  if (is.null(path)) {
    bundled <- system.file("extdata", package = "sddgp")
    if (!identical(dataset, "pol") || !nzchar(bundled)) {
      sddgp_abort(sprintf(paste0(
        "Data set \"%s\" is not bundled with sddgp (only \"pol\" is). ",
        "Pass `path`, the folder that holds one sub-folder per data set ",
        "(the uci_datasets layout, e.g. <path>/%s/data.csv.gz)."),
        dataset, dataset), class = "sddgp_error_argument", arg = "path")
    }
    return(file.path(bundled, dataset))
  }
  if (!is.character(path) || length(path) != 1L || is.na(path)) {
    abort_argument("path", "must be NULL or a single folder path")
  }
  if (!dir.exists(path)) {
    abort_argument("path", sprintf("is %s, which is not an existing folder", path))
  }
  dir <- file.path(path, dataset)
  if (!dir.exists(dir)) {
    sddgp_abort(sprintf(paste0(
      "Data set \"%s\": folder %s does not exist. `path` must be the folder ",
      "that holds one sub-folder per data set (the uci_datasets layout)."),
      dataset, dir), class = "sddgp_error_data", file = dir)
  }
  dir
}

# A headerless numeric CSV (possibly gzipped) as a double matrix, by scan().
read_csv_matrix <- function(file) {
  con <- gzfile(file, "r")
  on.exit(close(con))
  first <- readLines(con, n = 1L, warn = FALSE)
  if (length(first) == 0L) {
    sddgp_abort(sprintf("File %s is empty.", file),
                class = "sddgp_error_data", file = file)
  }
  ncol <- length(strsplit(first, ",", fixed = TRUE)[[1L]])
  values <- tryCatch(
    c(scan(text = first, what = double(), sep = ",", quiet = TRUE),
      scan(con, what = double(), sep = ",", quiet = TRUE)),
    error = function(e) {
      sddgp_abort(sprintf("File %s is not a numeric comma-separated table: %s",
                          file, conditionMessage(e)),
                  class = "sddgp_error_data", file = file)
    })
  if (length(values) %% ncol != 0L) {
    sddgp_abort(sprintf("File %s has rows of unequal length.", file),
                class = "sddgp_error_data", file = file)
  }
  matrix(values, ncol = ncol, byrow = TRUE)
}
