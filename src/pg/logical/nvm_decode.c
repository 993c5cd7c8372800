/*-------------------------------------------------------------------------
 *
 * nvm_decode.c
 *	  Logical decoding of the nvm resource manager's records (rm_decode).
 *
 * Row changes become the reorder buffer's changes exactly as heap's
 * records do in PostgreSQL's decode.c (heap_decode, DecodeInsert,
 * DecodeUpdate, DecodeDelete): the table's relfilenode, heap-format new
 * and old tuples, the replication origin.  From there on PostgreSQL treats
 * them as heap changes: it reassembles TOAST values, orders the changes of
 * a transaction and its subtransactions, emits them at COMMIT (or PREPARE
 * for two-phase slots), drops them at a rollback, and hands them to the
 * output plugin (test_decoding, pgoutput, wal2json) with the table found
 * through pg_class.
 *
 * A speculative insertion (INSERT ... ON CONFLICT) is decoded as heap's:
 * held back until its confirmation, forgotten at its abort.  A TOAST
 * discard (values saved for a write that failed, nvm_wal.c) is decoded as
 * a speculative insertion aborted at once: the reorder buffer then forgets
 * the values, and emits nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlogreader.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/reorderbuffer.h"
#include "replication/snapbuild.h"

#include "logical/nvm_wal.h"
#include "nvm_compat.h"

/*
 * read_tuple copies the tuple whose xl_nvm_tuple header is at *data into a
 * new tuple buffer of the reorder buffer, in heap's format (decode.c's
 * DecodeXLogTuple), and moves *data past it.
 */
static NvmDecodedTuple
read_tuple(ReorderBuffer *rb, char **data)
{
	xl_nvm_tuple hdr;
	NvmDecodedTuple tuple;
	HeapTupleHeader header;

	memcpy(&hdr, *data, SizeOfNvmTuple);
	*data += SizeOfNvmTuple;

	tuple = NVM_ALLOC_DECODED_TUPLE(rb, hdr.datalen);
	NVM_DECODED_TUPLE(tuple)->t_len = hdr.datalen + SizeofHeapTupleHeader;
	ItemPointerSetInvalid(&NVM_DECODED_TUPLE(tuple)->t_self);
	/* found by the reorder buffer from the relfilenode */
	NVM_DECODED_TUPLE(tuple)->t_tableOid = InvalidOid;
	header = NVM_DECODED_TUPLE(tuple)->t_data;
	memset(header, 0, SizeofHeapTupleHeader);
	memcpy((char *) header + SizeofHeapTupleHeader, *data, hdr.datalen);
	header->t_infomask = hdr.t_infomask;
	header->t_infomask2 = hdr.t_infomask2;
	header->t_hoff = hdr.t_hoff;
	*data += hdr.datalen;
	return tuple;
}

/*
 * queue_change queues a change of the given action on the table of xlrec,
 * with its tuples, under the record's xid.
 */
static void
queue_change(LogicalDecodingContext *ctx, XLogRecordBuffer *buf,
			 ReorderBufferChangeType action, xl_nvm_change *xlrec,
			 NvmDecodedTuple newtuple, NvmDecodedTuple oldtuple)
{
	XLogReaderState *r = buf->record;
	ReorderBufferChange *change = NVM_ALLOC_CHANGE(ctx->reorder);

	change->action = action;
	change->origin_id = XLogRecGetOrigin(r);
	memcpy(&NVM_CHANGE_LOCATOR(change), &xlrec->node, sizeof(RelFileLocator));
	change->data.tp.newtuple = newtuple;
	change->data.tp.oldtuple = oldtuple;
	change->data.tp.clear_toast_afterwards = true;
	ReorderBufferQueueChange(ctx->reorder, XLogRecGetXid(r), buf->origptr,
							 change, false);
}

/*
 * decode_change queues the change a row-change record describes, unless
 * it belongs to another database or its origin is filtered out.
 */
static void
decode_change(LogicalDecodingContext *ctx, XLogRecordBuffer *buf, uint8 info)
{
	XLogReaderState *r = buf->record;
	xl_nvm_change xlrec;
	char	   *data = XLogRecGetData(r);
	NvmDecodedTuple newtuple = NULL;
	NvmDecodedTuple oldtuple = NULL;
	ReorderBufferChangeType action;

	memcpy(&xlrec, data, SizeOfNvmChange);
	data += SizeOfNvmChange;

	/* only interested in our database */
	if (xlrec.node.dbOid != ctx->slot->data.database)
		return;
	/* the output plugin does not want changes of this origin */
	if (ctx->callbacks.filter_by_origin_cb != NULL &&
		filter_by_origin_cb_wrapper(ctx, XLogRecGetOrigin(r)))
		return;

	if (xlrec.flags & XLNVM_HAS_NEW_TUPLE)
		newtuple = read_tuple(ctx->reorder, &data);
	if (xlrec.flags & XLNVM_HAS_OLD_TUPLE)
		oldtuple = read_tuple(ctx->reorder, &data);

	switch (info)
	{
		case XLOG_NVM_INSERT:
			action = (xlrec.flags & XLNVM_IS_SPECULATIVE) ?
				REORDER_BUFFER_CHANGE_INTERNAL_SPEC_INSERT :
				REORDER_BUFFER_CHANGE_INSERT;
			break;
		case XLOG_NVM_UPDATE:
			action = REORDER_BUFFER_CHANGE_UPDATE;
			break;
		case XLOG_NVM_DELETE:
			action = REORDER_BUFFER_CHANGE_DELETE;
			break;
		case XLOG_NVM_SPEC_CONFIRM:
			action = REORDER_BUFFER_CHANGE_INTERNAL_SPEC_CONFIRM;
			break;
		case XLOG_NVM_SPEC_ABORT:
			action = REORDER_BUFFER_CHANGE_INTERNAL_SPEC_ABORT;
			break;
		case XLOG_NVM_TOAST_DISCARD:
			/* an empty speculative insertion, aborted: resets the TOAST values */
			newtuple = NVM_ALLOC_DECODED_TUPLE(ctx->reorder, 0);
			NVM_DECODED_TUPLE(newtuple)->t_len = SizeofHeapTupleHeader;
			ItemPointerSetInvalid(&NVM_DECODED_TUPLE(newtuple)->t_self);
			NVM_DECODED_TUPLE(newtuple)->t_tableOid = InvalidOid;
			memset(NVM_DECODED_TUPLE(newtuple)->t_data, 0, SizeofHeapTupleHeader);
			queue_change(ctx, buf, REORDER_BUFFER_CHANGE_INTERNAL_SPEC_INSERT,
						 &xlrec, newtuple, NULL);
			action = REORDER_BUFFER_CHANGE_INTERNAL_SPEC_ABORT;
			newtuple = NULL;
			break;
		default:
			elog(ERROR, "unexpected nvm row-change record type %u", info);
			return;
	}
	queue_change(ctx, buf, action, &xlrec, newtuple, oldtuple);
}

/*
 * nvm_decode is the resource manager's rm_decode: it follows heap_decode.
 * Every record's xid is made known to the reorder buffer; row changes are
 * decoded once the snapshot builder has a full snapshot and the change's
 * transaction is to be decoded, and not while only fast-forwarding a slot.
 */
void
nvm_decode(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	XLogReaderState *r = buf->record;
	uint8		info = XLogRecGetInfo(r) & XLOG_NVM_OPMASK;
	TransactionId xid = XLogRecGetXid(r);

	/* the redo records of physical standbys say nothing decoding needs */
	if (XLOG_NVM_IS_REDO(info))
		return;
	ReorderBufferProcessXid(ctx->reorder, xid, buf->origptr);
	if (SnapBuildCurrentState(ctx->snapshot_builder) < SNAPBUILD_FULL_SNAPSHOT)
		return;

	switch (info)
	{
		case XLOG_NVM_XID:
			break;
		case XLOG_NVM_INSERT:
		case XLOG_NVM_UPDATE:
		case XLOG_NVM_DELETE:
		case XLOG_NVM_SPEC_CONFIRM:
		case XLOG_NVM_SPEC_ABORT:
		case XLOG_NVM_TOAST_DISCARD:
			if (SnapBuildProcessChange(ctx->snapshot_builder, xid, buf->origptr) &&
				!ctx->fast_forward)
				decode_change(ctx, buf, info);
			break;
		default:
			elog(ERROR, "unexpected nvm record type %u", info);
	}
}
