/*-------------------------------------------------------------------------
 *
 * nvm_checkpoint_stats.c
 *	  SQL functions that report on the durability of the pool on ordinary
 *	  storage: what the checkpoints of the pool wrote since the server
 *	  started (nvm_checkpoint_stats), and where the last rebuild of a pool
 *	  from its checkpoint files is, or was (nvm_rebuild_stats, the
 *	  nvm_rebuild view).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"

#include "checkpoint/nvm_checkpoint.h"
#include "redo/nvm_rebuild.h"

PG_FUNCTION_INFO_V1(nvm_checkpoint_stats);
PG_FUNCTION_INFO_V1(nvm_rebuild_stats);

/*
 * nvm_checkpoint_stats returns one row: the captures of the pool into its
 * checkpoint files since the server started, the bytes and rows they
 * wrote, the tables they wrote files for (of which whole), the time they
 * took, the last one's position, bytes and time, and the tables merged
 * and the bytes merges wrote.
 */
Datum
nvm_checkpoint_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[11];
	bool		nulls[11] = {0};
	NvmCheckpointTotals *t = nvm_checkpoint_totals();
	uint64		last_lsn;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum((int64) pg_atomic_read_u64(&t->captures));
	values[1] = Int64GetDatum((int64) pg_atomic_read_u64(&t->bytes));
	values[2] = Int64GetDatum((int64) pg_atomic_read_u64(&t->rows));
	values[3] = Int64GetDatum((int64) pg_atomic_read_u64(&t->tables_written));
	values[4] = Int64GetDatum((int64) pg_atomic_read_u64(&t->bases));
	values[5] = Float8GetDatum((double) pg_atomic_read_u64(&t->usecs) / 1e6);
	last_lsn = pg_atomic_read_u64(&t->last_lsn);
	values[6] = LSNGetDatum((XLogRecPtr) last_lsn);
	nulls[6] = last_lsn == 0;
	values[7] = Int64GetDatum((int64) pg_atomic_read_u64(&t->last_bytes));
	values[8] = Float8GetDatum((double) pg_atomic_read_u64(&t->last_usecs) / 1e6);
	values[9] = Int64GetDatum((int64) pg_atomic_read_u64(&t->merges));
	values[10] = Int64GetDatum((int64) pg_atomic_read_u64(&t->merged_bytes));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* timestamp_or_null puts a TimestampTz kept as uint64 (0 = none) in *value. */
static void
timestamp_or_null(uint64 ts, Datum *value, bool *isnull)
{
	*isnull = ts == 0;
	*value = TimestampTzGetDatum((TimestampTz) ts);
}

/*
 * nvm_rebuild_stats returns one row: the state of the rebuild of a pool
 * from its checkpoint files since the server started (none, loading,
 * replaying, done), its workers, the tables, parts, rows and bytes of the
 * files loaded, the position they are as of, how far replay has come and
 * where the WAL found ends (the WAL left to replay), and when the rebuild
 * started, finished loading and finished replaying.
 */
Datum
nvm_rebuild_stats(PG_FUNCTION_ARGS)
{
	static const char *const states[] = {"none", "loading", "replaying", "done"};
	TupleDesc	tupdesc;
	Datum		values[13];
	bool		nulls[13] = {0};
	NvmRebuildProgress *p = nvm_rebuild_progress();
	uint32		state = pg_atomic_read_u32(&p->state);
	XLogRecPtr	replayed = RecoveryInProgress() ? GetXLogReplayRecPtr(NULL) : InvalidXLogRecPtr;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = CStringGetTextDatum(states[state <= NVM_REBUILD_DONE ? state : 0]);
	values[1] = Int32GetDatum((int32) pg_atomic_read_u32(&p->workers));
	values[2] = Int64GetDatum((int64) pg_atomic_read_u64(&p->tables));
	values[3] = Int64GetDatum((int64) pg_atomic_read_u64(&p->parts));
	values[4] = Int64GetDatum((int64) pg_atomic_read_u64(&p->parts_done));
	values[5] = Int64GetDatum((int64) pg_atomic_read_u64(&p->rows));
	values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&p->bytes));
	values[7] = LSNGetDatum((XLogRecPtr) pg_atomic_read_u64(&p->files_lsn));
	nulls[7] = state == NVM_REBUILD_NONE;
	values[8] = LSNGetDatum(replayed);
	nulls[8] = replayed == InvalidXLogRecPtr;
	values[9] = Int64GetDatum((int64) (state == NVM_REBUILD_REPLAYING && replayed != InvalidXLogRecPtr &&
									   pg_atomic_read_u64(&p->replay_end) > replayed ?
									   pg_atomic_read_u64(&p->replay_end) - replayed : 0));
	timestamp_or_null(pg_atomic_read_u64(&p->started), &values[10], &nulls[10]);
	timestamp_or_null(pg_atomic_read_u64(&p->loaded), &values[11], &nulls[11]);
	timestamp_or_null(pg_atomic_read_u64(&p->finished), &values[12], &nulls[12]);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
