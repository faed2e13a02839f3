/* The Tanimoto (Jaccard) coefficient of molecular fingerprints, and its
 * MinMax form on counts, the same formula (Ralaivola, Swamidass, Saigo and
 * Baldi 2005; Tripp, Bacallado, Singh and Hernandez-Lobato 2023):
 *   T(x, y) = sum_c min(x_c, y_c) / sum_c max(x_c, y_c)
 *           = m / (|x| + |y| - m),  m = sum_c min(x_c, y_c), |x| = sum_c x_c,
 * as min + max = x_c + y_c.  The kernel is A T (kernel.c's tanimoto row).
 * Points (block.h) carry their fingerprints in one of three forms, the
 * same for both sides of a block:
 *   binary: bit-packed rows of 64-bit words, m = popcount(a & b), eight
 *           words of AND and popcount where the dense loop takes 512 mins;
 *   sparse counts: rows of (column, count) pairs, m by merging the sorted
 *           columns, so a sparse matrix is never made dense;
 *   dense counts: the points' coordinates x, m summed over all columns.
 * No R headers: this file is part of the numerical core. */
#ifndef SDDGP_TANIMOTO_H
#define SDDGP_TANIMOTO_H

#include <stddef.h>
#include <stdint.h>
#include "block.h"

struct fingerprints {
  int words;            /* binary: words per row of bits (row-major), else 0 */
  const uint64_t *bits;
  const int *start;     /* sparse counts: row i's entries start[i] .. */
  const int *col;       /*   start[i + 1] - 1, columns increasing, */
  const double *val;    /*   counts > 0; start NULL: dense (points' x) */
  const double *sums;   /* |x| of every point */
};

/* 64-bit words of a bit-packed row of d columns. */
int tanimoto_words(int d);

/* Whether binary rows take AVX-512's vector popcount (where the compiler
 * and the CPU have it) rather than the portable loop; both give the same
 * values.  request 0 forces the portable loop, 1 allows the vector one,
 * -1 leaves the setting as it is.  Not to be called during a product. */
int tanimoto_popcount_path(int request);

/* T of the nr points idx[q] of p1 against points j0..j0+len-1 of p2 into
 * out + q * ld.  Two all-zero points have T = 1 (0/0: R rejects such
 * points; this keeps the matrix PSD). */
void tanimoto_rows(const points *p1, const int *idx, int nr, const points *p2,
                   int j0, int len, double *out, size_t ld);

/* Bytes a point of p is compared from (its words, sparse entries or
 * column of x, and its sum): block.c's measure of the work of a kernel
 * value and of what stays in cache. */
double tanimoto_point_bytes(const points *p);

/* visit(ctx, column, value) for each nonzero entry of point i of p, in
 * increasing column order. */
typedef void (*tanimoto_visit)(void *ctx, int col, double val);
void tanimoto_each_nonzero(const points *p, int i, tanimoto_visit visit,
                           void *ctx);

/* Binary rows from a dense column-major n x d 0/1 matrix x: bits (n x
 * tanimoto_words(d) words) and sums. */
void tanimoto_pack_dense(const double *x, int n, int d, uint64_t *bits,
                         double *sums);

/* The same from a compressed sparse column matrix (colptr d + 1, row
 * indices and values nnz): values that are not 0 are set bits. */
void tanimoto_pack_csc(const int *colptr, const int *rowind, const double *v,
                       int n, int d, uint64_t *bits, double *sums);

/* Sparse rows (start n + 1, col and val nnz) from a compressed sparse
 * column matrix, a transpose, and sums. */
void tanimoto_rows_csc(const int *colptr, const int *rowind, const double *v,
                       int n, int d, int *start, int *col, double *val,
                       double *sums);

/* Sums of the rows of a dense column-major n x d matrix. */
void tanimoto_sums_dense(const double *x, int n, int d, double *sums);

#endif
