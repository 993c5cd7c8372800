/*-------------------------------------------------------------------------
 *
 * nvm_fetch.c
 *	  Fetching nvm rows by TID: through index entries, and directly by the
 *	  TID of one version (triggers, foreign keys, EvalPlanQual, TID scans).
 *
 * The rules (which version a TID leads to under which snapshot) are in
 * nvm_visibility.c; this file adapts them to the table-AM callbacks.  An
 * index fetch descriptor copies the statement's MCSI vector at its first
 * MVCC fetch, so an index scan keeps one view for its whole life; the many
 * short-lived descriptors of btree's uniqueness checks (SnapshotDirty)
 * never copy one.
 *
 * Dead index entries.  A fetch that finds nothing also says whether the
 * entry can ever lead to a row again (all_dead, as heap does for a HOT
 * chain whose members are all dead); btree then marks the entry LP_DEAD,
 * skips it from then on and deletes it when the page fills up
 * (nvm_index_delete_tuples).  The rule is nvm_gc_index_root_is_dead's
 * (gc.h): every version of the entry's index run is aborted (a rolled-back
 * insert, also by an aborted subtransaction of the current transaction), or
 * the run was replaced or deleted by commits that every running and future
 * snapshot sees (the collection horizon, cached for at most 10 ms; a stale
 * one only says "not dead" more often).  Such an answer never changes:
 * the version number keeps its version or redirect until VACUUM has removed
 * every entry naming it.
 *
 * Statistics are counted as heap counts them: a tuple fetched through an
 * index is counted by the index AM layer (index_fetch_heap), not here;
 * every visit to a virtual block counts as a buffer hit (nvm_tid.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "pgstat.h"
#include "utils/memutils.h"

#include "gc.h"

#include "am/nvm_am.h"
#include "row/nvm_tid.h"
#include "row/nvm_tuple.h"
#include "space/nvm_relation.h"
#include "xact/nvm_snapshot.h"
#include "xact/nvm_ssi.h"
#include "xact/nvm_visibility.h"
#include "xact/nvm_xact.h"

typedef struct NvmIndexFetchData
{
	IndexFetchTableData base;
	NvmTable	table;
	NvmSnapshot *snap;			/* vector copied at the first MVCC fetch */
	BlockNumber last_block;		/* virtual block of the last fetch (statistics) */
} NvmIndexFetchData;

/*
 * nvm_index_fetch_begin prepares fetches of rel's rows by index TIDs.
 */
struct IndexFetchTableData *
nvm_index_fetch_begin(Relation rel)
{
	NvmIndexFetchData *scan;

	nvm_xact_check_access(rel);
	scan = palloc0(sizeof(NvmIndexFetchData));
	scan->base.rel = rel;
	scan->table = nvm_relation_table(rel);
	scan->last_block = InvalidBlockNumber;
	return &scan->base;
}

/*
 * nvm_index_fetch_reset has nothing to release between fetches: nothing is
 * pinned.  The next fetch counts its block again, as heap's, whose reset
 * releases its buffer.
 */
void
nvm_index_fetch_reset(struct IndexFetchTableData *data)
{
	((NvmIndexFetchData *) data)->last_block = InvalidBlockNumber;
}

/*
 * nvm_index_fetch_end releases the descriptor.
 */
void
nvm_index_fetch_end(struct IndexFetchTableData *data)
{
	NvmIndexFetchData *scan = (NvmIndexFetchData *) data;

	if (scan->snap)
		pfree(scan->snap);
	pfree(scan);
}

/*
 * nvm_index_fetch_tuple fetches the row that the index entry tid leads to
 * under snapshot (the version of the entry's index run that the snapshot
 * sees) into slot, with that version's own TID.  There is no chain to
 * follow from the caller's side (call_again is always false).  When there
 * is no such row, all_dead says whether the entry is dead for everybody
 * (see the file header).
 */
bool
nvm_index_fetch_tuple(struct IndexFetchTableData *data, ItemPointer tid,
					  Snapshot snapshot, TupleTableSlot *slot,
					  bool *call_again, bool *all_dead)
{
	NvmIndexFetchData *scan = (NvmIndexFetchData *) data;
	NvmView		view;
	NvmVersion *w;
	uint64		root = nvm_tid_to_version(tid);

	*call_again = false;
	if (all_dead)
		*all_dead = false;
	if (root == 0)
		return false;

	if (snapshot->snapshot_type == SNAPSHOT_MVCC && scan->snap == NULL)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(GetMemoryChunkContext(scan));

		scan->snap = nvm_xact_copy_snapshot(NULL);
		MemoryContextSwitchTo(oldcxt);
	}
	nvm_view_init(&view, snapshot, scan->snap);

	/* heap reads a buffer when the TID's block differs from the last one */
	if (ItemPointerGetBlockNumber(tid) != scan->last_block)
	{
		scan->last_block = ItemPointerGetBlockNumber(tid);
		nvm_count_block_visit(data->rel);
	}

	w = nvm_fetch_root(&scan->table, root, snapshot, &view);
	if (nvm_ssi_needed(data->rel, snapshot))
		nvm_ssi_read_row(data->rel, &scan->table, nvm_version_record_no(&scan->table, root),
						 w, snapshot, &view);
	if (w == NULL)
	{
		if (all_dead)
			*all_dead = nvm_gc_index_root_is_dead(&scan->table, root,
												  nvm_gc_cached_horizon());
		return false;
	}
	nvm_store_version(data->rel, w, slot);
	/* like heap's HOT chain search: tid names the version found */
	nvm_version_to_tid(w->version_no, tid);
	return true;
}

/*
 * nvm_tuple_fetch_row_version fetches the version tid names into slot if
 * snapshot sees it (SnapshotAny sees every version).
 */
bool
nvm_tuple_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
							TupleTableSlot *slot)
{
	NvmTable	table;
	NvmVersion *v;
	NvmView		view;

	nvm_xact_check_access(rel);
	table = nvm_relation_table(rel);
	nvm_count_block_visit(rel);		/* heap_fetch reads the TID's buffer */
	v = nvm_version_by_no(&table, nvm_tid_to_version(tid));
	if (v == NULL)
		return false;

	nvm_view_init(&view, snapshot, NULL);
	if (!nvm_version_visible(&table, v, snapshot, &view))
	{
		if (nvm_ssi_needed(rel, snapshot))
			nvm_ssi_check_version(rel, v, snapshot, &view);
		return false;
	}
	/* a TID scan in a serializable transaction locks the row it read */
	if (nvm_ssi_needed(rel, snapshot))
		nvm_ssi_read_row(rel, &table, v->record_no, v, snapshot, &view);

	/*
	 * The executor tells its own transaction's rows by their xmin: foreign
	 * keys (RI_FKey_fk_upd_check_required must recheck a row this
	 * transaction inserted) and ON CONFLICT (a conflict with a row inserted
	 * by the same transaction is no serialization failure).  Such rows are
	 * refetched here with SnapshotAny, so an own version is shown as a copy
	 * that carries the transaction's xid (which is assigned if need be).
	 */
	if (view.my_txid != NVM_INVALID_TXID && v->txid == view.my_txid)
		nvm_store_version_copy(rel, v, slot, GetTopTransactionId());
	else
		nvm_store_version(rel, v, slot);
	return true;
}

/*
 * nvm_tuple_satisfies_snapshot says whether the version in slot (named by
 * its TID) is the one snapshot sees.
 */
bool
nvm_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot,
							 Snapshot snapshot)
{
	NvmTable	table;
	NvmVersion *v;
	NvmView		view;

	nvm_xact_check_access(rel);
	table = nvm_relation_table(rel);
	v = nvm_version_by_no(&table, nvm_tid_to_version(&slot->tts_tid));
	if (v == NULL)
		return false;
	nvm_view_init(&view, snapshot, NULL);
	return nvm_version_visible(&table, v, snapshot, &view);
}
