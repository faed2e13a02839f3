#include <math.h>
#include "rng.h"

#define GOLDEN_GAMMA 0x9E3779B97F4A7C15ULL

/* SplitMix64's output function: a bijective 64-bit mixer with full
 * avalanche.  Applied to a Weyl sequence it is SplitMix64 itself, which is
 * why `counter` can index the sequence directly. */
static uint64_t mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t rng_bits(uint64_t seed, rng_stream stream, uint64_t counter)
{
  const uint64_t key = mix64(seed ^ mix64((uint64_t)stream * GOLDEN_GAMMA));
  return mix64(key + (counter + 1) * GOLDEN_GAMMA);
}

double rng_uniform(uint64_t seed, rng_stream stream, uint64_t counter)
{
  /* 53 random bits, shifted half a unit so 0 and 1 never occur. */
  return ((double)(rng_bits(seed, stream, counter) >> 11) + 0.5) *
         (1.0 / 9007199254740992.0);
}

int rng_index(uint64_t seed, rng_stream stream, uint64_t counter, int n)
{
  int i = (int)(rng_uniform(seed, stream, counter) * n);
  return i < n ? i : n - 1;
}

double rng_normal(uint64_t seed, rng_stream stream, uint64_t counter)
{
  const double u1 = rng_uniform(seed, stream, 2 * counter);
  const double u2 = rng_uniform(seed, stream, 2 * counter + 1);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void rng_normal_fill(uint64_t seed, rng_stream stream, uint64_t offset,
                     size_t len, double *out)
{
  for (size_t i = 0; i < len; i++) out[i] = rng_normal(seed, stream, offset + i);
}
