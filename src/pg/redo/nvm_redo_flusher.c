/*-------------------------------------------------------------------------
 *
 * nvm_redo_flusher.c
 *	  The redo flusher: a background worker that flushes the WAL of nvm
 *	  commits at once while standbys stream, so that they replay nvm
 *	  commits as soon as heap's.
 *
 * An nvm commit does not wait for its COMMIT record to be flushed (its
 * durability is the pool's; nvm_redo.c), and a walsender sends only WAL
 * that is flushed.  Left to the WAL writer, a record waits for its next
 * round that flushes: up to wal_writer_delay, or until
 * wal_writer_flush_after of WAL has gathered; so a standby would see nvm
 * commits about a hundred milliseconds later than heap's, whose commits
 * flush their own WAL.  While at least one walsender runs, a backend that
 * wrote a COMMIT record raises the flusher's target to its end and sets
 * the flusher's latch (nvm_redo_flusher_request); the flusher flushes up
 * to the target (XLogFlush), then again to whatever came meanwhile, at
 * most once every NVM_FLUSHER_PACE_US, and sleeps when it has caught up.
 * Flushes made so gather every commit that came since the previous one, as
 * group commit does (a flush per commit, as heap's, made the walsender and
 * the standby handle a tiny send per commit and cost half of the
 * primary's throughput on two cores); the commits themselves never wait.
 * Without walsenders nothing changes: the WAL writer's rounds write the
 * records (nvm_redo.c wakes it).
 *
 * nvm.redo_flusher = off (reloadable) leaves the records to the WAL writer.
 * The worker runs on a server that is not in recovery (it starts when
 * recovery ends, so also after a promotion) and is registered only when
 * the server can have standbys: wal_level replica or logical,
 * max_wal_senders above zero, and nvm.wal_redo on.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "nvm_compat.h"
#include "nvm_settings.h"
#include "redo/nvm_redo_flusher.h"

/*
 * The shortest time between two flushes of the flusher: commits that come
 * meanwhile share the next one (and the walsender's next send).
 */
#define NVM_FLUSHER_PACE_US		1000

/* How often a backend looks again whether walsenders run. */
#define NVM_FLUSHER_LOOK_MS		100

typedef struct FlusherShared
{
	pg_atomic_uint64 target;	/* flush the WAL up to here */
	pg_atomic_uint32 procno;	/* the flusher's pgprocno + 1, 0 if none */
} FlusherShared;

static FlusherShared *flusher = NULL;

/* nvm.redo_flusher: off leaves COMMIT records to the WAL writer. */
static bool redo_flusher_on = true;

/* This backend's last look at the walsenders, and when it was taken. */
static bool walsenders_seen = false;
static TimestampTz walsenders_looked_at = 0;

PGDLLEXPORT void nvm_redo_flusher_main(Datum arg);

/*
 * nvm_redo_flusher_define_settings defines nvm.redo_flusher; called from
 * the module's settings function.
 */
void
nvm_redo_flusher_define_settings(void)
{
	DefineCustomBoolVariable("nvm.redo_flusher",
							 "Flushes the WAL of nvm commits at once while walsenders run.",
							 "off leaves the redo records of nvm commits to the WAL writer's rounds: "
							 "fewer WAL fsyncs, and standbys up to wal_writer_delay behind.",
							 &redo_flusher_on,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);
}

/*
 * nvm_redo_flusher_register registers the worker when the server can have
 * standbys; called from _PG_init (shared_preload_libraries).
 */
void
nvm_redo_flusher_register(void)
{
	BackgroundWorker worker;

	if (!nvm_wal_redo || wal_level < WAL_LEVEL_REPLICA || max_wal_senders == 0)
		return;
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "nvmam");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "nvm_redo_flusher_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "nvm redo flusher");
	snprintf(worker.bgw_type, BGW_MAXLEN, "nvm redo flusher");
	RegisterBackgroundWorker(&worker);
}

Size
nvm_redo_flusher_shmem_size(void)
{
	return MAXALIGN(sizeof(FlusherShared));
}

/* nvm_redo_flusher_shmem_startup finds or creates the flusher's target. */
void
nvm_redo_flusher_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	flusher = ShmemInitStruct("nvmam redo flusher", nvm_redo_flusher_shmem_size(), &found);
	if (!found)
	{
		pg_atomic_init_u64(&flusher->target, InvalidXLogRecPtr);
		pg_atomic_init_u32(&flusher->procno, 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * walsenders_run says whether a walsender runs, as this backend saw at
 * most NVM_FLUSHER_LOOK_MS ago (a new standby waits that long at most for
 * prompt flushes).
 */
static bool
walsenders_run(void)
{
	TimestampTz now = GetCurrentTimestamp();

	if (now - walsenders_looked_at < NVM_FLUSHER_LOOK_MS * 1000)
		return walsenders_seen;
	walsenders_looked_at = now;
	walsenders_seen = false;
	for (int i = 0; i < max_wal_senders && WalSndCtl != NULL; i++)
	{
		/* a racy read: a walsender just starting is seen at the next look */
		if (((volatile WalSnd *) &WalSndCtl->walsnds[i])->pid != 0)
		{
			walsenders_seen = true;
			break;
		}
	}
	return walsenders_seen;
}

/*
 * nvm_redo_flusher_request asks the flusher to flush the WAL up to end (a
 * COMMIT record's end) soon; false if there is no flusher or no walsender
 * runs, and then the caller leaves the record to the WAL writer.
 */
bool
nvm_redo_flusher_request(XLogRecPtr end)
{
	uint64		target;
	uint32		procno;

	if (!redo_flusher_on || flusher == NULL ||
		(procno = pg_atomic_read_u32(&flusher->procno)) == 0 || !walsenders_run())
		return false;
	target = pg_atomic_read_u64(&flusher->target);
	while (target < end &&
		   !pg_atomic_compare_exchange_u64(&flusher->target, &target, end))
		;
	SetLatch(&ProcGlobal->allProcs[procno - 1].procLatch);
	return true;
}

/* flusher_exit says, at the flusher's exit, that there is none. */
static void
flusher_exit(int code, Datum arg)
{
	pg_atomic_write_u32(&flusher->procno, 0);
}

/*
 * nvm_redo_flusher_main is the worker: it flushes the WAL up to the target
 * whenever the target is ahead of what is flushed, and sleeps otherwise.
 */
void
nvm_redo_flusher_main(Datum arg)
{
	TimestampTz last_flush = 0;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	before_shmem_exit(flusher_exit, (Datum) 0);
	pg_atomic_write_u32(&flusher->procno, (uint32) NVM_PROC_NUMBER(MyProc) + 1);

	while (!ShutdownRequestPending)
	{
		XLogRecPtr	target;

		ResetLatch(MyLatch);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		target = (XLogRecPtr) pg_atomic_read_u64(&flusher->target);
		if (target > GetFlushRecPtr(NULL))
		{
			TimestampTz now = GetCurrentTimestamp();

			/* flushes at most every NVM_FLUSHER_PACE_US: more commits per flush */
			if (now - last_flush < NVM_FLUSHER_PACE_US)
			{
				pg_usleep(NVM_FLUSHER_PACE_US - (now - last_flush));
				target = (XLogRecPtr) pg_atomic_read_u64(&flusher->target);
			}
			last_flush = GetCurrentTimestamp();
			XLogFlush(target);
			/* its writes and fsyncs count in pg_stat_wal, as the WAL writer's */
			pgstat_report_wal(false);
			continue;
		}
		pgstat_report_wal(true);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
	}
	proc_exit(0);
}
