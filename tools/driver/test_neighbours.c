/* The k-d tree's nearest earlier points (neighbours.h) against an
 * exhaustive search over the same distances, on data with many ties. */
#include <stdlib.h>
#include <string.h>
#include "driver.h"
#include "../../src/neighbours.h"

typedef struct {
  double d2;
  int pos;
} candidate;

static int by_distance(const void *a, const void *b)
{
  const candidate *x = a, *y = b;
  if (x->d2 != y->d2) return x->d2 < y->d2 ? -1 : 1;
  return x->pos - y->pos;
}

/* Row qi of qx's first `count` candidates among positions 0 .. count - 1
 * of p, sorted by distance, ties to the earlier position; all_r2 and all
 * are scratch of count. */
static void sorted_candidates(const points *p, const points *qx, int qi, int count,
                              double *all_r2, candidate *all)
{
  if (count > 0) block_sq_dist(qx, qi, p, 0, count, all_r2);
  for (int j = 0; j < count; j++) {
    all[j].d2 = all_r2[j];
    all[j].pos = j;
  }
  qsort(all, (size_t)count, sizeof *all, by_distance);
}

/* Whether k neighbours at positions pos and distances dist are the first
 * k of all. */
static int same_neighbours(const int *pos, const double *dist, const candidate *all, int k)
{
  int same = 1;
  for (int a = 0; same && a < k; a++) same = pos[a] == all[a].pos && dist[a] == all[a].d2;
  return same;
}

/* Every position's neighbours from the trees and from sorting all its
 * earlier points' distances, then those of n points outside the trees
 * among all n; returns the searches that differ, and in
 * *exhaustive whether the largest tree sends its searches to all earlier
 * points.  Positions are searched in groups of 1 to NN_GROUP in turn. */
static int compare_search(const double *x, int n, int d, int m, int *exhaustive)
{
  const points p = {x, n, d, NULL, NULL};
  nn_tree T;
  workspace ws;
  workspace_init(&ws);
  *exhaustive = -1;
  nn_register(&T, &ws, &p, m);
  if (workspace_alloc(&ws)) return n;
  nn_build(&T, NULL, NULL);
  *exhaustive = T.exhaustive[T.trees - 1];
  /* The search's scratch as small as it may be; the brute force's its own. */
  double *r2 = dalloc(nn_scratch(d)), *all_r2 = dalloc(n > 0 ? n : 1), *q = dalloc(d);
  double *dist = dalloc((size_t)NN_GROUP * m);
  int *pos = xmalloc(sizeof(int) * NN_GROUP * m);
  candidate *all = xmalloc(sizeof(candidate) * (n > 0 ? n : 1));
  int wrong = 0;
  for (int t0 = 0, group = 0; t0 < n; group++) {
    const int len = 1 + group % NN_GROUP, t1 = t0 + len < n ? t0 + len : n;
    nn_search_group(&T, t0, t1, m, dist, pos, r2, q);
    for (int t = t0; t < t1; t++) {
      sorted_candidates(&p, &p, t, t, all_r2, all);
      wrong += !same_neighbours(pos + (size_t)(t - t0) * m, dist + (size_t)(t - t0) * m,
                                all, t < m ? t : m);
    }
    t0 = t1;
  }
  /* Points the trees do not hold (nn_search_outside()), among all n: the
   * first 2n/3 positions moved by a tenth of their spread, and a third
   * as new points; 2n/3 .. n - 1 repeat positions exactly, so distance 0
   * ties with the position itself. */
  const int nq = n;
  double *xq = dalloc((size_t)(nq > 0 ? nq : 1) * d);
  for (int j = 0; j < d; j++)
    for (int i = 0; i < nq; i++)
      xq[i + (size_t)j * nq] = i < 2 * n / 3 ? x[i + (size_t)j * n] + 0.1 * (i % 7 - 3) / 3.0
                                             : x[(n - 1 - i) + (size_t)j * n];
  const points qp = {xq, nq, d, NULL, NULL};
  for (int i0 = 0, group = 0; i0 < nq; group++) {
    const int len = 1 + group % NN_GROUP, i1 = i0 + len < nq ? i0 + len : nq;
    nn_search_outside(&T, &qp, i0, i1, m, dist, pos, r2, q);
    for (int i = i0; i < i1; i++) {
      sorted_candidates(&p, &qp, i, n, all_r2, all);
      wrong += !same_neighbours(pos + (size_t)(i - i0) * m, dist + (size_t)(i - i0) * m,
                                all, n < m ? n : m);
    }
    i0 = i1;
  }
  free(xq);
  free(r2);
  free(all_r2);
  free(q);
  free(dist);
  free(pos);
  free(all);
  workspace_free(&ws);
  return wrong;
}

static int stop_now(void *ctx, int iteration, const double *residuals)
{
  (void)ctx; (void)iteration; (void)residuals;
  return 1;
}

void test_neighbours(void)
{
  section("nearest earlier points (k-d tree)");
  const int n = quick ? 300 : 3000;
  char what[96];
  /* Continuous points in 3, 12 and 40 dimensions (trees searched, and at
   * 40 judged too slow by the pilots: every point's earlier ones read
   * instead); points on a grid of 4^4
   * (every point repeated, distances tied many times over); one point
   * repeated; fewer points than a leaf, or than neighbours. */
  double *uniform3 = random_points(n, 3, 2.0), *uniform12 = random_points(n, 12, 1.0);
  double *uniform40 = random_points(n, 40, 1.0);
  double *grid = random_points(n, 4, 4.0), *same = dalloc((size_t)n * 2);
  for (size_t i = 0; i < (size_t)n * 4; i++) grid[i] = (double)(int)grid[i];
  for (size_t i = 0; i < (size_t)n * 2; i++) same[i] = 0.5;
  const struct {
    const char *name;
    const double *x;
    int n, d, m;
  } cases[] = {
    {"uniform, d = 3", uniform3, n, 3, 30}, {"uniform, d = 3, m = 1", uniform3, n, 3, 1},
    {"uniform, d = 12", uniform12, n, 12, 20}, {"uniform, d = 40", uniform40, n, 40, 20},
    {"grid, d = 4", grid, n, 4, 25},
    {"one point repeated", same, n, 2, 10}, {"fewer points than a leaf", uniform3, 20, 3, 5},
    {"fewer points than neighbours", uniform3, 7, 3, 10}, {"one point", uniform3, 1, 3, 10}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    /* The first rows of an n-row matrix, column by column. */
    double *x = dalloc((size_t)cases[c].n * cases[c].d);
    for (int j = 0; j < cases[c].d; j++)
      memcpy(x + (size_t)j * cases[c].n, cases[c].x + (size_t)j * n,
             sizeof(double) * cases[c].n);
    snprintf(what, sizeof what, "neighbours: %s, searches that differ", cases[c].name);
    int exhaustive;
    const int wrong = compare_search(x, cases[c].n, cases[c].d, cases[c].m, &exhaustive);
    CHECK(wrong == 0, "%s: %d", what, wrong);
    /* Both ways are checked: the largest tree searched in 3 dimensions,
     * at 40 its searches sent to all earlier points by the pilots. */
    if (cases[c].x == uniform3 && cases[c].n == n && !quick)
      CHECK(exhaustive == 0, "neighbours: %s, the largest tree not searched", cases[c].name);
    if (cases[c].x == uniform40 && !quick)
      CHECK(exhaustive == 1, "neighbours: %s, the largest tree searched", cases[c].name);
    free(x);
  }
  /* A tree as large as NN_POLL_POINTS polls its callback while it is
   * built, and stops when asked to. */
  double *line = random_points(NN_POLL_POINTS, 1, 1.0);
  const points big = {line, NN_POLL_POINTS, 1, NULL, NULL};
  nn_tree T;
  workspace ws;
  workspace_init(&ws);
  nn_register(&T, &ws, &big, 5);
  CHECK(workspace_alloc(&ws) == 0, "neighbours: allocation");
  CHECK(nn_build(&T, stop_now, NULL) == 1, "neighbours: a build asked to stop went on");
  CHECK(nn_build(&T, NULL, NULL) == 0, "neighbours: a build without a callback stopped");
  workspace_free(&ws);
  free(line);
  free(uniform3);
  free(uniform12);
  free(uniform40);
  free(grid);
  free(same);
}
