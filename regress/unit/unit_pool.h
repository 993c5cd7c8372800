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

/*
 * unit_crash_budget gives the crash-simulator budget of a mode: all of it
 * for MCSI and N2DB, whose persistent write paths are their own; a quarter
 * (at least 10) for a mode that persists through MCSI's status store
 * (Pisces, POMVCC), whose crash points are MCSI's and whose own part is
 * the rebuild of its shared state at recovery, which a smaller run covers.
 */
extern int	unit_crash_budget(uint32_t mode, int budget);

#endif							/* UNIT_POOL_H */
