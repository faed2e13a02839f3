# Kernel objects and the C kernel engine against the textbook formulas.

kernel_c <- function(x1, x2, ker, threads = 2) {
  .Call(sddgp:::C_kernel_matrix, sddgp:::scale_inputs(x1, ker),
        sddgp:::scale_inputs(x2, ker), sddgp:::kernel_spec(ker), threads)
}

test_that("the R and C kernel tables agree", {
  fams <- sddgp:::kernel_families
  expect_identical(.Call(sddgp:::C_kernel_families),
                   structure(fams$code, names = fams$family))
})

test_that("the C kernel matrix matches the formulas for every family", {
  x1 <- make_inputs(41, 3, seed = 71)
  x1[41, ] <- x1[1, ]  # a repeated point
  x2 <- make_inputs(300, 3, seed = 72)  # more than one tile of columns
  ls <- c(0.3, 0.7, 1.5)
  for (fam in stationary_families()) {
    ker <- sddgp:::new_kernel(fam, ls, 2.5)
    K <- kernel_c(x1, x2, ker)
    expect_equal(dim(K), c(41L, 300L))
    expect_equal(K, ref_kernel(x1, x2, fam, ls, 2.5), tolerance = 1e-12)
    Kxx <- kernel_c(x1, x1, ker)
    expect_equal(diag(Kxx), rep(2.5, 41))
    expect_equal(Kxx[1, 41], 2.5)  # identical points
    expect_equal(Kxx, t(Kxx))
    expect_identical(kernel_c(x1, x2, ker, threads = 1), K)
  }
  # Hand values at scaled distance r = 1 (one unit of length scale).
  one <- function(ker) kernel_c(matrix(0, 1, 1), matrix(2, 1, 1), ker)[1, 1]
  expect_equal(one(matern(1/2, 2, 1)), exp(-1))
  expect_equal(one(matern(3/2, 2, 1)), (1 + sqrt(3)) * exp(-sqrt(3)))
  expect_equal(one(matern(5/2, 2, 1)), (1 + sqrt(5) + 5 / 3) * exp(-sqrt(5)))
  expect_equal(one(squared_exponential(2, 1)), exp(-1 / 2))
})

test_that("centred inputs: distances from norms are exact at zero and accurate elsewhere", {
  # Centred points (as gp_sdd() makes them) get their squared distances from
  # norms and inner products, except under Matern-1/2; points far from the
  # origin for their spread get differences.  Near-duplicates (1e-7 apart)
  # are where the cancellation would show.
  ls <- c(0.3, 0.7, 1.5, 0.5, 1)
  x1 <- make_inputs(41, 5, seed = 81) - 0.5
  x2 <- make_inputs(300, 5, seed = 82) - 0.5
  x1[41, ] <- x1[1, ]
  x1[2, ] <- x2[3, ] + 1e-7
  for (shift in c(0, 100)) {
    y1 <- x1 + shift
    y2 <- x2 + shift
    for (fam in stationary_families()) {
      ker <- sddgp:::new_kernel(fam, ls, 2.5)
      info <- paste(fam, shift)
      K <- kernel_c(y1, y2, ker)
      # Absolute error against the variance, the scale of the largest
      # values.  Shifted, the coordinates (about 300 length scales) carry
      # rounding errors of 6e-14 into any method; from norms (of about 5e5)
      # the distances would be wrong by about 1e-10.
      expect_lt(max(abs(K - ref_kernel(y1, y2, fam, ls, 2.5))) / 2.5,
                if (shift == 0) 1e-13 else 1e-11, label = info)
      Kxx <- kernel_c(y1, y1, ker)
      expect_identical(diag(Kxx), rep(2.5, 41), info = info)
      expect_identical(Kxx[1, 41], 2.5, info = info)
      expect_identical(Kxx, t(Kxx), info = info)
      # Products read the same kernel values.
      A <- withr::with_seed(83, matrix(rnorm(300 * 2), 300))
      KA <- .Call(sddgp:::C_kernel_matmul, sddgp:::scale_inputs(y1, ker),
                  sddgp:::scale_inputs(y2, ker), sddgp:::kernel_spec(ker), A,
                  "double", 2L)
      expect_equal(KA, K %*% A, tolerance = 1e-13, info = info)
    }
  }
})

test_that("kernel-matrix products match the dense product", {
  x1 <- make_inputs(37, 2, seed = 73)
  x2 <- make_inputs(260, 2, seed = 74)
  ker <- matern(3/2, c(0.2, 0.4), 1.1)
  # Up to 20 columns: the mean's layout, then groups of eight and the rest
  # one at a time (37 rows: two whole chunks of 16 and a ragged one).
  for (ncol in c(1, 3, 4, 6, 9, 20)) {
    A <- withr::with_seed(ncol, matrix(rnorm(260 * ncol), 260))
    KA <- function(precision) {
      .Call(sddgp:::C_kernel_matmul, sddgp:::scale_inputs(x1, ker),
            sddgp:::scale_inputs(x2, ker), sddgp:::kernel_spec(ker), A, precision, 2L)
    }
    ref <- ref_kernel(x1, x2, "matern32", c(0.2, 0.4), 1.1) %*% A
    expect_equal(KA("double"), ref, tolerance = 1e-12)
    # Float kernel values (each within ~1e-7 of the variance), double sums.
    err <- max(abs(KA("single") - ref)) / max(abs(ref))
    expect_lt(err, 1e-6)
    expect_gt(err, 1e-12)
  }
})

test_that("a column of a product has the same bits whatever columns come with it", {
  # The mean with or without samples, and the first samples whatever their
  # number: columns are summed in two layouts (groups of eight and single
  # columns), which must agree to the bit.
  x1 <- make_inputs(40, 3, seed = 78)
  x2 <- make_inputs(700, 3, seed = 79)
  ker <- matern(5/2, c(0.3, 0.5, 0.4), 0.9)
  A <- withr::with_seed(80, matrix(rnorm(700 * 21), 700))
  for (precision in c("double", "single")) {
    KA <- function(cols) {
      .Call(sddgp:::C_kernel_matmul, sddgp:::scale_inputs(x1, ker),
            sddgp:::scale_inputs(x2, ker), sddgp:::kernel_spec(ker),
            A[, cols, drop = FALSE], precision, 2L)
    }
    all_cols <- KA(1:21)
    for (k in c(1, 2, 5, 9, 10, 17)) {
      expect_identical(KA(seq_len(k)), all_cols[, seq_len(k), drop = FALSE],
                       info = paste(precision, k))
    }
    # A sample column moved into a group of eight or out of it.
    expect_identical(KA(c(1, 12))[, 2], all_cols[, 12], info = precision)
    expect_identical(KA(c(1, 20, 3:9))[, 2], all_cols[, 20], info = precision)
  }
})

test_that("long products run in slabs of rows with the same bits as row by row", {
  # 8000 training points and 400 columns of A: slabs of 256 rows (checked
  # for Ctrl-C in between), so 600 rows take three.
  x1 <- make_inputs(600, 2, seed = 75)
  x2 <- make_inputs(8000, 2, seed = 76)
  ker <- matern(3/2, c(0.2, 0.4), 1.1)
  A <- withr::with_seed(77, matrix(rnorm(8000 * 400), 8000))
  KA <- function(x) {
    .Call(sddgp:::C_kernel_matmul, sddgp:::scale_inputs(x, ker),
          sddgp:::scale_inputs(x2, ker), sddgp:::kernel_spec(ker), A, "double", 2L)
  }
  all_rows <- KA(x1)
  for (i in c(1, 256, 257, 512, 513, 600)) {
    row <- KA(x1[i, , drop = FALSE])
    expect_identical(all_rows[i, , drop = FALSE], row, info = i)
    reference <- ref_kernel(x1[i, , drop = FALSE], x2, "matern32", c(0.2, 0.4), 1.1) %*% A
    expect_equal(row, unname(reference), tolerance = 1e-12, info = i)
  }
})

test_that("matern() and squared_exponential() build kernel objects", {
  k <- matern(5/2, c(1, 2), 3)
  expect_s3_class(k, "sddgp_kernel")
  expect_equal(k$family, "matern52")
  expect_identical(k$lengthscale, c(1, 2))
  expect_identical(k$variance, 3)
  expect_equal(matern(1/2)$family, "matern12")
  expect_equal(matern()$family, "matern32")
  expect_equal(matern(1.5)$family, "matern32")
  expect_null(matern()$lengthscale)
  expect_null(matern()$variance)
  se <- squared_exponential(2L, 1L)
  expect_equal(se$family, "se")
  expect_identical(se$lengthscale, 2)  # stored as double
  expect_identical(se$variance, 1)
})

test_that("kernel constructors reject bad hyperparameters with classed errors", {
  for (bad in list(1, 2, 0, "3/2", NA, c(0.5, 1.5), NULL)) {
    expect_error(matern(bad), class = "sddgp_error_argument",
                 regexp = "`nu` must be 1/2, 3/2 or 5/2")
  }
  for (bad in list(0, -1, c(1, -2), NA, c(1, NA), Inf, "1", numeric(0), NaN)) {
    expect_error(matern(3/2, lengthscale = bad), class = "sddgp_error_argument",
                 regexp = "`lengthscale`")
    expect_error(squared_exponential(lengthscale = bad), class = "sddgp_error_argument",
                 regexp = "`lengthscale`")
  }
  expect_error(matern(3/2, c(1, -2)), regexp = "element 2 is -2")
  for (bad in list(0, -1, NA, Inf, "1", c(1, 2))) {
    expect_error(matern(3/2, 1, variance = bad), class = "sddgp_error_argument",
                 regexp = "`variance`")
  }
  expect_error(matern(3/2, 1, c(1, 2)), regexp = "`variance` must be a single number")
})

test_that("kernel names map to families and bad names list the choices", {
  fams <- c(matern12 = "matern12", matern32 = "matern32", matern52 = "matern52",
            se = "se", tanimoto = "tanimoto", squared_exponential = "se", rbf = "se",
            minmax = "tanimoto")
  for (nm in names(fams)) {
    k <- sddgp:::as_kernel(nm)
    expect_equal(k$family, fams[[nm]])
    expect_null(k$lengthscale)
  }
  k <- matern(3/2, 1, 1)
  expect_identical(sddgp:::as_kernel(k), k)
  for (bad in list("matern", "SE", NA_character_, c("se", "rbf"), 1, NULL)) {
    expect_error(sddgp:::as_kernel(bad), class = "sddgp_error_argument",
                 regexp = "`kernel` must be a kernel object such as matern\\(\\) or one of \"matern12\", \"matern32\", \"matern52\", \"se\", \"tanimoto\", \"squared_exponential\", \"rbf\", \"minmax\"")
  }
})

test_that("a single length scale is recycled and the count is checked", {
  k <- sddgp:::kernel_for_dimension(matern(3/2, 0.5, 1), 4)
  expect_identical(k$lengthscale, rep(0.5, 4))
  expect_identical(sddgp:::kernel_for_dimension(matern(3/2, c(1, 2), 1), 2)$lengthscale,
                   c(1, 2))
  expect_null(sddgp:::kernel_for_dimension(matern(), 3)$lengthscale)
  expect_error(sddgp:::kernel_for_dimension(matern(3/2, c(1, 2), 1), 3),
               class = "sddgp_error_argument",
               regexp = "`lengthscale` has 2 values but the inputs have 3 columns")
  expect_true(sddgp:::kernel_is_complete(matern(3/2, 1, 1)))
  expect_false(sddgp:::kernel_is_complete(matern(3/2, 1)))
  expect_false(sddgp:::kernel_is_complete(matern(3/2, variance = 1)))
  expect_equal(sddgp:::scale_inputs(matrix(c(1, 2, 3, 4), 2), matern(3/2, c(2, 4), 1)),
               matrix(c(0.5, 1, 0.75, 1), 2))
})

test_that("kernels print their family and hyperparameters", {
  expect_output(print(matern(5/2, c(0.5, 2), 1.5)),
                "Matern-5/2 kernel\n  variance:   1.5\n  lengthscale: 0.5 2")
  expect_output(print(matern(1/2)), "Matern-1/2 kernel.*variance:   \\(to be estimated\\).*lengthscale: \\(to be estimated\\)")
  expect_output(print(squared_exponential(1, 2)), "squared exponential kernel")
  expect_output(expect_invisible(print(matern(3/2, 1, 1))))
})
