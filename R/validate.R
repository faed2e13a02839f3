# Validators of the user's arguments: each either returns the value
# (possibly normalised) or raises a classed error naming the argument
# (abort_argument(), conditions.R).

check_number <- function(x, arg, lower = -Inf, upper = Inf,
                         lower_open = FALSE, upper_open = FALSE,
                         integer = FALSE, call = NULL) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !is.finite(x)) {
    abort_argument(arg, "must be a single finite number", call)
  }
  if (integer && x != round(x)) {
    abort_argument(arg, sprintf("must be a whole number, not %s", format(x)), call)
  }
  below <- if (lower_open) x <= lower else x < lower
  above <- if (upper_open) x >= upper else x > upper
  if (below || above) {
    interval <- sprintf("%s%s, %s%s", if (lower_open) "(" else "[", format(lower),
                        format(upper), if (upper_open) ")" else "]")
    abort_argument(arg, sprintf("must lie in %s, not %s", interval, format(x)), call)
  }
  invisible(x)
}

# A solver's or the ascent's `time_limit`: Inf (none) or positive seconds,
# as a double.
check_time_limit <- function(time_limit) {
  if (!identical(time_limit, Inf)) {
    check_number(time_limit, "time_limit", lower = 0, lower_open = TRUE)
  }
  as.numeric(time_limit)
}

check_positive_vector <- function(x, arg, call = NULL) {
  if (!is.numeric(x) || length(x) == 0L) {
    abort_argument(arg, "must be a non-empty numeric vector", call)
  }
  if (anyNA(x) || any(!is.finite(x))) {
    abort_argument(arg, "must not contain NA, NaN or infinite values", call)
  }
  if (any(x <= 0)) {
    abort_argument(arg, sprintf("must be positive; element %d is %s",
                                which(x <= 0)[1L], format(x[x <= 0][1L])), call)
  }
  invisible(x)
}

# One of a set of strings, with the valid choices in the message.
check_choice <- function(x, arg, choices, call = NULL) {
  if (!is.character(x) || length(x) != 1L || is.na(x) || !x %in% choices) {
    shown <- if (is.character(x) && length(x) == 1L) sprintf("\"%s\"", x) else
      "that value"
    abort_argument(arg, sprintf("must be one of %s, not %s",
                                paste0("\"", choices, "\"", collapse = ", "),
                                shown), call)
  }
  x
}

# The first of several choices given as a default vector (match.arg style),
# then validated; with `partial`, a unique abbreviation also names a choice,
# as in match.arg().
choose_one <- function(x, arg, choices, partial = FALSE) {
  if (is.character(x) && identical(x, choices)) x <- choices[1L]
  if (partial && is.character(x) && length(x) == 1L && !is.na(x) && nzchar(x)) {
    at <- pmatch(x, choices)
    if (!is.na(at)) x <- choices[at]
  }
  check_choice(x, arg, choices)
}

# NULL, or positive finite weights, one per observation.
check_weights <- function(weights, n, against = "`x` has %d rows") {
  if (is.null(weights)) return(NULL)
  check_positive_vector(weights, "weights")
  if (length(weights) != n) {
    abort_argument("weights", sprintf(paste("has length %d but", against),
                                      length(weights), n))
  }
  as.numeric(weights)
}

# Weights of new observations (predict(), simulate()): positive, one or
# one per row of `newdata`.
check_new_weights <- function(weights, n) {
  check_positive_vector(weights, "weights")
  if (!length(weights) %in% c(1L, n)) {
    abort_argument("weights", sprintf("must have length 1 or %d (the rows of `newdata`), not %d",
                                      n, length(weights)))
  }
  weights
}

check_inputs <- function(x) {
  x <- as_input_matrix(x, "x")
  if (nrow(x) < 2L) abort_argument("x", sprintf("must have at least 2 rows, not %d", nrow(x)))
  if (ncol(x) < 1L) abort_argument("x", "must have at least one column")
  colnames(x) <- repair_names(colnames(x))
  check_finite_rows(x, "x")
}

# Input column names made unique, so that predict() can match `newdata` by
# name: an empty or NA name becomes V<position> (as in as.data.frame()), and
# repeats get suffixes .1, .2, ... (make.unique(), as data.frame() does).
# predict() repairs the names of `newdata` alike before matching.
repair_names <- function(nm) {
  if (is.null(nm)) return(NULL)
  blank <- is.na(nm) | !nzchar(nm)
  nm[blank] <- paste0("V", which(blank))
  make.unique(nm)
}

# A double matrix from a numeric matrix, vector (one column) or data frame
# with only numeric columns; shared by the fit (`x`) and predict (`newdata`).
as_input_matrix <- function(x, arg) {
  if (is.data.frame(x)) {
    numeric_cols <- vapply(x, is.numeric, logical(1L))
    if (!all(numeric_cols)) {
      abort_argument(arg, sprintf(
        "must have only numeric columns; %s %s not numeric (use the formula interface to expand factors)",
        paste0("`", names(x)[!numeric_cols], "`", collapse = ", "),
        if (sum(!numeric_cols) == 1L) "is" else "are"))
    }
    x <- as.matrix(x)
  }
  if (is.numeric(x) && is.null(dim(x))) x <- matrix(x, ncol = 1L)
  if (!is.matrix(x) || !is.numeric(x)) {
    abort_argument(arg, "must be a numeric matrix or data frame")
  }
  storage.mode(x) <- "double"
  x
}

# With allow_na, missing values pass (predict()'s na.action deals with
# them) and only infinite ones are an error.
check_finite_rows <- function(x, arg, allow_na = FALSE) {
  rows <- which(rowSums(if (allow_na) is.infinite(x) else !is.finite(x)) > 0)
  if (length(rows)) {
    abort_argument(arg, sprintf(
      "contains %s values in %d row%s (first: row %d)",
      if (allow_na) "infinite" else "NA, NaN or infinite",
      length(rows), if (length(rows) == 1L) "" else "s", rows[1L]))
  }
  x
}

# A numeric vector, or for several outputs a matrix with one column each
# (named y1, y2, ... when unnamed).
check_targets <- function(y, n, against = "`x` has %d rows") {
  if (is.data.frame(y) && ncol(y) == 1L) y <- y[[1L]]
  if (is.data.frame(y) && all(vapply(y, is.numeric, logical(1L)))) y <- as.matrix(y)
  if (!is.numeric(y) || !is.null(dim(y)) && !(length(dim(y)) == 2L && ncol(y) >= 1L)) {
    abort_argument("y", "must be a numeric vector, or a numeric matrix with one column per output")
  }
  if (is.matrix(y) && ncol(y) > 1L) {
    storage.mode(y) <- "double"
    colnames(y) <- repair_names(colnames(y) %||% paste0("y", seq_len(ncol(y))))
    rownames(y) <- NULL
  } else {
    y <- as.numeric(y)
  }
  if (NROW(y) != n) {
    abort_argument("y", sprintf(paste(if (is.matrix(y)) "has %d rows but" else
      "has length %d but", against), NROW(y), n))
  }
  bad <- which(!is.finite(y))
  if (length(bad)) {
    abort_argument("y", sprintf("contains %d NA, NaN or infinite value%s (first: element %d)",
                                length(bad), if (length(bad) == 1L) "" else "s", bad[1L]))
  }
  y
}

check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) abort_argument(arg, "must be TRUE or FALSE")
  x
}

check_dots_empty <- function(...) {
  if (...length() > 0L) {
    nm <- names(list(...))
    shown <- if (is.null(nm)) "unnamed" else paste0("`", nm[nzchar(nm)], "`", collapse = ", ")
    abort_argument("...", sprintf("must be empty; unused argument(s): %s", shown))
  }
}

# Largest magnitude of the (standardised) training inputs, in length
# scales, that the kernel computations take: squared distances and norms
# stay far below overflow, and the Matern kernels' polynomial factors times
# their smallest exp (3e-308) negligible.
max_lengthscales <- 1e100

check_input_magnitude <- function(xs, kernel) {
  span <- apply(abs(xs), 2L, max) / kernel$lengthscale
  if (any(span > max_lengthscales)) {
    j <- which.max(span)
    abort_argument("x", sprintf(paste(
      "reaches %s length scales in column %d, beyond %s, where squared distances",
      "overflow; use `standardize = TRUE` or larger length scales"),
      format(signif(span[j], 3)), j, format(max_lengthscales)))
  }
}
