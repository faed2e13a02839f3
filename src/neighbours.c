#include <math.h>
#include "neighbours.h"

/* Pilot searches a tree. */
#define NN_PILOTS 16

/* The share of the earlier points' coordinates that a search of a tree
 * reads, above which reading them all in one run is faster. */
#define NN_TREE_SHARE 0.2

/* Whether candidate (d1, p1) is farther than (d2, p2): ties go to the
 * later position, so the choice never depends on the search's path. */
static int farther(double d1, int p1, double d2, int p2)
{
  return d1 > d2 || (d1 == d2 && p1 > p2);
}

/* Restores the max-heap (by `farther`) of k candidates below slot s. */
static void sift_down(double *dist, int *pos, int k, int s)
{
  for (;;) {
    int top = s;
    const int l = 2 * s + 1, r = l + 1;
    if (l < k && farther(dist[l], pos[l], dist[top], pos[top])) top = l;
    if (r < k && farther(dist[r], pos[r], dist[top], pos[top])) top = r;
    if (top == s) return;
    const double d = dist[s];
    const int p = pos[s];
    dist[s] = dist[top];
    pos[s] = pos[top];
    dist[top] = d;
    pos[top] = p;
    s = top;
  }
}

/* Tree j's size: NN_FIRST_TREE 2^j positions, the last tree all n. */
static int tree_sizes(int n, int *size)
{
  int trees = 0;
  for (double s = NN_FIRST_TREE;; s *= 2) {
    size[trees++] = s < n ? (int)s : n;
    if (s >= n) return trees;
  }
}

void nn_register(nn_tree *T, workspace *ws, const points *x, int m)
{
  T->x = x;
  T->m = m;
  T->trees = tree_sizes(x->n, T->size);
  size_t slots = 0, nodes = 0;
  for (int j = 0; j < T->trees; j++) {
    slots += (size_t)T->size[j];
    /* Every leaf of a tree of more than NN_LEAF points holds at least
     * NN_LEAF / 2 (nodes are halved until they fit). */
    nodes += 2 * ((size_t)T->size[j] / (NN_LEAF / 2)) + 1;
  }
  WORKSPACE_ADD(ws, T->pos, slots, 0);
  WORKSPACE_ADD(ws, T->node, nodes, 0);
  WORKSPACE_ADD(ws, T->box, nodes * 2 * (size_t)x->d, 0);
  WORKSPACE_ADD(ws, T->coords, slots * (size_t)x->d, 0);
  WORKSPACE_ADD(ws, T->pilot, (size_t)m + NN_LEAF + x->d, 0);
  WORKSPACE_ADD(ws, T->pilot_pos, m, 0);
}

/* Whether position a comes before b along column col: by value, then by
 * position, a strict order however many values are equal. */
static int before(const double *col, int a, int b)
{
  return col[a] < col[b] || (col[a] == col[b] && a < b);
}

/* Rearranges idx[lo..hi-1] so that idx[nth] is the element that sorting
 * by `before` would put there, none before it later and none after it
 * earlier: Hoare's FIND (Hoare 1961, "Algorithm 65: Find", Communications
 * of the ACM 4(7)), in expected linear time. */
static void select_nth(int *idx, int lo, int hi, int nth, const double *col)
{
  int l = lo, r = hi - 1;
  while (l < r) {
    const int pivot = idx[nth];
    int i = l, j = r;
    do {
      while (before(col, idx[i], pivot)) i++;
      while (before(col, pivot, idx[j])) j--;
      if (i <= j) {
        const int s = idx[i];
        idx[i++] = idx[j];
        idx[j--] = s;
      }
    } while (i <= j);
    if (j < nth) l = i;
    if (nth < i) r = j;
  }
}

/* Node `nd` over idx[lo..hi-1]: its box and earliest position, then its
 * children, split at the median of the box's longest side. */
static void build_node(nn_tree *T, int nd, int lo, int hi)
{
  const int n = T->x->n, d = T->x->d;
  if (T->stopped || (hi - lo >= NN_POLL_POINTS && solver_poll(T->callback, T->ctx, 0))) {
    T->stopped = 1;
    return;
  }
  int *idx = T->pos;
  double *low = T->box + (size_t)2 * d * nd, *high = low + d;
  int earliest = idx[lo];
  for (int j = lo + 1; j < hi; j++)
    if (idx[j] < earliest) earliest = idx[j];
  int split = 0;
  for (int c = 0; c < d; c++) {
    const double *col = T->x->x + (size_t)c * n;
    double a = col[idx[lo]], b = a;
    for (int j = lo + 1; j < hi; j++) {
      const double v = col[idx[j]];
      if (v < a) a = v;
      if (v > b) b = v;
    }
    low[c] = a;
    high[c] = b;
    if (b - a > high[split] - low[split]) split = c;
  }
  nn_node *node = T->node + nd;
  node->lo = lo;
  node->hi = hi;
  node->earliest = earliest;
  node->child = -1;
  if (hi - lo <= NN_LEAF) { /* a leaf, in the order of position */
    for (int j = lo + 1; j < hi; j++) {
      const int p = idx[j];
      int i = j;
      for (; i > lo && idx[i - 1] > p; i--) idx[i] = idx[i - 1];
      idx[i] = p;
    }
    return;
  }
  const int mid = lo + (hi - lo) / 2, child = T->nodes;
  T->nodes += 2;
  node->child = child;
  select_nth(idx, lo, hi, mid, T->x->x + (size_t)split * n);
  build_node(T, child, lo, mid);
  build_node(T, child + 1, mid, hi);
}

typedef struct {
  const nn_tree *T;
  const points *qx; /* the query is row qi of qx */
  int qi;
  double *q;        /* its coordinates, filled by search_tree() */
  int t;            /* the positions searched are 0 .. t - 1 */
  int k, filled;
  double *dist;    /* the candidates so far, a max-heap by `farther` */
  int *pos;
  double *r2;
  double work;     /* coordinates read (boxes and points) */
  double limit;    /* the search stops once it has read more */
} query;

/* Squared distance from the query to node nd's box: no more than to any
 * point in it. */
static double box_distance(const query *Q, int nd)
{
  const int d = Q->T->x->d;
  const double *low = Q->T->box + (size_t)2 * d * nd, *high = low + d;
  double s = 0.0;
  /* The query clamped into the box, written so that compilers use their
   * min and max instructions: branches would be mispredicted about every
   * other coordinate, and fmax() is a call into libm unless the compiler
   * is told that NaN cannot occur. */
  for (int c = 0; c < d; c++) {
    const double x = Q->q[c], above_low = x < low[c] ? low[c] : x;
    const double g = x - (above_low > high[c] ? high[c] : above_low);
    s += g * g;
  }
  return s;
}

static void offer(query *Q, double d2, int p)
{
  int s = Q->filled++;
  while (s > 0) {
    const int up = (s - 1) / 2;
    if (!farther(d2, p, Q->dist[up], Q->pos[up])) break;
    Q->dist[s] = Q->dist[up];
    Q->pos[s] = Q->pos[up];
    s = up;
  }
  Q->dist[s] = d2;
  Q->pos[s] = p;
}

/* The candidates at squared distances r2[0..count-1], at positions
 * base + j (positions NULL) or positions[j], into the heap.  Once it is
 * full a candidate is compared with its farthest, kept in registers: most
 * candidates are farther and leave after one comparison. */
static void offer_all(query *Q, const double *r2, const int *positions, int base,
                      int count)
{
  int j = 0;
  for (; j < count && Q->filled < Q->k; j++)
    offer(Q, r2[j], positions ? positions[j] : base + j);
  if (j == count) return;
  double top = Q->dist[0];
  int top_pos = Q->pos[0];
  for (; j < count; j++) {
    const int p = positions ? positions[j] : base + j;
    if (farther(top, top_pos, r2[j], p)) {
      Q->dist[0] = r2[j];
      Q->pos[0] = p;
      sift_down(Q->dist, Q->pos, Q->k, 0);
      top = Q->dist[0];
      top_pos = Q->pos[0];
    }
  }
}

/* Node nd, whose box is at squared distance `gap`: skipped when it holds
 * later points only or lies beyond the k-th candidate (with a margin of
 * rounding: the distances to points may be summed with fused
 * multiply-adds, the box's not), else its leaf scanned or its children
 * visited nearer first. */
static void visit(query *Q, int nd, double gap)
{
  const nn_node *node = Q->T->node + nd;
  if (node->earliest >= Q->t || Q->work > Q->limit) return;
  if (Q->filled == Q->k && gap > Q->dist[0] * (1 + 1e-12)) return;
  if (node->child < 0) {
    const nn_tree *T = Q->T;
    const int d = T->x->d, len = node->hi - node->lo;
    const points leaf = {T->coords + (size_t)node->lo * d, len, d, NULL, NULL};
    int earlier = 0;
    while (earlier < len && T->pos[node->lo + earlier] < Q->t) earlier++;
    block_sq_dist(Q->qx, Q->qi, &leaf, 0, earlier, Q->r2);
    offer_all(Q, Q->r2, T->pos + node->lo, 0, earlier);
    Q->work += (double)earlier * d;
    return;
  }
  /* A child of later points only is never read, so neither is its box. */
  const int first = node->child, in0 = Q->T->node[first].earliest < Q->t,
            in1 = Q->T->node[first + 1].earliest < Q->t;
  const double a = in0 ? box_distance(Q, first) : INFINITY;
  const double b = in1 ? box_distance(Q, first + 1) : INFINITY;
  Q->work += (double)(in0 + in1) * Q->T->x->d;
  if (a <= b) {
    visit(Q, first, a);
    visit(Q, first + 1, b);
  } else {
    visit(Q, first + 1, b);
    visit(Q, first, a);
  }
}

/* The heap's candidates nearest first: its largest moved to the end, one
 * at a time (a search cut short may hold fewer than k). */
static void nearest_first(query *Q)
{
  double *dist = Q->dist;
  int *pos = Q->pos;
  for (int s = Q->filled - 1; s > 0; s--) {
    const double dd = dist[0];
    const int p = pos[0];
    dist[0] = dist[s];
    pos[0] = pos[s];
    dist[s] = dd;
    pos[s] = p;
    sift_down(dist, pos, s, 0);
  }
}

/* Q's neighbours from tree `tree`, into the heap Q->dist and Q->pos
 * nearest first; returns the coordinates read, with the search cut short
 * past Q->limit of them (a pilot's: its neighbours are not used). */
static double search_tree(query *Q, int tree)
{
  if (Q->k <= 0) return 0.0;
  const points *qx = Q->qx;
  for (int c = 0; c < qx->d; c++) Q->q[c] = qx->x[(size_t)c * qx->n + Q->qi];
  visit(Q, Q->T->root[tree], 0.0);
  nearest_first(Q);
  return Q->work;
}

/* The tree position t searches: the smallest that holds position t - 1. */
static int tree_of(const nn_tree *T, int t)
{
  int tree = 0;
  while (T->size[tree] < t) tree++;
  return tree;
}

/* Earlier points an exhaustive search reads at a time: a block that stays
 * in a core's cache while every search of the group reads it (and at
 * least a leaf, which a tree's search reads at a time). */
int nn_scratch(int d)
{
  const int points = NN_BLOCK_BYTES / ((int)sizeof(double) * d);
  return points > NN_LEAF ? points : NN_LEAF;
}

/* The searches of nn_search_group() (outside = 0: qx is the trees' points
 * and row i searches the positions before i) and nn_search_outside()
 * (outside = 1: every row searches all n positions). */
static void search_group(const nn_tree *T, const points *qx, int q0, int q1,
                         int outside, int m, double *dist, int *pos, double *r2, double *q)
{
  query Q[NN_GROUP];
  int count = 0;
  for (int i = q0; i < q1; i++) {
    const size_t g = (size_t)(i - q0) * m;
    const int t = outside ? T->x->n : i, tree = tree_of(T, t), k = t < m ? t : m;
    query one = {T, qx, i, q, t, k, 0, dist + g, pos + g, r2, 0.0, HUGE_VAL};
    if (!T->exhaustive[tree]) {
      search_tree(&one, tree);
    } else if (k > 0) {
      Q[count++] = one;
    }
  }
  /* Each block of earlier points in the cache once for the whole group,
   * not once a position: from main memory, or a cache that all threads
   * share, two threads' searches would wait on each other.  Candidates
   * still reach each heap in the order of position. */
  int end = 0;
  for (int i = 0; i < count; i++) end = Q[i].t > end ? Q[i].t : end;
  const int block = nn_scratch(T->x->d);
  for (int lo = 0; lo < end; lo += block) {
    for (int i = 0; i < count; i++) {
      const int hi = lo + block < Q[i].t ? lo + block : Q[i].t;
      if (hi <= lo) continue;
      block_sq_dist(qx, Q[i].qi, T->x, lo, hi - lo, r2);
      offer_all(&Q[i], r2, NULL, lo, hi - lo);
    }
  }
  for (int i = 0; i < count; i++) nearest_first(&Q[i]);
}

void nn_search_group(const nn_tree *T, int t0, int t1, int m, double *dist,
                     int *pos, double *r2, double *q)
{
  search_group(T, T->x, t0, t1, 0, m, dist, pos, r2, q);
}

void nn_search_outside(const nn_tree *T, const points *qx, int q0, int q1, int m,
                       double *dist, int *pos, double *r2, double *q)
{
  search_group(T, qx, q0, q1, 1, m, dist, pos, r2, q);
}

int nn_build(nn_tree *T, solver_callback callback, void *ctx)
{
  int slots = 0;
  T->nodes = 0;
  T->callback = callback;
  T->ctx = ctx;
  T->stopped = 0;
  for (int j = 0; j < T->trees; j++) {
    for (int p = 0; p < T->size[j]; p++) T->pos[slots + p] = p;
    T->root[j] = T->nodes++;
    if (T->size[j] > 0) build_node(T, T->root[j], slots, slots + T->size[j]);
    if (T->stopped) return 1;
    slots += T->size[j];
  }
  /* Each leaf's coordinates in one block (column-major, its own leading
   * dimension), which a search reads at once. */
  const int n = T->x->n, d = T->x->d;
  for (int nd = 0; nd < T->nodes; nd++) {
    const nn_node *node = T->node + nd;
    if (node->child >= 0) continue;
    const int len = node->hi - node->lo;
    double *leaf = T->coords + (size_t)node->lo * d;
    for (int c = 0; c < d; c++)
      for (int j = 0; j < len; j++)
        leaf[j + (size_t)c * len] = T->x->x[(size_t)c * n + T->pos[node->lo + j]];
  }
  /* Where the points have many effective dimensions a search reads much
   * of its tree, leaf by leaf, which costs several times more a point than
   * reading all the earlier points in one run (prefetched).  Pilot
   * searches at NN_PILOTS positions spread over a tree's share say which
   * is cheaper for it; the neighbours are the same either way.  A pilot
   * stops at twice the share that decides, which keeps the build short
   * (it is not interrupted) where the trees are no use. */
  for (int j = 0; j < T->trees; j++) {
    /* Tree j serves positions from + 1 .. last. */
    const int from = j > 0 ? T->size[j - 1] : 0;
    const int last = T->size[j] < n ? T->size[j] : n - 1, span = last - from;
    double share = 0.0;
    T->exhaustive[j] = 0;
    for (int i = 0; i < NN_PILOTS && span >= NN_PILOTS; i++) {
      if (span >= NN_POLL_POINTS && solver_poll(callback, ctx, 0)) return 1;
      const int t = from + 1 + (int)((double)i * (span - 1) / (NN_PILOTS - 1));
      const double all = (double)t * d;
      query Q = {T, T->x, t, T->pilot + T->m + NN_LEAF, t, t < T->m ? t : T->m, 0,
                 T->pilot, T->pilot_pos, T->pilot + T->m, 0.0, 2 * NN_TREE_SHARE * all};
      share += search_tree(&Q, j) / all / NN_PILOTS;
    }
    T->exhaustive[j] = share > NN_TREE_SHARE;
  }
  return 0;
}
