/*-------------------------------------------------------------------------
 *
 * nvm_stats.c
 *	  SQL-callable statistics of the nvm pool: nvm_pool_stats().
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "alloc.h"
#include "nvm_relation.h"
#include "nvmam.h"
#include "pool.h"
#include "store.h"

PG_FUNCTION_INFO_V1(nvm_pool_stats);

/*
 * nvm_pool_stats returns the pool's path and size, its allocated and free
 * bytes (free: chunk area not allocated to blocks, which includes free
 * space inside partly used chunks), the number of tables in its directory
 * (dropped tables whose storage has not been reclaimed included), and the
 * concurrency control in force.
 */
Datum
nvm_pool_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6] = {0};
	NvmAllocStats stats;
	NvmTableDirEntry *dir;
	size_t		ndir;
	int			ntables = 0;

	nvm_check_pool_mapped();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	nvm_alloc_get_stats(&stats);
	dir = nvm_table_dir();
	ndir = nvm_table_dir_count();
	for (size_t i = 0; i < ndir; i++)
	{
		if (atomic_load(&dir[i].desc) != 0)
			ntables++;
	}

	values[0] = CStringGetTextDatum(nvm_pool_path_resolved);
	values[1] = Int64GetDatum((int64) nvm_pool_header->pool_size);
	values[2] = Int64GetDatum((int64) stats.bytes_allocated);
	values[3] = Int64GetDatum((int64) (stats.pool_bytes > stats.bytes_allocated ?
									   stats.pool_bytes - stats.bytes_allocated : 0));
	values[4] = Int32GetDatum(ntables);
	values[5] = CStringGetTextDatum(nvm_concurrency_control_name());

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
