/* Standalone test driver for the R-free numerical core of sddgp
 * (src/kernel.c, block.c, rng.c, rff.c, sdd.c, chol.c, and per solver
 * test_<solver>.c), built with
 * sanitizers and run under valgrind by tools/driver/Makefile.
 *
 * Every check compares the core against an independent truth: formulas
 * typed in by hand, naive double loops, an explicit kernel matrix, the
 * exact Cholesky solution, or known moments.  Test data come from the
 * driver's own generator, not from rng.c.
 *
 *   ./driver           full sizes (a few seconds at -O1)
 *   ./driver --quick   smaller sizes for valgrind; the same checks
 *
 * The check framework and test-data helpers are in support.c (driver.h);
 * each solver added later has its checks in test_<solver>.c.
 *
 * Prints "N passed, N failed" and exits 1 if any check failed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "../../src/block.h"
#include "../../src/chol.h"
#include "../../src/lapack.h"
#include "../../src/rff.h"
#include "../../src/kernel.h"
#include "../../src/vmath.h"
#include "../../src/rng.h"
#include "../../src/sdd.h"
#include "../../src/omp_compat.h"

/* Largest relative error of out (nrows x ncol, leading dimension ldo)
 * against the naive product K[rows, :] A, with K n1 x n2 (rows NULL: all);
 * *padding_ok is cleared if rows nrows..ldo-1 of out lost their sentinel. */
static double naive_product_error(const double *out, int ldo, const double *K,
                                  int n1, int n2, const int *rows, int nrows,
                                  const double *A, int ncol, double sentinel,
                                  int *padding_ok)
{
  double maxerr = 0.0;
  for (int c = 0; c < ncol; c++) {
    for (int r = 0; r < nrows; r++) {
      const int i = rows ? rows[r] : r;
      double s = 0.0;
      for (int j = 0; j < n2; j++) s += K[i + (size_t)j * n1] * A[j + (size_t)c * n2];
      maxerr = fmax(maxerr, fabs(out[r + (size_t)c * ldo] - s) / fmax(1.0, fabs(s)));
    }
    for (int r = nrows; r < ldo; r++)
      if (out[r + (size_t)c * ldo] != sentinel) *padding_ok = 0;
  }
  return maxerr;
}

static const char *family_name(kernel_family f)
{
  return kernel_info_of(f)->name;
}

/* ------------------------------------------------------------------ */
/* (a) kernel values against hand-written formulas                     */

static double hand_kernel(kernel_family f, double s2, double r2)
{
  const double r = sqrt(r2);
  switch (f) {
  case KERNEL_MATERN12: return s2 * exp(-r);
  case KERNEL_MATERN32: return s2 * (1.0 + sqrt(3.0) * r) * exp(-sqrt(3.0) * r);
  case KERNEL_MATERN52:
    return s2 * (1.0 + sqrt(5.0) * r + 5.0 * r2 / 3.0) * exp(-sqrt(5.0) * r);
  case KERNEL_SE: return s2 * exp(-r2 / 2.0);
  /* Not a function of distances: apply maps the Tanimoto similarity (here
   * r2) to s2 times it; test_tanimoto.c checks the similarities. */
  case KERNEL_TANIMOTO: return s2 * r2;
  }
  return NAN;
}

/* Has the formula a cusp at r = 0, a slope in r: k(0) - k(r^2) of order r
 * rather than r^2 (at r = 1e-6, 1e-6 rather than 1e-12)? */
static int hand_cusp(kernel_family f)
{
  return hand_kernel(f, 1.0, 0.0) - hand_kernel(f, 1.0, 1e-12) > 1e-9;
}

void test_kernels(void)
{
  section("(a) kernel values");
  const double r2s[] = {0.0, 1e-12, 0.04, 0.25, 1.0, 2.5, 9.0, 40.0};
  const int nr = (int)(sizeof r2s / sizeof r2s[0]);
  const double s2 = 1.7;
  char what[96];

  CHECK(!kernel_family_valid(0) && !kernel_family_valid(6) &&
        kernel_family_valid(1) && kernel_family_valid(5),
        "kernel_family_valid accepts exactly 1..5");
  for (int row = 0; row < kernel_table_size; row++) {
    const int f = (int)kernel_table[row].family;
    const kernel k = {(kernel_family)f, s2};
    double buf[8];
    for (int i = 0; i < nr; i++) {
      snprintf(what, sizeof what, "%s k(r2 = %g)", family_name(k.family), r2s[i]);
      CHECK_CLOSE(kernel_value(&k, r2s[i]), hand_kernel(k.family, s2, r2s[i]),
                  1e-14, what);
      buf[i] = r2s[i];
    }
    kernel_apply(&k, buf, nr);
    for (int i = 0; i < nr; i++) {
      snprintf(what, sizeof what, "%s kernel_apply(r2 = %g)",
               family_name(k.family), r2s[i]);
      CHECK_CLOSE(buf[i], hand_kernel(k.family, s2, r2s[i]), 1e-14, what);
    }
    CHECK(kernel_info_of(f)->cusp == hand_cusp(k.family),
          "%s: the table's cusp flag and the formula's slope at 0 disagree",
          family_name(k.family));
    CHECK(kernel_diagonal(&k) == s2, "%s: k(x, x) = variance", family_name(k.family));
    if (!kernel_table[row].stationary) continue; /* no distances: no k(0), dk/dr2 */
    snprintf(what, sizeof what, "%s k(0) = variance", family_name(k.family));
    CHECK_CLOSE(kernel_value(&k, 0.0), s2, 1e-15, what);
    /* Rounding can make a computed squared distance slightly negative. */
    snprintf(what, sizeof what, "%s k(-1e-18) = variance", family_name(k.family));
    CHECK_CLOSE(kernel_value(&k, -1e-18), s2, 1e-15, what);

    /* dk/dr2 against a central difference in r2 (away from 0). */
    for (int i = 2; i < nr; i++) {
      const double h = 1e-6 * r2s[i];
      const double fd = (hand_kernel(k.family, s2, r2s[i] + h) -
                         hand_kernel(k.family, s2, r2s[i] - h)) / (2.0 * h);
      snprintf(what, sizeof what, "%s dk/dr2(%g)", family_name(k.family), r2s[i]);
      CHECK(fabs(kernel_dr2_at(&k, r2s[i]) - fd) <= 1e-7 * fmax(1e-3, fabs(fd)),
            "%s: got %.12g, finite difference %.12g", what,
            kernel_dr2_at(&k, r2s[i]), fd);
    }
    /* At 0 (and rounded below it) the limit: Matern-1/2's slope in r2 is
     * infinite there, and 0 stands for it (kernel.h). */
    const double at0 = k.family == KERNEL_MATERN12 ? 0.0 :
      (hand_kernel(k.family, s2, 1e-9) - s2) / 1e-9;
    snprintf(what, sizeof what, "%s dk/dr2(0)", family_name(k.family));
    CHECK_CLOSE(kernel_dr2_at(&k, 0.0), at0, 1e-3, what);
    CHECK_CLOSE(kernel_dr2_at(&k, -1e-18), at0, 1e-3, what);
  }
  /* Spot values typed from the formulas (sigma_f^2 = 1, r = 1). */
  {
    const kernel m32 = {KERNEL_MATERN32, 1.0}, se = {KERNEL_SE, 1.0};
    const kernel m12 = {KERNEL_MATERN12, 1.0}, m52 = {KERNEL_MATERN52, 1.0};
    CHECK_CLOSE(kernel_value(&m12, 1.0), 0.36787944117144233, 1e-15, "m12(1)");
    CHECK_CLOSE(kernel_value(&m32, 1.0), 0.48335772459650765, 1e-14, "m32(1)");
    CHECK_CLOSE(kernel_value(&m52, 1.0), 0.52399410883182031, 1e-14, "m52(1)");
    CHECK_CLOSE(kernel_value(&se, 1.0), 0.60653065971263342, 1e-15, "se(1)");
    CHECK(kernel_spectral_df(&m12) == 1 && kernel_spectral_df(&m32) == 3 &&
          kernel_spectral_df(&m52) == 5 && kernel_spectral_df(&se) == 0,
          "spectral df is 2 nu (0 for se)");
  }
  /* vmath.h against libm: exp on kernel arguments, cos on feature
   * projections (absolute error: cos has zeros). */
  {
    double e_exp = 0.0, e_cos = 0.0, e_expf = 0.0;
    for (int i = 0; i < (quick ? 20000 : 1000000); i++) {
      const double u = test_unif();
      const double xe = -708.0 * u * u, xc = 2e4 * (u - 0.5);
      const double ref_e = exp(xe);
      e_exp = fmax(e_exp, fabs(vm_exp_nonpositive(xe) - ref_e) / ref_e);
      e_cos = fmax(e_cos, fabs(vm_cos(xc) - cos(xc)));
      const float fe = (float)(-87.0 * u);
      e_expf = fmax(e_expf, fabs(vm_expf_nonpositive(fe) - exp((double)fe)) / exp((double)fe));
    }
    CHECK(e_exp < 2.3e-16, "vm_exp_nonpositive: max relative error %g", e_exp);
    CHECK(e_cos < 4.5e-16, "vm_cos: max absolute error %g", e_cos);
    CHECK(e_expf < 1.5e-7, "vm_expf_nonpositive: max relative error %g", e_expf);
    CHECK(vm_exp_nonpositive(0.0) == 1.0 && vm_cos(0.0) == 1.0,
          "exp(0) = 1, cos(0) = 1 exactly");
    /* Below the clamp (-708, or -87 in float) the value stays exp at the
     * clamp, a tiny normal number: no underflow, no exponent wrapped
     * around. */
    const double e708 = vm_exp_nonpositive(-708.0);
    const float e87 = vm_expf_nonpositive(-87.0f);
    CHECK(fabs(e708 - exp(-708.0)) < 2.3e-16 * exp(-708.0) &&
          fabs(e87 - exp(-87.0)) < 1.5e-7 * exp(-87.0),
          "exp at the clamp: %g, %g", e708, (double)e87);
    const double below[] = {-708.25, -745.5, -1e5, -INFINITY};
    for (int i = 0; i < 4; i++)
      CHECK(vm_exp_nonpositive(below[i]) == e708 &&
            vm_expf_nonpositive((float)below[i] / 8.0f) == e87,
            "exp below the clamp (%g): %g, %g", below[i],
            vm_exp_nonpositive(below[i]),
            (double)vm_expf_nonpositive((float)below[i] / 8.0f));
  }
}

/* ------------------------------------------------------------------ */
/* (b) kernel_op_rows / kernel_block_matrix against naive loops        */

/* At d = 3, and at d = 70, beyond one block of coordinates in the four-row
 * distances (block.c's COORD_BLOCK); points on [shift, shift + 2)^d, so
 * with shift = -1 centred (distances from norms and inner products for
 * all families but Matern-1/2), with shift = 0 not (differences). */
static void test_block_at(int d, double shift)
{
  char title[80];
  snprintf(title, sizeof title,
           "(b) kernel_op_rows and kernel_block_matrix, d = %d, points from %g", d, shift);
  section(title);
  const int n1 = 53, n2 = quick ? 150 : 300, ncol = 2;
  const int nrows = 41, ldo = nrows + 5; /* ldo > nrows: padding untouched */
  double *x1 = random_points(n1, d, 2.0), *x2 = random_points(n2, d, 2.0);
  for (size_t i = 0; i < (size_t)n1 * d; i++) x1[i] += shift;
  for (size_t i = 0; i < (size_t)n2 * d; i++) x2[i] += shift;
  double *A = random_matrix(n2, ncol);
  int rows[41];
  for (int r = 0; r < nrows; r++) rows[r] = (int)(test_unif() * n1);
  rows[0] = n1 - 1;
  rows[1] = rows[2] = 0; /* repeated rows are allowed */
  for (int c = 0; c < d; c++) x1[5 + (size_t)c * n1] = x1[(size_t)c * n1]; /* a duplicate */
  const points p1 = {x1, n1, d, NULL, NULL}, p2 = {x2, n2, d, NULL, NULL};
  char what[128];

  for (int row = 0; row < kernel_table_size; row++) {
    const int f = (int)kernel_table[row].family;
    if (!kernel_table[row].stationary) continue; /* test_tanimoto.c */
    const kernel k = {(kernel_family)f, 0.8};
    double *K = naive_kernel_matrix(&k, x1, n1, x2, n2, d);
    double *out1 = dalloc((size_t)ldo * ncol), *out2 = dalloc((size_t)ldo * ncol);
    double *full1 = dalloc((size_t)n1 * ncol), *full2 = dalloc((size_t)n1 * ncol);
    const double sentinel = -12345.0;

    /* Rows subset, 1 and 2 threads. */
    for (size_t i = 0; i < (size_t)ldo * ncol; i++) out1[i] = out2[i] = sentinel;
    block_matmul(&k, &p1, rows, nrows, &p2, A, ncol, out1, ldo, 1);
    block_matmul(&k, &p1, rows, nrows, &p2, A, ncol, out2, ldo, 2);
    int padding_ok = 1;
    double maxerr = naive_product_error(out1, ldo, K, n1, n2, rows, nrows, A,
                                        ncol, sentinel, &padding_ok);
    snprintf(what, sizeof what, "%s K[rows,] A vs naive loop", family_name(k.family));
    CHECK(maxerr < 1e-12, "%s: max rel error %g", what, maxerr);
    CHECK(padding_ok, "%s: rows nrows..ldo-1 of out must be left alone",
          family_name(k.family));
    CHECK(memcmp(out1, out2, sizeof(double) * (size_t)ldo * ncol) == 0,
          "%s: rows subset not bitwise identical for 1 and 2 threads",
          family_name(k.family));

    /* NULL rows: all of p1, 1 and 2 threads. */
    block_matmul(&k, &p1, NULL, n1, &p2, A, ncol, full1, n1, 1);
    block_matmul(&k, &p1, NULL, n1, &p2, A, ncol, full2, n1, 2);
    maxerr = naive_product_error(full1, n1, K, n1, n2, NULL, n1, A, ncol,
                                 sentinel, &padding_ok);
    CHECK(maxerr < 1e-12, "%s NULL rows vs naive loop: max rel error %g",
          family_name(k.family), maxerr);
    CHECK(memcmp(full1, full2, sizeof(double) * (size_t)n1 * ncol) == 0,
          "%s: NULL rows not bitwise identical for 1 and 2 threads",
          family_name(k.family));
    /* A row subset gives the same bits as the corresponding full row. */
    int same = 1;
    for (int c = 0; c < ncol; c++)
      for (int r = 0; r < nrows; r++)
        if (out1[r + (size_t)c * ldo] != full1[rows[r] + (size_t)c * n1]) same = 0;
    CHECK(same, "%s: subset rows differ from the same rows of the full product",
          family_name(k.family));

    /* kernel_op_rows with a precomputed K(p1, p1) (from
     * kernel_block_matrix) against the naive loop, and bitwise against the
     * same product evaluated on the fly: both feed the same tiled sums. */
    {
      double *Ksq = naive_kernel_matrix(&k, x1, n1, x1, n1, d);
      double *Kc = dalloc((size_t)n1 * n1);
      kernel_block_matrix(&k, &p1, &p1, Kc, 2);
      double *B1 = random_matrix(n1, ncol);
      double *o1 = dalloc((size_t)ldo * ncol), *o2 = dalloc((size_t)ldo * ncol);
      double *o3 = dalloc((size_t)ldo * ncol), *o4 = dalloc((size_t)n1 * ncol);
      double *o5 = dalloc((size_t)n1 * ncol);
      const kernel_op fly = {&k, &p1, &p1, NULL, 0, NULL, NULL, NULL, 0, NULL},
                      cached = {&k, &p1, &p1, Kc, 0, NULL, NULL, NULL, 0, NULL};
      for (size_t i = 0; i < (size_t)ldo * ncol; i++) o1[i] = o2[i] = o3[i] = sentinel;
      kernel_op_rows(&cached, rows, nrows, B1, ncol, o1, ldo, 1);
      kernel_op_rows(&cached, rows, nrows, B1, ncol, o3, ldo, 2);
      kernel_op_rows(&fly, rows, nrows, B1, ncol, o2, ldo, 1);
      padding_ok = 1;
      double err = naive_product_error(o1, ldo, Ksq, n1, n1, rows, nrows, B1,
                                       ncol, sentinel, &padding_ok);
      CHECK(err < 1e-12 && padding_ok,
            "%s kernel_op_rows with cache vs naive: %g, padding %s",
            family_name(k.family), err, padding_ok ? "ok" : "overwritten");
      CHECK(memcmp(o1, o3, sizeof(double) * (size_t)ldo * ncol) == 0,
            "%s kernel_op_rows with cache differs for 1 and 2 threads",
            family_name(k.family));
      CHECK(memcmp(o1, o2, sizeof(double) * (size_t)ldo * ncol) == 0,
            "%s kernel_op_rows: cached and on-the-fly rows differ in the bits",
            family_name(k.family));
      kernel_op_rows(&cached, NULL, n1, B1, ncol, o4, n1, 2);
      kernel_op_rows(&fly, NULL, n1, B1, ncol, o5, n1, 2);
      err = naive_product_error(o4, n1, Ksq, n1, n1, NULL, n1, B1, ncol,
                                sentinel, &padding_ok);
      CHECK(err < 1e-12, "%s kernel_op_rows with cache, NULL rows: %g",
            family_name(k.family), err);
      CHECK(memcmp(o4, o5, sizeof(double) * (size_t)n1 * ncol) == 0,
            "%s kernel_op_rows, NULL rows: cached and on-the-fly differ",
            family_name(k.family));
      /* The points' norms given to the operator (block_norms) or computed
       * tile by tile: the same bits, here and against p2.  (Both point
       * sets are centred: block_uses_norms except for a kernel with a cusp
       * at 0, Matern-1/2.) */
      CHECK(block_uses_norms(&k, 0, &p2) == (shift < 0 && !hand_cusp(k.family)),
            "%s block_uses_norms: only for centred points", family_name(k.family));
      if (block_uses_norms(&k, 0, &p2)) {
        double *nm1 = dalloc((size_t)n1), *nm2 = dalloc((size_t)n2);
        block_norms(&p1, nm1);
        block_norms(&p2, nm2);
        const kernel_op normed = {&k, &p1, &p1, NULL, 0, NULL, nm1, nm1, 0, NULL},
                        cross = {&k, &p1, &p2, NULL, 0, NULL, NULL, NULL, 0, NULL},
                        cross_normed = {&k, &p1, &p2, NULL, 0, NULL, nm1, nm2, 0, NULL};
        kernel_op_rows(&normed, NULL, n1, B1, ncol, o5, n1, 2);
        CHECK(memcmp(o4, o5, sizeof(double) * (size_t)n1 * ncol) == 0,
              "%s kernel_op_rows: given norms change the bits", family_name(k.family));
        kernel_op_rows(&cross, rows, nrows, A, ncol, o1, ldo, 2);
        kernel_op_rows(&cross_normed, rows, nrows, A, ncol, o2, ldo, 2);
        CHECK(memcmp(o1, o2, sizeof(double) * (size_t)ldo * ncol) == 0,
              "%s kernel_op_rows(x1, x2): given norms change the bits",
              family_name(k.family));
        free(nm1); free(nm2);
      }
      /* One row on its own (distances one point at a time) has the bits of
       * the cache's column (built four points at a time). */
      double *row = dalloc((size_t)n1);
      int rows_same = 1;
      for (int i = 0; i < n1; i += 5) {
        kernel_op_row_values(&fly, i, row);
        if (memcmp(row, Kc + (size_t)i * n1, sizeof(double) * (size_t)n1) != 0)
          rows_same = 0;
      }
      CHECK(rows_same, "%s kernel_op_row_values: a row differs from the cache's",
            family_name(k.family));
      /* Squared distances from norms and inner products still give a
       * point (and its duplicate) distance 0 to itself exactly, and a
       * symmetric matrix. */
      int diag_exact = Kc[5] == k.variance, symmetric = 1;
      for (int i = 0; i < n1; i++) {
        diag_exact &= Kc[i + (size_t)i * n1] == k.variance;
        for (int j = 0; j < i; j++)
          symmetric &= Kc[i + (size_t)j * n1] == Kc[j + (size_t)i * n1];
      }
      CHECK(diag_exact && symmetric,
            "%s kernel_block_matrix(x, x): k(x, x) and k(x, duplicate) = variance "
            "exactly (%s), symmetric bitwise (%s)", family_name(k.family),
            diag_exact ? "yes" : "no", symmetric ? "yes" : "no");
      free(Ksq); free(Kc); free(B1); free(o1); free(o2); free(o3); free(o4);
      free(o5); free(row);
    }

    /* Dense block. */
    double *M1 = dalloc((size_t)n1 * n2), *M2 = dalloc((size_t)n1 * n2);
    kernel_block_matrix(&k, &p1, &p2, M1, 1);
    kernel_block_matrix(&k, &p1, &p2, M2, 2);
    maxerr = 0.0;
    for (size_t i = 0; i < (size_t)n1 * n2; i++)
      maxerr = fmax(maxerr, fabs(M1[i] - K[i]));
    CHECK(maxerr < 1e-14, "%s kernel_block_matrix vs naive: max error %g",
          family_name(k.family), maxerr);
    CHECK(memcmp(M1, M2, sizeof(double) * (size_t)n1 * n2) == 0,
          "%s kernel_block_matrix not identical for 1 and 2 threads",
          family_name(k.family));

    free(K); free(out1); free(out2); free(full1); free(full2); free(M1); free(M2);
  }

  /* block_sq_dist itself, with an offset into p2. */
  {
    double r2[17];
    block_sq_dist(&p1, 7, &p2, 100, 17, r2);
    double maxerr = 0.0;
    for (int t = 0; t < 17; t++)
      maxerr = fmax(maxerr, fabs(r2[t] - sqdist(x1, n1, 7, x2, n2, 100 + t, d)));
    CHECK(maxerr < 1e-14 * d, "block_sq_dist: max error %g", maxerr);
  }
  /* Edge cases: one column of p2; no rows at all. */
  {
    const kernel k = {KERNEL_MATERN32, 1.3};
    const points q = {x2, 1, 1, NULL, NULL}, p = {x1, n1, 1, NULL, NULL};
    double o[53], a1 = 2.0;
    block_matmul(&k, &p, NULL, n1, &q, &a1, 1, o, n1, 2);
    double maxerr = 0.0;
    for (int i = 0; i < n1; i++) {
      const double diff = x1[i] - x2[0];
      maxerr = fmax(maxerr, fabs(o[i] - 2.0 * hand_kernel(KERNEL_MATERN32, 1.3, diff * diff)));
    }
    CHECK(maxerr < 1e-14, "n2 = 1, d = 1: max error %g", maxerr);
    o[0] = 7.0;
    block_matmul(&k, &p, rows, 0, &q, &a1, 1, o, 1, 2);
    CHECK(o[0] == 7.0, "nrows = 0 must write nothing");
  }
  free(x1); free(x2); free(A);
}

void test_block(void)
{
  test_block_at(3, -1.0);
  test_block_at(70, -1.0);
  test_block_at(3, 0.0);
}

/* ------------------------------------------------------------------ */
/* (c) chol_solve                                                       */

/* Stops at its `after`-th poll. */
typedef struct { int calls, after; } stop_after;

static int stop_callback(void *ctx, int iteration, const double *residuals)
{
  stop_after *s = ctx;
  (void)iteration;
  (void)residuals;
  return ++s->calls >= s->after;
}

/* Dense blocks built in slabs of columns: wide points (d = 6000) make the
 * slabs 64 columns at n = 200, so the build polls three times.  All of it
 * against the naive loop; a stop request ends the build at the poll that
 * asks with the columns before it built and those after untouched, and
 * ends chol_factor there too. */
static void test_block_build(void)
{
  CHECK(block_slab(100, 10.0, 1e4) == 100 && block_slab(1000, 10.0, 1e3) == 64 &&
        block_slab(1000, 1e6, 1.0) == 64 && block_slab(10000, 1.0, 1e3) == 448,
        "block_slab: all items when they fit, else whole multiples of 64");
  const int n = 200, d = 6000;
  const size_t nn = (size_t)n * n;
  double *x = random_points(n, d, 0.03), *a = dalloc(nn), *noise = dalloc(n);
  const points p = {x, n, d, NULL, NULL};
  const kernel k = {KERNEL_MATERN32, 1.0};
  double *K = naive_kernel_matrix(&k, x, n, x, n, d);
  stop_after never = {0, 1000}, second = {0, 2};
  CHECK(kernel_block_build(&k, &p, &p, 0, a, 2, stop_callback, &never) == 0 &&
        never.calls == 3, "kernel_block_build: %d polls, want 3", never.calls);
  double maxerr = 0.0;
  for (size_t e = 0; e < nn; e++) maxerr = fmax(maxerr, fabs(a[e] - K[e]));
  CHECK(maxerr < 1e-12, "kernel_block_build in slabs vs naive: max error %g", maxerr);
  double *full = dalloc(nn);
  memcpy(full, a, sizeof(double) * nn);
  for (size_t e = 0; e < nn; e++) a[e] = -1.0;
  CHECK(kernel_block_build(&k, &p, &p, 0, a, 2, stop_callback, &second) == 1 &&
        second.calls == 2, "kernel_block_build stopped after %d polls", second.calls);
  CHECK(memcmp(a, full, sizeof(double) * 128 * n) == 0 && a[128 * (size_t)n] == -1.0 &&
        a[nn - 1] == -1.0, "a stopped build: slabs 1-2 built, the rest untouched");
  for (int i = 0; i < n; i++) noise[i] = 0.1;
  stop_after first = {0, 1};
  const int info = chol_factor(&k, &p, noise, a, 2, stop_callback, &first);
  CHECK(info == CHOL_STOPPED && first.calls == 1,
        "chol_factor stopped while building: info = %d after %d polls", info,
        first.calls);
  free(x); free(a); free(noise); free(K); free(full);
}

/* The largest difference between the lower triangles of got and want,
 * and in *upper_kept whether got's strict upper triangle is still that of
 * given (all n x n). */
static double lower_difference(const double *got, const double *want,
                               const double *given, int n, int *upper_kept)
{
  double maxerr = 0.0;
  *upper_kept = 1;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      const size_t e = i + (size_t)j * n;
      if (i >= j) maxerr = fmax(maxerr, fabs(got[e] - want[e]));
      else *upper_kept &= got[e] == given[e];
    }
  return maxerr;
}

/* The blocked factorisation and solves against LAPACK's, on a size that
 * is not a multiple of the block, with a ragged last block; at full size
 * the first trailing update takes several rounds of tiles. */
static void test_chol_blocks(void)
{
  const int n = quick ? 200 : 1500, nrhs = 3;
  const size_t nn = (size_t)n * n;
  double *u = random_matrix(n, 1), *s = dalloc(nn), *ref = dalloc(nn);
  double *l1 = dalloc(nn), *l2 = dalloc(nn), *b = random_matrix(n, nrhs);
  double *x1 = dalloc((size_t)n * nrhs), *x2 = dalloc((size_t)n * nrhs);
  /* S = exp(-4 |u_i - u_j|) + I at random points u: positive definite,
   * well conditioned, no pattern in the entries to hide errors. */
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      s[i + (size_t)j * n] = exp(-4.0 * fabs(u[i] - u[j])) + (i == j ? 1.0 : 0.0);
  int info = 0;
  memcpy(ref, s, sizeof(double) * nn);
  dpotrf_("L", &n, ref, &n, &info, 1);
  memcpy(l1, s, sizeof(double) * nn);
  memcpy(l2, s, sizeof(double) * nn);
  CHECK(chol_lower(l1, n, 1, NULL, NULL) == 0, "chol_lower, 1 thread");
  CHECK(chol_lower(l2, n, 2, NULL, NULL) == 0, "chol_lower, 2 threads");
  int upper_kept;
  double maxerr = lower_difference(l1, ref, s, n, &upper_kept);
  CHECK(maxerr < 1e-12, "chol_lower against dpotrf: max error %g", maxerr);
  CHECK(upper_kept, "chol_lower must leave the upper triangle as given");
  CHECK(memcmp(l1, l2, sizeof(double) * nn) == 0,
        "chol_lower: 1 and 2 threads must give the same bits");

  /* Solves against dpotrs, and the same bits for any thread count. */
  memcpy(x1, b, sizeof(double) * (size_t)n * nrhs);
  memcpy(x2, b, sizeof(double) * (size_t)n * nrhs);
  CHECK(chol_solve_factored(l1, n, x1, nrhs, 1, NULL, NULL) == 0, "solve, 1 thread");
  CHECK(chol_solve_factored(l1, n, x2, nrhs, 2, NULL, NULL) == 0, "solve, 2 threads");
  CHECK(memcmp(x1, x2, sizeof(double) * (size_t)n * nrhs) == 0,
        "chol_solve_factored: 1 and 2 threads must give the same bits");
  memcpy(x2, b, sizeof(double) * (size_t)n * nrhs);
  dpotrs_("L", &n, &nrhs, ref, &n, x2, &n, &info, 1);
  maxerr = 0.0;
  for (size_t e = 0; e < (size_t)n * nrhs; e++) maxerr = fmax(maxerr, fabs(x1[e] - x2[e]));
  CHECK(maxerr < 1e-10, "chol_solve_factored against dpotrs: max error %g", maxerr);

  /* The inverse against dpotri, upper triangle kept, same bits for any
   * thread count, and stopped at the poll that asks. */
  double *inv = dalloc(nn);
  memcpy(inv, ref, sizeof(double) * nn);
  dpotri_("L", &n, inv, &n, &info, 1);
  memcpy(l2, l1, sizeof(double) * nn);
  CHECK(chol_inverse(l1, n, 1, NULL, NULL) == 0, "chol_inverse, 1 thread");
  CHECK(chol_inverse(l2, n, 2, NULL, NULL) == 0, "chol_inverse, 2 threads");
  CHECK(memcmp(l1, l2, sizeof(double) * nn) == 0,
        "chol_inverse: 1 and 2 threads must give the same bits");
  maxerr = lower_difference(l1, inv, s, n, &upper_kept);
  CHECK(maxerr < 1e-10, "chol_inverse against dpotri: max error %g", maxerr);
  CHECK(upper_kept, "chol_inverse must leave the upper triangle as given");
  stop_after inv_stop = {0, 3};
  memcpy(l1, ref, sizeof(double) * nn);
  info = chol_inverse(l1, n, 2, stop_callback, &inv_stop);
  CHECK(info == CHOL_STOPPED && inv_stop.calls == 3,
        "chol_inverse stopped: info = %d after %d polls", info, inv_stop.calls);
  free(inv);

  /* A minor that fails in the second block is reported at its order. */
  memcpy(l1, s, sizeof(double) * nn);
  l1[150 + (size_t)150 * n] = -1.0;
  info = chol_lower(l1, n, 2, NULL, NULL);
  CHECK(info == 151, "chol_lower on an indefinite matrix: info = %d, want 151", info);

  /* A stop request ends both at the poll that asks (chol_lower polls once
   * per panel at the quick size, the solves once per block and pass). */
  stop_after st = {0, quick ? 1 : 2};
  memcpy(l1, s, sizeof(double) * nn);
  info = chol_lower(l1, n, 2, stop_callback, &st);
  CHECK(info == CHOL_STOPPED && st.calls == st.after,
        "chol_lower stopped: info = %d after %d polls", info, st.calls);
  st.calls = 0;
  st.after = 2;
  info = chol_solve_factored(ref, n, x1, nrhs, 2, stop_callback, &st);
  CHECK(info == CHOL_STOPPED && st.calls == 2,
        "chol_solve_factored stopped: info = %d after %d polls", info, st.calls);
  free(u); free(s); free(ref); free(l1); free(l2); free(b); free(x1); free(x2);
}

void test_chol(void)
{
  section("(c) chol_solve");
  const int n = quick ? 120 : 250, d = 3, nrhs = 2;
  double *x = random_points(n, d, 3.0), *b = random_matrix(n, nrhs);
  double *alpha = dalloc((size_t)n * nrhs), *noise = dalloc(n);
  double *a = dalloc((size_t)n * n);
  const points p = {x, n, d, NULL, NULL};

  for (int row = 0; row < kernel_table_size; row++) {
    const int f = (int)kernel_table[row].family;
    if (!kernel_table[row].stationary) continue; /* test_tanimoto.c */
    const kernel k = {(kernel_family)f, 1.2};
    double *K = naive_kernel_matrix(&k, x, n, x, n, d);
    /* Heteroscedastic noise, as the interface allows. */
    for (int i = 0; i < n; i++) noise[i] = 0.05 + 0.1 * (i % 3);
    memcpy(alpha, b, sizeof(double) * (size_t)n * nrhs);
    const int info = chol_solve(&k, &p, noise, alpha, nrhs, a, NULL, 2, NULL, NULL);
    CHECK(info == 0, "%s chol_solve info = %d", family_name(k.family), info);
    for (int c = 0; c < nrhs; c++) {
      const double res = system_residual(K, noise, n, alpha + (size_t)c * n,
                                         b + (size_t)c * n);
      CHECK(res < 1e-10, "%s chol_solve rhs %d: relative residual %g",
            family_name(k.family), c, res);
    }
    /* The factor is lower triangular: L L' = K + diag(noise). */
    double maxerr = 0.0;
    for (int i = 0; i < n; i += 7)
      for (int j = 0; j <= i; j += 5) {
        double s = 0.0;
        for (int t = 0; t <= j; t++) s += a[i + (size_t)t * n] * a[j + (size_t)t * n];
        maxerr = fmax(maxerr, fabs(s - K[i + (size_t)j * n] - (i == j ? noise[i] : 0.0)));
      }
    CHECK(maxerr < 1e-12, "%s L L' = K + noise: max error %g",
          family_name(k.family), maxerr);
    free(K);
  }
  /* Not positive definite: negative noise below -lambda_max. */
  {
    const kernel k = {KERNEL_SE, 1.0};
    for (int i = 0; i < n; i++) noise[i] = -1e6;
    memcpy(alpha, b, sizeof(double) * (size_t)n * nrhs);
    const int info = chol_solve(&k, &p, noise, alpha, nrhs, a, NULL, 1, NULL, NULL);
    CHECK(info == 1, "chol_solve on a negative definite matrix: info = %d, want 1",
          info);
  }
  free(x); free(b); free(alpha); free(noise); free(a);
  test_block_build();
  test_chol_blocks();
}

/* ------------------------------------------------------------------ */
/* (d) sdd_solve against the Cholesky solution                          */

typedef struct {
  int calls, probes, last_iteration, stop_at, monotone, finite;
  int nrhs;
} cb_state;

static int count_callback(void *ctx_, int iteration, const double *residuals)
{
  cb_state *s = ctx_;
  s->calls++;
  if (iteration != s->last_iteration + 1) s->monotone = 0;
  s->last_iteration = iteration;
  if (residuals) {
    s->probes++;
    for (int c = 0; c < s->nrhs; c++)
      if (!isfinite(residuals[c]) || residuals[c] < 0) s->finite = 0;
  }
  return s->stop_at > 0 && iteration >= s->stop_at;
}

/* Relative errors of alpha against the exact alpha_star, column c:
 * K-norm ||e||_A / ||alpha*||_A with A = K + lambda I, and prediction
 * error ||K e|| / ||K alpha*||. */
static void sdd_errors(const double *K, double lambda, int n,
                       const double *alpha, const double *alpha_star,
                       double *knorm, double *pred)
{
  double eAe = 0.0, sAs = 0.0, Ke2 = 0.0, Ks2 = 0.0;
  for (int i = 0; i < n; i++) {
    double ke = 0.0, ks = 0.0;
    for (int j = 0; j < n; j++) {
      ke += K[i + (size_t)j * n] * (alpha[j] - alpha_star[j]);
      ks += K[i + (size_t)j * n] * alpha_star[j];
    }
    const double e = alpha[i] - alpha_star[i];
    eAe += e * (ke + lambda * e);
    sAs += alpha_star[i] * (ks + lambda * alpha_star[i]);
    Ke2 += ke * ke;
    Ks2 += ks * ks;
  }
  *knorm = sqrt(eAe / sAs);
  *pred = sqrt(Ke2 / Ks2);
}

/* Check every right-hand side of an SDD solution against the exact one. */
static void check_sdd_accuracy(const char *label, const double *K, double lambda,
                               int n, int nrhs, const double *ab,
                               const double *star, double tol)
{
  for (int c = 0; c < nrhs; c++) {
    double kn, pe;
    sdd_errors(K, lambda, n, ab + (size_t)c * n, star + (size_t)c * n, &kn, &pe);
    printf("   %s rhs %d: K-norm rel error %.2e, prediction rel error %.2e\n",
           label, c, kn, pe);
    CHECK(kn < tol, "%s rhs %d: K-norm relative error %g >= %g", label, c, kn, tol);
    CHECK(pe < tol, "%s rhs %d: prediction relative error %g >= %g", label, c, pe, tol);
  }
}

/* Solve with one thread (checking status and accuracy), then with two into
 * ab2, which must match ab1 to the bit. */
static void check_sdd_run(const char *label, const kernel_op *op,
                          const double *noise, const double *rhs, int nrhs,
                          sdd_options *opt, const double *K, double lambda,
                          const double *star, double tol, double *ab1,
                          double *ab2)
{
  const int n = op->x2->n;
  int done1 = 0, done2 = 0;
  opt->nthreads = 1;
  solver_status st = sdd_solve(op, noise, rhs, nrhs, opt, ab1, &done1, NULL, NULL);
  CHECK(st == SOLVER_MAX_ITER && done1 == opt->iterations,
        "%s: status %d, %d iterations", label, (int)st, done1);
  check_sdd_accuracy(label, K, lambda, n, nrhs, ab1, star, tol);
  opt->nthreads = 2;
  st = sdd_solve(op, noise, rhs, nrhs, opt, ab2, &done2, NULL, NULL);
  CHECK(st == SOLVER_MAX_ITER && done2 == done1 &&
            memcmp(ab1, ab2, sizeof(double) * (size_t)n * nrhs) == 0,
        "%s: alpha_bar differs between 1 and 2 threads", label);
}

void test_sdd(void)
{
  section("(d) sdd_solve");
  const int n = quick ? 150 : 300, d = 3, nrhs = 2;
  /* SDD's dual gradient estimate vanishes at the solution, so the iterates
   * converge linearly to the exact alpha: 2000 steps of size 3 reach a
   * K-norm error of about 5e-10 at n = 300 (1e-11 after 1000 at n = 150);
   * the tolerance leaves three or more orders of magnitude of room. */
  const double lambda = 0.1, tol = 1e-6;
  const kernel k = {KERNEL_MATERN32, 1.0};
  /* Inputs on [0, 2)^3 in length-scale units. */
  double *x = random_points(n, d, 2.0);
  const points p = {x, n, d, NULL, NULL};
  double *rhs = random_matrix(n, nrhs);
  /* A smooth second right-hand side, like GP targets. */
  for (int i = 0; i < n; i++)
    rhs[i + (size_t)n] = sin(2.0 * x[i]) + cos(x[i + (size_t)n]) * x[i + 2 * (size_t)n];
  double *noise = dalloc(n), *star = dalloc((size_t)n * nrhs);
  double *a = dalloc((size_t)n * n);
  for (int i = 0; i < n; i++) noise[i] = lambda;
  memcpy(star, rhs, sizeof(double) * (size_t)n * nrhs);
  CHECK(chol_solve(&k, &p, noise, star, nrhs, a, NULL, 2, NULL, NULL) == 0, "reference chol_solve");
  double *K = naive_kernel_matrix(&k, x, n, x, n, d);
  /* The kernel evaluated on the fly, and read from a precomputed matrix. */
  double *Kc = dalloc((size_t)n * n);
  kernel_block_matrix(&k, &p, &p, Kc, 2);
  const kernel_op op = {&k, &p, &p, NULL, 0, NULL, NULL, NULL, 0, NULL}, op_cached = {&k, &p, &p, Kc, 0, NULL, NULL, NULL, 0, NULL};

  const double steps[2] = {3.0, 3.0};
  sdd_options opt;
  memset(&opt, 0, sizeof opt); /* plain SDD: the dual coordinate estimator */
  opt.iterations = quick ? 1000 : 2000;
  opt.batch_size = 32;
  opt.batch_sampling = SDD_BATCH_UNIFORM;
  opt.step_size = steps;
  opt.momentum = 0.9;
  opt.averaging_rate = 100.0 / opt.iterations;
  opt.check_every = 250;
  opt.probe_size = 50;
  opt.tolerance = 0.0;
  opt.seed = 20240117u;
  opt.nthreads = 1;

  double *ab1 = dalloc((size_t)n * nrhs), *ab2 = dalloc((size_t)n * nrhs);
  int done1 = -1, done2 = -1;
  cb_state cb = {0, 0, 0, 0, 1, 1, nrhs};
  solver_status st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab1, &done1,
                            count_callback, &cb);
  CHECK(st == SOLVER_MAX_ITER, "uniform: status %d, want MAX_ITER", (int)st);
  CHECK(done1 == opt.iterations, "uniform: %d iterations done, want %d", done1,
        opt.iterations);
  CHECK(cb.calls == opt.iterations && cb.monotone,
        "callback once per iteration in order (%d calls)", cb.calls);
  CHECK(cb.probes == opt.iterations / opt.check_every && cb.finite,
        "residual probes: %d, want %d, all finite and >= 0", cb.probes,
        opt.iterations / opt.check_every);
  check_sdd_accuracy("uniform", K, lambda, n, nrhs, ab1, star, tol);

  /* Same seed, two threads: identical bits. */
  opt.nthreads = 2;
  st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, NULL, NULL);
  CHECK(st == SOLVER_MAX_ITER && done2 == done1,
        "uniform, 2 threads: status %d, %d iterations", (int)st, done2);
  CHECK(memcmp(ab1, ab2, sizeof(double) * (size_t)n * nrhs) == 0,
        "uniform: alpha_bar differs between 1 and 2 threads");

  /* Epoch permutations. */
  opt.batch_sampling = SDD_BATCH_PERMUTATION;
  opt.batch_size = 32; /* n mod B != 0: leftovers wait for a later epoch */
  check_sdd_run("permutation", &op, noise, rhs, nrhs, &opt, K, lambda, star,
                tol, ab1, ab2);
  /* The same solve reading K from a precomputed matrix. */
  opt.batch_sampling = SDD_BATCH_UNIFORM;
  check_sdd_run("cached kernel", &op_cached, noise, rhs, nrhs, &opt, K, lambda,
                star, tol, ab1, ab2);
  st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, NULL, NULL);
  CHECK(memcmp(ab1, ab2, sizeof(double) * (size_t)n * nrhs) == 0,
        "alpha_bar differs between the cached and the on-the-fly kernel");
  opt.batch_sampling = SDD_BATCH_PERMUTATION;

  /* A batch as large as the data: one batch per epoch. */
  opt.batch_size = n;
  opt.iterations = 50;
  opt.check_every = 10;
  st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, NULL, NULL);
  CHECK(st == SOLVER_MAX_ITER && done2 == 50,
        "permutation with B = n: status %d, %d iterations", (int)st, done2);

  /* A time limit shorter than one step stops after the first, with that
   * step's residuals probed and recorded; the first step is the same as a
   * run of one iteration. */
  {
    cb_state tcb = {0, 0, 0, 0, 1, 1, nrhs};
    opt.batch_size = 32;
    opt.iterations = 50;
    opt.time_limit = 1e-12;
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab1, &done1, count_callback, &tcb);
    CHECK(st == SOLVER_TIME_LIMIT && done1 == 1,
          "time limit: status %d after %d iterations, want TIME_LIMIT after 1",
          (int)st, done1);
    CHECK(tcb.calls == 1 && tcb.probes == 1, "time limit: %d calls, %d probes",
          tcb.calls, tcb.probes);
    opt.time_limit = 0.0; /* none */
    opt.iterations = 1;
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, NULL, NULL);
    CHECK(st == SOLVER_MAX_ITER && done2 == 1 &&
          memcmp(ab1, ab2, sizeof(double) * (size_t)n * nrhs) == 0,
          "time limit: the first step differs from a one-step run");
    opt.iterations = 50;
  }

  /* A tolerance out of reach: with stop_stalled the run gives up at a probe
   * from step 1000 on, long before its budget; without, it runs it all. */
  {
    const double tolerance = opt.tolerance;
    opt.batch_size = 32;
    opt.iterations = 20000;
    opt.check_every = 100;
    opt.tolerance = 1e-300;
    opt.stop_stalled = 1;
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab1, &done1, NULL, NULL);
    CHECK(st == SOLVER_STALLED && done1 >= 1000 && done1 < 20000 && done1 % 100 == 0,
          "stall: status %d after %d iterations, want STALLED from 1000 on",
          (int)st, done1);
    opt.stop_stalled = 0;
    opt.iterations = 1200;
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, NULL, NULL);
    CHECK(st == SOLVER_MAX_ITER && done2 == 1200,
          "no stall check: status %d after %d iterations", (int)st, done2);
    opt.tolerance = tolerance;
    opt.iterations = 50;
  }

  /* A run stopped after 130 steps (mid-epoch) and resumed from its
   * iterate, average and momentum takes the straight run's steps; the
   * tolerance may then stop it only from tolerance_from on. */
  {
    const size_t len = (size_t)n * nrhs;
    double *state = dalloc(2 * len);
    opt.batch_sampling = SDD_BATCH_PERMUTATION;
    opt.batch_size = 32;
    opt.iterations = 300;
    opt.check_every = 100;
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab1, &done1, NULL, NULL);
    opt.iterations = 130;
    opt.alpha_out = state;
    opt.momentum_out = state + len;
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, NULL, NULL);
    opt.alpha_out = opt.momentum_out = NULL;
    opt.iterations = 300;
    opt.first_iteration = 130;
    opt.alpha0 = state;
    opt.momentum0 = state + len;
    double *bar = dalloc(len);
    memcpy(bar, ab2, sizeof(double) * len);
    opt.alpha_bar0 = bar;
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, NULL, NULL);
    CHECK(st == SOLVER_MAX_ITER && done2 == 300 && memcmp(ab1, ab2, sizeof(double) * len) == 0,
          "resumed run: status %d after %d iterations, or alpha_bar differs", (int)st, done2);
    opt.first_iteration = 0;
    opt.alpha0 = opt.momentum0 = opt.alpha_bar0 = NULL;
    const double tolerance = opt.tolerance;
    opt.tolerance = 0.5;
    opt.iterations = 1000;
    opt.tolerance_from = 450;
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, NULL, NULL);
    CHECK(st == SOLVER_TOLERANCE && done2 == 500,
          "tolerance_from 450: status %d after %d iterations, want TOLERANCE at 500",
          (int)st, done2);
    opt.tolerance_from = 0;
    opt.tolerance = tolerance;
    opt.iterations = 50;
    free(bar);
    free(state);
  }

  /* A different seed gives a different (but also converged) answer. */
  opt.batch_sampling = SDD_BATCH_UNIFORM;
  opt.batch_size = 32;
  opt.iterations = quick ? 1000 : 2000;
  opt.check_every = 500;
  opt.seed = 7u;
  opt.nthreads = 2;
  st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, NULL, NULL);
  CHECK(memcmp(ab1, ab2, sizeof(double) * (size_t)n * nrhs) != 0,
        "different seeds gave identical iterates");

  /* Tolerance stop: at a probe, with every residual below tolerance. */
  {
    double res_seen = -1.0;
    opt.tolerance = 0.05;
    opt.check_every = 100;
    cb_state cb2 = {0, 0, 0, 0, 1, 1, nrhs};
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, count_callback, &cb2);
    CHECK(st == SOLVER_TOLERANCE, "tolerance 0.05: status %d, want TOLERANCE",
          (int)st);
    CHECK(done2 > 0 && done2 < opt.iterations && done2 % opt.check_every == 0,
          "tolerance stop after %d iterations (a multiple of %d)", done2,
          opt.check_every);
    /* An independent full residual at the stop is of the probed size. */
    for (int c = 0; c < nrhs; c++) {
      const double r = system_residual(K, noise, n, ab2 + (size_t)c * n, rhs + (size_t)c * n);
      res_seen = fmax(res_seen, r);
    }
    CHECK(res_seen < 0.2, "full residual at the tolerance stop is %g", res_seen);
    opt.tolerance = 0.0;
  }

  /* Callback stop. */
  {
    cb_state cb3 = {0, 0, 0, 123, 1, 1, nrhs};
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, count_callback, &cb3);
    CHECK(st == SOLVER_STOPPED && done2 == 123,
          "callback stop at 123: status %d, %d iterations", (int)st, done2);
  }

  /* A huge step size diverges and is reported as such. */
  {
    const double huge[2] = {1e4, 1e4};
    opt.step_size = huge;
    opt.check_every = 10;
    opt.iterations = 2000;
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, NULL, NULL);
    CHECK(st == SOLVER_DIVERGED, "step size 1e4: status %d, want DIVERGED",
          (int)st);
    CHECK(done2 < opt.iterations, "divergence detected after %d iterations",
          done2);
    opt.step_size = steps;
  }

  /* Zero iterations leave alpha_bar at zero. */
  {
    opt.iterations = 0;
    ab2[0] = 99.0;
    st = sdd_solve(&op, noise, rhs, nrhs, &opt, ab2, &done2, NULL, NULL);
    CHECK(st == SOLVER_MAX_ITER && done2 == 0 && ab2[0] == 0.0,
          "zero iterations: status %d, done %d, alpha[0] %g", (int)st, done2, ab2[0]);
  }

  /* residual_probe of the exact solution is ~0. */
  {
    const int P = 40;
    double work[40 * 2], res[2], norms[2];
    int prow[40];
    for (int c = 0; c < nrhs; c++) {
      double ss = 0.0;
      for (int i = 0; i < n; i++) ss += rhs[i + (size_t)c * n] * rhs[i + (size_t)c * n];
      norms[c] = sqrt(ss);
    }
    residual_probe(&op, noise, rhs, norms, nrhs, star, P, 1u, 3u, 2, work,
                   prow, res);
    CHECK(res[0] < 1e-10 && res[1] < 1e-10,
          "residual_probe at the exact solution: %g %g", res[0], res[1]);
    int inrange = 1;
    for (int j = 0; j < P; j++) if (prow[j] < 0 || prow[j] >= n) inrange = 0;
    CHECK(inrange, "residual_probe rows in 0..n-1");
  }

  free(x); free(rhs); free(noise); free(star); free(a); free(K); free(Kc);
  free(ab1); free(ab2);
}

/* ------------------------------------------------------------------ */
/* (e) counter-based RNG                                                */

void test_rng(void)
{
  section("(e) rng");
  const int N = quick ? 250000 : 1000000;
  const uint64_t seed = 987654321u;
  double s = 0.0, ss = 0.0, lo = 1.0, hi = 0.0;
  for (int i = 0; i < N; i++) {
    const double u = rng_uniform(seed, RNG_STREAM_BATCH, (uint64_t)i);
    s += u;
    ss += u * u;
    lo = fmin(lo, u);
    hi = fmax(hi, u);
  }
  double mean = s / N, var = ss / N - mean * mean;
  /* Tolerances are 5 standard errors: sd(U) / sqrt(N) (2.9e-4 for N = 1e6)
   * for the mean, sqrt(1/80 - 1/144) / sqrt(N) (7.5e-5) for the variance. */
  const double rootN = sqrt((double)N);
  CHECK(fabs(mean - 0.5) < 5 * sqrt(1.0 / 12) / rootN, "uniform mean %.6f", mean);
  CHECK(fabs(var - 1.0 / 12) < 5 * sqrt(1.0 / 80 - 1.0 / 144) / rootN,
        "uniform variance %.6f (1/12 = %.6f)", var, 1.0 / 12);
  CHECK(lo > 0.0 && hi < 1.0, "uniform draws in the open interval (0, 1): %g %g",
        lo, hi);

  s = ss = 0.0;
  double s3 = 0.0, s4 = 0.0;
  for (int i = 0; i < N; i++) {
    const double z = rng_normal(seed, RNG_STREAM_OMEGA, (uint64_t)i);
    s += z;
    ss += z * z;
    s3 += z * z * z;
    s4 += z * z * z * z;
  }
  mean = s / N;
  var = ss / N - mean * mean;
  /* 5 standard errors: 1/sqrt(N) for the mean, sqrt(2/N) for the
   * variance, sqrt(15/N) for the 3rd moment, sqrt(96/N) for the 4th. */
  CHECK(fabs(mean) < 5 / rootN, "normal mean %.6f", mean);
  CHECK(fabs(var - 1.0) < 5 * sqrt(2.0) / rootN, "normal variance %.6f", var);
  CHECK(fabs(s3 / N) < 5 * sqrt(15.0) / rootN, "normal third moment %.6f", s3 / N);
  CHECK(fabs(s4 / N - 3.0) < 5 * sqrt(96.0) / rootN, "normal fourth moment %.6f",
        s4 / N);

  /* Determinism and independence of seed, stream and counter. */
  CHECK(rng_bits(seed, RNG_STREAM_PROBE, 42) == rng_bits(seed, RNG_STREAM_PROBE, 42),
        "same (seed, stream, counter) gives the same bits");
  CHECK(rng_uniform(seed, RNG_STREAM_PROBE, 42) == rng_uniform(seed, RNG_STREAM_PROBE, 42) &&
        rng_normal(seed, RNG_STREAM_NOISE, 17) == rng_normal(seed, RNG_STREAM_NOISE, 17),
        "uniform and normal are deterministic");
  CHECK(rng_bits(seed, RNG_STREAM_PROBE, 42) != rng_bits(seed, RNG_STREAM_BATCH, 42) &&
        rng_bits(seed, RNG_STREAM_PROBE, 42) != rng_bits(seed + 1, RNG_STREAM_PROBE, 42) &&
        rng_bits(seed, RNG_STREAM_PROBE, 42) != rng_bits(seed, RNG_STREAM_PROBE, 43),
        "changing seed, stream or counter changes the bits");
  /* Streams are uncorrelated. */
  {
    double sxy = 0.0;
    const int M = N / 5;
    for (int i = 0; i < M; i++)
      sxy += rng_normal(seed, RNG_STREAM_WEIGHTS, i) * rng_normal(seed, RNG_STREAM_NOISE, i);
    CHECK(fabs(sxy / M) < 5 / sqrt((double)M),
          "correlation of two streams %.5f", sxy / M);
  }
  /* rng_normal_fill is rng_normal at consecutive counters. */
  {
    double buf[64];
    int same = 1;
    rng_normal_fill(seed, RNG_STREAM_WEIGHTS, 1000, 64, buf);
    for (int i = 0; i < 64; i++)
      if (buf[i] != rng_normal(seed, RNG_STREAM_WEIGHTS, 1000 + (uint64_t)i)) same = 0;
    CHECK(same, "rng_normal_fill matches rng_normal");
  }
  /* rng_index: range and uniformity over 7 cells (chi-square, 6 df). */
  {
    long count[7] = {0};
    int inrange = 1;
    const int M = quick ? 140000 : 700000;
    for (int i = 0; i < M; i++) {
      const int j = rng_index(seed, RNG_STREAM_BATCH, (uint64_t)i, 7);
      if (j < 0 || j >= 7) inrange = 0; else count[j]++;
    }
    double chi2 = 0.0;
    for (int j = 0; j < 7; j++)
      chi2 += (count[j] - M / 7.0) * (count[j] - M / 7.0) / (M / 7.0);
    CHECK(inrange, "rng_index in 0..n-1");
    CHECK(chi2 < 22.5, "rng_index chi-square (6 df) %.2f; 99.9%% point 22.46", chi2);
    CHECK(rng_index(seed, RNG_STREAM_BATCH, 5, 1) == 0, "rng_index(n = 1) is 0");
  }
}

/* ------------------------------------------------------------------ */
/* (f) random Fourier features                                          */

void test_rff(void)
{
  section("(f) random Fourier features");
  const int m = 20000, d = 3, npts = 6;
  const double s2 = 1.5;
  double *omega = dalloc((size_t)m * d), *phase = dalloc(m);
  /* Points at moderate distances, r from 0 to ~2.5 length scales. */
  double *x = random_points(npts, d, 1.5);
  const points p = {x, npts, d, NULL, NULL};
  double *phi = dalloc(m), *out = dalloc(npts), *out2 = dalloc(npts);

  for (int row = 0; row < kernel_table_size; row++) {
    const int f = (int)kernel_table[row].family;
    if (!kernel_table[row].stationary) continue; /* test_tanimoto.c */
    const kernel k = {(kernel_family)f, s2};
    rff_draw(&k, m, d, 31337u, omega, phase);
    const rff feat = {m, d, omega, phase, sqrt(2.0 * s2 / m), 0, 0};
    int ok = 1;
    for (size_t i = 0; i < (size_t)m * d; i++) if (!isfinite(omega[i])) ok = 0;
    for (int j = 0; j < m; j++)
      if (!(phase[j] >= 0.0 && phase[j] < 6.283185307179587)) ok = 0;
    CHECK(ok, "%s rff_draw: finite omega, phases in [0, 2 pi)", family_name(k.family));

    /* Determinism of rff_draw. */
    {
      double *o2 = dalloc((size_t)m * d), *ph2 = dalloc(m);
      rff_draw(&k, m, d, 31337u, o2, ph2);
      CHECK(memcmp(o2, omega, sizeof(double) * (size_t)m * d) == 0 &&
            memcmp(ph2, phase, sizeof(double) * (size_t)m) == 0,
            "%s rff_draw is deterministic", family_name(k.family));
      free(o2); free(ph2);
    }

    /* Phi(x) Phi(x')' for each pair: phi(x') computed here by hand, then
     * rff_matmul(Phi(x), phi(x')).  Monte Carlo error: each feature pair
     * contributes s2 [cos(w'(x - x')) + cos(w'(x + x') + 2 b)], variance
     * <= s2^2, so sd <= s2 / sqrt(m) = 0.0106; tolerance 5 sd. */
    const double tol = 5.0 * s2 / sqrt((double)m);
    double maxerr = 0.0, maxerr_exact = 0.0;
    for (int q = 0; q < npts; q++) {
      for (int j = 0; j < m; j++) {
        double a = phase[j];
        for (int c = 0; c < d; c++) a += omega[j + (size_t)c * m] * x[q + (size_t)c * npts];
        phi[j] = feat.scale * cos(a);
      }
      rff_matmul(&feat, &p, phi, 1, out, npts, 1);
      rff_matmul(&feat, &p, phi, 1, out2, npts, 2);
      CHECK(memcmp(out, out2, sizeof(double) * npts) == 0,
            "%s rff_matmul differs between 1 and 2 threads", family_name(k.family));
      for (int i = 0; i < npts; i++) {
        if (q == 0) {
          /* The same sum by a naive loop: rff_matmul's arithmetic. */
          double naive = 0.0;
          for (int j = 0; j < m; j++) {
            double a = phase[j];
            for (int c = 0; c < d; c++) a += omega[j + (size_t)c * m] * x[i + (size_t)c * npts];
            naive += feat.scale * cos(a) * phi[j];
          }
          maxerr_exact = fmax(maxerr_exact, fabs(out[i] - naive));
        }
        const double kv = kernel_value(&k, sqdist(x, npts, i, x, npts, q, d));
        maxerr = fmax(maxerr, fabs(out[i] - kv));
      }
    }
    printf("   %s: max |Phi Phi' - K| = %.4f (tolerance %.4f)\n",
           family_name(k.family), maxerr, tol);
    CHECK(maxerr_exact < 1e-10, "%s rff_matmul vs naive feature sum: %g",
          family_name(k.family), maxerr_exact);
    CHECK(maxerr < tol, "%s: max |Phi(x) Phi(x')' - k(x, x')| = %g >= %g",
          family_name(k.family), maxerr, tol);
  }

  /* Several columns of W and an ldo larger than n. */
  {
    const kernel k = {KERNEL_MATERN32, 1.0};
    const int mm = 300, ncol = 3, ldo = npts + 2;
    double *om = dalloc((size_t)mm * d), *ph = dalloc(mm);
    double *W = random_matrix(mm, ncol), *o = dalloc((size_t)ldo * ncol);
    rff_draw(&k, mm, d, 5u, om, ph);
    const rff feat = {mm, d, om, ph, sqrt(2.0 / mm), 0, 0};
    for (int i = 0; i < ldo * ncol; i++) o[i] = -1.0;
    rff_matmul(&feat, &p, W, ncol, o, ldo, 2);
    double maxerr = 0.0;
    int padding_ok = 1;
    for (int c = 0; c < ncol; c++) {
      for (int i = 0; i < npts; i++) {
        double s = 0.0;
        for (int j = 0; j < mm; j++) {
          double a = ph[j];
          for (int t = 0; t < d; t++) a += om[j + (size_t)t * mm] * x[i + (size_t)t * npts];
          s += sqrt(2.0 / mm) * cos(a) * W[j + (size_t)c * mm];
        }
        maxerr = fmax(maxerr, fabs(o[i + (size_t)c * ldo] - s));
      }
      for (int i = npts; i < ldo; i++) if (o[i + (size_t)c * ldo] != -1.0) padding_ok = 0;
    }
    CHECK(maxerr < 1e-12, "rff_matmul with 3 columns vs naive: %g", maxerr);
    CHECK(padding_ok, "rff_matmul must leave rows n..ldo-1 alone");
    free(om); free(ph); free(W); free(o);
  }
  free(omega); free(phase); free(x); free(phi); free(out); free(out2);
}

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else {
      fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  printf("sddgp core driver%s\n", quick ? " (quick sizes)" : "");
  test_kernels();
  test_block();
  test_single();
  test_shard();
  test_chol();
  test_sdd();
  test_rng();
  test_rff();
  test_cg();
  test_svgp();
  test_sgd();
  test_cabcd();
  test_dsg();
  test_threads();
  test_solver();
  test_mll();
  test_neighbours();
  test_vecchia_mll();
  test_tanimoto();
  section(NULL);
  printf("%d passed, %d failed\n", n_passed, n_failed);
  return n_failed > 0 ? 1 : 0;
}
