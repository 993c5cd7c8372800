/*-------------------------------------------------------------------------
 *
 * nvm_standin.c
 *	  The xid stand-in: what btree's uniqueness check, ON CONFLICT and
 *	  exclusion constraints wait on when the nvm writer they meet has no
 *	  PostgreSQL xid.
 *
 * Those callers read SnapshotDirty after fetching a row and wait, through
 * the lock manager, on what it names: XactLockTableWait(xmin or xmax), or,
 * when speculativeToken is set, SpeculativeInsertionWait(xmin, token),
 * which waits on the lock LOCKTAG_SPECULATIVE_TOKEN (xmin, token) and
 * looks again.  A PostgreSQL xid costs a transaction that writes only nvm
 * rows a commit record, a commit-log update and a wake-up of the WAL
 * writer at nearly every commit, though nothing else needs it: the rows
 * commit on the pool alone (nvm_commit.c).  So a transaction that creates
 * index entries or deletes rows of an indexed table, and has no xid, takes
 * a stand-in instead: an exclusive lock on the speculative-token tag
 * (NVM_STANDIN_XID, stand-in), held at the top level until the transaction
 * ends, and published in its clock slot (nvm_xact.c) before its first
 * version can be seen.  SnapshotDirty then names NVM_STANDIN_XID as xmin
 * and the stand-in as speculativeToken, and the caller waits for the
 * transaction's end, exactly as it would on its xid: the nvm status is
 * final before PostgreSQL releases the transaction's locks (nvm_xact.c),
 * and the caller looks at the row again after any wait.
 *
 * The stand-in is the transaction's txid folded into 32 bits (its clock
 * slot and 22 bits of its clock value), never 0: two running transactions
 * never share one, and a waiter that read the stand-in of a transaction
 * that has ended meanwhile waits at most for a later transaction of the
 * same slot (4 million transactions later), then looks again.  Its lock is
 * taken with the top-level resource owner, so a subtransaction's rollback
 * does not let it go; a prepared transaction keeps it with its other locks
 * (and publishes its xid, which waiters then prefer), and its slot, so
 * the slot's next stand-ins are all free until it ends (nvm_standin_take
 * checks anyway).
 *
 * What users see differently from heap while waiting: pg_locks shows the
 * lock as "spectoken" instead of "transactionid", a deadlock report names
 * "speculative token N of transaction 1", and a lock timeout or deadlock
 * error has no "while inserting index tuple" context line.
 *
 * A logical replication apply worker looking for the row to update or
 * delete (RelationFindReplTupleByIndex and ...Seq) waits with
 * XactLockTableWait only, which returns at once for NVM_STANDIN_XID: it
 * would retry, busy, until a local transaction writing that row's key
 * ends.  So an apply worker waits on the stand-in itself, before the
 * report, whenever it holds no lightweight lock (InterruptHoldoffCount is
 * 0): btree's uniqueness check asks with its leaf page locked, and waits
 * itself on what is reported; a lookup holds at most buffer pins.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "replication/logicalworker.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/resowner.h"

#include "nvm_types.h"

#include "xact/nvm_standin.h"

/* clock-value bits of a stand-in (the rest name the clock slot) */
#define STANDIN_TS_BITS		(32 - NVM_CLOCK_ID_BITS)
#define STANDIN_TS_VALUES	((UINT64CONST(1) << STANDIN_TS_BITS) - 1)

/*
 * nvm_standin_for_txid returns the stand-in of the transaction with txid
 * (not 0).
 */
uint32
nvm_standin_for_txid(uint64 txid)
{
	uint64		ts = (txid & NVM_CLOCK_TS_MASK) % STANDIN_TS_VALUES + 1;

	return (uint32) (ts << NVM_CLOCK_ID_BITS) | nvm_txid_clock_id(txid);
}

/*
 * nvm_standin_take takes the lock of stand-in for the current transaction,
 * at its top level, before the caller publishes it.  It never waits: if
 * another transaction holds the same stand-in (a prepared transaction
 * keeps its lock, and its slot, until COMMIT or ROLLBACK PREPARED, so
 * this takes an old one still held), it returns false and the caller
 * publishes an xid instead.
 */
bool
nvm_standin_take(uint32 standin)
{
	ResourceOwner saved = CurrentResourceOwner;
	LOCKTAG		tag;
	LockAcquireResult res;

	SET_LOCKTAG_SPECULATIVE_INSERTION(tag, NVM_STANDIN_XID, standin);
	CurrentResourceOwner = TopTransactionResourceOwner;
	PG_TRY();
	{
		res = LockAcquire(&tag, ExclusiveLock, false, true);
	}
	PG_FINALLY();
	{
		CurrentResourceOwner = saved;
	}
	PG_END_TRY();
	return res != LOCKACQUIRE_NOT_AVAIL;
}

/*
 * wait_in_apply_worker waits until the transaction holding standin ends,
 * in a logical replication apply worker that holds no lightweight lock
 * (see the file header); elsewhere it does nothing.
 */
static void
wait_in_apply_worker(uint32 standin)
{
	if (IsLogicalWorker() && InterruptHoldoffCount == 0)
		SpeculativeInsertionWait(NVM_STANDIN_XID, standin);
}

/*
 * nvm_standin_report tells SnapshotDirty's caller to wait for a running
 * transaction whose wait target is xid (if valid) or else standin: as the
 * creator of the version returned (xmin, which callers wait on first), or
 * as its deleter (xmax).  A stand-in goes to xmin with the token in either
 * case, as SpeculativeInsertionWait is called with xmin; a deleter's is
 * overridden by a creator reported after it.  An apply worker has waited
 * for the stand-in's transaction first (wait_in_apply_worker), and its
 * caller, finding the xid not running, looks again.
 */
void
nvm_standin_report(Snapshot dirty, bool creator, TransactionId xid, uint32 standin)
{
	if (creator)
	{
		if (TransactionIdIsValid(xid))
		{
			dirty->xmin = xid;
			dirty->speculativeToken = 0;
		}
		else if (standin != 0)
		{
			wait_in_apply_worker(standin);
			dirty->xmin = NVM_STANDIN_XID;
			dirty->speculativeToken = standin;
		}
	}
	else if (TransactionIdIsValid(xid))
		dirty->xmax = xid;
	else if (standin != 0)
	{
		wait_in_apply_worker(standin);
		dirty->xmax = NVM_STANDIN_XID;
		if (!TransactionIdIsValid(dirty->xmin))
		{
			dirty->xmin = NVM_STANDIN_XID;
			dirty->speculativeToken = standin;
		}
	}
}
