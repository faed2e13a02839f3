# What one core of this machine can do at most, to set the engine's
# throughput (engine.R) against: the clock and the rate of independent
# AVX-512 multiply-adds.  The VM exposes no hardware counters, so both are
# timed: the clock from chains of dependent instructions of known latency
# (imul: 3 cycles; vfmadd on zmm: 4 cycles on Intel's server cores from
# Skylake-SP to Sapphire Rapids, which the two clocks then confirm),
# the multiply-add rate from twelve independent chains.  x86-64 with
# AVX-512 only (checked before running).
#
#   Rscript inst/benchmarks/cpu_peak.R [repeats = 5]
#
# Prints the median of the repeats for each figure.

source(file.path("inst", "benchmarks", "compile_c.R"))
args <- commandArgs(trailingOnly = TRUE)
repeats <- if (length(args) >= 1) as.integer(args[1]) else 5L

src <- '
#include <R.h>
#include <Rinternals.h>
#include <time.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define FMA(r) "vfmadd231pd %%zmm12, %%zmm13, %%" r "\\n\\t"
#define ONE(r) "vbroadcastsd %[one], %%" r "\\n\\t"
#define LOOP(body) \\
  "1:\\n\\t" body "dec %[count]\\n\\tjnz 1b" \\
  : [count] "+r"(count) : [one] "m"(one), [zero] "m"(zero)

/* Seconds for n iterations of: 4 dependent imuls; 4 dependent zmm FMAs;
 * 12 independent zmm FMAs.  The registers start at 1 and add 0 times 1, so
 * no value ever leaves the normal range (subnormal operands would take
 * microcode assists and time those instead). */
SEXP cpu_peak(SEXP iterations)
{
  if (!__builtin_cpu_supports("avx512f")) error("this CPU has no AVX-512");
  const long n = (long)asReal(iterations);
  const double one = 1.0, zero = 0.0;
  long count;
  SEXP out = PROTECT(allocVector(REALSXP, 3));
  double t0 = now();
  count = n;
  __asm__ volatile(LOOP("imul %%rax, %%rax\\n\\timul %%rax, %%rax\\n\\t"
                        "imul %%rax, %%rax\\n\\timul %%rax, %%rax\\n\\t") : "rax");
  double t1 = now();
  count = n;
  __asm__ volatile(ONE("zmm0") "vbroadcastsd %[zero], %%zmm12\\n\\t" ONE("zmm13")
                   LOOP(FMA("zmm0") FMA("zmm0") FMA("zmm0") FMA("zmm0"))
                   : "xmm0", "xmm12", "xmm13");
  double t2 = now();
  count = n;
  __asm__ volatile(ONE("zmm0") ONE("zmm1") ONE("zmm2") ONE("zmm3") ONE("zmm4")
                   ONE("zmm5") ONE("zmm6") ONE("zmm7") ONE("zmm8") ONE("zmm9")
                   ONE("zmm10") ONE("zmm11")
                   "vbroadcastsd %[zero], %%zmm12\\n\\t" ONE("zmm13")
                   LOOP(FMA("zmm0") FMA("zmm1") FMA("zmm2") FMA("zmm3") FMA("zmm4")
                        FMA("zmm5") FMA("zmm6") FMA("zmm7") FMA("zmm8") FMA("zmm9")
                        FMA("zmm10") FMA("zmm11"))
                   : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
                     "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13");
  double t3 = now();
  REAL(out)[0] = t1 - t0;
  REAL(out)[1] = t2 - t1;
  REAL(out)[2] = t3 - t2;
  UNPROTECT(1);
  return out;
}
'
if (!R.version$arch %in% c("x86_64", "amd64")) stop("cpu_peak.R needs an x86-64 CPU")
dll <- compile_c(src, "cpu_peak")

n <- 1e8
times <- replicate(repeats, .Call(dll$cpu_peak, n))
med <- apply(times, 1, median)
clock_imul <- 4 * 3 * n / med[1]
clock_fma <- 4 * 4 * n / med[2]
fma_rate <- 12 * n / med[3]
cat(sprintf("clock from dependent imul (3 cycles each): %.2f GHz\n", clock_imul / 1e9))
cat(sprintf("clock from dependent zmm FMA (4 cycles each): %.2f GHz\n", clock_fma / 1e9))
cat(sprintf("independent zmm FMAs: %.3g per second, %.2f per cycle (8 double multiply-adds each)\n",
            fma_rate, fma_rate / clock_fma))
cat(sprintf("(median of %d repeats of %.0e iterations, one thread)\n", repeats, n))
