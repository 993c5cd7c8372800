/*-------------------------------------------------------------------------
 *
 * nvm_wal.c
 *	  The nvm WAL resource manager, and the row changes it writes for
 *	  logical decoding.
 *
 * nvm rows live in the pool, not in WAL.  With wal_level = logical, every
 * insert, update and delete of a table that PostgreSQL would decode
 * (RelationIsLogicallyLogged: permanent, not a catalog) also writes a
 * record that says what heap's record would say for logical decoding: the
 * new row as a heap tuple, and for updates and deletes the old row's
 * replica identity (its key, or the whole row with REPLICA IDENTITY FULL,
 * TOAST pointers fetched inline), chosen exactly as heap chooses it
 * (ExtractReplicaIdentity in heapam.c).  nvm_decode.c turns these records
 * into the reorder buffer's changes.  Below wal_level = logical nothing is
 * written here.  (The record type XLOG_NVM_XID, once the carrier of an
 * xid in the commit protocol, is no longer written; replay and decoding
 * still accept it.)
 *
 * A decodable change belongs to a PostgreSQL transaction: the writer takes
 * its top-level xid before the row is written (nvm_modify.c asks
 * nvm_wal_logs_changes), so the versions carry it, and each record is
 * written under the xid of the current subtransaction (decoding assigns
 * subtransactions to their parent from the records, and drops those rolled
 * back to a savepoint).  Commit, abort, PREPARE and COMMIT/ROLLBACK
 * PREPARED are PostgreSQL's own records.  TRUNCATE is logged by PostgreSQL
 * itself for any table access method (ExecuteTruncateGuts).
 *
 * Out-of-line values are heap rows of the TOAST table, WAL-logged and
 * decoded as heap's; the reorder buffer puts them back into the row of the
 * next change of the main table, whatever its access method.  nvm saves
 * them before it knows whether the write succeeds (nvm_toast.c): after a
 * failed update nvm_wal_log_toast_discard tells decoding to forget them.
 *
 * Crash ordering (the commit protocol is nvm_xact.c's and nvm_commit.c's:
 * a transaction whose changes are decoded never commits log-free, it is
 * tied to its xid):
 *	 change records (written after each row, before commit)
 *	 -> in-doubt marker persisted in the pool
 *	 -> PostgreSQL's commit record
 *	 -> commit record flushed (nvm_logical_must_flush: also with
 *		synchronous_commit = off)
 *	 -> nvm status COMMITTED persisted.
 * A crash before the commit record is durable leaves an xid that never
 * committed: the marker makes the nvm transaction abort and decoding
 * never sees a commit.  A crash after it leaves the nvm transaction in
 * doubt, resolved from PostgreSQL's commit log as committed, and decoding
 * has the commit and every change before it.  So a publisher never keeps a
 * committed row that its subscribers cannot receive, nor the other way
 * round.
 *
 * Redo does nothing for the row changes of logical decoding.  The redo
 * records of physical standbys (nvm_redo.h) are replayed by nvm_replay.c,
 * on a standby with a pool of its own; crash recovery of the primary skips
 * them (the pool holds what they say).  The cleanup at the end of replay advances the sequences whose log-ahead
 * records a crash lost while rows holding their values were committed
 * (nvm_seqlog.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "catalog/pg_class.h"
#include "lib/stringinfo.h"
#include "nodes/bitmapset.h"
#include "replication/message.h"
#include "utils/datum.h"
#include "utils/relcache.h"

#include "checkpoint/nvm_checkpoint.h"
#include "logical/nvm_seqlog.h"
#include "logical/nvm_wal.h"
#include "redo/nvm_replay.h"

/*
 * The top-level xid of the last transaction that wrote change records
 * (InvalidTransactionId if none): nvm_logical_must_flush compares it with
 * the current one, so nothing needs resetting at transaction end.
 */
static TransactionId logged_xid = InvalidTransactionId;

static void nvm_redo(XLogReaderState *record);
static void nvm_redo_cleanup(void);
static void nvm_desc(StringInfo buf, XLogReaderState *record);
static const char *nvm_identify(uint8 info);

static RmgrData nvm_rmgr = {
	.rm_name = RM_NVM_NAME,
	.rm_redo = nvm_redo,
	.rm_desc = nvm_desc,
	.rm_identify = nvm_identify,
	.rm_startup = NULL,
	.rm_cleanup = nvm_redo_cleanup,
	.rm_mask = NULL,
	.rm_decode = nvm_decode
};

/*
 * nvm_wal_init registers the resource manager; called from _PG_init, which
 * runs only during shared_preload_libraries processing.
 */
void
nvm_wal_init(void)
{
	RegisterCustomRmgr(RM_NVM_ID, &nvm_rmgr);
}

/*
 * nvm_wal_logs_changes says whether writes of rel write change records:
 * with wal_level = logical, for a table PostgreSQL decodes.  The writer
 * then needs a PostgreSQL xid before the write.
 */
bool
nvm_wal_logs_changes(Relation rel)
{
	return RelationIsLogicallyLogged(rel);
}

/*
 * nvm_logical_must_flush says whether the current transaction wrote change
 * records for logical decoding.  If it did, its commit record must be
 * flushed before its nvm status is made durable, and its nvm outcome must
 * be tied to its xid (the in-doubt marker) before the commit record can
 * become durable: see the crash ordering in the file header.  The commit
 * path asks it at XACT_EVENT_COMMIT, while the xid is still current.
 */
bool
nvm_logical_must_flush(void)
{
	TransactionId xid = GetTopTransactionIdIfAny();

	return TransactionIdIsValid(xid) && TransactionIdEquals(xid, logged_xid);
}

/*
 * register_tuple adds tuple to the record being built, as heap's WAL holds
 * a tuple: a header (hdr, which must live until XLogInsert) with the
 * infomask bits without the transaction bits (heap_prepare_insert clears
 * them and sets xmax invalid before heap logs a tuple), then the bytes
 * after the fixed header.
 */
static void
register_tuple(xl_nvm_tuple *hdr, HeapTuple tuple)
{
	hdr->datalen = tuple->t_len - SizeofHeapTupleHeader;
	hdr->t_infomask2 = tuple->t_data->t_infomask2 & ~HEAP2_XACT_MASK;
	hdr->t_infomask = (tuple->t_data->t_infomask & ~HEAP_XACT_MASK) | HEAP_XMAX_INVALID;
	hdr->t_hoff = tuple->t_data->t_hoff;
	XLogRegisterData((char *) hdr, SizeOfNvmTuple);
	if (hdr->datalen > 0)
		XLogRegisterData((char *) tuple->t_data + SizeofHeapTupleHeader, hdr->datalen);
}

/*
 * log_change writes one row change of rel under the current
 * (sub)transaction's xid, assigning it if needed; newtup and oldtup may be
 * NULL.  The replication origin of the session goes with it, as with
 * heap's records.
 */
static void
log_change(Relation rel, uint8 info, uint8 flags, HeapTuple newtup, HeapTuple oldtup)
{
	xl_nvm_change xlrec;
	xl_nvm_tuple newhdr;
	xl_nvm_tuple oldhdr;

	/* decoding files the change under the xid of the record */
	(void) GetCurrentTransactionId();

	xlrec.node = rel->rd_locator;
	xlrec.flags = flags;
	if (newtup != NULL)
		xlrec.flags |= XLNVM_HAS_NEW_TUPLE;
	if (oldtup != NULL)
		xlrec.flags |= XLNVM_HAS_OLD_TUPLE;

	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, SizeOfNvmChange);
	if (newtup != NULL)
		register_tuple(&newhdr, newtup);
	if (oldtup != NULL)
		register_tuple(&oldhdr, oldtup);
	XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	(void) XLogInsert(RM_NVM_ID, info);

	logged_xid = GetTopTransactionId();
}

/*
 * old_identity returns what an update or delete of oldtup must log about
 * the old row, as heap's ExtractReplicaIdentity decides it: nothing with
 * REPLICA IDENTITY NOTHING, or when only the key is logged and it is not
 * required (key_required); the whole row, with its out-of-line values
 * fetched inline, with REPLICA IDENTITY FULL; otherwise a row holding the
 * identity key's columns only (the others null), also with inline values.
 * Returns NULL when nothing is logged.
 */
static HeapTuple
old_identity(Relation rel, HeapTuple oldtup, bool key_required)
{
	TupleDesc	desc = RelationGetDescr(rel);
	char		replident = rel->rd_rel->relreplident;
	Bitmapset  *idattrs;
	Datum	   *values;
	bool	   *nulls;
	HeapTuple	key;

	if (replident == REPLICA_IDENTITY_NOTHING)
		return NULL;
	if (replident == REPLICA_IDENTITY_FULL)
		return HeapTupleHasExternal(oldtup) ? toast_flatten_tuple(oldtup, desc) : oldtup;
	if (!key_required)
		return NULL;

	idattrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
	if (bms_is_empty(idattrs))
		return NULL;			/* no key: deletes log no old row, as heap's */

	values = palloc(desc->natts * sizeof(Datum));
	nulls = palloc(desc->natts * sizeof(bool));
	heap_deform_tuple(oldtup, desc, values, nulls);
	for (int i = 0; i < desc->natts; i++)
	{
		if (!bms_is_member(i + 1 - FirstLowInvalidHeapAttributeNumber, idattrs))
			nulls[i] = true;
	}
	key = heap_form_tuple(desc, values, nulls);
	bms_free(idattrs);
	if (HeapTupleHasExternal(key))
		key = toast_flatten_tuple(key, desc);
	return key;
}

/*
 * identity_key_required says whether an update from oldtup to newtup must
 * log the old key (heap_update's test): an identity column changed
 * (bytewise), or the old row keeps one out of line.
 */
static bool
identity_key_required(Relation rel, HeapTuple oldtup, HeapTuple newtup)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Bitmapset  *idattrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
	bool		required = false;
	int			x = -1;

	while (!required && (x = bms_next_member(idattrs, x)) >= 0)
	{
		AttrNumber	attnum = x + FirstLowInvalidHeapAttributeNumber;
		Form_pg_attribute att;
		Datum		oldval;
		Datum		newval;
		bool		oldnull;
		bool		newnull;

		if (attnum <= 0)
			continue;
		att = TupleDescAttr(desc, attnum - 1);
		oldval = heap_getattr(oldtup, attnum, desc, &oldnull);
		newval = heap_getattr(newtup, attnum, desc, &newnull);
		if (oldnull != newnull)
			required = true;
		else if (oldnull)
			continue;
		else if (!datumIsEqual(oldval, newval, att->attbyval, att->attlen))
			required = true;
		else if (att->attlen == -1 &&
				 VARATT_IS_EXTERNAL((struct varlena *) DatumGetPointer(oldval)))
			required = true;
	}
	bms_free(idattrs);
	return required;
}

/*
 * nvm_wal_log_insert logs the insert of tuple (the stored image, TOAST
 * pointers and all) into rel; options are the insert's (a speculative
 * insertion is flagged, TABLE_INSERT_NO_LOGICAL writes nothing, as on
 * heap).
 */
void
nvm_wal_log_insert(Relation rel, HeapTuple tuple, int options)
{
	if (!nvm_wal_logs_changes(rel) || (options & TABLE_INSERT_NO_LOGICAL))
		return;
	log_change(rel, XLOG_NVM_INSERT,
			   (options & HEAP_INSERT_SPECULATIVE) ? XLNVM_IS_SPECULATIVE : 0,
			   tuple, NULL);
}

/*
 * nvm_wal_log_update logs the update of the row oldtup (the version
 * replaced) to newtup (the stored new image) in rel.
 */
void
nvm_wal_log_update(Relation rel, HeapTuple oldtup, HeapTuple newtup)
{
	HeapTuple	old;

	if (!nvm_wal_logs_changes(rel))
		return;
	old = old_identity(rel, oldtup,
					   rel->rd_rel->relreplident != REPLICA_IDENTITY_FULL &&
					   identity_key_required(rel, oldtup, newtup));
	log_change(rel, XLOG_NVM_UPDATE, 0, newtup, old);
}

/*
 * nvm_wal_log_delete logs the delete of the row oldtup from rel.
 */
void
nvm_wal_log_delete(Relation rel, HeapTuple oldtup)
{
	if (!nvm_wal_logs_changes(rel))
		return;
	log_change(rel, XLOG_NVM_DELETE, 0, NULL, old_identity(rel, oldtup, true));
}

/*
 * nvm_wal_log_speculative_end logs the outcome of the speculative
 * insertion into rel that nvm_wal_log_insert logged last: decoding then
 * emits it as an insert, or forgets it (with any values it toasted).
 */
void
nvm_wal_log_speculative_end(Relation rel, bool succeeded)
{
	if (!nvm_wal_logs_changes(rel))
		return;
	log_change(rel, succeeded ? XLOG_NVM_SPEC_CONFIRM : XLOG_NVM_SPEC_ABORT, 0,
			   NULL, NULL);
}

/*
 * nvm_wal_log_toast_discard logs that the out-of-line values of tuple,
 * saved for a write of rel that then failed, belong to no row: decoding
 * would otherwise keep them for the next change of the transaction.
 */
void
nvm_wal_log_toast_discard(Relation rel, HeapTuple tuple)
{
	if (!nvm_wal_logs_changes(rel) || !HeapTupleHasExternal(tuple))
		return;
	log_change(rel, XLOG_NVM_TOAST_DISCARD, 0, NULL, NULL);
}

/*
 * nvm_redo replays a record: the redo records of physical standbys go to
 * nvm_replay.c, the row changes of logical decoding need nothing (see the
 * file header).  An unknown type is WAL of a newer nvmam.
 */
static void
nvm_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & XLOG_NVM_OPMASK;

	if (nvm_identify(info) == NULL)
		elog(PANIC, "nvm_redo: unknown op code %u", info);
	if (XLOG_NVM_IS_REDO(info))
		nvm_replay(record);
}

/*
 * nvm_redo_cleanup runs at the end of WAL replay: a replayed commit left
 * without its last part is dropped (nvm_replay.c), and the sequences a
 * crash left behind are advanced (nvm_seqlog.c), and where commits are
 * durable through the WAL the pool is captured into its checkpoint files
 * before the end-of-recovery checkpoint (../checkpoint/nvm_checkpoint.c).
 */
static void
nvm_redo_cleanup(void)
{
	nvm_replay_end();
	nvm_seqlog_redo_cleanup();
	nvm_checkpoint_at_recovery_end();
}

/*
 * nvm_identify names a record type, NULL for an unknown one.
 */
static const char *
nvm_identify(uint8 info)
{
	switch (info & XLOG_NVM_OPMASK)
	{
		case XLOG_NVM_XID:
			return "XID";
		case XLOG_NVM_INSERT:
			return "INSERT";
		case XLOG_NVM_UPDATE:
			return "UPDATE";
		case XLOG_NVM_DELETE:
			return "DELETE";
		case XLOG_NVM_SPEC_CONFIRM:
			return "SPEC_CONFIRM";
		case XLOG_NVM_SPEC_ABORT:
			return "SPEC_ABORT";
		case XLOG_NVM_TOAST_DISCARD:
			return "TOAST_DISCARD";
		case XLOG_NVM_COMMIT:
			return "COMMIT";
		case XLOG_NVM_STORAGE:
			return "STORAGE";
		case XLOG_NVM_RESERVE:
			return "RESERVE";
		case XLOG_NVM_CONFLICT:
			return "CONFLICT";
		case XLOG_NVM_RESYNC:
			return "RESYNC";
		case XLOG_NVM_LOCKS:
			return "LOCKS";
		case XLOG_NVM_IMAGE:
			return "IMAGE";
	}
	return NULL;
}

/*
 * nvm_desc describes a record for pg_waldump and pg_walinspect: the
 * table's relfilenode and the tuples it carries.
 */
static void
nvm_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & XLOG_NVM_OPMASK;
	xl_nvm_change *xlrec;

	if (XLOG_NVM_IS_REDO(info))
	{
		nvm_replay_desc(buf, record);
		return;
	}
	if (info == XLOG_NVM_XID || XLogRecGetDataLen(record) < SizeOfNvmChange)
		return;
	xlrec = (xl_nvm_change *) XLogRecGetData(record);
	appendStringInfo(buf, "rel %u/%u/%u", xlrec->node.spcOid,
					 xlrec->node.dbOid, xlrec->node.relNumber);
	if (xlrec->flags & XLNVM_HAS_NEW_TUPLE)
		appendStringInfoString(buf, " new");
	if (xlrec->flags & XLNVM_HAS_OLD_TUPLE)
		appendStringInfoString(buf, " old");
	if (xlrec->flags & XLNVM_IS_SPECULATIVE)
		appendStringInfoString(buf, " speculative");
}
