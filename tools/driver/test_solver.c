/* Driver checks of what the solvers share (src/workspace.c).
 *
 * Truths: the workspace hands out every buffer it was asked for, zeroed
 * where asked, and NULL for one not needed; after a failed allocation, and
 * after workspace_free(), every pointer is NULL and nothing is left
 * allocated (LeakSanitizer and valgrind check the whole driver for leaks,
 * so a buffer a failure did not free fails the run). */
#include <stdint.h>

#include "driver.h"
#include "../../src/workspace.h"

/* A count whose size in bytes does not fit in a size_t: its allocation
 * fails like a real one, without asking the allocator for it (which the
 * sanitizers would report as an error of their own). */
#define TOO_MANY (SIZE_MAX / 2)

static void check_workspace(void)
{
  section("workspace allocator");
  workspace ws;
  double sentinel = 0.0, *a, *z, *skipped = &sentinel;
  double *many[WORKSPACE_MAX_BUFFERS + 1];
  int *idx;
  char *empty;

  workspace_init(&ws);
  WORKSPACE_ADD(&ws, a, 1000, 0);
  WORKSPACE_ADD(&ws, z, 1000, WORKSPACE_ZEROED);
  WORKSPACE_ADD_IF(&ws, 0, skipped, 10, 0);
  WORKSPACE_ADD(&ws, idx, 7, 0);
  WORKSPACE_ADD(&ws, empty, 0, 0);
  CHECK(skipped == NULL, "a buffer not needed is NULL at once");
  const int ok = workspace_alloc(&ws) == 0;
  CHECK(ok && a && z && idx && empty,
        "every buffer allocated, one of no elements too");
  if (ok) {
    int zeroed = 1;
    for (int i = 0; i < 1000; i++) {
      zeroed &= z[i] == 0.0;
      a[i] = i; /* the sanitizers check each buffer's bounds */
    }
    idx[6] = 6;
    CHECK(zeroed, "a zeroed buffer starts at 0");
  }
  workspace_free(&ws);
  CHECK(!a && !z && !idx && !empty, "after workspace_free every pointer is NULL");
  workspace_free(&ws); /* again: nothing left to free */

  /* A failure in the middle frees the buffers before it. */
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, a, 1000, 0);
  WORKSPACE_ADD(&ws, z, TOO_MANY, 0);
  WORKSPACE_ADD(&ws, idx, 7, 0);
  CHECK(workspace_alloc(&ws) == -1 && !a && !z && !idx,
        "a failed allocation fails the workspace and leaves every pointer NULL");
  workspace_free(&ws);

  /* So does a failure in a later stage, for the earlier stages' buffers. */
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, a, 1000, 0);
  CHECK(workspace_alloc(&ws) == 0 && a, "a first stage allocates");
  WORKSPACE_ADD(&ws, idx, 7, 0);
  WORKSPACE_ADD(&ws, z, TOO_MANY, WORKSPACE_ZEROED);
  CHECK(workspace_alloc(&ws) == -1 && !a && !idx && !z,
        "a failed later stage frees the earlier stage too");
  workspace_free(&ws);

  /* More buffers than the workspace holds: a failure, not an overrun. */
  workspace_init(&ws);
  for (int i = 0; i <= WORKSPACE_MAX_BUFFERS; i++) WORKSPACE_ADD(&ws, many[i], 8, 0);
  int none = 1;
  const int failed = workspace_alloc(&ws) == -1;
  for (int i = 0; i <= WORKSPACE_MAX_BUFFERS; i++) none &= many[i] == NULL;
  CHECK(failed && none, "registering too many buffers fails the workspace");
  workspace_free(&ws);
}

void test_solver(void)
{
  check_workspace();
}
