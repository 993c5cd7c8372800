/*-------------------------------------------------------------------------
 *
 * nvm_relation.c
 *	  Finding the pool storage (NvmTable) of a PostgreSQL relation, and the
 *	  planner's row width, cached per relation.
 *
 * A relation's rows live in a table descriptor in the pool whose key is the
 * relation's RelFileLocator (tablespace, database, relfilenode) with, in the
 * key's pad, the relation's persistence and, for a temporary relation, the
 * backend that owns it (temporary relfilenodes are unique only within a
 * backend, and may equal a permanent relation's).  A new relfilenode
 * (CREATE, TRUNCATE, a rewriting ALTER TABLE, SET TABLESPACE) gets a new
 * descriptor, and rolling back leaves the old relfilenode, and so the old
 * descriptor, in place.  The handle is cached in the relcache entry's
 * rd_amcache, which the relcache frees on every invalidation; the cached
 * key is compared with the relation's on each use, so a changed
 * relfilenode is noticed even before the invalidation arrives.
 *
 * The same cache entry keeps the planner's column widths of the relation
 * (nvm_relation_data_width), read from the statistics again after any
 * invalidation of pg_statistic.
 *
 * As on heap, the rows of another session's temporary table cannot be
 * read or written (its sizes can be).
 *
 * Every access to a table's rows comes through nvm_relation_table, which
 * is where index entries a crash lost are put back (nvm_repair.c) before
 * the table is used, once per backend and relcache entry while the pool's
 * repair list has entries.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/relcache.h"
#include "utils/syscache.h"

#include "indexlog.h"
#include "pool.h"
#include "txn.h"

#include "claim/nvm_binding.h"
#include "claim/nvm_repair.h"
#include "nvm_compat.h"
#include "nvm_routine.h"
#include "nvm_settings.h"
#include "redo/nvm_redo.h"
#include "redo/nvm_redofmt.h"
#include "space/nvm_growth.h"
#include "space/nvm_relation.h"

/*
 * What rd_amcache points to: one chunk (the relcache frees it with one
 * pfree), with the column widths for nvm_relation_data_width.
 */
typedef struct NvmRelCache
{
	NvmTableKey key;
	NvmTable	table;
	int8		repairable;		/* every index is a btree: 1, not: 0, unknown: -1 */
	uint64		repair_checked; /* repair list the table was checked against */
	int32		data_width;		/* nvm_relation_data_width's answer, 0 = not yet */
	uint64		width_generation;	/* stats_generation it was computed in */
	int			natts;			/* entries of attr_widths, after [0] */
	int32		attr_widths[FLEXIBLE_ARRAY_MEMBER]; /* by attribute number */
} NvmRelCache;

/*
 * nvm_check_pool_mapped raises an error when the pool is not mapped, which
 * means the module was not loaded through shared_preload_libraries.
 */
void
nvm_check_pool_mapped(void)
{
	if (nvm_pool_base == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("nvmam must be loaded via shared_preload_libraries"),
				 errhint("Add nvmam to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * nvm_relid_is_nvm says whether relation relid exists and uses the nvm
 * access method, from the catalog caches (no lock is taken).
 */
bool
nvm_relid_is_nvm(Oid relid)
{
	HeapTuple	tuple;
	Oid			relam;
	regproc		amhandler;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		return false;
	relam = ((Form_pg_class) GETSTRUCT(tuple))->relam;
	ReleaseSysCache(tuple);
	if (!OidIsValid(relam))
		return false;

	tuple = SearchSysCache1(AMOID, ObjectIdGetDatum(relam));
	if (!HeapTupleIsValid(tuple))
		return false;
	if (((Form_pg_am) GETSTRUCT(tuple))->amtype != AMTYPE_TABLE)
	{
		ReleaseSysCache(tuple);
		return false;
	}
	amhandler = ((Form_pg_am) GETSTRUCT(tuple))->amhandler;
	ReleaseSysCache(tuple);
	return nvm_routine_is_nvm(GetTableAmRoutine(amhandler));
}

/*
 * nvm_relation_key builds the pool key of relfilenode rnode of rel with
 * the given persistence: the kind goes into the key's pad, with the owning
 * backend for a temporary relation (rel's rd_backend: this backend's, or,
 * for another session's temporary table, its owner's).
 */
void
nvm_relation_key(Relation rel, const RelFileLocator *rnode, char persistence,
				 NvmTableKey *key)
{
	memset(key, 0, sizeof(*key));
	key->spc = rnode->spcOid;
	key->db = rnode->dbOid;
	key->rel = rnode->relNumber;
	switch (persistence)
	{
		case RELPERSISTENCE_TEMP:
			Assert(rel->rd_backend != NVM_INVALID_BACKEND_NUMBER);
			key->pad = NVM_KEY_PAD(NVM_KIND_TEMP, rel->rd_backend);
			break;
		case RELPERSISTENCE_UNLOGGED:
			key->pad = NVM_KEY_PAD(NVM_KIND_UNLOGGED, 0);
			break;
		default:
			key->pad = NVM_KEY_PAD(NVM_KIND_PERMANENT, 0);
			break;
	}
}

static void nvm_relation_check_repair(Relation rel, const NvmTable *table);

static bool
nvm_key_equal(const NvmTableKey *a, const NvmTableKey *b)
{
	return a->spc == b->spc && a->db == b->db && a->rel == b->rel && a->pad == b->pad;
}

/* nvm_cache_table remembers rel's handle in its relcache entry. */
static void
nvm_cache_table(Relation rel, const NvmTableKey *key, NvmTable table)
{
	NvmRelCache *cache = (NvmRelCache *) rel->rd_amcache;
	int			natts = RelationGetNumberOfAttributes(rel);

	if (cache != NULL && cache->natts != natts)
	{
		pfree(cache);
		cache = rel->rd_amcache = NULL;
	}
	if (cache == NULL)
	{
		cache = MemoryContextAlloc(CacheMemoryContext,
								   offsetof(NvmRelCache, attr_widths) +
								   (natts + 1) * sizeof(int32));
		cache->natts = natts;
		rel->rd_amcache = cache;
	}
	cache->key = *key;
	cache->table = table;
	cache->data_width = 0;
	cache->repairable = -1;
	cache->repair_checked = 0;
}

/*
 * nvm_relation_table_for_size returns the pool handle of rel's current
 * relfilenode, for reading its sizes only (also of another session's
 * temporary table); a relation without a descriptor in the pool is
 * reported as corrupt (the pool file was replaced or lost).
 */
NvmTable
nvm_relation_table_for_size(Relation rel)
{
	NvmRelCache *cache = (NvmRelCache *) rel->rd_amcache;
	NvmTableKey key;
	NvmTable	table;

	nvm_relation_key(rel, &rel->rd_locator, rel->rd_rel->relpersistence, &key);
	if (cache != NULL && nvm_key_equal(&cache->key, &key))
		return cache->table;

	nvm_check_pool_mapped();
	nvm_binding_settle(rel);
	if (!nvm_table_open(&key, &table))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("nvm table \"%s\" has no storage in the pool",
						RelationGetRelationName(rel)),
				 errdetail("No table with relfilenode %u/%u/%u is in pool \"%s\".",
						   rel->rd_locator.spcOid, rel->rd_locator.dbOid,
						   rel->rd_locator.relNumber, nvm_pool_path_resolved),
				 errhint("A database copied from files (CREATE DATABASE ... TEMPLATE) carries no nvm rows, and neither does a new, empty pool that replaced a lost one. Copy nvm tables with pg_dump, or drop the table (TRUNCATE gives it new, empty storage).")));
	nvm_cache_table(rel, &key, table);
	return table;
}

/*
 * nvm_relation_table returns the pool handle of rel's current relfilenode
 * for reading or writing its rows; another session's temporary table is
 * refused, as heap refuses it.
 */
NvmTable
nvm_relation_table(Relation rel)
{
	NvmTable	table;

	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary tables of other sessions")));
	table = nvm_relation_table_for_size(rel);
	if (unlikely(nvm_repair_list() != NULL))
		nvm_relation_check_repair(rel, &table);
	return table;
}

/*
 * nvm_relation_check_repair puts back rel's index entries that a crash lost
 * (nvm_repair.c), the first time this backend uses rel's storage while
 * the repair list has entries; the relcache entry remembers the list it
 * was checked against.
 */
static void
nvm_relation_check_repair(Relation rel, const NvmTable *table)
{
	NvmRelCache *cache = (NvmRelCache *) rel->rd_amcache;
	uint64		list = nvm_pool_root()->index_repair_off;

	if (cache != NULL && cache->repair_checked == list)
		return;
	nvm_repair_table(rel, table);
	/* the repair may have run invalidations: look the cache up again */
	cache = (NvmRelCache *) rel->rd_amcache;
	if (cache != NULL && cache->table.desc == table->desc)
		cache->repair_checked = list;
}

/*
 * nvm_relation_indexes_repairable says whether every index of rel is a
 * btree, so that index entries lost in a crash can be checked for and put
 * back (nvm_repair.c); cached in the relcache entry, which every index
 * creation or drop invalidates.
 */
bool
nvm_relation_indexes_repairable(Relation rel)
{
	NvmRelCache *cache;
	List	   *indexoids;
	ListCell   *lc;
	bool		repairable = true;

	(void) nvm_relation_table_for_size(rel);
	cache = (NvmRelCache *) rel->rd_amcache;
	if (cache->repairable >= 0)
		return cache->repairable != 0;
	indexoids = RelationGetIndexList(rel);
	foreach(lc, indexoids)
	{
		HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(lfirst_oid(lc)));

		if (!HeapTupleIsValid(tuple))
			continue;
		if (((Form_pg_class) GETSTRUCT(tuple))->relam != BTREE_AM_OID)
			repairable = false;
		ReleaseSysCache(tuple);
	}
	list_free(indexoids);
	cache = (NvmRelCache *) rel->rd_amcache;
	if (cache != NULL)
		cache->repairable = repairable ? 1 : 0;
	return repairable;
}

/*
 * nvm_relation_create_storage makes a new, empty descriptor for relfilenode
 * rnode of rel with the given persistence (it replaces any stale
 * descriptor with that key: relfilenodes are reused only after their
 * relation is gone) and caches it for rel if rnode is rel's current
 * relfilenode.  create_txid is the creating transaction's nvm txid (0 if
 * it has none).
 */
NvmTable
nvm_relation_create_storage(Relation rel, const RelFileLocator *rnode, char persistence,
							uint64 create_txid)
{
	NvmTableKey key;
	NvmTable	table;

	nvm_check_pool_mapped();
	nvm_binding_settle(rel);
	nvm_relation_key(rel, rnode, persistence, &key);
	if (!nvm_table_create(&key, create_txid, &table))
		nvm_report_storage_full(rel);
	nvm_redo_log_storage(XLNVM_STORAGE_CREATE, &key, NULL);
	if (RelFileLocatorEquals(*rnode, rel->rd_locator) &&
		persistence == rel->rd_rel->relpersistence)
		nvm_cache_table(rel, &key, table);
	return table;
}

/*
 * nvm_report_storage_full raises the error for new storage of rel that
 * found no room in the pool (which could not grow) or no free entry in its
 * table directory.
 */
void
nvm_report_storage_full(Relation rel)
{
	size_t		entries = nvm_table_dir_count();

	if (nvm_table_dir_used() >= entries)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("could not create storage for nvm table \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("The table directory of nvm pool \"%s\" is full: it holds the storage of at most %zu nvm tables.",
						   nvm_pool_path_resolved, entries),
				 errhint("Drop nvm tables that are no longer needed.  Each nvm table, partition and materialized view takes an entry, and a TRUNCATE or a rewrite takes a second one until its transaction ends.")));
	ereport(ERROR,
			(errcode(ERRCODE_DISK_FULL),
			 errmsg("could not create storage for nvm table \"%s\"",
					RelationGetRelationName(rel)),
			 nvm_growth_errdetail(psprintf("The nvm pool \"%s\" is full.", nvm_pool_path_resolved))));
}

/*
 * nvm_report_pool_full raises the error for a write that found the pool
 * full.
 */
void
nvm_report_pool_full(Relation rel)
{
	ereport(ERROR,
			(errcode(ERRCODE_DISK_FULL),
			 errmsg("nvm pool \"%s\" is full", nvm_pool_path_resolved),
			 nvm_growth_errdetail(psprintf("A write to table \"%s\" found no free space in the pool.",
										   RelationGetRelationName(rel)))));
}

/*
 * nvm_report_write_start_failed raises the error for a transaction whose
 * first nvm write could not start: the pool had no room for its clock
 * slot's status ring, or the mode's status store had none (N2DB: the commit
 * log is a full ring ahead of the oldest running transaction).
 */
void
nvm_report_write_start_failed(void)
{
	if (nvm_txn_begin_failure() == NVM_BEGIN_STORE_FULL)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("could not start an nvm transaction"),
				 errdetail_internal("%s", nvm_txn_begin_failure_detail()),
				 errhint("End long-running transactions that use nvm tables.")));
	ereport(ERROR,
			(errcode(ERRCODE_DISK_FULL),
			 errmsg("nvm pool \"%s\" is full", nvm_pool_path_resolved),
			 nvm_growth_errdetail("A transaction found no free space for the status ring of its clock slot.")));
}

/*
 * Column statistics change with every ANALYZE, which does not always
 * invalidate the relation's cache entry (pg_class is rewritten only if its
 * counts change): any invalidation of pg_statistic makes every cached
 * width stale.
 */
static uint64 stats_generation = 1;
static bool stats_callback_registered = false;

static void
nvm_stats_invalidated(Datum arg, int cacheid, uint32 hashvalue)
{
	stats_generation++;
}

/*
 * nvm_relation_data_width returns the planner's estimate of the width of
 * rel's rows and fills attr_widths (if not NULL) with its columns' widths,
 * as get_rel_data_width does from the column statistics, but reads the
 * statistics again only when they may have changed (a pg_statistic
 * invalidation since, or a new relcache entry).  Heap's size estimate
 * reads the widths only for a table never analyzed; nvm's needs them at
 * every planning, where reading them cost more than the rest of the
 * estimate.
 */
int32
nvm_relation_data_width(Relation rel, int32 *attr_widths)
{
	NvmRelCache *cache;

	if (!stats_callback_registered)
	{
		CacheRegisterSyscacheCallback(STATRELATTINH, nvm_stats_invalidated, (Datum) 0);
		stats_callback_registered = true;
	}
	(void) nvm_relation_table_for_size(rel);	/* makes rd_amcache */
	cache = (NvmRelCache *) rel->rd_amcache;
	if (cache->data_width == 0 || cache->width_generation != stats_generation)
	{
		memset(cache->attr_widths, 0, (cache->natts + 1) * sizeof(int32));
		cache->data_width = Max(get_rel_data_width(rel, cache->attr_widths), 1);
		cache->width_generation = stats_generation;
	}
	if (attr_widths != NULL)
	{
		for (int i = 1; i <= cache->natts; i++)
		{
			if (attr_widths[i] <= 0)
				attr_widths[i] = cache->attr_widths[i];
		}
	}
	return cache->data_width;
}
