/*-------------------------------------------------------------------------
 *
 * nvm_scan.c
 *	  Scans of nvm tables: sequential (forwards and backwards, and
 *	  parallel), TID range scans, TID helpers, ANALYZE sampling, bitmap
 *	  heap scans and sample scans (TABLESAMPLE).
 *
 * A sequential scan walks version numbers 1 .. n-1, where n is the table's
 * version limit when the scan (re)starts, and returns each version that is
 * the one its view sees for the version's record (never a tombstone).  So
 * rows come back in TID order, in the order their visible versions were
 * written, as heap returns them from a table whose updated rows moved to
 * its end; each row once, since a record has at most one visible version,
 * and a version written after the scan began lies beyond n.  Outside
 * serializable transactions each version is tested in one call of the core
 * (nvm_scan_visible), which walks the record's chain only when the version
 * is not its newest: a row nobody wrote since costs one test of its
 * creator, as a heap tuple's costs one test of its xmin.
 *
 * On a standby (while replay runs, and after a promotion until the next
 * start, if replay moved a number: store.h, "Moved numbers") a version
 * number may no longer name the version a query's snapshot sees: replay
 * gives it to the version the primary gave it again.  There a sequential
 * scan walks record numbers 1 .. r-1 instead, r the table's record limit
 * when it (re)starts, and returns the version its view sees on each
 * record's chain (by_record): the reader's side (S1, S2) of the rule in
 * core replica.h, which replay's order of writes (R1..R4) serves, so that
 * every row comes back exactly once, in the version the snapshot sees.
 * Rows then come back in record order.  A TID range scan walks records
 * too and returns the rows whose visible versions' TIDs lie in the range;
 * a sample scan maps the version numbers its sampling method chooses
 * through a list of the visible versions by number, made by one walk of
 * the records at its first block (numbered_build).  The view is
 * fixed at scan start: an MVCC scan copies the MCSI vector of its
 * statement into the descriptor (nvm_xact.c), so a cursor keeps the view
 * it began with.  A parallel sequential scan hands out chunks of version
 * numbers from a counter in its shared descriptor; every participant reads
 * with the leader's view (nvm_parallel.c).
 *
 * ANALYZE and bitmap scans go by "blocks" of version numbers (nvm_tid.h):
 * ANALYZE samples versions and counts a version as a live row if it is
 * the version a fresh snapshot sees for its record; a bitmap scan treats
 * every TID in its bitmap as an index entry (an index_root, see
 * nvm_visibility.c), and for lossy pages every version number of the
 * block, so each visible row comes back once, from the block of its index
 * run's root, and never with indexed values other than the entry's.
 *
 * Statistics are counted where heap counts them: a sequential scan counts
 * as one scan when it starts or restarts (seq_scan) and every row it
 * returns (seq_tup_read); bitmap and sample scans count the rows they
 * return; every scan counts each virtual block it visits once, where heap
 * reads a buffer (nvm_count_block_visit: a buffer hit, nvm having no
 * buffers).  A parallel scan hands out whole blocks, so each block is
 * counted once however many participants there are.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tsmapi.h"
#include "access/skey.h"
#include "access/tableam.h"
#include "access/valid.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#if PG_VERSION_NUM >= 170000
#include "storage/read_stream.h"
#endif
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am/nvm_am.h"
#include "claim/nvm_binding.h"
#include "row/nvm_tid.h"
#include "row/nvm_tuple.h"
#include "space/nvm_relation.h"
#include "xact/nvm_snapshot.h"
#include "xact/nvm_ssi.h"
#include "xact/nvm_visibility.h"
#include "xact/nvm_xact.h"

typedef struct NvmScanDescData
{
	TableScanDescData base;

	NvmTable	table;
	NvmSnapshot *snap;			/* private vector copy, or NULL */
	NvmView		view;
	NvmScanCache cache;			/* what nvm_scan_visible keeps between rows */

	/* serializable: report reads to the predicate-lock manager (nvm_ssi.c) */
	bool		ssi;

	/* sequential and TID range scans */
	bool		by_record;		/* walk record numbers (a standby) */
	uint64		first;			/* first version number scanned */
	uint64		nversions;		/* version numbers below this are scanned */
	uint64		nrecords;		/* by_record: record numbers below this */
	uint64		cur;			/* version (by_record: record) last returned */
	uint64		chunk_end;		/* parallel: end of the claimed chunk */
	BlockNumber stat_block;		/* block last counted as visited */

	/* sample scans */
	BlockNumber sample_block;	/* current block, or InvalidBlockNumber */
	bool		inited;			/* false: (re)start at the scan's first end */
	struct NvmNumbered *numbered;	/* by_record: visible versions by number */
	uint64		nnumbered;

	/* ANALYZE */
	BlockNumber analyze_block;
	int			analyze_offset; /* next offset (1-based) of analyze_block */

	/* bitmap scans */
	BlockNumber bitmap_block;
	int			bitmap_ntids;
	int			bitmap_next;
	OffsetNumber bitmap_offsets[MaxHeapTuplesPerPage];
} NvmScanDescData;

typedef NvmScanDescData *NvmScanDesc;

/* The shared state of a parallel sequential scan. */
typedef struct NvmParallelScanDescData
{
	ParallelTableScanDescData base;
	bool		by_record;		/* chunks of record numbers (a standby) */
	uint64		nversions;		/* version numbers below this are scanned */
	uint64		nrecords;		/* by_record: record numbers below this */
	pg_atomic_uint64 next;		/* first number of the next chunk */
} NvmParallelScanDescData;

typedef NvmParallelScanDescData *NvmParallelScanDesc;

/* A visible version by its number (sample scans that walk records). */
typedef struct NvmNumbered
{
	uint64		version_no;
	NvmVersion *v;
} NvmNumbered;

/*
 * Version (or record) numbers a participant of a parallel scan claims at a
 * time: one virtual block (chunks start at 1, the first number of block 0).
 */
#define NVM_PARALLEL_CHUNK	NVM_TUPLES_PER_BLOCK

/*
 * scan_by_record says whether a scan that starts now must find rows by
 * record, not by version number (see the file header).
 */
static bool
scan_by_record(void)
{
	return nvm_binding_is_replica() || nvm_store_numbers_moved();
}

/*
 * nvm_scan_reset puts the scan before its first row and fixes the range of
 * version (and record) numbers it covers (like heap's rs_nblocks); the
 * limits are read after the scan's snapshot was taken.
 */
static void
nvm_scan_reset(NvmScanDesc scan)
{
	if (scan->base.rs_parallel != NULL)
	{
		NvmParallelScanDesc pscan = (NvmParallelScanDesc) scan->base.rs_parallel;

		scan->by_record = pscan->by_record;
		scan->nversions = pscan->nversions;
		scan->nrecords = pscan->nrecords;
	}
	else
	{
		scan->by_record = scan_by_record();
		scan->nversions = nvm_table_version_limit(&scan->table);
		scan->nrecords = nvm_table_record_limit(&scan->table);
	}
	if (scan->numbered != NULL)
		pfree(scan->numbered);
	scan->numbered = NULL;
	scan->nnumbered = 0;
	scan->first = 1;
	scan->chunk_end = 0;
	scan->sample_block = InvalidBlockNumber;
	scan->cur = 0;
	scan->inited = false;
	scan->stat_block = InvalidBlockNumber;
	/* heap counts a sequential scan whenever it (re)initialises one */
	if (scan->base.rs_flags & SO_TYPE_SEQSCAN)
		pgstat_count_heap_scan(scan->base.rs_rd);
}

/*
 * count_block counts a visit to the virtual block of version number n, once
 * per block in a row (as heap reads a buffer when it moves to a new page).
 */
static inline void
count_block(NvmScanDesc scan, uint64 n)
{
	BlockNumber blk = (BlockNumber) ((n - 1) / NVM_TUPLES_PER_BLOCK);

	if (blk != scan->stat_block)
	{
		scan->stat_block = blk;
		nvm_count_block_visit(scan->base.rs_rd);
	}
}

/*
 * nvm_scan_begin starts a scan of rel.  MVCC scans copy the statement's
 * vector; ANALYZE scans (which come without a snapshot) take a fresh one.
 */
TableScanDesc
nvm_scan_begin(Relation rel, Snapshot snapshot, int nkeys,
			   struct ScanKeyData *key, ParallelTableScanDesc pscan,
			   uint32 flags)
{
	NvmScanDesc scan;

	nvm_xact_check_access(rel);

	RelationIncrementReferenceCount(rel);

	scan = palloc0(sizeof(NvmScanDescData));
	scan->base.rs_rd = rel;
	scan->base.rs_snapshot = snapshot;
	scan->base.rs_nkeys = nkeys;
	scan->base.rs_flags = flags;
	scan->base.rs_parallel = pscan;
	if (nkeys > 0)
	{
		scan->base.rs_key = palloc(sizeof(ScanKeyData) * nkeys);
		memcpy(scan->base.rs_key, key, sizeof(ScanKeyData) * nkeys);
	}

	scan->table = nvm_relation_table(rel);

	if (flags & SO_TYPE_ANALYZE)
	{
		scan->snap = nvm_xact_fresh_snapshot();
		scan->view.kind = NVM_VIEW_SNAPSHOT;
		scan->view.snap = scan->snap;
		scan->view.curcid = GetCurrentCommandId(false);
		scan->view.my_txid = nvm_xact_my_txid();
	}
	else
	{
		if (snapshot == NULL)
			elog(ERROR, "nvm scans need a snapshot");
		if (snapshot->snapshot_type == SNAPSHOT_MVCC)
			scan->snap = nvm_xact_copy_snapshot(NULL);
		nvm_view_init(&scan->view, snapshot, scan->snap);
		scan->ssi = nvm_ssi_needed(rel, snapshot);
		/* a sequential scan locks the relation, as heap's does */
		if (scan->ssi && (flags & SO_TYPE_SEQSCAN))
			nvm_ssi_lock_relation(rel, snapshot);
	}

	nvm_scan_reset(scan);
	return (TableScanDesc) scan;
}

/*
 * nvm_scan_end releases the scan.
 */
void
nvm_scan_end(TableScanDesc sscan)
{
	NvmScanDesc scan = (NvmScanDesc) sscan;

	if (sscan->rs_flags & SO_TEMP_SNAPSHOT)
		UnregisterSnapshot(sscan->rs_snapshot);
	RelationDecrementReferenceCount(sscan->rs_rd);
	if (sscan->rs_key)
		pfree(sscan->rs_key);
	if (scan->snap)
		pfree(scan->snap);
	if (scan->numbered)
		pfree(scan->numbered);
	pfree(scan);
}

/*
 * nvm_scan_rescan restarts the scan, with new scan keys if given; the view
 * stays the one the scan began with.
 */
void
nvm_scan_rescan(TableScanDesc sscan, struct ScanKeyData *key,
				bool set_params, bool allow_strat, bool allow_sync,
				bool allow_pagemode)
{
	NvmScanDesc scan = (NvmScanDesc) sscan;

	if (set_params)
	{
		if (allow_strat)
			sscan->rs_flags |= SO_ALLOW_STRAT;
		else
			sscan->rs_flags &= ~SO_ALLOW_STRAT;
		if (allow_sync)
			sscan->rs_flags |= SO_ALLOW_SYNC;
		else
			sscan->rs_flags &= ~SO_ALLOW_SYNC;
		if (allow_pagemode)
			sscan->rs_flags |= SO_ALLOW_PAGEMODE;
		else
			sscan->rs_flags &= ~SO_ALLOW_PAGEMODE;
	}
	if (key != NULL && sscan->rs_nkeys > 0)
		memcpy(sscan->rs_key, key, sizeof(ScanKeyData) * sscan->rs_nkeys);
	nvm_scan_reset(scan);
}

/*
 * nvm_scan_key_test says whether the version passes the scan's keys (only
 * internal callers pass keys; the executor evaluates quals itself).
 */
static bool
nvm_scan_key_test(NvmScanDesc scan, NvmVersion *v)
{
	HeapTupleData tuple;

	if (scan->base.rs_nkeys == 0)
		return true;
	nvm_version_tuple(scan->base.rs_rd, v, &tuple);
	return NVM_HEAP_KEY_TEST(&tuple, RelationGetDescr(scan->base.rs_rd),
							 scan->base.rs_nkeys, scan->base.rs_key);
}

/*
 * nvm_scan_getnextslot returns the next visible row in the given direction.
 * Like heap, a scan that ran off one end restarts from that direction's
 * first row when asked again.
 */
bool
nvm_scan_getnextslot(TableScanDesc sscan, ScanDirection direction,
					 TupleTableSlot *slot)
{
	NvmScanDesc scan = (NvmScanDesc) sscan;
	uint64		lo = scan->by_record ? 1 : scan->first;	/* the numbers walked: */
	uint64		hi = scan->by_record ? scan->nrecords : scan->nversions;	/* [lo, hi) */

	/* own writes made since the scan began are judged by their command id */
	scan->view.my_txid = nvm_xact_my_txid();

	for (;;)
	{
		NvmVersion *v;

		CHECK_FOR_INTERRUPTS();

		if (sscan->rs_parallel != NULL)
		{
			NvmParallelScanDesc pscan = (NvmParallelScanDesc) sscan->rs_parallel;

			Assert(ScanDirectionIsForward(direction));
			if (scan->inited && scan->cur + 1 < scan->chunk_end)
				scan->cur++;
			else
			{
				uint64		start = pg_atomic_fetch_add_u64(&pscan->next,
															NVM_PARALLEL_CHUNK);

				if (start >= hi)
					break;
				scan->cur = start;
				scan->chunk_end = Min(start + NVM_PARALLEL_CHUNK, hi);
			}
		}
		else if (ScanDirectionIsForward(direction))
		{
			scan->cur = scan->inited ? scan->cur + 1 : lo;
			if (scan->cur >= hi)
				break;
		}
		else if (ScanDirectionIsBackward(direction))
		{
			scan->cur = scan->inited ? scan->cur - 1 : hi - 1;
			if (scan->cur < lo)
				break;
		}
		else if (!scan->inited || scan->cur < lo || scan->cur >= hi)
			break;				/* no movement, but there is no current row */
		scan->inited = true;
		count_block(scan, scan->cur);

		if (scan->by_record)
		{
			/*
			 * S2 of core replica.h: the version the view sees on the
			 * record's chain, found from its head; a TID range scan keeps
			 * it if its TID lies in the range.
			 */
			v = nvm_chain_visible(&scan->table, scan->cur, &scan->view);
			if (scan->ssi)
				nvm_ssi_read_row(sscan->rs_rd, &scan->table, scan->cur, v,
								 sscan->rs_snapshot, &scan->view);
			if (v == NULL || nvm_version_is_tombstone(v) ||
				v->version_no < scan->first || v->version_no >= scan->nversions ||
				!nvm_scan_key_test(scan, v))
			{
				if (direction == NoMovementScanDirection)
					break;
				continue;
			}
			nvm_store_version(sscan->rs_rd, v, slot);
			pgstat_count_heap_getnext(sscan->rs_rd);
			return true;
		}

		/*
		 * The version must be the one its row shows to the view.  It is
		 * looked at again after that test: a version below the newest
		 * all-visible one may have been collected and its block reused
		 * between the two reads (a visible one no longer can be).
		 * Serializable scans report every version they look at, before
		 * the test; the others test it in one call (nvm_scan_visible: the
		 * same answer, without walking the chain of a row nobody wrote
		 * since).
		 */
		if (scan->ssi)
		{
			v = nvm_version_by_no(&scan->table, scan->cur);
			if (v != NULL)
				nvm_ssi_check_version(sscan->rs_rd, v, sscan->rs_snapshot, &scan->view);
			if (v != NULL &&
				nvm_chain_visible(&scan->table, v->record_no, &scan->view) != v)
				v = NULL;
		}
		else
			v = nvm_scan_visible(&scan->table, scan->cur, &scan->view, &scan->cache);
		if (v == NULL || nvm_version_is_tombstone(v) ||
			v->version_no != scan->cur ||
			(sscan->rs_nkeys > 0 && !nvm_scan_key_test(scan, v)))
		{
			if (direction == NoMovementScanDirection)
				break;
			continue;
		}

		nvm_store_version(sscan->rs_rd, v, slot);
		pgstat_count_heap_getnext(sscan->rs_rd);
		return true;
	}

	scan->inited = false;
	ExecClearTuple(slot);
	return false;
}

/*
 * nvm_scan_set_tidrange limits the (restarted) scan to the rows whose
 * visible versions have TIDs from mintid to maxtid, both included: the
 * version numbers those TIDs bound (nvm_tid.h), clipped to the scan's
 * range.  Offsets outside 1..291 bound as heap's do: offset 0 of a block
 * lies before its first version, a larger offset after its last.  The scan
 * then steps as a sequential scan does (nvm_scan_getnextslot is also the
 * AM's scan_getnextslot_tidrange): through those numbers, or on a standby
 * through every record, keeping the rows whose TIDs are in the range.
 */
void
nvm_scan_set_tidrange(TableScanDesc sscan, ItemPointer mintid,
					  ItemPointer maxtid)
{
	NvmScanDesc scan = (NvmScanDesc) sscan;
	uint64		minblk = ItemPointerGetBlockNumberNoCheck(mintid);
	uint64		maxblk = ItemPointerGetBlockNumberNoCheck(maxtid);
	uint64		minoff = ItemPointerGetOffsetNumberNoCheck(mintid);
	uint64		maxoff = ItemPointerGetOffsetNumberNoCheck(maxtid);
	uint64		lo;
	uint64		hi;

	lo = minblk * NVM_TUPLES_PER_BLOCK + Max(Min(minoff, NVM_TUPLES_PER_BLOCK + 1), 1);
	hi = maxblk * NVM_TUPLES_PER_BLOCK + Min(maxoff, NVM_TUPLES_PER_BLOCK);
	scan->first = Max(lo, 1);
	scan->nversions = Min(scan->nversions, hi + 1);
	if (scan->first > scan->nversions)
		scan->first = scan->nversions;	/* empty */
}

/*
 * nvm_parallelscan_estimate returns the size of a parallel scan's shared
 * state.
 */
Size
nvm_parallelscan_estimate(Relation rel)
{
	return sizeof(NvmParallelScanDescData);
}

/*
 * nvm_parallelscan_initialize sets up the shared state: the range of
 * version numbers is fixed now, in the leader, for every participant.
 */
Size
nvm_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan)
{
	NvmParallelScanDesc npscan = (NvmParallelScanDesc) pscan;
	NvmTable	table = nvm_relation_table(rel);

#if PG_VERSION_NUM >= 180000
	pscan->phs_locator = rel->rd_locator;
#else
	pscan->phs_relid = RelationGetRelid(rel);
#endif
	pscan->phs_syncscan = false;
	npscan->by_record = scan_by_record();
	npscan->nversions = nvm_table_version_limit(&table);
	npscan->nrecords = nvm_table_record_limit(&table);
	pg_atomic_init_u64(&npscan->next, 1);
	return sizeof(NvmParallelScanDescData);
}

/*
 * nvm_parallelscan_reinitialize restarts the shared state for a rescan.
 */
void
nvm_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan)
{
	NvmParallelScanDesc npscan = (NvmParallelScanDesc) pscan;
	NvmTable	table = nvm_relation_table(rel);

	npscan->by_record = scan_by_record();
	npscan->nversions = nvm_table_version_limit(&table);
	npscan->nrecords = nvm_table_record_limit(&table);
	pg_atomic_write_u64(&npscan->next, 1);
}

/*
 * nvm_tuple_tid_valid says whether tid can name a version of the table.
 */
bool
nvm_tuple_tid_valid(TableScanDesc sscan, ItemPointer tid)
{
	NvmScanDesc scan = (NvmScanDesc) sscan;
	uint64		n = nvm_tid_to_version(tid);

	return n >= 1 && n < nvm_table_version_limit(&scan->table);
}

/*
 * nvm_tuple_get_latest_tid replaces tid by the TID of the version of its
 * row that the scan's snapshot sees, if there is one.
 */
void
nvm_tuple_get_latest_tid(TableScanDesc sscan, ItemPointer tid)
{
	NvmScanDesc scan = (NvmScanDesc) sscan;
	NvmVersion *v = nvm_version_by_no(&scan->table, nvm_tid_to_version(tid));
	NvmVersion *w;

	if (v == NULL)
		return;
	scan->view.my_txid = nvm_xact_my_txid();
	w = nvm_chain_visible(&scan->table, v->record_no, &scan->view);
	if (w != NULL && !nvm_version_is_tombstone(w))
		nvm_version_to_tid(w->version_no, tid);
}

/*
 * analyze_take_block moves ANALYZE to block blockno of version numbers.
 */
static void
analyze_take_block(NvmScanDesc scan, BlockNumber blockno)
{
	scan->analyze_block = blockno;
	scan->analyze_offset = 1;
	nvm_count_block_visit(scan->base.rs_rd);
}

/*
 * nvm_scan_analyze_next_block moves ANALYZE to a block of version numbers:
 * the block given (15), or the next block of ANALYZE's sample (17 on: the
 * read stream's next block number, taken without reading the block, whose
 * page in the main fork is only a placeholder; false at the end).
 */
#if PG_VERSION_NUM >= 170000
bool
nvm_scan_analyze_next_block(TableScanDesc sscan, ReadStream *stream)
{
	BufferAccessStrategy strategy;
	BlockNumber blockno = read_stream_next_block(stream, &strategy);

	if (blockno == InvalidBlockNumber)
		return false;
	analyze_take_block((NvmScanDesc) sscan, blockno);
	return true;
}
#else
bool
nvm_scan_analyze_next_block(TableScanDesc sscan, BlockNumber blockno,
							BufferAccessStrategy bstrategy)
{
	analyze_take_block((NvmScanDesc) sscan, blockno);
	return true;
}
#endif

/*
 * nvm_scan_analyze_next_tuple returns the next live row of the block and
 * counts the versions it passes: a version is live if it is the version
 * ANALYZE's snapshot sees for its record, dead if it is committed or
 * aborted but not that (superseded, deleted, rolled back); versions of
 * transactions still running are not counted, tombstones neither (the
 * version they delete counts as dead).
 */
bool
nvm_scan_analyze_next_tuple(TableScanDesc sscan, TransactionId OldestXmin,
							double *liverows, double *deadrows,
							TupleTableSlot *slot)
{
	NvmScanDesc scan = (NvmScanDesc) sscan;
	uint64		limit = nvm_table_version_limit(&scan->table);

	while (scan->analyze_offset <= NVM_TUPLES_PER_BLOCK)
	{
		uint64		n = (uint64) scan->analyze_block * NVM_TUPLES_PER_BLOCK +
			scan->analyze_offset;	/* as nvm_tid_to_version */
		NvmVersion *v;
		NvmVersion *w;

		scan->analyze_offset++;
		if (n >= limit)
			break;
		v = nvm_version_by_no(&scan->table, n);
		if (v == NULL || nvm_version_is_tombstone(v))
			continue;

		w = nvm_chain_visible(&scan->table, v->record_no, &scan->view);
		if (w == v)
		{
			nvm_store_version(sscan->rs_rd, v, slot);
			*liverows += 1;
			return true;
		}
		if (!nvm_version_by_other_running(v, scan->view.my_txid))
			*deadrows += 1;
	}

	ExecClearTuple(slot);
	return false;
}

/*
 * bitmap_take_block takes the TIDs of one block of the bitmap: the
 * ntids offsets listed, or all of them when ntids < 0 (a lossy block).
 * False when the block lies past the table's version numbers or has none.
 */
static bool
bitmap_take_block(NvmScanDesc scan, BlockNumber blockno,
				  const OffsetNumber *offsets, int ntids)
{
	uint64		limit = nvm_table_version_limit(&scan->table);

	scan->bitmap_block = blockno;
	scan->bitmap_ntids = 0;
	scan->bitmap_next = 0;

	/* the block's first version number, as nvm_tid_to_version */
	if ((uint64) blockno * NVM_TUPLES_PER_BLOCK + 1 >= limit)
		return false;
	nvm_count_block_visit(scan->base.rs_rd);

	if (ntids >= 0)
	{
		for (int i = 0; i < ntids; i++)
			scan->bitmap_offsets[scan->bitmap_ntids++] = offsets[i];
	}
	else
	{
		for (OffsetNumber off = 1; off <= NVM_TUPLES_PER_BLOCK; off++)
			scan->bitmap_offsets[scan->bitmap_ntids++] = off;
	}
	return scan->bitmap_ntids > 0;
}

/*
 * bitmap_next_row returns the next row of the block taken, fetching each
 * TID as an index entry; false when the block has no more.
 */
static bool
bitmap_next_row(NvmScanDesc scan, TupleTableSlot *slot)
{
	TableScanDesc sscan = &scan->base;

	scan->view.my_txid = nvm_xact_my_txid();
	while (scan->bitmap_next < scan->bitmap_ntids)
	{
		OffsetNumber off = scan->bitmap_offsets[scan->bitmap_next++];
		ItemPointerData tid;
		NvmVersion *w;

		ItemPointerSet(&tid, scan->bitmap_block, off);
		w = nvm_fetch_root(&scan->table, nvm_tid_to_version(&tid),
						   sscan->rs_snapshot, &scan->view);
		if (scan->ssi)
			nvm_ssi_read_row(sscan->rs_rd, &scan->table,
							 nvm_version_record_no(&scan->table, nvm_tid_to_version(&tid)),
							 w, sscan->rs_snapshot, &scan->view);
		if (w == NULL)
			continue;
		nvm_store_version(sscan->rs_rd, w, slot);
		pgstat_count_heap_fetch(sscan->rs_rd);
		return true;
	}
	return false;
}

#if PG_VERSION_NUM >= 180000
/*
 * nvm_scan_bitmap_next_tuple returns the next row of the bitmap: it takes
 * the bitmap's blocks from the scan's iterator as it goes, and says
 * whether the row must be rechecked and whether its block was lossy.
 */
bool
nvm_scan_bitmap_next_tuple(TableScanDesc sscan, TupleTableSlot *slot,
						   bool *recheck, uint64 *lossy_pages,
						   uint64 *exact_pages)
{
	NvmScanDesc scan = (NvmScanDesc) sscan;

	for (;;)
	{
		TBMIterateResult tbmres;
		OffsetNumber offsets[TBM_MAX_TUPLES_PER_PAGE];
		int			ntids = -1;

		if (bitmap_next_row(scan, slot))
			return true;
		if (!tbm_iterate(&sscan->st.rs_tbmiterator, &tbmres))
			break;
		if (!tbmres.lossy)
			ntids = tbm_extract_page_tuple(&tbmres, offsets, TBM_MAX_TUPLES_PER_PAGE);
		*recheck = tbmres.recheck;
		if (tbmres.lossy)
			(*lossy_pages)++;
		else
			(*exact_pages)++;
		(void) bitmap_take_block(scan, tbmres.blockno, offsets, ntids);
	}
	ExecClearTuple(slot);
	return false;
}
#else
/*
 * nvm_scan_bitmap_next_block takes the TIDs of one block of the bitmap:
 * the listed offsets, or all of them for a lossy block.
 */
bool
nvm_scan_bitmap_next_block(TableScanDesc sscan, struct TBMIterateResult *tbmres)
{
	return bitmap_take_block((NvmScanDesc) sscan, tbmres->blockno,
							 tbmres->offsets, tbmres->ntuples);
}

/*
 * nvm_scan_bitmap_next_tuple returns the next row of the block.
 */
bool
nvm_scan_bitmap_next_tuple(TableScanDesc sscan, struct TBMIterateResult *tbmres,
						   TupleTableSlot *slot)
{
	if (bitmap_next_row((NvmScanDesc) sscan, slot))
		return true;
	ExecClearTuple(slot);
	return false;
}
#endif

/*
 * nvm_scan_sample_next_block moves a sample scan (TABLESAMPLE) to its next
 * virtual block: the one the sampling method chooses, or the next one in
 * order for methods that read every block (BERNOULLI), as heap does.
 */
bool
nvm_scan_sample_next_block(TableScanDesc sscan, struct SampleScanState *scanstate)
{
	NvmScanDesc scan = (NvmScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;
	BlockNumber nblocks = nvm_versions_to_blocks(scan->nversions);
	BlockNumber blockno;

	if (tsm->NextSampleBlock)
		blockno = tsm->NextSampleBlock(scanstate, nblocks);
	else if (scan->sample_block == InvalidBlockNumber)
		blockno = nblocks > 0 ? 0 : InvalidBlockNumber;
	else if (scan->sample_block + 1 < nblocks)
		blockno = scan->sample_block + 1;
	else
		blockno = InvalidBlockNumber;

	scan->sample_block = blockno;
	if (!BlockNumberIsValid(blockno))
		return false;
	nvm_count_block_visit(sscan->rs_rd);
	return true;
}

/* numbered_cmp orders visible versions by number. */
static int
numbered_cmp(const void *a, const void *b)
{
	uint64		x = ((const NvmNumbered *) a)->version_no;
	uint64		y = ((const NvmNumbered *) b)->version_no;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * numbered_build lists, by version number, the version the scan's view
 * sees on the chain of every record below the scan's record limit (rows
 * only, and only numbers below its version limit): S1 and S2 of core
 * replica.h, for a sample scan that walks records.  The list lives as long
 * as the scan (or until its rescan), and so do the versions it names,
 * which the scan's snapshot keeps from collection.
 */
static void
numbered_build(NvmScanDesc scan)
{
	uint64		cap = 1024;
	MemoryContext cxt = GetMemoryChunkContext(scan);

	scan->numbered = MemoryContextAllocHuge(cxt, cap * sizeof(NvmNumbered));
	scan->nnumbered = 0;
	for (uint64 r = 1; r < scan->nrecords; r++)
	{
		NvmVersion *v = nvm_chain_visible(&scan->table, r, &scan->view);

		if ((r & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (v == NULL || nvm_version_is_tombstone(v) || v->version_no >= scan->nversions)
			continue;
		if (scan->nnumbered == cap)
		{
			cap *= 2;
			scan->numbered = repalloc_huge(scan->numbered, cap * sizeof(NvmNumbered));
		}
		scan->numbered[scan->nnumbered].version_no = v->version_no;
		scan->numbered[scan->nnumbered].v = v;
		scan->nnumbered++;
	}
	qsort(scan->numbered, scan->nnumbered, sizeof(NvmNumbered), numbered_cmp);
}

/*
 * numbered_find returns the visible version numbered n from the scan's
 * list, or NULL.
 */
static NvmVersion *
numbered_find(NvmScanDesc scan, uint64 n)
{
	NvmNumbered key;
	NvmNumbered *hit;

	key.version_no = n;
	hit = bsearch(&key, scan->numbered, scan->nnumbered, sizeof(NvmNumbered), numbered_cmp);
	return hit != NULL ? hit->v : NULL;
}

/*
 * nvm_scan_sample_next_tuple returns the next row of the current block
 * that the sampling method chooses among the block's version numbers and
 * that is the version the scan's view sees for its record (on a standby,
 * looked up in the list of visible versions by number).
 */
bool
nvm_scan_sample_next_tuple(TableScanDesc sscan, struct SampleScanState *scanstate,
						   TupleTableSlot *slot)
{
	NvmScanDesc scan = (NvmScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;
	uint64		first = (uint64) scan->sample_block * NVM_TUPLES_PER_BLOCK;
	OffsetNumber maxoffset;

	if (scan->sample_block == InvalidBlockNumber || first + 1 >= scan->nversions)
		return false;
	maxoffset = (OffsetNumber) Min(NVM_TUPLES_PER_BLOCK, scan->nversions - 1 - first);
	scan->view.my_txid = nvm_xact_my_txid();
	if (scan->by_record && scan->numbered == NULL)
		numbered_build(scan);

	for (;;)
	{
		OffsetNumber off;
		NvmVersion *v;

		CHECK_FOR_INTERRUPTS();
		off = tsm->NextSampleTuple(scanstate, scan->sample_block, maxoffset);
		if (!OffsetNumberIsValid(off))
			break;
		if (scan->by_record)
		{
			v = numbered_find(scan, first + off);	/* as nvm_tid_to_version */
			if (v == NULL)
				continue;
		}
		else
		{
			v = nvm_version_by_no(&scan->table, first + off);	/* as nvm_tid_to_version */
			if (v == NULL || nvm_version_is_tombstone(v) ||
				nvm_chain_visible(&scan->table, v->record_no, &scan->view) != v)
				continue;
		}
		nvm_store_version(sscan->rs_rd, v, slot);
		pgstat_count_heap_getnext(sscan->rs_rd);
		return true;
	}
	ExecClearTuple(slot);
	return false;
}
