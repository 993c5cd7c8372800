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
 * (EvalPlanQual).  A newer version of another transaction that is still
 * running is waited for through the lock manager (nvm_wait.c), after which
 * the write is tried again: it then succeeds (the other rolled back) or
 * meets the committed version as above.  A row that an update of its
 * partition key moved to another partition was deleted here with a
 * tombstone marked as moved (nvm_record_move_out); meeting one gives
 * TM_Updated with heap's moved-partitions TID in tmfd->ctid, so the
 * executor reports the move ("tuple to be locked was already moved to
 * another partition due to concurrent update") instead of skipping a row
 * that still exists.
 *
 * Logical decoding.  With wal_level = logical, a write of a table that
 * PostgreSQL decodes takes the transaction's PostgreSQL xid before the
 * write (the versions carry it), and each successful write is logged right
 * after it (nvm_wal.c): inserts, updates, deletes, and the outcome of a
 * speculative insertion.
 *
 * Row locks (SELECT FOR UPDATE/SHARE, foreign-key checks) are lock words
 * in the pool, one per record, naming the lockers' xids as heap's xmax
 * does; writers never take them, they only wait for conflicting lockers.
 * The protocols of lockers (nvm_tuple_lock) and writers (nvm_write_row),
 * and why they neither miss a conflict nor add deadlocks, are in
 * nvm_rowlock.c.
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
#include "port/atomics.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "gc.h"
#include "replica.h"

#include "am/nvm_am.h"
#include "logical/nvm_wal.h"
#include "redo/nvm_redo.h"
#include "row/nvm_tid.h"
#include "row/nvm_toast.h"
#include "row/nvm_tuple.h"
#include "space/nvm_relation.h"
#include "wait/nvm_decision.h"
#include "wait/nvm_lockword.h"
#include "wait/nvm_rowlock.h"
#include "wait/nvm_wait.h"
#include "xact/nvm_commit.h"
#include "xact/nvm_snapshot.h"
#include "xact/nvm_ssi.h"
#include "xact/nvm_token.h"
#include "xact/nvm_visibility.h"
#include "xact/nvm_xact.h"

/*
 * How old a row this backend updated must be before its replaced version
 * is pruned (gc.c, deferred pruning): by then the snapshots that were
 * running at the update have mostly ended.
 */
#define NVM_DEFERRED_PRUNE_AGE_NS	(20 * 1000 * 1000)

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
 * write_waiters says who may wait on a write to rel (NvmWriteWaiters):
 * decoding needs the xid; index entries, and deletes from an indexed
 * table (indexed says whether the write is one), an xid or its stand-in.
 */
static NvmWriteWaiters
write_waiters(Relation rel, bool indexed)
{
	if (nvm_wal_logs_changes(rel))
		return NVM_WAITERS_XID;
	return indexed ? NVM_WAITERS_DIRTY : NVM_WAITERS_NVM;
}

/*
 * What an entry point is about to do: it decides which of write_begin's
 * steps the entry point takes (the comments list them, in their order).
 */
typedef enum WriteEntry
{
	WRITE_INSERT,				/* new rows: access, SSI, storage, write begun */
	WRITE_CHANGE,				/* update or delete: access, SSI of the row, storage */
	WRITE_LOCK,					/* row lock: access, storage */
	WRITE_SPECULATIVE_END		/* end of a speculative insertion: storage, write begun */
} WriteEntry;

/*
 * write_begin is the prologue of every entry point that writes rel, in this
 * order: the access check (nvm_xact_check_access); the serializable write
 * check on rel and, for a change, on otid's row (nvm_ssi_write; a row lock
 * writes no version, and the end of a speculative insertion was checked as
 * its insertion); rel's storage (nvm_relation_table), into *table; and, for
 * new rows and the end of a speculative insertion, the write itself
 * (nvm_xact_begin_write), which it returns.  Rows of a table with indexes
 * will get index entries, and a change that logical decoding is to see
 * belongs to a PostgreSQL transaction, so an insert first publishes what
 * waiters need (write_waiters).  An update or a delete begins its write
 * later, in the writer protocol (nvm_write_row), after waiting for row
 * lockers and with the waiters the write amounts to; for them, and for a
 * row lock, the result is NULL.  Always inlined: entry is a constant in
 * every caller, so each gets its own steps and nothing more.
 */
static pg_attribute_always_inline NvmTxn *
write_begin(Relation rel, WriteEntry entry, ItemPointer otid, NvmTable *table)
{
	if (entry != WRITE_SPECULATIVE_END)
		nvm_xact_check_access(rel);
	if (entry == WRITE_INSERT || entry == WRITE_CHANGE)
		nvm_ssi_write(rel, otid);
	*table = nvm_relation_table(rel);
	if (entry == WRITE_INSERT)
		return nvm_xact_begin_write(write_waiters(rel, rel->rd_rel->relhasindex));
	if (entry == WRITE_SPECULATIVE_END)
		return nvm_xact_begin_write(NVM_WAITERS_NVM);
	return NULL;
}

/*
 * note_version_number reserves version_no in the WAL for physical standbys
 * if it is at or above the table's reserved limit (nvm_redo.c), before the
 * caller makes an index entry naming it.
 */
static inline void
note_version_number(Relation rel, NvmTable *table, uint64 version_no)
{
	NvmTableKey key;

	if (likely(version_no < nvm_table_redo_reserved(table)) ||
		rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
		return;
	nvm_relation_key(rel, &rel->rd_locator, rel->rd_rel->relpersistence, &key);
	nvm_redo_note_version(table, &key, version_no);
}

/*
 * insert_done does what follows the core's insert of tuple as version
 * version_no: the main fork covered, the number reserved for standbys, the
 * insert logged for logical decoding (options are the insert's), the
 * slot's TID and contents set to the new version (its slot found through
 * vslots, the caller's memory of the table's version slots), the index root
 * noted.
 */
static inline void
insert_done(Relation rel, NvmTable *table, TupleTableSlot *slot, HeapTuple tuple,
			uint64 version_no, int options, NvmSegCache *vslots)
{
	nvm_storage_cover_version(rel, version_no);
	note_version_number(rel, table, version_no);
	/* logged before the slot takes the version: tuple may be the slot's (nvm_form_tuple) */
	nvm_wal_log_insert(rel, tuple, options);
	nvm_store_version(rel, nvm_version_by_no_cached(table, version_no, vslots), slot);
	if (rel->rd_rel->relhasindex)
		nvm_commit_note_index_root(rel, table, version_no);
}

/*
 * insert_failed reports a core insert into rel that did not succeed.
 */
static void
insert_failed(Relation rel, NvmWriteResult res)
{
	if (res == NVM_WRITE_NO_SPACE)
		nvm_report_pool_full(rel);
	elog(ERROR, "unexpected result %d of an insert into nvm table \"%s\"",
		 (int) res, RelationGetRelationName(rel));
}

/*
 * nvm_insert_one stores the row in slot as a new record, sets the slot's
 * TID to the new version's, and logs the insert for logical decoding
 * (options are the insert's); a speculative insertion (spec_token not 0)
 * carries its token in the image (nvm_tuple_mark_speculative).
 */
static void
nvm_insert_one(Relation rel, NvmTable *table, NvmTxn *txn, TupleTableSlot *slot,
			   CommandId cid, int options, uint32 spec_token)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(nvm_write_context());
	HeapTuple	tuple = nvm_form_tuple(rel, slot, cid, NULL,
									   nvm_token_for_write(table->desc));
	uint64		version_no;
	NvmWriteResult res;

	MemoryContextSwitchTo(oldcxt);
	if (spec_token != 0)
		nvm_tuple_mark_speculative(tuple, spec_token, GetCurrentTransactionId());
	res = nvm_record_insert(table, txn, nvm_xact_level(), cid,
							tuple->t_data, tuple->t_len, &version_no);
	if (res != NVM_WRITE_OK)
		insert_failed(rel, res);
	insert_done(rel, table, slot, tuple, version_no, options, &(NvmSegCache) {0});
}

/*
 * insert_row inserts one row (options and spec_token: see nvm_insert_one).
 */
static void
insert_row(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
		   uint32 spec_token)
{
	NvmTable	table;
	NvmTxn	   *txn;

	txn = write_begin(rel, WRITE_INSERT, NULL, &table);
	nvm_insert_one(rel, &table, txn, slot, cid, options, spec_token);
	nvm_commit_note_write(rel);
	pgstat_count_heap_insert(rel, 1);
}

/*
 * nvm_tuple_insert inserts one row.
 */
void
nvm_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
				 int options, struct BulkInsertStateData *bistate)
{
	insert_row(rel, slot, cid, options, 0);
}

/*
 * nvm_tuple_insert_speculative inserts the row of an INSERT ... ON
 * CONFLICT as a speculative insertion, as heap does: until
 * nvm_tuple_complete_speculative decides, its image carries the token the
 * executor holds its speculative-insertion lock on (and the xid it took it
 * with), and a session that meets the row through SnapshotDirty (a
 * conflicting insert's uniqueness check) waits for that token, not for the
 * whole transaction (nvm_visibility.c).
 */
void
nvm_tuple_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid,
							 int options, struct BulkInsertStateData *bistate,
							 uint32 specToken)
{
	insert_row(rel, slot, cid, options | HEAP_INSERT_SPECULATIVE, specToken);
}

/*
 * nvm_tuple_complete_speculative ends a speculative insertion before the
 * executor releases its token, and logs its outcome for logical decoding:
 * the image loses its token, so that waiters woken by the release wait for
 * the transaction from then on, as for any row.  One that found no
 * conflict is accepted; one that lost a race with a concurrent insert of
 * the same key is killed: its version is marked aborted at once, so nobody
 * (the inserting transaction included) sees it, while the rest of the
 * transaction goes on.  Its index entries lead to no visible version, and
 * its out-of-line values are super-deleted, as heap does.
 */
void
nvm_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
							   uint32 specToken, bool succeeded)
{
	NvmTable	table;
	NvmTxn	   *txn = write_begin(rel, WRITE_SPECULATIVE_END, NULL, &table);
	NvmVersion *v = nvm_version_by_no(&table, nvm_tid_to_version(&slot->tts_tid));
	HeapTupleData tuple;

	nvm_wal_log_speculative_end(rel, succeeded);
	if (v == NULL || nvm_version_is_tombstone(v) || v->txid != txn->txid)
		elog(ERROR, "speculative insertion into nvm table \"%s\" not found",
			 RelationGetRelationName(rel));
	if (!succeeded)
	{
		(void) nvm_record_kill(&table, txn, v->version_no);
		nvm_version_tuple(rel, v, &tuple);
		nvm_toast_forget(rel, &tuple, NULL, true);
	}
	nvm_version_end_speculative(v);
}

/*
 * nvm_multi_insert inserts several rows (COPY): their images are formed
 * first, then stored with one call of the core (nvm_record_insert_many,
 * one drain for all of them instead of one a row; its persist order is in
 * store.h), then each row gets what nvm_insert_one does after the core's
 * insert (insert_done).
 */
void
nvm_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
				 CommandId cid, int options, struct BulkInsertStateData *bistate)
{
	NvmTable	table;
	NvmTxn	   *txn = write_begin(rel, WRITE_INSERT, NULL, &table);
	MemoryContext oldcxt = MemoryContextSwitchTo(nvm_write_context());
	TransactionId token = nvm_token_for_write(table.desc);
	HeapTuple  *tuples = palloc(sizeof(HeapTuple) * nslots);
	const void **data = palloc(sizeof(void *) * nslots);
	uint32	   *len = palloc(sizeof(uint32) * nslots);
	uint64	   *version_nos = palloc(sizeof(uint64) * nslots);
	NvmSegCache vslots = {0};	/* the batch's numbers are mostly consecutive */
	int			done;
	NvmWriteResult res;

	for (int i = 0; i < nslots; i++)
	{
		tuples[i] = nvm_form_tuple(rel, slots[i], cid, NULL, token);
		data[i] = tuples[i]->t_data;
		len[i] = tuples[i]->t_len;
	}
	MemoryContextSwitchTo(oldcxt);
	res = nvm_record_insert_many(&table, txn, nvm_xact_level(), cid, nslots,
								 data, len, version_nos, &done);
	for (int i = 0; i < done; i++)
		insert_done(rel, &table, slots[i], tuples[i], version_nos[i], options, &vslots);
	if (res != NVM_WRITE_OK)
		insert_failed(rel, res);
	nvm_commit_note_write(rel);
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
	indexed = NVM_INDEX_ATTR_BITMAP_ALL(rel);
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
 * nvm_own_newest says whether the newest version of record_no is one of
 * this transaction's.
 */
static bool
nvm_own_newest(NvmTable *table, uint64 record_no)
{
	NvmVersion *newest = nvm_chain_newest(table, record_no);
	uint64		my_txid = nvm_xact_my_txid();

	return newest != NULL && my_txid != NVM_INVALID_TXID && newest->txid == my_txid;
}

/*
 * nvm_write_row pushes a new version onto the row whose version is oldv:
 * the image newtup, or a tombstone when newtup is NULL (marked as a move
 * to another partition when moved_out is true).  mode is the row-lock
 * mode the write amounts to.  It follows the writer protocol of
 * nvm_rowlock.c: it waits for the holders of conflicting row locks and
 * gives way to a locker that came during the write; when another running
 * transaction has a newer version it waits for that transaction
 * (nvm_wait.c) and tries again.  Before any wait it queues behind the
 * earlier waiters for the row, and keeps its place until its version is
 * in.  A caller that does not wait gets NVM_WRITE_BEING_MODIFIED instead.
 * After NVM_WRITE_OK, *new_no is the new version's number.
 */
static NvmWriteResult
nvm_write_row(Relation rel, NvmTable *table, NvmVersion *oldv, CommandId cid,
			  HeapTuple newtup, bool moved_out, bool new_index_run,
			  NvmWriteWaiters waiters, LockTupleMode mode, bool wait,
			  uint64 *new_no, NvmConflict *conflict)
{
	uint64		record = oldv->record_no;
	NvmRowQueue queue = {0};
	NvmWriteResult res;

	/* rows this backend wrote a little earlier: their old versions can go now */
	nvm_gc_run_deferred(table, NVM_DEFERRED_PRUNE_AGE_NS);
	nvm_wait_before_subxact_change();
	for (;;)
	{
		NvmTxn	   *txn;

		/* W1: wait for the holders of conflicting row locks */
		if (nvm_rowlock_conflicts(table, record, mode))
		{
			if (!wait)
				break;
			nvm_rowlock_enqueue(rel, table, record, mode, nvm_own_newest(table, record), &queue);
			(void) nvm_rowlock_wait_lockers(rel, table, record, mode, LockWaitBlock);
		}

		txn = nvm_xact_begin_write(waiters);
		nvm_decision_set(txn->slot, rel, record);	/* W2 */
		if (moved_out)
			res = nvm_record_move_out(table, txn, nvm_xact_level(), cid,
									  oldv->version_no, new_no, conflict);	/* W3 */
		else
			res = nvm_record_update(table, txn, nvm_xact_level(), cid, oldv->version_no,
									newtup ? newtup->t_data : NULL,
									newtup ? newtup->t_len : 0,
									new_index_run, new_no, conflict);	/* W3 */
		if (res == NVM_WRITE_OK)
		{
			nvm_storage_cover_version(rel, *new_no);
			note_version_number(rel, table, *new_no);
		}

		/* W4: a locker may have come meanwhile */
		if (res == NVM_WRITE_OK && nvm_rowlock_conflicts(table, record, mode))
		{
			/* it holds a conflicting lock: give way, and write again later */
			if (!nvm_record_kill(table, txn, *new_no))
				elog(ERROR, "new version of a row of nvm table \"%s\" not found",
					 RelationGetRelationName(rel));
			nvm_decision_clear();
			if (!wait)
				break;
			continue;
		}
		nvm_decision_clear();	/* W5 */
		if (res == NVM_WRITE_OK)
		{
			/* prune the row's chain now, and again a little later */
			nvm_gc_after_update(table, record);
			nvm_gc_defer(table, record);
		}

		if (res != NVM_WRITE_BEING_MODIFIED || !wait)
		{
			nvm_rowlock_dequeue(&queue);
			return res;
		}

		/* another transaction is writing the row: wait for it */
		nvm_rowlock_enqueue(rel, table, record, mode, false, &queue);
		nvm_wait_for_writer(rel, nvm_version_by_no(table, conflict->newer_version_no));
	}

	/* a row lock is in the way of a caller that does not wait */
	nvm_rowlock_dequeue(&queue);
	memset(conflict, 0, sizeof(*conflict));
	conflict->newer_version_no = oldv->version_no;
	return NVM_WRITE_BEING_MODIFIED;
}

/*
 * nvm_tombstone_result is the answer to a write or lock that meets a
 * committed tombstone: TM_Deleted, or for a row moved to another partition
 * TM_Updated with heap's moved-partitions marker in tmfd->ctid.  A lock
 * that was to follow the row to its newest version (READ COMMITTED's
 * EvalPlanQual, TUPLE_LOCK_FLAG_FIND_LAST_VERSION in flags) cannot follow
 * it into another partition and fails as heap's does.
 */
static TM_Result
nvm_tombstone_result(bool moved, uint8 flags, TM_FailureData *tmfd)
{
	if (!moved)
		return TM_Deleted;
	if (flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("tuple to be locked was already moved to another partition due to concurrent update")));
	ItemPointerSetMovedPartitions(&tmfd->ctid);
	return TM_Updated;
}

/*
 * nvm_write_result turns the core's answer to an update or delete of the
 * version otid into a TM_Result, filling tmfd for the failures.  A running
 * newer version only comes back from callers that did not want to wait.
 */
static TM_Result
nvm_write_result(Relation rel, NvmWriteResult res, ItemPointer otid,
				 NvmConflict *conflict, TM_FailureData *tmfd)
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
			return nvm_tombstone_result(conflict->newer_is_moved, 0, tmfd);
		case NVM_WRITE_BEING_MODIFIED:
			nvm_version_to_tid(conflict->newer_version_no, &tmfd->ctid);
			tmfd->xmax = conflict->newer_txid != NVM_INVALID_TXID ?
				nvm_xact_published_xid(conflict->newer_txid) : InvalidTransactionId;
			tmfd->cmax = InvalidCommandId;
			return TM_BeingModified;
		case NVM_WRITE_NO_SPACE:
			nvm_report_pool_full(rel);
	}
	elog(ERROR, "unexpected result %d of a write to nvm table \"%s\"",
		 (int) res, RelationGetRelationName(rel));
	return TM_Invisible;		/* keep compiler quiet */
}

/*
 * nvm_existing_version returns the version tid names, which the executor
 * is about to update or delete.
 */
static NvmVersion *
nvm_existing_version(Relation rel, NvmTable *table, ItemPointer tid)
{
	NvmVersion *v = nvm_version_by_no(table, nvm_tid_to_version(tid));

	if (v == NULL || nvm_version_is_tombstone(v))
		elog(ERROR, "version (%u,%u) of nvm table \"%s\" does not exist",
			 ItemPointerGetBlockNumberNoCheck(tid),
			 ItemPointerGetOffsetNumberNoCheck(tid),
			 RelationGetRelationName(rel));
	return v;
}

/*
 * nvm_crosscheck_fails says whether oldv is invisible to crosscheck, the
 * transaction snapshot a foreign-key action in REPEATABLE READ passes
 * along with the latest snapshot it found the row with: as heap, such a
 * row is reported as concurrently updated, which the executor turns into
 * a serialization failure.
 */
static bool
nvm_crosscheck_fails(Relation rel, NvmTable *table, NvmVersion *oldv,
					 Snapshot crosscheck, ItemPointer otid, TM_FailureData *tmfd)
{
	NvmView		view;

	if (crosscheck == InvalidSnapshot)
		return false;
	nvm_view_init(&view, crosscheck, nvm_xact_transaction_snapshot());
	if (nvm_version_visible(table, oldv, crosscheck, &view))
		return false;
	tmfd->traversed = false;
	tmfd->ctid = *otid;
	tmfd->xmax = InvalidTransactionId;
	tmfd->cmax = InvalidCommandId;
	return true;
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
	NvmVersion *oldv;
	NvmConflict conflict;
	NvmWriteResult res;
	uint64		tombstone_no;

	(void) write_begin(rel, WRITE_CHANGE, tid, &table);
	oldv = nvm_existing_version(rel, &table, tid);
	if (nvm_crosscheck_fails(rel, &table, oldv, crosscheck, tid, tmfd))
		return TM_Updated;
	res = nvm_write_row(rel, &table, oldv, cid, NULL, changingPart, false,
						write_waiters(rel, rel->rd_rel->relhasindex),
						LockTupleExclusive, wait, &tombstone_no, &conflict);
	if (res == NVM_WRITE_OK)
	{
		HeapTupleData oldtup;

		nvm_version_tuple(rel, oldv, &oldtup);
		nvm_wal_log_delete(rel, &oldtup);
		nvm_toast_forget(rel, &oldtup, NULL, false);
		nvm_commit_note_write(rel);
		pgstat_count_heap_delete(rel);
	}
	return nvm_write_result(rel, res, tid, &conflict, tmfd);
}

/*
 * nvm_tuple_update replaces the row whose version is otid by the row in
 * slot, and says whether the new version needs index entries (an indexed
 * column changed) and which lock mode the update amounts to.  A key update
 * is marked HEAP_KEYS_UPDATED in the new image (in heap the bit is on the
 * old tuple): row lockers read the mode of a running update from it.
 */
TM_Result
nvm_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
				 CommandId cid, Snapshot snapshot, Snapshot crosscheck,
				 bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
				 NvmUpdateIndexes *update_indexes)
{
	bool		index_update;
	NvmTable	table;
	NvmVersion *oldv;
	HeapTupleData oldtup;
	HeapTuple	newtup;
	MemoryContext oldcxt;
	bool		key_changed;
	NvmConflict conflict;
	NvmWriteResult res;
	uint64		new_no;

	(void) write_begin(rel, WRITE_CHANGE, otid, &table);
	oldv = nvm_existing_version(rel, &table, otid);
	if (nvm_crosscheck_fails(rel, &table, oldv, crosscheck, otid, tmfd))
	{
		*lockmode = LockTupleExclusive;
		NVM_SET_UPDATE_INDEXES(update_indexes, false);
		return TM_Updated;
	}

	nvm_version_tuple(rel, oldv, &oldtup);
	oldcxt = MemoryContextSwitchTo(nvm_write_context());
	newtup = nvm_form_tuple(rel, slot, cid, &oldtup, nvm_token_for_write(table.desc));
	nvm_index_changes(rel, oldv, newtup, &index_update, &key_changed);
	NVM_SET_UPDATE_INDEXES(update_indexes, index_update);
	MemoryContextSwitchTo(oldcxt);
	*lockmode = key_changed ? LockTupleExclusive : LockTupleNoKeyExclusive;
	if (key_changed)
		newtup->t_data->t_infomask2 |= HEAP_KEYS_UPDATED;

	res = nvm_write_row(rel, &table, oldv, cid, newtup, false, index_update,
						write_waiters(rel, index_update),
						*lockmode, wait, &new_no, &conflict);
	if (res == NVM_WRITE_OK)
	{
		nvm_wal_log_update(rel, &oldtup, newtup);
		/* the old row's values that the new one does not carry on go */
		nvm_toast_forget(rel, &oldtup, newtup, false);
		nvm_store_version(rel, nvm_version_by_no(&table, new_no), slot);
		if (index_update)
			nvm_commit_note_index_root(rel, &table, new_no);
		nvm_commit_note_write(rel);
		NVM_COUNT_HEAP_UPDATE(rel, !index_update);
	}
	else if (res != NVM_WRITE_NO_SPACE)
	{
		/* saved for nothing */
		nvm_wal_log_toast_discard(rel, newtup);
		nvm_toast_forget(rel, newtup, &oldtup, true);
	}
	return nvm_write_result(rel, res, otid, &conflict, tmfd);
}

/*
 * nvm_conflicting_writer returns the newest version above v of another
 * running transaction whose write conflicts with mode, or NULL (looking
 * through non-conflicting writes as nvm_lock_target does, and stopping at
 * a committed conflicting one or one of this transaction's).
 */
static NvmVersion *
nvm_conflicting_writer(NvmTable *table, NvmVersion *v, LockTupleMode mode)
{
	uint64		my_txid = nvm_xact_my_txid();

	for (NvmVersion *p = nvm_chain_newest(table, v->record_no); p != NULL && p != v;
		 p = nvm_prev_live(p))
	{
		if (my_txid != NVM_INVALID_TXID && p->txid == my_txid)
			return NULL;
		if (!nvm_lockword_modes_conflict(mode, nvm_lockword_writer_mode(p)))
			continue;
		return nvm_version_by_other_running(p, my_txid) ? p : NULL;
	}
	return NULL;
}

/*
 * nvm_lock_target decides what locking version v comes to, given the
 * row's chain as it is now; the caller holds the row lock in mode.  Like
 * heap_lock_tuple, it looks through newer versions whose writes do not
 * conflict with mode (updates keeping the key, for FOR KEY SHARE), whether
 * their transactions committed or still run; the newest write that does
 * conflict decides.  If it belongs to another running transaction (or
 * one whose commit has not completed), the result is TM_BeingModified with *busy set to that version, for the caller
 * to wait for.  Otherwise the result is heap_lock_tuple's: TM_Updated or
 * TM_Deleted for a committed conflicting write, or, with
 * TUPLE_LOCK_FLAG_FIND_LAST_VERSION, TM_Ok on the version that write
 * created (heap follows the update chain to the same version), which is
 * then stored in slot and *tid.
 */
static TM_Result
nvm_lock_target(Relation rel, NvmTable *table, NvmVersion *v, ItemPointer tid,
				TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
				uint8 flags, TM_FailureData *tmfd, NvmVersion **busy)
{
	uint64		my_txid = nvm_xact_my_txid();
	NvmVersion *target;

	*busy = NULL;
	tmfd->xmax = InvalidTransactionId;
	tmfd->cmax = InvalidCommandId;

again:
	target = v;
	tmfd->traversed = false;
	nvm_version_to_tid(v->version_no, tid);
	tmfd->ctid = *tid;
	for (NvmVersion *p = nvm_chain_newest(table, v->record_no); p != v;
		 p = nvm_prev_live(p))
	{
		NvmTxnStatus st;

		if (p == NULL)
			return TM_Invisible;	/* v itself was rolled back */

		if (my_txid != NVM_INVALID_TXID && p->txid == my_txid)
		{
			/* replaced by this transaction: by this command, or an earlier one */
			nvm_version_to_tid(p->version_no, &tmfd->ctid);
			tmfd->cmax = nvm_version_cid(p);
			tmfd->xmax = GetTopTransactionId();
			return nvm_version_cid(p) >= cid ? TM_SelfModified : TM_Invisible;
		}
		if (!nvm_lockword_modes_conflict(mode, nvm_lockword_writer_mode(p)))
			continue;

		st = nvm_version_status(p);
		if (st == NVM_STATUS_ABORTED)
			goto again;			/* killed or rolled back just now */

		/*
		 * A commit whose completion is not published yet may still be
		 * waiting for its record's flush (where commits are durable through
		 * the WAL) or for a synchronous standby: its rows are not to be
		 * seen before that, so it is waited for as a running writer, as a
		 * write on the row does (core store.c, check_newer).
		 */
		if (st == NVM_STATUS_RUNNING ||
			(st == NVM_STATUS_COMMITTED && nvm_txid_unfinished(p->txid)))
		{
			*busy = p;
			nvm_version_to_tid(p->version_no, &tmfd->ctid);
			tmfd->xmax = nvm_xact_published_xid(p->txid);
			return TM_BeingModified;
		}
		if (nvm_version_is_tombstone(p))
			return nvm_tombstone_result(nvm_version_is_moved(p), flags, tmfd);
		nvm_version_to_tid(p->version_no, &tmfd->ctid);
		if (!(flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION))
			return TM_Updated;
		/* like heap, move the caller's TID on to the version locked */
		target = p;
		tmfd->traversed = true;
		nvm_version_to_tid(target->version_no, tid);
		break;
	}

	if (target != v && nvm_version_status(target) == NVM_STATUS_ABORTED)
		goto again;
	if (nvm_version_by_other_running(target, my_txid))
	{
		/* inserted by a transaction still running */
		*busy = target;
		tmfd->xmax = nvm_xact_published_xid(target->txid);
		return TM_BeingModified;
	}
	if (nvm_version_is_tombstone(target))
		return nvm_tombstone_result(nvm_version_is_moved(target), flags, tmfd);
	if (my_txid != NVM_INVALID_TXID && target->txid == my_txid &&
		nvm_version_cid(target) >= cid)
	{
		/*
		 * made by this very command: show the executor our own xmin (ON
		 * CONFLICT DO UPDATE tells "cannot affect row a second time" by it),
		 * assigning the xid if the transaction has none yet
		 */
		nvm_store_version_copy(rel, target, slot, GetTopTransactionId());
		tmfd->cmax = nvm_version_cid(target);
		tmfd->xmax = GetTopTransactionId();
		return TM_Invisible;
	}

	nvm_store_version(rel, target, slot);
	nvm_version_to_tid(target->version_no, &tmfd->ctid);
	return TM_Ok;
}

/*
 * nvm_lock_must_not_wait applies a row lock's wait policy when the lock
 * would have to wait: true for SKIP LOCKED, an error for NOWAIT, false
 * (go and wait) otherwise.
 */
static bool
nvm_lock_must_not_wait(Relation rel, LockWaitPolicy wait_policy)
{
	if (wait_policy == LockWaitError)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not obtain lock on row in relation \"%s\"",
						RelationGetRelationName(rel))));
	return wait_policy == LockWaitSkip;
}

/*
 * nvm_tuple_lock locks the row whose version is tid in mode, following the
 * locker protocol of nvm_rowlock.c: the lock is a lock word of the record
 * naming the current (sub)transaction's xid, until that ends; holders of
 * conflicting row locks, and another running transaction's newer version
 * whose write conflicts with mode, are waited for (LockWaitBlock, queued
 * behind earlier waiters), skipped (LockWaitSkip) or an error
 * (LockWaitError).  With TUPLE_LOCK_FLAG_FIND_LAST_VERSION it moves on to
 * the newest committed version, as READ COMMITTED's EvalPlanQual needs, and
 * sets *tid to it.  The version locked is stored in slot.
 */
TM_Result
nvm_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
			   TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
			   LockWaitPolicy wait_policy, uint8 flags, TM_FailureData *tmfd)
{
	NvmTable	table;
	NvmVersion *v;
	uint64		record;
	NvmRowQueue queue = {0};
	TM_Result	res;

	(void) write_begin(rel, WRITE_LOCK, NULL, &table);
	v = nvm_version_by_no(&table, nvm_tid_to_version(tid));
	if (v == NULL)
		elog(ERROR, "version (%u,%u) of nvm table \"%s\" does not exist",
			 ItemPointerGetBlockNumberNoCheck(tid),
			 ItemPointerGetOffsetNumberNoCheck(tid),
			 RelationGetRelationName(rel));
	record = v->record_no;

	tmfd->traversed = false;
	tmfd->ctid = *tid;
	tmfd->xmax = InvalidTransactionId;
	tmfd->cmax = InvalidCommandId;

	for (;;)
	{
		/* L1 */
		NvmVersion *busy = nvm_conflicting_writer(&table, v, mode);

		if (busy == NULL)
		{
			/* L2 */
			NvmRowLockResult taken = nvm_rowlock_take(rel, &table, record, mode);

			if (taken == NVM_ROWLOCK_BUSY)
			{
				if (wait_policy == LockWaitBlock)
					nvm_rowlock_enqueue(rel, &table, record, mode,
										nvm_own_newest(&table, record), &queue);
				if (!nvm_rowlock_wait_lockers(rel, &table, record, mode, wait_policy))
				{
					res = TM_WouldBlock;
					break;
				}
				continue;
			}

			/* L3 */
			pg_memory_barrier();
			res = nvm_lock_target(rel, &table, v, tid, slot, cid, mode, flags,
								  tmfd, &busy);
			if (busy == NULL)
			{
				/* keep the lock only if the row is locked */
				if (taken == NVM_ROWLOCK_TAKEN)
				{
					if (res == TM_Ok)
						nvm_rowlock_keep();
					else
						nvm_rowlock_give_back();
				}
				break;
			}
			/* a conflicting writer came before the lock: give it back */
			if (taken == NVM_ROWLOCK_TAKEN)
				nvm_rowlock_give_back();
		}

		/* a conflicting write of another running transaction */
		if (nvm_decision_wait(busy->txid, rel, record))
			continue;
		nvm_version_to_tid(busy->version_no, &tmfd->ctid);
		tmfd->xmax = nvm_xact_published_xid(busy->txid);
		if (nvm_lock_must_not_wait(rel, wait_policy))
		{
			res = TM_WouldBlock;
			break;
		}
		nvm_rowlock_enqueue(rel, &table, record, mode, false, &queue);
		nvm_wait_for_writer(rel, busy);
	}
	nvm_rowlock_dequeue(&queue);
	return res;
}
