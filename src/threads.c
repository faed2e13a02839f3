#include "threads.h"

#ifndef _WIN32
#include <pthread.h>
#endif
#ifdef __linux__
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#endif

/* A window of regular steps lasts at least this long (seconds): long enough
 * to average over the scheduler's time slices, short enough that a run of
 * a few seconds adapts.  Trial windows are shorter, since a bad trial size
 * can be several times slower. */
#define GOVERN_WINDOW 0.05
#define GOVERN_TRIAL_WINDOW 0.02
/* ...and holds at least this many steps, so that solvers with long steps
 * (DSG's grow to tens of milliseconds) are not judged on one or two. */
#define GOVERN_STEPS 8
#define GOVERN_TRIAL_STEPS 4
/* A trial team size must be this much faster to be adopted: noise between
 * windows of the same team size stays below it.  Fewer threads must win
 * by more, since where both sizes are as fast (steps too small to share
 * out yet, as DSG's first ones) a chance win would leave cores idle when
 * the steps grow; on a busy machine fewer threads win by far more. */
#define GOVERN_MARGIN_UP 0.10
#define GOVERN_MARGIN_DOWN 0.25
/* Windows between trials: the first trial follows the first window, the
 * gap then doubles after each failed trial, so that on an idle machine
 * trials soon cost under 1 % of the time, and shrinks again after a
 * switch. */
#define GOVERN_GAP_MIN 4
#define GOVERN_GAP_MAX 128

static int forked = 0;

#ifndef _WIN32
static void on_fork_child(void) { forked = 1; }
#endif

void threads_init(void)
{
#ifndef _WIN32
  static int registered = 0;
  if (!registered && pthread_atfork(NULL, NULL, on_fork_child) == 0) registered = 1;
#endif
}

int threads_forked(void) { return forked; }

/* The state of the one governed run (solvers run one at a time per
 * process; a run left active by an error is released at the next entry). */
static struct {
  int active;
  int stage;        /* 1 while a stage's run: threads_release() keeps it */
  int max, cap;     /* most threads asked for; the team size in use */
  int alt, trial;   /* the team size on trial, and whether it runs now */
  int judge;        /* 1 in the window after a trial, which judges it */
  int judged;       /* 1 once a trial has been judged in this run */
  int up;           /* direction of the next trial when both are possible */
  int gap, until;   /* windows between trials; windows left to the next */
  int ticks;        /* regular steps in the window */
  double start;     /* start of the window, less the irregular steps' time */
  double last;      /* time of the last tick */
  double rate;      /* steps per second of the last window on `cap` */
  double trial_rate; /* steps per second of the last trial window */
} gov;

int threads_limit(int requested)
{
  int n = requested;
  if (n > omp_get_thread_limit()) n = omp_get_thread_limit();
  if (forked) n = 1;
  return n < 1 ? 1 : n;
}

#ifdef __linux__
/* Threads of this process that are running or ready to run: its own
 * OpenMP workers may still be spinning after the last region, and they
 * count in /proc/loadavg too. */
static int running_here(void)
{
  DIR *dir = opendir("/proc/self/task");
  if (!dir) return -1;
  int n = 0;
  const struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[288], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    const size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    /* "tid (name) state ...": the name may hold spaces and parentheses. */
    const char *end = strrchr(buf, ')');
    if (end && end[1] == ' ' && end[2] == 'R') n++;
  }
  closedir(dir);
  return n;
}

int threads_others(void)
{
  /* This process's own first: a worker that stops spinning between the
   * two reads is then missed by both, not counted as another process's. */
  const int here = running_here();
  if (here < 0) return -1;
  /* The fourth field of /proc/loadavg, "running/total", counts the
   * threads running or ready to run at this instant, machine-wide. */
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return -1;
  double avg[3];
  int running = -1, total;
  if (fscanf(f, "%lf %lf %lf %d/%d", &avg[0], &avg[1], &avg[2], &running, &total) != 5)
    running = -1;
  fclose(f);
  if (running < 0) return -1;
  return running > here ? running - here : 0;
}
#else
int threads_others(void)
{
  return -1;
}
#endif

/* Seconds a look at the other processes' threads stands for: a look costs
 * tens of microseconds, and regions can follow each other far faster. */
#define THREADS_LOOK 0.01

static int (*others_now)(void) = threads_others;
static struct {
  double at;
  int others; /* what the last look saw */
  int cpus;   /* CPUs free for this process's threads, at least 1; 0: unknown */
} room = {-1.0, -1, 0};

void threads_set_others(int (*others)(void))
{
  others_now = others ? others : threads_others;
  room.at = -1.0;
  room.others = -1;
}

static int free_cpus(void)
{
  const double now = omp_get_wtime();
  if (room.at < 0 || now < room.at || now - room.at > THREADS_LOOK) {
    /* Threads seen by two looks in a row: another job's, not a daemon's
     * passing wake-up, which would leave a CPU idle for a look's time. */
    const int seen = others_now(), cpus = omp_get_num_procs();
    const int others = seen < 0 || room.others < 0 || seen < room.others ? seen : room.others;
    room.cpus = others < 0 ? 0 : others < cpus ? cpus - others : 1;
    room.others = seen;
    room.at = now;
  }
  return room.cpus;
}

int threads_team(int requested)
{
  const int n = threads_limit(requested);
  if (n == 1) return 1;
  if (!gov.active) {
    const int spare = free_cpus();
    return spare > 0 && spare < n ? spare : n;
  }
  const int allowed = gov.trial ? gov.alt : gov.cap;
  return n > allowed ? allowed : n;
}

/* What the last governed run that judged a trial settled on, and when its
 * last step ended: a busy machine stays busy from one fit to the next, and
 * a run too short to find its own team size (a CG fit of a second, most of
 * it set-up that the governor cannot time) starts from there, unless the
 * machine has room for all its threads by then.  Runs too short to judge do
 * not renew it, so it expires. */
#define GOVERN_MEMORY 10.0
static struct {
  int cap;
  double at;
} learned = {0, 0.0};

void threads_govern(int max, double now)
{
  gov.active = max > 1;
  gov.stage = 0;
  gov.max = gov.cap = max;
  if (learned.cap > 0 && learned.cap < max && now >= learned.at &&
      now - learned.at < GOVERN_MEMORY && free_cpus() < max)
    gov.cap = learned.cap;
  gov.trial = gov.judge = gov.judged = 0;
  gov.up = 0;
  gov.gap = GOVERN_GAP_MIN;
  gov.until = 1;
  gov.ticks = 0;
  gov.start = gov.last = now;
  gov.rate = 0.0;
}

void threads_govern_stage(int max, double now)
{
  threads_govern(max, now);
  gov.stage = gov.active;
}

int threads_staged(void) { return gov.stage; }

void threads_end_stage(void)
{
  gov.stage = 0;
  threads_release();
}

void threads_release(void)
{
  if (gov.stage) return;
  if (gov.active && gov.judged) {
    learned.cap = gov.cap;
    learned.at = gov.last;
  }
  gov.active = 0;
}

/* The next team size to try from `cap`: half or twice it, alternating when
 * both are possible; 0 when neither is. */
static int trial_size(void)
{
  const int down = gov.cap > 1 ? gov.cap / 2 : 0;
  const int up = gov.cap < gov.max ? (2 * gov.cap < gov.max ? 2 * gov.cap : gov.max) : 0;
  if (down && up) {
    gov.up = !gov.up;
    return gov.up ? up : down;
  }
  return down ? down : up;
}

void threads_tick(int regular, double now)
{
  if (!gov.active) return;
  if (!regular) {
    gov.start += now - gov.last;
    gov.last = now;
    return;
  }
  gov.ticks++;
  gov.last = now;
  const double elapsed = now - gov.start;
  if (gov.trial ? elapsed < GOVERN_TRIAL_WINDOW || gov.ticks < GOVERN_TRIAL_STEPS
                : elapsed < GOVERN_WINDOW || gov.ticks < GOVERN_STEPS)
    return;
  const double rate = gov.ticks / elapsed;
  if (gov.trial) {
    gov.trial = 0;
    gov.judge = 1;
    gov.trial_rate = rate;
  } else if (gov.judge) {
    /* The trial against the mean of the windows on either side of it, so
     * that steps that grow slower as a run goes on (DSG's do) or a load
     * that changes do not bias the comparison. */
    gov.judge = 0;
    gov.judged = 1;
    const double margin = gov.alt < gov.cap ? GOVERN_MARGIN_DOWN : GOVERN_MARGIN_UP;
    if (gov.trial_rate > 0.5 * (gov.rate + rate) * (1.0 + margin)) {
      gov.cap = gov.alt;
      gov.gap = GOVERN_GAP_MIN;
    } else if (gov.gap < GOVERN_GAP_MAX) {
      gov.gap *= 2;
    }
    gov.until = gov.gap;
    gov.rate = rate;
  } else {
    gov.rate = rate;
    if (--gov.until <= 0) {
      gov.alt = trial_size();
      gov.trial = gov.alt > 0;
    }
  }
  gov.ticks = 0;
  gov.start = now;
}
