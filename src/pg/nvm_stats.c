/*-------------------------------------------------------------------------
 *
 * nvm_stats.c
 *	  SQL-callable statistics: nvm_pool_stats() for the pool,
 *	  nvm_backend_stats() for the concurrency-control and persist counters
 *	  of the calling backend.
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
#include "nvm_xact.h"
#include "nvmam.h"
#include "pool.h"
#include "store.h"

PG_FUNCTION_INFO_V1(nvm_pool_stats);
PG_FUNCTION_INFO_V1(nvm_backend_stats);

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

/*
 * nvm_backend_stats returns this backend's counters since it started: nvm
 * snapshots taken and their average cost, nvm write transactions committed
 * and aborted and the average cost of completing one (the status write),
 * and what the core persisted: flushes, cache lines, bytes and fences.
 */
Datum
nvm_backend_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[9];
	bool		nulls[9] = {0};
	NvmBackendStats st;
	uint64		completed;

	nvm_check_pool_mapped();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	nvm_xact_get_stats(&st);
	completed = st.commits + st.aborts;

	values[0] = Int64GetDatum((int64) st.snapshots);
	values[1] = Float8GetDatum(st.snapshots ? (double) st.snapshot_ns / st.snapshots : 0.0);
	values[2] = Int64GetDatum((int64) st.commits);
	values[3] = Int64GetDatum((int64) st.aborts);
	values[4] = Float8GetDatum(completed ? (double) st.complete_ns / completed : 0.0);
	values[5] = Int64GetDatum((int64) st.flushes);
	values[6] = Int64GetDatum((int64) st.lines);
	values[7] = Int64GetDatum((int64) st.bytes);
	values[8] = Int64GetDatum((int64) st.drains);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
