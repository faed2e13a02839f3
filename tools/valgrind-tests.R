# Every .Call entry point of sddgp on tiny problems, for R under valgrind
# (memcheck), as CRAN's additional checks run packages.  From the
# repository root, after R CMD INSTALL:
#   R -d "valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=1" \
#     --vanilla -f tools/valgrind-tests.R
# The full test suite takes about an hour under valgrind; this takes a few
# minutes.  Each fit is checked against the exact posterior mean from base R,
# so that memory errors that corrupt numbers fail here too.
suppressPackageStartupMessages(library(sddgp))
options(sddgp.threads = 2L)
set.seed(1)
n <- 60
x <- matrix(runif(2 * n), n)
y <- sin(4 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.1)
xt <- matrix(runif(10), 5)
ker <- matern(3/2, c(0.4, 0.6), 1)
noise <- 0.05
# The exact posterior mean, by base R, from the fit's standardised units.
exact_mean <- function(fit, xnew) {
  sc <- fit$scaling
  z <- function(a) t((t(a) - sc$x_center) / sc$x_scale / c(0.4, 0.6))
  k <- function(a, b) {
    r2 <- outer(rowSums(z(a)^2), rowSums(z(b)^2), "+") - 2 * z(a) %*% t(z(b))
    r <- sqrt(3 * pmax(r2, 0))
    (1 + r) * exp(-r)
  }
  yz <- (y - sc$y_center) / sc$y_scale
  drop(sc$y_center + sc$y_scale * k(xnew, x) %*% solve(k(x, x) + diag(noise, n), yz))
}
cases <- list(
  cholesky = list(tol = 1e-8),
  sdd = list(control = sdd_control(iterations = 300), tol = 1e-6),
  cg = list(control = cg_control(tolerance = 1e-8), tol = 1e-5),
  sgd = list(control = sgd_control(iterations = 300), tol = 0.1),
  svgp = list(control = svgp_control(inducing = 30), tol = 0.2),
  dsg = list(control = dsg_control(iterations = 50), tol = 0.3),
  cabcd = list(control = cabcd_control(iterations = 20), tol = 0.6)
)
passed <- 0L
err <- NA_real_
failed <- 0L
tally <- function(ok) if (ok) passed <<- passed + 1L else failed <<- failed + 1L
for (s in names(cases)) {
  ok <- tryCatch({
    fit <- suppressWarnings(gp_sdd(x, y, kernel = ker, noise = noise, solver = s,
                                   control = cases[[s]]$control, samples = 4))
    p <- predict(fit, xt, se.fit = TRUE)
    sims <- simulate(fit, nsim = 2, newdata = xt, seed = 3)
    err <<- max(abs(p$fit - exact_mean(fit, xt)))
    all(is.finite(p$se.fit)) && all(dim(sims) == c(5L, 2L)) && err < cases[[s]]$tol
  }, error = function(e) { message(s, ": ", conditionMessage(e)); FALSE })
  cat(sprintf("%-8s %s (largest error of the mean %.2g)\n", s, if (ok) "ok" else "FAILED", err))
  tally(ok)
}
# SDD's other paths: systems in chunks (sddgp_future() on the sequential
# plan: runs stopped, their state kept, and resumed), and the sharded
# operator on one process, its broadcast a callback into R.
ok <- tryCatch({
  fit_with <- function(parallel) {
    set.seed(5)
    suppressWarnings(gp_sdd(x, y, kernel = ker, noise = noise, samples = 4,
                            control = sdd_control(iterations = 300, check_every = 10,
                                                  tolerance = 0.05),
                            parallel = parallel))
  }
  plain <- fit_with(NULL)
  chunked <- !requireNamespace("future", quietly = TRUE) ||
    identical(fit_with(sddgp_future(chunks = 2))$alpha_samples, plain$alpha_samples)
  problem <- sddgp:::new_problem(x, cbind(y), ker, noise, NULL, 2L)
  settings <- sddgp:::sdd_settings(sdd_control(iterations = 50), problem, "dual",
                                   "coordinates", 100L, 1)
  one <- sddgp:::sdd_loop_call(problem, settings, 2L)
  settings$shard <- list(rank = 0L, size = 1L, send = NULL, recv = NULL,
                         bcast = function(x, peer) x)
  chunked && identical(sddgp:::sdd_loop_call(problem, settings, 2L)$alpha, one$alpha)
}, error = function(e) { message("sdd paths: ", conditionMessage(e)); FALSE })
cat(sprintf("%-8s %s\n", "sdd paths", if (ok) "ok" else "FAILED"))
tally(ok)
# Hyperparameter estimation (exact marginal likelihood on the data).
ok <- tryCatch({
  fit <- gp_sdd(x, y, kernel = "matern32")
  all(is.finite(unlist(fit$kernel$lengthscale))) && is.finite(fit$noise)
}, error = function(e) { message("estimation: ", conditionMessage(e)); FALSE })
cat(sprintf("%-8s %s\n", "estimate", if (ok) "ok" else "FAILED"))
tally(ok)
# Vecchia's likelihood (estimation on all the points): the stage runs, and
# with every earlier point a neighbour the value is the exact one, by base R.
ok <- tryCatch({
  fit <- gp_sdd(x, y, kernel = "matern32",
                estimation = estimation_control(method = "vecchia", subset_size = 30,
                                                neighbours = 10))
  xs <- sddgp:::scale_inputs(x, ker)
  nb <- .Call(sddgp:::C_vecchia_factor, xs, sddgp:::kernel_spec(ker), rep(noise, n),
              n - 1L, 2L)$neighbours
  got <- .Call(sddgp:::C_mll_vecchia, xs, y, sddgp:::kernel_spec(ker), noise, NULL, nb, 2L)
  r <- sqrt(3) * as.matrix(stats::dist(xs))
  L <- chol((1 + r) * exp(-r) + diag(noise, n))
  want <- -0.5 * sum(backsolve(L, y, transpose = TRUE)^2) - sum(log(diag(L))) -
    n / 2 * log(2 * pi)
  identical(fit$estimation$method, "vecchia") && abs(got$value - want) < 1e-8
}, error = function(e) { message("vecchia: ", conditionMessage(e)); FALSE })
cat(sprintf("%-8s %s\n", "vecchia", if (ok) "ok" else "FAILED"))
tally(ok)
# predict()'s correction of the mean and samples (Vecchia's prediction of
# the fit's residuals): with every training point a neighbour, five steps
# of SDD predict the exact mean.
ok <- tryCatch({
  fit <- suppressWarnings(gp_sdd(x, y, kernel = ker, noise = noise, samples = 4,
                                 control = sdd_control(iterations = 5)))
  p <- predict(fit, xt, se.fit = TRUE, neighbours = n)
  max(abs(p$fit - exact_mean(fit, xt))) < 1e-8 && all(is.finite(p$se.fit))
}, error = function(e) { message("correction: ", conditionMessage(e)); FALSE })
cat(sprintf("%-8s %s\n", "correct", if (ok) "ok" else "FAILED"))
tally(ok)
cat(sprintf("%d of %d checks pass\n", passed, passed + failed))
if (failed > 0) quit(status = 1L)
