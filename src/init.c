/* Registration of the .Call entry points (no dynamic symbol lookup). */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include <R_ext/Visibility.h>
#include "threads.h"

SEXP C_kernel_matmul(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_kernel_matrix(SEXP, SEXP, SEXP, SEXP);
SEXP C_kernel_families(void);
SEXP C_rff_draw(SEXP, SEXP, SEXP, SEXP);
SEXP C_rff_draw_prior(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_rff_matmul(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_rng_normal(SEXP, SEXP, SEXP);
SEXP C_chol_solve(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_chol_timing(SEXP, SEXP, SEXP, SEXP);
SEXP C_chol_factor(SEXP, SEXP, SEXP, SEXP);
SEXP C_chol_variance(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_sdd_solve(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_nystrom_solve(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_cg_solve(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_pivchol(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_vecchia_factor(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_vecchia_neighbours(SEXP, SEXP, SEXP);
SEXP C_vecchia_predict(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_dsg_solve(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_dsg_matmul(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_mll(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_mll_pathwise(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_mll_vecchia(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_kmeans(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_svgp_fit(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_openmp_info(void);
SEXP C_threads_stage(SEXP);
SEXP C_recombine(SEXP, SEXP, SEXP, SEXP);
SEXP C_cabcd_solve(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_glue_codes(void);
SEXP C_fingerprints(SEXP, SEXP);
SEXP C_hash_matmul(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_tanimoto_popcount_path(SEXP);

#define CALLDEF(name, n) {#name, (DL_FUNC)&name, n}

static const R_CallMethodDef call_entries[] = {
  CALLDEF(C_kernel_matmul, 6),
  CALLDEF(C_kernel_matrix, 4),
  CALLDEF(C_kernel_families, 0),
  CALLDEF(C_rff_draw, 4),
  CALLDEF(C_rff_draw_prior, 5),
  CALLDEF(C_rff_matmul, 6),
  CALLDEF(C_rng_normal, 3),
  CALLDEF(C_chol_solve, 5),
  CALLDEF(C_chol_timing, 4),
  CALLDEF(C_chol_factor, 4),
  CALLDEF(C_chol_variance, 5),
  CALLDEF(C_sdd_solve, 6),
  CALLDEF(C_nystrom_solve, 7),
  CALLDEF(C_cg_solve, 6),
  CALLDEF(C_pivchol, 8),
  CALLDEF(C_vecchia_factor, 5),
  CALLDEF(C_vecchia_neighbours, 3),
  CALLDEF(C_vecchia_predict, 7),
  CALLDEF(C_dsg_solve, 6),
  CALLDEF(C_dsg_matmul, 7),
  CALLDEF(C_mll, 7),
  CALLDEF(C_mll_pathwise, 6),
  CALLDEF(C_mll_vecchia, 7),
  CALLDEF(C_kmeans, 5),
  CALLDEF(C_svgp_fit, 7),
  CALLDEF(C_openmp_info, 0),
  CALLDEF(C_threads_stage, 1),
  CALLDEF(C_recombine, 4),
  CALLDEF(C_cabcd_solve, 9),
  CALLDEF(C_glue_codes, 0),
  CALLDEF(C_fingerprints, 2),
  CALLDEF(C_hash_matmul, 6),
  CALLDEF(C_tanimoto_popcount_path, 1),
  {NULL, NULL, 0}
};

void attribute_visible R_init_sddgp(DllInfo *dll)
{
  R_registerRoutines(dll, NULL, call_entries, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
  threads_init();
}
