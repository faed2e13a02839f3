/* .Call entry points of the Tanimoto kernel: fingerprints from a dense
 * matrix or a Matrix::dgCMatrix (never made dense), and the products of
 * its random hash features for prior draws. */
#include "glue.h"
#include "rff.h"
#include "tanimoto.h"

/* A dgCMatrix's slot `name`. */
static SEXP slot(SEXP x, const char *name)
{
  return R_do_slot(x, Rf_install(name));
}

/* list(x, n, d, words, bits, start, col, val, sums) of class
 * "sddgp_fingerprints", which glue_points() reads: binary (bit-packed
 * rows) or counts (the dense matrix x itself, or sparse rows). */
SEXP C_fingerprints(SEXP x, SEXP binary_)
{
  const int binary = Rf_asLogical(binary_), sparse = Rf_isS4(x);
  SEXP dim = sparse ? slot(x, "Dim") : Rf_getAttrib(x, R_DimSymbol);
  if ((!sparse && TYPEOF(x) != REALSXP) || XLENGTH(dim) != 2)
    Rf_error("internal error: fingerprints must be a double matrix or a dgCMatrix");
  const int n = INTEGER(dim)[0], d = INTEGER(dim)[1];
  const int *colptr = sparse ? INTEGER(slot(x, "p")) : NULL;
  const int *rowind = sparse ? INTEGER(slot(x, "i")) : NULL;
  const double *v = sparse ? REAL(slot(x, "x")) : REAL(x);
  const char *names[] = {"x", "n", "d", "words", "bits", "start", "col",
                         "val", "sums", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SEXP sums = PROTECT(Rf_allocVector(REALSXP, n));
  const int words = binary ? tanimoto_words(d) : 0;
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(n));
  SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(d));
  SET_VECTOR_ELT(out, 3, Rf_ScalarInteger(words));
  if (binary) {
    SEXP bits = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t)n * words * 8));
    uint64_t *b = (uint64_t *)RAW(bits);
    if (sparse) tanimoto_pack_csc(colptr, rowind, v, n, d, b, REAL(sums));
    else tanimoto_pack_dense(v, n, d, b, REAL(sums));
    SET_VECTOR_ELT(out, 4, bits);
    UNPROTECT(1);
  } else if (sparse) {
    const int nnz = colptr[d];
    SEXP start = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t)n + 1));
    SEXP col = PROTECT(Rf_allocVector(INTSXP, nnz));
    SEXP val = PROTECT(Rf_allocVector(REALSXP, nnz));
    tanimoto_rows_csc(colptr, rowind, v, n, d, INTEGER(start), INTEGER(col),
                      REAL(val), REAL(sums));
    SET_VECTOR_ELT(out, 5, start);
    SET_VECTOR_ELT(out, 6, col);
    SET_VECTOR_ELT(out, 7, val);
    UNPROTECT(3);
  } else {
    SET_VECTOR_ELT(out, 0, x);
    tanimoto_sums_dense(v, n, d, REAL(sums));
  }
  SET_VECTOR_ELT(out, 8, sums);
  Rf_setAttrib(out, R_ClassSymbol, Rf_mkString("sddgp_fingerprints"));
  UNPROTECT(2);
  return out;
}

/* Phi(x) W for the random hash features first..first+m-1 drawn from seed,
 * W m x ncol: the prior draws of the Tanimoto kernel. */
SEXP C_hash_matmul(SEXP seed, SEXP first, SEXP spec, SEXP x, SEXP W,
                   SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const points p = glue_points(x, "x"), w = glue_points(W, "W");
  const rff f = rff_hashes(&k, w.n, p.d, glue_seed(seed),
                           (uint64_t)Rf_asReal(first));
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, p.n, w.d));
  rff_matmul(&f, &p, w.x, w.d, REAL(out), p.n, glue_threads(threads));
  UNPROTECT(1);
  return out;
}

/* TRUE where binary fingerprints take AVX-512's vector popcount; a logical
 * request first sets whether they may (FALSE: the portable loop). */
SEXP C_tanimoto_popcount_path(SEXP request)
{
  const int r = Rf_asLogical(request);
  return Rf_ScalarLogical(tanimoto_popcount_path(r == NA_LOGICAL ? -1 : r));
}
