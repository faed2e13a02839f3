/* Prototypes of the few LAPACK and BLAS routines the core calls, declared
 * here so the core needs no R headers.  Fortran passes every argument by reference and
 * appends the lengths of character arguments as hidden size_t arguments
 * (what R's FCONE supplies); omitting them is undefined behaviour that LTO
 * reports as a type mismatch. */
#ifndef SDDGP_LAPACK_H
#define SDDGP_LAPACK_H

#include <stddef.h>

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a,
             const int *lda, double *b, const int *ldb, int *info,
             size_t uplo_len);
void dpocon_(const char *uplo, const int *n, const double *a, const int *lda,
             const double *anorm, double *rcond, double *work, int *iwork,
             int *info, size_t uplo_len);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv,
            double *b, const int *ldb, int *info);
void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n,
             double *a, const int *lda, double *s, double *u, const int *ldu,
             double *vt, const int *ldvt, double *work, const int *lwork,
             int *info, size_t jobu_len, size_t jobvt_len);

/* BLAS */
void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
            const int *k, const double *alpha, const double *a, const int *lda,
            const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc, size_t transa_len, size_t transb_len);
void dgemv_(const char *trans, const int *m, const int *n, const double *alpha,
            const double *a, const int *lda, const double *x, const int *incx,
            const double *beta, double *y, const int *incy, size_t trans_len);
void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda,
            const double *beta, double *c, const int *ldc, size_t uplo_len,
            size_t trans_len);
void dtrsm_(const char *side, const char *uplo, const char *transa,
            const char *diag, const int *m, const int *n, const double *alpha,
            const double *a, const int *lda, double *b, const int *ldb,
            size_t side_len, size_t uplo_len, size_t transa_len,
            size_t diag_len);
void dtrsv_(const char *uplo, const char *trans, const char *diag,
            const int *n, const double *a, const int *lda, double *x,
            const int *incx, size_t uplo_len, size_t trans_len,
            size_t diag_len);

#endif
