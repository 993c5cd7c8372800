/*-------------------------------------------------------------------------
 *
 * nvm_visibility.c
 *	  Which version of an nvm row a PostgreSQL snapshot sees: the rule each
 *	  snapshot type gets, and the questions asked by TID.
 *
 * The rules themselves are the core's (src/core/visibility.h states them
 * all).  This file is the one place that says which rule a PostgreSQL
 * snapshot type gets; nvm_view_init turns the snapshot into a core view,
 * and nvm_version_visible, asked about one version by TID, follows the
 * same table:
 *
 *	 snapshot type			core view				notes
 *	 MVCC					NVM_VIEW_SNAPSHOT		the statement's vector (or the
 *													scan's copy) and curcid; a
 *													snapshot another process took
 *													judges by xid instead
 *													(nvm_imported_snapshot.c)
 *	 SELF					NVM_VIEW_SELF
 *	 DIRTY					NVM_VIEW_DIRTY			and whom to wait for (below)
 *	 ANY					NVM_VIEW_ANY			by TID: every version
 *	 NON_VACUUMABLE			NVM_VIEW_ANY			newest non-aborted: never less
 *													than the planner's probes need
 *	 TOAST, HISTORIC_MVCC	refused					an nvm table's TOAST table is
 *													a heap table, and catalogs
 *													are heap tables
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
 * deleter is in progress).  What is reported is what the other
 * transaction published in its clock slot (nvm_xact.c): its xid, or its
 * xid stand-in (NVM_STANDIN_XID as xmin and the stand-in as
 * speculativeToken, nvm_standin.c); a transaction that published neither
 * only ever changes non-indexed columns, so for an index it is as good as
 * committed.  Nothing here blocks: callers wait after releasing their
 * buffer locks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"

#include "indoubt.h"
#include "pool.h"

#include "row/nvm_tuple.h"
#include "xact/nvm_imported_snapshot.h"
#include "xact/nvm_indoubt.h"
#include "xact/nvm_snapshot.h"
#include "xact/nvm_standin.h"
#include "xact/nvm_visibility.h"
#include "xact/nvm_xact.h"

/* How often a dirty fetch rereads a chain whose writer just finished. */
#define NVM_DIRTY_RETRIES	3

/*
 * nvm_view_init sets up the view of the version chains that a PostgreSQL
 * snapshot asks for.  MVCC snapshots use snap, or the statement snapshot if
 * snap is NULL, with PostgreSQL's curcid for own changes.
 * SnapshotNonVacuumable (the planner's endpoint probes) is served by the
 * newest non-aborted version, which is never less than it needs.
 */
void
nvm_view_init(NvmView *view, Snapshot snapshot, const NvmSnapshot *snap)
{
	NvmTxn	   *txn;

	memset(view, 0, sizeof(*view));
	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_MVCC:
			view->kind = NVM_VIEW_SNAPSHOT;
			view->snap = snap ? snap : nvm_xact_statement_snapshot();
			view->curcid = snapshot->curcid;
			/* a snapshot another process took (a replication slot's) */
			nvm_imported_snapshot_view(view, snapshot);
			break;
		case SNAPSHOT_SELF:
			view->kind = NVM_VIEW_SELF;
			break;
		case SNAPSHOT_DIRTY:
			view->kind = NVM_VIEW_DIRTY;
			break;
		case SNAPSHOT_ANY:
		case SNAPSHOT_NON_VACUUMABLE:
			view->kind = NVM_VIEW_ANY;
			break;
		case SNAPSHOT_TOAST:
		case SNAPSHOT_HISTORIC_MVCC:
			elog(ERROR, "unexpected snapshot type %d for an nvm table",
				 (int) snapshot->snapshot_type);
			break;
	}
	/* the transaction's own txid (a parallel worker has none of its own) */
	txn = nvm_xact_running_txn();
	view->my_txid = txn != NULL ? txn->txid : NVM_INVALID_TXID;
}

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
 * speculativeToken), else what its transaction published (xid, or else
 * standin: nvm_xact_wait_target).
 */
static void
report_inserter(NvmVersion *w, TransactionId xid, uint32 standin, Snapshot dirty)
{
	uint32		token;
	TransactionId spec_xid;

	if (nvm_version_speculative(w, &token, &spec_xid))
	{
		dirty->xmin = spec_xid;
		dirty->speculativeToken = token;
	}
	else
		nvm_standin_report(dirty, true, xid, standin);
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
		uint32		standin;

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

		xid = nvm_xact_wait_target(w->txid, &standin);
		if (!TransactionIdIsValid(xid) && standin == 0 &&
			attempt < NVM_DIRTY_RETRIES && !nvm_txid_is_running(w->txid))
			continue;			/* it just finished: read the chain again */

		if (!nvm_version_is_tombstone(w) && w->index_root == root)
		{
			report_inserter(w, xid, standin, dirty);
			return w;
		}

		/* deleted, or moved to another index run, by a running transaction */
		p = nvm_prev_live(w);
		if (p == NULL || nvm_version_is_tombstone(p) || p->index_root != root)
			return NULL;
		nvm_standin_report(dirty, false, xid, standin);
		if (nvm_version_by_other_running(p, my_txid))
		{
			xid = nvm_xact_wait_target(p->txid, &standin);
			nvm_standin_report(dirty, true, xid, standin);
		}
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
			{
				TransactionId xid;
				uint32		standin;

				xid = nvm_xact_wait_target(w->txid, &standin);
				report_inserter(w, xid, standin, snapshot);
			}
			return true;
		default:
			w = nvm_chain_visible(t, v->record_no, view);
			return w == v;
	}
}
