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
 * replays the WAL from R into it (nvm_replay.c, recovery/nvm_binding.c):
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
 *
 * The same worker logs the image at every checkpoint, the same way, where
 * commits of nvm rows are durable through the WAL (nvm.durability,
 * recovery/nvm_durability.c): the WAL after the redo point of the last
 * checkpoint then always holds one, from which a pool torn or lost by a
 * crash of the operating system is rebuilt.  At its start it makes the
 * first access to nvm rows, which logs the image a start needs.
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
#include "commands/progress.h"
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

#include "gc.h"
#include "pool.h"
#include "store.h"
#include "txn.h"

#include "nvm_settings.h"
#include "recovery/nvm_binding.h"
#include "recovery/nvm_durability.h"
#include "wal/nvm_backup.h"
#include "wal/nvm_redo.h"
#include "wal/nvm_redofmt.h"
#include "wal/nvm_resync.h"
#include "wal/nvm_wal.h"

/* How often the worker looks whether a checkpoint chose its redo point. */
#define NVM_BACKUP_LOOK_MS		20

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
} ImageCounts;

/* log_image_phase writes IMAGE BEGIN or END and returns its end. */
static XLogRecPtr
log_image_phase(uint8 phase, const ImageCounts *counts)
{
	xl_nvm_image rec;

	memset(&rec, 0, sizeof(rec));
	rec.phase = phase;
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
 * log_table logs the rows of key's table as one group, looking the table
 * up inside the group (a drop or truncate may have replaced it since the
 * directory was read); a table gone meanwhile logs nothing.
 */
static void
log_table(const NvmTableKey *key, ImageCounts *counts)
{
	nvm_redo_group_begin();
	PG_TRY();
	{
		NvmTable	t;
		uint64		rows = 0;

		if (nvm_table_open(key, &t))
		{
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
 * log_all_tables logs every permanent table of the directory once; tables
 * that appear while it runs are logged by further passes (a table created
 * after the backup's start has its own STORAGE record, but one more image
 * of it costs nothing wrong).
 */
static void
log_all_tables(ImageCounts *counts)
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
			log_table(&key, counts);
			CHECK_FOR_INTERRUPTS();
		}
	}
	hash_destroy(done);
}

/*
 * nvm_backup_log_image logs the image of the pool (see the file header)
 * for a base backup that started (for_backup) or as the checkpoint of the
 * pool that durability through the WAL needs (recovery/nvm_durability.c);
 * why names the occasion for the log.  It does nothing where no redo is
 * written (nvm.wal_redo off, wal_level minimal, recovery: a backup of a
 * standby carries no image, and its restore refuses nvm tables), nor for a
 * data directory detached from its pool (whose rows are not there).
 */
void
nvm_backup_log_image(const char *why, bool for_backup)
{
	ImageCounts counts;
	volatile XLogRecPtr begin = InvalidXLogRecPtr;
	volatile XLogRecPtr end = InvalidXLogRecPtr;
	int			pin;
	bool		own_pin;

	if (!nvm_redo_needed() || nvm_pool_base == NULL || nvm_binding_is_detached())
		return;
	memset(&counts, 0, sizeof(counts));
	/*
	 * The versions read stay until the pin goes; a transaction's pin of
	 * this session, older, does as well.
	 */
	pin = MyProc->pgprocno;
	own_pin = !nvm_gc_is_pinned(pin);
	if (own_pin)
	{
		NvmSnapshot *snap = palloc(sizeof(NvmSnapshot));

		nvm_snapshot_take_pinned(pin, snap);
		pfree(snap);
	}
	PG_TRY();
	{
		begin = log_image_phase(XLNVM_IMAGE_BEGIN, NULL);
		log_all_tables(&counts);
		(void) nvm_indoubt_each(log_indoubt, &counts);
		end = log_image_phase(XLNVM_IMAGE_END, &counts);
		XLogFlush(end);
	}
	PG_FINALLY();
	{
		if (own_pin)
			nvm_gc_unpin(pin);
	}
	PG_END_TRY();
	if (for_backup)
		ereport(LOG,
				(errmsg("nvm: logged the rows of %llu nvm tables (%llu rows, %u prepared transactions) for a base backup",
						(unsigned long long) counts.tables, (unsigned long long) counts.rows,
						counts.indoubt),
				 errdetail("The backup was started by %s; a data directory restored from it rebuilds its nvm pool from the WAL.",
						   why)));
	else if ((uint64) (end - begin) > (uint64) max_wal_size_mb * 1024 * 1024 / 4)
		ereport(WARNING,
				(errmsg("nvm: the checkpoint of the pool at %s wrote %llu MB of WAL, more than a quarter of max_wal_size",
						why, (unsigned long long) ((end - begin) >> 20)),
				 errdetail("Commits of nvm rows are durable through the WAL, so every checkpoint logs every nvm row; checkpoints that WAL volume triggers then follow each other closely."),
				 errhint("Raise max_wal_size to several times the size of the nvm tables, or put the pool on persistent memory.")));
	else
		ereport(log_checkpoints ? LOG : DEBUG1,
				(errmsg("nvm: logged the rows of %llu nvm tables (%llu rows, %u prepared transactions) as the checkpoint of the pool at %s",
						(unsigned long long) counts.tables, (unsigned long long) counts.rows,
						counts.indoubt, why),
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
		LocalPgBackendStatus *l = pgstat_fetch_stat_local_beentry(i);

		if (l != NULL &&
			l->backendStatus.st_progress_command == PROGRESS_COMMAND_BASEBACKUP &&
			l->backendStatus.st_progress_param[PROGRESS_BASEBACKUP_PHASE] ==
			PROGRESS_BASEBACKUP_PHASE_WAIT_CHECKPOINT)
			return true;
	}
	return false;
}

/*
 * nvm_backup_watch_main is the worker (see the file header): a transaction
 * that holds DELAY_CHKPT_START until a checkpoint chooses its redo point,
 * then the image if a base backup waits for that checkpoint, then the
 * next transaction.
 */
void
nvm_backup_watch_main(Datum arg)
{
	MemoryContext image_cxt;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("nvm backup watch");
	image_cxt = AllocSetContextCreate(TopMemoryContext, "nvm backup image",
									  ALLOCSET_DEFAULT_SIZES);

	/*
	 * The first access to nvm rows after a start logs what the start needs
	 * (the image where commits are durable through the WAL): made here at
	 * once, it does not wait for a first query.
	 */
	StartTransactionCommand();
	(void) nvm_binding_usable();
	CommitTransactionCommand();

	for (;;)
	{
		XLogRecPtr	redo;

		StartTransactionCommand();
		MyProc->delayChkptFlags |= DELAY_CHKPT_START;
		redo = GetRedoRecPtr();
		while (GetRedoRecPtr() == redo)
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
		}
		if (basebackup_waits_for_checkpoint() || nvm_durability_through_wal())
		{
			MemoryContext old = MemoryContextSwitchTo(image_cxt);

			if (basebackup_waits_for_checkpoint())
				nvm_backup_log_image("pg_basebackup", true);
			else
				nvm_backup_log_image("a checkpoint", false);
			MemoryContextSwitchTo(old);
			MemoryContextReset(image_cxt);
		}
		MyProc->delayChkptFlags &= ~DELAY_CHKPT_START;
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
