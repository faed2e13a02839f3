/* The random-feature ridge problem in the primal, and three solvers for it.
 *
 * With m fixed features Phi (N x m, rows phi_i), per-observation weights
 * w_i > 0 and a ridge penalty lambda, each right-hand side b defines
 *   L(theta) = (1/N) sum_i w_i (phi_i' theta - b_i)^2 + (lambda/N) |theta|^2,
 * minimised by theta* = (Phi' W Phi + lambda I)^-1 Phi' W b.  For random
 * Fourier features with Phi Phi' ~ K and w_i = lambda / noise_i this is the
 * posterior mean of the weights of the random-feature GP.  Its gradient is
 *   grad L = (2/N) Phi' W r + (2 lambda/N) theta,   r = Phi theta - b,
 * and its Hessian H = (2/N) Phi' W Phi + (2 lambda/N) I is constant.
 *
 * Solvers (Cosentino, Oberhauser and Abate 2020 for CaBCD):
 *   CABCD_CABCD  Caratheodory block coordinate descent, momentum version.
 *       Each outer iteration makes a heavy-ball step on all coordinates,
 *       takes the gradient there, chooses coordinate blocks of size s, and
 *       for each block in turn recombines the N per-sample block gradients
 *       w_i phi_ib r_i / N into s + 1 weighted samples with the same mean
 *       (recombination.h), then runs momentum steps on that reduced measure
 *       while the exact change of the loss,
 *         Delta = g_b' delta + delta' H_b delta / 2   (H_b the exact block
 *       Hessian, cheap for ridge), keeps decreasing, at most max_inner
 *       steps; the step that made Delta rise is undone.  Two departures
 *       from the reference code: blocks are processed one after another on
 *       exact residuals, so each Delta is the true change of the loss (it
 *       runs them from the same point and adds the moves up, which ignores
 *       the coupling between blocks); and each block's inner steps start at
 *       rest while the heavy-ball step keeps its own velocity (with one
 *       shared velocity, the next heavy-ball step repeats every block's
 *       last inner step at once, which raised the loss in our tests).
 *   CABCD_BCD    plain block coordinate descent: the same blocks, one exact
 *       block gradient step each.
 *   CABCD_ADAM   Adam on mini-batches of batch_size samples drawn with
 *       replacement; one outer iteration is ceil(N / batch_size) steps.
 *
 * Step sizes.  Let c be the largest diagonal entry of H.  A block of k
 * coordinates moves by step_size / (k c) times its gradient (k = m for the
 * heavy-ball step on all coordinates): k c bounds the largest eigenvalue
 * of any k x k principal block of H, so every value of step_size below 2
 * is stable for plain steps.  For Adam, step_size is the learning rate.
 *
 * Blocks.  Gauss-Southwell: coordinates by decreasing |gradient| until they
 * hold 75% of its 1-norm; random: a random half of the coordinates.  Either
 * way at least one block, cut in order into blocks of s.
 *
 * Cost accounting ("passes"): a gradient over all N samples for all m
 * coordinates counts 1, one for a block of k coordinates k / m, a step on a
 * reduced measure of q samples q k / (N m), an Adam step B / N.  The full
 * gradient at the end of each outer iteration counts only when the
 * algorithm uses it (CaBCD's heavy-ball step, Gauss-Southwell blocks), not
 * when it only serves the stopping test.
 *
 * Every outer iteration reports, per right-hand side, the relative norm of
 * the gradient |grad L(theta)| / |grad L(0)| (equivalently the relative
 * residual of the normal equations); a system stops once that is below the
 * tolerance.  All right-hand sides advance in lockstep.  Random draws use
 * RNG_STREAM_BLOCKS (blocks, mini-batches) and RNG_STREAM_RECOMBINATION;
 * sums run in a fixed order, so results do not depend on the thread
 * count.  No R headers. */
#ifndef SDDGP_CABCD_H
#define SDDGP_CABCD_H

#include <stdint.h>
#include "block.h"
#include "rff.h"
#include "solver.h"

typedef enum {
  CABCD_CABCD = 1,
  CABCD_BCD = 2,
  CABCD_ADAM = 3
} cabcd_algorithm;

typedef enum {
  CABCD_GAUSS_SOUTHWELL = 1,
  CABCD_RANDOM = 2
} cabcd_selection;

typedef struct {
  const double *phi;    /* N x m features, column-major */
  int n, m;
  const double *weight; /* N weights w_i > 0 */
  double lambda;        /* ridge penalty, > 0 */
} cabcd_problem;

typedef struct {
  cabcd_algorithm algorithm;
  cabcd_selection selection;
  int block_size;    /* s >= 1 (capped at m) */
  double step_size;  /* see above */
  double momentum;   /* heavy-ball beta of CaBCD; Adam's beta_1 */
  int max_inner;     /* steps on one reduced measure, >= 1 */
  int iterations;    /* outer iterations */
  int batch_size;    /* Adam's mini-batch (capped at N) */
  double tolerance;  /* on the relative gradient norm; 0 = never stop */
  uint64_t seed;
  int nthreads;
} cabcd_options;

/* Optional records of each outer iteration t < *iterations_done: the loss
 * of every system, loss[t + c * iterations], and the passes of the first
 * system so far, passes[t].  Either may be NULL. */
typedef struct {
  double *loss;
  double *passes;
} cabcd_history;

/* theta (m x nrhs, column-major) receives the solutions. */
solver_status cabcd_solve(const cabcd_problem *pr, const double *rhs, int nrhs,
                          const cabcd_options *opt, double *theta,
                          int *iterations_done, cabcd_history *hist,
                          solver_callback callback, void *ctx);

/* Phi(p) (p->n x f->m, column-major) built in slabs of rows, calling the
 * callback between slabs; returns non-zero if it asked to stop. */
int cabcd_features(const rff *f, const points *p, double *phi, int nthreads,
                   solver_callback callback, void *ctx);

#endif
