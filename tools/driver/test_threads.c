/* Driver checks of the thread policy (src/threads.c).
 *
 * Truths: a forked child of a process whose thread pool has run gets teams
 * of one thread and finishes a parallel kernel product with the parent's
 * bits; the governor, fed step times from a model machine on which one
 * team size is faster, settles on that size and spends little time on the
 * other, within one call or across a stage of short calls; a short run
 * soon after a busy one starts on the busy one's team size only while the
 * other processes still leave too few CPUs free, and regions outside a
 * governed run take no more threads than they leave; a spinning process
 * is seen among them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#endif

#include "driver.h"
#include "../../src/threads.h"

#ifndef _WIN32
static void free_all(double *a, double *b, double *c, double *d)
{
  free(a);
  free(b);
  free(c);
  free(d);
}
#endif

static void check_fork(void)
{
#ifndef _WIN32
  const int n = quick ? 600 : 3000, d = 4;
  const kernel k = {KERNEL_MATERN32, 1.0};
  double *x = random_points(n, d, 2.0), *A = random_matrix(n, 2);
  double *out = dalloc(2 * (size_t)n), *again = dalloc(2 * (size_t)n);
  const points p = {x, n, d, NULL, NULL};
  /* The parent's pool of 2 threads exists from here on. */
  block_matmul(&k, &p, NULL, n, &p, A, 2, out, n, 2);
  CHECK(!threads_forked(), "the parent is not a forked child");
  CHECK(threads_team(2) == (omp_get_thread_limit() < 2 ? 1 : 2),
        "the parent gets the 2 threads it asks for");
  fflush(NULL);
  const pid_t pid = fork();
  if (pid == 0) {
    int ok = threads_forked() && threads_team(2) == 1;
    block_matmul(&k, &p, NULL, n, &p, A, 2, again, n, 2);
    ok = ok && memcmp(out, again, sizeof(double) * 2 * (size_t)n) == 0;
    free_all(x, A, out, again);
    _exit(ok ? 0 : 1);
  }
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork and wait");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the forked child runs on one thread and gets the parent's product");
  free_all(x, A, out, again);
#endif
}

/* Stand-ins for threads_others(): the other processes' threads on the
 * model machine leave no CPU free, leave all free, or are unknown. */
static int others_busy(void)
{
  return omp_get_num_procs();
}
static int others_idle(void)
{
  return 0;
}
static int others_unknown(void)
{
  return -1;
}

/* The model machine's clock (seconds). */
static double model_now = 0.0;

/* Runs `steps` governed steps on up to `max` threads of a model machine
 * whose step t takes seconds[team - 1] (1 + drift t); every tenth step is
 * irregular and takes 100 steps' time (a residual probe), which must not
 * sway the choice.  Returns the share of steps run on `best` threads. */
static double governed_share(int max, const double *seconds, double drift, int best,
                             int steps)
{
  double now = model_now + 3600.0; /* beyond the governor's memory */
  int on_best = 0;
  threads_govern(max, now);
  for (int t = 1; t <= steps; t++) {
    const int team = threads_team(max);
    const int regular = t % 10 != 0;
    now += seconds[team - 1] * (1.0 + drift * t) * (regular ? 1.0 : 100.0);
    on_best += team == best;
    threads_tick(regular, now);
  }
  threads_release();
  model_now = now;
  return (double)on_best / steps;
}

/* A stage of `calls` calls of `slabs` regular steps each, timed as above,
 * with a second between calls (R's optimiser: time the governor must
 * leave out); each call starts as glue_threads() does, with
 * threads_release(), and polls once before its first slab.  Returns the
 * share of slabs run on `best` threads. */
static double staged_share(int max, const double *seconds, int best, int calls,
                           int slabs)
{
  double now = model_now + 3600.0;
  int on_best = 0;
  threads_govern_stage(max, now);
  for (int c = 0; c < calls; c++) {
    threads_release();
    now += 1.0;
    threads_tick(0, now);
    for (int s = 0; s < slabs; s++) {
      const int team = threads_team(max);
      now += seconds[team - 1];
      on_best += team == best;
      threads_tick(1, now);
    }
  }
  threads_end_stage();
  model_now = now;
  return (double)on_best / ((double)calls * slabs);
}

static void check_governor(void)
{
  /* Idle: 2 threads twice as fast.  Busy (another job on the cores):
   * 2 threads four times slower than 1. */
  const double idle[] = {2e-3, 1e-3}, busy[] = {1e-3, 4e-3};
  const double share_idle = governed_share(2, idle, 0.0, 2, 20000);
  const double share_busy = governed_share(2, busy, 0.0, 1, 20000);
  CHECK(share_idle > 0.97, "idle: %.3f of the steps on 2 threads", share_idle);
  CHECK(share_busy > 0.97, "busy: %.3f of the steps on 1 thread", share_busy);
  /* Steps that grow slower as the run goes on (DSG's): a trial must not
   * look slower only for coming later. */
  const double drift_idle = governed_share(2, idle, 1e-3, 2, 5000);
  const double drift_busy = governed_share(2, busy, 1e-3, 1, 5000);
  CHECK(drift_idle > 0.95, "idle, slowing steps: %.3f on 2 threads", drift_idle);
  CHECK(drift_busy > 0.95, "busy, slowing steps: %.3f on 1 thread", drift_busy);
  /* Eight threads where four are best: found from either side. */
  const double four[] = {8e-3, 4e-3, 3e-3, 2e-3, 2.5e-3, 3e-3, 3.5e-3, 4e-3};
  const double share_four = governed_share(8, four, 0.0, 4, 20000);
  CHECK(share_four > 0.9, "eight asked, four best: %.3f of the steps on 4", share_four);
  /* A run too short to judge a trial, soon after a busy run, starts on the
   * team size the busy run found while the other processes leave too few
   * CPUs free or do not say; on all threads once they leave room, or an
   * hour later. */
  const int all = omp_get_thread_limit() < 2 ? 1 : 2;
  governed_share(2, busy, 0.0, 1, 20000);
  threads_set_others(others_busy);
  threads_govern(2, model_now + 1.0);
  CHECK(threads_team(2) == 1, "soon after a busy run, still crowded: one thread from the start");
  threads_release();
  threads_set_others(others_unknown);
  threads_govern(2, model_now + 1.0);
  CHECK(threads_team(2) == 1, "soon after a busy run, crowding unknown: one thread");
  threads_release();
  threads_set_others(others_idle);
  threads_govern(2, model_now + 1.0);
  CHECK(threads_team(2) == all, "soon after a busy run, room again: all threads");
  threads_release();
  threads_set_others(others_busy);
  threads_govern(2, model_now + 3600.0);
  CHECK(threads_team(2) == all, "long after a busy run: all threads (the governor's to judge)");
  threads_release();
  /* Outside a governed run, teams are as asked where the CPUs are free or
   * nothing is known, and one thread where other processes take them all. */
  CHECK(threads_team(2) == 1 || all == 1, "ungoverned, the CPUs taken: one thread");
  threads_set_others(others_unknown);
  CHECK(threads_team(2) == all, "ungoverned, crowding unknown: as asked");
  threads_set_others(others_idle);
  CHECK(threads_team(1) == 1, "one thread asked, one given");
  CHECK(threads_team(2) == all, "ungoverned, the CPUs free: as asked");
  threads_govern(2, 0.0);
  threads_release();
  CHECK(threads_team(2) == all, "after release, the teams are as asked");
  threads_govern(1, 0.0);
  CHECK(threads_team(1) == 1, "a run on one thread is not governed");
  threads_release();
  /* A stage of calls too short to judge a trial each (15 steps, under one
   * window) finds the faster team size across them, and the next run soon
   * after starts from it. */
  const double stage_idle = staged_share(2, idle, 2, 400, 15);
  const double stage_busy = staged_share(2, busy, 1, 400, 15);
  CHECK(stage_idle > 0.9, "stage, idle: %.3f of the slabs on 2 threads", stage_idle);
  CHECK(stage_busy > 0.9, "stage, busy: %.3f of the slabs on 1 thread", stage_busy);
  threads_set_others(others_busy);
  threads_govern(2, model_now + 1.0);
  CHECK(threads_team(2) == 1, "soon after a busy stage: one thread from the start");
  threads_set_others(others_idle);
  threads_release();
  CHECK(threads_team(2) == all, "after the stage's end, the teams are as asked");
}

#ifndef _WIN32
static void sleep_ms(long ms)
{
  const struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}
#endif

/* threads_others() on this machine: whatever else runs, a spinning child
 * is one of the other processes' threads ready to run (where the system
 * says). */
static void check_others(void)
{
#ifndef _WIN32
  const int before = threads_others();
  CHECK(before >= -1, "threads_others() says a count or -1 (%d)", before);
  fflush(NULL);
  const pid_t pid = fork();
  if (pid == 0) {
    volatile unsigned long spin = 0;
    for (;;) spin++;
  }
  CHECK(pid > 0, "fork a spinning child");
  if (pid <= 0) return;
  sleep_ms(100);
  int seen = 0;
  for (int k = 0; k < 5 && !seen; k++) {
    const int others = threads_others();
    seen = others != 0;
    sleep_ms(10);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  CHECK(seen, "a spinning process is another process's thread ready to run");
#endif
}

void test_threads(void)
{
  section("thread policy");
  threads_init();
  /* The model machine's CPUs are free unless a check says otherwise. */
  threads_set_others(others_idle);
  check_fork();
  check_governor();
  threads_set_others(NULL);
  check_others();
}
