#' Kernels for Gaussian process regression
#'
#' Stationary covariance functions with automatic relevance determination
#' (one length scale per input column). With `r` the distance between two
#' inputs after dividing each coordinate by its length scale and \eqn{\sigma_f^2}{sigma_f^2}
#' the `variance`:
#' * Matern-1/2: \eqn{\sigma_f^2 \exp(-r)}{sigma_f^2 exp(-r)};
#' * Matern-3/2: \eqn{\sigma_f^2 (1 + \sqrt{3} r) \exp(-\sqrt{3} r)}{sigma_f^2 (1 + sqrt(3) r) exp(-sqrt(3) r)};
#' * Matern-5/2: \eqn{\sigma_f^2 (1 + \sqrt{5} r + 5 r^2 / 3) \exp(-\sqrt{5} r)}{sigma_f^2 (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r)};
#' * squared exponential: \eqn{\sigma_f^2 \exp(-r^2 / 2)}{sigma_f^2 exp(-r^2 / 2)}.
#'
#' Hyperparameters left `NULL` are estimated by [gp_sdd()] by maximising the
#' exact log marginal likelihood on a random subset of the data. A single
#' length scale is recycled to every input column. With `standardize = TRUE`
#' in [gp_sdd()] (the default), hyperparameters refer to the standardised
#' inputs and targets.
#'
#' @param nu Smoothness: 1/2, 3/2 or 5/2.
#' @param lengthscale Positive length scales: one per input column, a single
#'   value for all columns, or `NULL` to estimate them.
#' @param variance Positive kernel amplitude \eqn{\sigma_f^2}{sigma_f^2}, or `NULL` to
#'   estimate it.
#' @return An object of class `sddgp_kernel`.
#' @examples
#' matern(nu = 3/2)
#' matern(nu = 5/2, lengthscale = c(0.5, 2), variance = 1)
#' squared_exponential(lengthscale = 1)
#' @export
matern <- function(nu = 3/2, lengthscale = NULL, variance = NULL) {
  if (!is.numeric(nu) || length(nu) != 1L || is.na(nu) ||
      !any(abs(nu - c(0.5, 1.5, 2.5)) < 1e-12)) {
    abort_argument("nu", "must be 1/2, 3/2 or 5/2")
  }
  new_kernel(paste0("matern", c("12", "32", "52")[match(round(2 * nu), c(1, 3, 5))]),
             lengthscale, variance)
}

#' @rdname matern
#' @export
squared_exponential <- function(lengthscale = NULL, variance = NULL) {
  new_kernel("se", lengthscale, variance)
}

#' The Tanimoto kernel on molecular fingerprints
#'
#' The Tanimoto (Jaccard) similarity of fingerprints, and its MinMax form on
#' counts (the same formula), scaled by a variance \eqn{A}{A}:
#' \deqn{k(x, x') = A \frac{\sum_i \min(x_i, x'_i)}{\sum_i \max(x_i, x'_i)}.}{k(x, x') = A sum_i min(x_i, x'_i) / sum_i max(x_i, x'_i).}
#' Its inputs are non-negative: rows of 0/1 bits (a binary fingerprint such
#' as a Morgan/ECFP fingerprint of 1024 or 2048 bits) or of counts (a count
#' fingerprint), each with at least one nonzero entry. They are given to
#' [gp_sdd()] as a dense numeric matrix or as a sparse
#' `Matrix::dgCMatrix` (package Matrix, suggested), which is never made
#' dense: binary fingerprints, dense or sparse, are packed into 64-bit
#' words (128 bytes a row for 1024 bits) and compared by bit counts;
#' sparse counts are kept as sparse rows; dense counts are compared column
#' by column. The model is \eqn{y = \mu_0 + f(x) + \epsilon}{y = mu0 + f(x) + epsilon} with a constant prior mean
#' \eqn{\mu_0}{mu0}: there are no length scales, and [gp_sdd()] never
#' standardises fingerprint columns (`standardize` only scales the
#' targets). `"minmax"` is another name for the same kernel.
#'
#' Hyperparameters left `NULL` are estimated by [gp_sdd()]: the variance
#' and the noise by maximising the exact log marginal likelihood on a
#' random subset (see [estimation_control()]), then \eqn{\mu_0}{mu0} by
#' generalised least squares on that subset at those values (its maximum
#' likelihood estimate given them). Posterior samples draw their prior
#' functions from random hash features (Tripp et al. 2023): MinHash for
#' binary fingerprints and Ioffe's (2010) consistent weighted sampling for
#' counts, whose collision probabilities are the Tanimoto similarity. The
#' solvers `"svgp"`, `"dsg"` and `"cabcd"`, built on continuous inputs or
#' Fourier features, refuse this kernel, as does `precision = "single"`.
#'
#' @section From SMILES to fingerprints: The package rcdk (the Chemistry
#'   Development Kit, which needs Java; Debian's `r-cran-rcdk`) computes
#'   circular fingerprints, ECFP4 being RDKit's Morgan fingerprint of radius
#'   2. Their set bits go straight into a sparse matrix, one row per
#'   molecule:
#'   ```
#'   mols <- rcdk::parse.smiles(smiles)  # NULL where CDK cannot parse
#'   bits <- lapply(mols, function(m) rcdk::get.fingerprint(
#'     m, type = "circular", fp.mode = "bit", size = 1024,
#'     circular.type = "ECFP4")@bits)
#'   x <- Matrix::sparseMatrix(i = rep(seq_along(bits), lengths(bits)),
#'                             j = unlist(bits), x = 1,
#'                             dims = c(length(bits), 1024))
#'   fit <- gp_sdd(x, y, kernel = "tanimoto")
#'   ```
#'   `inst/benchmarks/molecules.R` does this for the molecules of Debian's
#'   `rdkit-data`.
#'
#' @param variance Positive kernel variance \eqn{A}{A} (of the standardised
#'   targets when `standardize = TRUE` in [gp_sdd()]), or `NULL` to estimate
#'   it.
#' @param mean The constant prior mean \eqn{\mu_0}{mu0} in the units of `y`,
#'   or `NULL` to estimate it.
#' @return An object of class `sddgp_kernel`.
#' @references Ralaivola, L., Swamidass, S. J., Saigo, H. and Baldi, P.
#'   (2005). Graph kernels for chemical informatics. *Neural Networks* 18.
#'
#'   Tripp, A., Bacallado, S., Singh, S. and Hernandez-Lobato, J. M. (2023).
#'   Tanimoto random features for scalable molecular machine learning.
#'   *NeurIPS*.
#'
#'   Ioffe, S. (2010). Improved consistent sampling, weighted minhash and L1
#'   sketching. *ICDM*.
#' @examples
#' set.seed(1)
#' x <- matrix(rbinom(200 * 64, 1, 0.2), 200)
#' x[rowSums(x) == 0, 1] <- 1
#' y <- rowSums(x[, 1:8]) + rnorm(200, sd = 0.3)
#' fit <- gp_sdd(x, y, kernel = tanimoto(), threads = 1)
#' fit
#' @export
tanimoto <- function(variance = NULL, mean = NULL) {
  if (!is.null(mean)) check_number(mean, "mean")
  kernel <- new_kernel("tanimoto", NULL, variance)
  kernel$mean <- if (!is.null(mean)) as.numeric(mean)
  kernel
}

# The kernel families, one row each: the name kernel objects carry, the
# code the C engine takes (its row of kernel_table in src/kernel.c;
# test-kernels.R checks that the two tables agree), the name print()
# shows and whether it is stationary (on scaled distances; the Tanimoto
# kernel is on fingerprints).
kernel_families <- data.frame(
  family = c("matern12", "matern32", "matern52", "se", "tanimoto"),
  code = c(1L, 2L, 3L, 4L, 5L),
  label = c("Matern-1/2", "Matern-3/2", "Matern-5/2", "squared exponential",
            "Tanimoto"),
  stationary = c(TRUE, TRUE, TRUE, TRUE, FALSE),
  stringsAsFactors = FALSE
)

# Kernel names as users may type them, mapped to the canonical family:
# each family's own name, then other names for some.
kernel_names <- c(structure(kernel_families$family, names = kernel_families$family),
                  squared_exponential = "se", rbf = "se", minmax = "tanimoto")

new_kernel <- function(family, lengthscale, variance) {
  if (!is.null(lengthscale)) check_positive_vector(lengthscale, "lengthscale")
  if (!is.null(variance)) {
    check_positive_vector(variance, "variance")
    if (length(variance) != 1L) abort_argument("variance", "must be a single number")
  }
  structure(list(family = family,
                 lengthscale = if (!is.null(lengthscale)) as.numeric(lengthscale),
                 variance = if (!is.null(variance)) as.numeric(variance)),
            class = "sddgp_kernel")
}

# A kernel from what the user passed as `kernel =`: a name or a kernel object.
as_kernel <- function(kernel, arg = "kernel") {
  if (inherits(kernel, "sddgp_kernel")) return(kernel)
  if (is.character(kernel) && length(kernel) == 1L && !is.na(kernel) &&
      kernel %in% names(kernel_names)) {
    return(new_kernel(kernel_names[[kernel]], NULL, NULL))
  }
  abort_argument(arg, sprintf(
    "must be a kernel object such as matern() or one of %s",
    paste0("\"", names(kernel_names), "\"", collapse = ", ")))
}

# Recycle a single length scale to d columns, or check there are d of them.
kernel_for_dimension <- function(kernel, d) {
  if (is_tanimoto(kernel)) {
    if (!is.null(kernel$lengthscale)) {
      abort_argument("lengthscale", "must be NULL for the Tanimoto kernel, which has none")
    }
    checked <- tanimoto(kernel$variance, kernel$mean)
    checked$binary <- kernel$binary
    return(checked)
  }
  # Re-checked here because kernel objects are plain lists users may edit.
  kernel <- new_kernel(kernel$family, kernel$lengthscale, kernel$variance)
  ls <- kernel$lengthscale
  if (!is.null(ls)) {
    if (length(ls) == 1L) ls <- rep(ls, d)
    if (length(ls) != d) {
      abort_argument("lengthscale", sprintf(
        "has %d values but the inputs have %d columns", length(ls), d))
    }
    kernel$lengthscale <- ls
  }
  kernel
}

kernel_is_complete <- function(kernel) {
  (is_tanimoto(kernel) || !is.null(kernel$lengthscale)) && !is.null(kernel$variance)
}

is_tanimoto <- function(kernel) identical(kernel$family, "tanimoto")

# The length scales of `kernel` on d input columns: none for the Tanimoto
# kernel.
n_lengthscales <- function(kernel, d) if (is_tanimoto(kernel)) 0L else d

# The list C_* entry points take: list(family = <code>, variance = <double>).
kernel_spec <- function(kernel) {
  code <- kernel_families$code[[match(kernel$family, kernel_families$family)]]
  list(family = code, variance = kernel$variance)
}

# Inputs divided by the length scales: the only form the C engine sees;
# for the Tanimoto kernel, fingerprints (tanimoto_points()).
scale_inputs <- function(x, kernel) {
  if (is_tanimoto(kernel)) return(tanimoto_points(x, kernel$binary))
  x * rep(1 / kernel$lengthscale, each = nrow(x))
}

kernel_label <- function(kernel) {
  at <- match(kernel$family, kernel_families$family)
  if (!is.na(at)) kernel_families$label[[at]]
}

#' @export
print.sddgp_kernel <- function(x, digits = 4, ...) {
  cat(kernel_label(x), "kernel\n")
  if (is_tanimoto(x)) {
    shown <- function(v) if (is.null(v)) "(to be estimated)" else format(v, digits = digits)
    cat("  variance:   ", shown(x$variance), "\n", sep = "")
    cat("  prior mean: ", shown(x$mean), "\n", sep = "")
    return(invisible(x))
  }
  cat("  variance:   ",
      if (is.null(x$variance)) "(to be estimated)" else format(x$variance, digits = digits),
      "\n", sep = "")
  cat("  lengthscale:",
      if (is.null(x$lengthscale)) " (to be estimated)" else
        paste("", format(x$lengthscale, digits = digits), collapse = ""),
      "\n", sep = "")
  invisible(x)
}
