/*
 * unit_pool.c
 *	  The pool and the core for the unit-test programs (see unit_pool.h).
 */
#include "unit_pool.h"

#include "ccmode.h"
#include "core.h"
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The first problem the checker reports (unit_check_pool). */
static char check_error[600];

static void
report_first(const NvmVerifyProblem *p, void *arg)
{
	(void) arg;
	if (check_error[0] == '\0')
		snprintf(check_error, sizeof(check_error), "the checker finds damage: %s: %s",
				 nvm_verify_kind_name(p->kind), p->message);
}

const char *
unit_check_pool(bool exact)
{
	NvmVerifyOptions o = {0};
	NvmVerifyResult r;

	o.report = report_first;
	check_error[0] = '\0';
	nvm_verify_check_pool(&o, &r);
	if (r.out_of_memory)
		return "the checker ran out of memory";
	if (r.problems > 0)
		return strdup(check_error);	/* kept by the crash simulator: a bad image is rare */
	if (exact && !r.exact)
		return "the pool changed while the checker ran, with nobody writing";
	return NULL;
}

int
unit_crash_budget(uint32_t mode, int budget)
{
	if (mode == NVM_CC_MCSI || mode == NVM_CC_N2DB)
		return budget;
	return budget / 4 > 10 ? budget / 4 : 10;
}
