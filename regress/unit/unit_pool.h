/*
 * unit_pool.h
 *	  The pool and the core for the unit-test programs: creating a pool
 *	  file, and starting the core on the open pool (again after a simulated
 *	  crash) in process memory standing in for shared memory.
 */
#ifndef UNIT_POOL_H
#define UNIT_POOL_H

#include "pool.h"

extern void *unit_start_core(void);
extern void unit_stop_core(void);
extern void *unit_pool_create(const NvmPoolOptions *o);

#endif							/* UNIT_POOL_H */
