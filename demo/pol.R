# The SDD paper's pol benchmark, split 0: 13,500 training and 1,500 test
# points, 26 inputs, the published Matern-3/2 hyperparameters.  Scores are
# in standardised units, as in the paper's Table 1; the exact GP gives
# RMSE 0.0834 and NLL -1.214 here.
library(sddgp)
pol <- read_uci("pol", split = 0)
hp <- uci_hyperparameters("pol", split = 0)
threads <- min(2L, sddgp_threads())

# The default fit: gp_sdd() without `solver` or `control` chooses the
# solver (on pol, conjugate gradients with Vecchia's preconditioner) and
# solves to its default tolerance, within a tenth of a noise standard
# deviation of the exact posterior mean; `summary(fit)` says why.  16
# posterior samples give the NLL.  `solver = "sdd"` runs the paper's SDD.
set.seed(2024)
elapsed <- system.time(
  fit <- gp_sdd(pol$x_train, pol$y_train, kernel = hp$kernel, noise = hp$noise,
                samples = 16, threads = threads)
)[["elapsed"]]
fit

scores <- predictive_scores(fit, pol$x_test, pol$y_test, normalised = TRUE)
cat(sprintf("pol split 0: test RMSE %.4f, NLL %.3f (normalised units); fit %.1f s on %d threads\n",
            scores[["rmse"]], scores[["nll"]], elapsed, threads))
