/*-------------------------------------------------------------------------
 *
 * nvm_planner.c
 *	  Planner hook that keeps index builds on nvm tables serial.
 *
 * Queries read nvm tables in parallel workers with their leader's view
 * (nvm_parallel.c), but an index build's table scan does not split its
 * work among participants (nvm_index.c), so get_relation_info_hook gives
 * nvm tables no parallel workers when plan_create_index_workers asks (its
 * query has no join tree, unlike every real query).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "nodes/pathnodes.h"
#include "optimizer/plancat.h"
#include "utils/rel.h"

#include "am/nvm_planner.h"
#include "nvm_routine.h"

static get_relation_info_hook_type prev_get_relation_info_hook = NULL;

static void nvm_get_relation_info(PlannerInfo *root, Oid relationObjectId,
								  bool inhparent, RelOptInfo *rel);

/*
 * nvm_planner_init installs the hook; called from _PG_init.
 */
void
nvm_planner_init(void)
{
	prev_get_relation_info_hook = get_relation_info_hook;
	get_relation_info_hook = nvm_get_relation_info;
}

/*
 * planned_rel_is_nvm says whether the relation relid (already locked by the
 * planner) uses the nvm access method.
 */
static bool
planned_rel_is_nvm(Oid relid)
{
	Relation	rel = table_open(relid, NoLock);
	bool		result = nvm_routine_is_nvm(rel->rd_tableam);

	table_close(rel, NoLock);
	return result;
}

/*
 * nvm_get_relation_info gives nvm tables no parallel workers for index
 * builds.
 */
static void
nvm_get_relation_info(PlannerInfo *root, Oid relationObjectId,
					  bool inhparent, RelOptInfo *rel)
{
	if (prev_get_relation_info_hook)
		prev_get_relation_info_hook(root, relationObjectId, inhparent, rel);

	if (root->parse->jointree == NULL && planned_rel_is_nvm(relationObjectId))
		rel->rel_parallel_workers = 0;
}
