/*-------------------------------------------------------------------------
 *
 * nvm_ssi.c
 *	  Serializable isolation for nvm tables: PostgreSQL's serializable
 *	  snapshot isolation (predicate.c) on top of the vector snapshots.
 *
 * nvm reads and writes report to the predicate-lock manager what heap
 * reports:
 *	 - a sequential scan takes a predicate lock on the whole relation (heap
 *	   does the same);
 *	 - every version a read returns is locked by its TID (index fetches,
 *	   bitmap scans);
 *	 - a read that meets a version it cannot see because its creator is
 *	   concurrent (running, or committed after the snapshot) reports a
 *	   read-write conflict with that creator ("conflict out");
 *	 - an insert checks the relation, an update or delete the TID of the
 *	   version it replaces ("conflict in").
 * The creator of a version is named by its PostgreSQL xid, which every
 * serializable writer takes at its first nvm write and stores in the
 * versions it writes (NvmVersion.external_id; nvm_xact.c).  Versions of
 * transactions that were not serializable carry no xid or one the
 * predicate-lock manager does not track, as on heap.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "storage/predicate.h"
#include "utils/snapmgr.h"
#include "utils/rel.h"

#include "pool.h"

#include "row/nvm_tid.h"
#include "xact/nvm_ssi.h"

/*
 * nvm_ssi_needed says whether reads of rel with snapshot must report to the
 * predicate-lock manager (a serializable transaction with an MVCC snapshot).
 */
bool
nvm_ssi_needed(Relation rel, Snapshot snapshot)
{
	return snapshot != NULL && IsMVCCSnapshot(snapshot) &&
		CheckForSerializableConflictOutNeeded(rel, snapshot);
}

/* nvm_ssi_lock_relation takes a sequential scan's relation lock. */
void
nvm_ssi_lock_relation(Relation rel, Snapshot snapshot)
{
	if (snapshot != NULL && IsMVCCSnapshot(snapshot))
		PredicateLockRelation(rel, snapshot);
}

/*
 * nvm_ssi_check_version reports a conflict out if v is hidden from the view
 * only because its creator is concurrent with the reader.
 */
void
nvm_ssi_check_version(Relation rel, NvmVersion *v, Snapshot snapshot, const NvmView *view)
{
	if (view->my_txid != 0 && v->txid == view->my_txid)
		return;
	if (v->external_id == 0 || nvm_version_creator_visible(v, view))
		return;
	if (nvm_version_status(v) == NVM_STATUS_ABORTED)
		return;
	/* older than every transaction running at the snapshot: no conflict */
	if (TransactionIdPrecedes((TransactionId) v->external_id, TransactionXmin))
		return;
	CheckForSerializableConflictOut(rel, (TransactionId) v->external_id, snapshot);
}

/*
 * nvm_ssi_read_row reports a read of record_no that returned read (NULL if
 * the row is invisible): a conflict out for every newer version by a
 * concurrent transaction, and a predicate lock on read.  The versions above
 * read are never collected while the reader's snapshot is pinned.
 */
void
nvm_ssi_read_row(Relation rel, const NvmTable *t, uint64 record_no, NvmVersion *read,
				 Snapshot snapshot, const NvmView *view)
{
	for (NvmVersion *v = nvm_ptr(nvm_record_head(t, record_no)); v != NULL && v != read;
		 v = nvm_ptr(v->prev))
		nvm_ssi_check_version(rel, v, snapshot, view);
	if (read != NULL && !nvm_version_is_tombstone(read))
	{
		ItemPointerData tid;

		/*
		 * PredicateLockTID takes no lock on a version the reader wrote
		 * itself (it holds a write lock on it).  That is told by the
		 * reader's own txid, not by the stored xid: the xid of a log-free
		 * commit that a crash made PostgreSQL forget may belong to the
		 * reader now (nvm_commit.c).
		 */
		nvm_version_to_tid(read->version_no, &tid);
		PredicateLockTID(rel, &tid, snapshot,
						 view->my_txid != 0 && read->txid == view->my_txid ?
						 GetTopTransactionIdIfAny() : InvalidTransactionId);
	}
}

/*
 * nvm_ssi_write checks for a conflict in before a write: on the relation for
 * an insert (otid NULL), on the version replaced for an update or delete.
 */
void
nvm_ssi_write(Relation rel, ItemPointer otid)
{
	CheckForSerializableConflictIn(rel, otid,
								   otid ? ItemPointerGetBlockNumber(otid) : InvalidBlockNumber);
}
