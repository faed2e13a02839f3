/* Each family's vector form in one precision: <family>_apply<S>(s2, r2,
 * len) sets r2[i] = k(r2[i]) with variance s2, for kernel_table's apply
 * (double) and apply32 (float).  A template (as block_dist_template.h),
 * included by kernel.c once per precision so that each formula is written
 * once.  Define before each #include (this file #undefs them):
 *   KFORM_SUFFIX  appended to the names (<S> above; may be empty);
 *   KFORM_T       the type, double or float;
 *   KFORM_EXP     exp for arguments <= 0 in KFORM_T (vmath.h);
 *   KFORM_SQRT    sqrt in KFORM_T (libm: a vector instruction under
 *                 configure's -fno-math-errno);
 *   KFORM_MAX     max in KFORM_T without a comparison (vmath.h).
 * Each loop body is branch-free straight-line arithmetic that vectorises,
 * compiled for each instruction set (SDDGP_HOT).  Callers may form r2 from
 * rounded sums, hence the clamp at 0.  No include guard: it is meant to be
 * included more than once. */

/* Two steps, so that KFORM_SUFFIX is expanded before it is pasted. */
#define KFORM_PASTE(name, suffix) name##suffix
#define KFORM_PASTE_EXPANDED(name, suffix) KFORM_PASTE(name, suffix)
#define KFORM_NAME(name) KFORM_PASTE_EXPANDED(name, KFORM_SUFFIX)

SDDGP_HOT
static void KFORM_NAME(matern12_apply)(KFORM_T s2, KFORM_T *r2, int len)
{
  #pragma omp simd
  for (int i = 0; i < len; i++)
    r2[i] = s2 * KFORM_EXP(-KFORM_SQRT(KFORM_MAX(r2[i], 0)));
}

SDDGP_HOT
static void KFORM_NAME(matern32_apply)(KFORM_T s2, KFORM_T *r2, int len)
{
  const KFORM_T one = 1;
  #pragma omp simd
  for (int i = 0; i < len; i++) {
    const KFORM_T r = (KFORM_T)SQRT3 * KFORM_SQRT(KFORM_MAX(r2[i], 0));
    r2[i] = s2 * (one + r) * KFORM_EXP(-r);
  }
}

SDDGP_HOT
static void KFORM_NAME(matern52_apply)(KFORM_T s2, KFORM_T *r2, int len)
{
  const KFORM_T one = 1, three = 3;
  #pragma omp simd
  for (int i = 0; i < len; i++) {
    const KFORM_T r = (KFORM_T)SQRT5 * KFORM_SQRT(KFORM_MAX(r2[i], 0));
    r2[i] = s2 * (one + r + r * r / three) * KFORM_EXP(-r);
  }
}

SDDGP_HOT
static void KFORM_NAME(se_apply)(KFORM_T s2, KFORM_T *r2, int len)
{
  const KFORM_T half = (KFORM_T)0.5;
  #pragma omp simd
  for (int i = 0; i < len; i++)
    r2[i] = s2 * KFORM_EXP(-half * KFORM_MAX(r2[i], 0));
}

/* The Tanimoto kernel: s2 times the similarity (tanimoto.c). */
SDDGP_HOT
static void KFORM_NAME(tanimoto_apply)(KFORM_T s2, KFORM_T *t, int len)
{
  #pragma omp simd
  for (int i = 0; i < len; i++) t[i] *= s2;
}

#undef KFORM_NAME
#undef KFORM_PASTE_EXPANDED
#undef KFORM_PASTE
#undef KFORM_SUFFIX
#undef KFORM_T
#undef KFORM_EXP
#undef KFORM_SQRT
#undef KFORM_MAX
