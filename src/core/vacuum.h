/*
 * vacuum.h
 *	  VACUUM of one table: the steps of gc.h in the one order that is safe,
 *	  with what only the caller can do (the PG layer: indexes, WAL,
 *	  progress, interrupts) called back.
 *
 * nvm_vacuum_table runs, in this order:
 *	 1. The horizon (hooks->horizon).  None: nothing is done, false.
 *	 2. Scan, from the last record to the first: a record an earlier VACUUM
 *		retired is finished if no pin is older than its retirement; every
 *		other chain is pruned below its newest all-visible version; records
 *		whose newest version is an all-visible tombstone, or whose every
 *		version was rolled back, are dead; the others whose head is not a
 *		tombstone are counted as live rows.  Then hooks->scanned (the PG
 *		layer clears row-lock words whose lockers have ended).
 *	 3. Dead numbers, ascending: index roots whose index run is gone
 *		(redirects, and the roots of dead records: their redirects and
 *		rolled-back roots).  The scan comes first because its prunes turn
 *		index roots into redirects, and it finds the dead records.
 *	 4. hooks->remove_index_entries: every index entry naming a dead number
 *		is removed (the PG layer: the indexes' bulk delete).
 *	 5. hooks->before_give_back: the removal is made durable (the PG layer
 *		flushes the WAL of the bulk deletes and notes in the pool that it
 *		depends on it).  The pool is durable at once, so without this a
 *		crash could replay an index to a state whose entries name numbers
 *		that were given back and reused for other rows.
 *	 6. Dead numbers given back, then dead records retired (gc.h), both
 *		from the highest number to the lowest.  A record is retired only
 *		once no index entry names a version of it: its numbers go back when
 *		it is finished.
 *	 7. A new horizon; dead records retired in 6 are finished at once if no
 *		pin is older than their retirement, else the next VACUUM finishes
 *		them (in 2).
 * Numbers given back are reused lowest first, as heap reuses the lowest free
 * line pointer of a page, so that rows rewritten after a VACUUM keep their
 * relative order in sequential scans: every loop that gives numbers back
 * runs from the highest to the lowest, so the lowest end up at the head of
 * the free lists.
 *
 * No step blocks readers or writers: pruning, retiring and the check of a
 * redirect take a chain's pruning lock, which only collectors take.  No lock
 * is held while a hook runs, and the memory of a pass comes from
 * hooks->alloc, so a hook may leave by a long jump (the PG layer's errors and
 * interrupts): what was done is consistent, the rest is left to the next
 * VACUUM.  Persist orders: gc.h (prune, retire, finish) and store.c (the free
 * lists); step 5 is the caller's.
 */
#ifndef NVM_VACUUM_H
#define NVM_VACUUM_H

#include "gc.h"
#include "store.h"

/* The steps that report progress (hooks->progress). */
typedef enum NvmVacuumStep
{
	NVM_VACUUM_SCAN,			/* 2: items are record numbers */
	NVM_VACUUM_DEAD_NUMBERS		/* 3: items are version numbers */
} NvmVacuumStep;

/*
 * What the caller does for VACUUM.  Every member may be NULL (or 0): then
 * the horizon is nvm_gc_horizon's, memory is malloc's, and nothing else is
 * done (the unit tests' tables have no indexes and no external log).
 */
typedef struct NvmVacuumHooks
{
	void	   *arg;			/* passed to every hook */
	/* the collection horizon into h; false if none could be computed */
	bool		(*horizon) (void *arg, NvmHorizon *h);
	/*
	 * steps 2 and 3: called at a step's start (done = 0), every tick_every
	 * items, and at its end (done = total; once for a step of no items)
	 */
	void		(*progress) (void *arg, NvmVacuumStep step, uint64_t done, uint64_t total);
	uint64_t	tick_every;
	/* end of step 2: the records are below nrec */
	void		(*scanned) (void *arg, uint64_t nrec);
	/* step 4: dead[0 .. ndead) ascending; live_rows from step 2 */
	void		(*remove_index_entries) (void *arg, const uint64_t *dead, uint64_t ndead,
										 uint64_t live_rows);
	/* step 5 */
	void		(*before_give_back) (void *arg);
	/* memory of the pass (both or neither) */
	void	   *(*alloc) (void *arg, size_t size);
	void		(*free) (void *arg, void *p);
} NvmVacuumHooks;

/* What a pass did. */
typedef struct NvmVacuumResult
{
	NvmGcCounts counts;			/* versions, records, numbers freed */
	uint64_t	live_rows;		/* live records whose head is no tombstone (step 2) */
	uint64_t	dead_records;	/* found dead in step 2 */
	uint64_t	dead_numbers;	/* index roots whose entries were removed (step 3) */
	uint64_t	retired_waiting;	/* retired in step 6, not finished in 7 (0 when
									 * 7 found no horizon) */
} NvmVacuumResult;

/*
 * nvm_vacuum_table runs one VACUUM of t in the order above and fills res;
 * false if no horizon could be computed (nothing done).  hooks may be NULL.
 */
extern bool nvm_vacuum_table(NvmTable *t, const NvmVacuumHooks *hooks, NvmVacuumResult *res);

#endif							/* NVM_VACUUM_H */
