/* The BLAS's own threads.  The blocked routines of the core (chol.c,
 * svgp.c) call the BLAS from every thread of an OpenMP team, one tile per
 * call, so that any BLAS runs on the package's threads and the result does
 * not depend on their number.  A BLAS with threads of its own (OpenBLAS's
 * pthread build) would start them inside every such call as well: more
 * threads than cores, and slower than either alone.  OpenBLAS is therefore
 * looked up at run time (no link-time dependency: R may be linked to any
 * BLAS; not on Windows) and made single-threaded while the core runs.
 * Other BLAS are left as they are. */
#ifndef SDDGP_BLAS_THREADS_H
#define SDDGP_BLAS_THREADS_H

/* 1 if R's BLAS is OpenBLAS, else 0.  Call first outside parallel
 * regions: the look-up is done once and cached. */
int blas_is_openblas(void);

/* Makes OpenBLAS single-threaded; returns its previous thread count (0 for
 * other BLAS), for blas_threads_restore(). */
int blas_threads_serial(void);

/* Gives OpenBLAS back the thread count blas_threads_serial() returned. */
void blas_threads_restore(int saved);

#endif
