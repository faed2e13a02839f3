/* Random hash features of the Tanimoto kernel A T(x, y) (tanimoto.h), for
 * its prior draws (Tripp, Bacallado, Singh and Hernandez-Lobato 2023,
 * "Tanimoto random features for scalable molecular machine learning",
 * section 3): hash functions h_j whose collision probability
 * P(h_j(x) = h_j(y)) is T(x, y), and independent random signs xi_j(v) of
 * the hash values, give features
 *   phi_j(x) = sqrt(A / m) xi_j(h_j(x)),   E[phi(x)' phi(y)] = A T(x, y),
 * each pair of features +-sqrt(A / m).  For binary fingerprints h_j is
 * MinHash (Broder 1997): the set bit with the least random key.  For counts
 * it is Ioffe's (2010) consistent weighted sampling, whose collision
 * probability is the MinMax similarity, the same T.  Every random number
 * is a counter-based draw (rng.h) from (seed, feature, column), so any
 * range of features can be computed alone, on any thread, with the same
 * bits, and none is stored.  No R headers: part of the numerical core. */
#ifndef SDDGP_MINHASH_H
#define SDDGP_MINHASH_H

#include <stdint.h>
#include "block.h"

/* out[t] = phi_{first + j0 + t}(x_i) for t < len, with scale sqrt(A / m):
 * MinHash where p holds binary fingerprints, weighted sampling otherwise. */
void minhash_features(uint64_t seed, uint64_t first, double scale,
                      const points *p, int i, int j0, int len, double *out);

#endif
