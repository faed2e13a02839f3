/* Random Fourier features (Rahimi & Recht) for the prior draws of pathwise
 * posterior sampling (for the Tanimoto kernel, random hashes: minhash.h):
 *   phi_j(x) = sqrt(2 sigma_f^2 / m) cos(omega_j' x + phase_j),
 * on inputs already divided by their length scales.  omega_j is drawn from
 * the kernel's spectral density: standard normal for the squared
 * exponential; for Matern-nu a multivariate Student-t with 2 nu degrees of
 * freedom, z sqrt(2 nu / u) with one chi-square u per feature shared by all
 * coordinates (a per-coordinate t is only right in one dimension). */
#ifndef SDDGP_RFF_H
#define SDDGP_RFF_H

#include <stdint.h>
#include "block.h"
#include "kernel.h"

typedef struct {
  int m;               /* number of features */
  int d;
  const double *omega; /* column-major m x d */
  const double *phase; /* m */
  double scale;        /* sqrt(2 sigma_f^2 / m) */
  /* With omega NULL, the Tanimoto kernel's random hashes instead
   * (minhash.h): features first..first+m-1 of those drawn from seed, scale
   * sqrt(A / m). */
  uint64_t seed, first;
} rff;

/* The random hash features of the Tanimoto kernel k (minhash.h):
 * features first..first+m-1 drawn from seed. */
rff rff_hashes(const kernel *k, int m, int d, uint64_t seed, uint64_t first);

/* Draw omega (m x d) and phases (m) from `seed`. */
void rff_draw(const kernel *k, int m, int d, uint64_t seed, double *omega,
              double *phase);

/* Omega (m x d), phases (m) and amplitudes (m) of the features of prior
 * draws for pathwise conditioning, importance-sampled (rff.c): the
 * product of the amplitudes with N(0, 1) weights gives a draw whose
 * covariance is k on average, as rff_draw's does, with far less spread
 * where the noise is small against the signal. */
void rff_draw_prior(const kernel *k, int m, int d, uint64_t seed,
                    double *omega, double *phase, double *amplitude,
                    int nthreads);

/* A fresh feature set for step `step` of an iterative solver (SGD's
 * regulariser, the dual random-feature estimator): rff_draw with a seed
 * derived from (seed, step) on stream RNG_STREAM_STEP_FEATURES, so each
 * step's features are a function of the run's seed and the step alone. */
void rff_draw_step(const kernel *k, int m, int d, uint64_t seed, uint64_t step,
                   double *omega, double *phase);

/* Step `step`'s feature set of k: rff_draw_step's Fourier features, in
 * omega and phase, or for the Tanimoto kernel random hashes from the
 * same derived seed. */
rff rff_step(const kernel *k, int m, int d, uint64_t seed, uint64_t step,
             double *omega, double *phase);

/* Features first..first+m-1 of the sequence rff_draw draws from `seed`
 * (rff_draw is the range from 0).  Feature j depends only on (seed, j), so
 * any range can be regenerated on its own, bitwise the same for any thread
 * count: doubly stochastic gradients replay their per-step features this
 * way instead of storing them. */
void rff_draw_range(const kernel *k, int m, int d, uint64_t seed,
                    uint64_t first, double *omega, double *phase,
                    int nthreads);

/* out (p->n x ncol, leading dimension ldo) = Phi(p) W with W m x ncol.
 * Both products run through block_product (features computed a tile at a
 * time, never stored), so they do not depend on the thread count. */
void rff_matmul(const rff *f, const points *p, const double *W, int ncol,
                double *out, int ldo, int nthreads);

/* out (m x ncol) = Phi(p)' A with A p->n x ncol: the transposed product. */
void rff_tmatmul(const rff *f, const points *p, const double *A, int ncol,
                 double *out, int nthreads);

/* The feature matrix itself, for solvers that work in the primal: rows
 * i0..i1-1 of Phi(p) into out[i + j * ldo] (j < m), the same values that
 * rff_matmul sums.  A row range lets a large matrix be built in slabs with
 * interrupt checks between them. */
void rff_features(const rff *f, const points *p, int i0, int i1, double *out,
                  size_t ldo, int nthreads);

#endif
