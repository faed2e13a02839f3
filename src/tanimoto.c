#include <string.h>
#include "tanimoto.h"
#include "vmath.h"

/* T from the sum of minima m and the two sums (tanimoto.h). */
static inline double tanimoto_of(double m, double sx, double sy)
{
  const double den = sx + sy - m;
  return den > 0 ? m / den : 1.0;
}

/* The dense loop: block_dist_template.h with min as the term summed over
 * the coordinates and T as the finish, nx and ny the points' sums. */
#define DIST_SUFFIX _minmax
#define DIST_T double
#define DIST_COORDS x
#define DIST_W 8
#define DIST_TERM vm_min
#define DIST_FINISH(s, nx, q, ny, j) tanimoto_of((s), (nx)[q], (ny)[j])
#include "block_dist_template.h"

int tanimoto_words(int d)
{
  return (d + 63) / 64;
}

/* Four rows of bits against each column point at a time: each load of
 * the column's words serves four AND-popcount sums, independent chains
 * the core overlaps.  A last group of fewer rows repeats its last row and
 * stores only its own.  popcount is the instruction in the x86-64-v3 and
 * v4 clones of SDDGP_HOT, a short bit trick otherwise. */
SDDGP_HOT
static void binary_rows(const fingerprints *f1, const int *idx, int nr,
                        const fingerprints *f2, int j0, int len, double *out,
                        size_t ld)
{
  const int words = f1->words;
  for (int q0 = 0; q0 < nr; q0 += 4) {
    const int nq = nr - q0 < 4 ? nr - q0 : 4;
    const uint64_t *a[4];
    double sa[4];
    for (int k = 0; k < 4; k++) {
      const int i = idx[q0 + (k < nq ? k : nq - 1)];
      a[k] = f1->bits + (size_t)i * words;
      sa[k] = f1->sums[i];
    }
    for (int t = 0; t < len; t++) {
      const int j = j0 + t;
      const uint64_t *b = f2->bits + (size_t)j * words;
      int c0 = 0, c1 = 0, c2 = 0, c3 = 0;
      for (int w = 0; w < words; w++) {
        const uint64_t bw = b[w];
        c0 += __builtin_popcountll(a[0][w] & bw);
        c1 += __builtin_popcountll(a[1][w] & bw);
        c2 += __builtin_popcountll(a[2][w] & bw);
        c3 += __builtin_popcountll(a[3][w] & bw);
      }
      const double c[4] = {c0, c1, c2, c3}, sb = f2->sums[j];
      for (int k = 0; k < nq; k++)
        out[(q0 + k) * ld + t] = tanimoto_of(c[k], sa[k], sb);
    }
  }
}

/* Sum of minima of two sparse rows, by merging their sorted columns.
 * Written without branches on the columns (selects the compiler turns
 * into conditional moves): which side advances is a coin toss on
 * fingerprints, and mispredicted branches cost more than the rest. */
static double sparse_min_sum(const fingerprints *f1, int i,
                             const fingerprints *f2, int j)
{
  int a = f1->start[i], b = f2->start[j];
  const int ea = f1->start[i + 1], eb = f2->start[j + 1];
  double m = 0.0;
  while (a < ea && b < eb) {
    const int ca = f1->col[a], cb = f2->col[b];
    m += ca == cb ? vm_min(f1->val[a], f2->val[b]) : 0.0;
    a += ca <= cb;
    b += cb <= ca;
  }
  return m;
}

void tanimoto_rows(const points *p1, const int *idx, int nr, const points *p2,
                   int j0, int len, double *out, size_t ld)
{
  const fingerprints *f1 = p1->fp, *f2 = p2->fp;
  if (f1->words) {
    binary_rows(f1, idx, nr, f2, j0, len, out, ld);
  } else if (f1->start) {
    for (int q = 0; q < nr; q++)
      for (int t = 0; t < len; t++)
        out[q * ld + t] = tanimoto_of(sparse_min_sum(f1, idx[q], f2, j0 + t),
                                      f1->sums[idx[q]], f2->sums[j0 + t]);
  } else {
    double nx[64];
    for (int q0 = 0; q0 < nr; q0 += 64) {
      const int nq = nr - q0 < 64 ? nr - q0 : 64;
      for (int q = 0; q < nq; q++) nx[q] = f1->sums[idx[q0 + q]];
      coord_dist_rows_minmax(p1, idx + q0, nq, nx, p2, j0, len,
                             f2->sums + j0, out + q0 * ld, ld);
    }
  }
}

double tanimoto_point_bytes(const points *p)
{
  const fingerprints *f = p->fp;
  if (f->words) return 8.0 * (f->words + 1);
  if (f->start) return 12.0 * f->start[p->n] / (p->n > 0 ? p->n : 1) + 8.0;
  return 8.0 * (p->d + 1);
}

void tanimoto_each_nonzero(const points *p, int i, tanimoto_visit visit,
                           void *ctx)
{
  const fingerprints *f = p->fp;
  if (f->words) {
    const uint64_t *row = f->bits + (size_t)i * f->words;
    for (int w = 0; w < f->words; w++)
      for (uint64_t b = row[w]; b; b &= b - 1)
        visit(ctx, 64 * w + __builtin_ctzll(b), 1.0);
  } else if (f->start) {
    for (int e = f->start[i]; e < f->start[i + 1]; e++)
      visit(ctx, f->col[e], f->val[e]);
  } else {
    for (int c = 0; c < p->d; c++) {
      const double v = p->x[i + (size_t)c * p->n];
      if (v != 0) visit(ctx, c, v);
    }
  }
}

void tanimoto_pack_dense(const double *x, int n, int d, uint64_t *bits,
                         double *sums)
{
  const int words = tanimoto_words(d);
  memset(bits, 0, sizeof(uint64_t) * (size_t)n * words);
  for (int c = 0; c < d; c++) {
    const uint64_t bit = (uint64_t)1 << (c % 64);
    const double *col = x + (size_t)c * n;
    for (int i = 0; i < n; i++)
      if (col[i] != 0) bits[(size_t)i * words + c / 64] |= bit;
  }
  for (int i = 0; i < n; i++) {
    int s = 0;
    for (int w = 0; w < words; w++) s += __builtin_popcountll(bits[(size_t)i * words + w]);
    sums[i] = s;
  }
}

void tanimoto_pack_csc(const int *colptr, const int *rowind, const double *v,
                       int n, int d, uint64_t *bits, double *sums)
{
  const int words = tanimoto_words(d);
  memset(bits, 0, sizeof(uint64_t) * (size_t)n * words);
  for (int i = 0; i < n; i++) sums[i] = 0.0;
  for (int c = 0; c < d; c++)
    for (int e = colptr[c]; e < colptr[c + 1]; e++)
      if (v[e] != 0) {
        bits[(size_t)rowind[e] * words + c / 64] |= (uint64_t)1 << (c % 64);
        sums[rowind[e]] += 1.0;
      }
}

void tanimoto_rows_csc(const int *colptr, const int *rowind, const double *v,
                       int n, int d, int *start, int *col, double *val,
                       double *sums)
{
  /* A counting sort by row; columns are visited in order, so each row's
   * columns come out increasing.  Explicit zeros are dropped. */
  memset(start, 0, sizeof(int) * ((size_t)n + 1));
  for (int e = 0; e < colptr[d]; e++)
    if (v[e] != 0) start[rowind[e] + 1]++;
  for (int i = 0; i < n; i++) start[i + 1] += start[i];
  for (int i = 0; i < n; i++) sums[i] = 0.0;
  for (int c = 0; c < d; c++)
    for (int e = colptr[c]; e < colptr[c + 1]; e++) {
      if (v[e] == 0) continue;
      const int i = rowind[e];
      /* start[i] is row i's next free slot; shifted back below. */
      col[start[i]] = c;
      val[start[i]++] = v[e];
      sums[i] += v[e];
    }
  for (int i = n; i > 0; i--) start[i] = start[i - 1];
  start[0] = 0;
}

void tanimoto_sums_dense(const double *x, int n, int d, double *sums)
{
  for (int i = 0; i < n; i++) sums[i] = 0.0;
  for (int c = 0; c < d; c++)
    for (int i = 0; i < n; i++) sums[i] += x[i + (size_t)c * n];
}
