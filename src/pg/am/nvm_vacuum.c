/*-------------------------------------------------------------------------
 *
 * nvm_vacuum.c
 *	  VACUUM of nvm tables: the PostgreSQL side of the core's VACUUM
 *	  (vacuum.h), that is the removal of index entries, the WAL they need,
 *	  statistics and progress.
 *
 * Updates already prune their own rows (nvm.prune_on_update); VACUUM
 * collects the rest.  The core's nvm_vacuum_table runs the steps in their
 * order, which vacuum.h states and explains: the horizon, a scan that
 * finishes earlier retirements, prunes every chain and finds dead records,
 * the dead numbers, their index entries removed, that removal made durable,
 * numbers given back and dead records retired, then finished where a new
 * horizon allows.  This file is called back for what needs PostgreSQL: the
 * horizon retried with interrupts (nvm_compute_horizon), progress and
 * interrupts during the long steps, row-lock words whose lockers have all
 * ended cleared after the scan (nvm_rowlock.c), the indexes' bulk delete and
 * cleanup, the WAL flush before numbers are given back, and memory of the
 * statement's context (so an error or a cancel leaves nothing behind).
 * No step blocks readers or writers: pruning takes a per-chain lock that
 * only other collectors take.  pg_stat_progress_vacuum shows the phases
 * (heap blocks are groups of 291 record numbers), VACUUM VERBOSE reports
 * what was done, and the table's statistics are updated so that
 * autovacuum, which counts updated and deleted rows as dead, knows when to
 * come back.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/multixact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "commands/dbcommands.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/procarray.h"
#include "utils/backend_progress.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gc.h"
#include "pool.h"
#include "vacuum.h"

#include "am/nvm_am.h"
#include "claim/nvm_binding.h"
#include "redo/nvm_redo.h"
#include "row/nvm_tid.h"
#include "space/nvm_relation.h"
#include "wait/nvm_rowlock.h"

/* Dead version numbers, ascending, for the bulk-delete callback. */
typedef struct NvmDeadNumbers
{
	const uint64 *numbers;
	uint64		count;
} NvmDeadNumbers;

/* What VACUUM's hooks (vacuum.h) work with. */
typedef struct NvmVacuumState
{
	Relation	rel;
	NvmTable   *table;
	BufferAccessStrategy bstrategy;
	int			elevel;			/* of VERBOSE's messages */
	bool		has_indexes;
	BlockNumber total_blocks;	/* of the scan, from its start */
	uint64		locks_cleared;	/* row-lock words cleared after the scan */
} NvmVacuumState;

/* The bulk-delete callback: does the entry name a dead number? */
static bool
nvm_vacuum_number_is_dead(ItemPointer itemptr, void *state)
{
	NvmDeadNumbers *d = (NvmDeadNumbers *) state;
	uint64		n = nvm_tid_to_version(itemptr);
	uint64		lo = 0,
				hi = d->count;

	while (lo < hi)
	{
		uint64		mid = lo + (hi - lo) / 2;

		if (d->numbers[mid] == n)
			return true;
		if (d->numbers[mid] < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/*
 * nvm_compute_horizon computes the collection horizon, retrying (1 ms apart,
 * up to max_attempts times) while a pin is being taken by a backend that is
 * descheduled in the middle of it; false if it never could.
 */
bool
nvm_compute_horizon(NvmHorizon *h, int max_attempts)
{
	for (int attempt = 0; attempt < max_attempts; attempt++)
	{
		if (nvm_gc_horizon(h))
			return true;
		CHECK_FOR_INTERRUPTS();
		pg_usleep(1000L);
	}
	return false;
}

/*
 * vacuum_indexes runs every index's bulk delete with the dead numbers (if
 * any) and its cleanup, as lazy vacuum does.
 */
static void
vacuum_indexes(Relation rel, NvmDeadNumbers *dead, double live_rows, int elevel,
			   BufferAccessStrategy bstrategy)
{
	Relation   *indrels;
	int			nindexes;

	vac_open_indexes(rel, RowExclusiveLock, &nindexes, &indrels);
	for (int i = 0; i < nindexes; i++)
	{
		IndexVacuumInfo ivinfo;
		IndexBulkDeleteResult *istat = NULL;

		memset(&ivinfo, 0, sizeof(ivinfo));
		ivinfo.index = indrels[i];
		ivinfo.analyze_only = false;
		ivinfo.report_progress = false;
		ivinfo.estimated_count = true;
		ivinfo.message_level = elevel;
		ivinfo.num_heap_tuples = live_rows;
		ivinfo.strategy = bstrategy;

		if (dead->count > 0)
			istat = index_bulk_delete(&ivinfo, istat, nvm_vacuum_number_is_dead, dead);
		istat = index_vacuum_cleanup(&ivinfo, istat);
		if (istat != NULL)
		{
			if (!istat->estimated_count)
				NVM_VAC_UPDATE_RELSTATS(indrels[i], istat->num_pages, istat->num_index_tuples,
										0, 0, false, InvalidTransactionId, InvalidMultiXactId);
			ereport(elevel,
					(errmsg("index \"%s\" now contains %.0f row versions in %u pages",
							RelationGetRelationName(indrels[i]),
							istat->num_index_tuples, istat->num_pages),
					 errdetail("%.0f index row versions were removed.",
							   istat->tuples_removed)));
			pfree(istat);
		}
	}
	vac_close_indexes(nindexes, indrels, NoLock);
}

/* The horizon hook: nvm_compute_horizon, retried for up to 100 ms. */
static bool
vacuum_horizon(void *arg, NvmHorizon *h)
{
	return nvm_compute_horizon(h, 100);
}

/*
 * The progress hook: interrupts are checked every block of records or
 * numbers; the scan's phase and totals are reported at its start, the
 * blocks scanned as it goes.
 */
static void
vacuum_progress(void *arg, NvmVacuumStep step, uint64 done, uint64 total)
{
	NvmVacuumState *st = (NvmVacuumState *) arg;

	CHECK_FOR_INTERRUPTS();
	if (step != NVM_VACUUM_SCAN)
		return;
	if (done == 0)
	{
		const int	index[] = {PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_TOTAL_HEAP_BLKS,
		NVM_PROGRESS_VACUUM_MAX_DEAD};
		int64		val[3];

		st->total_blocks = nvm_versions_to_blocks(total + 1);
		val[0] = PROGRESS_VACUUM_PHASE_SCAN_HEAP;
		val[1] = st->total_blocks;
		val[2] = NVM_PROGRESS_VACUUM_MAX_DEAD_VALUE(nvm_table_version_limit(st->table));
		pgstat_progress_update_multi_param(3, index, val);
	}
	pgstat_progress_update_param(PROGRESS_VACUUM_HEAP_BLKS_SCANNED,
								 done == total ? (int64) st->total_blocks :
								 (int64) (done / NVM_TUPLES_PER_BLOCK));
}

/* The hook after the scan: row-lock words whose lockers have ended (nvm_rowlock.c, "Wraparound"). */
static void
vacuum_scanned(void *arg, uint64 nrec)
{
	NvmVacuumState *st = (NvmVacuumState *) arg;

	st->locks_cleared = nvm_rowlock_vacuum(st->table, nrec);
}

/* The hook that removes the index entries of the dead numbers. */
static void
vacuum_remove_index_entries(void *arg, const uint64 *numbers, uint64 count, uint64 live_rows)
{
	NvmVacuumState *st = (NvmVacuumState *) arg;
	NvmDeadNumbers dead = {numbers, count};

	pgstat_progress_update_param(NVM_PROGRESS_VACUUM_NUM_DEAD, (int64) count);
	if (!st->has_indexes)
		return;
	/* standbys whose queries may still see these runs wait first (nvm_redo.c) */
	if (st->rel->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT)
	{
		NvmTableKey key;

		nvm_relation_key(st->rel, &st->rel->rd_locator, st->rel->rd_rel->relpersistence, &key);
		nvm_redo_log_conflict(&key, numbers, count);
	}
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_VACUUM_INDEX);
	vacuum_indexes(st->rel, &dead, (double) live_rows, st->elevel, st->bstrategy);
	pgstat_progress_update_param(PROGRESS_VACUUM_NUM_INDEX_VACUUMS, 1);
}

/*
 * The hook before numbers are given back: no index entry names them any
 * more, and the WAL that says so is flushed first, since the pool is durable
 * at once (vacuum.h, step 5).  The pool records that it now depends on that
 * WAL (nvm_binding.c).
 */
static void
vacuum_before_give_back(void *arg)
{
	if (XactLastRecEnd != InvalidXLogRecPtr)
		XLogFlush(XactLastRecEnd);
	nvm_binding_note_flushed();
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_VACUUM_HEAP);
}

/* The memory hooks: VACUUM's current memory context, which an error resets. */
static void *
vacuum_alloc(void *arg, size_t size)
{
	return MemoryContextAllocHuge(CurrentMemoryContext, size);
}

static void
vacuum_free(void *arg, void *p)
{
	pfree(p);
}

/*
 * nvm_relation_vacuum collects what no snapshot can see any more in rel
 * (see the file header), and updates the table's statistics.
 */
void
nvm_relation_vacuum(Relation rel, struct VacuumParams *params,
					BufferAccessStrategy bstrategy)
{
	/* for the statistics of 18 on */
	TimestampTz starttime pg_attribute_unused() = GetCurrentTimestamp();
	NvmTable	table = nvm_relation_table(rel);
	bool		verbose = (params->options & VACOPT_VERBOSE) != 0;
	NvmVacuumState st = {
		.rel = rel,
		.table = &table,
		.bstrategy = bstrategy,
		.elevel = verbose ? INFO : DEBUG2,
		.has_indexes = RelationGetForm(rel)->relhasindex,
	};
	NvmVacuumHooks hooks = {
		.arg = &st,
		.horizon = vacuum_horizon,
		.progress = vacuum_progress,
		.tick_every = NVM_TUPLES_PER_BLOCK,
		.scanned = vacuum_scanned,
		.remove_index_entries = vacuum_remove_index_entries,
		.before_give_back = vacuum_before_give_back,
		.alloc = vacuum_alloc,
		.free = vacuum_free,
	};
	NvmVacuumResult res;
	double		live_rows;

	pgstat_progress_start_command(PROGRESS_COMMAND_VACUUM, RelationGetRelid(rel));
	ereport(st.elevel,
			(errmsg("vacuuming \"%s.%s.%s\"",
					get_database_name(MyDatabaseId),
					get_namespace_name(RelationGetNamespace(rel)),
					RelationGetRelationName(rel))));

	if (!nvm_vacuum_table(&table, &hooks, &res))
	{
		ereport(st.elevel,
				(errmsg("skipping nvm table \"%s\": a snapshot being taken did not finish",
						RelationGetRelationName(rel))));
		pgstat_progress_end_command();
		return;
	}
	live_rows = (double) res.live_rows;

	/* statistics: what autovacuum and the planner read */
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_FINAL_CLEANUP);
	/*
	 * Every row left is all-visible unless removed rows still wait for older
	 * snapshots: relallvisible says so to the planner, which then costs
	 * index-only scans as on a vacuumed heap table.  (nvm has no visibility
	 * map: an index-only scan still reads every row, at the cost of an index
	 * scan, never more.)
	 */
	{
		BlockNumber pages = nvm_versions_to_blocks(nvm_table_version_limit(&table));

		/*
		 * relfrozenxid and relminmxid advance to the horizon: nvm rows hold
		 * no xid or multixact older than it that PostgreSQL would look up,
		 * so anti-wraparound vacuums of a table that has them (after a
		 * rewrite) end as soon as they are made.
		 */
		BlockNumber all_visible = res.retired_waiting == 0 ? pages : 0;

		/* a version holds no xid to freeze: the visible pages are frozen */
		NVM_VAC_UPDATE_RELSTATS(rel, pages, live_rows, all_visible, all_visible,
								st.has_indexes, GetOldestNonRemovableTransactionId(rel),
								GetOldestMultiXactId());
	}
	NVM_REPORT_VACUUM(RelationGetRelid(rel), rel->rd_rel->relisshared,
					  (PgStat_Counter) live_rows, 0, starttime);

	ereport(st.elevel,
			(errmsg("finished vacuuming \"%s.%s.%s\"",
					get_database_name(MyDatabaseId),
					get_namespace_name(RelationGetNamespace(rel)),
					RelationGetRelationName(rel)),
			 errdetail("versions removed: %llu (%llu bytes); dead rows removed: %llu, finished: %llu, "
					   "waiting for older snapshots: %llu; index roots removed: %llu; "
					   "version numbers given back: %llu; row locks cleared: %llu; live rows: %.0f",
					   (unsigned long long) res.counts.versions_freed,
					   (unsigned long long) res.counts.bytes_freed,
					   (unsigned long long) res.counts.records_retired,
					   (unsigned long long) res.counts.records_freed,
					   (unsigned long long) res.retired_waiting,
					   (unsigned long long) res.dead_numbers,
					   (unsigned long long) res.counts.numbers_freed,
					   (unsigned long long) st.locks_cleared,
					   live_rows)));

	pgstat_progress_end_command();
}
