# gp_cv(): cross-validation, its folds in this process or as futures
# (R/cv.R).

# Every fold's exact posterior by hand: predictive mean and standard
# deviation (noise / weight included) at its held-out rows.
ref_cv <- function(x, y, labels, lengthscale, variance, noise, weights = rep(1, length(y))) {
  mu <- sd <- numeric(length(y))
  for (label in unique(labels)) {
    test <- labels == label
    K <- ref_kernel(x[!test, ], x[!test, ], "matern32", lengthscale, variance) +
      diag(noise / weights[!test])
    Ks <- ref_kernel(x[test, ], x[!test, ], "matern32", lengthscale, variance)
    mu[test] <- drop(Ks %*% solve(K, y[!test]))
    sd[test] <- sqrt(variance - rowSums(Ks * t(solve(K, t(Ks)))) + noise / weights[test])
  }
  list(mu = mu, sd = sd)
}

test_that("the folds' predictions and scores are the exact GP's on each fold", {
  d <- make_data(90, 2, seed = 3)
  labels <- rep_len(c("a", "b", "c"), 90)
  w <- withr::with_seed(4, runif(90, 0.5, 2))
  ref <- ref_cv(d$x, d$y, labels, c(0.3, 0.5), 1.2, 0.02, w)
  cv <- gp_cv(d$x, d$y, weights = w, folds = labels, kernel = matern(3/2, c(0.3, 0.5), 1.2),
              noise = 0.02, solver = "cholesky", standardize = FALSE, threads = 1)
  p <- cv$predictions
  expect_identical(p$row, 1:90)
  expect_identical(p$fold, labels)
  expect_identical(p$observed, d$y)
  expect_equal(p$fit, ref$mu, tolerance = 1e-9)
  expect_equal(p$sd, ref$sd, tolerance = 1e-9)
  # Scores by hand, per fold and pooled over all 90 points.
  nll <- -dnorm(d$y, ref$mu, ref$sd, log = TRUE)
  for (label in c("a", "b", "c")) {
    i <- labels == label
    row <- cv$folds[cv$folds$fold == label, ]
    expect_equal(row$rmse, sqrt(mean((d$y[i] - ref$mu[i])^2)), tolerance = 1e-9)
    expect_equal(row$nll, mean(nll[i]), tolerance = 1e-9)
    expect_identical(c(row$train, row$test), c(60L, 30L))
  }
  expect_equal(cv$scores, c(rmse = sqrt(mean((d$y - ref$mu)^2)), nll = mean(nll)),
               tolerance = 1e-9)
  expect_identical(cv$folds$solver, rep("cholesky", 3))
  expect_true(all(cv$folds$converged))
  expect_equal(unname(cv$coefficients[, "noise"]), rep(0.02, 3))
})

test_that("a formula cross-validates its complete rows, weights from the data", {
  d <- make_data(80, 2, seed = 5)
  data <- data.frame(d$x, y = d$y, w = withr::with_seed(6, runif(80, 0.5, 2)))
  data$x1[c(7, 50)] <- NA
  labels <- rep_len(1:4, 80)
  cv <- gp_cv(y ~ x1 + x2, data, weights = w, folds = labels,
              kernel = matern(3/2, c(0.3, 0.5), 1.2), noise = 0.02, solver = "cholesky",
              standardize = FALSE, threads = 1)
  kept <- setdiff(1:80, c(7, 50))
  ref <- ref_cv(d$x[kept, ], d$y[kept], labels[kept], c(0.3, 0.5), 1.2, 0.02, data$w[kept])
  expect_identical(cv$predictions$row, kept)
  expect_identical(cv$predictions$fold, labels[kept])
  expect_equal(cv$predictions$fit, ref$mu, tolerance = 1e-9)
  expect_equal(cv$predictions$sd, ref$sd, tolerance = 1e-9)
  # The matrix method on the same rows agrees.
  same <- gp_cv(d$x[kept, ], d$y[kept], weights = data$w[kept], folds = labels[kept],
                kernel = matern(3/2, c(0.3, 0.5), 1.2), noise = 0.02, solver = "cholesky",
                standardize = FALSE, threads = 1)
  expect_equal(same$scores, cv$scores)
})

test_that("random folds come from R's stream, and a seed repeats the whole", {
  d <- make_data(50, 1, seed = 8)
  run <- function() gp_cv(d$x, d$y, folds = 4, samples = 4, threads = 1,
                          control = sdd_control(iterations = 200))
  withr::local_seed(9)
  cv <- run()
  after <- runif(1)
  withr::local_seed(9)
  labels <- sample(rep_len(1:4, 50))
  # R's stream moved by the folds' draw only.
  expect_identical(after, runif(1))
  expect_identical(cv$predictions$fold, labels)
  expect_identical(sort(cv$folds$test), c(12L, 12L, 13L, 13L))
  withr::local_seed(9)
  again <- run()
  expect_identical(again$predictions, cv$predictions)
  expect_true(all(is.finite(cv$predictions$sd)))
})

test_that("without variances the NLL is NA, and short fits are reported", {
  d <- make_data(300, 1, seed = 10)
  warnings <- list()
  cv <- withCallingHandlers(
    withr::with_seed(1, gp_cv(d$x, d$y, folds = 3, kernel = matern(3/2, 1, 1), noise = 1e-4,
                              threads = 1, control = sdd_control(iterations = 10, tolerance = 1e-6,
                                                                 batch_size = 8))),
    warning = function(w) {
      warnings[[length(warnings) + 1L]] <<- w
      invokeRestart("muffleWarning")
    })
  # One warning for all the folds, naming them.
  expect_length(warnings, 1L)
  expect_s3_class(warnings[[1L]], "sddgp_warning_not_converged")
  expect_match(conditionMessage(warnings[[1L]]),
               "3 of the 3 folds stopped short.*Fold 1: SDD stopped at the end of its iteration budget")
  expect_identical(warnings[[1L]]$folds, 1:3)
  expect_true(all(is.na(cv$folds$nll)))
  expect_true(is.na(cv$scores[["nll"]]))
  expect_true(all(is.finite(cv$predictions$fit)))
  expect_false(any(cv$folds$converged))
  cv$folds$seconds <- 0
  expect_snapshot(print(cv))
})

test_that("bad arguments are classed errors naming the argument", {
  d <- make_data(20, 1, seed = 11)
  df <- data.frame(d$x, y = d$y)
  expect_error(gp_cv(d$x, d$y, folds = 1), class = "sddgp_error_argument", regexp = "`folds`")
  expect_error(gp_cv(d$x, d$y, folds = 21), class = "sddgp_error_argument", regexp = "`folds`")
  expect_error(gp_cv(d$x, d$y, folds = rep(1:2, 5)), class = "sddgp_error_argument",
               regexp = "`folds` has 10 labels: give one per row of the data \\(20\\)")
  expect_error(gp_cv(d$x, d$y, folds = c(NA, rep(1:2, length.out = 19))),
               class = "sddgp_error_argument", regexp = "without NA")
  expect_error(gp_cv(d$x, d$y, folds = rep(1, 20)), class = "sddgp_error_argument",
               regexp = "at least two folds")
  expect_error(gp_cv(d$x), class = "sddgp_error_argument", regexp = "`y` is missing")
  expect_error(gp_cv(1:10, 1:10), class = "sddgp_error_argument", regexp = "`x` must be a formula")
  expect_error(gp_cv(d$x, cbind(d$y, d$y)), class = "sddgp_error_argument",
               regexp = "`y` has 2 outputs")
  expect_error(gp_cv(d$x, d$y, rep(-1, 20)), class = "sddgp_error_argument", regexp = "`weights`")
  expect_error(gp_cv(d$x, d$y, NULL, 2, matern(3/2, 1, 1)), class = "sddgp_error_argument",
               regexp = "`...` must be named")
  expect_error(gp_cv(d$x, d$y, parallel = "futures"), class = "sddgp_error_argument",
               regexp = "`parallel` must be NULL or made by sddgp_future")
  expect_error(gp_cv(y ~ x1), class = "sddgp_error_argument", regexp = "`data` is missing")
  expect_error(gp_cv(y ~ x1, as.matrix(df)), class = "sddgp_error_argument",
               regexp = "`data` must be a data frame")
  expect_error(gp_cv(~ x1, df), class = "sddgp_error_argument", regexp = "with a response")
  expect_error(gp_cv(y ~ x1, df, weights = nope), class = "sddgp_error_argument",
               regexp = "`weights` could not be evaluated")
})
