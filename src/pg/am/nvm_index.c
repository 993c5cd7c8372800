/*-------------------------------------------------------------------------
 *
 * nvm_index.c
 *	  Building and maintaining the indexes of nvm tables.
 *
 * Index entries hold the TID of an index run's root (nvm_visibility.c).
 * CREATE INDEX (and REINDEX) holds a lock that keeps writers out, so it
 * indexes, for every record, the newest version that is not aborted (own
 * uncommitted rows included) under its index_root, and skips deleted rows.
 * Older versions are not indexed: if a record has any, a snapshot taken
 * before the build might still see one whose indexed values differ, so the
 * index is marked "broken HOT chain", exactly as heap does, and PostgreSQL
 * sets indcheckxmin to keep such snapshots from using it.  Callers that
 * pass an MVCC snapshot (amcheck's heapallindexed check, a concurrent
 * build) get the rows that snapshot sees instead.
 *
 * CREATE INDEX CONCURRENTLY and REINDEX CONCURRENTLY build with an MVCC
 * snapshot, then validate: rows that a later snapshot sees and whose root
 * TID the index lacks are inserted (nvm_index_validate_scan).
 *
 * Index tuple deletion (nvm_index_delete_tuples): btree asks which
 * entries of a full leaf page may go before it splits the page.  An entry
 * is deletable when no version of its index run can ever be visible again
 * (nvm_gc_index_root_is_dead, the same test index fetches use for
 * all_dead; nvm_fetch.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "am/nvm_am.h"
#include "redo/nvm_redo.h"
#include "row/nvm_tid.h"
#include "row/nvm_tuple.h"
#include "space/nvm_relation.h"
#include "xact/nvm_visibility.h"
#include "xact/nvm_xact.h"

/*
 * nvm_index_delete_tuples decides which of the index entries in delstate
 * the index may delete, and leaves only those in delstate->deltids.
 *
 * Entries marked knowndeletable (simple deletion: btree's LP_DEAD entries)
 * are trusted, as heap trusts them: an entry is marked LP_DEAD only after a
 * fetch of its TID answered all_dead, under the index page's lock or with
 * btree's check that the page did not change since it was read, and that
 * answer never changes, since the version number stays taken until VACUUM
 * has removed every entry naming it.  The other entries (the extra ones of
 * simple deletion, all of bottom-up deletion) are checked one by one;
 * bottom-up deletion checks the "promising" entries (duplicates, likely old
 * versions) first and stops once the space btree asked for is freed.  A
 * check takes the pruning lock of one chain and reads it; no table block
 * is read, so unlike heap there is no reason to favour entries by block.
 *
 * The returned horizon is for recovery conflicts on hot standbys.  It is
 * InvalidTransactionId: nvm commits have no xids to compare with.  A
 * standby learns of the conflict from the CONFLICT record logged here
 * instead (nvm_redo.c), which names the index runs whose entries go.
 */
/*
 * log_conflict tells standbys which index runs lose their entries
 * (nvm_redo.c), before btree logs the deletion.
 */
static void
log_conflict(Relation rel, TM_IndexDeleteOp *delstate)
{
	NvmTableKey key;
	uint64	   *roots;

	if (delstate->ndeltids == 0 || rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT ||
		!nvm_redo_needed())
		return;
	roots = palloc(sizeof(uint64) * delstate->ndeltids);
	for (int i = 0; i < delstate->ndeltids; i++)
		roots[i] = nvm_tid_to_version(&delstate->deltids[i].tid);
	nvm_relation_key(rel, &rel->rd_locator, rel->rd_rel->relpersistence, &key);
	nvm_redo_log_conflict(&key, roots, (uint64) delstate->ndeltids);
	pfree(roots);
}

TransactionId
nvm_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	NvmTable	table;
	const NvmHorizon *h;
	int			ndeletable = 0;
	int			freespace = 0;

	table = nvm_relation_table(rel);
	h = nvm_gc_cached_horizon();

	for (int pass = 0; pass < 2; pass++)
	{
		for (int i = 0; i < delstate->ndeltids; i++)
		{
			TM_IndexDelete *d = &delstate->deltids[i];
			TM_IndexStatus *st = &delstate->status[d->id];

			if (delstate->bottomup)
			{
				if (freespace >= delstate->bottomupfreespace)
					break;
				/* promising entries in the first pass, the others in the second */
				if (st->promising != (pass == 0))
					continue;
			}
			else if (pass == 1)
				break;

			if (!st->knowndeletable)
			{
				uint64		n = nvm_tid_to_version(&d->tid);

				st->knowndeletable = n != 0 && nvm_gc_index_root_is_dead(&table, n, h);
			}
			if (st->knowndeletable && delstate->bottomup)
				freespace += st->freespace;
		}
	}

	/* keep only the deletable entries (btree relies on ndeltids == 0 for none) */
	for (int i = 0; i < delstate->ndeltids; i++)
	{
		if (delstate->status[delstate->deltids[i].id].knowndeletable)
			delstate->deltids[ndeletable++] = delstate->deltids[i];
	}
	delstate->ndeltids = ndeletable;
	log_conflict(rel, delstate);
	return InvalidTransactionId;
}

/*
 * nvm_block_in_range says whether a TID's block lies in the range an index
 * build asked for (BRIN summarises block ranges).
 */
static bool
nvm_block_in_range(ItemPointer tid, BlockNumber start_blockno, BlockNumber numblocks)
{
	BlockNumber blkno = ItemPointerGetBlockNumber(tid);

	if (blkno < start_blockno)
		return false;
	return numblocks == InvalidBlockNumber || blkno - start_blockno < numblocks;
}

/*
 * nvm_index_build_range_scan feeds every row to be indexed to callback,
 * under the TID of its index run's root, and returns the number of rows.
 */
double
nvm_index_build_range_scan(Relation table_rel, Relation index_rel,
						   struct IndexInfo *index_info, bool allow_sync,
						   bool anyvisible, bool progress,
						   BlockNumber start_blockno, BlockNumber numblocks,
						   IndexBuildCallback callback, void *callback_state,
						   TableScanDesc scan)
{
	NvmTable	table;
	EState	   *estate;
	ExprContext *econtext;
	TupleTableSlot *slot;
	ExprState  *predicate;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	Snapshot	snapshot = NULL;
	bool		unregister_snapshot = false;
	NvmView		view;
	uint64		nrecords;
	double		reltuples = 0;

	nvm_xact_check_access(table_rel);
	table = nvm_relation_table(table_rel);

	estate = CreateExecutorState();
	econtext = GetPerTupleExprContext(estate);
	slot = table_slot_create(table_rel, NULL);
	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);

	/* like heap: an MVCC snapshot if the caller has one or builds concurrently */
	if (scan != NULL && IsMVCCSnapshot(scan->rs_snapshot))
		snapshot = scan->rs_snapshot;
	else if (scan == NULL && index_info->ii_Concurrent)
	{
		snapshot = RegisterSnapshot(GetTransactionSnapshot());
		unregister_snapshot = true;
	}
	if (snapshot != NULL)
		nvm_view_init(&view, snapshot, NULL);

	nrecords = nvm_table_record_limit(&table);
	for (uint64 r = 1; r < nrecords; r++)
	{
		NvmVersion *v;
		ItemPointerData tid;

		CHECK_FOR_INTERRUPTS();

		if (snapshot != NULL)
			v = nvm_chain_visible(&table, r, &view);
		else
		{
			v = nvm_chain_newest(&table, r);
			if (v != NULL && !index_info->ii_BrokenHotChain &&
				nvm_prev_live(v) != NULL)
				index_info->ii_BrokenHotChain = true;
		}
		if (v == NULL || nvm_version_is_tombstone(v))
			continue;

		nvm_version_to_tid(v->index_root, &tid);
		if (!nvm_block_in_range(&tid, start_blockno, numblocks))
			continue;
		reltuples += 1;

		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		nvm_store_version(table_rel, v, slot);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(index_info, slot, estate, values, isnull);
		callback(index_rel, &tid, values, isnull, true, callback_state);
	}

	if (scan != NULL)
		table_endscan(scan);
	if (unregister_snapshot)
		UnregisterSnapshot(snapshot);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
	return reltuples;
}

/*
 * nvm_index_validate_scan is the validation pass of CREATE INDEX
 * CONCURRENTLY and REINDEX CONCURRENTLY: it inserts into the index every
 * row that snapshot sees and whose index run's root TID the index lacks
 * (rows written while the index was built, by transactions that did not
 * insert into it yet).  state->tuplesort holds the index's TIDs; they are
 * read into a hash table, since rows come in record order, not TID order.
 */
void
nvm_index_validate_scan(Relation table_rel, Relation index_rel,
						struct IndexInfo *index_info, Snapshot snapshot,
						struct ValidateIndexState *state)
{
	NvmTable	table;
	EState	   *estate;
	ExprContext *econtext;
	TupleTableSlot *slot;
	ExprState  *predicate;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	NvmView		view;
	HASHCTL		ctl;
	HTAB	   *indexed;
	Datum		ts_val;
	bool		ts_isnull;
	uint64		nrecords;

	nvm_xact_check_access(table_rel);
	table = nvm_relation_table(table_rel);

	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(uint64);
	ctl.hcxt = CurrentMemoryContext;
	indexed = hash_create("nvm index validation", 1024, &ctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	while (NVM_TUPLESORT_GETDATUM(state->tuplesort, true, &ts_val, &ts_isnull, NULL))
	{
		ItemPointerData tid;
		uint64		n;

		if (ts_isnull)
			continue;
		itemptr_decode(&tid, DatumGetInt64(ts_val));
		n = nvm_tid_to_version(&tid);
		(void) hash_search(indexed, &n, HASH_ENTER, NULL);
	}

	estate = CreateExecutorState();
	econtext = GetPerTupleExprContext(estate);
	slot = table_slot_create(table_rel, NULL);
	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);
	nvm_view_init(&view, snapshot, NULL);

	nrecords = nvm_table_record_limit(&table);
	for (uint64 r = 1; r < nrecords; r++)
	{
		NvmVersion *v;
		ItemPointerData tid;
		uint64		root;

		CHECK_FOR_INTERRUPTS();
		v = nvm_chain_visible(&table, r, &view);
		if (v == NULL || nvm_version_is_tombstone(v))
			continue;
		state->htups += 1;
		root = v->index_root;
		if (hash_search(indexed, &root, HASH_FIND, NULL) != NULL)
			continue;

		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		nvm_store_version(table_rel, v, slot);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(index_info, slot, estate, values, isnull);
		nvm_version_to_tid(root, &tid);
		index_insert(index_rel, values, isnull, &tid, table_rel,
					 index_info->ii_Unique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
					 false, index_info);
		state->tups_inserted += 1;
	}

	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	hash_destroy(indexed);
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
}
