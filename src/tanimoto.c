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

/* T of a row of len pairs from their sums of minima m (in o, replaced),
 * the row's sum sa and the columns' sums sb: a separate pass, so that the
 * divisions are vector instructions in the clones (as many as the pairs,
 * and scalar ones cost more than the counting). */
SDDGP_INLINE void finish_row(double *o, double sa, const double *sb, int len)
{
  #pragma omp simd
  for (int t = 0; t < len; t++) o[t] = tanimoto_of(o[t], sa, sb[t]);
}

/* Rows of four: the nr rows idx[q0..] of f1, a group of fewer repeating
 * its last row, with their sums. */
static int row_group(const fingerprints *f1, const int *idx, int nr, int q0,
                     const uint64_t *a[4], double sa[4])
{
  const int nq = nr - q0 < 4 ? nr - q0 : 4;
  for (int k = 0; k < 4; k++) {
    const int i = idx[q0 + (k < nq ? k : nq - 1)];
    a[k] = f1->bits + (size_t)i * f1->words;
    sa[k] = f1->sums[i];
  }
  return nq;
}

/* Four rows of bits against each column point at a time: each load of
 * the column's words serves four AND-popcount sums, independent chains
 * the core overlaps.  A last group of fewer rows stores only its own.
 * popcount is the instruction in the x86-64-v3 and v4 clones of
 * SDDGP_HOT, a short bit trick otherwise. */
SDDGP_HOT
static void binary_rows(const fingerprints *f1, const int *idx, int nr,
                        const fingerprints *f2, int j0, int len, double *out,
                        size_t ld)
{
  const int words = f1->words;
  for (int q0 = 0; q0 < nr; q0 += 4) {
    const uint64_t *a[4];
    double sa[4];
    const int nq = row_group(f1, idx, nr, q0, a, sa);
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
      const double c[4] = {c0, c1, c2, c3};
      for (int k = 0; k < nq; k++) out[(q0 + k) * ld + t] = c[k];
    }
    for (int k = 0; k < nq; k++)
      finish_row(out + (q0 + k) * ld, sa[k], f2->sums + j0, len);
  }
}

#if SDDGP_VPOPCNT
#include <immintrin.h>

#define SDDGP_AVX512 __attribute__((target("avx512f,avx512vpopcntdq")))

/* The AND-popcount sums of four rows a[k] against one column b, in the
 * eight lanes of a vector (each lane's part of the sum, at most 64 per
 * word loaded in it), row k in the 16-bit field k of each lane: fields
 * that cannot carry into each other while the row has fewer than 65536
 * bits (the caller's condition), so that one sum across the lanes gives
 * all four counts.  `last` masks the words of the last chunk of eight. */
SDDGP_AVX512
static inline __m512i packed_counts(const uint64_t *const a[4],
                                    const uint64_t *b, int chunks,
                                    __mmask8 last)
{
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0;
  for (int h = 0; h < chunks; h++) {
    const __mmask8 m = h == chunks - 1 ? last : 0xFF;
    const __m512i bw = _mm512_maskz_loadu_epi64(m, b + 8 * h);
#define SDDGP_ROW_COUNT(c, k) \
    c = _mm512_add_epi64(c, _mm512_popcnt_epi64(_mm512_and_si512( \
          _mm512_maskz_loadu_epi64(m, a[k] + 8 * h), bw)))
    SDDGP_ROW_COUNT(c0, 0);
    SDDGP_ROW_COUNT(c1, 1);
    SDDGP_ROW_COUNT(c2, 2);
    SDDGP_ROW_COUNT(c3, 3);
#undef SDDGP_ROW_COUNT
  }
  return _mm512_or_si512(
      _mm512_or_si512(c0, _mm512_slli_epi64(c1, 16)),
      _mm512_or_si512(_mm512_slli_epi64(c2, 32), _mm512_slli_epi64(c3, 48)));
}

/* packed_counts() for rows of at most 16 words (fingerprints of up to 1024
 * bits), the rows' words held in registers: ar[2 k + h] is row k's chunk
 * h, m[h] masks chunk h of the column (0: no such chunk). */
SDDGP_AVX512
static inline __m512i packed_counts2(const __m512i ar[8], const uint64_t *b,
                                     const __mmask8 m[2])
{
  const __m512i b0 = _mm512_maskz_loadu_epi64(m[0], b);
  const __m512i b1 = _mm512_maskz_loadu_epi64(m[1], b + 8);
#define SDDGP_ROW_COUNT(k) \
  _mm512_add_epi64(_mm512_popcnt_epi64(_mm512_and_si512(ar[2 * k], b0)), \
                   _mm512_popcnt_epi64(_mm512_and_si512(ar[2 * k + 1], b1)))
  const __m512i c0 = SDDGP_ROW_COUNT(0), c1 = SDDGP_ROW_COUNT(1);
  const __m512i c2 = SDDGP_ROW_COUNT(2), c3 = SDDGP_ROW_COUNT(3);
#undef SDDGP_ROW_COUNT
  return _mm512_or_si512(
      _mm512_or_si512(c0, _mm512_slli_epi64(c1, 16)),
      _mm512_or_si512(_mm512_slli_epi64(c2, 32), _mm512_slli_epi64(c3, 48)));
}

/* The sums across the lanes of v[0..7], lane u the sum of v[u]: a
 * transpose by halves (pairs of lanes, then 128-bit blocks), seven
 * additions for eight sums. */
SDDGP_AVX512
static inline __m512i lane_sums8(const __m512i v[8])
{
  __m512i p[4], q[2];
  #pragma GCC unroll 4
  for (int u = 0; u < 4; u++)
    p[u] = _mm512_add_epi64(_mm512_unpacklo_epi64(v[2 * u], v[2 * u + 1]),
                            _mm512_unpackhi_epi64(v[2 * u], v[2 * u + 1]));
  for (int u = 0; u < 2; u++)
    q[u] = _mm512_add_epi64(_mm512_shuffle_i64x2(p[2 * u], p[2 * u + 1], 0x88),
                            _mm512_shuffle_i64x2(p[2 * u], p[2 * u + 1], 0xDD));
  return _mm512_add_epi64(_mm512_shuffle_i64x2(q[0], q[1], 0x88),
                          _mm512_shuffle_i64x2(q[0], q[1], 0xDD));
}

/* T of nq rows (sums sa) against eight columns (sums sb) from the packed
 * counts v of the eight columns, into out + k * ld, k < nq: tanimoto_of()
 * on eight pairs at a time, its operations in its order. */
SDDGP_AVX512
static inline void eight_columns(const __m512i v[8], int nq, const double sa[4],
                                 const double *sb, double *out, size_t ld)
{
  const __m512i s = lane_sums8(v), field = _mm512_set1_epi64(0xFFFF);
  const __m512i f[4] = {s, _mm512_srli_epi64(s, 16), _mm512_srli_epi64(s, 32),
                        _mm512_srli_epi64(s, 48)};
  const __m512d sbv = _mm512_loadu_pd(sb);
  for (int k = 0; k < nq; k++) {
    const __m512d c = _mm512_cvtepi32_pd(
        _mm512_cvtepi64_epi32(_mm512_and_si512(f[k], field)));
    const __m512d den = _mm512_sub_pd(_mm512_add_pd(_mm512_set1_pd(sa[k]), sbv), c);
    _mm512_storeu_pd(out + k * ld, _mm512_mask_div_pd(
        _mm512_set1_pd(1.0), _mm512_cmp_pd_mask(den, _mm512_setzero_pd(), _CMP_GT_OQ),
        c, den));
  }
}

/* binary_rows() with AVX-512's vector popcount (VPOPCNTQ), eight words
 * an instruction, eight columns at a time, so that the sums across lanes
 * share their shuffles and T is formed as vectors along the rows, its
 * divisions overlapping the next columns' counting.  The counts are
 * integers and T the same operations: the values are binary_rows()'s. */
SDDGP_AVX512
static void binary_rows_vpopcnt(const fingerprints *f1, const int *idx, int nr,
                                const fingerprints *f2, int j0, int len,
                                double *out, size_t ld)
{
  const int words = f1->words, chunks = (words + 7) / 8;
  const __mmask8 last = (__mmask8)(0xFFu >> (8 * chunks - words));
  const int short_rows = chunks <= 2;
  for (int q0 = 0; q0 < nr; q0 += 4) {
    const uint64_t *a[4];
    double sa[4];
    const int nq = row_group(f1, idx, nr, q0, a, sa);
    const __mmask8 m[2] = {chunks == 1 ? last : 0xFF, chunks == 1 ? 0 : last};
    __m512i ar[8];
    if (short_rows)
      for (int k = 0; k < 8; k++)
        ar[k] = _mm512_maskz_loadu_epi64(m[k % 2], a[k / 2] + 8 * (k % 2));
    const uint64_t *b = f2->bits + (size_t)j0 * words;
    int t = 0;
    __m512i v[8];
    /* Two loops, so that each keeps its vectors in registers. */
    if (short_rows) {
      for (; t + 8 <= len; t += 8) {
        #pragma GCC unroll 8
        for (int u = 0; u < 8; u++)
          v[u] = packed_counts2(ar, b + (size_t)(t + u) * words, m);
        eight_columns(v, nq, sa, f2->sums + j0 + t, out + q0 * ld + t, ld);
      }
    } else {
      for (; t + 8 <= len; t += 8) {
        for (int u = 0; u < 8; u++)
          v[u] = packed_counts(a, b + (size_t)(t + u) * words, chunks, last);
        eight_columns(v, nq, sa, f2->sums + j0 + t, out + q0 * ld + t, ld);
      }
    }
    for (; t < len; t++) {
      const uint64_t s = (uint64_t)_mm512_reduce_add_epi64(
          packed_counts(a, f2->bits + (size_t)(j0 + t) * words, chunks, last));
      for (int k = 0; k < nq; k++)
        out[(q0 + k) * ld + t] = tanimoto_of((double)((s >> (16 * k)) & 0xFFFF),
                                             sa[k], f2->sums[j0 + t]);
    }
  }
}
#endif

/* Set by tanimoto_popcount_path() (from one thread, between products);
 * only read in the parallel ones. */
static int portable_only = 0;

int tanimoto_popcount_path(int request)
{
  if (request >= 0) portable_only = !request;
#if SDDGP_VPOPCNT
  /* A read of what libgcc's constructor found: the CPU's features (a
   * per-machine choice, never per thread; valgrind's emulated CPU has no
   * AVX-512, so the driver under it takes the portable path). */
  return !portable_only && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512vpopcntdq");
#else
  return 0;
#endif
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
#if SDDGP_VPOPCNT
    if (f1->words < 1024 && tanimoto_popcount_path(-1)) {
      binary_rows_vpopcnt(f1, idx, nr, f2, j0, len, out, ld);
      return;
    }
#endif
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
