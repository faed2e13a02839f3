#include <math.h>
#include "minhash.h"
#include "rng.h"
#include "tanimoto.h"

/* Features hashed together: the running minima of a chunk stay in L1
 * while each nonzero of the point is compared with all of them. */
#define HASH_CHUNK 256

/* The running minimum of each feature of a chunk over the point's nonzeros:
 * the key (MinHash) or log a (weighted sampling) and the hash value. */
typedef struct {
  uint64_t stream, j0; /* rng_key of the hashes' stream; the chunk's first feature */
  int d, len, binary;
  double key[HASH_CHUNK];
  int col[HASH_CHUNK];
  int64_t level[HASH_CHUNK];
} hash_state;

/* The draws of feature j at column c: counters (j d + c) k + 0..k-1. */
static inline double draw(const hash_state *h, uint64_t j, int c, int k, int t)
{
  return rng_keyed_uniform(h->stream, (j * h->d + c) * k + t);
}

static void visit(void *ctx, int c, double v)
{
  hash_state *h = ctx;
  const double log_v = h->binary ? 0.0 : log(v);
  for (int t = 0; t < h->len; t++) {
    const uint64_t j = h->j0 + t;
    double key;
    int64_t level = 0;
    if (h->binary) {
      /* MinHash: a uniform key per (feature, column). */
      key = draw(h, j, c, 1, 0);
    } else {
      /* Ioffe's (2010) improved consistent weighted sampling: r, e ~
       * Gamma(2, 1) (-log of two uniforms' product), b ~ U(0, 1);
       * level = floor(log v / r + b), y = exp(r (level - b)),
       * a = e / (y exp(r)); the least a wins, and (column, level) is the
       * hash.  Compared on the log scale, where nothing overflows. */
      const double r = -log(draw(h, j, c, 5, 0) * draw(h, j, c, 5, 1));
      const double e = -log(draw(h, j, c, 5, 2) * draw(h, j, c, 5, 3));
      const double b = draw(h, j, c, 5, 4);
      const double lv = floor(log_v / r + b);
      level = (int64_t)lv;
      key = log(e) - r * (lv - b) - r;
    }
    if (key < h->key[t]) {
      h->key[t] = key;
      h->col[t] = c;
      h->level[t] = level;
    }
  }
}

void minhash_features(uint64_t seed, uint64_t first, double scale,
                      const points *p, int i, int j0, int len, double *out)
{
  hash_state h;
  h.stream = rng_key(seed, RNG_STREAM_HASH);
  const uint64_t sign_key = rng_key(seed, RNG_STREAM_HASH_SIGN);
  h.d = p->d;
  h.binary = p->fp->words > 0;
  for (int c0 = 0; c0 < len; c0 += HASH_CHUNK) {
    h.len = len - c0 < HASH_CHUNK ? len - c0 : HASH_CHUNK;
    h.j0 = first + (uint64_t)(j0 + c0);
    for (int t = 0; t < h.len; t++) {
      h.key[t] = INFINITY;
      h.col[t] = 0;
      h.level[t] = 0;
    }
    tanimoto_each_nonzero(p, i, visit, &h);
    /* xi_j(column, level): a random sign per hash value. */
    for (int t = 0; t < h.len; t++) {
      const uint64_t j = h.j0 + t;
      const uint64_t v = rng_keyed_bits(
          rng_key(rng_keyed_bits(sign_key, j * h.d + h.col[t]), RNG_STREAM_HASH_SIGN),
          (uint64_t)h.level[t]);
      out[c0 + t] = v >> 63 ? -scale : scale;
    }
  }
}
