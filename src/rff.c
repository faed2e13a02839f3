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
