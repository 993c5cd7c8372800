/*-------------------------------------------------------------------------
 *
 * nvm_storage.c
 *	  Storage life cycle of nvm tables (create, truncate, move to another
 *	  tablespace, rewrite for CLUSTER and VACUUM FULL; VACUUM itself is
 *	  nvm_vacuum.c) and the sizes the planner and ANALYZE see.
 *
 * Rows live in the pool under the relation's relfilenode, but the main-fork
 * file is created anyway, as heap does, because core code such as
 * pg_relation_size and the smgr layer expects it; a new relfilenode's file
 * is removed by PostgreSQL's pending-delete machinery if the transaction
 * rolls back.  The file holds only zero pages (mostly holes), as many as
 * the table has virtual blocks (nvm_storage_cover_version), so that
 * pg_relation_size() reports what relation_size does.
 *
 * Every persistence works as on heap.  The pool key of a table records its
 * persistence and, for a temporary table, its backend (nvm_relation.c).
 * A temporary table is dropped with its session, and its storage by the
 * start-up sweep after a crash.  An unlogged table gets an init fork, as
 * on heap, so that after a crash PostgreSQL resets its (empty) main fork
 * and its indexes; the start-up sweep empties its pool storage then
 * (nvmam.c).  ALTER TABLE ... SET LOGGED / UNLOGGED rewrite the table into
 * a relfilenode of the new persistence.  Created without USING while nvm
 * is the default, temporary and unlogged tables still use heap
 * (nvm_ddl.c).
 *
 * A new relfilenode's pool storage is freed if the transaction rolls back,
 * and the relfilenode it replaces (TRUNCATE, SET TABLESPACE) when it
 * commits: nvm_drop.c.
 *
 * Sizes: "blocks" are groups of 291 version numbers (nvm_tid.h), so
 * relation_size, ANALYZE's block sampling and TIDs agree.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/multixact.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "catalog/pg_class.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/vacuum.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "storage/bufpage.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"

#include "am/nvm_am.h"
#include "claim/nvm_binding.h"
#include "nvm_compat.h"
#include "redo/nvm_redo.h"
#include "redo/nvm_redofmt.h"
#include "row/nvm_tid.h"
#include "space/nvm_drop.h"
#include "space/nvm_relation.h"
#include "xact/nvm_xact.h"

/* A heap tuple's overhead and a heap page's room (heapam_handler.c). */
#define NVM_HEAP_OVERHEAD_BYTES_PER_TUPLE \
	(MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData))
#define NVM_HEAP_USABLE_BYTES_PER_PAGE \
	(BLCKSZ - SizeOfPageHeaderData)

/*
 * nvm_create_files creates the files of relfilenode rnode with the given
 * persistence: the empty main fork and, for an unlogged relation, the
 * init fork (WAL-logged and synced, as heap does), from which PostgreSQL
 * resets the relation after a crash.
 */
static void
nvm_create_files(const RelFileLocator *rnode, char persistence)
{
	SMgrRelation srel = RelationCreateStorage(*rnode, persistence, true);

	if (persistence == RELPERSISTENCE_UNLOGGED)
	{
		smgrcreate(srel, INIT_FORKNUM, false);
		log_smgrcreate(rnode, INIT_FORKNUM);
		smgrimmedsync(srel, INIT_FORKNUM);
	}
	smgrclose(srel);
}

/*
 * nvm_relation_set_new_filelocator gives rel a new, empty relfilenode: an
 * empty descriptor in the pool and empty files (nvm_create_files).  No
 * PostgreSQL xids are stored in nvm tables, so anti-wraparound vacuum
 * never needs to visit them.
 */
void
nvm_relation_set_new_filelocator(Relation rel, const RelFileLocator *newrnode,
								 char persistence, TransactionId *freezeXid,
								 MultiXactId *minmulti)
{
	NvmTableKey key;

	nvm_relation_create_storage(rel, newrnode, persistence, nvm_xact_my_txid());
	nvm_relation_key(rel, newrnode, persistence, &key);
	nvm_drop_schedule(&key, false);
	if (newrnode != &rel->rd_locator && !RelFileLocatorEquals(*newrnode, rel->rd_locator))
	{
		/* TRUNCATE: the old storage goes at commit */
		nvm_relation_key(rel, &rel->rd_locator, rel->rd_rel->relpersistence, &key);
		nvm_drop_schedule(&key, true);
	}

	/*
	 * Row locks keep xids and MultiXactIds in the pool (nvm_rowlock.c), so
	 * the table has horizons as heap's has, and anti-wraparound vacuums
	 * reach it; VACUUM advances them.
	 */
	*freezeXid = RecentXmin;
	*minmulti = GetOldestMultiXactId();

	nvm_create_files(newrnode, persistence);
}

/*
 * nvm_relation_nontransactional_truncate empties a table created (or given
 * a new relfilenode) in the current transaction, or a temporary table ON
 * COMMIT DELETE ROWS: its descriptor is replaced by an empty one, and the
 * old one is freed when the transaction ends (nvm_drop.c).
 */
void
nvm_relation_nontransactional_truncate(Relation rel)
{
	NvmTableKey key;
	NvmTable	table;
	nvm_off		detached;

	nvm_check_pool_mapped();
	nvm_binding_settle(rel);
	nvm_relation_key(rel, &rel->rd_locator, rel->rd_rel->relpersistence, &key);
	nvm_redo_storage_begin();
	if (!nvm_table_reset(&key, nvm_xact_my_txid(), &table, &detached))
	{
		nvm_redo_storage_end();
		nvm_report_storage_full(rel);
	}
	nvm_redo_log_storage(XLNVM_STORAGE_RESET, &key, NULL);
	nvm_redo_storage_end();
	/* the relcache entry's handle is refreshed from the directory */
	if (rel->rd_amcache != NULL)
	{
		pfree(rel->rd_amcache);
		rel->rd_amcache = NULL;
	}
	if (detached != 0)
		nvm_drop_schedule_detached(detached);
	RelationTruncate(rel, 0);
}

/*
 * extend_main_fork makes the main-fork file at least blkno + 1 blocks long
 * by writing a zero page at blkno (blocks skipped become a hole); see
 * nvm_storage_cover_version.
 */
static void
extend_main_fork(SMgrRelation smgr, BlockNumber blkno)
{
	if (blkno >= smgrnblocks(smgr, MAIN_FORKNUM))
	{
		PGAlignedBlock zero;

		memset(zero.data, 0, BLCKSZ);
		smgrextend(smgr, MAIN_FORKNUM, blkno, zero.data, true);
	}
}

/*
 * nvm_relation_copy_data moves the table to relfilenode newrnode (ALTER
 * TABLE, ALTER MATERIALIZED VIEW ... SET TABLESPACE, also with ALL IN
 * TABLESPACE), with ACCESS EXCLUSIVE lock held.  Its indexes are copied
 * as they are, so every TID must keep its meaning: the pool storage is
 * cloned whole under the new key (nvm_table_clone, which states its
 * persist order), versions, numbers, free lists and all.  The new storage
 * goes if the transaction rolls back, the old one when it commits
 * (nvm_drop.c); the files are moved as heap's are.
 */
void
nvm_relation_copy_data(Relation rel, const RelFileLocator *newrnode)
{
	char		persistence = rel->rd_rel->relpersistence;
	NvmTable	src = nvm_relation_table(rel);
	NvmTable	copy;
	NvmTableKey key;

	nvm_relation_key(rel, newrnode, persistence, &key);
	if (!nvm_table_clone(&src, &key, nvm_xact_my_txid(), nvm_xact_running_txn(),
						 nvm_xact_level(), &copy))
		nvm_report_storage_full(rel);
	{
		NvmTableKey src_key;

		nvm_relation_key(rel, &rel->rd_locator, persistence, &src_key);
		nvm_redo_log_storage(XLNVM_STORAGE_CLONE, &key, &src_key);
	}
	nvm_drop_schedule(&key, false);
	nvm_relation_key(rel, &rel->rd_locator, persistence, &key);
	nvm_drop_schedule(&key, true);

	/* the main fork holds only zero pages: making as many is copying it */
	nvm_create_files(newrnode, persistence);
	{
		BlockNumber nblocks = nvm_versions_to_blocks(nvm_table_version_limit(&copy));

		if (nblocks > 0)
			extend_main_fork(smgropen(*newrnode, rel->rd_backend), nblocks - 1);
	}
	RelationDropStorage(rel);
}

/*
 * nvm_relation_copy_for_cluster rewrites the table for CLUSTER and VACUUM
 * FULL: it inserts the rows the current snapshot sees into NewTable, in
 * the order of OldIndex when there is one, otherwise in the order of a
 * sequential scan.  The index's order comes from a scan of the index or,
 * when the planner finds it cheaper (use_sort), from a sequential scan
 * sorted as heap sorts it (tuplesort_begin_cluster, which evaluates an
 * expression index's expressions as heap's CLUSTER does).  Dropped
 * columns become nulls, as in heap's rewrite.  The command holds an ACCESS
 * EXCLUSIVE lock, so no other transaction writes meanwhile; like a table
 * rewrite by ALTER TABLE, and unlike heap's CLUSTER, the new rows are
 * written by the rewriting transaction, so a transaction whose snapshot is
 * older sees the rewritten table as empty (heap's TRUNCATE and ALTER TABLE
 * rewrites behave so too).
 */
void
nvm_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
							  Relation OldIndex, bool use_sort,
							  TransactionId OldestXmin,
							  TransactionId *xid_cutoff,
							  MultiXactId *multi_cutoff,
							  double *num_tuples,
							  double *tups_vacuumed,
							  double *tups_recently_dead)
{
	TupleDesc	newdesc = RelationGetDescr(NewTable);
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	TupleTableSlot *src = table_slot_create(OldTable, NULL);
	TupleTableSlot *dst = table_slot_create(NewTable, NULL);
	CommandId	cid = GetCurrentCommandId(true);
	TableScanDesc tscan = NULL;
	IndexScanDesc iscan = NULL;
	Tuplesortstate *sort = NULL;
	Datum	   *values = palloc(sizeof(Datum) * newdesc->natts);
	bool	   *isnull = palloc(sizeof(bool) * newdesc->natts);

	Assert(RelationGetDescr(OldTable)->natts == newdesc->natts);
	*num_tuples = 0;
	*tups_vacuumed = 0;
	*tups_recently_dead = 0;

	if (OldIndex != NULL && OldIndex->rd_rel->relam != InvalidOid && !use_sort)
	{
		iscan = NVM_INDEX_BEGINSCAN(OldTable, OldIndex, snapshot, 0, 0);
		index_rescan(iscan, NULL, 0, NULL, 0);
	}
	else
		tscan = table_beginscan(OldTable, snapshot, 0, NULL);

	if (OldIndex != NULL && use_sort)
	{
		/* the rows sorted in the index's order first, then copied */
		sort = tuplesort_begin_cluster(RelationGetDescr(OldTable), OldIndex,
									   maintenance_work_mem, NULL, TUPLESORT_NONE);
		while (table_scan_getnextslot(tscan, ForwardScanDirection, src))
		{
			CHECK_FOR_INTERRUPTS();
			tuplesort_putheaptuple(sort, ExecFetchSlotHeapTuple(src, false, NULL));
		}
		tuplesort_performsort(sort);
	}

	for (;;)
	{
		HeapTuple	tuple;

		CHECK_FOR_INTERRUPTS();
		if (sort != NULL)
		{
			HeapTuple	sorted = tuplesort_getheaptuple(sort, true);

			if (sorted == NULL)
				break;
			ExecForceStoreHeapTuple(sorted, src, false);
		}
		else if (iscan != NULL ? !index_getnext_slot(iscan, ForwardScanDirection, src)
				 : !table_scan_getnextslot(tscan, ForwardScanDirection, src))
			break;

		slot_getallattrs(src);
		for (int i = 0; i < newdesc->natts; i++)
		{
			if (TupleDescAttr(newdesc, i)->attisdropped)
			{
				values[i] = (Datum) 0;
				isnull[i] = true;
			}
			else
			{
				values[i] = src->tts_values[i];
				isnull[i] = src->tts_isnull[i];
			}
		}
		tuple = heap_form_tuple(newdesc, values, isnull);
		ExecForceStoreHeapTuple(tuple, dst, true);
		table_tuple_insert(NewTable, dst, cid, 0, NULL);
		*num_tuples += 1;
	}

	if (sort != NULL)
		tuplesort_end(sort);
	if (iscan != NULL)
		index_endscan(iscan);
	else
		table_endscan(tscan);
	ExecDropSingleTupleTableSlot(src);
	ExecDropSingleTupleTableSlot(dst);
	UnregisterSnapshot(snapshot);
	pfree(values);
	pfree(isnull);

	/*
	 * The cutoffs become relfrozenxid and relminmxid of the new table and of
	 * its TOAST table (a heap table, which VACUUM would otherwise treat as
	 * never frozen): the new TOAST rows were all written by this
	 * transaction, and nvm rows hold no xid older than OldestXmin that
	 * PostgreSQL would look up.
	 */
	*xid_cutoff = OldestXmin;
	*multi_cutoff = GetOldestMultiXactId();
}

/*
 * nvm_relation_size returns the size of the main fork in virtual blocks of
 * version numbers; the other forks do not exist.
 */
uint64
nvm_relation_size(Relation rel, ForkNumber forkNumber)
{
	NvmTable	table;

	if (forkNumber != MAIN_FORKNUM && forkNumber != InvalidForkNumber)
		return 0;
	table = nvm_relation_table_for_size(rel);
	return (uint64) nvm_versions_to_blocks(nvm_table_version_limit(&table)) * BLCKSZ;
}

/*
 * nvm_relation_estimate_size estimates the planner's pages and rows.  The
 * pages are those the table's versions would fill as heap tuples (from the
 * column widths, as heap estimates a table never analyzed), not the
 * virtual blocks of version numbers: a virtual block holds up to 291
 * versions whatever their width, so counting virtual blocks would make
 * sequential scans look several times cheaper than on heap and turn plans
 * that are right for heap into seq scans.  Like heap, a table never
 * vacuumed or analyzed counts at least 10 pages, and its rows come from
 * the width density; otherwise the live-row density that the last ANALYZE
 * (or VACUUM, CREATE INDEX) measured per virtual block is scaled to the
 * current number of virtual blocks, bounded by the records ever created.
 */
void
nvm_relation_estimate_size(Relation rel, int32 *attr_widths,
						   BlockNumber *pages, double *tuples,
						   double *allvisfrac)
{
	NvmTable	table = nvm_relation_table_for_size(rel);
	uint64		versions = nvm_table_version_limit(&table) - 1;
	BlockNumber curblocks = nvm_versions_to_blocks(versions + 1);
	double		records = (double) (nvm_table_record_limit(&table) - 1);
	BlockNumber relpages = (BlockNumber) rel->rd_rel->relpages;
	double		reltuples = (double) rel->rd_rel->reltuples;
	BlockNumber relallvisible = (BlockNumber) rel->rd_rel->relallvisible;
	int32		tuple_width;
	double		width_density;
	BlockNumber curpages;

	tuple_width = nvm_relation_data_width(rel, attr_widths) + NVM_HEAP_OVERHEAD_BYTES_PER_TUPLE;
	/* integer division, as in table_block_relation_estimate_size */
	width_density = Max(NVM_HEAP_USABLE_BYTES_PER_PAGE / tuple_width, 1);
	curpages = (BlockNumber) ceil((double) versions / width_density);
	if (curpages < 10 && reltuples < 0 && !rel->rd_rel->relhassubclass)
		curpages = 10;

	*pages = curpages;
	*allvisfrac = 0;
	if (curpages == 0)
	{
		*tuples = 0;
		return;
	}
	if (reltuples >= 0 && relpages > 0)
		*tuples = Min(rint(reltuples / relpages * curblocks), records);
	else
		*tuples = rint(width_density * curpages);
	if (relallvisible > 0 && relpages > 0)
		*allvisfrac = Min((double) relallvisible / relpages, 1.0);
}

/*
 * nvm_storage_cover_version keeps the main-fork file as long as the virtual
 * blocks nvm_relation_size reports, so that pg_relation_size(), and
 * whatever else measures the file, agrees with the size the planner and
 * VACUUM see: when version number version_no is the first of a new virtual
 * block, the file is extended with a zero page up to that block (any blocks
 * skipped become a hole).  So it costs one 8 kB write per 291 new version
 * numbers.  The pages are never read.  The extension is neither WAL-logged
 * nor fsynced: after an operating-system crash the file may be shorter,
 * which changes only what pg_relation_size() shows until the next block.
 */
void
nvm_storage_cover_version(Relation rel, uint64 version_no)
{
	if ((version_no - 1) % NVM_TUPLES_PER_BLOCK != 0)
		return;
	LockRelationForExtension(rel, ExclusiveLock);
	extend_main_fork(RelationGetSmgr(rel),
					 (BlockNumber) ((version_no - 1) / NVM_TUPLES_PER_BLOCK));
	UnlockRelationForExtension(rel, ExclusiveLock);
}
