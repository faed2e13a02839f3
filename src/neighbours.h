/* Each point's nearest earlier points, as Vecchia's approximation needs
 * them (vecchia.h): for the points in a fixed order, the k = min(m, t)
 * points among positions 0..t-1 nearest to position t, by the squared
 * distances of block_sq_dist() (the same bits), ties to the earlier
 * position, listed nearest first.  Exactly the neighbours an exhaustive
 * search of n^2/2 distances finds.
 *
 * The search runs down a k-d tree with a bounding box at every node
 * (Friedman, Bentley and Finkel 1977, "An algorithm for finding best
 * matches in logarithmic expected time", ACM Transactions on Mathematical
 * Software 3(3)).  Trees of the first 64, 128, 256, ... positions (the
 * last of all n): position t searches the smallest that holds every
 * earlier position, in which at least half the points are earlier, so a
 * search reads about as many points at t = 100 as at t = n.  A node knows
 * the earliest position below it and a leaf keeps its points in the order
 * of position, so neither a subtree of later points nor a leaf's later
 * points are read.  Built in O(n log n) time and O(n d) memory; a search
 * reads a few leaves where the points have few effective dimensions.
 * Where they have many it would read much of its tree, and pilot searches
 * send every search of such a tree to the exhaustive search instead, which
 * nn_search_group() runs for several positions at once, block by block. */
#ifndef SDDGP_NEIGHBOURS_H
#define SDDGP_NEIGHBOURS_H

#include "block.h"
#include "workspace.h"

/* Points a leaf, at most. */
#define NN_LEAF 32

/* Positions in the smallest tree. */
#define NN_FIRST_TREE 64

/* More trees than any n needs (n < 2^31). */
#define NN_TREES 32

/* Nodes of at least this many points poll the build's callback. */
#define NN_POLL_POINTS 65536
/* Positions nn_search_group() searches together, at most. */
#define NN_GROUP 16
/* Bytes of the earlier points' coordinates that a group's exhaustive
 * searches read at a time, well within a core's L2 cache. */
#define NN_BLOCK_BYTES (256 * 1024)

typedef struct {
  int lo, hi;   /* its points, slots lo..hi-1, in the order of position */
  int child;    /* the first of its two children, the second is child + 1;
                 * -1 for a leaf */
  int earliest; /* the earliest position below it */
} nn_node;

typedef struct {
  const points *x; /* the points, in the given order */
  int trees;       /* tree j holds positions 0 .. size[j] - 1 */
  int size[NN_TREES], root[NN_TREES];
  int *pos;        /* the position of slot j (every tree's, one after
                    * another, each leaf's contiguous) */
  nn_node *node;
  double *box;     /* node's box: lower corner at box[2 d node], upper d on */
  int nodes;
  double *coords;  /* each leaf's points: slots lo..hi-1 at coords + lo d,
                    * column-major with leading dimension hi - lo */
  int exhaustive[NN_TREES]; /* searches read all earlier points instead */
  int m;           /* neighbours a point */
  double *pilot;   /* scratch of the build's pilot searches */
  int *pilot_pos;
  solver_callback callback; /* polled during the build */
  void *ctx;
  int stopped;     /* the callback asked the build to stop */
} nn_tree;

/* Registers the trees' memory for m neighbours of the n points x in ws (to
 * be allocated by the caller's workspace_alloc(); x must outlive the
 * trees). */
void nn_register(nn_tree *T, workspace *ws, const points *x, int m);

/* Builds the trees in the memory registered and allocated, polling the
 * callback (NULL: none) between pieces of work.  Returns 0, or 1 when the
 * callback asked to stop (the trees are then unusable). */
int nn_build(nn_tree *T, solver_callback callback, void *ctx);

/* For the positions t0 .. t1 - 1 (t1 - t0 <= NN_GROUP), each position t's
 * k = min(m, t) earlier points nearest to it: their positions into
 * pos + (t - t0) m and squared distances into dist + (t - t0) m, nearest
 * first.  Exhaustive searches in a group read the earlier points together.
 * Scratch: r2, nn_scratch(d) values, and q, d values. */
void nn_search_group(const nn_tree *T, int t0, int t1, int m, double *dist,
                     int *pos, double *r2, double *q);

/* nn_search_group() for points the trees do not hold: rows q0 .. q1 - 1 of
 * qx (q1 - q0 <= NN_GROUP, qx->d = the trees' d), each one's min(m, n)
 * nearest among all n positions. */
void nn_search_outside(const nn_tree *T, const points *qx, int q0, int q1, int m,
                       double *dist, int *pos, double *r2, double *q);

/* The values of nn_search_group()'s scratch r2 for points of d
 * coordinates. */
int nn_scratch(int d);

#endif
