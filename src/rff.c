#include <math.h>
#include <string.h>
#include "rff.h"
#include "rng.h"
#include "omp_compat.h"

#define FEATURE_TILE 128

/* Below this many features one thread draws them: a parallel region would
 * cost more than it saves. */
#define DRAW_PARALLEL_MIN 512

void rff_draw(const kernel *k, int m, int d, uint64_t seed, double *omega,
              double *phase)
{
  rff_draw_range(k, m, d, seed, 0, omega, phase, 1);
}

void rff_draw_range(const kernel *k, int m, int d, uint64_t seed,
                    uint64_t first, double *omega, double *phase,
                    int nthreads)
{
  const int df = kernel_spectral_df(k);
  #pragma omp parallel for num_threads(nthreads) schedule(static) \
      if (m >= DRAW_PARALLEL_MIN)
  for (int i = 0; i < m; i++) {
    const uint64_t j = first + (uint64_t)i;
    double mix = 1.0;
    if (df > 0) {
      /* chi-square with integer df: a sum of df squared normals. */
      double u = 0.0;
      for (int t = 0; t < df; t++) {
        const double z = rng_normal(seed, RNG_STREAM_CHISQ, j * df + t);
        u += z * z;
      }
      mix = sqrt(df / u);
    }
    for (int c = 0; c < d; c++)
      omega[i + (size_t)c * m] =
          mix * rng_normal(seed, RNG_STREAM_OMEGA, j * d + c);
    phase[i] = 6.283185307179586 * rng_uniform(seed, RNG_STREAM_PHASE, j);
  }
}

void rff_draw_step(const kernel *k, int m, int d, uint64_t seed, uint64_t step,
                   double *omega, double *phase)
{
  rff_draw(k, m, d, rng_bits(seed, RNG_STREAM_STEP_FEATURES, step), omega,
           phase);
}

/* Below about a millisecond of work a thread team costs more than it saves
 * (see kernel_op_block); solvers call these products every step. */
#define PARALLEL_WORK 1e6

void rff_matmul(const rff *f, const points *p, const double *W, int ncol,
                double *out, int ldo, int nthreads)
{
  const int n = p->n, m = f->m, d = f->d;
  for (int c = 0; c < ncol; c++)
    memset(out + (size_t)c * ldo, 0, sizeof(double) * (size_t)n);

  #pragma omp parallel num_threads(nthreads) \
      if ((double)n * m * (d + ncol) > PARALLEL_WORK)
  {
    double proj[FEATURE_TILE];
    /* One thread per point, features summed tile by tile in order. */
    #pragma omp for schedule(static)
    for (int i = 0; i < n; i++) {
      for (int j0 = 0; j0 < m; j0 += FEATURE_TILE) {
        const int len = m - j0 < FEATURE_TILE ? m - j0 : FEATURE_TILE;
        memcpy(proj, f->phase + j0, sizeof(double) * (size_t)len);
        for (int c = 0; c < d; c++) {
          const double xi = p->x[i + (size_t)c * n];
          const double *om = f->omega + (size_t)c * m + j0;
          /* omp simd: at R's -O2 gcc will not vectorise a loop that needs a
           * runtime aliasing check (elementwise, so the same bits). */
          #pragma omp simd
          for (int t = 0; t < len; t++) proj[t] += xi * om[t];
        }
        for (int t = 0; t < len; t++) proj[t] = f->scale * cos(proj[t]);
        for (int c = 0; c < ncol; c++) {
          const double *w = W + (size_t)c * m + j0;
          double s = 0.0;
          for (int t = 0; t < len; t++) s += proj[t] * w[t];
          out[i + (size_t)c * ldo] += s;
        }
      }
    }
  }
}

/* phi_j at point i, its projection accumulated in rff_matmul's order so
 * that every routine here gives bitwise the same feature values. */
static double feature_value(const rff *f, const points *p, int i, int j)
{
  double a = f->phase[j];
  for (int c = 0; c < f->d; c++)
    a += p->x[i + (size_t)c * p->n] * f->omega[j + (size_t)c * f->m];
  return f->scale * cos(a);
}

void rff_tmatmul(const rff *f, const points *p, const double *A, int ncol,
                 double *out, int nthreads)
{
  const int n = p->n, m = f->m, d = f->d;
  #pragma omp parallel for num_threads(nthreads) schedule(static) \
      if ((double)n * m * (d + ncol) > PARALLEL_WORK)
  for (int j = 0; j < m; j++) {
    for (int c = 0; c < ncol; c++) out[j + (size_t)c * m] = 0.0;
    for (int i = 0; i < n; i++) {
      const double phi = feature_value(f, p, i, j);
      for (int c = 0; c < ncol; c++)
        out[j + (size_t)c * m] += phi * A[i + (size_t)c * n];
    }
  }
}

void rff_features(const rff *f, const points *p, int i0, int i1, double *out,
                  size_t ldo, int nthreads)
{
  #pragma omp parallel for num_threads(nthreads) schedule(static) \
      if ((double)(i1 - i0) * f->m * f->d > PARALLEL_WORK)
  for (int i = i0; i < i1; i++)
    for (int j = 0; j < f->m; j++)
      out[i + (size_t)j * ldo] = feature_value(f, p, i, j);
}
