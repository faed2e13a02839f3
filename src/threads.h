/* The thread policy: every parallel region of the core takes its team size
 * from threads_team(), as data.table's regions take theirs from
 * getDTthreads().  Results never depend on the team size (counter-based
 * random numbers, sums in a fixed block order), so the policy is free to
 * give fewer threads than were asked for:
 *
 * - In a child forked from a process that has used OpenMP, GNU OpenMP's
 *   thread pool is gone but its bookkeeping is not, and a team of two or
 *   more deadlocks (parallel::mclapply, future's multicore plan).  A fork
 *   handler registered by threads_init() makes every team there one thread.
 *
 * - On a busy machine, idle team members spin at every region's end (GNU
 *   OpenMP's default wait policy, fixed when R starts) and take the CPU the
 *   working threads need: two threads can run several times slower than
 *   one.  Iterative solvers therefore run under a governor that times their
 *   steps on the current team size and, now and then, on half or twice as
 *   many threads, and keeps the faster; so does a stage of many short
 *   calls (Vecchia's likelihood under L-BFGS-B), as one run.  Regions
 *   outside such runs (set-up, predictions), too short or too few to time,
 *   take no more threads than the CPUs other processes leave free. */
#ifndef SDDGP_THREADS_H
#define SDDGP_THREADS_H

#include "omp_compat.h"

/* Registers the fork handler; once per process (R_init_sddgp, the C test
 * driver).  Safe to call again. */
void threads_init(void);

/* 1 in a process forked after threads_init(), else 0. */
int threads_forked(void);

/* The most threads a .Call asked for `requested` may use: at most OpenMP's
 * thread limit, one in a forked child, and at least one. */
int threads_limit(int requested);

/* The team size for a region asked to run on `requested` threads:
 * threads_limit(), and at most the governor's choice while a governed run
 * is under way; outside one, at most the CPUs that other processes'
 * threads leave free (threads_others(), looked at no more than every
 * THREADS_LOOK seconds, counting the threads two looks in a row saw), and
 * at least one.  Called outside parallel regions only. */
int threads_team(int requested);

/* Other processes' threads running or ready to run at this instant,
 * machine-wide: Linux's /proc/loadavg less this process's own threads
 * (/proc/self/task); -1 where the system does not say. */
int threads_others(void);

/* Replaces threads_others() in the policy by `others` (the driver's model
 * machines); NULL restores it. */
void threads_set_others(int (*others)(void));

/* Starts governing a run on up to `max` threads at time `now` (seconds).
 * The team starts at `max`, or at the team size a recent run settled on
 * (see GOVERN_MEMORY) unless the other processes' threads now leave room
 * for `max`. */
void threads_govern(int max, double now);

/* The end of a solver step at time `now`.  `regular` is 0 for steps that
 * do extra work (residual probes, metrics) or for calls between steps:
 * their time is left out of the comparison. */
void threads_tick(int regular, double now);

/* Ends the governed run (idempotent): teams are again what was asked.
 * A stage (below) is left running. */
void threads_release(void);

/* A governed run that outlives the call that starts it, for an R-level
 * stage of many short calls whose parallel work polls the callback at
 * regular steps (Vecchia's likelihood under L-BFGS-B): one call is too
 * short to judge a trial, the stage is not.  threads_govern() replaces it;
 * threads_end_stage() ends it. */
void threads_govern_stage(int max, double now);
void threads_end_stage(void);

/* 1 while a stage's run is under way. */
int threads_staged(void);

#endif
