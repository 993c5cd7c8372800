/*-------------------------------------------------------------------------
 *
 * nvm_storage.c
 *	  Storage life cycle of nvm tables (create, truncate, rewrite, vacuum)
 *	  and the sizes the planner and ANALYZE see.
 *
 * Rows live in the pool under the relation's relfilenode, but the main-fork
 * file is created anyway (empty), as heap does, because core code such as
 * pg_relation_size and the smgr layer expects it; a new relfilenode's file
 * is removed by PostgreSQL's pending-delete machinery if the transaction
 * rolls back.
 *
 * Temporary tables are refused (the pool is shared by all backends, and a
 * temporary table's relfilenode is not unique across them).  Unlogged
 * tables are refused too: after a crash PostgreSQL empties an unlogged
 * table's indexes, while its nvm rows would survive, unindexed.
 *
 * A new relfilenode's pool storage is freed if the transaction rolls back,
 * and the relfilenode it replaces (TRUNCATE) when it commits: nvm_drop.c.
 *
 * Sizes: "blocks" are groups of 291 version numbers (nvm_tid.h), so
 * relation_size, ANALYZE's block sampling and TIDs agree.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/multixact.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "catalog/pg_class.h"
#include "catalog/storage.h"
#include "commands/vacuum.h"
#include "storage/smgr.h"
#include "utils/rel.h"

#include "nvm_am.h"
#include "nvm_drop.h"
#include "nvm_relation.h"
#include "nvm_tid.h"

/*
 * nvm_relation_set_new_filenode gives rel a new, empty relfilenode: an
 * empty descriptor in the pool and an empty main-fork file.  No PostgreSQL
 * xids are stored in nvm tables, so anti-wraparound vacuum never needs to
 * visit them.
 */
void
nvm_relation_set_new_filenode(Relation rel, const RelFileNode *newrnode,
							  char persistence, TransactionId *freezeXid,
							  MultiXactId *minmulti)
{
	SMgrRelation srel;

	if (persistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nvm tables cannot be temporary"),
				 errdetail("The nvm pool is shared by all sessions."),
				 errhint("Create temporary tables with USING heap.")));
	if (persistence == RELPERSISTENCE_UNLOGGED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nvm tables cannot be unlogged"),
				 errdetail("After a crash PostgreSQL empties the indexes of unlogged tables, but nvm rows survive."),
				 errhint("Create the table without UNLOGGED: nvm rows are never WAL-logged anyway.")));

	nvm_relation_create_storage(rel, newrnode);
	nvm_drop_schedule(newrnode, false);
	if (newrnode != &rel->rd_node && !RelFileNodeEquals(*newrnode, rel->rd_node))
		nvm_drop_schedule(&rel->rd_node, true);	/* TRUNCATE: the old storage */

	*freezeXid = InvalidTransactionId;
	*minmulti = InvalidMultiXactId;

	srel = RelationCreateStorage(*newrnode, persistence, true);
	smgrclose(srel);
}

/*
 * nvm_relation_nontransactional_truncate empties a table created (or given
 * a new relfilenode) in the current transaction: its descriptor is replaced
 * by an empty one.
 */
void
nvm_relation_nontransactional_truncate(Relation rel)
{
	nvm_relation_create_storage(rel, &rel->rd_node);
	RelationTruncate(rel, 0);
}

/*
 * nvm_relation_copy_data would move the table to another tablespace, which
 * changes its relfilenode; not supported yet.
 */
void
nvm_relation_copy_data(Relation rel, const RelFileNode *newrnode)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot change the tablespace of nvm table \"%s\"",
					RelationGetRelationName(rel)),
			 errdetail("The rows of nvm tables live in the nvm pool, not in a tablespace."),
			 errhint("Move only the table's indexes with ALTER INDEX ... SET TABLESPACE.")));
}

/*
 * nvm_relation_copy_for_cluster would rewrite the table (CLUSTER, VACUUM
 * FULL); not supported: a rewrite would have to keep every version that a
 * running snapshot may still see.
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
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("CLUSTER and VACUUM FULL are not supported on nvm table \"%s\"",
					RelationGetRelationName(OldTable)),
			 errhint("Use plain VACUUM; nvm tables are never rewritten.")));
}

/*
 * nvm_relation_vacuum does nothing yet: old versions are not collected.
 * (Autovacuum calls it, so it must not fail.)
 */
void
nvm_relation_vacuum(Relation rel, struct VacuumParams *params,
					BufferAccessStrategy bstrategy)
{
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
	table = nvm_relation_table(rel);
	return (uint64) nvm_versions_to_blocks(nvm_table_version_limit(&table)) * BLCKSZ;
}

/*
 * nvm_relation_needs_toast_table is always false: nvm rows store every
 * value inline.
 */
bool
nvm_relation_needs_toast_table(Relation rel)
{
	return false;
}

/*
 * nvm_relation_estimate_size estimates the planner's pages (virtual
 * blocks) and rows.  Like heap, it scales the live-row density that the
 * last ANALYZE (or VACUUM, CREATE INDEX) measured to the current number of
 * blocks; without one it takes the number of records ever created.  The
 * records ever created (deleted ones included) bound the estimate.
 */
void
nvm_relation_estimate_size(Relation rel, int32 *attr_widths,
						   BlockNumber *pages, double *tuples,
						   double *allvisfrac)
{
	NvmTable	table = nvm_relation_table(rel);
	BlockNumber curpages = nvm_versions_to_blocks(nvm_table_version_limit(&table));
	double		records = (double) (nvm_table_record_limit(&table) - 1);
	BlockNumber relpages = (BlockNumber) rel->rd_rel->relpages;
	double		reltuples = (double) rel->rd_rel->reltuples;

	*pages = curpages;
	if (relpages > 0 && reltuples >= 0)
		*tuples = Min(rint(reltuples / relpages * curpages), records);
	else
		*tuples = records;
	*allvisfrac = 0;
}
