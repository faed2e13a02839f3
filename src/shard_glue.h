/* The R side of a sharded solve's messages (shard_r.c). */
#ifndef SDDGP_SHARD_GLUE_H
#define SDDGP_SHARD_GLUE_H

#include <Rinternals.h>
#include "shard.h"

typedef struct {
  shard_comm comm;
  SEXP send, recv, bcast; /* function(x, peer), protected by the settings */
} glue_shard;

/* NULL for `spec` NULL (one process), else the messages of spec =
 * list(rank, size, send, recv, bcast) (R/mpi.R), in gs. */
shard_comm *glue_shard_comm(SEXP spec, glue_shard *gs);

#endif
