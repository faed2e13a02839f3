#include <string.h>
#include "blas_threads.h"
#ifndef _WIN32
#include <dlfcn.h>
#endif

static int looked_up = 0;
static int (*get_threads)(void) = NULL;
static void (*set_threads)(int) = NULL;

/* OpenBLAS's thread controls among the symbols of the process (R and the
 * BLAS it was started with), if they are there.  memcpy rather than a cast:
 * ISO C has no conversion between object and function pointers. */
static void look_up(void)
{
  if (looked_up) return;
  looked_up = 1;
#ifndef _WIN32
  void *self = dlopen(NULL, RTLD_LAZY);
  if (!self) return;
  void *get = dlsym(self, "openblas_get_num_threads");
  void *set = dlsym(self, "openblas_set_num_threads");
  if (get && set) {
    memcpy(&get_threads, &get, sizeof get);
    memcpy(&set_threads, &set, sizeof set);
  }
  dlclose(self);
#endif
}

int blas_is_openblas(void)
{
  look_up();
  return set_threads != NULL;
}

int blas_threads_serial(void)
{
  if (!blas_is_openblas()) return 0;
  const int saved = get_threads();
  if (saved > 1) set_threads(1);
  return saved;
}

void blas_threads_restore(int saved)
{
  if (saved > 1 && blas_is_openblas()) set_threads(saved);
}
