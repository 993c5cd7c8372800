/*
 * vacuum_pass.c
 *	  What VACUUM does to a table without indexes (see vacuum_pass.h).
 */
#include "vacuum_pass.h"

#include "gc.h"

/*
 * vacuum_pass prunes every chain of t and retires its dead records with one
 * horizon, then, with a new one, finishes the retired records and gives
 * back the numbers of dead index roots.  A horizon that cannot be computed
 * (a pin being taken) ends the pass early.
 */
void
vacuum_pass(NvmTable *t)
{
	static NvmHorizon h;
	NvmGcCounts cnt = {0};
	uint64_t	nrec = nvm_table_record_limit(t);

	if (!nvm_gc_horizon(&h))
		return;
	for (uint64_t r = 1; r < nrec; r++)
	{
		nvm_gc_prune_chain(t, r, &h, &cnt);
		if (nvm_gc_record_is_dead(t, r, &h))
			nvm_gc_retire_record(t, r, &h, &cnt);
	}
	if (!nvm_gc_horizon(&h))
		return;
	for (uint64_t r = 1; r < nrec; r++)
		nvm_gc_finish_retired(t, r, &h, &cnt);
	for (uint64_t n = 1; n < nvm_table_version_limit(t); n++)
		if (nvm_gc_number_is_dead_root(t, n, NULL, 0))
			nvm_gc_free_number(t, n, &cnt);
}
