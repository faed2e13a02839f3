# Fingerprints, the inputs of the Tanimoto kernel (tanimoto()): validated
# before .Call, kept dense or sparse as given (a Matrix::dgCMatrix is never
# made dense), and turned into the C engine's form (src/tanimoto.h).

is_sparse_input <- function(x) inherits(x, "sparseMatrix")

# A classed error about fingerprints, naming the argument.
abort_fingerprints <- function(arg, problem) {
  sddgp_abort(sprintf("`%s` %s.", arg, problem),
              class = c("sddgp_error_fingerprints", "sddgp_error_argument"), arg = arg)
}

# Validated fingerprints: a double matrix (from a numeric or logical
# matrix or data frame) or a dgCMatrix (from any sparse Matrix), with
# non-negative finite entries and a nonzero entry in every row (T is 0/0
# between two all-zero rows).  `like` (predict(), simulate()): the fit,
# whose kind (binary or counts) and, for counts, storage (dense or sparse:
# the C engine compares points of one form) new fingerprints take.
check_fingerprints <- function(x, arg, like = NULL) {
  if (is_sparse_input(x)) {
    if (!requireNamespace("Matrix", quietly = TRUE)) {
      abort_fingerprints(arg, "is a sparse matrix, which needs the package Matrix")
    }
    if (!inherits(x, "dgCMatrix")) {
      x <- methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"),
                       "dMatrix")
    }
    values <- x@x
  } else {
    if (is.data.frame(x)) {
      ok <- vapply(x, function(v) is.numeric(v) || is.logical(v), logical(1L))
      if (!all(ok)) {
        abort_fingerprints(arg, sprintf("must have only numeric columns; %s %s not",
                                        paste0("`", names(x)[!ok], "`", collapse = ", "),
                                        if (sum(!ok) == 1L) "is" else "are"))
      }
      x <- as.matrix(x)
    }
    if (!is.matrix(x) || !(is.numeric(x) || is.logical(x))) {
      abort_fingerprints(arg, paste(
        "must be a numeric matrix of fingerprints (one row per molecule),",
        "a data frame of numeric columns or a sparse Matrix::dgCMatrix"))
    }
    storage.mode(x) <- "double"
    values <- x
  }
  if (nrow(x) < 1L || ncol(x) < 1L) abort_fingerprints(arg, "must have rows and columns")
  if (anyNA(values) || any(is.infinite(values))) {
    abort_fingerprints(arg, "contains NA, NaN or infinite values")
  }
  if (any(values < 0)) {
    abort_fingerprints(arg, "contains negative values: fingerprints are bits or counts")
  }
  empty <- which(fingerprint_sums(x) == 0)
  if (length(empty)) {
    abort_fingerprints(arg, sprintf(paste(
      "has %d all-zero row%s (first: row %d), where the Tanimoto similarity",
      "(0/0) is undefined"), length(empty), if (length(empty) == 1L) "" else "s",
      empty[1L]))
  }
  colnames(x) <- repair_names(colnames(x))
  if (is.null(like)) return(x)
  if (isTRUE(like$kernel$binary) && !fingerprints_binary(x)) {
    abort_fingerprints(arg, paste(
      "has counts (values other than 0 and 1), but the model was fitted to",
      "binary fingerprints"))
  }
  if (isTRUE(like$kernel$binary) || is_sparse_input(x) == is_sparse_input(like$x)) return(x)
  # Counts are compared in one form: new ones take the training data's.
  if (is_sparse_input(like$x)) methods::as(x, "CsparseMatrix") else as.matrix(x)
}

# Row sums, without making a sparse matrix dense.
fingerprint_sums <- function(x) {
  if (!is_sparse_input(x)) return(rowSums(x))
  sums <- numeric(nrow(x))
  rows <- x@i + 1L
  s <- rowsum(x@x, rows, reorder = TRUE)
  sums[as.integer(rownames(s))] <- s[, 1L]
  sums
}

# Are all entries 0 or 1?
fingerprints_binary <- function(x) {
  v <- if (is_sparse_input(x)) x@x else x
  all(v == 0 | v == 1)
}

# The C engine's form of fingerprints x (src/tanimoto.h): bit-packed rows
# when `binary` (the fit's kind; NULL: x's own), else counts, dense or as
# sparse rows.
tanimoto_points <- function(x, binary = NULL) {
  .Call(C_fingerprints, x, binary %||% fingerprints_binary(x))
}

# The popcount that binary fingerprints take: "avx512" (AVX-512's vector
# popcount, where the build and the CPU have it) or "portable"; `allow`
# FALSE forces the portable loop, TRUE allows the vector one again (tests
# and benchmarks compare the two; both give the same values).
tanimoto_popcount_path <- function(allow = NA) {
  if (.Call(C_tanimoto_popcount_path, as.logical(allow))) "avx512" else "portable"
}

# The constant prior mean of the Tanimoto model by generalised least
# squares, 1' H^-1 y / 1' H^-1 1 with H = K + diag(noise), on a random
# subset of `size` points (estimation_control()'s subset_size): the maximum
# likelihood estimate at the kernel and noise (standardised units, one per
# column of y).
estimate_prior_mean <- function(x, y, kernel, noise, weights, size, threads) {
  n <- nrow(x)
  rows <- if (n > size) sample.int(n, size) else seq_len(n)
  xs <- scale_inputs(x[rows, , drop = FALSE], kernel)
  H <- .Call(C_kernel_matrix, xs, xs, kernel_spec(kernel), threads)
  diag(H) <- diag(H) + if (is.null(weights)) noise else noise / weights[rows]
  R <- chol(H)
  sol <- backsolve(R, backsolve(R, cbind(1, as.matrix(y)[rows, , drop = FALSE]),
                                transpose = TRUE))
  colSums(sol[, -1L, drop = FALSE]) / sum(sol[, 1L])
}

# The solvers that take the Tanimoto kernel: not those built on continuous
# inputs (inducing points, Caratheodory recombination) or Fourier features.
check_tanimoto_solver <- function(solver, control) {
  if (solver %in% c("svgp", "dsg", "cabcd")) {
    sddgp_abort(sprintf(paste(
      "`solver` \"%s\" does not support the Tanimoto kernel; use \"sdd\",",
      "\"cholesky\", \"cg\" or \"sgd\"."), solver),
      class = c("sddgp_error_unsupported", "sddgp_error_argument"), arg = "solver")
  }
  if (identical(control$precision, "single")) {
    sddgp_abort(paste(
      "`precision` \"single\" does not support the Tanimoto kernel, whose",
      "values are computed in double precision."),
      class = c("sddgp_error_unsupported", "sddgp_error_argument"), arg = "precision")
  }
}

# Functions on a box of continuous inputs (Bayesian optimisation) take the
# stationary kernels only.
check_box_kernel <- function(kernel, fun) {
  if (is_tanimoto(kernel)) {
    sddgp_abort(sprintf(paste(
      "`kernel` \"tanimoto\" is a kernel on fingerprints; %s() searches a box",
      "of continuous inputs and needs a stationary kernel such as matern()."), fun),
      class = c("sddgp_error_unsupported", "sddgp_error_argument"), arg = "kernel")
  }
  kernel
}
