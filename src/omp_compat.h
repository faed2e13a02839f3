/* OpenMP where the compiler has it, serial stubs where it does not (Apple
 * clang without libomp), so algorithm files need no #ifdef. */
#ifndef SDDGP_OMP_COMPAT_H
#define SDDGP_OMP_COMPAT_H
#ifdef _OPENMP
#include <omp.h>
#else
#include <time.h>
#define omp_get_thread_num() 0
#define omp_get_num_threads() 1
#define omp_get_max_threads() 1
#define omp_get_thread_limit() 1
#define omp_get_num_procs() 1
#define omp_get_wtime() ((double)clock() / CLOCKS_PER_SEC)
#endif

/* Below about this much work (flops, or entries times their cost) a thread
 * team costs more than it saves: idle threads spin-wait, which on a busy
 * machine steals the cores the work needs.  Every parallel region of the
 * core is conditional on it. */
#define PARALLEL_MIN_WORK 1e6
#endif
