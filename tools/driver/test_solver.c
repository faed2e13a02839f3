/* Driver checks of what the solvers share (src/workspace.c, src/solver.c).
 *
 * Truths: the workspace hands out every buffer it was asked for, zeroed
 * where asked, and NULL for one not needed; after a failed allocation, and
 * after workspace_free(), every pointer is NULL and nothing is left
 * allocated (LeakSanitizer and valgrind check the whole driver for leaks,
 * so a buffer a failure did not free fails the run).  The end of a step
 * stops in the documented order; right-hand-side norms are hand-computed
 * sums. */
#include <stdint.h>

#include "driver.h"
#include "../../src/solver.h"
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

/* Records its calls, and asks to stop when told to. */
typedef struct { int calls, stop, iteration; const double *report; } recorder;

static int record(void *ctx, int iteration, const double *residuals)
{
  recorder *r = ctx;
  r->calls++;
  r->iteration = iteration;
  r->report = residuals;
  return r->stop;
}

static void check_end_step(void)
{
  section("the end of a solver step");
  double iterate[3] = {1.0, -2.0, 0.5};
  recorder rec = {0, 0, 0, NULL};
  solver_stop_rule rule = {.nmeasures = 2, .diverged_above = 10.0,
                           .has_tolerance = 1, .tolerance = 0.1,
                           .iterate = iterate, .len = 3,
                           .callback = record, .ctx = &rec};
  const double going[2] = {0.5, 0.05}, below[2] = {0.09, 0.0};
  const double high[2] = {0.05, 11.0}, undefined[2] = {NAN, 0.0};

  CHECK(solver_end_step(&rule, 4, going, going) == SOLVER_MAX_ITER &&
            rec.calls == 1 && rec.iteration == 4 && rec.report == going,
        "a step above the tolerance goes on, after reporting to the callback");
  CHECK(solver_end_step(&rule, 5, below, NULL) == SOLVER_TOLERANCE &&
            rec.calls == 2 && rec.report == NULL,
        "every measure below the tolerance: SOLVER_TOLERANCE after the callback");
  CHECK(solver_end_step(&rule, 6, high, high) == SOLVER_DIVERGED && rec.calls == 2,
        "a measure above the threshold diverged, before the callback");
  CHECK(solver_end_step(&rule, 6, undefined, undefined) == SOLVER_DIVERGED && rec.calls == 2,
        "a NaN measure diverged");
  iterate[1] = INFINITY;
  CHECK(solver_end_step(&rule, 7, going, going) == SOLVER_DIVERGED,
        "a non-finite iterate diverged");
  CHECK(solver_end_step(&rule, 7, NULL, NULL) == SOLVER_MAX_ITER && rec.calls == 3,
        "a step that measured nothing only calls the callback");
  iterate[1] = -2.0;
  rec.stop = 1;
  CHECK(solver_end_step(&rule, 8, below, below) == SOLVER_STOPPED,
        "the callback's stop comes before the tolerance");
  rec.stop = 0;
  rule.has_tolerance = 0;
  rule.iterate = NULL;
  rule.nmeasures = 0;
  CHECK(solver_end_step(&rule, 9, below, below) == SOLVER_MAX_ITER,
        "a solver without a tolerance never stops at one");
}

static void check_rhs_norms(void)
{
  section("right-hand-side norms");
  /* Columns (3, 4, 0), (0, 0, 0) and (1, 2, 2); n = 3. */
  const double rhs[9] = {3, 4, 0, 0, 0, 0, 1, 2, 2};
  const int rows[2] = {2, 1};
  double norm[3];
  solver_rhs_norms(rhs, 3, 3, NULL, 3, norm);
  CHECK(norm[0] == 5.0 && norm[1] == 1.0 && norm[2] == 3.0,
        "norms of whole columns, 1 for a zero column: %g %g %g",
        norm[0], norm[1], norm[2]);
  solver_rhs_norms(rhs, 3, 3, rows, 2, norm);
  CHECK(norm[0] == 4.0 && norm[1] == 1.0 && norm[2] == sqrt(8.0),
        "norms over chosen rows: %g %g %g", norm[0], norm[1], norm[2]);
}

void test_solver(void)
{
  check_workspace();
  check_end_step();
  check_rhs_norms();
}
