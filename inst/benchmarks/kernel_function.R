# The Matern-3/2 function alone (sqrt, exp and a few multiplies per value),
# the part of every on-the-fly kernel entry that engine.R finds dominant at
# small d: sddgp's straight-line exp (src/vmath.h) and the hardware square
# root, compiled as the package is (R's flags plus configure's
# -fno-math-errno; the AVX-512 clone the package itself picks) against the
# fastest libm route, glibc's vector math library (libmvec's AVX-512 exp
# and the hardware square root), which GCC only uses under -ffast-math
# -march=x86-64-v4, flags a package may not set.  Both run over
# the same 256 arguments in L1, one thread, in alternating rounds.
# x86-64 Linux with GCC and AVX-512 only (each checked before timing).
#
#   Rscript inst/benchmarks/kernel_function.R [rounds = 9]
#
# Prints the median values per second of each and their ratio.

source(file.path("inst", "benchmarks", "compile_c.R"))
args <- commandArgs(trailingOnly = TRUE)
rounds <- if (length(args) >= 1) as.integer(args[1]) else 9L
if (!R.version$arch %in% c("x86_64", "amd64") || Sys.info()[["sysname"]] != "Linux") {
  stop("kernel_function.R needs x86-64 Linux")
}
# The libmvec route is GCC's: clang under the same flags would time another
# libm path under the same name.
cc <- system2(file.path(R.home("bin"), "R"), c("CMD", "config", "CC"), stdout = TRUE)
cc_version <- suppressWarnings(system(paste(cc, "--version"), intern = TRUE))
if (!any(grepl("Free Software Foundation", cc_version))) {
  stop("kernel_function.R needs GCC as R's C compiler (R CMD config CC gives ", cc, ")")
}

# One timing routine per build: passes over 256 squared distances (restored
# before each pass, so every pass sees the same arguments), seconds taken.
timed_src <- function(name, body) sprintf('
#include <R.h>
#include <Rinternals.h>
#include <time.h>
%s
static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

%s
static void matern32(double *r2, int len)
{
  #pragma omp simd
  for (int i = 0; i < len; i++) {
    const double r = 1.7320508075688772 * %s;
    r2[i] = (1.0 + r) * %s;
  }
}

SEXP %s(SEXP passes)
{
  if (!__builtin_cpu_supports("avx512f")) error("this CPU has no AVX-512");
  const long n = (long)asReal(passes);
  double src[256], buf[256], sink = 0.0;
  for (int i = 0; i < 256; i++) src[i] = 0.01 * i * i / 64.0;
  const double t0 = now();
  for (long p = 0; p < n; p++) {
    for (int i = 0; i < 256; i++) buf[i] = src[i];
    matern32(buf, 256);
    sink += buf[p & 255];
  }
  const double t = now() - t0;
  if (!(sink > 0)) error("kernel values were not positive");
  return ScalarReal(t);
}
', body$include, body$attr, body$sqrt, body$exp, name)

vmath <- compile_c(
  timed_src("time_vmath", list(
    include = '#include <math.h>\n#include "vmath.h"', attr = "SDDGP_HOT",
    sqrt = "sqrt(vm_max(r2[i], 0.0))", exp = "vm_exp_nonpositive(-r)")),
  "time_vmath",
  makevars = sprintf("PKG_CPPFLAGS = -I%s\nPKG_CFLAGS = $(SHLIB_OPENMP_CFLAGS) -fno-math-errno",
                     normalizePath(file.path("src"))))
libmvec <- compile_c(
  timed_src("time_libmvec", list(
    include = "#include <math.h>", attr = "", sqrt = "sqrt(fmax(r2[i], 0.0))", exp = "exp(-r)")),
  "time_libmvec",
  makevars = "PKG_CFLAGS = -ffast-math -march=x86-64-v4 -fopenmp-simd\nPKG_LIBS = -lm")

passes <- 2e5
rates <- t(replicate(rounds, c(
  sddgp = 256 * passes / .Call(vmath$time_vmath, passes),
  libmvec = 256 * passes / .Call(libmvec$time_libmvec, passes))))
med <- apply(rates, 2, median)
cat(sprintf("Matern-3/2 values per second, one thread, median of %d rounds:\n", rounds))
cat(sprintf("  sddgp (R flags and -fno-math-errno):          %.3g\n", med[["sddgp"]]))
cat(sprintf("  glibc libmvec (-ffast-math -march=x86-64-v4): %.3g\n", med[["libmvec"]]))
cat(sprintf("  ratio sddgp / libmvec: %.2f (per round: %s)\n", med[["sddgp"]] / med[["libmvec"]],
            paste(sprintf("%.2f", rates[, "sddgp"] / rates[, "libmvec"]), collapse = " ")))
