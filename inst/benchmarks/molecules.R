# Molecular property prediction with the Tanimoto kernel, the SDD paper's
# section 4.3 at the scale of the real data reachable offline: Debian's
# rdkit-data ships CHEMBL2321810 (1017 molecules with a measured pIC50)
# and the NCI's first 5000 molecules with their topological polar surface
# area.  Fingerprints: 1024-bit ECFP4 (circular, radius 2, as RDKit's
# Morgan fingerprints) from rcdk (CDK; needs Java), built straight into a
# sparse Matrix::dgCMatrix.  On random 80/20 splits (`reps` of them):
#   gp_exact  gp_sdd(kernel = "tanimoto", solver = "cholesky"), A, noise
#             and the prior mean estimated on a subset (estimation_control(
#             method = "subset"): estimation on all the data takes minutes);
#   gp_sdd    solver = "sdd" at the exact fit's hyperparameters (its seconds
#             are the solve's alone);
#   ranger    a random forest (500 trees, ranger's defaults) on the same
#             fingerprints, one of the paper's Table 2 baselines;
#   gbm       gradient-boosted trees (gbm: squared error, depth 6, shrinkage
#             0.1, 80% subsamples, up to 500 trees, their number chosen
#             on a validation fifth of the training rows), standing in for
#             the paper's XGBoost: xgboost is not in Debian 12, and CRAN's
#             index offers no xgboost for this R (4.2.2).
# R^2 and RMSE on the test 20%, seconds.  Appends a row per data set, split
# and method to inst/extdata/benchmarks/molecules.csv (resumable: rows
# already there are skipped).
#
#   apt-get install rdkit-data r-cran-rcdk r-cran-ranger r-cran-gbm
#   Rscript inst/benchmarks/molecules.R [reps] [threads] [data sets, e.g. nci_tpsa]
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1L) as.integer(args[[1L]]) else 5L
threads <- if (length(args) >= 2L) as.integer(args[[2L]]) else 2L
datasets <- if (length(args) >= 3L) strsplit(args[[3L]], ",")[[1L]] else
  c("chembl2321810", "nci_tpsa")
library(sddgp)
for (p in c("rcdk", "ranger", "gbm", "Matrix")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("needs the package ", p)
}
rdkit <- "/usr/share/RDKit"
out <- "inst/extdata/benchmarks/molecules.csv"

# 1024-bit ECFP4 fingerprints of SMILES as a sparse n x 1024 matrix; rows
# whose SMILES CDK cannot parse are NA in `ok`.
fingerprints <- function(smiles, size = 1024L) {
  mols <- rcdk::parse.smiles(smiles)
  ok <- !vapply(mols, is.null, logical(1L))
  bits <- lapply(mols[ok], function(m) {
    rcdk::get.fingerprint(m, type = "circular", fp.mode = "bit", size = size,
                          circular.type = "ECFP4")@bits
  })
  x <- Matrix::sparseMatrix(i = rep(seq_along(bits), lengths(bits)),
                            j = unlist(bits), x = 1, dims = c(length(bits), size))
  list(x = x, ok = ok)
}

load_chembl <- function() {
  dir <- file.path(rdkit, "Contrib/FreeWilson/data")
  smi <- utils::read.table(file.path(dir, "CHEMBL2321810.smi"), comment.char = "",
                           col.names = c("smiles", "name"), stringsAsFactors = FALSE)
  act <- utils::read.csv(file.path(dir, "CHEMBL2321810_act.csv"))
  list(smiles = smi$smiles, y = act$Act[match(smi$name, act$Name)])
}

load_nci <- function() {
  tpsa <- utils::read.csv(file.path(rdkit, "Data/NCI/first_5k.tpsa.csv"), header = FALSE,
                          comment.char = "#", col.names = c("smiles", "tpsa"),
                          stringsAsFactors = FALSE)
  list(smiles = tpsa$smiles, y = tpsa$tpsa)
}

r2 <- function(y, f) 1 - sum((y - f)^2) / sum((y - mean(y))^2)
rmse <- function(y, f) sqrt(mean((y - f)^2))
done <- if (file.exists(out)) utils::read.csv(out) else NULL
record <- function(row) {
  row$machine <- tryCatch(trimws(sub("^model name\\s*:", "", grep(
    "^model name", readLines("/proc/cpuinfo"), value = TRUE)[1L])), error = function(e) NA)
  row$load <- tryCatch(readLines("/proc/loadavg")[1L], error = function(e) NA)
  print(row[, c("data", "split", "method", "n_train", "r2", "rmse", "seconds")], digits = 4)
  utils::write.table(row, out, sep = ",", row.names = FALSE, append = file.exists(out),
                     col.names = !file.exists(out))
}
seen <- function(data, split, method) {
  !is.null(done) && any(done$data == data & done$split == split & done$method == method)
}

for (data in datasets) {
  raw <- if (data == "chembl2321810") load_chembl() else load_nci()
  seconds_fp <- system.time(fp <- fingerprints(raw$smiles))[["elapsed"]]
  x <- fp$x
  y <- raw$y[fp$ok]
  keep <- Matrix::rowSums(x) > 0 & is.finite(y)
  x <- x[keep, , drop = FALSE]
  y <- y[keep]
  cat(sprintf("%s: %d molecules (%d unparsed or empty), fingerprints in %.1f s\n",
              data, nrow(x), length(raw$y) - nrow(x), seconds_fp))
  for (split in seq_len(reps)) {
    set.seed(split)
    test <- sample.int(nrow(x), round(0.2 * nrow(x)))
    xtr <- x[-test, , drop = FALSE]
    xte <- x[test, , drop = FALSE]
    row <- function(method, f, seconds) {
      data.frame(data = data, split = split, method = method, n_train = nrow(xtr),
                 n_test = length(test), r2 = r2(y[test], f), rmse = rmse(y[test], f),
                 seconds = seconds)
    }
    exact <- NULL
    if (!seen(data, split, "gp_exact") || !seen(data, split, "gp_sdd")) {
      s <- system.time(exact <- gp_sdd(
        xtr, y[-test], kernel = "tanimoto", solver = "cholesky", threads = threads,
        estimation = estimation_control(method = "subset")))[["elapsed"]]
      if (!seen(data, split, "gp_exact")) record(row("gp_exact", predict(exact, xte), s))
    }
    if (!seen(data, split, "gp_sdd")) {
      s <- system.time(fit <- gp_sdd(
        xtr, y[-test], kernel = tanimoto(exact$kernel$variance, exact$kernel$mean),
        noise = exact$noise, solver = "sdd", threads = threads))[["elapsed"]]
      record(row("gp_sdd", predict(fit, xte), s))
    }
    dtr <- as.matrix(xtr)
    colnames(dtr) <- paste0("b", seq_len(ncol(dtr)))
    dte <- as.matrix(xte)
    colnames(dte) <- colnames(dtr)
    if (!seen(data, split, "ranger")) {
      s <- system.time(rf <- ranger::ranger(x = dtr, y = y[-test], num.threads = threads,
                                            seed = split))[["elapsed"]]
      record(row("ranger", predict(rf, dte, num.threads = threads)$predictions, s))
    }
    if (!seen(data, split, "gbm")) {
      # gbm validates on the rows after its first nTrain: shuffled first.
      set.seed(split)
      o <- sample.int(nrow(dtr))
      s <- system.time({
        gb <- gbm::gbm.fit(dtr[o, , drop = FALSE], y[-test][o], distribution = "gaussian",
                           n.trees = 500L, interaction.depth = 6L, shrinkage = 0.1,
                           n.minobsinnode = 5L, bag.fraction = 0.8, nTrain = round(0.8 * nrow(dtr)),
                           keep.data = FALSE, verbose = FALSE)
        best <- gbm::gbm.perf(gb, method = "test", plot.it = FALSE)
      })[["elapsed"]]
      record(row("gbm", predict(gb, dte, n.trees = best), s))
    }
  }
}
