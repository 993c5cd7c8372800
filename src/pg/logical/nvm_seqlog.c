/*-------------------------------------------------------------------------
 *
 * nvm_seqlog.c
 *	  Sequence advances kept in the pool: a log-free commit that used an
 *	  identity sequence whose log-ahead record is not durable yet records
 *	  the sequence's position in the pool instead of flushing the WAL.
 *
 * A sequence logs 32 values ahead: nextval writes a WAL record saying "up
 * to here" and hands out the next 32 values without WAL.  A row of a
 * log-free commit (nvm_commit.c) is durable in the pool at once; if it
 * holds an identity value whose log-ahead record a crash loses, WAL replay
 * leaves the sequence before that value and it is handed out again: a
 * duplicate identity key.  Instead of flushing the WAL up to the sequence
 * page's LSN (one fsync every 32 values that every committing session
 * waits for), the commit appends to its slot's index-log ring (indexlog.h,
 * "External entries") one item per such sequence:
 *
 *	 (tablespace, database, relfilenode, value, descending; WAL position)
 *
 * where value is the page's last_value read at commit under the buffer
 * lock (at or past every value the transaction used) and the position is
 * the page's LSN.  Two ring entries carry an item: the first the
 * relfilenode, the second the value with a checksum of the whole item (a
 * torn append may pair entries of different laps; such a pair is ignored).
 *
 * Persist order (commit): the item is appended with the transaction's
 * index roots and drained with them before the nvm status says committed
 * (nvm_commit_prepare_log_free); the ring drops it once the WAL is durable
 * past its position.  Start-up after a crash copies the items of every
 * ring into the pool's external list (indexlog.h).
 *
 * Applying them.  The advance must be in place before any session can call
 * nextval, so the startup process applies it at the end of WAL replay, in
 * the cleanup callback of nvm's resource manager (nvm_seqlog_redo_cleanup,
 * nvm_wal.c): it reads the sequence's page by its relfilenode, as seq_redo
 * does, checks that it is a sequence page (SEQ_MAGIC), and if the sequence
 * stands before the value it sets last_value = value, is_called = true,
 * log_cnt = 0 ("at least": applying twice, or after the WAL turned out to
 * be durable, changes nothing).  The end-of-recovery checkpoint, which
 * crash recovery performs before connections are accepted, writes the
 * page.  Then the first backend of the sequence's database to run a
 * statement (nvm_seqlog_finish, from the executor and utility hooks) logs
 * the sequence's tuple as setval does (log_cnt = 0), flushes that record,
 * and only then clears the item from the pool; it also applies the advance
 * itself if it is not in place (see the fallback below).
 *
 * PostgreSQL 15 calls the resource managers' cleanup only when at least
 * one record follows the checkpoint replay starts from: after a checkpoint
 * whose redo point is its own record (a shutdown checkpoint, the
 * end-of-recovery checkpoint) followed by a crash that loses all newer WAL,
 * it is not called.  So a commit relies on the pool only while the redo
 * point it reads (after the sequences' pages) is the anchor, a redo point
 * after which a record was inserted (after reading that redo point) and
 * flushed.  The first commit that finds another redo point writes an
 * XLOG_NOOP record and flushes it with the sequences' records instead of
 * appending items: one flush per checkpoint.  Why this suffices: let C be
 * the latest completed checkpoint at a crash.  If C's redo point lies
 * before its record, replay finds a record.  Else nothing was inserted
 * between C's redo point and its record; an item appended by a commit
 * that read redo point R:
 *	 - R is C's: the anchor record was inserted after R, so after C's
 *	   record, and it is durable;
 *	 - R is older: the item's sequence record was inserted before the page
 *	   was read, before C's redo point was published, so before C's record,
 *	   which C's completion flushed: the item is not needed;
 *	 - R is newer (a checkpoint that began after C): its anchor record lies
 *	   after C's record and is durable.
 * The end-of-recovery checkpoint writes the advanced page without WAL, so a
 * power loss during that write can tear it; the next recovery then finds a
 * page that fails its checksum, whose layout is intact, and puts its
 * content back before advancing it again (read_seq_page).
 *
 * The backend step (nvm_seqlog_finish) is a second guard, as every
 * statement passes the hooks first; it does not cover nextval called
 * through the fast-path function interface before any statement.
 *
 * WAL positions are reused after a crash (the lost tail is overwritten);
 * items are applied without comparing positions.  An item applied when it
 * was not needed (its record was durable after all, or the relfilenode now
 * belongs to another sequence) can only move a sequence forward: a gap,
 * which sequences allow.  A sequence that cycles, or whose page says
 * is_called = false, is not logged this way (the commit flushes as
 * before): "at least" has no meaning for a cycle.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/pg_class.h"
#include "catalog/pg_control.h"
#include "catalog/pg_sequence.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "indexlog.h"
#include "pool.h"

#include "logical/nvm_seqlog.h"
#include "nvm_compat.h"

/* sequence.c's page marker (its special space) */
#define NVM_SEQ_MAGIC	0x1717

/* kinds of the ring entries of an item (bits 56..62 of the table word) */
#define SEQ_KIND_SHIFT	56
#define SEQ_KIND_NODE	UINT64_C(0x51)
#define SEQ_KIND_VALUE	UINT64_C(0x52)
#define SEQ_KIND_MASK	UINT64_C(0x7f)
#define SEQ_DESCENDING	UINT64_C(1)

/*
 * The redo point after which a record is known durable (shared memory:
 * new shared memory, after a crash too, starts with none).
 */
static pg_atomic_uint64 *anchor_redo = NULL;

Size
nvm_seqlog_shmem_size(void)
{
	return MAXALIGN(sizeof(pg_atomic_uint64));
}

/* nvm_seqlog_shmem_startup finds or creates the shared anchor. */
void
nvm_seqlog_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	anchor_redo = ShmemInitStruct("nvmam sequence log anchor", nvm_seqlog_shmem_size(), &found);
	if (!found)
		pg_atomic_init_u64(anchor_redo, InvalidXLogRecPtr);
	LWLockRelease(AddinShmemInitLock);
}

/*
 * The external list, and its count of remaining entries, when this backend
 * last cleared the items of its database (nvm_seqlog_finish).
 */
static NvmExternalList *seen_list = NULL;
static uint64 seen_remaining = 0;

typedef struct SeqItem
{
	RelFileLocator node;
	int64		value;
	bool		descending;
} SeqItem;

/* item_check returns the checksum of an item (FNV-1a, folded to 32 bits). */
static uint32
item_check(const SeqItem *it)
{
	uint64		words[4];
	uint64		h = UINT64CONST(0xcbf29ce484222325);

	words[0] = ((uint64) it->node.spcOid << 32) | it->node.dbOid;
	words[1] = it->node.relNumber;
	words[2] = (uint64) it->value;
	words[3] = it->descending ? 1 : 0;
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 8; b++)
		{
			h ^= (words[i] >> (8 * b)) & 0xff;
			h *= UINT64CONST(0x100000001b3);
		}
	return (uint32) (h ^ (h >> 32));
}

/* encode_item fills two ring entries with item it, at WAL position lsn. */
static void
encode_item(const SeqItem *it, XLogRecPtr lsn, NvmIndexLogEntry *out)
{
	out[0].table = NVM_INDEXLOG_EXTERNAL | (SEQ_KIND_NODE << SEQ_KIND_SHIFT) |
		it->node.spcOid;
	out[0].version_no = ((uint64) it->node.dbOid << 32) | it->node.relNumber;
	out[0].lsn = lsn;
	out[1].table = NVM_INDEXLOG_EXTERNAL | (SEQ_KIND_VALUE << SEQ_KIND_SHIFT) |
		((it->descending ? SEQ_DESCENDING : 0) << 32) | item_check(it);
	out[1].version_no = (uint64) it->value;
	out[1].lsn = lsn;
}

/*
 * decode_item reads the item at entries i, i + 1 of the external list;
 * false if they are not a whole item (cleared, another kind, torn).
 */
static bool
decode_item(NvmExternalList *list, uint64 i, SeqItem *it)
{
	uint64		w0,
				w1;

	if (i + 1 >= list->count)
		return false;
	w0 = atomic_load(&list->entries[i].word0);
	w1 = atomic_load(&list->entries[i + 1].word0);
	if (((w0 >> SEQ_KIND_SHIFT) & SEQ_KIND_MASK) != SEQ_KIND_NODE ||
		((w1 >> SEQ_KIND_SHIFT) & SEQ_KIND_MASK) != SEQ_KIND_VALUE)
		return false;
	it->node.spcOid = (Oid) (w0 & 0xffffffff);
	it->node.dbOid = (Oid) (list->entries[i].word1 >> 32);
	it->node.relNumber = (Oid) (list->entries[i].word1 & 0xffffffff);
	it->value = (int64) list->entries[i + 1].word1;
	it->descending = ((w1 >> 32) & SEQ_DESCENDING) != 0;
	return item_check(it) == (uint32) (w1 & 0xffffffff);
}

/*
 * seq_tuple returns the sequence tuple of page, NULL if page is not a
 * sequence page.
 */
static Form_pg_sequence_data
seq_tuple(Page page, HeapTupleData *tuple)
{
	ItemId		lp;

	if (PageIsNew(page) || PageGetPageSize(page) != BLCKSZ ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(uint32)) ||
		*(uint32 *) PageGetSpecialPointer(page) != NVM_SEQ_MAGIC ||
		PageGetMaxOffsetNumber(page) < FirstOffsetNumber)
		return NULL;
	lp = PageGetItemId(page, FirstOffsetNumber);
	if (!ItemIdIsNormal(lp) ||
		ItemIdGetOffset(lp) + ItemIdGetLength(lp) > ((PageHeader) page)->pd_special)
		return NULL;
	tuple->t_data = (HeapTupleHeader) PageGetItem(page, lp);
	tuple->t_len = ItemIdGetLength(lp);
	if (tuple->t_len < tuple->t_data->t_hoff + offsetof(FormData_pg_sequence_data, is_called) + sizeof(bool))
		return NULL;
	return (Form_pg_sequence_data) GETSTRUCT(tuple);
}

/*
 * advance sets the sequence to hand out nothing at or before it->value
 * (the caller holds the buffer's exclusive lock); true if it changed.
 */
static bool
advance(Form_pg_sequence_data seq, const SeqItem *it)
{
	bool		behind;

	if (it->descending)
		behind = seq->is_called ? seq->last_value > it->value : seq->last_value >= it->value;
	else
		behind = seq->is_called ? seq->last_value < it->value : seq->last_value <= it->value;
	if (!behind)
		return false;
	seq->last_value = it->value;
	seq->is_called = true;
	seq->log_cnt = 0;
	return true;
}

/*
 * read_seq_page returns the buffer of item it's page, InvalidBuffer if
 * none.
 *
 * A page whose last write tore fails its checksum, and the buffer manager
 * hands it out zeroed.  That write can be the end-of-recovery checkpoint's,
 * of a page advanced by nvm_seqlog_redo_cleanup without WAL, with a crash
 * before the backend step logged it; replay then reads the page as it is
 * on disk (no record of the sequence follows the redo point, or the page
 * would have been rebuilt from it).  Only the page header (its LSN and
 * checksum, in the first sector) and the tuple's values (in the last)
 * change from one write of a sequence page to the next, so a torn page is
 * whole in its layout and holds the tuple of one of the two writes: if the
 * page on disk is such a sequence page, the buffer gets its content back
 * (marked dirty, so its next write carries a valid checksum; log_cnt 0,
 * so the next nextval logs ahead) and the caller's advance applies on top
 * of it.  A page whose layout is not a sequence page's stays zeroed in the
 * buffer and is left alone.
 */
static Buffer
read_seq_page(const SeqItem *it)
{
	SMgrRelation smgr = smgropen(it->node, NVM_INVALID_BACKEND_NUMBER);
	Buffer		buf;
	PGAlignedBlock raw;
	HeapTupleData tuple;

	if (!smgrexists(smgr, MAIN_FORKNUM) || smgrnblocks(smgr, MAIN_FORKNUM) < 1)
		return InvalidBuffer;
	buf = ReadBufferWithoutRelcache(it->node, MAIN_FORKNUM, 0, RBM_ZERO_ON_ERROR,
									NULL, true);
	if (!PageIsNew(BufferGetPage(buf)))
		return buf;
	smgrread(smgr, MAIN_FORKNUM, 0, raw.data);
	if (NVM_PAGE_IS_VERIFIED(raw.data, 0) || seq_tuple((Page) raw.data, &tuple) == NULL)
		return buf;
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (PageIsNew(BufferGetPage(buf)))
	{
		memcpy(BufferGetPage(buf), raw.data, BLCKSZ);
		/* whichever write its values are from, the next nextval logs ahead */
		seq_tuple(BufferGetPage(buf), &tuple)->log_cnt = 0;
		MarkBufferDirty(buf);
		ereport(LOG,
				(errmsg("nvm: restored sequence page with relfilenode %u/%u/%u that failed its checksum",
						it->node.spcOid, it->node.dbOid, it->node.relNumber),
				 errdetail("Its layout is intact: the write that tore changed only its header and its values.")));
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return buf;
}

/*
 * nvm_seqlog_collect looks at the identity sequences seqs that a log-free
 * commit used, given that the WAL is durable up to durable.  For each
 * whose page LSN is beyond it, it writes one item (two entries) to out
 * (room for NVM_SEQLOG_ITEM_ENTRIES * list_length(seqs)) and counts them
 * in *n; it returns the WAL position to flush instead for those it cannot
 * log (a cycle, a page not called), InvalidXLogRecPtr if none.  *flushed
 * says whether it flushed the WAL itself (the first commit after a
 * checkpoint began).
 */
XLogRecPtr
nvm_seqlog_collect(List *seqs, XLogRecPtr durable, NvmIndexLogEntry *out, int *n,
				   bool *flushed)
{
	XLogRecPtr	flush_to = InvalidXLogRecPtr;
	XLogRecPtr	items_lsn = InvalidXLogRecPtr;
	XLogRecPtr	redo;
	ListCell   *lc;

	*n = 0;
	*flushed = false;
	foreach(lc, seqs)
	{
		Oid			seqid = lfirst_oid(lc);
		Relation	rel = try_relation_open(seqid, AccessShareLock);
		HeapTuple	pgseq;
		bool		cycle = true;
		SeqItem		it;
		Buffer		buf;
		Page		page;
		XLogRecPtr	lsn;
		HeapTupleData tuple;
		Form_pg_sequence_data seq;

		if (rel == NULL)
			continue;
		if (rel->rd_rel->relkind != RELKIND_SEQUENCE || !RelationNeedsWAL(rel))
		{
			relation_close(rel, AccessShareLock);
			continue;
		}
		memset(&it, 0, sizeof(it));
		pgseq = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seqid));
		if (HeapTupleIsValid(pgseq))
		{
			Form_pg_sequence f = (Form_pg_sequence) GETSTRUCT(pgseq);

			cycle = f->seqcycle;
			it.descending = f->seqincrement < 0;
			ReleaseSysCache(pgseq);
		}
		buf = ReadBuffer(rel, 0);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		lsn = PageGetLSN(page);
		seq = seq_tuple(page, &tuple);
		if (lsn > durable)
		{
			if (seq == NULL || !seq->is_called || cycle)
				flush_to = Max(flush_to, lsn);
			else
			{
				it.node = rel->rd_locator;
				it.value = seq->last_value;
				encode_item(&it, lsn, out + *n);
				*n += NVM_SEQLOG_ITEM_ENTRIES;
				items_lsn = Max(items_lsn, lsn);
			}
		}
		UnlockReleaseBuffer(buf);
		relation_close(rel, AccessShareLock);
	}
	if (*n == 0)
		return flush_to;

	/*
	 * The first time after a checkpoint began: a record after its redo
	 * point, flushed with the sequences' records, instead of the items (see
	 * the file header; the redo point is read after the pages).
	 */
	redo = GetRedoRecPtr();
	if (pg_atomic_read_u64(anchor_redo) != redo)
	{
		XLogRecPtr	noop;

		XLogBeginInsert();
		XLogRegisterData((char *) &redo, sizeof(redo));
		noop = XLogInsert(RM_XLOG_ID, XLOG_NOOP);
		flush_to = Max(flush_to, items_lsn);
		XLogFlush(Max(flush_to, noop));
		*flushed = true;
		pg_atomic_write_u64(anchor_redo, redo);
		*n = 0;
		return InvalidXLogRecPtr;	/* everything collected is durable now */
	}
	return flush_to;
}

/*
 * gather_items returns the items of the external list whose database is db
 * (all if InvalidOid), one per sequence with the farthest value, their
 * number in *nitems.  If clear is not NULL it also returns there the
 * indexes of the list's entries that stand for them, and of entries that
 * are no whole item (torn, of an earlier lap), their number in *nclear.
 */
static SeqItem *
gather_items(NvmExternalList *list, Oid db, int *nitems, uint64 **clear, int *nclear)
{
	SeqItem    *items = palloc(Max(list->count / 2, 1) * sizeof(SeqItem));

	*nitems = 0;
	if (clear != NULL)
	{
		*clear = palloc(Max(list->count, 1) * sizeof(uint64));
		*nclear = 0;
	}
	for (uint64 i = 0; i < list->count; i++)
	{
		SeqItem		it;
		int			k;

		if (!decode_item(list, i, &it))
		{
			if (clear != NULL && atomic_load(&list->entries[i].word0) != 0)
				(*clear)[(*nclear)++] = i;
			continue;
		}
		i++;
		if (OidIsValid(db) && it.node.dbOid != db)
			continue;
		if (clear != NULL)
		{
			(*clear)[(*nclear)++] = i - 1;
			(*clear)[(*nclear)++] = i;
		}
		for (k = 0; k < *nitems; k++)
			if (RelFileLocatorEquals(items[k].node, it.node))
				break;
		if (k == *nitems)
			items[(*nitems)++] = it;
		else if (it.descending ? it.value < items[k].value : it.value > items[k].value)
			items[k].value = it.value;
	}
	return items;
}

/*
 * nvm_seqlog_redo_cleanup applies the pool's sequence items at the end of
 * WAL replay, in the startup process (see the file header).  The pages it
 * advances are written by the end-of-recovery checkpoint; the items stay
 * until nvm_seqlog_finish has logged them.
 */
void
nvm_seqlog_redo_cleanup(void)
{
	NvmExternalList *list;
	SeqItem    *items;
	int			nitems;

	if (nvm_pool_header == NULL)
		return;
	list = nvm_external_list();
	if (list == NULL)
		return;
	items = gather_items(list, InvalidOid, &nitems, NULL, NULL);
	for (int k = 0; k < nitems; k++)
	{
		SeqItem    *it = &items[k];
		Buffer		buf = read_seq_page(it);
		HeapTupleData tuple;
		Form_pg_sequence_data seq;

		if (!BufferIsValid(buf))
			continue;
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		seq = seq_tuple(BufferGetPage(buf), &tuple);
		if (seq != NULL && advance(seq, it))
		{
			MarkBufferDirty(buf);
			ereport(LOG,
					(errmsg("nvm: advanced sequence with relfilenode %u/%u/%u to %lld at the end of recovery",
							it->node.spcOid, it->node.dbOid, it->node.relNumber,
							(long long) it->value),
					 errdetail("A row committed without a WAL flush holds that value; the sequence's log-ahead record was lost.")));
		}
		UnlockReleaseBuffer(buf);
	}
	pfree(items);
}

/*
 * nvm_seqlog_finish makes the sequence items of the current database
 * durable in the WAL and clears them from the pool: for each sequence, the
 * advance (applied already by the startup process, or here if not), the
 * tuple logged as setval logs it (log_cnt = 0), the records flushed, then
 * the items cleared, with the entries that are no whole item.  Called
 * before statements (nvmam.c); cheap when the pool has no items.
 */
void
nvm_seqlog_finish(void)
{
	NvmExternalList *list;
	XLogRecPtr	flush_to = InvalidXLogRecPtr;
	SeqItem    *items;
	int			nitems;
	uint64	   *clear;
	int			nclear;

	if (nvm_pool_header == NULL)
		return;
	list = nvm_external_list();
	if (list == NULL || RecoveryInProgress() || IsInParallelMode() ||
		!OidIsValid(MyDatabaseId) || !IsTransactionState())
		return;
	/* what is left belongs to other databases, as when this backend looked */
	if (list == seen_list && atomic_load(&list->remaining) == seen_remaining)
		return;
	items = gather_items(list, MyDatabaseId, &nitems, &clear, &nclear);
	for (int k = 0; k < nitems; k++)
	{
		SeqItem    *it = &items[k];
		Buffer		buf = read_seq_page(it);
		HeapTupleData tuple;
		Form_pg_sequence_data seq;
		xl_seq_rec	xlrec;
		XLogRecPtr	recptr;
		bool		advanced;

		if (!BufferIsValid(buf))
			continue;			/* the sequence is gone */
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		seq = seq_tuple(BufferGetPage(buf), &tuple);
		if (seq == NULL)
		{
			UnlockReleaseBuffer(buf);
			continue;			/* not a sequence (any more) */
		}
		START_CRIT_SECTION();
		advanced = advance(seq, it);
		seq->log_cnt = 0;
		MarkBufferDirty(buf);
		XLogBeginInsert();
		XLogRegisterBuffer(0, buf, REGBUF_WILL_INIT);
		NVM_SEQ_REC_LOCATOR(xlrec) = it->node;
		XLogRegisterData((char *) &xlrec, sizeof(xl_seq_rec));
		XLogRegisterData((char *) tuple.t_data, tuple.t_len);
		recptr = XLogInsert(RM_SEQ_ID, XLOG_SEQ_LOG);
		PageSetLSN(BufferGetPage(buf), recptr);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(buf);
		flush_to = Max(flush_to, recptr);
		if (advanced)
			ereport(LOG,
					(errmsg("nvm: advanced sequence with relfilenode %u/%u/%u to %lld after recovery",
							it->node.spcOid, it->node.dbOid, it->node.relNumber,
							(long long) it->value),
					 errdetail("A row committed without a WAL flush holds that value; the sequence's log-ahead record was lost.")));
	}
	/* the advances are durable before the pool forgets them */
	if (flush_to != InvalidXLogRecPtr)
		XLogFlush(flush_to);
	for (int k = 0; k < nclear;)
	{
		int			run = 1;

		while (k + run < nclear && clear[k + run] == clear[k] + run)
			run++;
		(void) nvm_external_clear(clear[k], run);
		k += run;
	}
	seen_list = list;
	seen_remaining = atomic_load(&list->remaining);
	pfree(items);
	pfree(clear);
}
