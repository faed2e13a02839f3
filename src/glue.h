/* Shared helpers of the .Call glue: SEXP -> core structs.  Arguments are
 * validated in R before .Call; the checks here only turn a broken internal
 * call into an R error instead of a crash. */
#ifndef SDDGP_GLUE_H
#define SDDGP_GLUE_H

#include <stdint.h>
#include <R.h>
#include <Rinternals.h>
#include "block.h"
#include "kernel.h"

/* list(family = <int code>, variance = <double>) built by R's kernel_spec(). */
kernel glue_kernel(SEXP spec);

/* A double matrix (n x d), already scaled by the length scales. */
points glue_points(SEXP x, const char *what);

/* The requested thread count, clamped to what OpenMP allows. */
int glue_threads(SEXP threads);

/* A 64-bit seed from two doubles in [0, 2^32) drawn by R's generator. */
uint64_t glue_seed(SEXP seed);

/* A double vector of exactly `len` elements. */
const double *glue_doubles(SEXP x, R_xlen_t len, const char *what);

/* Element `name` of a named list; an R error if it is missing. */
SEXP glue_list_get(SEXP list, const char *name);

/* TRUE when the user has pressed Ctrl-C; never longjmps, so the caller can
 * free its memory and return normally. */
int glue_interrupt_pending(void);

#endif
