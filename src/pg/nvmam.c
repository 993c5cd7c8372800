/*-------------------------------------------------------------------------
 *
 * nvmam.c
 *	  Module initialisation of the nvm table access method: settings, the
 *	  pool mapping, shared memory, and hook registration.
 *
 * The module must be loaded through shared_preload_libraries.  _PG_init
 * runs in the postmaster before it forks: it opens (or creates) the pool
 * file and maps it, so every backend inherits the mapping at the same
 * address.  shmem_request_hook reserves the PG layer's shared memory (the
 * binding's, the row locks', the wait tokens, the xmin-token counter,
 * the parallel leaders' views); the core's volatile state lives
 * in an area of its own that grows with the pool (nvm_growth.c).
 * shmem_startup_hook builds that state from the pool and runs recovery.
 * After a backend crash the postmaster reinitialises shared memory:
 * _PG_init and shmem_request_hook do not run again, but shmem_startup_hook
 * does (with a fresh, not yet initialised area) while the pool mapping
 * survives, and that is when crash recovery runs.
 *
 * Settings.  nvm_settings.c defines the module-wide nvm.* settings (those
 * read here, those handed to the core, those more than one file reads);
 * nvm_wait.c, nvm_growth.c and nvm_durability.c define the settings only
 * they read.  define_settings has them all defined, in that order.
 *
 * Right after recovery, shmem start-up sweeps the pool as PostgreSQL
 * sweeps its files at start: the storage of every temporary nvm table is
 * dropped (their sessions are gone), and after an unclean shutdown the
 * storage of every unlogged nvm table is emptied (PostgreSQL resets their
 * files and indexes from their init forks in the same case).  Then, after
 * an unclean shutdown, the index roots that log-free commits logged in the
 * pool become the list of index entries to check and put back when their
 * tables are first used (indexlog.h, nvm_repair.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/twophase.h"
#include "access/xlog.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "common/file_perm.h"
#include "executor/executor.h"
#include "nodes/parsenodes.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "core.h"
#include "indexlog.h"
#include "pool.h"
#include "store.h"
#include "txn.h"

#include "am/nvm_ddl.h"
#include "am/nvm_planner.h"
#include "checkpoint/nvm_backup.h"
#include "checkpoint/nvm_checkpoint.h"
#include "claim/nvm_binding.h"
#include "claim/nvm_claim.h"
#include "claim/nvm_durability.h"
#include "claim/nvm_repair.h"
#include "logical/nvm_seqlog.h"
#include "logical/nvm_wal.h"
#include "nvm_settings.h"
#include "nvm_xact_end.h"
#include "redo/nvm_feedback.h"
#include "redo/nvm_rebuild.h"
#include "redo/nvm_redo.h"
#include "redo/nvm_redo_flusher.h"
#include "redo/nvm_replay.h"
#include "redo/nvm_resync.h"
#include "space/nvm_drop.h"
#include "space/nvm_growth.h"
#include "wait/nvm_decision.h"
#include "wait/nvm_prepared_locks.h"
#include "wait/nvm_wait.h"
#include "xact/nvm_commit.h"
#include "xact/nvm_import.h"
#include "xact/nvm_imported_snapshot.h"
#include "xact/nvm_indoubt.h"
#include "xact/nvm_parallel.h"
#include "xact/nvm_published.h"
#include "xact/nvm_snapshot.h"
#include "xact/nvm_token.h"
#include "xact/nvm_xact.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* Clock slots a pool provides: the most that 10 bits of clock id can name. */
#define NVM_POOL_SLOTS		NVM_MAX_SLOTS

/* Whether the last stop was not a clean shutdown (set at shmem start-up). */
static bool nvm_unclean_start = false;
static XLogRecPtr nvm_last_checkpoint = InvalidXLogRecPtr;	/* pg_control's, at start */

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

static void define_settings(void);
static uint32 nvm_max_pins(void);
static void nvm_open_pool(void);
static void nvm_shmem_request(void);
static void nvm_shmem_startup(void);
static bool nvm_shutdown_was_unclean(void);
static void nvm_sweep_pool(void);
static void nvm_recover_index_log(void);
static void nvm_executor_start(QueryDesc *queryDesc, int eflags);
static void nvm_executor_end(QueryDesc *queryDesc);
static void nvm_process_utility(PlannedStmt *pstmt, const char *queryString,
								bool readOnlyTree, ProcessUtilityContext context,
								ParamListInfo params, QueryEnvironment *queryEnv,
								DestReceiver *dest, QueryCompletion *qc);
static void nvm_postmaster_exit(int code, Datum arg);

/*
 * nvm_log_at_first_access runs at the first access to nvm rows after a start
 * that needs it (the binding's "resync" state): the index entries a crash
 * lost are put back (nvm_repair.c), then the rows a crash may have lost the
 * redo of are logged again (nvm_resync.c), so that a standby's indexes have
 * the entries of those rows before it replays them.  A start logs no image
 * of the pool: the checkpoint files and the WAL after them rebuild it.
 */
static void
nvm_log_at_first_access(void)
{
	nvm_repair_at_start();
	nvm_resync_run();
}

/*
 * _PG_init defines the settings, maps the pool and installs the hooks.  It
 * refuses to run anywhere but in shared_preload_libraries processing.
 */
void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("nvmam must be loaded via shared_preload_libraries"),
				 errhint("Add nvmam to shared_preload_libraries in postgresql.conf and restart the server.")));

	define_settings();
	nvm_open_pool();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = nvm_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = nvm_shmem_startup;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = nvm_executor_start;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = nvm_executor_end;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = nvm_process_utility;

	nvm_planner_init();
	nvm_xact_end_init();
	nvm_commit_init();
	nvm_drop_init();
	nvm_wal_init();
	nvm_redo_init(nvm_commit_session_sync);
	nvm_binding_set_resync_hook(nvm_log_at_first_access);
	nvm_binding_set_rebuild_loader(nvm_replay_load_files_now);
	nvm_imported_snapshot_init();
	nvm_feedback_init();
	nvm_redo_flusher_register();
	nvm_backup_register();
	nvm_backup_set_prepared_locks_logger(nvm_prepared_locks_log_table);

	/* children drop this callback when they start (on_exit_reset) */
	on_proc_exit(nvm_postmaster_exit, (Datum) 0);
}

/*
 * define_settings defines every nvm.* setting: the module-wide ones
 * (nvm_settings.c), then those of nvm_wait.c, nvm_growth.c,
 * nvm_durability.c and nvm_redo_flusher.c, and reserves the prefix.
 */
static void
define_settings(void)
{
	nvm_define_settings();
	nvm_wait_define_settings();
	nvm_growth_define_settings();
	nvm_durability_define_settings();
	nvm_redo_flusher_define_settings();

	MarkGUCPrefixReserved("nvm");
}

/*
 * nvm_max_pins returns how many processes may pin snapshots: one pin per
 * PGPROC (pins are indexed by pgprocno).
 */
static uint32
nvm_max_pins(void)
{
	return (uint32) (MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts);
}

/*
 * nvm_open_pool resolves the pool path (creating pg_nvm in the data
 * directory for the default one) and opens or creates the pool; every
 * failure stops the server with a message that names the file and says
 * what to do.
 */
static void
nvm_open_pool(void)
{
	NvmPoolOptions opts;
	NvmPoolOpenResult rc;
	char		errbuf[1024];
	int			sqlstate;
	const char *hint;

	if (nvm_pool_path == NULL || nvm_pool_path[0] == '\0')
	{
		char	   *dir = psprintf("%s/pg_nvm", DataDir);

		if (MakePGDirectory(dir) < 0 && errno != EEXIST)
			ereport(FATAL,
					(errcode_for_file_access(),
					 errmsg("could not create directory \"%s\": %m", dir)));
		nvm_pool_path_resolved = MemoryContextStrdup(TopMemoryContext, psprintf("%s/pool", dir));
	}
	else
		nvm_pool_path_resolved = MemoryContextStrdup(TopMemoryContext, nvm_pool_path);

	memset(&opts, 0, sizeof(opts));
	opts.path = nvm_pool_path_resolved;
	opts.create_size = (uint64) nvm_pool_size_mb << 20;
	opts.system_identifier = GetSystemIdentifier();
	opts.cc_mode = (uint32) nvm_concurrency_control;
	opts.max_slots = NVM_POOL_SLOTS;
	opts.huge_pages = (uint32) nvm_huge_pages;
	/* a pool of the other mode is converted at start-up (see pool.h) */
	opts.allow_mode_switch = true;
	nvm_growth_pool_options(&opts);

	/* a copy of a data directory never opens a pool (nvm_claim.c) */
	if (nvm_claim_detached_at_start())
	{
		opts.create_size = NVM_POOL_MIN_SIZE;
		if (nvm_pool_open_scratch(&opts, errbuf, sizeof(errbuf)) != NVM_POOL_CREATED)
			ereport(FATAL,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("could not map a scratch nvm pool: %s", errbuf)));
		return;
	}

	rc = nvm_pool_open(&opts, errbuf, sizeof(errbuf));
	if (rc == NVM_POOL_OK || rc == NVM_POOL_CREATED)
	{
		nvm_claim_check_pool(rc == NVM_POOL_CREATED);
		nvm_durability_report_storage();
		nvm_durability_choose_flushes();
		nvm_growth_opened();
	}
	switch (rc)
	{
		case NVM_POOL_OK:
			if (nvm_pool_pending_mode != 0)
				ereport(LOG,
						(errmsg("converting nvm pool \"%s\" from concurrency control %s to %s",
								nvm_pool_path_resolved,
								nvm_cc_mode_name(nvm_pool_header->cc_mode),
								nvm_cc_mode_name(nvm_concurrency_control)),
						 errdetail("Recovery runs in the old mode; afterwards every row carries its final commit status.")));
			return;
		case NVM_POOL_CREATED:
			ereport(LOG,
					(errmsg("created nvm pool \"%s\" of %d MB",
							nvm_pool_path_resolved, nvm_pool_size_mb)));
			return;
		case NVM_POOL_ERR_IO:
			sqlstate = ERRCODE_IO_ERROR;
			hint = "Check that nvm.pool_path names a file on a writable file system with room for nvm.pool_size.";
			break;
		case NVM_POOL_ERR_LOCKED:
			sqlstate = ERRCODE_LOCK_FILE_EXISTS;
			hint = "Another server uses this pool; give every cluster its own nvm.pool_path.";
			break;
		case NVM_POOL_ERR_FOREIGN:
			sqlstate = ERRCODE_CONFIG_FILE_ERROR;
			hint = "The pool belongs to another cluster; point nvm.pool_path at this cluster's pool or remove the file to start with an empty one.";
			break;
		case NVM_POOL_ERR_MODE:
			sqlstate = ERRCODE_CONFIG_FILE_ERROR;
			hint = "Set nvm.concurrency_control to the mode the pool was created with, or point nvm.pool_path at another pool.";
			break;
		case NVM_POOL_ERR_HUGE_PAGES:
			sqlstate = ERRCODE_INSUFFICIENT_RESOURCES;
			hint = "Set nvm.huge_pages to try or off, or put the pool where huge pages can map it: a DAX file system, or tmpfs with Linux 6.1 or later and transparent huge pages not set to \"deny\" for shared memory.";
			break;
		case NVM_POOL_ERR_BAD_MAGIC:
			sqlstate = ERRCODE_DATA_CORRUPTED;
			hint = "The file is not an nvm pool, or its creation did not finish; point nvm.pool_path at the right file, or remove this one if it holds no data.";
			break;
		case NVM_POOL_ERR_BAD_VERSION:
			sqlstate = ERRCODE_DATA_CORRUPTED;
			hint = "The pool was created by another version of nvmam; use that version to dump its tables.";
			break;
		case NVM_POOL_ERR_TRUNCATED:
		case NVM_POOL_ERR_BAD_CHECKSUM:
		case NVM_POOL_ERR_BAD_LAYOUT:
		default:
			sqlstate = ERRCODE_DATA_CORRUPTED;
			hint = "Restore the pool file from a copy taken while the server was stopped, or remove it to start with an empty pool (its rows are then lost).";
			break;
	}
	ereport(FATAL,
			(errcode(sqlstate),
			 errmsg("could not open nvm pool: %s", errbuf),
			 errhint("%s", hint)));
}

/*
 * nvm_shmem_request reserves the shared memory of the binding, of the row
 * locks, of the wait tokens, of the xmin-token counter, of the parallel
 * leaders' views, of what slots publish and of the sequence log's anchor,
 * and a marker that says when shared memory is new.  The core's volatile state (allocator, clock slots, table directory
 * lock) lives in shared memory of its own, which grows with the pool
 * (nvm_growth_core_area).
 */
static void
nvm_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	nvm_core_set_max_pins(nvm_max_pins());
	RequestAddinShmemSpace(sizeof(int));
	nvm_binding_shmem_request();
	RequestAddinShmemSpace(nvm_decision_shmem_size());
	RequestAddinShmemSpace(nvm_wait_shmem_size());
	RequestAddinShmemSpace(nvm_token_shmem_size());
	RequestAddinShmemSpace(nvm_parallel_shmem_size());
	RequestAddinShmemSpace(nvm_published_shmem_size());
	RequestAddinShmemSpace(nvm_seqlog_shmem_size());
	nvm_feedback_shmem_request();
	nvm_redo_shmem_request();
	RequestAddinShmemSpace(nvm_redo_flusher_shmem_size());
	RequestAddinShmemSpace(nvm_rebuild_shmem_size());
	RequestAddinShmemSpace(nvm_checkpoint_shmem_size());
}

/*
 * nvm_shmem_startup builds the core's volatile state from the pool and
 * recovers when shared memory is new: at server start and after every
 * crash-restart.
 */
static void
nvm_shmem_startup(void)
{
	bool		found;
	void	   *ptr;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	/* the claim of the pool comes before the core changes anything in it */
	nvm_binding_shmem_startup();
	nvm_core_set_max_pins(nvm_max_pins());
	(void) ShmemInitStruct("nvmam core", sizeof(int), &found);
	ptr = nvm_growth_core_area();
	if (!found)
	{
		if (!nvm_core_startup(ptr))
			ereport(FATAL,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("could not allocate the shared state of nvm pool \"%s\": %m",
							nvm_pool_path_resolved),
					 errhint("Free memory on the server.")));
		if (nvm_pool_pending_mode != 0)
		{
			ereport(WARNING,
					(errmsg("nvm pool \"%s\" not converted: a prepared transaction that wrote nvm rows is still pending",
							nvm_pool_path_resolved),
					 errhint("Commit or roll back the prepared transaction and restart the server to convert the pool.")));
			nvm_pool_pending_mode = 0;
		}
		nvm_sweep_pool();
		nvm_recover_index_log();
		nvm_redo_start(nvm_unclean_start, nvm_last_checkpoint);
		nvm_snapshot_set_policy((NvmSnapshotPolicy) nvm_snapshot_buffering);
	}
	else
		nvm_core_attach(ptr);
	LWLockRelease(AddinShmemInitLock);
	nvm_decision_shmem_startup();
	nvm_wait_shmem_startup();
	nvm_token_shmem_startup();
	nvm_parallel_shmem_startup();
	nvm_published_shmem_startup();
	nvm_seqlog_shmem_startup();
	nvm_feedback_shmem_startup();
	nvm_redo_shmem_startup();
	nvm_redo_flusher_shmem_startup();
	nvm_rebuild_shmem_startup();
	nvm_checkpoint_shmem_startup();
}

/*
 * nvm_shutdown_was_unclean says whether the cluster was not shut down
 * cleanly before this start: pg_control, read from disk, says neither
 * "shut down" nor "shut down in recovery".  Shared memory is set up before
 * the startup process runs, so the file still holds the state the last
 * run left: DB_SHUTDOWNED after a clean shutdown, "in production" (or "in
 * crash recovery") after a crash, an immediate shutdown or, without a
 * postmaster restart, a crash-restart (which runs shmem start-up again).
 * The startup process then does crash recovery, and resets unlogged
 * relations, in exactly these cases.  (The pool's own clean-shutdown mark
 * is not used: an immediate shutdown also exits the postmaster normally.)
 * A pg_control that cannot be read counts as unclean.  It notes the last
 * checkpoint too: WAL up to it survived (nvm_redo_start).
 */
static bool
nvm_shutdown_was_unclean(void)
{
	bool		crc_ok = false;
	ControlFileData *cf = get_controlfile(DataDir, &crc_ok);
	bool		unclean;

	unclean = !crc_ok ||
		(cf->state != DB_SHUTDOWNED && cf->state != DB_SHUTDOWNED_IN_RECOVERY);
	nvm_last_checkpoint = crc_ok ? cf->checkPoint : InvalidXLogRecPtr;
	pfree(cf);
	return unclean;
}

/*
 * nvm_sweep_pool drops the storage of every temporary nvm table and, after
 * an unclean shutdown, empties that of every unlogged one (see the file
 * header).  It runs in the postmaster after recovery, before any backend
 * can use the pool.
 */
static void
nvm_sweep_pool(void)
{
	NvmSweepResult r;

	nvm_unclean_start = nvm_shutdown_was_unclean();
	nvm_table_sweep(nvm_unclean_start, &r);
	if (r.temp_dropped > 0 || r.unlogged_emptied > 0)
		ereport(LOG,
				(errmsg("nvm pool: dropped the storage of %u temporary tables, emptied %u unlogged tables",
						r.temp_dropped, r.unlogged_emptied)));
}

/*
 * nvm_recover_index_log turns the index roots that log-free commits logged
 * in the pool into the list of index entries to repair, after a crash
 * (indexlog.h; the repair itself is nvm_repair.c's); after a clean
 * shutdown the WAL holds every entry and the log is emptied.  It runs in
 * the postmaster after recovery and the sweep, before any backend can use
 * the pool.  The list needs a little room in the pool; without it the
 * server cannot guarantee that committed rows are found through their
 * indexes, and does not start.
 */
static void
nvm_recover_index_log(void)
{
	int64		pending = nvm_indexlog_recover(!nvm_unclean_start);

	if (pending < 0)
		ereport(FATAL,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("nvm pool \"%s\" has no room for the list of index entries to repair after a crash",
						nvm_pool_path_resolved),
				 errdetail("Index entries of rows committed just before the crash may have been lost with the WAL; they are put back from the pool when their tables are first used."),
				 errhint("Move the pool file to a larger one with the server stopped (nvm.pool_path), or free space by restoring a dump into a new pool.")));
	if (pending > 0)
		ereport(LOG,
				(errmsg("nvm pool: %lld index entries of transactions committed without a WAL flush are checked before their tables are used",
						(long long) pending)));
}

/*
 * nvm_executor_start logs the sequence advances a crash left in the pool
 * (nvm_seqlog.c), marks a statement boundary (also for queries run by
 * functions) before the executor creates its scans; a query with a
 * crosscheck snapshot (a foreign-key check in REPEATABLE READ) scans with
 * the latest snapshot; a query that may use parallel workers publishes
 * the view they are to read with (nvm_parallel.c).
 */
static void
nvm_executor_start(QueryDesc *queryDesc, int eflags)
{
	nvm_seqlog_finish();
	nvm_xact_statement_boundary();
	nvm_xact_query_start(queryDesc);
	nvm_commit_note_query(queryDesc);
	if (queryDesc->crosscheck_snapshot != InvalidSnapshot)
		nvm_xact_statement_sees_latest();
	if (queryDesc->plannedstmt->parallelModeNeeded && nvm_parallel_may_publish())
	{
		/* the vector first: taking it decides whether a snapshot is imported */
		const NvmSnapshot *snap = nvm_xact_statement_snapshot();
		uint64		txid = nvm_xact_my_txid();

		nvm_parallel_publish(snap, txid, nvm_imported_snapshot_applies());
	}
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/*
 * nvm_executor_end ends the statement, then logs the image of the pool for
 * a base backup that the statement started with pg_backup_start()
 * (nvm_backup.c).
 */
static void
nvm_executor_end(QueryDesc *queryDesc)
{
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
	nvm_backup_after_statement();
}

/*
 * imported_snapshot_id returns the snapshot id of a SET TRANSACTION
 * SNAPSHOT statement (copied), else NULL.
 */
static char *
imported_snapshot_id(PlannedStmt *pstmt)
{
	VariableSetStmt *vs;

	if (!IsA(pstmt->utilityStmt, VariableSetStmt))
		return NULL;
	vs = (VariableSetStmt *) pstmt->utilityStmt;
	if (vs->kind != VAR_SET_MULTI || strcmp(vs->name, "TRANSACTION SNAPSHOT") != 0 ||
		list_length(vs->args) != 1 || !IsA(linitial(vs->args), A_Const))
		return NULL;
	return pstrdup(strVal(&linitial_node(A_Const, vs->args)->val));
}

/*
 * nvm_process_utility logs the sequence advances a crash left in the pool
 * (nvm_seqlog.c), marks a statement boundary for utility statements,
 * which read tables without the executor (COPY TO, for one), and lets
 * nvm_ddl.c check or adjust it (temporary and unlogged tables created
 * without USING are heap tables when nvm is the default access method).
 */
static void
nvm_process_utility(PlannedStmt *pstmt, const char *queryString,
					bool readOnlyTree, ProcessUtilityContext context,
					ParamListInfo params, QueryEnvironment *queryEnv,
					DestReceiver *dest, QueryCompletion *qc)
{
	char	   *imported = imported_snapshot_id(pstmt);

	nvm_seqlog_finish();
	nvm_xact_statement_boundary();
	nvm_commit_note_utility(pstmt);
	pstmt = nvm_ddl_utility(pstmt, &readOnlyTree);
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);

	/* an imported snapshot reads nvm rows as its exporter does */
	if (imported != NULL)
		nvm_import_snapshot(imported);

	/* the prepared transaction's nvm rows are final before it returns */
	if (IsA(pstmt->utilityStmt, TransactionStmt))
	{
		TransactionStmt *stmt = (TransactionStmt *) pstmt->utilityStmt;

		if (stmt->kind == TRANS_STMT_COMMIT_PREPARED ||
			stmt->kind == TRANS_STMT_ROLLBACK_PREPARED)
			nvm_xact_resolve_prepared();
	}
}

/*
 * nvm_postmaster_exit marks the pool cleanly shut down when the postmaster
 * exits normally.  Recovery runs at every start whatever the mark says, so
 * an exit that only looks normal (an immediate shutdown) costs nothing.
 */
static void
nvm_postmaster_exit(int code, Datum arg)
{
	if (code == 0 && nvm_pool_base != NULL)
		nvm_core_shutdown();
}
