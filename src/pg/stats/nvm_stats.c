/*-------------------------------------------------------------------------
 *
 * nvm_stats.c
 *	  SQL-callable statistics: nvm_pool_stats() for the pool,
 *	  nvm_table_stats() for one table's rows, versions and what garbage
 *	  collection can reclaim, nvm_backend_stats() for the
 *	  concurrency-control and persist counters of the calling backend.
 *	  The views nvm_pool and nvm_tables (nvmam--1.0.sql) are built on them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "alloc.h"
#include "gc.h"
#include "pool.h"
#include "store.h"

#include "am/nvm_am.h"
#include "claim/nvm_binding.h"
#include "nvm_routine.h"
#include "nvm_settings.h"
#include "space/nvm_relation.h"
#include "xact/nvm_xact.h"

PG_FUNCTION_INFO_V1(nvm_pool_stats);
PG_FUNCTION_INFO_V1(nvm_backend_stats);
PG_FUNCTION_INFO_V1(nvm_table_stats);

/*
 * horizon_now computes the garbage-collection horizon for the statistics
 * (what collection could reclaim now); it errors out only if a backend
 * stays in the middle of taking a snapshot for seconds.
 */
static NvmHorizon *
horizon_now(void)
{
	NvmHorizon *h = palloc(sizeof(NvmHorizon));

	if (!nvm_compute_horizon(h, 1000))
		elog(ERROR, "could not compute the nvm collection horizon");
	return h;
}

/*
 * nvm_pool_stats returns the pool's path and present size, its allocated
 * and free bytes (free: chunk area not allocated to blocks, which includes
 * free space inside partly used chunks), the number of tables in its
 * directory (dropped tables whose storage has not been reclaimed
 * included), the concurrency control in force, and over every table of
 * every database: records, reachable versions, the bytes garbage
 * collection can reclaim now, and the versions collected since the server
 * started; then the pool's state for this data directory (nvm_binding.c):
 * "attached", "standby" (a standby replaying into its own pool, until it
 * is promoted), or "detached" with the cause, when every number is NULL;
 * then the largest size the pool may grow to and the number of times it
 * has grown (its growth segments); then the storage class that holds the
 * pool (pool.h) and how it was found (the file system, or MAP_SYNC).
 */
Datum
nvm_pool_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[16];
	bool		nulls[16] = {0};
	NvmAllocStats stats;
	NvmTableDirEntry *dir;
	size_t		ndir;
	int			ntables = 0;
	NvmHorizon *h;
	uint64		records = 0,
				versions = 0,
				reclaimable = 0;

	nvm_check_pool_mapped();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	/* a detached data directory shows its pool's path and why, no numbers */
	if (!nvm_binding_usable())
	{
		values[0] = CStringGetTextDatum(nvm_pool_path_resolved);
		for (int i = 1; i < 10; i++)
			nulls[i] = true;
		nulls[5] = false;
		values[5] = CStringGetTextDatum(nvm_concurrency_control_name());
		values[10] = CStringGetTextDatum(nvm_binding_is_detached() ? "detached" : "pending");
		values[11] = CStringGetTextDatum(nvm_binding_state_detail());
		nulls[12] = nulls[13] = true;
		values[14] = CStringGetTextDatum(nvm_storage_class_name(nvm_pool_storage));
		values[15] = CStringGetTextDatum(nvm_pool_storage_how);
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
	}

	nvm_alloc_get_stats(&stats);
	h = horizon_now();
	dir = nvm_table_dir();
	ndir = nvm_table_dir_count();
	for (size_t i = 0; i < ndir; i++)
	{
		nvm_off		d = atomic_load(&dir[i].desc);
		NvmTable	t;
		NvmTableStats ts;

		if (d == 0)
			continue;
		ntables++;
		t.desc = nvm_ptr(d);
		if (t.desc->magic != NVM_TABLE_MAGIC)
			continue;
		nvm_gc_table_stats(&t, h, &ts);
		records += ts.records;
		versions += ts.versions;
		reclaimable += ts.reclaimable_bytes;
		CHECK_FOR_INTERRUPTS();
	}

	values[0] = CStringGetTextDatum(nvm_pool_path_resolved);
	values[1] = Int64GetDatum((int64) stats.pool_size);
	values[2] = Int64GetDatum((int64) stats.bytes_allocated);
	values[3] = Int64GetDatum((int64) (stats.pool_bytes > stats.bytes_allocated ?
									   stats.pool_bytes - stats.bytes_allocated : 0));
	values[4] = Int32GetDatum(ntables);
	values[5] = CStringGetTextDatum(nvm_concurrency_control_name());
	values[6] = Int64GetDatum((int64) records);
	values[7] = Int64GetDatum((int64) versions);
	values[8] = Int64GetDatum((int64) reclaimable);
	values[9] = Int64GetDatum((int64) nvm_gc_versions_collected());
	values[10] = CStringGetTextDatum(nvm_binding_is_replica() ? "standby" : "attached");
	nulls[11] = true;
	values[12] = Int64GetDatum((int64) Max(nvm_pool_reserved_size, stats.pool_size));
	values[13] = Int32GetDatum((int32) stats.segments);
	values[14] = CStringGetTextDatum(nvm_storage_class_name(nvm_pool_storage));
	values[15] = CStringGetTextDatum(nvm_pool_storage_how);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * nvm_table_stats returns, for one nvm table: its live rows, record
 * numbers in use, reachable versions and their bytes, the average and
 * longest chain, what garbage collection can reclaim now (versions and
 * bytes), dead rows VACUUM would remove, rows removed and waiting for
 * older snapshots, index roots kept as redirects, and version numbers
 * handed out and free.
 */
Datum
nvm_table_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	TupleDesc	tupdesc;
	Datum		values[13];
	bool		nulls[13] = {0};
	Relation	rel;
	NvmTable	table;
	NvmTableStats ts;

	nvm_check_pool_mapped();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	rel = relation_open(relid, AccessShareLock);
	if (!nvm_routine_is_nvm(rel->rd_tableam))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an nvm table", RelationGetRelationName(rel)),
				 errhint("nvm_table_stats() reports on tables created USING nvm.")));
	table = nvm_relation_table(rel);
	nvm_gc_table_stats(&table, horizon_now(), &ts);
	relation_close(rel, AccessShareLock);

	values[0] = Int64GetDatum((int64) ts.live_rows);
	values[1] = Int64GetDatum((int64) ts.records);
	values[2] = Int64GetDatum((int64) ts.versions);
	values[3] = Int64GetDatum((int64) ts.version_bytes);
	values[4] = Float8GetDatum(ts.records > ts.retired_records ?
							   (double) ts.versions / (double) (ts.records - ts.retired_records) : 0.0);
	values[5] = Int64GetDatum((int64) ts.longest_chain);
	values[6] = Int64GetDatum((int64) ts.reclaimable_versions);
	values[7] = Int64GetDatum((int64) ts.reclaimable_bytes);
	values[8] = Int64GetDatum((int64) ts.dead_records);
	values[9] = Int64GetDatum((int64) ts.retired_records);
	values[10] = Int64GetDatum((int64) ts.redirects);
	values[11] = Int64GetDatum((int64) ts.version_numbers);
	values[12] = Int64GetDatum((int64) ts.free_numbers);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * nvm_backend_stats returns this backend's counters since it started: nvm
 * snapshots taken and their average cost, nvm write transactions committed
 * and aborted and the average cost of completing one (the status write),
 * what the core persisted (flushes, cache lines, bytes and fences), and
 * how commits went (nvm_commit.c): on the pool alone or tied to
 * PostgreSQL's commit record, the index roots logged in the pool, the WAL
 * flushes log-free commits needed, and the identity sequence positions
 * kept in the pool instead of a flush (nvm_seqlog.c).
 */
Datum
nvm_backend_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[16];
	bool		nulls[16] = {0};
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
	values[9] = Int64GetDatum((int64) st.log_free_commits);
	values[10] = Int64GetDatum((int64) st.tied_commits);
	values[11] = Int64GetDatum((int64) st.index_log_entries);
	values[12] = Int64GetDatum((int64) st.commit_wal_flushes);
	values[13] = Int64GetDatum((int64) st.sequence_positions);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
