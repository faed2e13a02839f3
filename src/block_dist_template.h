/* Squared distances from point i of p1 to points of p2, as sums over the
 * coordinates of one of two terms: the squared differences, or the
 * products, from which r2 = (|x|^2 + |y|^2) - 2 x'y with the points'
 * squared norms (sq_norms in block.c; see block_uses_norms for where, and
 * why).  The DIST_W points of a vector are summed at once, one per SIMD
 * lane, in registers (the compiler will not vectorise a loop over points
 * with a variable-length loop over coordinates inside).  Every sum runs
 * over the coordinates in order, however it is reached (DIST_W lanes,
 * four rows, one point), so a distance has the same bits whichever way it
 * is computed.
 *
 * A template, written once for both terms and both precisions and
 * included by block.c once per variant (the way of matrixStats'
 * *_template.h files), so that debuggers, profilers and sanitizers see
 * its real lines.  Define before each #include (this file #undefs them):
 *   DIST_SUFFIX   appended to the names of the functions (may be empty);
 *   DIST_T        the type, double or float;
 *   DIST_COORDS   the points' coordinates in it (x or x32);
 *   DIST_W        the lanes (one AVX-512 vector of DIST_T);
 *   DIST_TERM(a, b)  the term summed over coordinates;
 *   DIST_FINISH(s, nx, q, ny, j)  the distance from the sum s for row q and
 *                 column j (nx and ny the norms, NULL for differences).
 * It needs points (block.h), SDDGP_HOT and SDDGP_INLINE (vmath.h) and
 * COORD_BLOCK, and defines, with <S> the suffix:
 *   coord_dist_points<S>(p1, i, nxi, p2, j0, len, ny, r2): point i of p1
 *   (norm nxi) against points j0..j0+len-1 of p2 (norms ny[0..len-1]);
 *   coord_dist_rows<S>(p1, idx, nr, nx, p2, j0, len, ny, r2, ld): the same
 *   for the nr points idx[q] of p1 (norms nx[q]), into r2 + q * ld, four at
 *   a time: each load of p2's coordinates serves four sums.  At d = 26 or
 *   more the coordinates of a tile outgrow L1, and with one point at a time
 *   every point reloaded them, so the loads, not the arithmetic, set the
 *   pace.  The four points' coordinates are first copied side by side (xq),
 *   COORD_BLOCK coordinates at a time: in place they lie n1 apart, and
 *   where n1 doubles make a multiple of 4 KB (a separate matrix of 512
 *   points) all of one point's coordinates fall in the same L1 set and
 *   evict each other.  A block's sums start from the previous block's, and
 *   the last block finishes them.
 * No include guard: it is meant to be included more than once. */

/* Two steps, so that DIST_SUFFIX is expanded before it is pasted. */
#define DIST_PASTE(name, suffix) name##suffix
#define DIST_PASTE_EXPANDED(name, suffix) DIST_PASTE(name, suffix)
#define DIST_NAME(name) DIST_PASTE_EXPANDED(name, DIST_SUFFIX)

static inline void DIST_NAME(coord_dist_lanes)(
    const DIST_T *xi, size_t n1, const DIST_T *nxi, const points *p2, int j0,
    const DIST_T *ny, int t, DIST_T *r2)
{
  const DIST_T *coords = p2->DIST_COORDS + j0 + t;
  const size_t n2 = (size_t)p2->n;
  DIST_T s[DIST_W] = {0};
  for (int c = 0; c < p2->d; c++) {
    const DIST_T xc = xi[c * n1], *col = coords + c * n2;
    #pragma omp simd
    for (int w = 0; w < DIST_W; w++) s[w] += DIST_TERM(xc, col[w]);
  }
  #pragma omp simd
  for (int w = 0; w < DIST_W; w++)
    r2[w] = DIST_FINISH(s[w], nxi, 0, ny, t + w);
}

/* Sums over coordinates c0..c1-1 of four rows (xq) against DIST_W points,
 * added to o[k] unless c0 = 0; the last block (c1 = d) finishes them. */
SDDGP_INLINE void DIST_NAME(coord_dist_lanes4)(
    const DIST_T *xq, int c0, int c1, const points *p2, int j0,
    const DIST_T *nx, int q, const DIST_T *ny, int t, DIST_T *const *o)
{
  const DIST_T *coords = p2->DIST_COORDS + j0 + t;
  const size_t n2 = (size_t)p2->n;
  DIST_T s0[DIST_W], s1[DIST_W], s2[DIST_W], s3[DIST_W];
  for (int w = 0; w < DIST_W; w++) {
    s0[w] = c0 ? o[0][w] : 0;
    s1[w] = c0 ? o[1][w] : 0;
    s2[w] = c0 ? o[2][w] : 0;
    s3[w] = c0 ? o[3][w] : 0;
  }
  for (int c = c0; c < c1; c++) {
    const DIST_T *x = xq + 4 * (c - c0);
    const DIST_T x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    const DIST_T *col = coords + c * n2;
    #pragma omp simd
    for (int w = 0; w < DIST_W; w++) {
      s0[w] += DIST_TERM(x0, col[w]);
      s1[w] += DIST_TERM(x1, col[w]);
      s2[w] += DIST_TERM(x2, col[w]);
      s3[w] += DIST_TERM(x3, col[w]);
    }
  }
  if (c1 < p2->d) {
    for (int w = 0; w < DIST_W; w++) {
      o[0][w] = s0[w];
      o[1][w] = s1[w];
      o[2][w] = s2[w];
      o[3][w] = s3[w];
    }
    return;
  }
  #pragma omp simd
  for (int w = 0; w < DIST_W; w++) {
    o[0][w] = DIST_FINISH(s0[w], nx, q, ny, t + w);
    o[1][w] = DIST_FINISH(s1[w], nx, q + 1, ny, t + w);
    o[2][w] = DIST_FINISH(s2[w], nx, q + 2, ny, t + w);
    o[3][w] = DIST_FINISH(s3[w], nx, q + 3, ny, t + w);
  }
}

static inline DIST_T DIST_NAME(coord_sum_one)(const DIST_T *xi, size_t n1,
                                               const points *p2, int j)
{
  DIST_T s = 0;
  for (int c = 0; c < p2->d; c++)
    s += DIST_TERM(xi[c * n1], p2->DIST_COORDS[c * (size_t)p2->n + j]);
  return s;
}

SDDGP_HOT
static void DIST_NAME(coord_dist_points)(const points *p1, int i,
                                         const DIST_T *nxi, const points *p2,
                                         int j0, int len, const DIST_T *ny,
                                         DIST_T *r2)
{
  const DIST_T *xi = p1->DIST_COORDS + i;
  const size_t n1 = (size_t)p1->n;
  int t = 0;
  for (; t + DIST_W <= len; t += DIST_W)
    DIST_NAME(coord_dist_lanes)(xi, n1, nxi, p2, j0, ny, t, r2 + t);
  for (; t < len; t++)
    r2[t] = DIST_FINISH(DIST_NAME(coord_sum_one)(xi, n1, p2, j0 + t), nxi, 0,
                        ny, t);
}

SDDGP_HOT
static void DIST_NAME(coord_dist_rows)(const points *p1, const int *idx,
                                       int nr, const DIST_T *nx,
                                       const points *p2, int j0, int len,
                                       const DIST_T *ny, DIST_T *r2, size_t ld)
{
  const size_t n1 = (size_t)p1->n;
  int q = 0;
  for (; q + 4 <= nr; q += 4) {
    const DIST_T *xi[4];
    DIST_T *out[4];
    for (int k = 0; k < 4; k++) {
      xi[k] = p1->DIST_COORDS + idx[q + k];
      out[k] = r2 + (q + k) * ld;
    }
    const int full = len - len % DIST_W;
    for (int c0 = 0; c0 < p2->d; c0 += COORD_BLOCK) {
      const int c1 = p2->d - c0 < COORD_BLOCK ? p2->d : c0 + COORD_BLOCK;
      DIST_T xq[4 * COORD_BLOCK];
      for (int c = c0; c < c1; c++)
        for (int k = 0; k < 4; k++) xq[4 * (c - c0) + k] = xi[k][c * n1];
      for (int t = 0; t < full; t += DIST_W) {
        DIST_T *const at[4] = {out[0] + t, out[1] + t, out[2] + t, out[3] + t};
        DIST_NAME(coord_dist_lanes4)(xq, c0, c1, p2, j0, nx, q, ny, t, at);
      }
    }
    for (int t = full; t < len; t++)
      for (int k = 0; k < 4; k++)
        out[k][t] = DIST_FINISH(DIST_NAME(coord_sum_one)(xi[k], n1, p2, j0 + t),
                                nx, q + k, ny, t);
  }
  for (; q < nr; q++)
    DIST_NAME(coord_dist_points)(p1, idx[q], nx ? nx + q : NULL, p2, j0,
                                 len, ny, r2 + q * ld);
}

#undef DIST_NAME
#undef DIST_PASTE_EXPANDED
#undef DIST_PASTE
#undef DIST_SUFFIX
#undef DIST_T
#undef DIST_COORDS
#undef DIST_W
#undef DIST_TERM
#undef DIST_FINISH
