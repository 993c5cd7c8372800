/*-------------------------------------------------------------------------
 *
 * nvm_xact.c
 *	  Transaction glue between PostgreSQL and the concurrency control of
 *	  the core (MCSI, or the N2DB baseline behind the same interface).
 *
 * Every backend that writes nvm rows owns a clock slot, claimed at its
 * first write and given back when the backend exits; read-only backends
 * never take one, so more backends than slots can read.  The backend's one
 * NvmTxn follows PostgreSQL's transaction: it gets its txid at the first
 * nvm write and is committed or aborted at the transaction's end
 * (nvm_xact_end.c owns the callbacks); a subtransaction's end rolls back
 * or hands up the versions written at its nesting level.
 *
 * Snapshots.  PostgreSQL has no hook around GetSnapshotData, and a
 * transaction that writes only nvm rows may leave PostgreSQL's snapshots
 * unchanged, so the MCSI vector cannot be derived from PostgreSQL's
 * snapshot.  Instead, ExecutorStart and ProcessUtility mark statement
 * boundaries (queries run inside functions included), and the first access
 * that needs a vector after a boundary takes a new one in READ COMMITTED;
 * with a transaction snapshot (REPEATABLE READ) the first vector serves the
 * whole transaction.  Scans copy the vector they began with, so a scan
 * keeps its view while later statements move on.  Own changes are judged
 * by command id against snapshot->curcid, exactly as heap does.
 *
 * Waiting.  Every writer publishes its virtual transaction id for its
 * clock slot (nvm_published.c), on which nvm's own writers and lockers
 * wait (nvm_wait.c).  btree's uniqueness check and ON CONFLICT wait on
 * what SnapshotDirty names instead: a transaction that creates index
 * entries (an insert into an indexed table, an update that changes an
 * indexed column) or deletes from an indexed table publishes its
 * top-level xid if it has one, else an xid stand-in (nvm_standin.c), a
 * lock it holds until it ends, without the cost of an xid.  A
 * SERIALIZABLE transaction takes and publishes its xid (its versions name
 * it for nvm_ssi.c), and so does, with wal_level = logical, one that
 * writes a table PostgreSQL decodes (nvm_wal.c).  Other transactions get
 * no xid from nvm.
 *
 * Committing.  A transaction that wrote nothing but nvm rows and their
 * index entries commits on its nvm status alone, without a WAL flush: its
 * index entries are logged in the pool and put back after a crash that
 * lost their WAL.  One that also wrote WAL-logged data its outcome
 * depends on (heap rows, catalog changes) is tied to PostgreSQL's commit
 * record through an in-doubt marker.  nvm_commit.c decides and prepares
 * both, one call per transaction event (nvm_commit_at_xact_end); this file
 * then writes the nvm status.
 *
 * Two-phase commit.  PREPARE TRANSACTION marks the nvm transaction in
 * doubt under its xid before the prepare record (nvm_commit.c), and
 * then hands it over to the in-doubt machinery of the core, as if a crash
 * had left it in doubt (hand_over_prepared): no snapshot includes it until
 * it is resolved from PostgreSQL's commit log, which resolve_indoubt
 * answers only once the xid is no longer in progress.  COMMIT and ROLLBACK
 * PREPARED resolve it before they return (nvmam.c's utility hook); the
 * next snapshot, a waiter woken by the xid's end, or a reader meeting its
 * versions (nvm_xact_settle_indoubt) may get there first.  The backend
 * leaves the slot to the prepared transaction and claims another at its
 * next write.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "executor/execdesc.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#if PG_VERSION_NUM >= 160000
#include "parser/parse_relation.h"
#endif
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "gc.h"
#include "indoubt.h"
#include "pool.h"

#include "claim/nvm_binding.h"
#include "nvm_compat.h"
#include "nvm_routine.h"
#include "nvm_settings.h"
#include "redo/nvm_redo.h"
#include "redo/nvm_replay.h"
#include "space/nvm_relation.h"
#include "xact/nvm_commit.h"
#include "xact/nvm_imported_snapshot.h"
#include "xact/nvm_parallel.h"
#include "xact/nvm_published.h"
#include "xact/nvm_standin.h"
#include "xact/nvm_xact.h"

/* This backend's clock slot (-1 until the first write) and transaction. */
static int	nvm_slot = -1;
static NvmTxn nvm_txn;

/* Whether this transaction's xid, and its xid stand-in, are published in the slot. */
static bool nvm_xid_published = false;
static bool nvm_standin_published = false;

/* Whether the committing transaction commits log-free (nvm_commit.c). */
static bool nvm_log_free_commit = false;

/* Whether nvm_xact_backend_exit is registered. */
static bool nvm_exit_registered = false;

/*
 * The statement snapshot: valid while nvm_snap_valid, taken at statement
 * number nvm_snap_statement.  nvm_statement counts statement boundaries.
 */
static NvmSnapshot *nvm_snap = NULL;
static bool nvm_snap_valid = false;
static uint64 nvm_snap_statement = 0;
static uint64 nvm_statement = 0;

/*
 * A statement that must see the latest commits although the transaction
 * has a transaction snapshot: a foreign-key check that runs with a
 * crosscheck snapshot (ri_triggers.c, detectNewRows in REPEATABLE READ)
 * scans with PostgreSQL's latest snapshot.  It gets its own fresh vector.
 */
static bool nvm_statement_latest = false;
static NvmSnapshot *nvm_latest_snap = NULL;
static uint64 nvm_latest_statement = 0;

/*
 * A snapshot imported with SET TRANSACTION SNAPSHOT whose nvm view could
 * not be adopted (nvm_xact_adopt_snapshot): why, or NULL.  Reading nvm
 * tables in such a transaction is refused rather than done with a view
 * the PostgreSQL snapshot does not match.
 */
static const char *nvm_snap_import_refused = NULL;

/* This backend's counters, for nvm_backend_stats(). */
static NvmBackendStats nvm_stats;

static void nvm_xact_backend_exit(int code, Datum arg);
static void nvm_xact_reset(void);

/*
 * resolve_indoubt answers for an in-doubt transaction (one a crash left
 * between its marker and its nvm status, or a prepared one): did
 * PostgreSQL commit its xid?  1 yes, 0 no, -1 not known yet.
 *
 * Not while WAL is being replayed.  The marker is persisted before the
 * commit or prepare record, with no flush of its own, so a crash may have
 * lost every record carrying the xid; PostgreSQL then hands the xid out
 * again.  The answers:
 *	 - an xid at or above the next xid has not been handed out since the
 *	   crash: no record carrying it survived, so it never committed (a
 *	   transaction prepared since the start has an xid below);
 *	 - an xid a live backend runs under was handed out again: the marker's
 *	   transaction never committed (a prepared transaction's xid belongs to
 *	   no backend, PostgreSQL moves it to a dummy process before the
 *	   PREPARE callbacks run);
 *	 - another xid in progress is a prepared transaction's (until COMMIT or
 *	   ROLLBACK PREPARED, also after a restart), or a subtransaction's that
 *	   took the xid again: not known yet (the owner's commit resolves the
 *	   marker first, nvm_commit_abort_reused_xids);
 *	 - on a standby replaying into its own pool, PostgreSQL's commit log as
 *	   replay has brought it: committed, aborted, or not known yet;
 *	 - otherwise PostgreSQL's commit log has the final answer (it is marked
 *	   before the xid stops being in progress, heap's order of checks), and
 *	   a "committed" is the marker's own transaction's: a new owner of the
 *	   xid resolves the marker as aborted before its commit record.  A
 *	   commit record written asynchronously (COMMIT PREPARED with
 *	   synchronous_commit off) is flushed first, so that the nvm status
 *	   never gets ahead of it.
 */
static int
resolve_indoubt(uint64 xid64)
{
	TransactionId xid = (TransactionId) xid64;

	if (RecoveryInProgress())
	{
		/*
		 * A standby replaying into its own pool (a prepared transaction of
		 * the primary, nvm_replay.c) answers from the commit log as far as
		 * replay has brought it; anything else waits for the end of
		 * recovery.
		 */
		if (!nvm_binding_is_replica())
			return -1;
		return nvm_replay_resolve_indoubt(xid64);
	}
	if (!TransactionIdPrecedes(xid, ReadNextTransactionId()))
		return 0;
	if (TransactionIdIsInProgress(xid))
		return BackendXidGetPid(xid) != 0 ? 0 : -1;
	if (!TransactionIdDidCommit(xid))
		return 0;
	XLogFlush(TransactionIdGetCommitLSN(xid));
	return 1;
}

/*
 * resolve_all_indoubt resolves every in-doubt transaction whose xid has
 * ended, if the pool is this data directory's (nvm_binding.c: a copy that
 * is refused must not decide the transactions of the original's pool from
 * its own commit log).  The WAL flushed now holds the commit records the
 * resolutions follow, so the pool records that it depends on it.
 */
static void
resolve_all_indoubt(void)
{
	if (!nvm_indoubt_pending() || !nvm_binding_usable())
		return;
	if (!RecoveryInProgress())
		nvm_binding_note_flushed();
	(void) nvm_indoubt_resolve_all(resolve_indoubt);
}

/*
 * nvm_xact_settle_indoubt: if txid is an unresolved in-doubt transaction
 * whose PostgreSQL xid has ended, resolve it now (a waiter woken by the end
 * of a prepared transaction's xid comes here before the backend that ran
 * COMMIT PREPARED may have resolved it).  Returns the xid if txid is still
 * in doubt (a pending prepared transaction: wait on the xid), else
 * InvalidTransactionId.
 */
TransactionId
nvm_xact_settle_indoubt(uint64 txid)
{
	uint64		xid = nvm_indoubt_xid_of(txid);

	if (xid == 0)
		return InvalidTransactionId;
	if (resolve_indoubt(xid) < 0)
		return (TransactionId) xid;
	resolve_all_indoubt();
	return InvalidTransactionId;
}

/*
 * nvm_xact_resolve_prepared resolves the in-doubt transactions whose xids
 * have ended; the backend that ran COMMIT PREPARED or ROLLBACK PREPARED
 * calls it before the statement returns, so that every later statement of
 * any session finds the prepared transaction's nvm rows final.  (Its row
 * locks end with its xid: nvm_rowlock.c.)
 */
void
nvm_xact_resolve_prepared(void)
{
	if (nvm_cc != NULL)
		resolve_all_indoubt();
}

/*
 * take_snapshot takes a snapshot and counts it and its cost.  Transactions
 * left in doubt by a crash are resolved first, so that no snapshot ever
 * sees them change.  The first snapshot of a transaction is pinned for
 * garbage collection: every later one of the transaction contains it, so
 * versions that any of them can see are kept until the transaction ends
 * (nvm_xact_reset unpins).  A scan or cursor never outlives its transaction
 * with an nvm snapshot (WITH HOLD cursors are materialised at commit).
 */
static void
take_snapshot(NvmSnapshot *snap)
{
	instr_time	start,
				duration;

	if (IsolationIsSerializable() && !nvm_cc_serializable())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nvm tables do not support SERIALIZABLE with nvm.concurrency_control = %s",
						nvm_concurrency_control_name()),
				 errdetail("A snapshot of this mode can miss a commit acknowledged to another session before it was taken."),
				 errhint("Use REPEATABLE READ or READ COMMITTED, or another concurrency control.")));
	resolve_all_indoubt();
	INSTR_TIME_SET_CURRENT(start);
	/* the transaction's first snapshot is pinned until it ends (gc.h) */
	nvm_snapshot_take_pinned(NVM_PROC_NUMBER(MyProc), snap);
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	nvm_stats.snapshots++;
	nvm_stats.snapshot_ns += (uint64) (INSTR_TIME_GET_DOUBLE(duration) * 1e9);
}

/*
 * finish_txn commits or aborts the nvm transaction, counting it and the
 * cost of completing it (the drain, the status write and the inlining).
 */
static void
finish_txn(bool commit)
{
	instr_time	start,
				duration;

	INSTR_TIME_SET_CURRENT(start);
	if (commit)
	{
		/*
		 * The WAL flushed by now (this transaction's commit record, if it
		 * waited for one, and every commit it may have read) is what the
		 * commit depends on; the commit's first drain makes the note
		 * durable before its status (nvm_binding.c).
		 */
		nvm_slot_note_wal((uint32) nvm_slot, (uint64) GetFlushRecPtr(NULL));
		nvm_txn_commit(&nvm_txn);
	}
	else
		nvm_txn_abort(&nvm_txn);
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	if (commit)
		nvm_stats.commits++;
	else
		nvm_stats.aborts++;
	nvm_stats.complete_ns += (uint64) (INSTR_TIME_GET_DOUBLE(duration) * 1e9);
}

/*
 * nvm_xact_get_stats copies this backend's counters, with the persist
 * counters of the core.
 */
void
nvm_xact_get_stats(NvmBackendStats *out)
{
	*out = nvm_stats;
	out->flushes = nvm_persist_stats.flushes;
	out->lines = nvm_persist_stats.lines;
	out->bytes = nvm_persist_stats.bytes;
	out->drains = nvm_persist_stats.drains;
	out->log_free_commits = nvm_commit_stats.log_free;
	out->tied_commits = nvm_commit_stats.tied;
	out->index_log_entries = nvm_commit_stats.index_log_entries;
	out->commit_wal_flushes = nvm_commit_stats.wal_flushes;
	out->sequence_positions = nvm_commit_stats.sequence_positions;
}

/*
 * nvm_xact_statement_boundary notes that a new statement starts: in READ
 * COMMITTED the next access that needs a snapshot takes a new vector.
 */
void
nvm_xact_statement_boundary(void)
{
	nvm_statement++;
	nvm_statement_latest = false;
}

/*
 * rte_required_perms returns the privileges the statement checks on the
 * range-table entry (16 on: in the statement's permission infos; none for
 * an entry without one).
 */
static AclMode
rte_required_perms(PlannedStmt *stmt, RangeTblEntry *rte)
{
#if PG_VERSION_NUM >= 160000
	if (rte->perminfoindex == 0)
		return 0;
	return getRTEPermissionInfo(stmt->permInfos, rte)->requiredPerms;
#else
	return rte->requiredPerms;
#endif
}

/*
 * query_reads_nvm says whether the query reads an nvm table: a table or
 * materialized view of its range table, read (SELECT privilege asked) and
 * of the nvm access method.  The executor holds the locks already.
 */
static bool
query_reads_nvm(QueryDesc *queryDesc)
{
	ListCell   *lc;

	foreach(lc, queryDesc->plannedstmt->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
		Relation	rel;
		bool		nvm;

		if (rte->rtekind != RTE_RELATION ||
			(rte_required_perms(queryDesc->plannedstmt, rte) & ACL_SELECT) == 0 ||
			(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW))
			continue;
		rel = RelationIdGetRelation(rte->relid);
		if (!RelationIsValid(rel))
			continue;
		nvm = nvm_routine_is_nvm(rel->rd_tableam);
		RelationClose(rel);
		if (nvm)
			return true;
	}
	return false;
}

/*
 * nvm_xact_query_start is called when the executor starts a query.  With a
 * transaction snapshot, PostgreSQL takes it at the transaction's first
 * query; so does nvm, rather than at the first nvm access, which may come
 * later (after a wait, say) and would then see commits that PostgreSQL's
 * snapshot does not (ON CONFLICT's visibility check in REPEATABLE READ).
 * In READ COMMITTED a query that reads nvm tables takes its statement's
 * vector now, before it reads any index: an index scan reads a page of
 * entries before its first fetch (a bitmap scan, every entry), and a
 * vector taken after that could see a commit whose new index entries the
 * page read did not have yet, while the row's older entries no longer
 * lead to the version it sees: the row would be missed.
 */
void
nvm_xact_query_start(QueryDesc *queryDesc)
{
	if (IsParallelWorker() || nvm_snap_import_refused != NULL)
		return;
	if (IsolationUsesXactSnapshot())
	{
		if (!nvm_snap_valid)
			(void) nvm_xact_transaction_snapshot();
	}
	else if (query_reads_nvm(queryDesc))
		(void) nvm_xact_transaction_snapshot();
}

/*
 * nvm_xact_statement_sees_latest notes that the statement that just
 * started scans with PostgreSQL's latest snapshot (it has a crosscheck
 * snapshot): it gets a fresh vector even with a transaction snapshot.
 */
void
nvm_xact_statement_sees_latest(void)
{
	nvm_statement_latest = true;
}

/*
 * nvm_xact_check_access raises an error for accesses that nvm tables do not
 * support: parallel workers whose leader published no view (nvm_parallel.c;
 * a function that reads nvm tables, marked PARALLEL SAFE, run by a worker of
 * a query that did not expect it).  SERIALIZABLE is supported: the vector
 * snapshot gives snapshot isolation, and PostgreSQL's predicate locks
 * (nvm_ssi.c) turn it into serializability, as on heap.
 */
void
nvm_xact_check_access(Relation rel)
{
	if (IsParallelWorker() && !nvm_parallel_worker_ready())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nvm table \"%s\" cannot be accessed by a parallel worker",
						RelationGetRelationName(rel)),
				 errhint("Mark functions that read nvm tables PARALLEL UNSAFE.")));
}

/*
 * nvm_xact_my_txid returns the current transaction's nvm txid, 0 if it has
 * not written yet (in a parallel worker: the leader's).
 */
uint64
nvm_xact_my_txid(void)
{
	if (IsParallelWorker())
		return nvm_parallel_leader_txid();
	return nvm_txn.txid;
}

/*
 * nvm_xact_statement_snapshot returns the vector of the current statement
 * (or transaction, with a transaction snapshot), taking it if there is
 * none yet; a parallel worker gets its leader's.  The result stays valid
 * until the next boundary; callers that live longer copy it.
 */
const NvmSnapshot *
nvm_xact_statement_snapshot(void)
{
	if (IsParallelWorker())
		return nvm_parallel_leader_snapshot();
	if (nvm_statement_latest && IsolationUsesXactSnapshot())
	{
		if (nvm_latest_snap == NULL)
			nvm_latest_snap = MemoryContextAlloc(TopMemoryContext, sizeof(NvmSnapshot));
		if (nvm_latest_statement != nvm_statement)
		{
			take_snapshot(nvm_latest_snap);
			nvm_latest_statement = nvm_statement;
		}
		return nvm_latest_snap;
	}
	return nvm_xact_transaction_snapshot();
}

/*
 * nvm_xact_transaction_snapshot returns the vector of the transaction
 * snapshot (REPEATABLE READ) or of the current statement (READ COMMITTED),
 * ignoring nvm_xact_statement_sees_latest: a crosscheck snapshot's.
 */
const NvmSnapshot *
nvm_xact_transaction_snapshot(void)
{
	if (IsParallelWorker())
		return nvm_parallel_leader_snapshot();
	if (nvm_snap_import_refused != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nvm tables cannot be read with this imported snapshot"),
				 errdetail("%s", nvm_snap_import_refused),
				 errhint("Export the snapshot from a REPEATABLE READ or SERIALIZABLE transaction that is still running.")));
	if (nvm_snap == NULL)
		nvm_snap = MemoryContextAlloc(TopMemoryContext, sizeof(NvmSnapshot));

	if (!nvm_snap_valid ||
		(!IsolationUsesXactSnapshot() && nvm_snap_statement != nvm_statement))
	{
		take_snapshot(nvm_snap);
		nvm_snap_valid = true;
		nvm_snap_statement = nvm_statement;
	}
	return nvm_snap;
}

/*
 * refuse_import refuses nvm tables in this transaction, whose imported
 * snapshot's nvm view cannot be adopted, for the reason given; with
 * wal_level = logical the transaction reads them by the PostgreSQL snapshot
 * it imported instead (nvm_imported_snapshot.c: a replication slot's
 * snapshot, exported by a walsender, has no nvm view).
 */
static void
refuse_import(const char *reason)
{
	if (!nvm_imported_snapshot_follow())
		nvm_snap_import_refused = reason;
}

/*
 * nvm_xact_adopt_snapshot makes the nvm view of this transaction the one of
 * the transaction that exported the snapshot it just imported (SET
 * TRANSACTION SNAPSHOT; nvm_import.c finds the exporter): the exporter's
 * pinned vector, which is its transaction snapshot when it runs REPEATABLE
 * READ or SERIALIZABLE, becomes this transaction's, pinned as well.  So
 * pg_dump's parallel workers read nvm tables as their leader does.  still_runs
 * tells, after the copy, whether the exporter's transaction kept running
 * (then its pin, and so the copy, was whole).  On failure, nvm tables are
 * refused in this transaction with the reason given (refuse_import).
 */
void
nvm_xact_adopt_snapshot(int from_pgprocno, bool (*still_runs) (void *), void *arg,
						const char *refused)
{
	if (nvm_snap == NULL)
		nvm_snap = MemoryContextAlloc(TopMemoryContext, sizeof(NvmSnapshot));
	nvm_snap_valid = false;
	nvm_snap_import_refused = NULL;
	if (refused != NULL)
	{
		refuse_import(refused);
		return;
	}
	if (nvm_gc_is_pinned(NVM_PROC_NUMBER(MyProc)) ||
		!nvm_snapshot_adopt_pinned(NVM_PROC_NUMBER(MyProc), from_pgprocno, nvm_snap))
	{
		refuse_import("The exporting transaction has not read nvm tables' snapshot yet, or has ended.");
		return;
	}
	if (!still_runs(arg))
	{
		nvm_gc_unpin(NVM_PROC_NUMBER(MyProc));
		refuse_import("The exporting transaction ended while its snapshot was imported.");
		return;
	}
	nvm_snap_valid = true;
	nvm_snap_statement = nvm_statement;
}

/*
 * nvm_xact_copy_snapshot returns a palloc'd copy (in the current memory
 * context) of snap, or of the statement snapshot if snap is NULL; only the
 * slots the vector covers are copied.
 */
NvmSnapshot *
nvm_xact_copy_snapshot(const NvmSnapshot *snap)
{
	NvmSnapshot *copy;
	size_t		size;

	if (snap == NULL)
		snap = nvm_xact_statement_snapshot();
	size = nvm_snapshot_size(snap);
	copy = palloc(size);
	memcpy(copy, snap, size);
	return copy;
}

/*
 * nvm_xact_fresh_snapshot returns a new vector, palloc'd in the current
 * memory context, independent of statement boundaries (for ANALYZE).
 */
NvmSnapshot *
nvm_xact_fresh_snapshot(void)
{
	NvmSnapshot *snap = palloc(sizeof(NvmSnapshot));

	take_snapshot(snap);
	return snap;
}

/*
 * publish_xid assigns the transaction's top-level PostgreSQL xid, if it has
 * none yet, and publishes it in the clock slot, so that others meeting its
 * versions can wait on it; the versions it writes from now on carry it.
 */
static void
publish_xid(void)
{
	TransactionId xid;

	if (nvm_xid_published)
		return;
	xid = GetTopTransactionId();
	nvm_published_set_xid(nvm_slot, xid);
	nvm_txn.external_id = (uint32) xid;
	nvm_xid_published = true;
}

/*
 * publish_wait_target publishes what SnapshotDirty's callers are to wait
 * on: the top-level xid if the transaction has one, else its xid
 * stand-in, whose lock is taken first (or, in the rare case that the
 * lock is not free, the xid after all).
 */
static void
publish_wait_target(void)
{
	uint32		standin;

	if (nvm_xid_published || nvm_standin_published)
		return;
	standin = nvm_standin_for_txid(nvm_txn.txid);
	if (TransactionIdIsValid(GetTopTransactionIdIfAny()) || !nvm_standin_take(standin))
	{
		publish_xid();
		return;
	}
	nvm_published_set_standin(nvm_slot, standin);
	nvm_standin_published = true;
}

/*
 * nvm_xact_begin_write prepares the transaction for an nvm write: it claims
 * a clock slot if the backend has none, gives the transaction its txid and
 * publishes its virtual transaction id; then what waiters of the write
 * need (NvmWriteWaiters), before the write can be seen: for
 * NVM_WAITERS_DIRTY an xid or its stand-in, for NVM_WAITERS_XID the
 * top-level PostgreSQL xid, assigned if need be.
 */
NvmTxn *
nvm_xact_begin_write(NvmWriteWaiters waiters)
{
	NvmSlotShared *ss;

	if (nvm_slot < 0)
	{
		int			slot = nvm_slot_acquire((uint32) MyProcPid);

		if (slot < 0)
			ereport(ERROR,
					(errcode(ERRCODE_TOO_MANY_CONNECTIONS),
					 errmsg("too many backends are writing nvm tables"),
					 errdetail("All %d clock slots of the nvm pool are in use.",
							   (int) nvm_cc->max_slots),
					 errhint("Reduce the number of sessions that write nvm tables.")));
		nvm_slot = slot;
		nvm_txn_init(&nvm_txn, slot);
		if (!nvm_exit_registered)
		{
			on_shmem_exit(nvm_xact_backend_exit, (Datum) 0);
			nvm_exit_registered = true;
		}
	}

	ss = &nvm_cc->slots[nvm_slot];
	if (nvm_txn.txid == NVM_INVALID_TXID)
	{
		uint64		txid;

		/*
		 * After the slot is taken, so that a clean stop that closes writes
		 * and then waits for the slots in use sees every writer that got
		 * past this (redo/nvm_redo.c).
		 */
		pg_memory_barrier();
		nvm_redo_wait_writable();
		txid = nvm_txn_begin_write(&nvm_txn);
		VirtualTransactionId vxid;

		if (txid == NVM_INVALID_TXID)
			nvm_report_write_start_failed();
		NVM_VXID_BACKEND(vxid) = NVM_PROC_BACKEND(MyProc);
		vxid.localTransactionId = NVM_PROC_LXID(MyProc);
		nvm_published_set_vxid(nvm_slot, vxid);
		atomic_store(&ss->running_txid, txid);
	}

	/*
	 * A serializable transaction always has an xid: its versions carry it,
	 * so that readers can report read-write conflicts (nvm_ssi.c).
	 */
	if (waiters == NVM_WAITERS_XID || IsolationIsSerializable())
		publish_xid();
	else if (waiters == NVM_WAITERS_DIRTY)
		publish_wait_target();
	return &nvm_txn;
}

/*
 * nvm_xact_running_txn returns the current transaction's nvm transaction
 * if it has written (has a txid), else NULL.
 */
NvmTxn *
nvm_xact_running_txn(void)
{
	if (nvm_slot < 0 || nvm_txn.txid == NVM_INVALID_TXID)
		return NULL;
	return &nvm_txn;
}

/*
 * nvm_xact_level returns the subtransaction nesting level that new versions
 * belong to.
 */
int
nvm_xact_level(void)
{
	return GetCurrentTransactionNestLevel();
}

/*
 * nvm_xact_published_xid returns the PostgreSQL xid that the running nvm
 * transaction txid has published (nvm_published.c), or the xid that
 * decides it if it is in doubt (recovered, or prepared), or
 * InvalidTransactionId if it has none or is no longer running.  The slot's
 * running txid is read before and after the xid, so an xid of a later
 * transaction on the same slot is never returned.
 */
TransactionId
nvm_xact_published_xid(uint64 txid)
{
	int			slot = (int) nvm_txid_clock_id(txid);
	NvmSlotShared *ss = &nvm_cc->slots[slot];
	TransactionId xid;

	if (atomic_load(&ss->running_txid) != txid)
		return InvalidTransactionId;
	xid = (TransactionId) nvm_indoubt_xid_of(txid);
	if (!TransactionIdIsValid(xid))
		xid = nvm_published_xid(slot);
	if (atomic_load(&ss->running_txid) != txid)
		return InvalidTransactionId;
	return xid;
}

/*
 * nvm_xact_wait_target returns what SnapshotDirty's callers wait on for
 * the running nvm transaction txid: its xid as nvm_xact_published_xid
 * returns it, or else (InvalidTransactionId returned) its xid stand-in in
 * *standin, 0 if it has none or is no longer running.
 */
TransactionId
nvm_xact_wait_target(uint64 txid, uint32 *standin)
{
	int			slot = (int) nvm_txid_clock_id(txid);
	NvmSlotShared *ss = &nvm_cc->slots[slot];
	TransactionId xid = nvm_xact_published_xid(txid);

	*standin = 0;
	if (TransactionIdIsValid(xid))
		return xid;
	*standin = nvm_published_standin(slot);
	if (atomic_load(&ss->running_txid) != txid)
		*standin = 0;
	return InvalidTransactionId;
}

/*
 * nvm_xact_reset forgets the transaction's snapshot and clears what the
 * slot published for it.
 */
static void
nvm_xact_reset(void)
{
	nvm_snap_valid = false;
	nvm_snap_import_refused = NULL;
	if (MyProc != NULL)
		nvm_gc_unpin(NVM_PROC_NUMBER(MyProc));
	if (nvm_slot >= 0)
		nvm_published_clear(nvm_slot);
	nvm_xid_published = false;
	nvm_standin_published = false;
}

/*
 * hand_over_prepared runs once PostgreSQL has written the prepare record
 * (and before the transaction's locks pass to the prepared transaction):
 * the nvm transaction becomes an in-doubt one, as if recovery had found it
 * (nvm_txn_hand_over_indoubt), resolved from PostgreSQL's commit log once
 * COMMIT or ROLLBACK PREPARED has ended the xid.  Its slot stays reserved
 * and publishes no completion until then, so no snapshot taken before the
 * resolution sees its rows, and every one taken after does (txn.h).  The
 * backend lets the slot go; its next write claims one again.
 */
static void
hand_over_prepared(void)
{
	VirtualTransactionId none;

	/* waiters stop waiting for this backend: they wait on the xid */
	SetInvalidVirtualTransactionId(none);
	nvm_published_set_vxid(nvm_slot, none);
	nvm_txn_hand_over_indoubt(&nvm_txn);
	/* the core names its xid now (nvm_indoubt_xid_of) */
	nvm_published_clear(nvm_slot);
	nvm_slot = -1;
}

/*
 * nvm_xact_at_xact_end ends the nvm transaction with PostgreSQL's, at every
 * transaction event (nvm_xact_end.c calls it).  The commit path
 * (nvm_commit.c) has its part of every event first: at PRE_COMMIT it
 * decides and prepares how the transaction commits (a tied commit's
 * in-doubt marker included), at PRE_PREPARE it ties the outcome to the
 * xid, at COMMIT it flushes what must precede the nvm status.  COMMIT
 * comes after PostgreSQL's commit record and before the transaction's
 * locks are released, so a waiter on the published xid sees the final nvm
 * status.
 *
 * PREPARE TRANSACTION publishes the xid in the slot (others meeting its
 * versions wait on it; the prepared transaction keeps its xid lock), and
 * after the prepare record hands the transaction over (hand_over_prepared).
 * A crash before the prepare record is durable leaves an xid that never
 * committed: the transaction aborts; after it, PostgreSQL restores the
 * prepared transaction and the nvm one stays in doubt.
 */
void
nvm_xact_at_xact_end(XactEvent event)
{
	NvmTxn	   *txn = nvm_txn.txid != NVM_INVALID_TXID ? &nvm_txn : NULL;
	NvmCommitPath path;

	if (event == XACT_EVENT_COMMIT && txn != NULL &&
		nvm_debug_crash_point == NVM_CRASH_BEFORE_NVM_COMMIT)
		elog(PANIC, "nvm.debug_crash_point: crashing after the commit record, before the nvm commit");
	path = nvm_commit_at_xact_end(event, txn);
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			nvm_log_free_commit = path == NVM_COMMIT_LOG_FREE;
			return;
		case XACT_EVENT_PRE_PREPARE:
			if (txn != NULL)
				publish_xid();
			return;
		case XACT_EVENT_COMMIT:
			if (txn != NULL)
			{
				finish_txn(true);
				if (nvm_log_free_commit &&
					nvm_debug_crash_point == NVM_CRASH_AFTER_NVM_COMMIT)
					elog(PANIC, "nvm.debug_crash_point: crashing after a log-free nvm commit, before its WAL is flushed");
			}
			break;
		case XACT_EVENT_ABORT:
			if (txn != NULL)
				finish_txn(false);
			break;
		case XACT_EVENT_PREPARE:
			if (txn != NULL)
				hand_over_prepared();
			break;
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			break;
	}
	nvm_xact_reset();
}

/*
 * nvm_xact_at_subxact_end rolls back the versions of an aborted
 * subtransaction and hands those of a committed one to its parent
 * (nvm_xact_end.c calls it).  Both events are delivered while the
 * subtransaction is still current, so the nesting level is its own.
 */
void
nvm_xact_at_subxact_end(SubXactEvent event)
{
	if (nvm_txn.txid == NVM_INVALID_TXID)
		return;
	switch (event)
	{
		case SUBXACT_EVENT_ABORT_SUB:
			nvm_txn_subxact_abort(&nvm_txn, GetCurrentTransactionNestLevel());
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			nvm_txn_subxact_commit(&nvm_txn, GetCurrentTransactionNestLevel());
			break;
		case SUBXACT_EVENT_START_SUB:
		case SUBXACT_EVENT_PRE_COMMIT_SUB:
			break;
	}
}

/*
 * nvm_xact_backend_exit gives the clock slot back when the backend exits.
 * It runs after the before_shmem_exit callbacks, which abort any open
 * transaction, so the slot's transaction has normally ended already.
 */
static void
nvm_xact_backend_exit(int code, Datum arg)
{
	if (nvm_slot < 0)
		return;
	if (nvm_txn.txid != NVM_INVALID_TXID)
		nvm_txn_abort(&nvm_txn);
	nvm_xact_reset();
	nvm_slot_release(nvm_slot);
	nvm_slot = -1;
}
