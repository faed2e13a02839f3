## ---- include = FALSE---------------------------------------------------------
knitr::opts_chunk$set(collapse = TRUE, comment = "#>", fig.width = 7, fig.height = 4.5)
options(sddgp.threads = 2)
benchmark <- function(file) {
  read.csv(system.file("extdata", "benchmarks", file, package = "sddgp"))
}

## ----thompson-live------------------------------------------------------------
library(sddgp)
set.seed(1)
bump <- function(p) exp(-sum((p - c(0.3, 0.7))^2) / 0.05)
ts <- bo_thompson(bump, lower = c(0, 0), upper = c(1, 1), initial = 10,
                  steps = 4, batch = 4,
                  kernel = matern(5/2, lengthscale = 0.2, variance = 0.2),
                  noise = 1e-6, control = sdd_control(iterations = 500),
                  candidates = 500, rounds = 2)
ts
ts$history

## ----thompson-live-plot, fig.height = 3.5-------------------------------------
plot(ts, against = "evaluations")

## ----thompson-table-----------------------------------------------------------
ts_res <- benchmark("thompson.csv")
labels <- c(sdd = "SDD (200 it.)", cg = "CG (30 it.)", cg10 = "CG (10 it.)",
            random = "random search")
last <- ts_res[ts_res$step == max(ts_res$step), ]
tab <- do.call(rbind, lapply(split(last, list(last$method, last$lengthscale)), function(d) {
  data.frame(lengthscale = d$lengthscale[1], method = labels[[d$method[1]]],
             best = mean(d$best_f), se = sd(d$best_f) / sqrt(nrow(d)),
             seconds = mean(d$seconds), fit_seconds = mean(d$fit_seconds))
}))
tab <- tab[order(tab$lengthscale, -tab$best), ]
knitr::kable(tab, digits = c(1, 0, 2, 2, 0, 0), row.names = FALSE,
             col.names = c("length scale", "method", "best f after 10 steps",
                           "standard error", "seconds", "of which fitting"))

## ----thompson-plot, fig.height = 6.5------------------------------------------
cols <- c(sdd = "black", cg = "blue", cg10 = "deepskyblue", random = "grey50")
m <- aggregate(cbind(best_f, seconds) ~ lengthscale + method + step, ts_res, mean)
op <- par(mfrow = c(2, 2), mar = c(4, 4, 2.5, 1))
for (ell in sort(unique(m$lengthscale))) for (against in c("step", "seconds")) {
  sub <- m[m$lengthscale == ell, ]
  plot(NA, xlim = range(sub[[against]]), ylim = range(sub$best_f),
       xlab = if (against == "step") "step (50 evaluations each)" else "wall time (s)",
       ylab = "best f found (mean of 3 seeds)", main = sprintf("length scale %.1f", ell))
  for (k in names(labels)) {
    with(sub[sub$method == k, ], lines(get(against), best_f, type = "o", pch = 20,
                                       col = cols[[k]]))
  }
  legend("bottomright", legend = labels, col = cols, lty = 1, pch = 20, bty = "n",
         cex = 0.8)
}
par(op)

## ----mini-meta-live-----------------------------------------------------------
set.seed(1)
grid <- matrix(seq(0, 1, length.out = 201))
f <- function(x) sin(6 * x[1]) + x[1]
noisy <- function(x) f(x) + rnorm(1, sd = 0.5)
kern <- matern(5/2, lengthscale = 0.2, variance = 1)
mini <- mini_meta(noisy, candidates = grid, budget = 300, beta = 2,
                  kernel = kern, noise = 0.25)
mini
plain <- mini_meta(noisy, candidates = grid, budget = 300, beta = 2,
                   kernel = kern, noise = 0.25, mini = FALSE)
c(mini = nrow(mini$history), plain = nrow(plain$history))

## ----mini-meta-counts, fig.height = 3.5---------------------------------------
comp <- mini$compressed
plot(grid, apply(grid, 1, f), type = "l", xlab = "x", ylab = "f(x)",
     main = "Mini-GP-UCB: unique points and their number of evaluations")
points(comp$x, comp$means, pch = 19, cex = 0.5 + sqrt(comp$counts) / 3,
       col = "firebrick")

## ----mini-meta-table----------------------------------------------------------
res <- benchmark("mini_meta.csv")
methods <- c("Mini-GP-UCB", "GP-UCB", "Mini-GP-EI", "GP-EI")
summ <- aggregate(cbind(cumulative_regret, simple_regret, switches, unique, seconds) ~
                    problem + method, res, mean)
summ <- summ[order(summ$problem, match(summ$method, methods)), ]
knitr::kable(summ, digits = c(0, 0, 0, 3, 0, 0, 2), row.names = FALSE,
             col.names = c("problem", "method", "cumulative regret", "simple regret",
                           "switches H", "unique points", "seconds"))

## ----mini-meta-plot, fig.height = 6.5-----------------------------------------
curves <- benchmark("mini_meta_curves.csv")
cols <- c("Mini-GP-UCB" = "firebrick", "GP-UCB" = "navy",
          "Mini-GP-EI" = "darkorange", "GP-EI" = "steelblue")
ltys <- c("Mini-GP-UCB" = 1, "GP-UCB" = 2, "Mini-GP-EI" = 1, "GP-EI" = 2)
op <- par(mfrow = c(2, 3), mar = c(4, 4, 2.5, 1))
for (p in unique(curves$problem)) {
  mc <- aggregate(cumulative_regret ~ method + evaluations,
                  curves[curves$problem == p, ], mean)
  plot(NA, xlim = range(mc$evaluations), ylim = c(0, max(mc$cumulative_regret)),
       xlab = "evaluations", ylab = "cumulative regret", main = p)
  for (m in methods) with(mc[mc$method == m, ],
    lines(evaluations, cumulative_regret, col = cols[[m]], lty = ltys[[m]], lwd = 2))
  if (p == "branin") legend("topleft", methods, col = cols[methods], lty = ltys[methods],
                            lwd = 2, bty = "n", cex = 0.8)
}
for (p in unique(res$problem)) {
  agg <- aggregate(cbind(switches, seconds) ~ method, res[res$problem == p, ], mean)
  agg <- agg[match(methods, agg$method), ]
  mid <- barplot(agg$seconds, names.arg = sub("GP-", "", agg$method), col = cols[methods],
                 log = "y", ylim = c(0.1, 4 * max(agg$seconds)),
                 ylab = "seconds per run (log scale)", main = paste(p, "(labels: H)"),
                 cex.names = 0.8)
  text(mid, agg$seconds, round(agg$switches), pos = 3, cex = 0.8)
}
par(op)

## ----mini-meta-ratios, include = FALSE----------------------------------------
ratio <- do.call(rbind, lapply(split(summ, summ$problem), function(d) {
  do.call(rbind, lapply(c("UCB", "EI"), function(acq) {
    m <- d[d$method == paste0("Mini-GP-", acq), ]
    q <- d[d$method == paste0("GP-", acq), ]
    data.frame(regret = m$cumulative_regret / q$cumulative_regret,
               switches = q$switches / m$switches, time = q$seconds / m$seconds)
  }))
}))
span <- function(v, digits = 0) paste(format(round(range(v), digits), nsmall = digits), collapse = " to ")

