# The convergence traces of the C solvers (their SDD/SGD metrics are tested
# with the loop, test-sdd_loop.R and test-sgd.R).

test_that("the sample residual in the trace is the root mean square over sample systems", {
  res <- list(iteration = c(10L, 20L), seconds = c(0.1, 0.2),
              residuals = rbind(c(0.5, 3, 4), c(0.25, 1, 1)))
  tr <- sddgp:::solver_trace(res, n_mean = 1L)
  expect_equal(tr$residual, c(0.5, 0.25))
  expect_equal(tr$residual_samples, c(sqrt((9 + 16) / 2), 1))
  tr2 <- sddgp:::solver_trace(res, n_mean = 0L)
  expect_true(all(is.na(tr2$residual)))
  expect_equal(tr2$residual_samples, sqrt(rowMeans(res$residuals^2)))
  tr3 <- sddgp:::solver_trace(list(iteration = 5L, seconds = 0,
                                   residuals = matrix(0.1, 1, 1)), 1L)
  expect_true(is.na(tr3$residual_samples))
  # Several outputs: the largest of their residuals, the rest are samples.
  tr4 <- sddgp:::solver_trace(res, n_mean = 2L)
  expect_equal(tr4$residual, c(3, 1))
  expect_equal(tr4$residual_samples, c(4, 1))
})
