/*-------------------------------------------------------------------------
 *
 * nvm_checkpoint.c
 *	  The checkpoint of the pool in files, where commits of nvm rows are
 *	  durable through the WAL (claim/nvm_durability.c): at each checkpoint,
 *	  the records that changed since the last one; files merged in the
 *	  background; what a rebuild of a pool torn or lost by a crash of the
 *	  operating system loads (redo/nvm_rebuild.c) before it replays the WAL
 *	  after them.
 *
 * What a capture writes (pg_nvm/checkpoint; the format and the persist
 * order of each file are redo/nvm_ckptfile.h's):
 *	 - for a table the manifest does not name yet, or one asked to be read
 *	   whole (created, emptied, cloned since: core ckptmark.h), a base file:
 *	   its live rows;
 *	 - for a table with records marked as changed since its last capture
 *	   (core ckptmark.h: the redo of each commit marks its records), a
 *	   delta file: each marked record's row, or a tombstone where it is
 *	   gone;
 *	 - for a table neither, nothing: its files stay as they are;
 *	 - the in-doubt file, if any transaction is in doubt or prepared: their
 *	   versions and the row locks of prepared transactions;
 *	 - the manifest, naming every table's files, the WAL position they are
 *	   as of, and the table's counters and reserved version numbers.
 * Files no manifest names any more are removed after it.  So a capture
 * writes what changed, not what is stored.
 *
 * The cut.  Every row a capture writes is as of one position P of the WAL:
 *	 - online (the "nvm backup watch" worker at a checkpoint, writers
 *	   running), the cut is taken under the redo group lock held
 *	   exclusively (redo/nvm_redo.c, nvm_redo_capture_cut): no COMMIT
 *	   record is being inserted, P is the end of the WAL inserted, and for
 *	   every clock slot the cut keeps the last transaction whose commit's
 *	   record is in (each commit raises it under the lock, with its last
 *	   record), and moves the checkpoint epoch on.  The tables are then
 *	   read without any lock, through a view that counts a version if its
 *	   creator committed and is within its slot's bound (NVM_VIEW_BOUNDS):
 *	   exactly the commits whose records lie before P.  A commit after the
 *	   cut marks its records in the new epoch, and its records lie after P.
 *	   The collection horizon is pinned meanwhile (the caller), so nothing
 *	   the view sees is collected.  The WAL is flushed to P before any
 *	   file: no row in a file is ahead of the WAL (a commit with heap and
 *	   nvm rows has its heap part durable first).
 *	 - quiet (nothing writes: the end of recovery, in the startup process;
 *	   a clean stop, once every writer is gone), everything committed
 *	   counts and P is the end of the WAL replayed or inserted.  At a clean
 *	   stop the WAL is flushed to P before any file as well: the last
 *	   commits (and records of transactions the stop cut short) may still
 *	   be in WAL buffers, and a crash before the shutdown checkpoint would
 *	   leave files ahead of the WAL, which no start may use.
 * A rebuild loads each table's files and replays the WAL from the
 * checkpoint's redo point, skipping a table's records before its files'
 * position: those are in the files.
 *
 * When captures run, and why the WAL after the last completed checkpoint
 * with the manifest always rebuilds every acknowledged commit:
 *	 - at every checkpoint, by the worker, after the checkpoint chose its
 *	   redo point R and before it writes its record (DELAY_CHKPT_START
 *	   until the cut, DELAY_CHKPT_COMPLETE until the manifest is durable:
 *	   checkpoint/nvm_backup.c), so P >= R and the checkpoint completes
 *	   only with its manifest;
 *	 - at the end of every recovery (crash recovery, a rebuild, a
 *	   promotion, the end of archive recovery), in the startup process
 *	   (rm_cleanup), before the end-of-recovery checkpoint: records
 *	   replayed or kept since the last manifest are captured;
 *	 - at a clean stop, by the worker, once every other backend is gone
 *	   and nvm writes are closed, before the shutdown checkpoint;
 *	 - at the worker's start, if the manifest is older than the last
 *	   checkpoint's redo point (a version of nvmam that had no manifest).
 * nvm writes wait, after a start, until the worker takes part in
 * checkpoints (redo/nvm_redo.c, nvm_redo_wait_writable): a checkpoint the
 * worker did not take part in finds no nvm record after the last capture.
 *
 * A capture that fails at a checkpoint stops the server (PANIC, as
 * PostgreSQL does when it cannot write its own checkpoint): the
 * checkpoint must not complete without it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "postmaster/bgwriter.h"
#include "portability/instr_time.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/wait_event.h"
#include "utils/memutils.h"

#include "ckptmark.h"
#include "indoubt.h"
#include "pool.h"
#include "replica.h"
#include "store.h"
#include "txn.h"
#include "visibility.h"

#include "checkpoint/nvm_checkpoint.h"
#include "claim/nvm_binding.h"
#include "claim/nvm_durability.h"
#include "nvm_settings.h"
#include "redo/nvm_ckptfile.h"
#include "redo/nvm_redo.h"
#include "redo/nvm_redofmt.h"

/* A table's deltas are merged (into one delta, or a new base) past this many of them. */
#define NVM_MERGE_DELTAS	8

static NvmCheckpointTotals *totals = NULL;

/* Logs the row locks prepared transactions hold in a table (wait/nvm_rowlock.c). */
static void (*prepared_locks_logger) (const NvmTable *t) = NULL;

/*
 * nvm_checkpoint_set_prepared_locks_logger sets what logs the row locks of
 * prepared transactions in a table, for the in-doubt file (nvm_backup.c
 * hands it on at _PG_init).
 */
void
nvm_checkpoint_set_prepared_locks_logger(void (*logger) (const NvmTable *t))
{
	prepared_locks_logger = logger;
}

Size
nvm_checkpoint_shmem_size(void)
{
	return sizeof(NvmCheckpointTotals);
}

void
nvm_checkpoint_shmem_startup(void)
{
	bool		found;

	totals = ShmemInitStruct("nvm checkpoint totals", sizeof(NvmCheckpointTotals), &found);
	if (!found)
	{
		pg_atomic_uint64 *p = (pg_atomic_uint64 *) totals;

		for (size_t i = 0; i < sizeof(NvmCheckpointTotals) / sizeof(pg_atomic_uint64); i++)
			pg_atomic_init_u64(&p[i], 0);
	}
}

NvmCheckpointTotals *
nvm_checkpoint_totals(void)
{
	return totals;
}

/* count_capture adds a capture to the totals. */
static void
count_capture(const NvmCheckpointCounts *c)
{
	uint64		usecs = (uint64) (c->secs * 1e6);

	if (totals == NULL)
		return;
	pg_atomic_fetch_add_u64(&totals->captures, 1);
	pg_atomic_fetch_add_u64(&totals->bytes, c->bytes);
	pg_atomic_fetch_add_u64(&totals->rows, c->rows);
	pg_atomic_fetch_add_u64(&totals->tables_written, c->bases + c->deltas);
	pg_atomic_fetch_add_u64(&totals->bases, c->bases);
	pg_atomic_fetch_add_u64(&totals->usecs, usecs);
	pg_atomic_write_u64(&totals->last_lsn, c->lsn);
	pg_atomic_write_u64(&totals->last_bytes, c->bytes);
	pg_atomic_write_u64(&totals->last_usecs, usecs);
}


/*
 * Spreading a capture's writes.  An online capture large enough that
 * writing it at once would compete with the WAL flushes commits wait for
 * (PACE_MIN_BYTES and more, estimated from the records to write) is spread
 * over half of what checkpoint_completion_target gives a checkpoint, as
 * PostgreSQL spreads its own buffer writes; the checkpoint, which writes
 * its buffers meanwhile, waits for it before its record.
 *
 * A merge between checkpoints (below) is spread the same way, over the
 * same time, estimated from the bytes of the files it reads.  It gives up
 * its pace, and goes on at full speed, as soon as its give_way says so (a
 * new checkpoint chose its redo point, or the server stops): the next
 * checkpoint's capture waits for the merge's table, as before pacing, and
 * not for a pace.
 */
#define PACE_MIN_BYTES		(32 * 1024 * 1024)
#define PACE_ROW_BYTES		128		/* a row's bytes, for the estimate */

typedef struct Pace
{
	bool		on;
	double		rate;			/* bytes a second */
	uint64		done;			/* bytes written so far */
	instr_time	start;
	bool		(*give_way) (void);	/* a merge's: pace off once true */
} Pace;

static Pace pace;

/* count_marked counts marked records (count_marked's visitor). */
static bool
count_one(uint64 record_no, void *arg)
{
	(*(uint64 *) arg)++;
	return true;
}

/*
 * checkpoint_awaited says whether a process waits for the checkpoint to
 * start or end (RequestCheckpoint with CHECKPOINT_WAIT: a CHECKPOINT
 * command, a base backup, pg_backup_start, a promotion).  Such a
 * checkpoint is wanted now, as PostgreSQL's immediate ones: its capture is
 * not spread (the checkpointer's own flags are private to it).  It reads
 * each process's wait event without a lock, as pg_stat_activity does.
 */
static bool
checkpoint_awaited(void)
{
	for (uint32 i = 0; i < ProcGlobal->allProcCount; i++)
	{
		uint32		w = ProcGlobal->allProcs[i].wait_event_info;

		if (w == WAIT_EVENT_CHECKPOINT_DONE || w == WAIT_EVENT_CHECKPOINT_START)
			return true;
	}
	return false;
}

/*
 * pace_begin estimates what the capture will write and turns pacing on if
 * it is large; online captures of a checkpoint nobody waits for only (at
 * the end of recovery and at a stop nothing else waits; a CHECKPOINT
 * command or a base backup waits for it).
 */
static void
pace_begin(bool online, const NvmCkptManifest *m)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();
	uint64		rows = 0;
	double		secs;

	memset(&pace, 0, sizeof(pace));
	if (!online || checkpoint_awaited())
		return;
	for (size_t i = 0; i < n; i++)
	{
		NvmTableKey key;
		NvmTable	t;
		NvmCkptTable *mt;

		if (atomic_load(&dir[i].desc) == 0)
			continue;
		memcpy(&key, &dir[i].key, sizeof(key));
		if (NVM_KEY_KIND(&key) != NVM_KIND_PERMANENT || !nvm_table_open(&key, &t))
			continue;
		mt = nvm_ckptfile_manifest_find(m, &key);
		if (mt == NULL || mt->nfiles == 0 || nvm_ckpt_wants_whole(&t))
			rows += nvm_table_record_limit(&t);
		else
			(void) nvm_ckpt_each_marked(&t, count_one, &rows);
	}
	secs = CheckPointCompletionTarget * CheckPointTimeout / 2.0;
	if (rows * PACE_ROW_BYTES < PACE_MIN_BYTES || secs < 1.0)
		return;
	pace.on = true;
	pace.rate = (double) (rows * PACE_ROW_BYTES) / secs;
	INSTR_TIME_SET_CURRENT(pace.start);
}

/* pace_after sleeps, after bytes more were written, while the capture is ahead of its pace. */
static void
pace_after(uint64 bytes)
{
	instr_time	now;
	double		ahead;

	if (!pace.on)
		return;
	pace.done += bytes;
	if (pace.done % (1024 * 1024) >= bytes)
		return;					/* look once a megabyte */
	if (checkpoint_awaited() || (pace.give_way != NULL && pace.give_way()))
	{
		pace.on = false;		/* somebody waits for it now: full speed */
		return;
	}
	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, pace.start);
	ahead = pace.done / pace.rate - INSTR_TIME_GET_DOUBLE(now);
	if (ahead > 0)
		pg_usleep((long) (Min(ahead, 0.1) * 1e6));
}

/*
 * pace_begin_merge turns pacing on for a merge that reads bytes of files,
 * if that is large and no process waits for a checkpoint.
 */
static void
pace_begin_merge(uint64 bytes, bool (*give_way) (void))
{
	double		secs = CheckPointCompletionTarget * CheckPointTimeout / 2.0;

	memset(&pace, 0, sizeof(pace));
	if (bytes < PACE_MIN_BYTES || secs < 1.0 || checkpoint_awaited() ||
		(give_way != NULL && give_way()))
		return;
	pace.on = true;
	pace.rate = (double) bytes / secs;
	pace.give_way = give_way;
	INSTR_TIME_SET_CURRENT(pace.start);
}

/* A file being written, and the view its rows are read through. */
typedef struct CaptureWrite
{
	NvmTable   *t;
	NvmCkptWriter *w;
	const NvmView *view;
	uint64		rows;
} CaptureWrite;

/* add_version writes v as record_no's row (a tombstone if v is NULL or one). */
static void
add_version(CaptureWrite *cw, uint64 record_no, const NvmVersion *v)
{
	xl_nvm_version xv;

	memset(&xv, 0, sizeof(xv));
	xv.record_no = record_no;
	if (v == NULL || nvm_version_is_tombstone(v))
	{
		xv.kind = NVM_VINFO_TOMBSTONE;
		xv.version_no = v != NULL ? v->version_no : 0;
		xv.index_root = v != NULL ? v->index_root : 0;
		nvm_ckptfile_add_row(cw->w, &xv, NULL);
	}
	else
	{
		xv.version_no = v->version_no;
		xv.index_root = v->index_root;
		xv.data_len = v->data_len;
		nvm_ckptfile_add_row(cw->w, &xv, v->data);
	}
	cw->rows++;
	pace_after(sizeof(xv) + xv.data_len);
}

/* write_base writes every live row of the table as the view sees it. */
static void
write_base(CaptureWrite *cw)
{
	uint64		limit = nvm_table_record_limit(cw->t);

	for (uint64 r = 1; r < limit; r++)
	{
		NvmVersion *v = nvm_chain_visible(cw->t, r, cw->view);

		if (v != NULL && !nvm_version_is_tombstone(v))
			add_version(cw, r, v);
		if (r % 4096 == 0)
			CHECK_FOR_INTERRUPTS();
	}
}

/* write_marked is the visitor of a delta: each marked record's row or tombstone. */
static bool
write_marked(uint64 record_no, void *arg)
{
	CaptureWrite *cw = (CaptureWrite *) arg;

	/* record 0 marks the table alone (its counters) */
	if (record_no == 0)
		return true;
	add_version(cw, record_no, nvm_chain_visible(cw->t, record_no, cw->view));
	if (cw->rows % 4096 == 0)
		CHECK_FOR_INTERRUPTS();
	return true;
}

/* add_file appends a file to a table's entry in the manifest. */
static void
add_file(NvmCkptTable *mt, uint64 seq, uint8 kind, uint64 nrows, uint64 bytes, bool replace)
{
	NvmCkptFileRef *f;

	if (replace || mt->files == NULL)
	{
		if (mt->files != NULL)
			pfree(mt->files);
		mt->files = palloc(sizeof(NvmCkptFileRef) * 4);
		mt->nfiles = 0;
	}
	else
		mt->files = repalloc(mt->files, sizeof(NvmCkptFileRef) * (mt->nfiles + 1));
	f = &mt->files[mt->nfiles++];
	memset(f, 0, sizeof(*f));
	f->seq = seq;
	f->kind = kind;
	f->nrows = nrows;
	f->bytes = bytes;
}

/* log_indoubt is the in-doubt visitor: one transaction's versions, into the sink. */
static void
log_indoubt(uint32_t slot, uint64_t txid, uint64_t xid, void *arg)
{
	(*(uint32 *) arg)++;
	nvm_redo_log_indoubt(slot, txid, (uint32) xid);
}

/*
 * write_indoubt writes the in-doubt file of capture seq (transactions in
 * doubt, and the prepared row locks of every table), if there is anything
 * to write; returns its sequence number, 0 if none.
 */
static uint64
write_indoubt(NvmCkptManifest *m, XLogRecPtr lsn, NvmCheckpointCounts *counts)
{
	StringInfoData buf;
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();
	uint64		seq = 0;

	/* prepared row locks exist only while a transaction is in doubt */
	if (!nvm_indoubt_pending())
		return 0;
	initStringInfo(&buf);
	nvm_redo_sink_begin(&buf);
	PG_TRY();
	{
		(void) nvm_indoubt_each(log_indoubt, &counts->indoubt);
		for (size_t i = 0; i < n; i++)
		{
			NvmTableKey key;
			NvmTable	t;

			if (atomic_load(&dir[i].desc) == 0)
				continue;
			memcpy(&key, &dir[i].key, sizeof(key));
			if (NVM_KEY_KIND(&key) == NVM_KIND_PERMANENT && nvm_table_open(&key, &t) &&
				prepared_locks_logger != NULL)
				prepared_locks_logger(&t);
		}
	}
	PG_FINALLY();
	{
		nvm_redo_sink_end();
	}
	PG_END_TRY();
	if (buf.len > 0)
	{
		NvmCkptWriter *w;

		seq = m->next_seq++;
		w = nvm_ckptfile_begin(NULL, NVM_CKPT_INDOUBT, seq, lsn);
		nvm_ckptfile_add_blob(w, buf.data, buf.len);
		counts->bytes += nvm_ckptfile_finish(w, NULL);
	}
	pfree(buf.data);
	return seq;
}

/* A table captured: its marks go once the manifest is durable. */
typedef struct Captured
{
	NvmTableKey key;
} Captured;

void
nvm_checkpoint_capture(NvmCaptureMode mode, XLogRecPtr lsn_quiet, XLogRecPtr redo,
					   void (*after_cut) (void), NvmCheckpointCounts *counts)
{
	NvmCkptManifest m;
	uint64	   *bounds = palloc(sizeof(uint64) * NVM_MAX_SLOTS);
	NvmView		view;
	XLogRecPtr	lsn;
	uint64		ended;
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();
	Captured   *captured = palloc(sizeof(Captured) * Max(n, 1));
	size_t		ncaptured = 0;
	bool	   *present;
	instr_time	start,
				duration;
	bool		other_version;

	INSTR_TIME_SET_CURRENT(start);
	memset(counts, 0, sizeof(*counts));
	if (!nvm_ckptfile_manifest_read_ours(&m, &other_version))
	{
		uint64		next_seq = other_version ? m.next_seq : 1;

		/* none, or another version's: every table is written whole */
		if (other_version)
			ereport(LOG,
					(errmsg("nvm: the checkpoint files of the pool are of another version of nvmam's format; this checkpoint writes every nvm table anew")));
		memset(&m, 0, sizeof(m));
		m.next_seq = next_seq;
	}

	if (mode == NVM_CAPTURE_ONLINE)
	{
		ended = nvm_redo_capture_cut(bounds, &lsn);
		XLogFlush(lsn);
	}
	else
	{
		for (int i = 0; i < NVM_MAX_SLOTS; i++)
			bounds[i] = NVM_CLOCK_TS_MASK;
		lsn = lsn_quiet;
		ended = nvm_ckpt_epoch_advance();
		/* a clean stop's WAL may be in WAL buffers yet; replayed WAL is on disk */
		if (!RecoveryInProgress())
			XLogFlush(lsn);
	}
	if (after_cut != NULL)
		after_cut();
	pace_begin(mode == NVM_CAPTURE_ONLINE, &m);
	nvm_crash_here(NVM_CRASH_CAPTURE_AFTER_CUT, "after the cut of a checkpoint of the nvm pool");
	memset(&view, 0, sizeof(view));
	view.kind = NVM_VIEW_BOUNDS;
	view.bounds = bounds;
	counts->lsn = lsn;

	present = palloc0(sizeof(bool) * Max(m.ntables, 1));
	for (size_t i = 0; i < n; i++)
	{
		NvmTableKey key;
		NvmTable	t;
		NvmCkptTable *mt;
		CaptureWrite cw;
		bool		whole;
		uint64		seq;
		uint64		bytes;
		uint64		nrows;

		if (atomic_load(&dir[i].desc) == 0)
			continue;
		memcpy(&key, &dir[i].key, sizeof(key));
		if (NVM_KEY_KIND(&key) != NVM_KIND_PERMANENT || !nvm_table_open(&key, &t))
			continue;
		mt = nvm_ckptfile_manifest_find(&m, &key);
		if (mt != NULL)
			present[mt - m.tables] = true;
		whole = mt == NULL || mt->nfiles == 0 || nvm_ckpt_wants_whole(&t);
		if (!whole && !nvm_ckpt_has_marks(&t))
		{
			counts->kept++;
			continue;
		}
		if (mt == NULL)
		{
			mt = nvm_ckptfile_manifest_add(&m, &key);
			present = repalloc(present, sizeof(bool) * m.ntables);
			present[m.ntables - 1] = true;
		}
		seq = m.next_seq++;
		memset(&cw, 0, sizeof(cw));
		cw.t = &t;
		cw.view = &view;
		cw.w = nvm_ckptfile_begin(&key, whole ? NVM_CKPT_BASE : NVM_CKPT_DELTA, seq, lsn);
		if (whole)
			write_base(&cw);
		else
			(void) nvm_ckpt_each_marked(&t, write_marked, &cw);
		bytes = nvm_ckptfile_finish(cw.w, &nrows);
		add_file(mt, seq, whole ? NVM_CKPT_BASE : NVM_CKPT_DELTA, nrows, bytes, whole);
		mt->lsn = lsn;
		nvm_table_counters(&t, &mt->next_record, &mt->next_version);
		mt->reserved = nvm_table_redo_reserved(&t);
		if (whole)
			counts->bases++;
		else
			counts->deltas++;
		counts->rows += cw.rows;
		counts->bytes += bytes;
		captured[ncaptured++].key = key;
	}

	/* tables gone since the last capture leave the manifest */
	for (uint32 i = 0; i < m.ntables;)
	{
		if (i < m.ntables && !present[i])
		{
			if (m.tables[i].files != NULL)
				pfree(m.tables[i].files);
			m.tables[i] = m.tables[m.ntables - 1];
			present[i] = present[m.ntables - 1];
			m.ntables--;
			counts->dropped++;
			continue;
		}
		i++;
	}

	m.indoubt_seq = write_indoubt(&m, lsn, counts);
	nvm_crash_here(NVM_CRASH_CAPTURE_AFTER_FILES,
				   "after the files of a checkpoint of the nvm pool, before its manifest");
	m.seq++;
	m.lsn = lsn;
	m.redo = redo;
	nvm_ckptfile_manifest_write(&m);
	nvm_crash_here(NVM_CRASH_CAPTURE_AFTER_MANIFEST,
				   "after the manifest of a checkpoint of the nvm pool");

	/* durable: the marks the capture read go, and the files no longer named */
	for (size_t i = 0; i < ncaptured; i++)
	{
		NvmTable	t;

		if (nvm_table_open(&captured[i].key, &t))
			nvm_ckpt_drop_marks(&t, ended);
	}
	counts->removed = nvm_ckptfile_remove_unnamed(&m);
	nvm_ckptfile_manifest_free(&m);
	pfree(present);
	pfree(captured);
	pfree(bounds);
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	counts->secs = INSTR_TIME_GET_DOUBLE(duration);
	count_capture(counts);
}

/*
 * nvm_checkpoint_at_recovery_end captures the pool at the end of WAL
 * replay (the startup process, rm_cleanup), before the end-of-recovery
 * checkpoint: the records replayed since the last capture (by a standby,
 * a rebuild, a restored backup) or kept in the pool since (a crash of the
 * server) are in the files before that checkpoint completes.  A pool this
 * data directory will not use (detached, an image not replayed, a pool
 * ahead of the WAL replayed) is not captured.
 */
void
nvm_checkpoint_at_recovery_end(void)
{
	NvmCheckpointCounts counts;

	if (!nvm_durability_through_wal() || nvm_pool_base == NULL ||
		!nvm_binding_capturable_at_recovery_end())
		return;
	nvm_checkpoint_capture(NVM_CAPTURE_QUIET, GetXLogReplayRecPtr(NULL), InvalidXLogRecPtr,
						   NULL, &counts);
	nvm_checkpoint_log_capture("the end of recovery", &counts);
	nvm_crash_here(NVM_CRASH_RECOVERY_END_AFTER_CAPTURE,
				   "after the capture of the nvm pool at the end of recovery");
}

XLogRecPtr
nvm_checkpoint_manifest_lsn(void)
{
	NvmCkptManifest m;
	XLogRecPtr	lsn;
	bool		other_version;

	if (!nvm_ckptfile_manifest_read_ours(&m, &other_version))
		return InvalidXLogRecPtr;
	lsn = (XLogRecPtr) m.lsn;
	nvm_ckptfile_manifest_free(&m);
	return lsn;
}

void
nvm_checkpoint_log_capture(const char *why, const NvmCheckpointCounts *c)
{
	ereport(log_checkpoints ? LOG : DEBUG1,
			(errmsg("nvm: checkpoint of the pool at %s: wrote %llu kB (%llu rows) for %llu changed and %llu whole nvm tables, kept %llu unchanged, dropped %llu, %u in doubt; %.3f s",
					why, (unsigned long long) (c->bytes >> 10), (unsigned long long) c->rows,
					(unsigned long long) c->deltas, (unsigned long long) c->bases,
					(unsigned long long) c->kept, (unsigned long long) c->dropped,
					c->indoubt, c->secs),
			 errdetail("The checkpoint files are as of %X/%X.", LSN_FORMAT_ARGS(c->lsn))));
}

/* ---------------------------------------------------------------------
 * Merges
 * ---------------------------------------------------------------------
 */

/* What merge_table writes for a table. */
typedef enum MergeKind
{
	MERGE_NONE,
	MERGE_DELTAS,				/* the deltas into one delta; the base stays */
	MERGE_BASE					/* every file into a new base */
} MergeKind;

/*
 * wants_merge says how a table's files are merged, if they are: into a
 * new base once the deltas hold more bytes than half the base (or there is
 * no base), else the deltas into one delta once there are more than
 * NVM_MERGE_DELTAS of them.  So a merge writes what changed since the
 * base, not the whole table, until the changes come to half of it; a base
 * is then rewritten after at least half its bytes of changes.
 */
static MergeKind
wants_merge(const NvmCkptTable *mt)
{
	uint64		base = 0,
				deltas = 0;

	if (mt->nfiles < 2)
		return MERGE_NONE;
	for (uint32 i = 0; i < mt->nfiles; i++)
	{
		if (mt->files[i].kind == NVM_CKPT_BASE)
			base += mt->files[i].bytes;
		else
			deltas += mt->files[i].bytes;
	}
	if (deltas * 2 > base)
		return MERGE_BASE;
	if (mt->nfiles - 1 <= NVM_MERGE_DELTAS)
		return MERGE_NONE;
	return mt->files[0].kind == NVM_CKPT_BASE ? MERGE_DELTAS : MERGE_BASE;
}

/*
 * merge_table writes mt's files merged as one file and names it instead of
 * them: with MERGE_BASE every file as a new base (tombstones dropped), with
 * MERGE_DELTAS the deltas after the base (files[0]) as one delta, which
 * keeps their tombstones, as the newest of their rows over the base.  The
 * writes are spread over time as a capture's are (pace_begin_merge) until
 * give_way says a checkpoint wants the worker.
 */
static void
merge_table(NvmCkptManifest *m, NvmCkptTable *mt, MergeKind kind, NvmMergeCounts *counts,
			bool (*give_way) (void))
{
	NvmCkptError err;
	NvmCkptTable from = *mt;	/* the files merged */
	NvmCkptCursor *c;
	NvmCkptWriter *w;
	xl_nvm_version xv;
	const char *data;
	uint64		seq;
	uint64		nrows;
	uint64		bytes;
	uint64		in_bytes;
	uint8		file_kind = kind == MERGE_DELTAS ? NVM_CKPT_DELTA : NVM_CKPT_BASE;

	if (kind == MERGE_DELTAS)
	{
		from.files = mt->files + 1;
		from.nfiles = mt->nfiles - 1;
	}
	c = nvm_ckptcursor_open(NVM_CHECKPOINT_DIR, &from, 0, PG_UINT64_MAX, &err);
	if (c == NULL)
		nvm_ckptfile_report(ERROR, NULL, &err, NULL);
	seq = m->next_seq++;
	w = nvm_ckptfile_begin(&mt->key, file_kind, seq, mt->lsn);
	in_bytes = 0;
	for (uint32 i = 0; i < from.nfiles; i++)
		in_bytes += from.files[i].bytes;
	pace_begin_merge(in_bytes, give_way);
	PG_TRY();
	{
		uint64		paced = 0;

		while (nvm_ckptcursor_next(c, &xv, &data, &err))
		{
			uint64		read = nvm_ckptcursor_bytes_read(c);

			if (kind == MERGE_DELTAS || (xv.kind & NVM_VINFO_TOMBSTONE) == 0)
				nvm_ckptfile_add_row(w, &xv, data);
			/* paced by the bytes read, as the rate is: rows passed over count too */
			pace_after(read - paced);
			paced = read;
		}
		if (err.msg[0] != '\0')
			nvm_ckptfile_report(ERROR, NULL, &err, NULL);
	}
	PG_FINALLY();
	{
		nvm_ckptcursor_close(c);
		pace.on = false;
	}
	PG_END_TRY();
	bytes = nvm_ckptfile_finish(w, &nrows);
	counts->tables++;
	counts->files += from.nfiles;
	counts->rows += nrows;
	counts->bytes += bytes;
	if (kind == MERGE_DELTAS)
		mt->nfiles = 1;			/* the base, then the merged delta */
	add_file(mt, seq, file_kind, nrows, bytes, kind == MERGE_BASE);
}

void
nvm_checkpoint_merge(NvmMergeCounts *counts, bool (*stop) (void))
{
	NvmCkptManifest m;
	bool		merged = false;
	bool		other_version;

	memset(counts, 0, sizeof(*counts));
	if (!nvm_ckptfile_manifest_read_ours(&m, &other_version))
		return;
	for (uint32 i = 0; i < m.ntables; i++)
	{
		MergeKind	kind = wants_merge(&m.tables[i]);

		if (kind == MERGE_NONE)
			continue;
		merge_table(&m, &m.tables[i], kind, counts, stop);
		merged = true;
		CHECK_FOR_INTERRUPTS();
		if (stop != NULL && stop())
			break;
	}
	if (merged)
	{
		if (totals != NULL)
		{
			pg_atomic_fetch_add_u64(&totals->merges, counts->tables);
			pg_atomic_fetch_add_u64(&totals->merged_bytes, counts->bytes);
		}
		nvm_crash_here(NVM_CRASH_MERGE_AFTER_FILES,
					   "after the files of a merge of nvm checkpoint files, before its manifest");
		nvm_ckptfile_manifest_write(&m);
		nvm_crash_here(NVM_CRASH_MERGE_AFTER_MANIFEST,
					   "after the manifest of a merge of nvm checkpoint files, before the merged files go");
		(void) nvm_ckptfile_remove_unnamed(&m);
		ereport(log_checkpoints ? LOG : DEBUG1,
				(errmsg("nvm: merged the checkpoint files of %llu nvm tables (%llu files into %llu rows, %llu kB)",
						(unsigned long long) counts->tables, (unsigned long long) counts->files,
						(unsigned long long) counts->rows, (unsigned long long) (counts->bytes >> 10))));
	}
	nvm_ckptfile_manifest_free(&m);
}
