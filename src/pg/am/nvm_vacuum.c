/*-------------------------------------------------------------------------
 *
 * nvm_vacuum.c
 *	  VACUUM of nvm tables: garbage collection of old versions and deleted
 *	  records, removal of their index entries, statistics and progress.
 *
 * Updates already prune their own rows (nvm.prune_on_update); VACUUM
 * collects the rest (gc.h has the design and persist orders):
 *	 1. scan: every chain is pruned below its newest all-visible version;
 *		records whose newest version is an all-visible tombstone are dead;
 *		records retired by an earlier VACUUM are finished when no pin is
 *		older than their retirement; row-lock words whose lockers have all
 *		ended are cleared (nvm_rowlock.c);
 *	 2. dead numbers: index roots (redirects) whose index run is gone, and
 *		those of dead records;
 *	 3. the indexes' bulk delete removes every entry naming a dead number;
 *	 4. the WAL of the bulk deletes is flushed; then dead records are
 *		retired and dead numbers given back; retired records are finished at
 *		once if no older pin remains, else by the next VACUUM.
 * No pass blocks readers or writers: pruning takes a per-chain lock that
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

#include "am/nvm_am.h"
#include "recovery/nvm_binding.h"
#include "row/nvm_tid.h"
#include "space/nvm_relation.h"
#include "wait/nvm_rowlock.h"

/* Dead version numbers, ascending, for the bulk-delete callback. */
typedef struct NvmDeadNumbers
{
	uint64	   *numbers;
	uint64		count;
	uint64		capacity;
} NvmDeadNumbers;

static void
dead_numbers_add(NvmDeadNumbers *d, uint64 n)
{
	if (d->count == d->capacity)
	{
		d->capacity = d->capacity ? d->capacity * 2 : 1024;
		if (d->numbers == NULL)
			d->numbers = MemoryContextAllocHuge(CurrentMemoryContext, d->capacity * sizeof(uint64));
		else
			d->numbers = repalloc_huge(d->numbers, d->capacity * sizeof(uint64));
	}
	d->numbers[d->count++] = n;
}

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
				vac_update_relstats(indrels[i], istat->num_pages, istat->num_index_tuples,
									0, false, InvalidTransactionId, InvalidMultiXactId,
									NULL, NULL, false);
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

/*
 * nvm_relation_vacuum collects what no snapshot can see any more in rel
 * (see the file header).
 */
void
nvm_relation_vacuum(Relation rel, struct VacuumParams *params,
					BufferAccessStrategy bstrategy)
{
	NvmTable	table = nvm_relation_table(rel);
	NvmHorizon *h = palloc(sizeof(NvmHorizon));
	NvmGcCounts counts;
	NvmDeadNumbers dead = {0};
	bool		verbose = (params->options & VACOPT_VERBOSE) != 0;
	int			elevel = verbose ? INFO : DEBUG2;
	uint64		nrec = nvm_table_record_limit(&table);
	uint64		nver = nvm_table_version_limit(&table);
	bool	   *dead_record;
	uint64		ndead_records = 0;
	uint64		retired_waiting = 0;
	uint64		locks_cleared;
	double		live_rows = 0;
	BlockNumber total_blocks = nvm_versions_to_blocks(nrec);
	bool		has_indexes = RelationGetForm(rel)->relhasindex;

	memset(&counts, 0, sizeof(counts));
	pgstat_progress_start_command(PROGRESS_COMMAND_VACUUM, RelationGetRelid(rel));
	ereport(elevel,
			(errmsg("vacuuming \"%s.%s.%s\"",
					get_database_name(MyDatabaseId),
					get_namespace_name(RelationGetNamespace(rel)),
					RelationGetRelationName(rel))));

	if (!nvm_compute_horizon(h, 100))
	{
		ereport(elevel,
				(errmsg("skipping nvm table \"%s\": a snapshot being taken did not finish",
						RelationGetRelationName(rel))));
		pgstat_progress_end_command();
		return;
	}

	/* 1. scan */
	{
		const int	index[] = {PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_TOTAL_HEAP_BLKS,
		PROGRESS_VACUUM_MAX_DEAD_TUPLES};
		const int64 val[] = {PROGRESS_VACUUM_PHASE_SCAN_HEAP, total_blocks, (int64) nver};

		pgstat_progress_update_multi_param(3, index, val);
	}
	/*
	 * Numbers given back are reused lowest first, as heap reuses the lowest
	 * free line pointer of a page: so rows rewritten after a VACUUM keep
	 * their relative order in sequential scans, as on heap.  Each chain
	 * gives its numbers back in ascending order, and every loop that gives
	 * numbers back runs from the last record (number) to the first, so that
	 * the lowest numbers end up at the head of the free lists.
	 */
	dead_record = MemoryContextAllocHuge(CurrentMemoryContext, nrec * sizeof(bool));
	memset(dead_record, 0, nrec * sizeof(bool));
	for (uint64 r = nrec - 1; r >= 1; r--)
	{
		NvmVersion *head;

		if ((nrec - r) % NVM_TUPLES_PER_BLOCK == 0)
		{
			CHECK_FOR_INTERRUPTS();
			pgstat_progress_update_param(PROGRESS_VACUUM_HEAP_BLKS_SCANNED,
										 (int64) ((nrec - r) / NVM_TUPLES_PER_BLOCK));
		}
		if (nvm_gc_finish_retired(&table, r, h, &counts))
			continue;
		head = nvm_ptr(nvm_record_head(&table, r));
		if (head == NULL)
			continue;
		(void) nvm_gc_prune_chain(&table, r, h, &counts);
		if (nvm_gc_record_is_dead(&table, r, h))
		{
			dead_record[r] = true;
			ndead_records++;
		}
		else if (!nvm_version_is_tombstone(head))
			live_rows += 1;
	}
	pgstat_progress_update_param(PROGRESS_VACUUM_HEAP_BLKS_SCANNED, total_blocks);
	/* row-lock words whose lockers have ended (see "Wraparound" there) */
	locks_cleared = nvm_rowlock_vacuum(&table, nrec);

	/* 2. dead numbers: redirects whose run is gone (those of dead records included) */
	for (uint64 n = 1; n < nver; n++)
	{
		if (n % 4096 == 0)
			CHECK_FOR_INTERRUPTS();
		if (nvm_gc_number_is_dead_root(&table, n, dead_record, nrec))
			dead_numbers_add(&dead, n);
	}
	pgstat_progress_update_param(PROGRESS_VACUUM_NUM_DEAD_TUPLES, (int64) dead.count);

	/* 3. indexes */
	if (has_indexes)
	{
		pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_VACUUM_INDEX);
		vacuum_indexes(rel, &dead, live_rows, elevel, bstrategy);
		pgstat_progress_update_param(PROGRESS_VACUUM_NUM_INDEX_VACUUMS, 1);
	}

	/*
	 * 4. give back: no index entry names these any more.  Persist order: the
	 * WAL of the bulk deletes is flushed before any number is given back in
	 * the pool, which is durable at once; otherwise a crash could replay the
	 * index to a state whose entries still name numbers already reused.
	 * The pool records that it now depends on that WAL (nvm_binding.c).
	 */
	if (XactLastRecEnd != InvalidXLogRecPtr)
		XLogFlush(XactLastRecEnd);
	nvm_binding_note_flushed();
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_VACUUM_HEAP);
	for (uint64 i = dead.count; i > 0; i--)
		nvm_gc_free_number(&table, dead.numbers[i - 1], &counts);
	for (uint64 r = nrec - 1; r >= 1; r--)
		if (dead_record[r])
			(void) nvm_gc_retire_record(&table, r, h, &counts);
	if (ndead_records > 0 && nvm_compute_horizon(h, 100))
	{
		for (uint64 r = nrec - 1; r >= 1; r--)
		{
			if (!dead_record[r])
				continue;
			if (!nvm_gc_finish_retired(&table, r, h, &counts))
				retired_waiting++;
		}
	}

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
		vac_update_relstats(rel, pages, live_rows, retired_waiting == 0 ? pages : 0,
							has_indexes, GetOldestNonRemovableTransactionId(rel),
							GetOldestMultiXactId(), NULL, NULL, false);
	}
	pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared,
						 (PgStat_Counter) live_rows, 0);

	ereport(elevel,
			(errmsg("finished vacuuming \"%s.%s.%s\"",
					get_database_name(MyDatabaseId),
					get_namespace_name(RelationGetNamespace(rel)),
					RelationGetRelationName(rel)),
			 errdetail("versions removed: %llu (%llu bytes); dead rows removed: %llu, finished: %llu, "
					   "waiting for older snapshots: %llu; index roots removed: %llu; "
					   "version numbers given back: %llu; row locks cleared: %llu; live rows: %.0f",
					   (unsigned long long) counts.versions_freed,
					   (unsigned long long) counts.bytes_freed,
					   (unsigned long long) counts.records_retired,
					   (unsigned long long) counts.records_freed,
					   (unsigned long long) retired_waiting,
					   (unsigned long long) dead.count,
					   (unsigned long long) counts.numbers_freed,
					   (unsigned long long) locks_cleared,
					   live_rows)));

	pfree(dead_record);
	if (dead.numbers)
		pfree(dead.numbers);
	pfree(h);
	pgstat_progress_end_command();
}
