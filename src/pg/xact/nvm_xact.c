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
 * Snapshots.  The vector a statement or transaction reads with is taken,
 * pinned and forgotten by nvm_snapshot.c; the transaction's end calls it
 * (nvm_xact_reset).
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
 * Two-phase commit.  PREPARE TRANSACTION publishes the xid in the slot and,
 * after the prepare record, hands the nvm transaction over to the in-doubt
 * machinery (nvm_indoubt.c, which resolves it from PostgreSQL's commit
 * log); the backend leaves the slot to the prepared transaction and claims
 * another at its next write.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "utils/rel.h"

#include "indoubt.h"
#include "pool.h"

#include "nvm_compat.h"
#include "nvm_settings.h"
#include "redo/nvm_redo.h"
#include "space/nvm_relation.h"
#include "xact/nvm_commit.h"
#include "xact/nvm_indoubt.h"
#include "xact/nvm_parallel.h"
#include "xact/nvm_published.h"
#include "xact/nvm_snapshot.h"
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
 * This backend's counters, for nvm_backend_stats() (the snapshots' are
 * nvm_snapshot.c's).
 */
static NvmBackendStats nvm_stats;

static void nvm_xact_backend_exit(int code, Datum arg);
static void nvm_xact_reset(void);

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
	out->snapshots = nvm_xact_snapshot_stats.snapshots;
	out->snapshot_ns = nvm_xact_snapshot_stats.snapshot_ns;
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
	nvm_xact_forget_snapshot();
	if (nvm_slot >= 0)
		nvm_published_clear(nvm_slot);
	nvm_xid_published = false;
	nvm_standin_published = false;
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
 * after the prepare record hands the transaction over (nvm_indoubt.c,
 * nvm_xact_hand_over_prepared) and forgets the slot.  A crash before the
 * prepare record is durable leaves an xid that never committed: the
 * transaction aborts; after it, PostgreSQL restores the prepared
 * transaction and the nvm one stays in doubt.
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
			{
				nvm_xact_hand_over_prepared(txn, nvm_slot);
				nvm_slot = -1;
			}
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
