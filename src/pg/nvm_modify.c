/*-------------------------------------------------------------------------
 *
 * nvm_modify.c
 *	  Inserts, updates, deletes and row locks on nvm tables.
 *
 * Every write pushes a new version onto a record's chain through the core
 * (nvm_record_insert / nvm_record_update, which check for conflicting
 * newer versions, MCSI paper Fig. 8) and records the subtransaction level
 * it belongs to.  The stored image of a row is formed by nvm_tuple.c; after
 * the write the caller's slot shows the stored version (with its TID and
 * header), as heap leaves the inserted tuple in the slot.
 *
 * Index runs.  An update creates new index entries only if it changes an
 * indexed column (compared bytewise, so an equal value in another
 * representation merely costs an extra entry); otherwise the new version
 * joins its predecessor's index run and the existing entries lead to it
 * (see nvm_visibility.c).  Such updates need no PostgreSQL xid and no WAL.
 *
 * Conflicts.  A newer committed version is reported as TM_Updated or
 * TM_Deleted with the newer version's TID in tmfd->ctid: in REPEATABLE
 * READ the executor turns that into a serialization failure; in READ
 * COMMITTED it locks the newest version through nvm_tuple_lock with
 * TUPLE_LOCK_FLAG_FIND_LAST_VERSION and re-evaluates the query on it
 * (EvalPlanQual).  Waiting for a running writer is not implemented yet:
 * such a conflict is reported as a serialization failure for the caller to
 * retry; nothing here blocks.
 *
 * Row locks (SELECT FOR UPDATE/SHARE, foreign-key checks) only check that
 * the version is still the newest one; they do not keep other writers
 * away yet.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "nodes/bitmapset.h"
#include "pgstat.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "nvm_am.h"
#include "nvm_relation.h"
#include "nvm_tid.h"
#include "nvm_tuple.h"
#include "nvm_visibility.h"
#include "nvm_xact.h"

/* Scratch memory for forming one row image; reset at every write. */
static MemoryContext nvm_write_cxt = NULL;

/*
 * nvm_write_context returns the emptied scratch context for one write.
 */
static MemoryContext
nvm_write_context(void)
{
	if (nvm_write_cxt == NULL)
		nvm_write_cxt = AllocSetContextCreate(TopMemoryContext,
											  "nvm write",
											  ALLOCSET_DEFAULT_SIZES);
	else
		MemoryContextReset(nvm_write_cxt);
	return nvm_write_cxt;
}

/*
 * nvm_insert_one stores the row in slot as a new record and sets the
 * slot's TID to the new version's.
 */
static void
nvm_insert_one(Relation rel, NvmTable *table, NvmTxn *txn, TupleTableSlot *slot,
			   CommandId cid)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(nvm_write_context());
	HeapTuple	tuple = nvm_form_tuple(rel, slot, cid);
	uint64		version_no;
	NvmWriteResult res;

	MemoryContextSwitchTo(oldcxt);
	res = nvm_record_insert(table, txn, nvm_xact_level(), cid,
							tuple->t_data, tuple->t_len, &version_no);
	if (res == NVM_WRITE_NO_SPACE)
		nvm_report_pool_full(rel);
	if (res != NVM_WRITE_OK)
		elog(ERROR, "unexpected result %d of an insert into nvm table \"%s\"",
			 (int) res, RelationGetRelationName(rel));

	nvm_store_version(rel, nvm_version_by_no(table, version_no), slot);
}

/*
 * nvm_tuple_insert inserts one row.  A table with indexes will get index
 * entries for it, so the transaction publishes its PostgreSQL xid first.
 */
void
nvm_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
				 int options, struct BulkInsertStateData *bistate)
{
	NvmTable	table;
	NvmTxn	   *txn;

	nvm_xact_check_access(rel);
	table = nvm_relation_table(rel);
	txn = nvm_xact_begin_write(rel->rd_rel->relhasindex);
	nvm_insert_one(rel, &table, txn, slot, cid);
	pgstat_count_heap_insert(rel, 1);
}

/*
 * nvm_tuple_insert_speculative inserts the row of an INSERT ... ON
 * CONFLICT like any other row.  Other sessions that meet it wait for the
 * whole transaction (the xid it published), not for a speculative token.
 */
void
nvm_tuple_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid,
							 int options, struct BulkInsertStateData *bistate,
							 uint32 specToken)
{
	nvm_tuple_insert(rel, slot, cid, options, bistate);
}

/*
 * nvm_tuple_complete_speculative accepts a speculative insert that found no
 * conflict; one that lost a race with a concurrent insert of the same key is
 * killed: its version is marked aborted at once, so nobody (the inserting
 * transaction included) sees it, while the rest of the transaction goes on.
 * Its index entries lead to no visible version.
 */
void
nvm_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
							   uint32 specToken, bool succeeded)
{
	NvmTable	table;
	NvmTxn	   *txn;

	if (succeeded)
		return;
	table = nvm_relation_table(rel);
	txn = nvm_xact_begin_write(false);
	if (!nvm_record_kill(&table, txn, nvm_tid_to_version(&slot->tts_tid)))
		elog(ERROR, "speculative insertion into nvm table \"%s\" not found",
			 RelationGetRelationName(rel));
}

/*
 * nvm_multi_insert inserts several rows (COPY), one record each.
 */
void
nvm_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
				 CommandId cid, int options, struct BulkInsertStateData *bistate)
{
	NvmTable	table;
	NvmTxn	   *txn;

	nvm_xact_check_access(rel);
	table = nvm_relation_table(rel);
	txn = nvm_xact_begin_write(rel->rd_rel->relhasindex);
	for (int i = 0; i < nslots; i++)
		nvm_insert_one(rel, &table, txn, slots[i], cid);
	pgstat_count_heap_insert(rel, nslots);
}

/*
 * nvm_finish_bulk_insert has nothing to do: every row is durable when its
 * transaction commits.
 */
void
nvm_finish_bulk_insert(Relation rel, int options)
{
}

/*
 * nvm_attr_equal says whether attribute attnum (0: the whole row) has the
 * same value, bytewise, in both tuples.
 */
static bool
nvm_attr_equal(TupleDesc desc, AttrNumber attnum, HeapTuple oldtup, HeapTuple newtup)
{
	Form_pg_attribute att;
	Datum		oldval;
	Datum		newval;
	bool		oldnull;
	bool		newnull;

	if (attnum == 0)
	{
		for (AttrNumber i = 1; i <= desc->natts; i++)
		{
			if (!nvm_attr_equal(desc, i, oldtup, newtup))
				return false;
		}
		return true;
	}
	if (attnum < 0)
		return true;			/* system columns are not the row's values */

	oldval = heap_getattr(oldtup, attnum, desc, &oldnull);
	newval = heap_getattr(newtup, attnum, desc, &newnull);
	if (oldnull || newnull)
		return oldnull == newnull;
	att = TupleDescAttr(desc, attnum - 1);
	return datumIsEqual(oldval, newval, att->attbyval, att->attlen);
}

/*
 * nvm_index_changes compares the indexed columns of the old version and the
 * new image: *any_changed if any column used by an index (key, expression
 * or predicate) differs, *key_changed if one usable by a foreign key does.
 */
static void
nvm_index_changes(Relation rel, NvmVersion *oldv, HeapTuple newtup,
				  bool *any_changed, bool *key_changed)
{
	TupleDesc	desc = RelationGetDescr(rel);
	HeapTupleData oldtup;
	Bitmapset  *indexed;
	Bitmapset  *keys;
	int			x = -1;

	*any_changed = false;
	*key_changed = false;
	if (!rel->rd_rel->relhasindex)
		return;

	nvm_version_tuple(rel, oldv, &oldtup);
	indexed = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_ALL);
	keys = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_KEY);
	while ((x = bms_next_member(indexed, x)) >= 0)
	{
		AttrNumber	attnum = x + FirstLowInvalidHeapAttributeNumber;

		if (nvm_attr_equal(desc, attnum, &oldtup, newtup))
			continue;
		*any_changed = true;
		if (bms_is_member(x, keys))
		{
			*key_changed = true;
			break;
		}
	}
}

/*
 * nvm_being_modified reports a row that another running transaction is
 * writing: TM_BeingModified if the caller does not want to wait, else a
 * serialization failure (waiting for the other writer is not implemented
 * yet).
 */
static TM_Result
nvm_being_modified(Relation rel, NvmConflict *conflict, bool wait,
				   TM_FailureData *tmfd)
{
	nvm_version_to_tid(conflict->newer_version_no, &tmfd->ctid);
	tmfd->xmax = nvm_xact_published_xid(conflict->newer_txid);
	tmfd->cmax = InvalidCommandId;
	if (!wait)
		return TM_BeingModified;
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not serialize access due to concurrent update"),
			 errdetail("Another transaction is writing the same row of nvm table \"%s\".",
					   RelationGetRelationName(rel)),
			 errhint("Retry the transaction.")));
	return TM_BeingModified;	/* keep compiler quiet */
}

/*
 * nvm_write_result turns the core's answer to an update or delete of the
 * version otid into a TM_Result, filling tmfd for the failures.
 */
static TM_Result
nvm_write_result(Relation rel, NvmWriteResult res, ItemPointer otid,
				 NvmConflict *conflict, bool wait, TM_FailureData *tmfd)
{
	tmfd->traversed = false;
	switch (res)
	{
		case NVM_WRITE_OK:
			return TM_Ok;
		case NVM_WRITE_INVISIBLE:
			return TM_Invisible;
		case NVM_WRITE_SELF_MODIFIED:
			nvm_version_to_tid(conflict->newer_version_no, &tmfd->ctid);
			tmfd->xmax = GetTopTransactionId();
			tmfd->cmax = conflict->newer_cid;
			return TM_SelfModified;
		case NVM_WRITE_UPDATED:
			nvm_version_to_tid(conflict->newer_version_no, &tmfd->ctid);
			tmfd->xmax = InvalidTransactionId;
			tmfd->cmax = InvalidCommandId;
			return TM_Updated;
		case NVM_WRITE_DELETED:
			tmfd->ctid = *otid;
			tmfd->xmax = InvalidTransactionId;
			tmfd->cmax = InvalidCommandId;
			return TM_Deleted;
		case NVM_WRITE_BEING_MODIFIED:
			return nvm_being_modified(rel, conflict, wait, tmfd);
		case NVM_WRITE_NO_SPACE:
			nvm_report_pool_full(rel);
	}
	elog(ERROR, "unexpected result %d of a write to nvm table \"%s\"",
		 (int) res, RelationGetRelationName(rel));
	return TM_Invisible;		/* keep compiler quiet */
}

/*
 * nvm_tuple_delete deletes the row whose version is tid by pushing a
 * tombstone.  In a table with indexes the transaction publishes its xid, so
 * that an insert of the same key waits for the delete instead of failing.
 */
TM_Result
nvm_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
				 Snapshot snapshot, Snapshot crosscheck, bool wait,
				 TM_FailureData *tmfd, bool changingPart)
{
	NvmTable	table;
	NvmTxn	   *txn;
	NvmConflict conflict;
	NvmWriteResult res;
	uint64		tombstone_no;

	nvm_xact_check_access(rel);
	table = nvm_relation_table(rel);
	txn = nvm_xact_begin_write(rel->rd_rel->relhasindex);
	res = nvm_record_update(&table, txn, nvm_xact_level(), cid,
							nvm_tid_to_version(tid), NULL, 0, false,
							&tombstone_no, &conflict);
	if (res == NVM_WRITE_OK)
		pgstat_count_heap_delete(rel);
	return nvm_write_result(rel, res, tid, &conflict, wait, tmfd);
}

/*
 * nvm_tuple_update replaces the row whose version is otid by the row in
 * slot, and says whether the new version needs index entries (an indexed
 * column changed) and which lock mode the update amounts to.
 */
TM_Result
nvm_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
				 CommandId cid, Snapshot snapshot, Snapshot crosscheck,
				 bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
				 bool *update_indexes)
{
	NvmTable	table;
	NvmTxn	   *txn;
	NvmVersion *oldv;
	HeapTuple	newtup;
	MemoryContext oldcxt;
	bool		key_changed;
	NvmConflict conflict;
	NvmWriteResult res;
	uint64		old_no = nvm_tid_to_version(otid);
	uint64		new_no;

	nvm_xact_check_access(rel);
	table = nvm_relation_table(rel);
	oldv = nvm_version_by_no(&table, old_no);
	if (oldv == NULL || nvm_version_is_tombstone(oldv))
		elog(ERROR, "version (%u,%u) of nvm table \"%s\" does not exist",
			 ItemPointerGetBlockNumberNoCheck(otid),
			 ItemPointerGetOffsetNumberNoCheck(otid),
			 RelationGetRelationName(rel));

	oldcxt = MemoryContextSwitchTo(nvm_write_context());
	newtup = nvm_form_tuple(rel, slot, cid);
	nvm_index_changes(rel, oldv, newtup, update_indexes, &key_changed);
	MemoryContextSwitchTo(oldcxt);
	*lockmode = key_changed ? LockTupleExclusive : LockTupleNoKeyExclusive;

	txn = nvm_xact_begin_write(*update_indexes);
	res = nvm_record_update(&table, txn, nvm_xact_level(), cid, old_no,
							newtup->t_data, newtup->t_len, *update_indexes,
							&new_no, &conflict);
	if (res == NVM_WRITE_OK)
	{
		nvm_store_version(rel, nvm_version_by_no(&table, new_no), slot);
		pgstat_count_heap_update(rel, !*update_indexes);
	}
	return nvm_write_result(rel, res, otid, &conflict, wait, tmfd);
}

/*
 * nvm_lock_wait_policy handles a row that another running transaction is
 * writing, for a row lock.
 */
static TM_Result
nvm_lock_busy(Relation rel, NvmVersion *busy, LockWaitPolicy wait_policy,
			  TM_FailureData *tmfd)
{
	nvm_version_to_tid(busy->version_no, &tmfd->ctid);
	tmfd->xmax = nvm_xact_published_xid(busy->txid);
	tmfd->cmax = InvalidCommandId;

	switch (wait_policy)
	{
		case LockWaitSkip:
			return TM_WouldBlock;
		case LockWaitError:
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not obtain lock on row in relation \"%s\"",
							RelationGetRelationName(rel))));
			break;
		case LockWaitBlock:
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not serialize access due to concurrent update"),
					 errdetail("Another transaction is writing the same row of nvm table \"%s\".",
							   RelationGetRelationName(rel)),
					 errhint("Retry the transaction.")));
			break;
	}
	return TM_WouldBlock;		/* keep compiler quiet */
}

/*
 * nvm_tuple_lock "locks" the row version tid: it checks that the version
 * is still the newest one of its row (with TUPLE_LOCK_FLAG_FIND_LAST_VERSION
 * it moves on to the newest committed one, as READ COMMITTED's
 * EvalPlanQual needs) and stores it in slot.  Other writers are not kept
 * away yet.  When it moves on, *tid is set to the version locked, which is
 * what the executor updates or deletes next.
 */
TM_Result
nvm_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
			   TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
			   LockWaitPolicy wait_policy, uint8 flags, TM_FailureData *tmfd)
{
	NvmTable	table;
	NvmVersion *v;
	NvmVersion *newest;
	NvmVersion *target;
	uint64		my_txid = nvm_xact_my_txid();

	nvm_xact_check_access(rel);
	table = nvm_relation_table(rel);
	v = nvm_version_by_no(&table, nvm_tid_to_version(tid));
	if (v == NULL)
		elog(ERROR, "version (%u,%u) of nvm table \"%s\" does not exist",
			 ItemPointerGetBlockNumberNoCheck(tid),
			 ItemPointerGetOffsetNumberNoCheck(tid),
			 RelationGetRelationName(rel));

	tmfd->traversed = false;
	tmfd->ctid = *tid;
	tmfd->xmax = InvalidTransactionId;
	tmfd->cmax = InvalidCommandId;

	newest = nvm_chain_newest(&table, v->record_no);
	if (newest == NULL)
		return TM_Invisible;	/* v itself was rolled back */

	target = v;
	if (newest != v)
	{
		if (nvm_version_by_other_running(newest, my_txid))
			return nvm_lock_busy(rel, newest, wait_policy, tmfd);

		if (my_txid != NVM_INVALID_TXID && newest->txid == my_txid)
		{
			/* replaced by this transaction: by this command, or an earlier one */
			nvm_version_to_tid(newest->version_no, &tmfd->ctid);
			tmfd->cmax = nvm_version_cid(newest);
			tmfd->xmax = GetTopTransactionId();
			return nvm_version_cid(newest) >= cid ? TM_SelfModified : TM_Invisible;
		}

		if (nvm_version_is_tombstone(newest))
			return TM_Deleted;
		if (!(flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION))
		{
			nvm_version_to_tid(newest->version_no, &tmfd->ctid);
			return TM_Updated;
		}
		/* like heap, move the caller's TID on to the version locked */
		target = newest;
		tmfd->traversed = true;
		nvm_version_to_tid(target->version_no, tid);
	}

	if (nvm_version_is_tombstone(target))
		return TM_Deleted;
	if (nvm_version_by_other_running(target, my_txid))
		return nvm_lock_busy(rel, target, wait_policy, tmfd);
	if (my_txid != NVM_INVALID_TXID && target->txid == my_txid &&
		nvm_version_cid(target) >= cid)
	{
		/* made by this very command: show the executor our own xmin */
		nvm_store_version_copy(rel, target, slot, GetTopTransactionIdIfAny());
		tmfd->cmax = nvm_version_cid(target);
		tmfd->xmax = GetTopTransactionIdIfAny();
		return TM_Invisible;
	}

	nvm_store_version(rel, target, slot);
	nvm_version_to_tid(target->version_no, &tmfd->ctid);
	return TM_Ok;
}
