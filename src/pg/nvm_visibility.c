/*-------------------------------------------------------------------------
 *
 * nvm_visibility.c
 *	  Which version of an nvm row a PostgreSQL snapshot sees, by TID.
 *
 * Two questions are asked by TID:
 *	 - By an index (nvm_fetch_root): an index entry holds the TID of the
 *	   first version of an "index run" (index_root), and leads to the
 *	   version the snapshot sees only if that version belongs to the same
 *	   run.  Updates that change no indexed column stay in the run; an update
 *	   that changes one starts a new run with new index entries.  So an index
 *	   entry never leads to a version whose indexed values differ from the
 *	   entry's, which matters because btree does not recheck its quals.
 *	 - By a TID naming one version (nvm_version_visible): triggers, foreign
 *	   keys, EvalPlanQual and TID scans refetch a version; it counts only
 *	   if it is the version the snapshot sees for its row.
 *
 * SnapshotDirty (btree's uniqueness check, ON CONFLICT, exclusion
 * constraints) sees the newest version that is not aborted, and must say
 * whom to wait for: xmin when that version's creator is another running
 * transaction (with speculativeToken while that creator's INSERT ... ON
 * CONFLICT has not decided whether to keep it, so that the waiter waits
 * for the decision, not the transaction: nvm_tuple.c), xmax when the other
 * running transaction deletes the row or moves it to another index run
 * (then the older version is returned, as heap returns a tuple whose
 * deleter is in progress).  The xid reported is
 * the one the other transaction published in its clock slot (nvm_xact.c);
 * a transaction without a published xid only ever changes non-indexed
 * columns, so for an index it is as good as committed.  Nothing here
 * blocks: callers wait after releasing their buffer locks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"

#include "nvm_tuple.h"
#include "nvm_visibility.h"
#include "nvm_xact.h"
#include "pool.h"

/* How often a dirty fetch rereads a chain whose writer just finished. */
#define NVM_DIRTY_RETRIES	3

/*
 * nvm_version_by_other_running says whether v was created by a transaction
 * other than my_txid that has not finished.
 */
bool
nvm_version_by_other_running(NvmVersion *v, uint64 my_txid)
{
	if (my_txid != NVM_INVALID_TXID && v->txid == my_txid)
		return false;
	if (nvm_version_status(v) != NVM_STATUS_RUNNING)
		return false;

	/*
	 * A prepared transaction whose xid has ended (COMMIT or ROLLBACK
	 * PREPARED ran, its resolution may not have yet): resolve it.  If it
	 * rolled back, v is still reported as running: the caller read v as a
	 * live version, and must look at the chain again, as after waiting for
	 * a writer that aborted (nvm_wait_for_writer returns at once).
	 */
	if (nvm_indoubt_pending() && !TransactionIdIsValid(nvm_xact_settle_indoubt(v->txid)))
		return nvm_version_status(v) != NVM_STATUS_COMMITTED;
	return true;
}

/*
 * nvm_prev_live returns the next older version of v that is not aborted,
 * or NULL.
 */
NvmVersion *
nvm_prev_live(NvmVersion *v)
{
	for (NvmVersion *p = nvm_ptr(v->prev); p != NULL; p = nvm_ptr(p->prev))
	{
		if (nvm_version_status(p) != NVM_STATUS_ABORTED)
			return p;
	}
	return NULL;
}

/*
 * report_inserter tells SnapshotDirty whom to wait for about version w of
 * another running transaction: the token of a speculative insertion not
 * completed yet, with the xid the inserter took it with (heap's
 * speculativeToken), else xid, the xid it published.
 */
static void
report_inserter(NvmVersion *w, TransactionId xid, Snapshot dirty)
{
	uint32		token;
	TransactionId spec_xid;

	if (nvm_version_speculative(w, &token, &spec_xid))
	{
		dirty->xmin = spec_xid;
		dirty->speculativeToken = token;
	}
	else
		dirty->xmin = xid;
}

/*
 * nvm_dirty_fetch implements nvm_fetch_root for SnapshotDirty, filling its
 * xmin, xmax and speculativeToken.
 */
static NvmVersion *
nvm_dirty_fetch(const NvmTable *t, uint64 record_no, uint64 root,
				Snapshot dirty, uint64 my_txid)
{
	for (int attempt = 0;; attempt++)
	{
		NvmVersion *w = nvm_chain_newest(t, record_no);
		NvmVersion *p;
		TransactionId xid;

		dirty->xmin = InvalidTransactionId;
		dirty->xmax = InvalidTransactionId;
		dirty->speculativeToken = 0;

		if (w == NULL)
			return NULL;
		if (!nvm_version_by_other_running(w, my_txid))
		{
			if (!nvm_version_is_tombstone(w) && w->index_root == root)
				return w;
			return NULL;
		}

		xid = nvm_xact_published_xid(w->txid);
		if (!TransactionIdIsValid(xid) && attempt < NVM_DIRTY_RETRIES &&
			!nvm_txid_is_running(w->txid))
			continue;			/* it just finished: read the chain again */

		if (!nvm_version_is_tombstone(w) && w->index_root == root)
		{
			report_inserter(w, xid, dirty);
			return w;
		}

		/* deleted, or moved to another index run, by a running transaction */
		p = nvm_prev_live(w);
		if (p == NULL || nvm_version_is_tombstone(p) || p->index_root != root)
			return NULL;
		dirty->xmax = xid;
		if (nvm_version_by_other_running(p, my_txid))
			dirty->xmin = nvm_xact_published_xid(p->txid);
		return p;
	}
}

/*
 * nvm_fetch_root returns the version that the index entry with TID root
 * leads to under snapshot (whose view is view), or NULL if the row is
 * invisible, deleted, or now in another index run.
 */
NvmVersion *
nvm_fetch_root(const NvmTable *t, uint64 root, Snapshot snapshot,
			   const NvmView *view)
{
	/* the root version itself may have been collected: a redirect names the record */
	uint64		record_no = nvm_version_record_no(t, root);
	NvmVersion *w;

	if (record_no == 0)
		return NULL;
	if (view->kind == NVM_VIEW_DIRTY)
		return nvm_dirty_fetch(t, record_no, root, snapshot, view->my_txid);

	w = nvm_chain_visible(t, record_no, view);
	if (w == NULL || nvm_version_is_tombstone(w) || w->index_root != root)
		return NULL;
	return w;
}

/*
 * nvm_version_visible says whether version v is the version of its row
 * that snapshot sees.  SnapshotAny accepts every version (triggers refetch
 * old and new rows with it).
 */
bool
nvm_version_visible(const NvmTable *t, NvmVersion *v, Snapshot snapshot,
					const NvmView *view)
{
	NvmVersion *w;

	if (nvm_version_is_tombstone(v))
		return false;

	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_ANY:
			return true;
		case SNAPSHOT_NON_VACUUMABLE:
			return nvm_version_status(v) != NVM_STATUS_ABORTED;
		case SNAPSHOT_DIRTY:
			snapshot->xmin = InvalidTransactionId;
			snapshot->xmax = InvalidTransactionId;
			snapshot->speculativeToken = 0;
			w = nvm_chain_newest(t, v->record_no);
			if (w != v)
				return false;
			if (nvm_version_by_other_running(w, view->my_txid))
				report_inserter(w, nvm_xact_published_xid(w->txid), snapshot);
			return true;
		default:
			w = nvm_chain_visible(t, v->record_no, view);
			return w == v;
	}
}
