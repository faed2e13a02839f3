# Installs the packages sddgp imports that this R lacks, from the
# repositories R is configured with (options("repos")).  Run from the
# repository root before R CMD INSTALL:  Rscript tools/install-deps.R
imports <- read.dcf("DESCRIPTION", fields = "Imports")[1L, 1L]
pkgs <- trimws(sub("\\(.*", "", strsplit(imports, ",")[[1L]]))
base <- rownames(installed.packages(priority = "base"))
missing <- setdiff(pkgs[!vapply(pkgs, requireNamespace, logical(1), quietly = TRUE)], base)
if (length(missing)) install.packages(missing)
