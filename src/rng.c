#include <math.h>
#include "rng.h"

uint64_t rng_key(uint64_t seed, rng_stream stream)
{
  return rng_mix64(seed ^ rng_mix64((uint64_t)stream * RNG_GOLDEN_GAMMA));
}

uint64_t rng_bits(uint64_t seed, rng_stream stream, uint64_t counter)
{
  return rng_keyed_bits(rng_key(seed, stream), counter);
}

double rng_uniform(uint64_t seed, rng_stream stream, uint64_t counter)
{
  return rng_keyed_uniform(rng_key(seed, stream), counter);
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
