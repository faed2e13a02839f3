/* The Tanimoto kernel (tanimoto.h) in its three forms of fingerprints
 * against the formula typed in by hand, its products and gradient, and
 * its random hash features (minhash.h) against the kernel. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "driver.h"
#include "../../src/block.h"
#include "../../src/kernel.h"
#include "../../src/mll.h"
#include "../../src/rff.h"
#include "../../src/tanimoto.h"

/* sum min / sum max of rows i and j of column-major matrices. */
static double hand_tanimoto(const double *x1, int n1, int i, const double *x2,
                            int n2, int j, int d)
{
  double mn = 0.0, mx = 0.0;
  for (int c = 0; c < d; c++) {
    const double a = x1[i + (size_t)c * n1], b = x2[j + (size_t)c * n2];
    mn += a < b ? a : b;
    mx += a < b ? b : a;
  }
  return mn / mx;
}

/* n x d fingerprints, about a fifth of the entries set (to 1, or with
 * counts to 1..4), none all zero. */
static double *random_fingerprints(int n, int d, int counts)
{
  double *x = dalloc((size_t)n * d);
  for (int i = 0; i < n; i++) {
    int any = 0;
    for (int c = 0; c < d; c++) {
      const double v = test_unif() < 0.2 ? (counts ? 1.0 + (int)(4 * test_unif()) : 1.0) : 0.0;
      x[i + (size_t)c * n] = v;
      any |= v != 0;
    }
    if (!any) x[i] = 1.0;
  }
  return x;
}

/* One matrix in one form: dense counts (x and sums), binary (bits) or
 * sparse rows (from a compressed sparse column copy, as R's dgCMatrix). */
typedef struct {
  points p;
  fingerprints f;
  uint64_t *bits;
  int *colptr, *rowind, *start, *col;
  double *cval, *val, *sums;
} form;

enum { DENSE, BINARY, SPARSE };

static void form_make(form *s, const double *x, int n, int d, int kind)
{
  memset(s, 0, sizeof *s);
  s->sums = dalloc(n);
  const points p = {x, n, d, NULL, &s->f};
  s->p = p;
  if (kind == BINARY) {
    s->f.words = tanimoto_words(d);
    s->bits = xmalloc(sizeof(uint64_t) * (size_t)n * s->f.words);
    tanimoto_pack_dense(x, n, d, s->bits, s->sums);
    s->f.bits = s->bits;
  } else if (kind == SPARSE) {
    int nnz = 0;
    for (size_t e = 0; e < (size_t)n * d; e++) nnz += x[e] != 0;
    s->colptr = xmalloc(sizeof(int) * ((size_t)d + 1));
    s->rowind = xmalloc(sizeof(int) * (size_t)nnz);
    s->cval = dalloc(nnz);
    s->start = xmalloc(sizeof(int) * ((size_t)n + 1));
    s->col = xmalloc(sizeof(int) * (size_t)nnz);
    s->val = dalloc(nnz);
    int e = 0;
    for (int c = 0; c < d; c++) {
      s->colptr[c] = e;
      for (int i = 0; i < n; i++)
        if (x[i + (size_t)c * n] != 0) {
          s->rowind[e] = i;
          s->cval[e++] = x[i + (size_t)c * n];
        }
    }
    s->colptr[d] = e;
    tanimoto_rows_csc(s->colptr, s->rowind, s->cval, n, d, s->start, s->col,
                      s->val, s->sums);
    s->f.start = s->start;
    s->f.col = s->col;
    s->f.val = s->val;
  } else {
    tanimoto_sums_dense(x, n, d, s->sums);
  }
  s->f.sums = s->sums;
}

static void form_free(form *s)
{
  free(s->bits);
  free(s->colptr);
  free(s->rowind);
  free(s->cval);
  free(s->start);
  free(s->col);
  free(s->val);
  free(s->sums);
}

static const char *form_name[] = {"dense", "binary", "sparse"};

/* Kernel blocks and products in every form against the hand formula, at
 * d = 100 (two words, more than one block of coordinates) and 300
 * columns (more than one tile). */
static void check_values(int counts)
{
  const int n1 = 37, n2 = quick ? 150 : 300, d = 100, ncol = 3;
  const double s2 = 1.3;
  const kernel k = {KERNEL_TANIMOTO, s2};
  double *x1 = random_fingerprints(n1, d, counts);
  double *x2 = random_fingerprints(n2, d, counts);
  double *K = dalloc((size_t)n1 * n2), *ref = dalloc((size_t)n1 * n2);
  double *A = random_matrix(n2, ncol), *out = dalloc((size_t)n1 * ncol);
  double *out2 = dalloc((size_t)n1 * ncol);
  for (int i = 0; i < n1; i++)
    for (int j = 0; j < n2; j++)
      ref[i + (size_t)j * n1] = s2 * hand_tanimoto(x1, n1, i, x2, n2, j, d);
  for (int kind = DENSE; kind <= SPARSE; kind++) {
    if (kind == BINARY && counts) continue;
    form f1, f2;
    form_make(&f1, x1, n1, d, kind);
    form_make(&f2, x2, n2, d, kind);
    kernel_block_matrix(&k, &f1.p, &f2.p, K, 2);
    double err = 0.0;
    for (size_t e = 0; e < (size_t)n1 * n2; e++) err = fmax(err, fabs(K[e] - ref[e]));
    CHECK(err < 1e-14, "tanimoto %s (%s): block error %g", form_name[kind],
          counts ? "counts" : "bits", err);
    const kernel_op op = {&k, &f1.p, &f2.p, NULL, 0, NULL, NULL, NULL, 0, NULL};
    kernel_op_rows(&op, NULL, n1, A, ncol, out, n1, 1);
    kernel_op_rows(&op, NULL, n1, A, ncol, out2, n1, 2);
    double perr = 0.0;
    for (int c = 0; c < ncol; c++)
      for (int i = 0; i < n1; i++) {
        double s = 0.0;
        for (int j = 0; j < n2; j++) s += ref[i + (size_t)j * n1] * A[j + (size_t)c * n2];
        perr = fmax(perr, fabs(out[i + (size_t)c * n1] - s));
      }
    CHECK(perr < 1e-12, "tanimoto %s: product error %g", form_name[kind], perr);
    CHECK(memcmp(out, out2, sizeof(double) * (size_t)n1 * ncol) == 0,
          "tanimoto %s: products on 1 and 2 threads differ", form_name[kind]);
    /* Symmetric, the variance on the diagonal. */
    double *S = dalloc((size_t)n1 * n1);
    kernel_block_matrix(&k, &f1.p, &f1.p, S, 2);
    int sym = 1;
    for (int i = 0; i < n1; i++)
      for (int j = 0; j < n1; j++)
        sym &= S[i + (size_t)j * n1] == S[j + (size_t)i * n1] && (i != j || S[i * (n1 + 1)] == s2);
    CHECK(sym, "tanimoto %s: K(x, x) symmetric with the variance on its diagonal",
          form_name[kind]);
    free(S);
    form_free(&f1);
    form_free(&f2);
  }
  free(x1);
  free(x2);
  free(K);
  free(ref);
  free(A);
  free(out);
  free(out2);
}

/* Binary rows through the AVX-512 popcount (where this CPU has it; not
 * under valgrind) and the portable loop: the same bits, at word counts
 * with and without a partial last chunk of eight, one word to 32, and
 * columns that are not a multiple of the eight taken at a time. */
static void check_popcount_paths(void)
{
  const int dims[] = {64, 100, 1000, 1024, 2048}, n1 = 13, n2 = quick ? 61 : 301;
  const kernel k = {KERNEL_TANIMOTO, 1.0};
  for (size_t c = 0; c < sizeof dims / sizeof dims[0]; c++) {
    const int d = dims[c];
    double *x1 = random_fingerprints(n1, d, 0), *x2 = random_fingerprints(n2, d, 0);
    double *K0 = dalloc((size_t)n1 * n2), *K1 = dalloc((size_t)n1 * n2);
    form f1, f2;
    form_make(&f1, x1, n1, d, BINARY);
    form_make(&f2, x2, n2, d, BINARY);
    tanimoto_popcount_path(0);
    kernel_block_matrix(&k, &f1.p, &f2.p, K0, 2);
    const int vector = tanimoto_popcount_path(1);
    kernel_block_matrix(&k, &f1.p, &f2.p, K1, 2);
    CHECK(memcmp(K0, K1, sizeof(double) * (size_t)n1 * n2) == 0,
          "tanimoto d = %d: the %s popcount differs from the portable loop", d,
          vector ? "AVX-512" : "portable");
    form_free(&f1);
    form_free(&f2);
    free(x1);
    free(x2);
    free(K0);
    free(K1);
  }
}

/* The features' Gram matrix against the kernel: each entry is a mean of m
 * terms +-A/m with mean A T, so within 5 A sqrt((1 - T^2) / m). */
static void check_features(int counts)
{
  const int n = 12, d = 60, m = quick ? 1000 : 4000;
  const double s2 = 1.5;
  const kernel k = {KERNEL_TANIMOTO, s2};
  double *x = random_fingerprints(n, d, counts);
  double *I = dalloc((size_t)m * m), *phi = dalloc((size_t)n * m);
  double *phi2 = dalloc((size_t)n * m);
  for (size_t e = 0; e < (size_t)m * m; e++) I[e] = 0.0;
  for (int j = 0; j < m; j++) I[j + (size_t)j * m] = 1.0;
  form f;
  form_make(&f, x, n, d, counts ? SPARSE : BINARY);
  const rff feat = rff_hashes(&k, m, d, 99u, 0);
  rff_matmul(&feat, &f.p, I, m, phi, n, 1);
  rff_matmul(&feat, &f.p, I, m, phi2, n, 2);
  CHECK(memcmp(phi, phi2, sizeof(double) * (size_t)n * m) == 0,
        "hash features (%s): 1 and 2 threads differ", counts ? "counts" : "bits");
  double worst = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double g = 0.0;
      for (int t = 0; t < m; t++) g += phi[i + (size_t)t * n] * phi[j + (size_t)t * n];
      const double T = hand_tanimoto(x, n, i, x, n, j, d);
      const double sd = s2 * sqrt(fmax(1.0 - T * T, 1e-12) / m);
      worst = fmax(worst, i == j ? fabs(g - s2) / 1e-12 : fabs(g - s2 * T) / sd);
    }
  CHECK(worst < 5.0, "hash features (%s): Gram matrix %g standard deviations off",
        counts ? "counts" : "bits", worst);
  /* The transposed product reads the same features. */
  double *back = dalloc((size_t)m * n), *eye = dalloc((size_t)n * n);
  for (int i = 0; i < n * n; i++) eye[i] = i % (n + 1) == 0;
  rff_tmatmul(&feat, &f.p, eye, n, back, 2);
  int same = 1;
  for (int i = 0; i < n; i++)
    for (int t = 0; t < m; t++) same &= back[t + (size_t)i * m] == phi[i + (size_t)t * n];
  CHECK(same, "hash features: transposed product differs");
  form_free(&f);
  free(x);
  free(I);
  free(phi);
  free(phi2);
  free(back);
  free(eye);
}

/* The exact marginal likelihood's gradient: (log variance, log noise),
 * no length scales, against central differences. */
static void check_gradient(void)
{
  const int m = 60, d = 40;
  double *x = random_fingerprints(m, d, 1), *y = random_matrix(m, 1);
  form f;
  form_make(&f, x, m, d, SPARSE);
  const kernel k = {KERNEL_TANIMOTO, 0.8};
  double value, grad[2], vp, vm;
  CHECK(mll_evaluate(&k, &f.p, y, 0.1, NULL, 2, NULL, NULL, &value, grad) == MLL_OK,
        "tanimoto marginal likelihood: status");
  const double h = 1e-5;
  const kernel kp = {KERNEL_TANIMOTO, 0.8 * exp(h)}, km = {KERNEL_TANIMOTO, 0.8 * exp(-h)};
  mll_evaluate(&kp, &f.p, y, 0.1, NULL, 2, NULL, NULL, &vp, NULL);
  mll_evaluate(&km, &f.p, y, 0.1, NULL, 2, NULL, NULL, &vm, NULL);
  CHECK_CLOSE(grad[0], (vp - vm) / (2 * h), 1e-6, "tanimoto d mll / d log variance");
  mll_evaluate(&k, &f.p, y, 0.1 * exp(h), NULL, 2, NULL, NULL, &vp, NULL);
  mll_evaluate(&k, &f.p, y, 0.1 * exp(-h), NULL, 2, NULL, NULL, &vm, NULL);
  CHECK_CLOSE(grad[1], (vp - vm) / (2 * h), 1e-6, "tanimoto d mll / d log noise");
  form_free(&f);
  free(x);
  free(y);
}

void test_tanimoto(void)
{
  section("Tanimoto kernel: fingerprints in three forms, hash features");
  check_values(0);
  check_values(1);
  check_popcount_paths();
  check_features(0);
  check_features(1);
  check_gradient();
}
