/* The working memory of one solver call.  The solver registers each buffer
 * it needs (its pointer variable, element count, zeroed or not, optionally
 * only when a condition holds), allocates them with one call and one
 * failure check, and frees them all with one workspace_free() on its single
 * exit path, so that no early return can leak.
 *
 *   workspace ws;
 *   workspace_init(&ws);
 *   WORKSPACE_ADD(&ws, alpha, len, WORKSPACE_ZEROED);
 *   WORKSPACE_ADD_IF(&ws, permuted, perm, n, 0);
 *   if (workspace_alloc(&ws)) { status = SOLVER_NO_MEMORY; goto done; }
 *   ...
 * done:
 *   workspace_free(&ws);
 *
 * Each buffer is its own malloc()/calloc(), as before the workspace existed:
 * the same alignment, and AddressSanitizer still sees each one's bounds. */
#ifndef SDDGP_WORKSPACE_H
#define SDDGP_WORKSPACE_H

#include <stddef.h>

/* More buffers than any core function needs; registering more is a
 * programming error, which workspace_alloc() reports as a failure rather
 * than aborting the R session. */
#define WORKSPACE_MAX_BUFFERS 24

/* Flag of a buffer whose elements start at zero (calloc). */
#define WORKSPACE_ZEROED 1

typedef struct {
  void *slot;   /* the caller's pointer variable */
  size_t count, size;
  int zeroed;
  void *memory; /* NULL until allocated */
} workspace_buffer;

typedef struct {
  int count;     /* buffers registered */
  int allocated; /* the first `allocated` of them have their memory */
  int overflow;  /* more than WORKSPACE_MAX_BUFFERS were registered */
  workspace_buffer buffer[WORKSPACE_MAX_BUFFERS];
} workspace;

void workspace_init(workspace *ws);

/* Registers the pointer variable at `slot` (of any object pointer type) to
 * receive `count` elements of `size` bytes, zeroed when `zeroed`.  With
 * `need` 0 the variable is set to NULL now and nothing is registered.  The
 * variable must outlive the workspace and lie outside its buffers. */
void workspace_add(workspace *ws, int need, void *slot, size_t count,
                   size_t size, int zeroed);

/* The element size comes from the pointer's type. */
#define WORKSPACE_ADD(ws, ptr, count, zeroed)                             \
  workspace_add((ws), 1, &(ptr), (count), sizeof *(ptr), (zeroed))
#define WORKSPACE_ADD_IF(ws, need, ptr, count, zeroed)                    \
  workspace_add((ws), (need), &(ptr), (count), sizeof *(ptr), (zeroed))

/* Allocates the buffers registered since the last call (a solver whose
 * later sizes depend on earlier results registers and allocates in
 * stages).  Returns 0, or -1 when one could not be allocated: then every
 * buffer of the workspace, of this stage and earlier ones, is freed and its
 * variable set to NULL. */
int workspace_alloc(workspace *ws);

/* Frees every buffer and sets its variable to NULL; safe to call at any
 * point after workspace_init(), and again. */
void workspace_free(workspace *ws);

#endif
