/*-------------------------------------------------------------------------
 *
 * nvm_resync.c
 *	  After a crash of the primary: the committed rows of every table whose
 *	  COMMIT records the crash may have lost are logged again, before any
 *	  other access to nvm rows, so that no standby diverges.
 *
 * A commit on persistent memory is durable in the pool before its COMMIT
 * record reaches the disk (nvm_redo.c): a crash can keep the commit and
 * lose the record.  Later WAL would then build on rows no standby has.
 * The primary does not know which records were lost, but it knows which
 * tables may have lost some: start-up marks them in the pool (core
 * replica.h: a table whose last COMMIT record ends beyond the last
 * checkpoint, and the tables of each clock slot's last committed
 * transaction), and the binding's "resync" state makes the first access to
 * nvm rows in a backend run nvm_resync_run, while every other access waits
 * for it.  For each marked table it writes RESYNC records: BEGIN, the
 * newest committed version of every record (ROWS, a few MB a record), END;
 * a standby replays them into a table that holds exactly those rows
 * (nvm_replay.c).  Then the table's mark is replaced by the position of
 * that redo (persisted), so a crash during the resync resyncs again.
 *
 * Transactions in doubt (prepared, or tied commits waiting for PostgreSQL's
 * commit log) are not committed yet: their versions are left out, and
 * their COMMIT records follow when they are resolved.
 *
 * The cost is the WAL of the marked tables' rows, once per crash.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "ckptmark.h"
#include "pool.h"
#include "replica.h"
#include "store.h"

#include "redo/nvm_redo.h"
#include "redo/nvm_redofmt.h"
#include "redo/nvm_resync.h"

/* Row images of one ROWS record, at most. */
#define RESYNC_ROWS_BYTES	(4 * 1024 * 1024)

/*
 * log_phase_partial writes one RESYNC record of table t; partial, the rows
 * are only those a crash may have lost (the standby keeps the others).
 */
static XLogRecPtr
log_phase_partial(NvmTable *t, uint8 phase, uint32 nrows, const char *rows, size_t len,
				  bool partial)
{
	xl_nvm_resync rec;

	memset(&rec, 0, sizeof(rec));
	rec.key = t->desc->key;
	nvm_table_counters(t, &rec.next_record, &rec.next_version);
	rec.nrows = nrows;
	rec.phase = phase;
	rec.partial = partial ? 1 : 0;
	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	if (len > 0)
		XLogRegisterData((char *) rows, len);
	return XLogInsert(RM_NVM_ID, XLOG_NVM_RESYNC);
}

/* log_phase writes one RESYNC record of table t, of a resync of all its rows. */
static XLogRecPtr
log_phase(NvmTable *t, uint8 phase, uint32 nrows, const char *rows, size_t len)
{
	return log_phase_partial(t, phase, nrows, rows, len, false);
}

/*
 * nvm_resync_each_row calls visit with the newest committed version of
 * every record of t that has a live one (tombstones and records with no
 * committed version are left out), in record order, and returns how many
 * it visited.  Versions of transactions in doubt are not committed yet.
 */
uint64
nvm_resync_each_row(NvmTable *t, void (*visit) (uint64 record_no, const NvmVersion *v, void *arg),
					void *arg)
{
	uint64		limit = nvm_table_record_limit(t);
	uint64		n = 0;

	for (uint64 r = 1; r < limit; r++)
	{
		NvmVersion *v = nvm_replica_newest_committed(t, r);

		if (v == NULL || nvm_version_is_tombstone(v))
			continue;
		visit(r, v, arg);
		n++;
		if (r % 4096 == 0)
			CHECK_FOR_INTERRUPTS();
	}
	return n;
}

/*
 * nvm_resync_append_row appends the row of record record_no, version v, to
 * buf in the format of ROWS records: an xl_nvm_version and its data.
 */
void
nvm_resync_append_row(StringInfo buf, uint64 record_no, const NvmVersion *v)
{
	xl_nvm_version xv;

	memset(&xv, 0, sizeof(xv));
	xv.record_no = record_no;
	xv.version_no = v->version_no;
	xv.index_root = v->index_root;
	xv.data_len = v->data_len;
	appendBinaryStringInfo(buf, (char *) &xv, sizeof(xv));
	appendBinaryStringInfo(buf, v->data, v->data_len);
}

/*
 * append_version appends version v of record record_no to buf as a ROWS
 * record holds it, with its kind (a tombstone has no data).
 */
static void
append_version(StringInfo buf, uint64 record_no, const NvmVersion *v)
{
	xl_nvm_version xv;
	bool		tomb = nvm_version_is_tombstone(v);

	memset(&xv, 0, sizeof(xv));
	xv.record_no = record_no;
	xv.version_no = v->version_no;
	xv.index_root = v->index_root;
	xv.data_len = tomb ? 0 : v->data_len;
	xv.kind = (uint8) (atomic_load(&((NvmVersion *) v)->info) &
					   (NVM_VINFO_TOMBSTONE | NVM_VINFO_MOVED));
	appendBinaryStringInfo(buf, (char *) &xv, sizeof(xv));
	if (xv.data_len > 0)
		appendBinaryStringInfo(buf, v->data, xv.data_len);
}

/* The rows of a resync being logged: the ROWS record being filled. */
typedef struct ResyncRows
{
	NvmTable   *t;
	StringInfoData rows;
	uint32		nrows;
} ResyncRows;

/* log_row adds a row to the ROWS record, writing the record when full. */
static void
log_row(uint64 record_no, const NvmVersion *v, void *arg)
{
	ResyncRows *rr = (ResyncRows *) arg;

	if (rr->rows.len > 0 && rr->rows.len + sizeof(xl_nvm_version) + v->data_len > RESYNC_ROWS_BYTES)
	{
		(void) log_phase(rr->t, XLNVM_RESYNC_ROWS, rr->nrows, rr->rows.data, rr->rows.len);
		resetStringInfo(&rr->rows);
		rr->nrows = 0;
	}
	nvm_resync_append_row(&rr->rows, record_no, v);
	rr->nrows++;
}

/*
 * nvm_resync_log_rows writes the RESYNC records of table t, BEGIN to END,
 * and returns the end of END; *total counts the rows.  The caller holds a
 * group of records (nvm_redo_group_begin), as resync_table does and the
 * image of a base backup (nvm_backup.c) does per table.
 */
XLogRecPtr
nvm_resync_log_rows(NvmTable *t, uint64 *total)
{
	ResyncRows	rr;
	XLogRecPtr	end;

	rr.t = t;
	rr.nrows = 0;
	initStringInfo(&rr.rows);
	(void) log_phase(t, XLNVM_RESYNC_BEGIN, 0, NULL, 0);
	*total += nvm_resync_each_row(t, log_row, &rr);
	if (rr.nrows > 0)
		(void) log_phase(t, XLNVM_RESYNC_ROWS, rr.nrows, rr.rows.data, rr.rows.len);
	end = log_phase(t, XLNVM_RESYNC_END, 0, NULL, 0);
	pfree(rr.rows.data);
	return end;
}

/*
 * creator_lost says whether v's creator committed after its clock slot's
 * durable watermark (core ckptmark.h): its commit's redo may not be in the
 * WAL.  A slot with no watermark yet counts every commit as lost.
 */
static bool
creator_lost(const NvmVersion *v)
{
	uint64		durable = nvm_slot_durable_txid(nvm_txid_clock_id(v->txid));

	return durable == 0 || nvm_txid_clock_ts(v->txid) > nvm_txid_clock_ts(durable);
}

/*
 * log_lost_rows writes the RESYNC records of table t for the records whose
 * newest committed version (a tombstone included) may have lost its redo
 * (creator_lost), flagged partial: the standby applies them and keeps the
 * rest.  Returns the end of END; *total counts the rows.
 */
static XLogRecPtr
log_lost_rows(NvmTable *t, uint64 *total)
{
	ResyncRows	rr;
	XLogRecPtr	end;
	uint64		limit = nvm_table_record_limit(t);

	rr.t = t;
	rr.nrows = 0;
	initStringInfo(&rr.rows);
	(void) log_phase_partial(t, XLNVM_RESYNC_BEGIN, 0, NULL, 0, true);
	for (uint64 r = 1; r < limit; r++)
	{
		NvmVersion *v = nvm_replica_newest_committed(t, r);

		if (v == NULL || !creator_lost(v))
			continue;
		if (rr.rows.len > 0 &&
			rr.rows.len + sizeof(xl_nvm_version) + v->data_len > RESYNC_ROWS_BYTES)
		{
			(void) log_phase_partial(t, XLNVM_RESYNC_ROWS, rr.nrows, rr.rows.data, rr.rows.len, true);
			resetStringInfo(&rr.rows);
			rr.nrows = 0;
		}
		append_version(&rr.rows, r, v);
		rr.nrows++;
		(*total)++;
		if (r % 4096 == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (rr.nrows > 0)
		(void) log_phase_partial(t, XLNVM_RESYNC_ROWS, rr.nrows, rr.rows.data, rr.rows.len, true);
	end = log_phase_partial(t, XLNVM_RESYNC_END, 0, NULL, 0, true);
	pfree(rr.rows.data);
	return end;
}

/*
 * resync_table logs the rows of table t that a crash may have lost the
 * redo of, as one group of records for the standby (nvm_redo.c: no other
 * COMMIT record in between, and no checkpoint record before its end), then
 * clears its mark; returns their number.
 */
static uint64
resync_table(NvmTable *t)
{
	volatile uint64 total = 0;
	volatile XLogRecPtr end = InvalidXLogRecPtr;

	nvm_redo_group_begin();
	PG_TRY();
	{
		uint64		n = 0;

		end = log_lost_rows(t, &n);
		total = n;
	}
	PG_FINALLY();
	{
		nvm_redo_group_end();
	}
	PG_END_TRY();
	/* the mark goes once the resync is in the WAL for good */
	XLogFlush(end);
	nvm_table_set_redo(t, (uint64) end);
	/* the next checkpoint captures what it logged */
	(void) nvm_ckpt_mark(t, 0);
	return total;
}

/*
 * nvm_resync_run logs again every table marked for a resync (see the file
 * header); the binding runs it at the first access to nvm rows after a
 * crash, holding the lock every other access waits for.
 */
void
nvm_resync_run(void)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();
	uint32		tables = 0;
	uint64		rows = 0;

	if (!nvm_redo_needed())
		return;
	for (size_t i = 0; i < n; i++)
	{
		nvm_off		d = atomic_load(&dir[i].desc);
		NvmTable	t;

		if (d == 0)
			continue;
		t.desc = nvm_ptr(d);
		if (!nvm_table_needs_resync(&t))
			continue;
		if (NVM_KEY_KIND(&t.desc->key) != NVM_KIND_PERMANENT)
		{
			nvm_table_set_redo(&t, 0);
			continue;
		}
		rows += resync_table(&t);
		tables++;
	}
	if (tables > 0)
		ereport(LOG,
				(errmsg("nvm: logged %llu rows of %u nvm tables again for physical standbys",
						(unsigned long long) rows, tables),
				 errdetail("A crash may have lost the WAL records of commits in them.")));
}
