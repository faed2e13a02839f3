# predict(): shapes, units, intervals and standard errors, newdata handling.

pred_fit <- function(samples = 0, solver = "cholesky", seed = 61, n = 60) {
  d <- make_data(n, 2, seed = seed)
  withr::local_seed(seed)
  fit <- gp_sdd(d$x, 10 + 3 * d$y, kernel = matern(3/2, c(0.4, 0.6), 1),
                noise = 0.05, solver = solver, samples = samples,
                control = if (solver == "sdd") sdd_control(tolerance = 0, iterations = 100))
  list(fit = fit, x = d$x, y = 10 + 3 * d$y)
}

test_that("predict() returns a named vector, a fit/lwr/upr matrix or a list", {
  m <- pred_fit(samples = 20)
  xt <- make_inputs(5, 2)
  rownames(xt) <- paste0("p", 1:5)
  p <- predict(m$fit, xt)
  expect_type(p, "double")
  expect_null(dim(p))
  expect_named(p, paste0("p", 1:5))
  pc <- predict(m$fit, xt, interval = "confidence")
  expect_true(is.matrix(pc))
  expect_equal(colnames(pc), c("fit", "lwr", "upr"))
  expect_equal(dim(pc), c(5L, 3L))
  expect_equal(pc[, "fit"], p)
  ps <- predict(m$fit, xt, se.fit = TRUE)
  expect_named(ps, c("fit", "se.fit", "residual.scale"))
  expect_equal(ps$fit, p)
  expect_named(ps$se.fit, paste0("p", 1:5))
  expect_true(all(ps$se.fit > 0))
  # The noise standard deviation in original units: sqrt(0.05) * sd(y).
  pop_sd <- sqrt(mean((m$y - mean(m$y))^2))
  expect_equal(ps$residual.scale, sqrt(0.05) * pop_sd)
  psi <- predict(m$fit, xt, se.fit = TRUE, interval = "prediction")
  expect_equal(colnames(psi$fit), c("fit", "lwr", "upr"))
  expect_equal(psi$se.fit, ps$se.fit)
  # Without newdata: the training inputs, which is what fitted() gives.
  expect_equal(unname(predict(m$fit)), unname(predict(m$fit, m$x)), tolerance = 1e-12)
  expect_identical(fitted(m$fit), predict(m$fit))
  expect_equal(residuals(m$fit), m$y - fitted(m$fit), tolerance = 1e-12)
})

test_that("the Cholesky posterior mean is exact in original units", {
  m <- pred_fit()
  xt <- make_inputs(6, 2)
  y <- m$y
  pop_sd <- function(v) sqrt(mean((v - mean(v))^2))
  xc <- colMeans(m$x)
  xsd <- apply(m$x, 2, pop_sd)
  zs <- function(a) sweep(sweep(a, 2, xc), 2, xsd, "/")
  ref <- ref_posterior(zs(m$x), (y - mean(y)) / pop_sd(y), zs(xt), "matern32",
                       c(0.4, 0.6), 1, 0.05)
  expect_equal(unname(predict(m$fit, xt)), mean(y) + pop_sd(y) * ref$mean,
               tolerance = 1e-8)
})

test_that("intervals are fit +- z * se, and prediction intervals add the noise", {
  m <- pred_fit(samples = 30)
  xt <- make_inputs(8, 2)
  ps <- predict(m$fit, xt, se.fit = TRUE)
  pc <- predict(m$fit, xt, interval = "confidence")
  pp <- predict(m$fit, xt, interval = "prediction")
  z <- qnorm(0.975)
  expect_equal(unname(pc[, "upr"] - pc[, "fit"]), unname(z * ps$se.fit), tolerance = 1e-12)
  expect_equal(unname(pc[, "fit"] - pc[, "lwr"]), unname(z * ps$se.fit), tolerance = 1e-12)
  expect_equal(unname(pp[, "upr"] - pp[, "fit"]),
               unname(z * sqrt(ps$se.fit^2 + ps$residual.scale^2)), tolerance = 1e-12)
  expect_true(all(pp[, "upr"] - pp[, "lwr"] > pc[, "upr"] - pc[, "lwr"]))
  p50 <- predict(m$fit, xt, interval = "confidence", level = 0.5)
  expect_equal(unname(p50[, "upr"] - p50[, "fit"]), unname(qnorm(0.75) * ps$se.fit),
               tolerance = 1e-12)
  expect_true(all(p50[, "upr"] < pc[, "upr"]))
})

test_that("prediction intervals use the noise of the new observations' weights", {
  m <- pred_fit(samples = 30)
  xt <- make_inputs(4, 2)
  ps <- predict(m$fit, xt, se.fit = TRUE)
  w <- c(0.5, 1, 2, 4)
  pp <- predict(m$fit, xt, interval = "prediction", weights = w)
  # noise / w in standardised units, times the target's scale squared.
  want <- sqrt(ps$se.fit^2 + m$fit$scaling$y_scale^2 * m$fit$noise / w)
  expect_equal(unname(pp[, "upr"] - pp[, "fit"]), unname(qnorm(0.975) * want),
               tolerance = 1e-12)
  p2 <- predict(m$fit, xt, interval = "prediction", weights = 2)
  expect_equal(p2[3, ], pp[3, ], tolerance = 1e-12)
  expect_error(predict(m$fit, xt, interval = "prediction", weights = c(1, 2)),
               class = "sddgp_error_argument",
               regexp = "`weights` must have length 1 or 4 \\(the rows of `newdata`\\), not 2")
  expect_error(predict(m$fit, xt, interval = "prediction", weights = -1),
               class = "sddgp_error_argument", regexp = "`weights` must be positive")
})

test_that("standard errors match the exact posterior standard deviation", {
  d <- make_data(80, 2, seed = 62)
  xt <- rbind(c(0.5, 0.5), c(0.2, 0.8), c(0.9, 0.1), c(1.4, 1.2))
  colnames(xt) <- c("x1", "x2")
  ref <- ref_posterior(d$x, d$y, xt, "matern52", c(0.3, 0.5), 1, 0.05)
  withr::local_seed(62)
  # se.fit^2 is the mean square of the zero-mean sample paths. Given a fit's
  # random features it estimates the posterior variance under the feature
  # prior, which differs from the exact one by the features' error (10% and
  # more for the small variances here with 2000 features); over fits with
  # fresh features that error averages out. So: 40 fits of 100 samples,
  # compared by batch means (the fits are independent).
  G <- 40
  v <- sapply(seq_len(G), function(g) {
    fit <- gp_sdd(d$x, d$y, kernel = matern(5/2, c(0.3, 0.5), 1), noise = 0.05,
                  solver = "cholesky", standardize = FALSE, samples = 100,
                  threads = 1)  # 40 small fits: see test-gp_sdd.R
    predict(fit, xt, se.fit = TRUE, threads = 1)$se.fit^2
  })
  se <- apply(v, 1, sd) / sqrt(G)
  expect_true(all(abs(rowMeans(v) - diag(ref$cov)) < 5 * se))
  # The batch standard errors are about 3% of each variance, so a bias of
  # 20% would fail.
  expect_true(all(se < 0.04 * diag(ref$cov)))
  # The far-away point has nearly the prior variance, the others much less.
  expect_gt(mean(v[4, ]), 0.85)
  expect_true(all(v[1:3, ] < 0.05))
  fit <- gp_sdd(d$x, d$y, kernel = matern(5/2, c(0.3, 0.5), 1), noise = 0.05,
                solver = "cholesky", standardize = FALSE, samples = 2)
  expect_equal(predict(fit, xt, se.fit = TRUE)$residual.scale, sqrt(0.05))
})

test_that("newdata is matched by column name", {
  m <- pred_fit(samples = 10)
  xt <- make_inputs(5, 2)
  p <- predict(m$fit, xt, se.fit = TRUE)
  expect_identical(predict(m$fit, xt[, c("x2", "x1")], se.fit = TRUE), p)
  df <- as.data.frame(xt)
  expect_identical(predict(m$fit, df, se.fit = TRUE), p)
  expect_identical(predict(m$fit, df[c("x2", "x1")], se.fit = TRUE), p)
  # Extra columns are ignored.
  expect_identical(predict(m$fit, cbind(df, extra = "a"), se.fit = TRUE), p)
  # Unnamed columns are taken in order.
  expect_identical(unname(predict(m$fit, unname(xt))), unname(predict(m$fit, xt)))
  # A plain vector is one point of a multi-input model.
  expect_equal(unname(predict(m$fit, xt[2, ])), unname(p$fit[2]), tolerance = 1e-12)
  expect_length(predict(m$fit, xt[0, , drop = FALSE]), 0)
})

test_that("empty and repeated input names are repaired and matched as at fit", {
  d <- make_data(40, 2, seed = 64)
  fit <- function(x) gp_sdd(x, d$y, kernel = matern(3/2, 0.5, 1), noise = 0.05,
                            solver = "cholesky")
  # By position: what every repaired fit must reproduce.
  by_position <- function(x) unname(predict(fit(unname(x)), unname(x)))

  x_empty <- cbind(d$x, 7 * d$x[, 1]^2)  # third name ""
  f_empty <- fit(x_empty)
  expect_equal(f_empty$input_names, c("x1", "x2", "V3"))
  expect_identical(unname(predict(f_empty, x_empty)), by_position(x_empty))
  expect_equal(predict(f_empty, x_empty), predict(f_empty), tolerance = 1e-12)
  expect_identical(predict(f_empty, as.data.frame(x_empty)), predict(f_empty, x_empty))

  x_twice <- d$x
  colnames(x_twice) <- c("a", "a")
  f_twice <- fit(x_twice)
  expect_equal(f_twice$input_names, c("a", "a.1"))
  expect_identical(unname(predict(f_twice, x_twice)), by_position(x_twice))
  # data.frame() repairs the names alike, and then they match in any order.
  df_twice <- data.frame(x_twice)
  expect_equal(names(df_twice), c("a", "a.1"))
  expect_identical(predict(f_twice, df_twice[2:1]), predict(f_twice, x_twice))
  expect_error(predict(f_twice, x_twice[, 1, drop = FALSE]), class = "sddgp_error_argument",
               regexp = "lacks the input column `a.1`")
})

test_that("a formula fit predicts from a data frame with the variables", {
  d <- make_data(50, 2, seed = 63)
  df <- data.frame(d$x, y = d$y)
  ff <- gp_sdd(y ~ x1 + x2, data = df, kernel = matern(3/2, c(0.4, 0.6), 1),
               noise = 0.05, solver = "cholesky")
  fm <- gp_sdd(d$x, d$y, kernel = matern(3/2, c(0.4, 0.6), 1), noise = 0.05,
               solver = "cholesky")
  nd <- as.data.frame(make_inputs(5, 2))
  expect_equal(unname(predict(ff, nd)), unname(predict(fm, as.matrix(nd))),
               tolerance = 1e-12)
  # The response is not needed, and column order does not matter.
  expect_equal(predict(ff, nd[c("x2", "x1")]), predict(ff, nd))
  expect_error(predict(ff, as.matrix(nd)), class = "sddgp_error_argument",
               regexp = "`newdata` must be a data frame for a formula fit")
  expect_error(predict(ff, nd["x1"]), class = "sddgp_error_argument",
               regexp = "`newdata` does not hold the model's variables")
  # A missing value predicts NA there (na.pass, as predict.lm()).
  p <- predict(ff, nd)
  nd$x2[2] <- NA
  expect_equal(predict(ff, nd), replace(p, 2, NA))
  expect_equal(predict(ff, nd, na.action = na.omit), p[-2], ignore_attr = TRUE)
  expect_error(predict(ff, nd, na.action = na.fail), class = "sddgp_error_argument",
               regexp = "`newdata` .*missing values that `na.action` refused")
})

test_that("with na.action = na.exclude, predict(), fitted() and residuals() pad with NA", {
  d <- make_data(50, 2, seed = 65)
  df <- data.frame(d$x, y = d$y)
  df$x1[3] <- NA
  df$y[7] <- NA
  fit_na <- function(na.action) {
    withr::local_seed(4)
    gp_sdd(y ~ x1 + x2, data = df, kernel = matern(3/2, 0.5, 1), noise = 0.05,
           solver = "cholesky", samples = 4, na.action = na.action)
  }
  ex <- fit_na(stats::na.exclude)
  om <- fit_na(stats::na.omit)
  # Where lm() puts its NAs.
  lm_na <- which(is.na(residuals(lm(y ~ x1 + x2, data = df, na.action = na.exclude))))
  expect_equal(unname(lm_na), c(3L, 7L))
  for (v in list(predict(ex), fitted(ex), residuals(ex))) {
    expect_length(v, 50)
    expect_equal(which(is.na(v)), lm_na)
    expect_equal(names(v), rownames(df))
  }
  expect_equal(predict(ex)[-lm_na], predict(om), tolerance = 1e-12)
  expect_equal(fitted(ex)[-lm_na], fitted(om), tolerance = 1e-12)
  expect_equal(residuals(ex)[-lm_na], df$y[-lm_na] - predict(om), tolerance = 1e-12,
               ignore_attr = TRUE)
  expect_length(predict(om), 48)
  iv <- predict(ex, interval = "confidence", se.fit = TRUE)
  expect_equal(dim(iv$fit), c(50L, 3L))
  expect_equal(which(is.na(iv$fit[, "lwr"])), lm_na)
  expect_equal(which(is.na(iv$se.fit)), lm_na)
  # New data are not padded.
  expect_length(predict(ex, df[8:12, ]), 5)
})

test_that("chunk_size does not change the result", {
  m <- pred_fit(samples = 8, solver = "sdd")
  xt <- make_inputs(50, 2)
  big <- predict(m$fit, xt, se.fit = TRUE, interval = "prediction")
  for (cs in c(1, 7, 50)) {
    expect_identical(predict(m$fit, xt, se.fit = TRUE, interval = "prediction",
                             chunk_size = cs), big)
  }
  expect_identical(predict(m$fit, xt, threads = 1), predict(m$fit, xt, threads = 2))
})

test_that("Ctrl-C stops a long prediction promptly and leaves R usable", {
  skip_on_cran()
  skip_if_not_installed("callr")
  # 1e6 predictions from 20000 training points are 2e10 kernel values,
  # several seconds even on an idle machine (4e9 finished within the 2 s
  # the helper waits before Ctrl-C); the product answers Ctrl-C between
  # slabs of rows.  (A fit of that many points would spend minutes on its
  # fitted values.)
  expect_prompt_interrupt(20000, 2, sdd_control(tolerance = 0, iterations = 1, step_size = 1,
                                                 cache = "never"),
                          message = NULL,
                          then = function(fit, x) predict(fit, x[rep(1:20000, 50), ]))
})

test_that("bad newdata gives classed errors naming newdata", {
  m <- pred_fit(samples = 2)
  xt <- make_inputs(3, 2)
  expect_error(predict(m$fit, xt[, "x1", drop = FALSE]), class = "sddgp_error_argument",
               regexp = "`newdata` lacks the input column `x2`")
  expect_error(predict(m$fit, data.frame(a = 1, b = 2)), class = "sddgp_error_argument",
               regexp = "`newdata` lacks the input columns `x1`, `x2`")
  expect_error(predict(m$fit, cbind(unname(xt), 1)), class = "sddgp_error_argument",
               regexp = "`newdata` has 3 input columns but the model has 2")
  expect_error(predict(m$fit, unname(xt[, 1, drop = FALSE])),
               class = "sddgp_error_argument",
               regexp = "`newdata` has 1 input column but the model has 2")
  xna <- xt; xna[3, 1] <- NA
  expect_error(predict(m$fit, xna, na.action = na.fail), class = "sddgp_error_argument",
               regexp = "`newdata` has missing values that `na.action` refused")
  xinf <- xt; xinf[2, 2] <- Inf
  expect_error(predict(m$fit, xinf), class = "sddgp_error_argument",
               regexp = "`newdata` contains infinite values in 1 row \\(first: row 2\\)")
  expect_error(predict(m$fit, data.frame(x1 = "a", x2 = 1)), class = "sddgp_error_argument",
               regexp = "`newdata` must have only numeric columns; `x1` is not numeric")
  expect_error(predict(m$fit, list(1, 2)), class = "sddgp_error_argument",
               regexp = "`newdata` must be a numeric matrix or data frame")
  expect_error(predict(m$fit, "a"), class = "sddgp_error_argument", regexp = "`newdata`")
})

test_that("bad options give classed errors naming the argument", {
  m <- pred_fit(samples = 2)
  xt <- make_inputs(3, 2)
  expect_error(predict(m$fit, xt, interval = "wide"), class = "sddgp_error_argument",
               regexp = "`interval` must be one of \"none\", \"confidence\", \"prediction\", not \"wide\"")
  for (bad in list(0, 1, -0.5, NA, "0.9", c(0.5, 0.9))) {
    expect_error(predict(m$fit, xt, interval = "confidence", level = bad),
                 class = "sddgp_error_argument", regexp = "`level`")
  }
  for (bad in list(NA, "yes", c(TRUE, TRUE))) {
    expect_error(predict(m$fit, xt, se.fit = bad), class = "sddgp_error_argument",
                 regexp = "`se.fit` must be TRUE or FALSE")
  }
  for (bad in list(0, 2.5, NA, -1)) {
    expect_error(predict(m$fit, xt, chunk_size = bad), class = "sddgp_error_argument",
                 regexp = "`chunk_size`")
  }
  expect_error(predict(m$fit, xt, threads = 0), class = "sddgp_error_argument",
               regexp = "`threads`")
  expect_error(predict(m$fit, xt, type = "response"), class = "sddgp_error_argument",
               regexp = "`...` must be empty.*`type`")
})

test_that("standard errors and intervals need posterior samples, except exact fits", {
  m <- pred_fit(samples = 0, solver = "sdd")
  xt <- make_inputs(3, 2)
  expect_error(predict(m$fit, xt, se.fit = TRUE), class = "sddgp_error_no_samples",
               regexp = "no posterior samples.*samples =")
  expect_error(predict(m$fit, xt, interval = "confidence"),
               class = "sddgp_error_no_samples")
  expect_error(predict(m$fit, xt, interval = "prediction"),
               class = "sddgp_error_no_samples")
  expect_error(predictive_scores(m$fit, xt, 1:3), class = "sddgp_error_no_samples")
  expect_length(predict(m$fit, xt), 3)
})

test_that("interval takes abbreviations, as match.arg()", {
  m <- pred_fit(samples = 0)
  xt <- make_inputs(3, 2)
  expect_identical(predict(m$fit, xt, interval = "conf"),
                   predict(m$fit, xt, interval = "confidence"))
  expect_identical(predict(m$fit, xt, interval = "p"),
                   predict(m$fit, xt, interval = "prediction"))
  expect_identical(predict(m$fit, xt, interval = "n"), predict(m$fit, xt))
  expect_error(predict(m$fit, xt, interval = ""), class = "sddgp_error_argument",
               regexp = "`interval`")
})

test_that("na.action decides what rows of newdata with missing values give", {
  m <- pred_fit(samples = 0)
  xt <- make_inputs(4, 2)
  full <- predict(m$fit, xt, se.fit = TRUE)
  xt[c(2, 4), 1] <- c(NA, NaN)
  p <- predict(m$fit, xt, se.fit = TRUE)
  expect_equal(p$fit, replace(full$fit, c(2, 4), NA))
  expect_equal(p$se.fit, replace(full$se.fit, c(2, 4), NA))
  pe <- predict(m$fit, xt, interval = "confidence", na.action = na.exclude)
  expect_equal(dim(pe), c(4L, 3L))
  expect_true(all(is.na(pe[c(2, 4), ])))
  po <- predict(m$fit, xt, na.action = "na.omit")
  expect_equal(unname(po), unname(full$fit[c(1, 3)]))
  # Weights follow the rows that na.omit keeps.
  pw <- predict(m$fit, xt, interval = "prediction", weights = c(1, 2, 4, 8),
                na.action = na.omit)
  pw3 <- predict(m$fit, make_inputs(4, 2)[3, , drop = FALSE], interval = "prediction",
                 weights = 4)
  expect_equal(unname(pw[2, ]), unname(pw3[1, ]))
  expect_error(predict(m$fit, xt, na.action = 3), class = "sddgp_error_argument",
               regexp = "`na.action` must be a function")
  expect_error(predict(m$fit, xt, na.action = "no_such_function"),
               class = "sddgp_error_argument", regexp = "`na.action`")
})

test_that("newdata columns are matched by name for a fit with names, else by position", {
  m <- pred_fit(samples = 0)
  xt <- make_inputs(4, 2)
  p <- predict(m$fit, xt)
  # Named: any order, extra columns ignored; a missing name is an error.
  expect_equal(predict(m$fit, cbind(z = 1, xt[, 2:1])), p)
  expect_equal(predict(m$fit, as.data.frame(xt[, 2:1])), p)
  expect_error(predict(m$fit, data.frame(x1 = xt[, 1], x3 = xt[, 2])),
               class = "sddgp_error_argument", regexp = "`newdata` lacks the input column `x2`")
  # Unnamed newdata: by position.
  expect_equal(predict(m$fit, unname(xt)), unname(p))
  # A fit without names takes newdata by position, and the count must match.
  fu <- gp_sdd(unname(m$x), m$y, kernel = matern(3/2, c(0.4, 0.6), 1), noise = 0.05,
               solver = "cholesky")
  expect_equal(unname(predict(fu, data.frame(a = xt[, 1], b = xt[, 2]))), unname(p))
  expect_error(predict(fu, data.frame(a = 1, b = 2, c = 3)), class = "sddgp_error_argument",
               regexp = "`newdata` has 3 input columns but the model has 2")
})

test_that("far from the training inputs the prediction is the prior, never NaN", {
  d <- make_data(80, 2, seed = 75)
  ker <- matern(5/2, c(0.4, 0.6), 1.3)
  xt <- make_inputs(3, 2)
  # 1e155: the squared distances overflow; 1e300 from data at 1e-300: the
  # standardised value itself overflows to Inf.
  for (s in c(1, 1e-300)) {
    fit <- withr::with_seed(2, gp_sdd(d$x * s, d$y, kernel = ker, noise = 0.02,
                                      solver = "cholesky", samples = 8))
    far <- rbind(c(1e155, 0.5), c(0.5, -1e300), c(-1e308, 1e308), c(0.5 * s, 2000 * s))
    p <- predict(fit, rbind(far, xt * s), interval = "prediction", se.fit = TRUE)
    prior_mean <- mean(d$y)
    prior_sd <- fit$scaling$y_scale * sqrt(1.3)
    expect_equal(unname(p$fit[1:4, "fit"]), rep(prior_mean, 4), tolerance = 1e-12)
    expect_equal(unname(p$se.fit[1:4]), rep(prior_sd, 4), tolerance = 1e-12)
    expect_equal(unname(p$fit[1:4, "upr"] - p$fit[1:4, "fit"]),
                 rep(qnorm(0.975) * sqrt(prior_sd^2 + p$residual.scale^2), 4),
                 tolerance = 1e-12)
    # Near rows are as without the far ones.
    near <- predict(fit, xt * s, interval = "prediction", se.fit = TRUE)
    expect_equal(p$fit[5:7, ], near$fit, tolerance = 1e-12, ignore_attr = TRUE)
    expect_equal(unname(p$se.fit[5:7]), unname(near$se.fit), tolerance = 1e-12)
  }
  # The kernel there is 0, so the exact posterior agrees (x 2000 length
  # scales beyond the data in its second coordinate).
  fit <- gp_sdd(d$x, d$y, kernel = ker, noise = 0.02, solver = "cholesky",
                standardize = FALSE)
  xf <- rbind(c(0.5, 0.6 * 2001))
  expect_equal(predict(fit, xf), 0)
  expect_equal(ref_posterior(d$x, d$y, xf, "matern52", c(0.4, 0.6), 1.3, 0.02)$mean, 0)
})

test_that("targets beyond 1e154 give finite standard errors and intervals", {
  m <- pred_fit(samples = 8)
  xt <- make_inputs(4, 2)
  big <- withr::with_seed(3, gp_sdd(m$x, m$y * 1e300, kernel = m$fit$kernel,
                                    noise = m$fit$noise, solver = "cholesky", samples = 8))
  small <- withr::with_seed(3, gp_sdd(m$x, m$y, kernel = m$fit$kernel,
                                      noise = m$fit$noise, solver = "cholesky", samples = 8))
  pb <- predict(big, xt, interval = "prediction", se.fit = TRUE)
  p1 <- predict(small, xt, interval = "prediction", se.fit = TRUE)
  expect_true(all(is.finite(unlist(pb))))
  expect_equal(pb$fit / 1e300, p1$fit, tolerance = 1e-8)
  expect_equal(pb$se.fit / 1e300, p1$se.fit, tolerance = 1e-8)
  expect_equal(pb$residual.scale / 1e300, p1$residual.scale, tolerance = 1e-8)
})
