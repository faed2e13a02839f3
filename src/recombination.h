/* Caratheodory recombination (Cosentino, Oberhauser and Abate, NeurIPS
 * 2020): given N points x_i in R^n with non-negative weights mu_i, find at
 * most n + 1 of them and non-negative weights w with the same total,
 * sum w = sum mu, and the same weighted mean, sum w x = sum mu x.
 *
 * The points are first centred on their barycentre and expressed in an
 * orthonormal basis of their span (rank-deficient sets need fewer than
 * n + 1 points), each coordinate scaled to [-1, 1].  Then a divide-and-
 * conquer wrapper splits the points into G contiguous groups, reduces the
 * groups' barycentres, keeps the members of the surviving groups with
 * rescaled weights and repeats: each round shrinks the support by about
 * G / (r + 1).  The groups' barycentres are reduced by
 *   - the randomised cone algorithm (G = 50 (r + 1)): a random basis of r
 *     points, pruning of points inside its cone, basis moves with
 *     Sherman-Morrison updates, restarts with budgets following the Luby
 *     sequence; it succeeds once a point lies in minus the cone, and
 *   - the deterministic Tchernychova-Lyons routine (G = 2 (r + 1)): null
 *     vectors of [x'; 1'] from an SVD, each zeroing one weight, used when
 *     the randomised search fails and available on its own.
 * Random bases come from the counter-based generator (stream
 * RNG_STREAM_RECOMBINATION), so a seed fixes the result.  No R headers. */
#ifndef SDDGP_RECOMBINATION_H
#define SDDGP_RECOMBINATION_H

#include <stdint.h>

typedef enum {
  RECOMB_RANDOMIZED = 1,   /* cone algorithm, deterministic fallback */
  RECOMB_DETERMINISTIC = 2 /* the Tchernychova-Lyons routine alone */
} recomb_method;

typedef struct {
  int cone_runs;     /* randomised searches started */
  int cone_failures; /* of those, handed to the deterministic routine */
} recomb_stats;

/* x: N x n column-major (leading dimension N); mu: N weights >= 0.
 * Writes the kept points' indices (increasing) to idx and their weights to
 * w (both of length n + 1 at least) and returns how many were kept:
 * 0 when every weight is 0, otherwise 1 to n + 1.  Returns -1 when out of
 * memory.  stats may be NULL; otherwise its counts are increased. */
int recombine(const double *x, int N, int n, const double *mu,
              recomb_method method, uint64_t seed, int *idx, double *w,
              recomb_stats *stats);

#endif
