/* Prototypes of the few LAPACK routines the core calls, declared here so the
 * core needs no R headers.  Fortran passes every argument by reference and
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
void dpotri_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv,
            double *b, const int *ldb, int *info);
void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n,
             double *a, const int *lda, double *s, double *u, const int *ldu,
             double *vt, const int *ldvt, double *work, const int *lwork,
             int *info, size_t jobu_len, size_t jobvt_len);

#endif
