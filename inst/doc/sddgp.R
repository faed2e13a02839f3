## ---- include = FALSE---------------------------------------------------------
knitr::opts_chunk$set(collapse = TRUE, comment = "#>", fig.width = 6, fig.height = 4)
options(sddgp.threads = 2)

## -----------------------------------------------------------------------------
library(sddgp)
set.seed(1)
n <- 500
x <- matrix(runif(2 * n), ncol = 2)
f <- function(x) sin(6 * x[, 1]) + cos(4 * x[, 2])
y <- f(x) + rnorm(n, sd = 0.1)

fit <- gp_sdd(x, y, kernel = "matern32", samples = 16,
              control = sdd_control(iterations = 3000))
fit

## -----------------------------------------------------------------------------
plot(fit)

## -----------------------------------------------------------------------------
xnew <- cbind(seq(0, 1, length.out = 5), 0.5)
predict(fit, xnew, interval = "prediction")

## -----------------------------------------------------------------------------
grid <- cbind(seq(0, 1, length.out = 200), 0.5)
draws <- simulate(fit, nsim = 5, newdata = grid)
matplot(grid[, 1], draws, type = "l", lty = 1, col = "grey60",
        xlab = "x1 (x2 = 0.5)", ylab = "f")
lines(grid[, 1], f(grid), lwd = 2)

## -----------------------------------------------------------------------------
exact <- gp_sdd(x, y, kernel = fit$kernel, noise = fit$noise,
                solver = "cholesky")
max(abs(predict(fit, grid) - predict(exact, grid)))

## -----------------------------------------------------------------------------
controls <- list(sdd = sdd_control(iterations = 3000),
                 cg = cg_control(tolerance = 1e-6),
                 sgd = sgd_control(iterations = 3000),
                 svgp = svgp_control(inducing = 100),
                 dsg = dsg_control(iterations = 100, batch_size = 64),
                 cabcd = cabcd_control(basis_features = 300))
compare <- t(sapply(controls, function(ctl) {
  seconds <- system.time(
    g <- gp_sdd(x, y, kernel = fit$kernel, noise = fit$noise, control = ctl)
  )[["elapsed"]]
  c(max_difference = max(abs(predict(g, grid) - predict(exact, grid))),
    seconds = seconds)
}))
round(compare, 4)

## -----------------------------------------------------------------------------
pol <- read_uci("pol", split = 0)
hp <- uci_hyperparameters("pol", split = 0)
keep <- sample(nrow(pol$x_train), 2000)
fit_pol <- gp_sdd(pol$x_train[keep, ], pol$y_train[keep], kernel = hp$kernel,
                  noise = hp$noise, samples = 16,
                  control = sdd_control(iterations = 1000))
predictive_scores(fit_pol, pol$x_test, pol$y_test, normalised = TRUE)

