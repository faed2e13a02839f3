# For the benchmarks that time C code of their own (engine.R, cpu_peak.R):
# compile a C source held in a string with R CMD SHLIB, in a temporary
# folder and with R's default flags (plus an optional Makevars), and load
# it.  Returns the DLLInfo, whose routines .Call takes as dll$name.
compile_c <- function(src, name, makevars = NULL) {
  dir <- tempfile(name)
  dir.create(dir)
  writeLines(src, file.path(dir, paste0(name, ".c")))
  if (!is.null(makevars)) writeLines(makevars, file.path(dir, "Makevars"))
  old <- setwd(dir)
  on.exit(setwd(old))
  status <- system2(file.path(R.home("bin"), "R"), c("CMD", "SHLIB", paste0(name, ".c")),
                    stdout = FALSE, stderr = FALSE)
  if (status != 0L) stop("could not compile ", name, ".c")
  dyn.load(file.path(dir, paste0(name, .Platform$dynlib.ext)))
}
