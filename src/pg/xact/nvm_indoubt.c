/*-------------------------------------------------------------------------
 *
 * nvm_indoubt.c
 *	  The PostgreSQL side of in-doubt and prepared transactions: answers
 *	  from PostgreSQL's commit log for the core's in-doubt machinery
 *	  (indoubt.c), and the hand-over of a prepared transaction to it.
 *
 * An nvm transaction is in doubt when its outcome is PostgreSQL's: a
 * tied commit that a crash left between its in-doubt marker and its nvm
 * status (nvm_commit.c), or a prepared transaction.  The core keeps such
 * transactions out of every snapshot until they are resolved; this file
 * says how they end (resolve_indoubt) and when they are resolved.
 *
 * Two-phase commit.  PREPARE TRANSACTION marks the nvm transaction in
 * doubt under its xid before the prepare record (nvm_commit.c), and
 * then hands it over to the in-doubt machinery of the core, as if a crash
 * had left it in doubt (nvm_xact_hand_over_prepared, called by nvm_xact.c
 * at the PREPARE event): no snapshot includes it until it is resolved from
 * PostgreSQL's commit log, which resolve_indoubt answers only once the xid
 * is no longer in progress.  COMMIT and ROLLBACK PREPARED resolve it
 * before they return (nvmam.c's utility hook); the next snapshot
 * (nvm_snapshot.c), a waiter woken by the xid's end, or a reader meeting
 * its versions (nvm_xact_settle_indoubt) may get there first.  The backend
 * leaves the slot to the prepared transaction and claims another at its
 * next write.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xlog.h"
#include "storage/lock.h"
#include "storage/procarray.h"

#include "indoubt.h"

#include "claim/nvm_binding.h"
#include "redo/nvm_replay.h"
#include "xact/nvm_indoubt.h"
#include "xact/nvm_published.h"

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
 * nvm_xact_resolve_indoubt resolves every in-doubt transaction whose xid
 * has ended, if the pool is this data directory's (nvm_binding.c: a copy
 * that is refused must not decide the transactions of the original's pool
 * from its own commit log).  The WAL flushed now holds the commit records
 * the resolutions follow, so the pool records that it depends on it.
 */
void
nvm_xact_resolve_indoubt(void)
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
	nvm_xact_resolve_indoubt();
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
		nvm_xact_resolve_indoubt();
}

/*
 * nvm_xact_hand_over_prepared runs once PostgreSQL has written the prepare
 * record (and before the transaction's locks pass to the prepared
 * transaction): the nvm transaction txn of the clock slot becomes an
 * in-doubt one, as if recovery had found it (nvm_txn_hand_over_indoubt),
 * resolved from PostgreSQL's commit log once COMMIT or ROLLBACK PREPARED
 * has ended the xid.  Its slot stays reserved and publishes no completion
 * until then, so no snapshot taken before the resolution sees its rows,
 * and every one taken after does (txn.h).  The backend lets the slot go
 * (nvm_xact.c forgets it); its next write claims one again.
 */
void
nvm_xact_hand_over_prepared(NvmTxn *txn, int slot)
{
	VirtualTransactionId none;

	/* waiters stop waiting for this backend: they wait on the xid */
	SetInvalidVirtualTransactionId(none);
	nvm_published_set_vxid(slot, none);
	nvm_txn_hand_over_indoubt(txn);
	/* the core names its xid now (nvm_indoubt_xid_of) */
	nvm_published_clear(slot);
}
