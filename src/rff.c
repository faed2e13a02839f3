#include <math.h>
#include <string.h>
#include "minhash.h"
#include "rff.h"
#include "rng.h"
#include "threads.h"
#include "vmath.h"

/* Below this many features one thread draws them: a parallel region would
 * cost more than it saves. */
#define DRAW_PARALLEL_MIN 512

void rff_draw(const kernel *k, int m, int d, uint64_t seed, double *omega,
              double *phase)
{
  rff_draw_range(k, m, d, seed, 0, omega, phase, 1);
}

/* Frequency and phase of feature j into row i of omega (m rows) and
 * phase: the kernel's spectral density, or for df > 0 a multivariate
 * Student-t with df degrees of freedom, whose chi-square draws take
 * counters j * stride .. j * stride + df - 1 (stride >= df keeps
 * features apart). */
static void draw_feature(int df, int stride, int m, int d, uint64_t seed,
                         uint64_t j, int i, double *omega, double *phase)
{
  double mix = 1.0;
  if (df > 0) {
    /* chi-square with integer df: a sum of df squared normals. */
    double u = 0.0;
    for (int t = 0; t < df; t++) {
      const double z = rng_normal(seed, RNG_STREAM_CHISQ, j * stride + t);
      u += z * z;
    }
    mix = sqrt(df / u);
  }
  for (int c = 0; c < d; c++)
    omega[i + (size_t)c * m] =
        mix * rng_normal(seed, RNG_STREAM_OMEGA, j * d + c);
  phase[i] = 6.283185307179586 * rng_uniform(seed, RNG_STREAM_PHASE, j);
}

void rff_draw_range(const kernel *k, int m, int d, uint64_t seed,
                    uint64_t first, double *omega, double *phase,
                    int nthreads)
{
  const int df = kernel_spectral_df(k);
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if (m >= DRAW_PARALLEL_MIN)
  for (int i = 0; i < m; i++)
    draw_feature(df, df, m, d, seed, first + (uint64_t)i, i, omega, phase);
}

/* Prior draws by importance sampling.  With frequencies from the spectral
 * density p, a draw's covariance Phi Phi' errs most through its few high
 * frequencies (p's tail), drawn or not; where the noise is small that
 * error falls where H = K + noise I is near the noise, and H^-1 magnifies
 * it by up to the signal over the noise, in the samples' variance and
 * the pathwise gradient's probes alike (inst/benchmarks/
 * standard_errors.R, pathwise_probes.R).  So half of the frequencies come
 * from a Cauchy-tailed Student-t q (one degree of freedom) instead, and
 * each feature is weighted by sqrt(p / r) with r = (p + q) / 2, the
 * density it was drawn from: the covariance is still k on average, the
 * tail is covered by many small features, and the weights are at most
 * sqrt(2) (importance sampling from a defensive mixture, Hesterberg 1995,
 * Technometrics 37:185-194). */
#define PRIOR_HEAVY_DF 1
#define PRIOR_HEAVY_SHARE 0.5

/* The log normalising constant of a d-variate Student-t with df degrees
 * of freedom (df = 0: the standard normal), computed once per draw: lgamma
 * is neither cheap nor thread-safe (glibc's sets signgam). */
static double log_spectral_constant(int df, int d)
{
  if (df == 0) return -0.5 * d * log(6.283185307179586);
  return lgamma(0.5 * (df + d)) - lgamma(0.5 * df) - 0.5 * d * log(df * 3.141592653589793);
}

/* Its log density at a point of squared norm r2, given that constant. */
static double log_spectral_density(int df, int d, double constant, double r2)
{
  if (df == 0) return constant - 0.5 * r2;
  return constant - 0.5 * (df + d) * log1p(r2 / df);
}

void rff_draw_prior(const kernel *k, int m, int d, uint64_t seed,
                    double *omega, double *phase, double *amplitude,
                    int nthreads)
{
  const int df = kernel_spectral_df(k);
  const int stride = df > PRIOR_HEAVY_DF ? df : PRIOR_HEAVY_DF;
  const double constant_p = log_spectral_constant(df, d);
  const double constant_q = log_spectral_constant(PRIOR_HEAVY_DF, d);
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if (m >= DRAW_PARALLEL_MIN)
  for (int i = 0; i < m; i++) {
    const uint64_t j = (uint64_t)i;
    const int heavy = rng_uniform(seed, RNG_STREAM_MIXTURE, j) < PRIOR_HEAVY_SHARE;
    draw_feature(heavy ? PRIOR_HEAVY_DF : df, stride, m, d, seed, j, i, omega, phase);
    double r2 = 0.0;
    for (int c = 0; c < d; c++) r2 += omega[i + (size_t)c * m] * omega[i + (size_t)c * m];
    /* p / r = 1 / (1 - share + share q / p), from the log ratio: q / p
     * overflows to infinity far in a normal p's tail, giving weight 0. */
    const double q_over_p = exp(log_spectral_density(PRIOR_HEAVY_DF, d, constant_q, r2) -
                                log_spectral_density(df, d, constant_p, r2));
    amplitude[i] = sqrt(1.0 / (1.0 - PRIOR_HEAVY_SHARE + PRIOR_HEAVY_SHARE * q_over_p));
  }
}

void rff_draw_step(const kernel *k, int m, int d, uint64_t seed, uint64_t step,
                   double *omega, double *phase)
{
  rff_draw(k, m, d, rng_bits(seed, RNG_STREAM_STEP_FEATURES, step), omega,
           phase);
}

rff rff_hashes(const kernel *k, int m, int d, uint64_t seed, uint64_t first)
{
  const rff f = {m, d, NULL, NULL, sqrt(k->variance / m), seed, first};
  return f;
}

rff rff_step(const kernel *k, int m, int d, uint64_t seed, uint64_t step,
             double *omega, double *phase)
{
  if (!kernel_stationary(k))
    return rff_hashes(k, m, d, rng_bits(seed, RNG_STREAM_STEP_FEATURES, step), 0);
  rff_draw_step(k, m, d, seed, step, omega, phase);
  const rff f = {m, d, omega, phase, sqrt(2.0 * k->variance / m), 0, 0};
  return f;
}

/* A feature matrix Phi(p) (n x m) as a source of row tiles for
 * block_product, read by rows (points) or by columns (features).  Both read
 * orders sum a projection in the same order, so an entry has the same bits
 * either way, and rff_features below reuses the first. */
typedef struct {
  const rff *f;
  const points *p;
} feature_source;

/* scale cos(v) in place: vectorised (vmath.h), unlike libm's cos. */
static inline void scaled_cos(double scale, double *v, int len)
{
  #pragma omp simd
  for (int t = 0; t < len; t++) v[t] = scale * vm_cos(v[t]);
}

/* The projections of a feature map, out[t] += sum_c s[c ss] v[t + c vs]
 * for t < len, with out[] holding the phases on entry: over the
 * coordinates c in order, four vectors of entries at a time held in
 * registers (a loop over c around one over t would load and store out[]
 * d times; the four sums are written out, as gcc keeps an array it indexes
 * in memory; eight were no faster with 100 features).  The last len % 32
 * entries take the same sums, so an entry has the same bits wherever it
 * falls. */
#define PROJ_LANES 8

SDDGP_HOT
static void project(const double *s, size_t ss, const double *v, size_t vs,
                    int d, int len, double *out)
{
  int t = 0;
  for (; t + 4 * PROJ_LANES <= len; t += 4 * PROJ_LANES) {
    double acc[4][PROJ_LANES];
    for (int q = 0; q < 4; q++)
      for (int w = 0; w < PROJ_LANES; w++) acc[q][w] = out[t + q * PROJ_LANES + w];
    for (int c = 0; c < d; c++) {
      const double sc = s[c * ss], *vc = v + c * vs + t;
      #pragma omp simd
      for (int w = 0; w < PROJ_LANES; w++) {
        acc[0][w] += sc * vc[w];
        acc[1][w] += sc * vc[PROJ_LANES + w];
        acc[2][w] += sc * vc[2 * PROJ_LANES + w];
        acc[3][w] += sc * vc[3 * PROJ_LANES + w];
      }
    }
    for (int q = 0; q < 4; q++)
      for (int w = 0; w < PROJ_LANES; w++) out[t + q * PROJ_LANES + w] = acc[q][w];
  }
  for (int c = 0; c < d; c++) {
    const double sc = s[c * ss], *vc = v + c * vs;
    /* omp simd: at R's -O2 gcc will not vectorise a loop that needs a
     * runtime aliasing check (elementwise, so the same bits). */
    #pragma omp simd
    for (int u = t; u < len; u++) out[u] += sc * vc[u];
  }
}

/* Features j0..j0+len-1 at point i. */
SDDGP_HOT
static const double *features_of_point(const void *ctx, int i, int j0, int len,
                                       double *buf)
{
  const feature_source *src = ctx;
  const rff *f = src->f;
  const points *p = src->p;
  if (!f->omega) {
    minhash_features(f->seed, f->first, f->scale, p, i, j0, len, buf);
    return buf;
  }
  memcpy(buf, f->phase + j0, sizeof(double) * (size_t)len);
  project(p->x + i, (size_t)p->n, f->omega + j0, (size_t)f->m, f->d, len, buf);
  scaled_cos(f->scale, buf, len);
  return buf;
}

/* block_product's tiles of Phi(p): features j0..j0+len-1 at a chunk of
 * points. */
static void features_of_points(const void *ctx, const int *rows, int first,
                               int nr, int j0, int len, double *buf, int ldb,
                               const double **kv)
{
  for (int q = 0; q < nr; q++)
    kv[q] = features_of_point(ctx, block_row(rows, first, q), j0, len,
                              buf + (size_t)q * ldb);
}

/* block_product's tiles of Phi(p)': a chunk of features at points
 * i0..i0+len-1 (rff_tmatmul: all features, rows NULL, so a chunk is a
 * range of them). */
SDDGP_HOT
static void feature_at_points(const void *ctx, const int *rows, int first,
                              int nr, int i0, int len, double *buf, int ldb,
                              const double **kv)
{
  const feature_source *src = ctx;
  const rff *f = src->f;
  const points *p = src->p;
  if (!f->omega) {
    double v[16];
    for (int q0 = 0; q0 < nr; q0 += 16) {
      const int nq = nr - q0 < 16 ? nr - q0 : 16;
      for (int t = 0; t < len; t++) {
        minhash_features(f->seed, f->first, f->scale, p, i0 + t,
                         block_row(rows, first, q0), nq, v);
        for (int q = 0; q < nq; q++) buf[(size_t)(q0 + q) * ldb + t] = v[q];
      }
    }
    for (int q = 0; q < nr; q++) kv[q] = buf + (size_t)q * ldb;
    return;
  }
  for (int q = 0; q < nr; q++) {
    const int j = block_row(rows, first, q);
    double *out = buf + (size_t)q * ldb;
    for (int t = 0; t < len; t++) out[t] = f->phase[j];
    project(f->omega + j, (size_t)f->m, p->x + i0, (size_t)p->n, f->d, len, out);
    scaled_cos(f->scale, out, len);
    kv[q] = out;
  }
}

/* A feature costs a projection of d terms and a cosine (about 20 flops). */
#define FEATURE_COST(f) (2.0 * (f)->d + 20.0)

void rff_matmul(const rff *f, const points *p, const double *W, int ncol,
                double *out, int ldo, int nthreads)
{
  const feature_source src = {f, p};
  /* a feature (column) brings its frequencies and phase */
  block_product(features_of_points, &src, FEATURE_COST(f),
                sizeof(double) * (size_t)(f->d + 1), NULL, p->n, f->m, W, ncol,
                out, ldo, nthreads);
}

void rff_tmatmul(const rff *f, const points *p, const double *A, int ncol,
                 double *out, int nthreads)
{
  const feature_source src = {f, p};
  /* a point (column) brings its coordinates */
  block_product(feature_at_points, &src, FEATURE_COST(f),
                sizeof(double) * (size_t)f->d, NULL, f->m, p->n, A, ncol, out,
                f->m, nthreads);
}

/* Rows of Phi(p) are computed a chunk of features at a time by the same
 * routine rff_matmul uses, so the values are the ones it sums. */
#define FEATURE_CHUNK 256

void rff_features(const rff *f, const points *p, int i0, int i1, double *out,
                  size_t ldo, int nthreads)
{
  const feature_source src = {f, p};
  /* Threads only for more than about a millisecond of work (see
   * block_product). */
  #pragma omp parallel for num_threads(threads_team(nthreads)) schedule(static) \
      if ((double)(i1 - i0) * f->m * f->d > 1e6)
  for (int i = i0; i < i1; i++) {
    double buf[FEATURE_CHUNK];
    for (int j0 = 0; j0 < f->m; j0 += FEATURE_CHUNK) {
      const int len = f->m - j0 < FEATURE_CHUNK ? f->m - j0 : FEATURE_CHUNK;
      features_of_point(&src, i, j0, len, buf);
      for (int t = 0; t < len; t++) out[i + (size_t)(j0 + t) * ldo] = buf[t];
    }
  }
}
