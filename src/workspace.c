#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "workspace.h"

/* The slot is a pointer variable of any object type: memcpy stores into it
 * without the aliasing assumption that writing through a void ** makes. */
static void set_slot(void *slot, void *value)
{
  memcpy(slot, &value, sizeof value);
}

void workspace_init(workspace *ws)
{
  ws->count = ws->allocated = ws->overflow = 0;
}

void workspace_add(workspace *ws, int need, void *slot, size_t count,
                   size_t size, int zeroed)
{
  set_slot(slot, NULL);
  if (!need) return;
  if (ws->count == WORKSPACE_MAX_BUFFERS) {
    ws->overflow = 1;
    return;
  }
  workspace_buffer *b = ws->buffer + ws->count++;
  b->slot = slot;
  b->count = count;
  b->size = size;
  b->zeroed = zeroed;
  b->memory = NULL;
}

int workspace_alloc(workspace *ws)
{
  for (; !ws->overflow && ws->allocated < ws->count; ws->allocated++) {
    workspace_buffer *b = ws->buffer + ws->allocated;
    /* Checked here, as calloc would: a wrapped product would allocate a
     * buffer too small for its elements. */
    if (b->size > 0 && b->count > SIZE_MAX / b->size) break;
    /* At least a byte, so that a buffer of no elements is still a valid
     * pointer and NULL always means failure. */
    size_t bytes = b->count * b->size;
    if (bytes == 0) bytes = 1;
    b->memory = b->zeroed ? calloc(bytes, 1) : malloc(bytes);
    if (!b->memory) break;
    set_slot(b->slot, b->memory);
  }
  if (!ws->overflow && ws->allocated == ws->count) return 0;
  workspace_free(ws);
  return -1;
}

void workspace_free(workspace *ws)
{
  for (int i = 0; i < ws->count; i++) {
    free(ws->buffer[i].memory);
    set_slot(ws->buffer[i].slot, NULL);
  }
  ws->count = ws->allocated = ws->overflow = 0;
}
