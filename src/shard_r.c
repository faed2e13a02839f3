/* The messages of a sharded solve (shard.h) passed to R functions, which
 * R/mpi.R makes from Rmpi's point-to-point and broadcast calls.  They run
 * on the main thread between the solver's parallel regions, inside
 * R_tryEvalSilent: an R error becomes a failed message, never a longjmp
 * through the solver. */
#include <string.h>
#include "glue.h"
#include "shard_glue.h"

/* f(x, peer) with x a double vector of len values, optionally copied from
 * buf; its value, a double vector of len values, copied back into buf when
 * `into`.  0 on success. */
static int call_r(SEXP fn, double *buf, size_t len, int fill, int into, int peer)
{
  SEXP x = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)len));
  if (fill) memcpy(REAL(x), buf, sizeof(double) * len);
  else memset(REAL(x), 0, sizeof(double) * len);
  SEXP who = PROTECT(Rf_ScalarInteger(peer));
  SEXP call = PROTECT(Rf_lang3(fn, x, who));
  int err = 0;
  SEXP value = R_tryEvalSilent(call, R_GlobalEnv, &err);
  if (!err && into) {
    if (TYPEOF(value) != REALSXP || (size_t)XLENGTH(value) != len) err = 1;
    else memcpy(buf, REAL(value), sizeof(double) * len);
  }
  UNPROTECT(3);
  return err;
}

static int r_send(void *ctx, const double *buf, size_t len, int to)
{
  return call_r(((glue_shard *)ctx)->send, (double *)buf, len, 1, 0, to);
}

static int r_recv(void *ctx, double *buf, size_t len, int from)
{
  return call_r(((glue_shard *)ctx)->recv, buf, len, 0, 1, from);
}

static int r_bcast(void *ctx, double *buf, size_t len, int root)
{
  return call_r(((glue_shard *)ctx)->bcast, buf, len, 1, 1, root);
}

shard_comm *glue_shard_comm(SEXP spec, glue_shard *gs)
{
  if (Rf_isNull(spec)) return NULL;
  gs->send = glue_list_get(spec, "send");
  gs->recv = glue_list_get(spec, "recv");
  gs->bcast = glue_list_get(spec, "bcast");
  shard_comm *c = &gs->comm;
  memset(c, 0, sizeof *c);
  c->rank = glue_int(spec, "rank");
  c->size = glue_int(spec, "size");
  if (c->size < 1 || c->rank < 0 || c->rank >= c->size)
    Rf_error("internal error: bad rank %d of %d processes", c->rank, c->size);
  c->send = r_send;
  c->recv = r_recv;
  c->bcast = r_bcast;
  c->ctx = gs;
  return c;
}
