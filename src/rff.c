#include <math.h>
#include <string.h>
#include "rff.h"
#include "rng.h"
#include "omp_compat.h"

#define FEATURE_TILE 128

void rff_draw(const kernel *k, int m, int d, uint64_t seed, double *omega,
              double *phase)
{
  const int df = kernel_spectral_df(k);
  for (int j = 0; j < m; j++) {
    double mix = 1.0;
    if (df > 0) {
      /* chi-square with integer df: a sum of df squared normals. */
      double u = 0.0;
      for (int t = 0; t < df; t++) {
        const double z = rng_normal(seed, RNG_STREAM_CHISQ,
                                    (uint64_t)j * df + t);
        u += z * z;
      }
      mix = sqrt(df / u);
    }
    for (int c = 0; c < d; c++)
      omega[j + (size_t)c * m] =
          mix * rng_normal(seed, RNG_STREAM_OMEGA, (uint64_t)j * d + c);
    phase[j] = 6.283185307179586 * rng_uniform(seed, RNG_STREAM_PHASE, j);
  }
}

void rff_matmul(const rff *f, const points *p, const double *W, int ncol,
                double *out, int ldo, int nthreads)
{
  const int n = p->n, m = f->m, d = f->d;
  for (int c = 0; c < ncol; c++)
    memset(out + (size_t)c * ldo, 0, sizeof(double) * (size_t)n);

  #pragma omp parallel num_threads(nthreads)
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

void rff_features(const rff *f, const points *p, int i0, int i1, double *out,
                  size_t ldo, int nthreads)
{
  const int n = p->n, m = f->m, d = f->d;
  /* Projections accumulate in rff_matmul's order, so the two agree bitwise. */
  #pragma omp parallel for num_threads(nthreads) schedule(static)
  for (int i = i0; i < i1; i++) {
    for (int j = 0; j < m; j++) {
      double a = f->phase[j];
      for (int c = 0; c < d; c++)
        a += p->x[i + (size_t)c * n] * f->omega[j + (size_t)c * m];
      out[i + (size_t)j * ldo] = f->scale * cos(a);
    }
  }
}
