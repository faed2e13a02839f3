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
  RNG_STREAM_HASH_SIGN = 14 /* Tanimoto random hashes: signs of hash values */
} rng_stream;

uint64_t rng_bits(uint64_t seed, rng_stream stream, uint64_t counter);

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
