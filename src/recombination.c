#include <math.h>
#include <string.h>
#include "recombination.h"
#include "lapack.h"
#include "rng.h"
#include "workspace.h"

/* Groups per round of the randomised wrapper, per point of the reduced
 * support: the reference's fact = 50. */
#define RECOMB_GROUP_FACTOR 50
/* The deterministic routine works on 2 (r + 1) groups at a time, so each of
 * its SVDs is of a (r + 1) x 2 (r + 1) matrix whatever N is. */
#define RECOMB_DET_GROUP_FACTOR 2
/* Basis moves per restart are 2 (r + 1) times the Luby sequence; the total
 * covers its first seven terms (1, 1, 2, 1, 1, 2, 4). */
#define RECOMB_MOVES_FACTOR 2
#define RECOMB_MAX_MOVES_FACTOR 24
/* Redraws of a singular random basis before giving up (the reference's 5). */
#define RECOMB_MAX_REDRAWS 5
/* A direction (or singular value) this small relative to the largest is
 * treated as zero: dropping it moves the mean by at most this fraction of
 * the points' spread. */
#define RECOMB_RANK_TOL 1e-12
/* Bases whose condition number (1-norm) exceeds this are redrawn. */
#define RECOMB_COND_LIMIT 1e12
/* A Sherman-Morrison-updated inverse further than this from the identity
 * (max-norm of A B' - I) is recomputed. */
#define RECOMB_INVERSE_TOL 1e-9
/* A new basis point must have a pivot at least this fraction of its
 * largest coordinate, which keeps the updated basis well conditioned. */
#define RECOMB_PIVOT_TOL 1e-9
/* A point this close to the barycentre (in the scaled coordinates) carries
 * the whole weight alone. */
#define RECOMB_CENTRE_TOL 1e-14

typedef struct {
  uint64_t seed;
  uint64_t counter; /* next draw of stream RNG_STREAM_RECOMBINATION */
  recomb_stats *stats;
} recomb_ctx;

static int reduce_measure(const double *z, int ldz, int r, int *idx,
                          double *mu, int *M, int groups, int randomized,
                          recomb_ctx *ctx);

/* Term i >= 1 of the Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, ... */
static int luby(int i)
{
  for (;;) {
    int k = 1;
    while ((1 << k) - 1 < i) k++;
    if ((1 << k) - 1 == i) return 1 << (k - 1);
    i -= (1 << (k - 1)) - 1;
  }
}

/* ------------------------------------------------------------------ */
/* Deterministic: Tchernychova-Lyons on M <= 2 (r + 1) points.          */

/* The null space of [P'; 1'] ((r + 1) x M) from an SVD; each null vector
 * phi moves the weights to T - alpha phi, which keeps the mean and the total
 * and, with alpha the smallest T_i / phi_i over phi_i > 0, zeros one
 * weight; that point is then eliminated from the remaining null vectors. */
static int tl_car(const double *P, int M, int r, double *T)
{
  const int rows = r + 1, one = 1;
  if (M <= rows) return 0;
  int status = 0, info = 0, lwork = -1;
  double query = 0.0, dummy = 0.0;
  double *A, *s, *VT, *work, *phi;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, A, (size_t)rows * M, 0);
  WORKSPACE_ADD(&ws, s, rows, 0);
  WORKSPACE_ADD(&ws, VT, (size_t)M * M, 0);
  if (workspace_alloc(&ws)) {
    status = -1;
    goto done;
  }
  for (int g = 0; g < M; g++) {
    for (int c = 0; c < r; c++) A[c + (size_t)g * rows] = P[g + (size_t)c * M];
    A[r + (size_t)g * rows] = 1.0;
  }
  dgesvd_("N", "A", &rows, &M, A, &rows, s, &dummy, &one, VT, &M, &query,
          &lwork, &info, 1, 1);
  lwork = (int)query;
  WORKSPACE_ADD(&ws, work, lwork, 0);
  if (workspace_alloc(&ws)) {
    status = -1;
    goto done;
  }
  dgesvd_("N", "A", &rows, &M, A, &rows, s, &dummy, &one, VT, &M, work,
          &lwork, &info, 1, 1);
  if (info != 0) goto done; /* no convergence: keep the weights as they are */

  int q = 0;
  while (q < rows && s[q] > RECOMB_RANK_TOL * s[0]) q++;
  /* Null vectors are rows q..M-1 of VT; copy them out as vectors. */
  const int nnull = M - q;
  WORKSPACE_ADD(&ws, phi, (size_t)nnull * M, 0);
  if (workspace_alloc(&ws)) {
    status = -1;
    goto done;
  }
  for (int l = 0; l < nnull; l++)
    for (int i = 0; i < M; i++) phi[i + (size_t)l * M] = VT[q + l + (size_t)i * M];

  for (int l = 0; l < nnull; l++) {
    double *f = phi + (size_t)l * M;
    /* Orient and scale so the largest entry is +1: then alpha <= the total
     * weight, which bounds the error the step can make. */
    int imax = 0;
    for (int i = 1; i < M; i++)
      if (fabs(f[i]) > fabs(f[imax])) imax = i;
    if (f[imax] == 0.0) continue;
    const double sc = 1.0 / f[imax];
    for (int i = 0; i < M; i++) f[i] *= sc;
    int k = -1;
    double alpha = 0.0;
    for (int i = 0; i < M; i++) {
      if (f[i] > 0.0 && (k < 0 || T[i] / f[i] < alpha)) {
        alpha = T[i] / f[i];
        k = i;
      }
    }
    for (int i = 0; i < M; i++) {
      T[i] -= alpha * f[i];
      if (T[i] < 0.0) T[i] = 0.0; /* rounding only */
    }
    T[k] = 0.0;
    for (int l2 = l + 1; l2 < nnull; l2++) {
      double *h = phi + (size_t)l2 * M;
      const double ratio = h[k] / f[k];
      if (ratio != 0.0)
        for (int i = 0; i < M; i++) h[i] -= ratio * f[i];
      h[k] = 0.0;
    }
  }

done:
  workspace_free(&ws);
  return status;
}

/* ------------------------------------------------------------------ */
/* Randomised: the cone algorithm on M centred points.                  */

typedef struct {
  const double *P; /* M x r, leading dimension M, centred */
  int M, r;
  int *basis;      /* r point indices; column l of Bt is point basis[l] */
  char *in_basis;  /* M flags */
  double *Bt;      /* r x r: the basis points as columns */
  double *A;       /* r x r: inverse of Bt */
  double *AX;      /* r x M: coordinates A p_i of each point in the basis */
  double *tmp;     /* r x r scratch */
  double *col;     /* r scratch */
  int *ipiv;       /* r */
} cone_state;

/* Bt from the basis indices, A = Bt^-1 by LU, and every alive point's
 * coordinates.  Returns 0 if the basis is singular or ill-conditioned. */
static int cone_set_basis(cone_state *cs, const int *alive, int nalive)
{
  const int r = cs->r, M = cs->M;
  int info = 0;
  double bnorm = 0.0, anorm = 0.0;
  for (int l = 0; l < r; l++) {
    double cn = 0.0;
    for (int c = 0; c < r; c++) {
      cs->Bt[c + (size_t)l * r] = cs->P[cs->basis[l] + (size_t)c * M];
      cn += fabs(cs->Bt[c + (size_t)l * r]);
    }
    bnorm = fmax(bnorm, cn);
  }
  memcpy(cs->tmp, cs->Bt, sizeof(double) * (size_t)r * r);
  memset(cs->A, 0, sizeof(double) * (size_t)r * r);
  for (int l = 0; l < r; l++) cs->A[l + (size_t)l * r] = 1.0;
  dgesv_(&r, &r, cs->tmp, &r, cs->ipiv, cs->A, &r, &info);
  if (info != 0) return 0;
  for (int l = 0; l < r; l++) {
    double cn = 0.0;
    for (int c = 0; c < r; c++) cn += fabs(cs->A[c + (size_t)l * r]);
    anorm = fmax(anorm, cn);
  }
  if (!(bnorm * anorm < RECOMB_COND_LIMIT)) return 0;
  for (int a = 0; a < nalive; a++) {
    const int i = alive[a];
    for (int l = 0; l < r; l++) {
      double s = 0.0;
      for (int c = 0; c < r; c++)
        s += cs->A[l + (size_t)c * r] * cs->P[i + (size_t)c * M];
      cs->AX[l + (size_t)i * r] = s;
    }
  }
  return 1;
}

/* Point j has all coordinates <= 0, so 0 = (p_j - sum_l a_l b_l) / c with
 * a = A p_j <= 0.  The weights come from a fresh LU solve rather than the
 * updated inverse, so their accuracy does not depend on the update
 * history; returns 0 if that solve disagrees in sign. */
static int cone_finish(cone_state *cs, int j, double total, double *T)
{
  const int r = cs->r, M = cs->M, one = 1;
  int info = 0;
  memcpy(cs->tmp, cs->Bt, sizeof(double) * (size_t)r * r);
  for (int c = 0; c < r; c++) cs->col[c] = cs->P[j + (size_t)c * M];
  dgesv_(&r, &one, cs->tmp, &r, cs->ipiv, cs->col, &r, &info);
  if (info != 0) return 0;
  double amax = 0.0, sum = 0.0;
  for (int l = 0; l < r; l++) amax = fmax(amax, fabs(cs->col[l]));
  for (int l = 0; l < r; l++) {
    if (cs->col[l] > RECOMB_RANK_TOL * (1.0 + amax)) return 0;
    if (cs->col[l] > 0.0) cs->col[l] = 0.0;
    sum += cs->col[l];
  }
  const double c = 1.0 - sum;
  memset(T, 0, sizeof(double) * (size_t)M);
  for (int l = 0; l < r; l++) T[cs->basis[l]] = total * (-cs->col[l] / c);
  T[j] = total / c;
  return 1;
}

/* Replace basis slot k by point j: a pivot on AX[k, j], which is the
 * Sherman-Morrison update of A and of every alive point's coordinates. */
static void cone_pivot(cone_state *cs, int k, int j, const int *alive,
                       int nalive)
{
  const int r = cs->r, M = cs->M;
  double *AX = cs->AX;
  memcpy(cs->col, AX + (size_t)j * r, sizeof(double) * (size_t)r);
  const double piv = cs->col[k];
  for (int a = 0; a < nalive; a++) {
    double *x = AX + (size_t)alive[a] * r;
    const double f = x[k] / piv;
    for (int l = 0; l < r; l++)
      if (l != k) x[l] -= cs->col[l] * f;
    x[k] = f;
  }
  for (int c = 0; c < r; c++) {
    double *x = cs->A + (size_t)c * r; /* column c of A: same row operation */
    const double f = x[k] / piv;
    for (int l = 0; l < r; l++)
      if (l != k) x[l] -= cs->col[l] * f;
    x[k] = f;
  }
  for (int c = 0; c < r; c++) cs->Bt[c + (size_t)k * r] = cs->P[j + (size_t)c * M];
  cs->in_basis[cs->basis[k]] = 0;
  cs->in_basis[j] = 1;
  cs->basis[k] = j;
}

static double inverse_error(const cone_state *cs)
{
  const int r = cs->r;
  double err = 0.0;
  for (int a = 0; a < r; a++)
    for (int b = 0; b < r; b++) {
      double s = 0.0;
      for (int c = 0; c < r; c++)
        s += cs->A[a + (size_t)c * r] * cs->Bt[c + (size_t)b * r];
      err = fmax(err, fabs(s - (a == b ? 1.0 : 0.0)));
    }
  return err;
}

/* The randomised search on M > r + 1 centred points P with weights T
 * (total > 0).  Returns 1 with T replaced by at most r + 1 positive
 * weights, 0 when it gives up, -1 when out of memory. */
static int cone_search(const double *P, int M, int r, double *T,
                       recomb_ctx *ctx)
{
  int status = 0;
  double total = 0.0;
  for (int g = 0; g < M; g++) total += T[g];
  cone_state cs = {P, M, r, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  int *alive, *perm;
  double *unit, *mhat;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, alive, M, 0);
  WORKSPACE_ADD(&ws, perm, M, 0);
  WORKSPACE_ADD(&ws, unit, (size_t)M * r, 0);
  WORKSPACE_ADD(&ws, mhat, r, 0);
  WORKSPACE_ADD(&ws, cs.basis, r, 0);
  WORKSPACE_ADD(&ws, cs.in_basis, M, WORKSPACE_ZEROED);
  WORKSPACE_ADD(&ws, cs.Bt, (size_t)r * r, 0);
  WORKSPACE_ADD(&ws, cs.A, (size_t)r * r, 0);
  WORKSPACE_ADD(&ws, cs.AX, (size_t)r * M, 0);
  WORKSPACE_ADD(&ws, cs.tmp, (size_t)r * r, 0);
  WORKSPACE_ADD(&ws, cs.col, r, 0);
  WORKSPACE_ADD(&ws, cs.ipiv, r, 0);
  if (workspace_alloc(&ws)) {
    status = -1;
    goto done;
  }
  /* Directions on the unit sphere pick the basis moves (computed once). */
  for (int g = 0; g < M; g++) {
    double nrm = 0.0;
    for (int c = 0; c < r; c++) nrm += P[g + (size_t)c * M] * P[g + (size_t)c * M];
    nrm = nrm > 0.0 ? 1.0 / sqrt(nrm) : 0.0;
    for (int c = 0; c < r; c++) unit[g + (size_t)c * M] = P[g + (size_t)c * M] * nrm;
  }
  int nalive = M;
  for (int g = 0; g < M; g++) alive[g] = g;

  /* Pruned points stay pruned across restarts: a point inside the cone of
   * any basis can be traded for basis points, so the reduced measure's
   * existence never depended on it. */
  const int max_moves = RECOMB_MAX_MOVES_FACTOR * (r + 1);
  int moves = 0;
  for (int run = 1; moves < max_moves; run++) {
    const int budget = RECOMB_MOVES_FACTOR * (r + 1) * luby(run);
    int ok = 0;
    for (int tries = 0; tries < RECOMB_MAX_REDRAWS && !ok; tries++) {
      /* r distinct alive points, by a partial Fisher-Yates shuffle. */
      memcpy(perm, alive, sizeof(int) * (size_t)nalive);
      for (int l = 0; l < r; l++) {
        const int pick = l + rng_index(ctx->seed, RNG_STREAM_RECOMBINATION,
                                       ctx->counter++, nalive - l);
        const int tmp = perm[l];
        perm[l] = perm[pick];
        perm[pick] = tmp;
      }
      for (int g = 0; g < M; g++) cs.in_basis[g] = 0;
      for (int l = 0; l < r; l++) {
        cs.basis[l] = perm[l];
        cs.in_basis[perm[l]] = 1;
      }
      ok = cone_set_basis(&cs, alive, nalive);
    }
    if (!ok) break;

    /* Every iteration counts, also one that ends the run early, so that
     * restarts cannot go on forever. */
    for (int it = 0; it < budget && moves < max_moves; it++) {
      moves++;
      /* Success: a point in minus the cone of the basis. */
      for (int a = 0; a < nalive; a++) {
        const int i = alive[a];
        if (cs.in_basis[i]) continue;
        const double *x = cs.AX + (size_t)i * r;
        int nonpos = 1;
        for (int l = 0; l < r && nonpos; l++) nonpos = x[l] <= 0.0;
        if (nonpos && cone_finish(&cs, i, total, T)) {
          status = 1;
          goto done;
        }
      }
      /* Prune the points inside the cone. */
      int keep = 0;
      for (int a = 0; a < nalive; a++) {
        const int i = alive[a];
        const double *x = cs.AX + (size_t)i * r;
        int inside = !cs.in_basis[i];
        for (int l = 0; l < r && inside; l++) inside = x[l] > 0.0;
        if (!inside) alive[keep++] = i;
      }
      nalive = keep;
      if (nalive <= r + 1) goto done; /* numerically lost: give up */

      /* Move: slot k gets the point most opposite to the other basis
       * points' mean direction, among those with a usable pivot. */
      const int k = it % r;
      for (int c = 0; c < r; c++) {
        mhat[c] = 0.0;
        for (int l = 0; l < r; l++)
          if (l != k) mhat[c] += unit[cs.basis[l] + (size_t)c * M];
      }
      int best = -1;
      double best_score = 0.0;
      for (int a = 0; a < nalive; a++) {
        const int i = alive[a];
        if (cs.in_basis[i]) continue;
        const double *x = cs.AX + (size_t)i * r;
        double amax = 0.0, score = 0.0;
        for (int l = 0; l < r; l++) amax = fmax(amax, fabs(x[l]));
        if (!(fabs(x[k]) >= RECOMB_PIVOT_TOL * amax) || amax == 0.0) continue;
        for (int c = 0; c < r; c++) score += unit[i + (size_t)c * M] * mhat[c];
        if (best < 0 || score < best_score) {
          best = i;
          best_score = score;
        }
      }
      if (best < 0) break;
      cone_pivot(&cs, k, best, alive, nalive);
      if (inverse_error(&cs) > RECOMB_INVERSE_TOL &&
          !cone_set_basis(&cs, alive, nalive))
        break;
    }
  }

done:
  workspace_free(&ws);
  return status;
}

/* ------------------------------------------------------------------ */
/* One reduction of M points (a round's group barycentres, or the last  */
/* few points themselves) to at most r + 1.                             */

/* P (M x r, leading dimension M) is overwritten; T (M weights > 0) is
 * replaced by the reduced weights.  Returns 0, or -1 when out of memory. */
static int reduce_points(double *P, int M, int r, double *T, int randomized,
                         recomb_ctx *ctx)
{
  if (M <= r + 1) return 0;
  /* Centre and scale to [-1, 1], so the cone test and the rank decisions
   * see these points' spread whatever their offset. */
  double total = 0.0, scale = 0.0;
  for (int g = 0; g < M; g++) total += T[g];
  for (int c = 0; c < r; c++) {
    double *pc = P + (size_t)c * M, s = 0.0;
    for (int g = 0; g < M; g++) s += T[g] * pc[g];
    s /= total;
    for (int g = 0; g < M; g++) {
      pc[g] -= s;
      scale = fmax(scale, fabs(pc[g]));
    }
  }
  int centre = -1;
  if (scale > 0.0) {
    for (size_t i = 0; i < (size_t)M * r; i++) P[i] /= scale;
    for (int g = 0; g < M && centre < 0; g++) {
      double a = 0.0;
      for (int c = 0; c < r; c++) a = fmax(a, fabs(P[g + (size_t)c * M]));
      if (a <= RECOMB_CENTRE_TOL) centre = g;
    }
  } else {
    centre = 0; /* all points coincide */
  }
  if (centre >= 0) {
    memset(T, 0, sizeof(double) * (size_t)M);
    T[centre] = total;
    return 0;
  }

  if (randomized) {
    ctx->stats->cone_runs++;
    const int found = cone_search(P, M, r, T, ctx);
    if (found != 0) return found < 0 ? -1 : 0;
    ctx->stats->cone_failures++;
  }
  if (M <= RECOMB_DET_GROUP_FACTOR * (r + 1)) return tl_car(P, M, r, T);

  int *idx, status = -1, kept = M;
  double *mu;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, idx, M, 0);
  WORKSPACE_ADD(&ws, mu, M, 0);
  if (workspace_alloc(&ws) == 0) {
    for (int g = 0; g < M; g++) {
      idx[g] = g;
      mu[g] = T[g];
    }
    status = reduce_measure(P, M, r, idx, mu, &kept,
                            RECOMB_DET_GROUP_FACTOR * (r + 1), 0, ctx);
    if (status == 0) {
      memset(T, 0, sizeof(double) * (size_t)M);
      for (int k = 0; k < kept; k++) T[idx[k]] = mu[k];
    }
  }
  workspace_free(&ws);
  return status;
}

/* The divide-and-conquer wrapper: the measure mu[k] on points idx[k]
 * (k < *M, increasing) of z (leading dimension ldz, r columns) is reduced
 * to at most r + 1 points in rounds of `groups` contiguous groups; idx and
 * mu are compacted in place (order kept).  Returns 0, or -1 when out of
 * memory. */
static int reduce_measure(const double *z, int ldz, int r, int *idx,
                          double *mu, int *M, int groups, int randomized,
                          recomb_ctx *ctx)
{
  int status = 0;
  double *P, *T, *T0;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, P, (size_t)groups * r, 0);
  WORKSPACE_ADD(&ws, T, groups, 0);
  WORKSPACE_ADD(&ws, T0, groups, 0);
  if (workspace_alloc(&ws)) {
    status = -1;
    goto done;
  }
  while (*M > r + 1) {
    const int m = *M, G = m < groups ? m : groups;
    for (int g = 0; g < G; g++) {
      const int a = (int)((long long)g * m / G), b = (int)((long long)(g + 1) * m / G);
      double t = 0.0;
      for (int k = a; k < b; k++) t += mu[k];
      T0[g] = T[g] = t;
      for (int c = 0; c < r; c++) {
        double s = 0.0;
        for (int k = a; k < b; k++) s += mu[k] * z[idx[k] + (size_t)c * ldz];
        P[g + (size_t)c * G] = s / t;
      }
    }
    if (reduce_points(P, G, r, T, randomized, ctx) < 0) {
      status = -1;
      goto done;
    }
    /* Members of a surviving group keep their share of its new weight,
     * which keeps the group's barycentre and so the mean. */
    int out = 0;
    for (int g = 0; g < G; g++) {
      if (!(T[g] > 0.0)) continue;
      const int a = (int)((long long)g * m / G), b = (int)((long long)(g + 1) * m / G);
      const double ratio = T[g] / T0[g];
      for (int k = a; k < b; k++) {
        const double w = b - a == 1 ? T[g] : mu[k] * ratio;
        if (w > 0.0) {
          idx[out] = idx[k];
          mu[out++] = w;
        }
      }
    }
    const int progressed = out < m;
    *M = out;
    if (G == m || !progressed) break;
  }
done:
  workspace_free(&ws);
  return status;
}

/* ------------------------------------------------------------------ */

int recombine(const double *x, int N, int n, const double *mu,
              recomb_method method, uint64_t seed, int *idx, double *w,
              recomb_stats *stats)
{
  recomb_stats local = {0, 0};
  recomb_ctx ctx = {seed, 0, stats ? stats : &local};
  int Ns = 0;
  for (int i = 0; i < N; i++) Ns += mu[i] > 0.0;
  if (Ns <= n + 1) {
    int k = 0;
    for (int i = 0; i < N; i++)
      if (mu[i] > 0.0) {
        idx[k] = i;
        w[k++] = mu[i];
      }
    return k;
  }

  int status = -1, r = 0, kept = Ns, lwork = -1, info = 0, one = 1;
  double query = 0.0, dummy = 0.0;
  int *sidx, *lidx;
  double *smu, *y, *z, *C, *U, *sv, *work;
  workspace ws;
  workspace_init(&ws);
  WORKSPACE_ADD(&ws, sidx, Ns, 0);
  WORKSPACE_ADD(&ws, lidx, Ns, 0);
  WORKSPACE_ADD(&ws, smu, Ns, 0);
  WORKSPACE_ADD(&ws, y, (size_t)Ns * n, 0);
  WORKSPACE_ADD(&ws, z, (size_t)Ns * n, 0);
  WORKSPACE_ADD(&ws, C, (size_t)n * n, 0);
  WORKSPACE_ADD(&ws, U, (size_t)n * n, 0);
  WORKSPACE_ADD(&ws, sv, n, 0);
  if (workspace_alloc(&ws)) goto done;

  double total = 0.0;
  for (int i = 0, k = 0; i < N; i++)
    if (mu[i] > 0.0) {
      sidx[k] = i;
      smu[k] = mu[i];
      total += mu[i];
      k++;
    }
  /* Centre on the barycentre and scale each coordinate by its largest
   * deviation, so that the result does not depend on the units of the
   * coordinates (a constant coordinate is all zeros and drops out). */
  double ymax = 0.0;
  for (int c = 0; c < n; c++) {
    double s = 0.0, dev = 0.0;
    double *yc = y + (size_t)c * Ns;
    for (int k = 0; k < Ns; k++) s += smu[k] * x[sidx[k] + (size_t)c * N];
    s /= total;
    for (int k = 0; k < Ns; k++) {
      yc[k] = x[sidx[k] + (size_t)c * N] - s;
      dev = fmax(dev, fabs(yc[k]));
    }
    if (dev > 0.0)
      for (int k = 0; k < Ns; k++) yc[k] /= dev;
  }
  for (int k = 0; k < Ns; k++) {
    double s = 0.0;
    for (int c = 0; c < n; c++) s += y[k + (size_t)c * Ns] * y[k + (size_t)c * Ns];
    ymax = fmax(ymax, sqrt(s));
  }
  /* The span of the centred points: eigenvectors of their weighted
   * covariance, kept when some point has a non-negligible coordinate along
   * them (judged on the coordinates themselves, not on the squared
   * eigenvalues).  Each kept coordinate is scaled to [-1, 1]. */
  for (int a = 0; a < n; a++)
    for (int b = 0; b <= a; b++) {
      double s = 0.0;
      for (int k = 0; k < Ns; k++)
        s += smu[k] * y[k + (size_t)a * Ns] * y[k + (size_t)b * Ns];
      C[a + (size_t)b * n] = C[b + (size_t)a * n] = s / total;
    }
  dgesvd_("A", "N", &n, &n, C, &n, sv, U, &n, &dummy, &one, &query, &lwork,
          &info, 1, 1);
  lwork = (int)query;
  WORKSPACE_ADD(&ws, work, lwork, 0);
  if (workspace_alloc(&ws)) goto done;
  dgesvd_("A", "N", &n, &n, C, &n, sv, U, &n, &dummy, &one, work, &lwork,
          &info, 1, 1);
  if (info != 0) { /* cannot happen for a symmetric PSD matrix; be safe */
    for (size_t i = 0; i < (size_t)n * n; i++) U[i] = 0.0;
    for (int c = 0; c < n; c++) U[c + (size_t)c * n] = 1.0;
  }
  for (int a = 0; a < n; a++) {
    double *zc = z + (size_t)r * Ns, amax = 0.0;
    for (int k = 0; k < Ns; k++) {
      double s = 0.0;
      for (int c = 0; c < n; c++) s += y[k + (size_t)c * Ns] * U[c + (size_t)a * n];
      zc[k] = s;
      amax = fmax(amax, fabs(s));
    }
    if (amax > RECOMB_RANK_TOL * ymax) {
      for (int k = 0; k < Ns; k++) zc[k] /= amax;
      r++;
    }
  }

  if (r == 0) { /* every point is the barycentre */
    idx[0] = sidx[0];
    w[0] = total;
    status = 1;
    goto done;
  }
  for (int k = 0; k < Ns; k++) lidx[k] = k;
  const int factor = method == RECOMB_RANDOMIZED ? RECOMB_GROUP_FACTOR
                                                 : RECOMB_DET_GROUP_FACTOR;
  if (reduce_measure(z, Ns, r, lidx, smu, &kept, factor * (r + 1),
                     method == RECOMB_RANDOMIZED, &ctx) < 0)
    goto done;
  for (int k = 0; k < kept; k++) {
    idx[k] = sidx[lidx[k]];
    w[k] = smu[k];
  }
  status = kept;

done:
  workspace_free(&ws);
  return status;
}
