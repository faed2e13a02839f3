# read_uci() and uci_hyperparameters() against independent base-R reads of
# the bundled files.

extdata <- function(...) system.file("extdata", ..., package = "sddgp")

test_that("the bundled pol files are present", {
  expect_true(file.exists(extdata("pol", "data.csv.gz")))
  expect_true(file.exists(extdata("pol", "test_mask.csv.gz")))
  expect_true(file.exists(extdata("uci_hparams.csv")))
})

pol0 <- read_uci("pol", split = 0)
raw <- as.matrix(utils::read.csv(gzfile(extdata("pol", "data.csv.gz")),
                                 header = FALSE))
mask <- as.matrix(utils::read.csv(gzfile(extdata("pol", "test_mask.csv.gz")),
                                  header = FALSE))

test_that("pol split 0 has the published sizes and structure", {
  expect_s3_class(pol0, "sddgp_uci")
  expect_identical(pol0$dataset, "pol")
  expect_identical(pol0$split, 0L)
  expect_identical(dim(pol0$x_train), c(13500L, 26L))
  expect_identical(dim(pol0$x_test), c(1500L, 26L))
  expect_length(pol0$y_train, 13500L)
  expect_length(pol0$y_test, 1500L)
  expect_true(is.double(pol0$x_train) && is.double(pol0$y_train))
  expect_null(dim(pol0$y_train))
  expect_identical(colnames(pol0$x_train), paste0("x", 1:26))
  expect_identical(colnames(pol0$x_test), paste0("x", 1:26))
  expect_false(anyNA(pol0$x_train) || anyNA(pol0$y_test))
})

test_that("train and test partition the rows, as an independent read says", {
  expect_identical(dim(raw), c(15000L, 27L))
  expect_identical(dim(mask), c(15000L, 10L))
  test <- mask[, 1] == 1
  expect_equal(unname(pol0$x_test), unname(raw[test, 1:26]))
  expect_equal(pol0$y_test, unname(raw[test, 27]))
  expect_equal(unname(pol0$x_train), unname(raw[!test, 1:26]))
  expect_equal(pol0$y_train, unname(raw[!test, 27]))
  expect_equal(nrow(pol0$x_train) + nrow(pol0$x_test), 15000)
})

test_that("different splits give different test sets", {
  pol3 <- read_uci("pol", split = 3)
  expect_identical(pol3$split, 3L)
  expect_equal(nrow(pol3$x_train) + nrow(pol3$x_test), 15000)
  expect_equal(pol3$y_test, unname(raw[mask[, 4] == 1, 27]))
  expect_false(isTRUE(all.equal(pol3$y_test, pol0$y_test)))
})

test_that("read_uci() reads from a path in the uci_datasets layout", {
  root <- tempfile("uci")
  dir.create(root)
  dir.create(file.path(root, "toy"))
  x <- cbind(1:20, (1:20) / 2, 20:1)
  con <- gzfile(file.path(root, "toy", "data.csv.gz"), "w")
  utils::write.table(x, con, sep = ",", row.names = FALSE, col.names = FALSE)
  close(con)
  m <- matrix(0L, 20, 10)
  m[c(2, 7), 1] <- 1L
  m[c(3, 4), 2] <- 1L
  con <- gzfile(file.path(root, "toy", "test_mask.csv.gz"), "w")
  utils::write.table(m, con, sep = ",", row.names = FALSE, col.names = FALSE)
  close(con)
  toy <- read_uci("toy", split = 1, path = root)
  expect_identical(dim(toy$x_train), c(18L, 2L))
  expect_equal(toy$y_test, c(18, 17))
  expect_equal(unname(toy$x_test[, 1]), c(3, 4))
  expect_output(print(toy), "\"toy\", split 1: 18 training and 2 test points, 2 inputs")
  expect_error(read_uci("other", path = root), class = "sddgp_error")
  file.remove(file.path(root, "toy", "test_mask.csv.gz"))
  expect_error(read_uci("toy", path = root), "test_mask.csv.gz",
               class = "sddgp_error")
  unlink(root, recursive = TRUE)
})

test_that("read_uci() rejects bad arguments with classed errors", {
  expect_error(read_uci("pol", split = 10), class = "sddgp_error_argument")
  expect_error(read_uci("pol", split = -1), class = "sddgp_error_argument")
  expect_error(read_uci("pol", split = 1.5), class = "sddgp_error_argument")
  expect_error(read_uci("pol", split = "0"), class = "sddgp_error_argument")
  expect_error(read_uci(c("pol", "bike")), class = "sddgp_error_argument")
  expect_error(read_uci(NA_character_), class = "sddgp_error_argument")
  expect_error(read_uci("bike"), "path", class = "sddgp_error_argument")
  expect_error(read_uci("pol", path = 1), class = "sddgp_error_argument")
  expect_error(read_uci("pol", path = file.path(tempdir(), "no-such-dir")),
               class = "sddgp_error_argument")
})

test_that("uci_hyperparameters() matches the published first row", {
  hp <- uci_hyperparameters("pol", 0)
  expect_s3_class(hp$kernel, "sddgp_kernel")
  expect_identical(hp$kernel$family, "matern32")
  expect_equal(hp$noise, 0.03674088791012764^2, tolerance = 1e-15)
  expect_equal(hp$kernel$variance, 0.40082889795303345^2, tolerance = 1e-15)
  expect_length(hp$kernel$lengthscale, 26L)
  expect_equal(hp$kernel$lengthscale[1], 0.52524596, tolerance = 1e-15)
  expect_equal(hp$kernel$lengthscale[26], 4.9715824, tolerance = 1e-15)

  tab <- utils::read.csv(extdata("uci_hparams.csv"), colClasses = "character")
  expect_identical(nrow(tab), 45L)
  row <- tab[tab$dataset == "elevators" & tab$split == "2", ]
  hp2 <- uci_hyperparameters("elevators", 2)
  expect_equal(hp2$noise, as.numeric(row$noise_scale)^2)
  expect_equal(hp2$kernel$lengthscale,
               as.numeric(strsplit(row$length_scale, ";")[[1]]))
  expect_length(hp2$kernel$lengthscale, 18L)
})

test_that("uci_hyperparameters() gives classed errors", {
  expect_error(uci_hyperparameters("nosuch", 0), class = "sddgp_error_argument")
  expect_error(uci_hyperparameters("pol", 7), class = "sddgp_error_argument")
  expect_error(uci_hyperparameters("pol", 0.5), class = "sddgp_error_argument")
  expect_error(uci_hyperparameters("3droad", 3), "NaN", class = "sddgp_error")
  expect_error(uci_hyperparameters("pol", 0, file = tempfile()),
               class = "sddgp_error")
  expect_silent(uci_hyperparameters("3droad", 4))
})
