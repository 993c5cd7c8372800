/*-------------------------------------------------------------------------
 *
 * nvm_planner.c
 *	  Planner hooks that keep nvm tables out of parallel plans.
 *
 * An nvm scan reads the version chains with its backend's MCSI vector and
 * sees its own transaction's writes through its nvm txid; neither exists in
 * a parallel worker, and PostgreSQL offers no way to ship them there.  So
 * nvm tables are never scanned by parallel workers:
 *	 - get_relation_info_hook sets the relation's parallel_workers to 0,
 *	   which rules out partial (Parallel Seq/Index) scans and parallel
 *	   CREATE INDEX (plan_create_index_workers goes through the same hook);
 *	 - set_rel_pathlist_hook marks the relation and its paths parallel
 *	   unsafe, so no join or subquery puts an nvm scan under a Gather.
 * nvm_xact_check_access refuses any access from a parallel worker that
 * slips through anyway (a PARALLEL SAFE function that reads an nvm table).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "nodes/pathnodes.h"
#include "optimizer/paths.h"
#include "optimizer/plancat.h"
#include "utils/rel.h"

#include "nvmam.h"

static get_relation_info_hook_type prev_get_relation_info_hook = NULL;
static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

static void nvm_get_relation_info(PlannerInfo *root, Oid relationObjectId,
								  bool inhparent, RelOptInfo *rel);
static void nvm_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel,
								 Index rti, RangeTblEntry *rte);

/*
 * nvm_planner_init installs the hooks; called from _PG_init.
 */
void
nvm_planner_init(void)
{
	prev_get_relation_info_hook = get_relation_info_hook;
	get_relation_info_hook = nvm_get_relation_info;
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = nvm_set_rel_pathlist;
}

/*
 * nvm_relid_is_nvm says whether the relation relid (already locked by the
 * planner) uses the nvm access method.
 */
static bool
nvm_relid_is_nvm(Oid relid)
{
	Relation	rel = table_open(relid, NoLock);
	bool		result = (rel->rd_tableam == nvm_table_am_routine());

	table_close(rel, NoLock);
	return result;
}

/*
 * nvm_get_relation_info gives nvm tables no parallel workers.
 */
static void
nvm_get_relation_info(PlannerInfo *root, Oid relationObjectId,
					  bool inhparent, RelOptInfo *rel)
{
	if (prev_get_relation_info_hook)
		prev_get_relation_info_hook(root, relationObjectId, inhparent, rel);

	if (nvm_relid_is_nvm(relationObjectId))
		rel->rel_parallel_workers = 0;
}

/*
 * nvm_set_rel_pathlist makes an nvm relation and its paths parallel unsafe
 * before gather paths and joins are built on them.
 */
static void
nvm_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
					 RangeTblEntry *rte)
{
	ListCell   *lc;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);

	if (!rel->consider_parallel || rte->rtekind != RTE_RELATION ||
		rte->relkind == RELKIND_PARTITIONED_TABLE ||
		!nvm_relid_is_nvm(rte->relid))
		return;

	rel->consider_parallel = false;
	rel->partial_pathlist = NIL;
	foreach(lc, rel->pathlist)
		((Path *) lfirst(lc))->parallel_safe = false;
}
