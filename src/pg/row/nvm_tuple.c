/*-------------------------------------------------------------------------
 *
 * nvm_tuple.c
 *	  Stored tuple images of nvm versions, and tuple table slots over them.
 *
 * The data of an nvm version is a complete heap tuple image (header and
 * data, t_len bytes), so slots, deforming and system columns work as for
 * heap.  Wide rows are toasted as heap toasts them (nvm_toast.c), so an
 * image may hold compressed values and TOAST pointers.  The header says
 * "frozen" (HEAP_XMIN_FROZEN, xmax invalid): nvm visibility comes from the
 * version chain, never from these fields.  The raw xmin, which the xmin
 * system column shows, is the writer's row-version token (nvm_token.c).
 * cmin is the inserting command, as in heap.  t_ctid is left invalid
 * because the version number is only assigned when the core stores the
 * image (a speculative insertion keeps its token there for a while, see
 * below); a version's TID always travels in t_self and the slot's tts_tid.
 *
 * Versions never change once published (but for the end of a speculative
 * insertion), so slots point straight into the pool (no copy): a
 * HeapTupleTableSlot's own HeapTupleData workspace (tupdata) describes the
 * version, and lives exactly as long as the slot.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/transam.h"
#include "executor/tuptable.h"
#include "port/atomics.h"
#include "utils/memutils.h"

#include "persist.h"

#include "row/nvm_tid.h"
#include "row/nvm_toast.h"
#include "row/nvm_tuple.h"

/*
 * nvm_form_tuple forms the stored image of the row in slot, for command
 * cid, with xmin (the writer's token, nvm_token.c), toasted as heap would
 * store it (nvm_toast_row; oldtup is the version the row replaces, NULL for
 * an insert).  As heap_insert and heap_update do with theirs, it fills in
 * the header of the slot's own materialized tuple (the executor has
 * usually materialized it already: ExecUpdate does), instead of forming a
 * second tuple from the slot's values; a slot of another kind than a heap
 * tuple slot gives a copy, made in the current memory context.  The image
 * then goes into the pool in one copy (store.c), and stays the slot's
 * until the caller stores the new version in the slot (nvm_store_version),
 * so the caller is done with it by then.
 */
HeapTuple
nvm_form_tuple(Relation rel, TupleTableSlot *slot, CommandId cid, HeapTuple oldtup,
			   TransactionId xmin)
{
	HeapTuple	tuple;
	HeapTupleHeader td;
	bool		should_free;

	tuple = ExecFetchSlotHeapTuple(slot, true, &should_free);
	tuple->t_tableOid = RelationGetRelid(rel);
	tuple = nvm_toast_row(rel, tuple, oldtup);

	td = tuple->t_data;
	td->t_infomask &= ~HEAP_XACT_MASK;
	td->t_infomask2 &= ~HEAP2_XACT_MASK;
	HeapTupleHeaderSetXmin(td, xmin);
	HeapTupleHeaderSetXminFrozen(td);
	HeapTupleHeaderSetCmin(td, cid);
	HeapTupleHeaderSetXmax(td, InvalidTransactionId);
	td->t_infomask |= HEAP_XMAX_INVALID;
	ItemPointerSetInvalid(&td->t_ctid);
	tuple->t_tableOid = RelationGetRelid(rel);
	return tuple;
}

/*
 * version_tuple makes tuple describe version v in place (no copy).
 */
static inline void
version_tuple(Relation rel, NvmVersion *v, HeapTuple tuple)
{
	Assert(!nvm_version_is_tombstone(v));
	tuple->t_len = v->data_len;
	nvm_version_to_tid(v->version_no, &tuple->t_self);
	tuple->t_tableOid = RelationGetRelid(rel);
	tuple->t_data = (HeapTupleHeader) v->data;
}

/*
 * nvm_version_tuple makes tuple describe version v in place (no copy).
 */
void
nvm_version_tuple(Relation rel, NvmVersion *v, HeapTuple tuple)
{
	version_tuple(rel, v, tuple);
}

/*
 * nvm_store_version stores version v in slot, with v's own TID.  A heap
 * tuple slot points into the pool; any other kind of slot gets whatever
 * ExecForceStoreHeapTuple makes of a tuple it does not own.
 */
void
nvm_store_version(Relation rel, NvmVersion *v, TupleTableSlot *slot)
{
	if (TTS_IS_HEAPTUPLE(slot))
	{
		HeapTupleTableSlot *hslot = (HeapTupleTableSlot *) slot;

		/*
		 * The slot may be showing tupdata right now: rewriting it before
		 * the store is harmless, since ExecStoreHeapTuple first clears the
		 * slot, which never frees tupdata (the slot owns only tuples it
		 * copied), and then takes the tuple, its TID and its table.
		 */
		version_tuple(rel, v, &hslot->tupdata);
		ExecStoreHeapTuple(&hslot->tupdata, slot, false);
	}
	else
	{
		HeapTupleData tuple;

		nvm_version_tuple(rel, v, &tuple);
		ExecForceStoreHeapTuple(&tuple, slot, false);
		slot->tts_tid = tuple.t_self;
		slot->tts_tableOid = RelationGetRelid(rel);
	}
}

/*
 * nvm_store_version_copy stores a private copy of version v in slot, with
 * its xmin set to xmin if that is valid.  Used where the executor reads the
 * xmin of a row to tell its own transaction's rows apart (ON CONFLICT DO
 * UPDATE meeting a row it inserted itself).
 */
void
nvm_store_version_copy(Relation rel, NvmVersion *v, TupleTableSlot *slot,
					   TransactionId xmin)
{
	HeapTupleData tuple;
	HeapTuple	copy;
	MemoryContext oldcxt;

	nvm_version_tuple(rel, v, &tuple);
	oldcxt = MemoryContextSwitchTo(slot->tts_mcxt);
	copy = heap_copytuple(&tuple);
	MemoryContextSwitchTo(oldcxt);
	if (TransactionIdIsValid(xmin))
	{
		copy->t_data->t_infomask &= ~HEAP_XMIN_FROZEN;
		HeapTupleHeaderSetXmin(copy->t_data, xmin);
	}
	ExecForceStoreHeapTuple(copy, slot, true);
	slot->tts_tid = tuple.t_self;
	slot->tts_tableOid = RelationGetRelid(rel);
}

/*
 * Speculative insertions (INSERT ... ON CONFLICT).  As heap does, the
 * image of a speculatively inserted version carries the executor's token
 * in t_ctid (block = token, offset = SpecTokenOffsetNumber), and here also
 * the xid the executor took its token lock with in t_xmax (HEAP_XMAX_INVALID
 * stays set), until the insertion is completed or killed.  Then the
 * inserting backend clears the offset first and the xid after it (a reader
 * reads them in the other order), and flushes the header: the commit's
 * drain makes it durable, so no committed row keeps a token or an xmax
 * after a crash.  These two fields are the only ones ever written after a
 * version is published; nobody reads them but nvm_version_speculative.
 */

/*
 * nvm_tuple_mark_speculative marks the image tuple, not yet stored, as a
 * speculative insertion with token, taken by xid.
 */
void
nvm_tuple_mark_speculative(HeapTuple tuple, uint32 token, TransactionId xid)
{
	HeapTupleHeaderSetSpeculativeToken(tuple->t_data, token);
	tuple->t_data->t_choice.t_heap.t_xmax = xid;
}

/*
 * nvm_version_speculative says whether version v is a speculative
 * insertion not completed yet, and if so gives its token and the xid to
 * wait on with it (SpeculativeInsertionWait).
 */
bool
nvm_version_speculative(NvmVersion *v, uint32 *token, TransactionId *xid)
{
	HeapTupleHeader td = (HeapTupleHeader) v->data;
	volatile OffsetNumber *posid = &td->t_ctid.ip_posid;

	if (v->data_len == 0 || *posid != SpecTokenOffsetNumber)
		return false;
	pg_read_barrier();
	*token = HeapTupleHeaderGetSpeculativeToken(td);
	*xid = *(volatile TransactionId *) &td->t_choice.t_heap.t_xmax;
	pg_read_barrier();
	return *posid == SpecTokenOffsetNumber && TransactionIdIsValid(*xid);
}

/*
 * nvm_version_end_speculative clears the speculative mark of version v,
 * written by this backend (see above for the order).
 */
void
nvm_version_end_speculative(NvmVersion *v)
{
	HeapTupleHeader td = (HeapTupleHeader) v->data;

	*(volatile OffsetNumber *) &td->t_ctid.ip_posid = InvalidOffsetNumber;
	pg_write_barrier();
	*(volatile TransactionId *) &td->t_choice.t_heap.t_xmax = InvalidTransactionId;
	nvm_flush(td, SizeofHeapTupleHeader);
}
