/* Counter-based random numbers: every draw is a pure function of
 * (seed, stream, counter).  Whichever thread computes a draw, and in
 * whatever order, it gets the same value, so results never depend on the
 * thread count.  The seed itself comes from R's generator (set.seed). */
#ifndef SDDGP_RNG_H
#define SDDGP_RNG_H

#include <stddef.h>
#include <stdint.h>

/* One stream per purpose, so that changing how many draws one purpose makes
 * never shifts the draws of another. */
typedef enum {
  RNG_STREAM_BATCH = 1,   /* SDD mini-batch indices and epoch permutations */
  RNG_STREAM_PROBE = 2,   /* rows of the residual probe */
  RNG_STREAM_OMEGA = 3,   /* random Fourier feature frequencies */
  RNG_STREAM_CHISQ = 4,   /* chi-square mixing of Student-t frequencies */
  RNG_STREAM_PHASE = 5,   /* random Fourier feature phases */
  RNG_STREAM_WEIGHTS = 6, /* prior weights of posterior samples */
  RNG_STREAM_NOISE = 7,   /* observation-noise draws of posterior samples */
  RNG_STREAM_STEP_FEATURES = 8, /* random features redrawn every step (SGD) */
  RNG_STREAM_DSG = 9,     /* doubly stochastic gradients: per-step features */
  RNG_STREAM_KMEANS = 10, /* k-means++ seeding of inducing points */
  RNG_STREAM_RECOMBINATION = 11, /* Caratheodory recombination's random bases */
  RNG_STREAM_BLOCKS = 12, /* coordinate blocks and mini-batches of CaBCD/BCD/Adam */
  RNG_STREAM_HASH = 13,   /* Tanimoto random hashes: keys and weighted samples */
  RNG_STREAM_HASH_SIGN = 14, /* Tanimoto random hashes: signs of hash values */
  RNG_STREAM_MIXTURE = 15, /* prior draws' frequencies: which density each comes from */
  RNG_STREAM_VECCHIA = 16  /* the Vecchia preconditioner's order of the points */
} rng_stream;

uint64_t rng_bits(uint64_t seed, rng_stream stream, uint64_t counter);

/* The same split in two, for loops that draw many numbers of one stream
 * (the random hashes): rng_bits(seed, stream, c) = rng_keyed_bits(k, c)
 * with k = rng_key(seed, stream), computed once. */
uint64_t rng_key(uint64_t seed, rng_stream stream);

/* The Weyl sequence's increment: 2^64 over the golden ratio. */
#define RNG_GOLDEN_GAMMA 0x9E3779B97F4A7C15ULL

/* SplitMix64's output function: a bijective 64-bit mixer with full
 * avalanche.  Applied to a Weyl sequence it is SplitMix64 itself, which is
 * why a counter can index the sequence directly. */
static inline uint64_t rng_mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static inline uint64_t rng_keyed_bits(uint64_t key, uint64_t counter)
{
  return rng_mix64(key + (counter + 1) * RNG_GOLDEN_GAMMA);
}

/* rng_uniform from a key: 53 random bits, shifted half a unit so 0 and 1
 * never occur. */
static inline double rng_keyed_uniform(uint64_t key, uint64_t counter)
{
  return ((double)(rng_keyed_bits(key, counter) >> 11) + 0.5) *
         (1.0 / 9007199254740992.0);
}

/* Uniform on the open interval (0, 1). */
double rng_uniform(uint64_t seed, rng_stream stream, uint64_t counter);

/* Uniform integer in 0..n-1. */
int rng_index(uint64_t seed, rng_stream stream, uint64_t counter, int n);

/* Standard normal (Box-Muller on counters 2c and 2c + 1). */
double rng_normal(uint64_t seed, rng_stream stream, uint64_t counter);

/* Fill out[0..len-1] with standard normals at counters offset, offset+1, ... */
void rng_normal_fill(uint64_t seed, rng_stream stream, uint64_t offset,
                     size_t len, double *out);

#endif
