/* exp and cos as straight-line arithmetic, so that loops over arrays of
 * kernel arguments vectorise: libm's versions are function calls, which
 * leave the loops scalar.  These are accurate to a few units in the last
 * place.  sqrt() needs no such help: configure compiles the package with
 * -fno-math-errno, under which sqrt() is the vector square-root
 * instruction (correctly rounded, and cheaper than Newton's iteration).
 * No R headers: part of the numerical core. */
#ifndef SDDGP_VMATH_H
#define SDDGP_VMATH_H

#include <stdint.h>
#include <string.h>

/* The hot loops (kernel values, distances, dot products) are compiled
 * once for the baseline instruction set and, with GCC on x86-64 Linux, also
 * for AVX2+FMA and AVX-512, chosen at load time for the CPU at hand.  This
 * needs no instruction-set flags (the package must build with R's
 * defaults, so no -march).  The choice is fixed per machine, so results do not depend on
 * the thread count; different CPUs may differ in the last bits (FMA).
 * Define SDDGP_NO_CLONES to build the baseline only. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__) && !defined(SDDGP_NO_CLONES)
#define SDDGP_HOT \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SDDGP_HOT
#endif

/* The Tanimoto kernel's AVX-512 popcount path (tanimoto.c), taken at run
 * time where the CPU has the instruction: under the clones' conditions,
 * with a GCC whose intrinsics have it. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__) && !defined(SDDGP_NO_CLONES) && __GNUC__ >= 8
#define SDDGP_VPOPCNT 1
#else
#define SDDGP_VPOPCNT 0
#endif

/* Helpers of the hot loops that must be inlined into each clone: a call
 * to one compiled for the baseline would run it without AVX. */
#if defined(__GNUC__)
#define SDDGP_INLINE static inline __attribute__((always_inline))
#else
#define SDDGP_INLINE static inline
#endif

/* Sums written as LANES interleaved partial sums (entry t to lane t mod
 * LANES), totalled in lanes_total's fixed order: the compiler vectorises
 * them without reordering anything, so a sum has the same bits for any
 * thread count, tile position or vector width. */
#define LANES 8

static inline double lanes_total(const double *s)
{
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static inline double vm_bits_to_double(uint64_t u)
{
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

static inline uint64_t vm_double_to_bits(double x)
{
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* max(x, c) by bit operations on the sign of x - c.  A comparison would
 * do, but under the default -ftrapping-math the compiler then may split the
 * loop body into branches and stop vectorising it. */
static inline double vm_max(double x, double c)
{
  const uint64_t below = (uint64_t)0 - (vm_double_to_bits(x - c) >> 63);
  return vm_bits_to_double((vm_double_to_bits(x) & ~below) |
                           (vm_double_to_bits(c) & below));
}

/* min(x, c) the same way (the dense Tanimoto loop, tanimoto.c). */
static inline double vm_min(double x, double c)
{
  const uint64_t below = (uint64_t)0 - (vm_double_to_bits(x - c) >> 63);
  return vm_bits_to_double((vm_double_to_bits(x) & below) |
                           (vm_double_to_bits(c) & ~below));
}

/* exp(x) for x <= 0 (kernel arguments).  Arguments below -708, where exp
 * nears the end of the normal numbers, give exp(-708) = 3.3e-308 instead
 * of underflowing: as a kernel value that is zero in any sum, and one clamp
 * of x keeps k and r in range with no branch (clamping them instead takes
 * two, each a few instructions on the loop's critical path).
 * x = k ln 2 + r with |r| <= ln(2)/2, exp(r) by a degree-11 polynomial (a
 * near-minimax fit on [-0.35, 0.35], mpmath's chebyfit, error 3.5e-18:
 * two terms fewer than the Taylor series needs) and 2^k assembled in the
 * exponent bits.  Within 1 ulp of libm's exp on 2e7 random arguments. */
static inline double vm_exp_nonpositive(double x)
{
  const double shifter = 6755399441055744.0; /* 1.5 * 2^52 */
  x = vm_max(x, -708.0); /* k >= -1021: 2^k is normal */
  /* Adding the shifter rounds x / ln 2 to an integer k held in the low
   * bits of t's mantissa. */
  const double t = x * 1.4426950408889634074 + shifter;
  const double k = t - shifter;
  const double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
  double p = 2.511118996532136e-08;
  p = p * r + 2.763413820537965e-07;
  p = p * r + 2.755723777338061e-06;
  p = p * r + 2.4801481392218248e-05;
  p = p * r + 0.0001984126989301463;
  p = p * r + 0.0013888888956173813;
  p = p * r + 0.008333333333318475;
  p = p * r + 0.041666666666473465;
  p = p * r + 0.16666666666666682;
  p = p * r + 0.500000000000002;
  p = p * r + 1.0;
  p = p * r + 1.0;
  /* (k + 1023) << 52 is 2^k; the shifter's own bits drop out of the shift. */
  return p * vm_bits_to_double((vm_double_to_bits(t) + 1023) << 52);
}

/* cos(x), the random Fourier features' cosine: x = k pi/2 + r with
 * |r| <= pi/4 (pi/2 in three parts, Cody and Waite, exact products for
 * |k| < 2^20, so |x| up to about 1.6e6), then fdlibm's sin or cos
 * polynomial for r by the quadrant k mod 4, chosen and signed by bit
 * operations.  Within 2.3e-16 (absolute; 2 ulp) of libm's cos on 2e7
 * random arguments with |x| < 1e6; beyond 1.6e6 the reduction loses
 * accuracy gradually. */
static inline double vm_cos(double x)
{
  const double shifter = 6755399441055744.0; /* 1.5 * 2^52 */
  const double t = x * 0.63661977236758134308 + shifter;
  const double k = t - shifter;
  double r = x - k * 1.57079632673412561417e+00;
  r = r - k * 6.07710050630396597660e-11;
  r = r - k * 2.02226624879595063154e-21;
  const double r2 = r * r;
  double s = 1.58969099521155010221e-10;
  s = s * r2 - 2.50507602534068634195e-08;
  s = s * r2 + 2.75573137070700676789e-06;
  s = s * r2 - 1.98412698298579493134e-04;
  s = s * r2 + 8.33333333332248946124e-03;
  s = s * r2 - 1.66666666666666324348e-01;
  s = r + r * r2 * s;
  double c = -1.13596475577881948265e-11;
  c = c * r2 + 2.08757232129817482790e-09;
  c = c * r2 - 2.75573143513906633035e-07;
  c = c * r2 + 2.48015872894767294178e-05;
  c = c * r2 - 1.38888888888741095749e-03;
  c = c * r2 + 4.16666666666666019037e-02;
  c = (1.0 - 0.5 * r2) + r2 * r2 * c;
  /* k mod 4 in the low bits of t: odd k takes the sine, k = 1, 2 (mod 4)
   * the minus sign. */
  const uint64_t q = vm_double_to_bits(t);
  const uint64_t odd = (uint64_t)0 - (q & 1);
  const uint64_t v = (vm_double_to_bits(s) & odd) | (vm_double_to_bits(c) & ~odd);
  return vm_bits_to_double(v ^ (((q + 1) & 2) << 62));
}

/* Single precision (the kernel values of precision = "single"): the same
 * constructions with float constants, 16 lanes to an AVX-512 vector, and
 * fewer terms, since float needs 24 bits instead of 53. */
static inline float vm_bits_to_float(uint32_t u)
{
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

static inline uint32_t vm_float_to_bits(float x)
{
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static inline float vm_maxf(float x, float c)
{
  const uint32_t below = (uint32_t)0 - (vm_float_to_bits(x - c) >> 31);
  return vm_bits_to_float((vm_float_to_bits(x) & ~below) |
                          (vm_float_to_bits(c) & below));
}

/* exp(x) for x <= 0 as vm_exp_nonpositive: x clamped at -87 (exp(-87) =
 * 1.6e-38, k >= -126), ln 2 split in two parts (Cephes' expf; k times the
 * first part is exact) and a degree-6 near-minimax polynomial (chebyfit,
 * error 2e-9).  Within 1.2e-7 (2 float ulps) of exp on 2e7 random
 * arguments. */
static inline float vm_expf_nonpositive(float x)
{
  const float shifter = 12582912.0f; /* 1.5 * 2^23 */
  x = vm_maxf(x, -87.0f);
  const float t = x * 1.44269504f + shifter;
  const float k = t - shifter;
  const float r = (x - k * 0.693359375f) + k * 2.12194440e-4f;
  float p = 0.0013942148f;
  p = p * r + 0.0083759585f;
  p = p * r + 0.04166634f;
  p = p * r + 0.16666405f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return p * vm_bits_to_float((vm_float_to_bits(t) + 127) << 23);
}

#endif
