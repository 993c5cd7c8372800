/*-------------------------------------------------------------------------
 *
 * nvm_backup.c
 *	  Online base backups of nvm tables: the image of the pool that a base
 *	  backup needs is logged into the WAL right after the backup's start,
 *	  and backups that start are noticed in time to log it.
 *
 * A base backup (pg_basebackup, or pg_backup_start() and a file copy)
 * copies the pool file, if it is inside the data directory, byte by byte
 * while backends write it: that copy is torn and is never used.  What the
 * restored data directory has is the WAL from the backup's start (the redo
 * point of its checkpoint, R) to at least its end.  So right after R, and
 * before the backup can end, the primary logs an image of every nvm table:
 *
 *	 IMAGE BEGIN, then for every permanent table a RESYNC group (its
 *	 committed rows, as after a crash: nvm_resync.c) and the LOCKS records
 *	 of the row locks prepared transactions hold in it, then a COMMIT
 *	 record flagged prepared for every transaction in doubt (prepared
 *	 ones), then IMAGE END.
 *
 * A data directory restored from the backup builds a new, empty pool and
 * replays the WAL from R into it (nvm_replay.c, claim/nvm_binding.c):
 * a table gets rows from its RESYNC group on, the COMMIT records after it
 * apply on top, and nvm rows are served only once an IMAGE END was
 * replayed after its BEGIN.  Tables created after R are created by their
 * own STORAGE records.  A backup whose WAL holds no image (it started
 * while this server could not log one, or on a standby) is never served
 * torn or partial rows: its nvm tables raise an error with a hint.
 *
 * When the image is logged:
 *	 - pg_backup_start(): in the calling session, at the end of the
 *	   statement that started the backup (ExecutorEnd; the session's backup
 *	   state says so), before the session can call pg_backup_stop();
 *	 - pg_basebackup: the backup runs in a walsender, where no hook runs,
 *	   so a background worker of this file ("nvm backup watch") holds
 *	   DELAY_CHKPT_START at all times (in a transaction, so that the
 *	   checkpointer can tell it apart): every checkpoint, after choosing
 *	   its redo point, waits for it.  The worker sees the redo point move,
 *	   looks whether a walsender's base backup waits for that checkpoint
 *	   (its progress phase), logs the image if so, and only then lets the
 *	   checkpoint go on, in a new transaction.  The backup's checkpoint,
 *	   hence its start, comes after the image is in the WAL.  Every
 *	   checkpoint waits for the worker's next look (NVM_BACKUP_LOOK_MS).
 *	   Once it holds the flag, the worker serves at once every redo point
 *	   it has not served yet (the last one it served is remembered), not
 *	   only the next one: a checkpoint that chose its redo point while the
 *	   worker was between two transactions (holding no flag: the
 *	   checkpointer tells holders apart by their virtual transaction)
 *	   waits for the worker although the redo point did not move since the
 *	   worker read it, and is served, not waited on.  A checkpoint already
 *	   served that looks for the flag's holders only after the worker's
 *	   next transaction began waits for that transaction: the worker ends
 *	   its transaction after the capture at its start, and every second
 *	   while the checkpoint of the redo point it served has not completed
 *	   (pg_control: checkpoint_in_progress).
 *
 * Where commits of nvm rows are durable through the WAL (nvm.durability,
 * claim/nvm_durability.c), the same worker captures the pool at every
 * checkpoint into the checkpoint files (nvm_checkpoint.c): it holds
 * DELAY_CHKPT_START until its cut, then DELAY_CHKPT_COMPLETE until the
 * manifest is durable, so that the checkpointer writes its buffers while
 * the worker writes the files, and completes only with them.  Between
 * checkpoints it merges files.
 *
 * Persist order of a checkpoint against the files (where they are kept):
 * a checkpoint with redo point R removes the WAL before R once its record
 * is written, so the manifest must be as of R or later before that
 * record.  The worker holds DELAY_CHKPT_START while it waits, takes
 * DELAY_CHKPT_COMPLETE as soon as it sees a redo point it has not served
 * (before it captures), and once a manifest is durable takes
 * DELAY_CHKPT_START again and reads the redo point once more before it
 * lets the flags go: a checkpoint that chose its redo point during the
 * capture (one that had gone on without the worker was still completing)
 * is served in the same transaction, so the flags a checkpoint found are
 * never let go before its own manifest.  COMPLETE is never held while
 * the worker waits: a checkpoint already served that looked for its
 * holders then would wait for the worker, and the worker for the next
 * redo point.  What is left is the instant between two of the worker's
 * transactions (and between its look and COMPLETE): a checkpoint that
 * chose its redo point and looked for both flags' holders within it does
 * not wait; the worker serves it as soon as it sees it, and until that
 * capture ends a crash of the operating system could find removed the
 * WAL between the previous manifest and that redo point
 * (doc/limitations.md).  At its start it makes the first access to
 * nvm rows (which logs again what a crash may have lost), captures the
 * pool if the manifest is older than the last checkpoint, and opens nvm
 * writes (redo/nvm_redo.c, nvm_redo_set_writable): from then on it takes
 * part in every checkpoint.  At a clean stop it closes nvm writes, waits
 * until every writer is gone, and captures the pool a last time before
 * the shutdown checkpoint.  No start writes an image of the pool.
 *
 * Order and consistency: each table's RESYNC group is written under the
 * exclusive group lock (nvm_redo.c): no COMMIT record lies inside it, and
 * drops and truncates of storage (which take the lock shared) are kept
 * out, so the rows read are the table's at that point of the WAL.  A pin
 * of the collection horizon keeps every version read from being
 * collected.  A transaction whose status is durable but whose COMMIT
 * record waits for the group is in the image and in its record after it:
 * replay finds its versions present.  The cost is the WAL of every nvm
 * row, once per backup, and commits wait while a table is read.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/pg_control.h"
#include "commands/progress.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "ccstate.h"
#include "gc.h"
#include "indoubt.h"
#include "pool.h"
#include "store.h"
#include "txn.h"

#include "checkpoint/nvm_backup.h"
#include "checkpoint/nvm_checkpoint.h"
#include "claim/nvm_binding.h"
#include "claim/nvm_durability.h"
#include "nvm_compat.h"
#include "nvm_settings.h"
#include "redo/nvm_redo.h"
#include "redo/nvm_redofmt.h"
#include "redo/nvm_resync.h"

/* How often the worker looks whether a checkpoint chose its redo point. */
#define NVM_BACKUP_LOOK_MS		20
/* looks between two checks that no checkpoint served waits for the worker (1 s) */
#define NVM_BACKUP_STALE_LOOKS	50

PGDLLEXPORT void nvm_backup_watch_main(Datum arg);

/* Logs the row locks prepared transactions hold in a table (wait/nvm_rowlock.c). */
static void (*prepared_locks_logger) (const NvmTable *t) = NULL;

/* This session's backup (pg_backup_start) has its image in the WAL. */
static bool session_image_logged = false;

/* What an image logged, for its END record and the log. */
typedef struct ImageCounts
{
	uint64		tables;
	uint64		rows;
	uint32		indoubt;
	uint64		wal_bytes;		/* of the whole image */
} ImageCounts;

/*
 * log_image_phase writes IMAGE BEGIN or END (saying whether the rows are in
 * checkpoint files) and returns its end.
 */
static XLogRecPtr
log_image_phase(uint8 phase, const ImageCounts *counts, bool rows_in_files)
{
	xl_nvm_image rec;

	memset(&rec, 0, sizeof(rec));
	rec.phase = phase;
	rec.rows_in_files = rows_in_files ? 1 : 0;
	if (counts != NULL)
	{
		rec.tables = counts->tables;
		rec.rows = counts->rows;
		rec.indoubt = counts->indoubt;
	}
	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	return XLogInsert(RM_NVM_ID, XLOG_NVM_IMAGE);
}

/*
 * log_table logs the rows of key's table as one group (unless with_rows is
 * false: its rows are in its checkpoint file), then the row locks prepared
 * transactions hold in it, looking the table up inside the group (a drop
 * or truncate may have replaced it since the directory was read); a table
 * gone meanwhile logs nothing.
 */
static void
log_table(const NvmTableKey *key, bool with_rows, ImageCounts *counts)
{
	nvm_redo_group_begin();
	PG_TRY();
	{
		NvmTable	t;
		uint64		rows = 0;

		if (nvm_table_open(key, &t))
		{
			if (with_rows)
				(void) nvm_resync_log_rows(&t, &rows);
			if (prepared_locks_logger != NULL)
				prepared_locks_logger(&t);
			counts->tables++;
			counts->rows += rows;
		}
	}
	PG_FINALLY();
	{
		nvm_redo_group_end();
	}
	PG_END_TRY();
}

/* log_indoubt is the in-doubt visitor: one transaction's versions. */
static void
log_indoubt(uint32_t slot, uint64_t txid, uint64_t xid, void *arg)
{
	ImageCounts *counts = (ImageCounts *) arg;

	nvm_redo_log_indoubt(slot, txid, (uint32) xid);
	counts->indoubt++;
}

/*
 * log_all_tables logs every permanent table of the directory once (its
 * rows if with_rows, and its prepared row locks); tables
 * that appear while it runs are logged by further passes (a table created
 * after the backup's start has its own STORAGE record, but one more image
 * of it costs nothing wrong).
 */
static void
log_all_tables(bool with_rows, ImageCounts *counts)
{
	HASHCTL		ctl;
	HTAB	   *done;
	bool		found_new = true;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(NvmTableKey);
	ctl.entrysize = sizeof(NvmTableKey);
	ctl.hcxt = CurrentMemoryContext;
	done = hash_create("nvm image tables", 256, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	while (found_new)
	{
		NvmTableDirEntry *dir = nvm_table_dir();
		size_t		n = nvm_table_dir_count();

		found_new = false;
		for (size_t i = 0; i < n; i++)
		{
			NvmTableKey key;
			bool		seen;

			if (atomic_load(&dir[i].desc) == 0)
				continue;
			memcpy(&key, &dir[i].key, sizeof(key));
			if (NVM_KEY_KIND(&key) != NVM_KIND_PERMANENT)
				continue;
			(void) hash_search(done, &key, HASH_ENTER, &seen);
			if (seen)
				continue;
			found_new = true;
			log_table(&key, with_rows, counts);
			CHECK_FOR_INTERRUPTS();
		}
	}
	hash_destroy(done);
}

/*
 * log_image logs the image of the pool (see the file header), with the
 * rows of every table if with_rows (else their checkpoint files hold
 * them), and returns what it logged and the WAL it took; the caller pins
 * the collection horizon (pin_horizon).  It logs nothing
 * (false) where no redo is written (nvm.wal_redo off, wal_level minimal,
 * recovery: a backup of a standby carries no image, and its restore
 * refuses nvm tables), nor for a data directory detached from its pool
 * (whose rows are not there).
 */
static bool
log_image(bool with_rows, ImageCounts *counts)
{
	XLogRecPtr	begin;
	XLogRecPtr	end;

	memset(counts, 0, sizeof(*counts));
	if (!nvm_redo_needed() || nvm_pool_base == NULL || nvm_binding_is_detached())
		return false;
	begin = log_image_phase(XLNVM_IMAGE_BEGIN, NULL, !with_rows);
	log_all_tables(with_rows, counts);
	(void) nvm_indoubt_each(log_indoubt, counts);
	end = log_image_phase(XLNVM_IMAGE_END, counts, !with_rows);
	XLogFlush(end);
	counts->wal_bytes = end - begin;
	return true;
}

/*
 * pin_horizon pins the collection horizon for this process, so that no
 * version read is collected until unpin_horizon (a transaction's pin of
 * this process, older, does as well: then it pins nothing and says so).
 */
static bool
pin_horizon(void)
{
	int			pin = NVM_PROC_NUMBER(MyProc);
	NvmSnapshot *snap;

	if (nvm_gc_is_pinned(pin))
		return false;
	snap = palloc(sizeof(NvmSnapshot));
	nvm_snapshot_take_pinned(pin, snap);
	pfree(snap);
	return true;
}

/* unpin_horizon undoes pin_horizon (if it pinned). */
static void
unpin_horizon(bool pinned)
{
	if (pinned)
		nvm_gc_unpin(NVM_PROC_NUMBER(MyProc));
}

/*
 * nvm_backup_log_image logs the whole image of the pool, every row in the
 * WAL, for a base backup that started (for_backup) or at the start of the
 * server where commits are durable through the WAL (claim/
 * nvm_durability.c); why names the occasion for the log.
 */
void
nvm_backup_log_image(const char *why, bool for_backup)
{
	ImageCounts counts;
	bool		pinned = pin_horizon();
	volatile bool logged = false;

	PG_TRY();
	{
		logged = log_image(true, &counts);
	}
	PG_FINALLY();
	{
		unpin_horizon(pinned);
	}
	PG_END_TRY();
	if (!logged)
		return;
	if (for_backup)
		ereport(LOG,
				(errmsg("nvm: logged the rows of %llu nvm tables (%llu rows, %u prepared transactions) for a base backup",
						(unsigned long long) counts.tables, (unsigned long long) counts.rows,
						counts.indoubt),
				 errdetail("The backup was started by %s; a data directory restored from it rebuilds its nvm pool from the WAL.",
						   why)));
	else
		ereport(counts.wal_bytes > (uint64) max_wal_size_mb * 1024 * 1024 / 4 ? WARNING :
				log_checkpoints ? LOG : DEBUG1,
				(errmsg("nvm: logged the rows of %llu nvm tables (%llu rows, %u prepared transactions, %llu MB of WAL) as the image of the pool at %s",
						(unsigned long long) counts.tables, (unsigned long long) counts.rows,
						counts.indoubt, (unsigned long long) (counts.wal_bytes >> 20), why),
				 errdetail("Commits of nvm rows are durable through the WAL: a pool torn or lost by a crash of the operating system is rebuilt from this image and the WAL after it.")));
}

/*
 * nvm_backup_set_prepared_locks_logger sets what logs the row locks of
 * prepared transactions in a table for the image (_PG_init: the row locks
 * are wait/'s, which depends on this folder).
 */
void
nvm_backup_set_prepared_locks_logger(void (*logger) (const NvmTable *t))
{
	prepared_locks_logger = logger;
	nvm_checkpoint_set_prepared_locks_logger(logger);
}

/*
 * nvm_backup_after_statement logs the image once for this session's
 * backup, when a statement ends and pg_backup_start() has started one
 * (ExecutorEnd); a failure leaves it to the next statement.
 */
void
nvm_backup_after_statement(void)
{
	if (get_backup_status() != SESSION_BACKUP_RUNNING)
	{
		session_image_logged = false;
		return;
	}
	if (session_image_logged)
		return;
	nvm_backup_log_image("pg_backup_start()", true);
	session_image_logged = true;
}

/* ---------------------------------------------------------------------
 * The worker that logs the image for pg_basebackup
 * ---------------------------------------------------------------------
 */

/*
 * basebackup_waits_for_checkpoint says whether a walsender's base backup
 * waits for a checkpoint to start it (its progress phase).
 */
static bool
basebackup_waits_for_checkpoint(void)
{
	int			n;

	pgstat_clear_backend_activity_snapshot();
	n = pgstat_fetch_stat_numbackends();
	for (int i = 1; i <= n; i++)
	{
		LocalPgBackendStatus *l = NVM_LOCAL_BEENTRY(i);

		if (l != NULL &&
			l->backendStatus.st_progress_command == PROGRESS_COMMAND_BASEBACKUP &&
			l->backendStatus.st_progress_param[PROGRESS_BASEBACKUP_PHASE] ==
			PROGRESS_BASEBACKUP_PHASE_WAIT_CHECKPOINT)
			return true;
	}
	return false;
}

/* A clean stop asked the worker to end (SIGTERM). */
static volatile sig_atomic_t stop_requested = false;

static void
watch_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	stop_requested = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/*
 * capture_or_panic captures the pool (nvm_checkpoint.c); a capture that
 * fails stops the server: the checkpoint it is for must not complete
 * without it, as PostgreSQL's own checkpoint data.
 */
static void
capture_or_panic(NvmCaptureMode mode, XLogRecPtr lsn, XLogRecPtr redo, void (*after_cut) (void),
				 const char *why)
{
	NvmCheckpointCounts counts;
	bool		pinned = pin_horizon();

	PG_TRY();
	{
		nvm_checkpoint_capture(mode, lsn, redo, after_cut, &counts);
	}
	PG_CATCH();
	{
		EmitErrorReport();
		elog(PANIC, "nvm: could not checkpoint the nvm pool, which commits durable through the WAL need");
	}
	PG_END_TRY();
	unpin_horizon(pinned);
	nvm_checkpoint_log_capture(why, &counts);
}

/*
 * other_writers says whether a clock slot is held by another process than
 * this one (transactions in doubt hold theirs without a process).
 */
static bool
other_writers(void)
{
	for (uint32 c = 0; c < nvm_cc->max_slots; c++)
	{
		NvmSlotShared *ss = &nvm_cc->slots[c];

		if (atomic_load(&ss->in_use) && ss->owner_pid != (uint32) MyProcPid &&
			atomic_load(&ss->indoubt_txid) == 0)
			return true;
	}
	return false;
}

/*
 * stop_capture is a clean stop's last capture: nvm writes are closed, every
 * writer is waited for, then the pool is captured, before the shutdown
 * checkpoint (which PostgreSQL starts once every backend and background
 * worker is gone).
 */
static void
stop_capture(void)
{
	nvm_redo_set_writable(NVM_REDO_WRITES_CLOSED);
	pg_memory_barrier();
	while (other_writers())
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 NVM_BACKUP_LOOK_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	nvm_crash_here(NVM_CRASH_STOP_BEFORE_CAPTURE,
				   "at a clean stop, before the last capture of the nvm pool");
	StartTransactionCommand();
	capture_or_panic(NVM_CAPTURE_QUIET, nvm_inserted_wal_end(), GetRedoRecPtr(), NULL,
					 "a clean stop");
	CommitTransactionCommand();
	nvm_crash_here(NVM_CRASH_STOP_AFTER_CAPTURE,
				   "at a clean stop, after the last capture of the nvm pool");
}

/*
 * release_start lets a checkpoint go on with its own buffers once the
 * capture has its cut; it still waits for the manifest
 * (DELAY_CHKPT_COMPLETE) before its record.
 */
static void
release_start(void)
{
	MyProc->delayChkptFlags &= ~DELAY_CHKPT_START;
}

/* The redo point merges run under; a new one makes them give way. */
static XLogRecPtr merge_redo = InvalidXLogRecPtr;

/* merge_stop says whether merges must give way: a new checkpoint, or a stop. */
static bool
merge_stop(void)
{
	return stop_requested || GetRedoRecPtr() != merge_redo;
}

/*
 * checkpoint_in_progress says whether a checkpoint has chosen its redo
 * point (redo, GetRedoRecPtr) and not completed: pg_control names an
 * older redo point until it completes (a pg_control that cannot be read
 * whole counts as in progress).
 */
static bool
checkpoint_in_progress(XLogRecPtr redo)
{
	bool		crc_ok = false;
	ControlFileData *cf = get_controlfile(DataDir, &crc_ok);
	bool		in_progress = !crc_ok || cf->checkPointCopy.redo != redo;

	pfree(cf);
	return in_progress;
}

/*
 * nvm_backup_watch_main is the worker (see the file header): a transaction
 * that holds DELAY_CHKPT_START until a checkpoint chooses its redo point,
 * then the image if a base backup waits for that checkpoint, the capture
 * of the pool where commits are durable through the WAL, and the next
 * transaction.
 */
void
nvm_backup_watch_main(Datum arg)
{
	MemoryContext image_cxt;
	bool		files = false;
	bool		opened = false;
	XLogRecPtr	served = InvalidXLogRecPtr; /* the redo point last served */

	pqsignal(SIGTERM, watch_sigterm);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("nvm backup watch");
	image_cxt = AllocSetContextCreate(TopMemoryContext, "nvm backup image",
									  ALLOCSET_DEFAULT_SIZES);

	/*
	 * The first access to nvm rows after a start logs again what a crash
	 * may have lost (nvm_resync.c): made here at once, it does not wait for
	 * a first query.
	 */
	StartTransactionCommand();
	(void) nvm_binding_usable();
	files = nvm_durability_through_wal() && nvm_pool_base != NULL && !nvm_binding_is_detached();
	CommitTransactionCommand();
	if (!files)
		nvm_redo_set_writable(NVM_REDO_WRITES_OPEN);

	for (;;)
	{
		XLogRecPtr	redo;
		uint32		looks;

		StartTransactionCommand();
		MyProc->delayChkptFlags |= DELAY_CHKPT_START;
		redo = GetRedoRecPtr();
		if (files && !opened)
		{
			/*
			 * From now on every checkpoint waits for this worker; a manifest
			 * older than the last checkpoint (none: a version of nvmam that
			 * wrote none) is brought up to date first.
			 */
			XLogRecPtr	manifest = nvm_checkpoint_manifest_lsn();

			if (manifest == InvalidXLogRecPtr || manifest < redo)
			{
				MyProc->delayChkptFlags |= DELAY_CHKPT_COMPLETE;
				capture_or_panic(NVM_CAPTURE_ONLINE, InvalidXLogRecPtr, redo, NULL,
								 "the start of the server");
				MyProc->delayChkptFlags &= ~DELAY_CHKPT_COMPLETE;
			}
			nvm_redo_set_writable(NVM_REDO_WRITES_OPEN);
			opened = true;
			served = redo;
			/* a checkpoint at redo that found this transaction's flag waits for its end */
			MyProc->delayChkptFlags &= ~DELAY_CHKPT_START;
			CommitTransactionCommand();
			continue;
		}
		/*
		 * A redo point this worker has not served (a checkpoint that chose
		 * it while the worker held no flag may wait for it already, or have
		 * gone on) is served at once, not at the next one.
		 */
		looks = 0;
		while (redo == served && !stop_requested)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 NVM_BACKUP_LOOK_MS, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			if (ConfigReloadPending)
			{
				ConfigReloadPending = false;
				ProcessConfigFile(PGC_SIGHUP);
			}
			/* between checkpoints: files merged, giving way to a checkpoint */
			if (files)
			{
				NvmMergeCounts mc;

				merge_redo = redo;
				nvm_checkpoint_merge(&mc, merge_stop);
			}
			redo = GetRedoRecPtr();

			/*
			 * A checkpoint at the redo point served that looked for the
			 * flag's holders only after this transaction began (it chose its
			 * redo point before the worker read it, and was slow to look)
			 * waits for this transaction to end: now and then, while that
			 * checkpoint has not completed, the transaction ends.
			 */
			if (redo == served && ++looks % NVM_BACKUP_STALE_LOOKS == 0 &&
				checkpoint_in_progress(redo))
				break;
		}
		if (redo == served && !stop_requested)
		{
			MyProc->delayChkptFlags &= ~DELAY_CHKPT_START;
			CommitTransactionCommand();
			continue;
		}
		/*
		 * A reload that came while a merge ran applies to the checkpoint
		 * the merge gave way to (nvm.debug_crash_point is read here too).
		 */
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (stop_requested)
		{
			MyProc->delayChkptFlags &= ~(DELAY_CHKPT_START | DELAY_CHKPT_COMPLETE);
			CommitTransactionCommand();
			if (files)
				stop_capture();
			proc_exit(0);
		}

		/*
		 * Every redo point chosen since the last one served, in this
		 * transaction: the flags a checkpoint found held are let go only
		 * once no redo point is left unserved (after each capture, START
		 * is taken again before the redo point is read once more).
		 * COMPLETE is held from the moment a redo point is seen to need
		 * serving, and never while the worker waits: a checkpoint it has
		 * served that looks for COMPLETE's holders after its capture would
		 * wait for the worker, and the worker for the next redo point.
		 */
		if (files)
			MyProc->delayChkptFlags |= DELAY_CHKPT_COMPLETE;
		while (redo != served)
		{
			if (basebackup_waits_for_checkpoint())
			{
				MemoryContext old = MemoryContextSwitchTo(image_cxt);

				nvm_backup_log_image("pg_basebackup", true);
				MemoryContextSwitchTo(old);
				MemoryContextReset(image_cxt);
			}
			if (files)
			{
				MemoryContext old = MemoryContextSwitchTo(image_cxt);

				/* the checkpoint waits for the manifest before its record */
				capture_or_panic(NVM_CAPTURE_ONLINE, InvalidXLogRecPtr, redo, release_start,
								 "a checkpoint");
				MemoryContextSwitchTo(old);
				MemoryContextReset(image_cxt);
			}
			served = redo;
			MyProc->delayChkptFlags |= DELAY_CHKPT_START;
			redo = GetRedoRecPtr();
		}
		MyProc->delayChkptFlags &= ~(DELAY_CHKPT_START | DELAY_CHKPT_COMPLETE);
		CommitTransactionCommand();
	}
}

/*
 * nvm_backup_register registers the worker when base backups can carry
 * nvm rows (nvm.wal_redo on, wal_level replica or logical); called from
 * _PG_init.  It runs while the server is not in recovery.
 */
void
nvm_backup_register(void)
{
	BackgroundWorker worker;

	if (!nvm_wal_redo || wal_level < WAL_LEVEL_REPLICA)
		return;
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "nvmam");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "nvm_backup_watch_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "nvm backup watch");
	snprintf(worker.bgw_type, BGW_MAXLEN, "nvm backup watch");
	RegisterBackgroundWorker(&worker);
}
