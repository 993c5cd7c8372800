/*
 * unit_pool.c
 *	  The pool and the core for the unit-test programs (see unit_pool.h).
 */
#include "unit_pool.h"

#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The core's "shared" memory: process memory, threads share it. */
static void *unit_core_shmem = NULL;

/*
 * unit_start_core starts the core on the open pool in new memory, as a
 * server start does (after a simulated crash: as a restart does), freeing
 * the memory of the previous start; returns the new memory.
 */
void *
unit_start_core(void)
{
	free(unit_core_shmem);
	unit_core_shmem = calloc(1, nvm_core_shmem_size());
	nvm_core_startup(unit_core_shmem);
	return unit_core_shmem;
}

/*
 * unit_stop_core frees the core's memory (once the pool is closed).
 */
void
unit_stop_core(void)
{
	free(unit_core_shmem);
	unit_core_shmem = NULL;
}

/*
 * unit_pool_create creates a new pool with options o, removing any file at
 * o->path first, and starts the core on it; a pool that cannot be created
 * ends the program.  Returns the core's memory.
 */
void *
unit_pool_create(const NvmPoolOptions *o)
{
	char		err[256];

	unlink(o->path);
	if (nvm_pool_open(o, err, sizeof(err)) != NVM_POOL_CREATED)
	{
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return unit_start_core();
}
