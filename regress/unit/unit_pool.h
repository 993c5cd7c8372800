/*
 * unit_pool.h
 *	  The pool and the core for the unit-test programs: creating a pool
 *	  file, starting the core on the open pool (again after a simulated
 *	  crash) in process memory standing in for shared memory, and the
 *	  integrity check of the whole pool that crash checkers run.
 */
#ifndef UNIT_POOL_H
#define UNIT_POOL_H

#include "pool.h"

extern void *unit_start_core(void);
extern void unit_stop_core(void);
extern void *unit_pool_create(const NvmPoolOptions *o);

/*
 * unit_check_pool runs the integrity checker (verify.h) over the whole
 * pool: NULL if it finds nothing, else its first problem (a string kept
 * for good).  With exact, a pass that was not exact (blocks changed while
 * it ran) fails too.
 */
extern const char *unit_check_pool(bool exact);

#endif							/* UNIT_POOL_H */
