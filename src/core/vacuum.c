/*
 * vacuum.c
 *	  VACUUM of one table, in the order vacuum.h states and explains; the
 *	  steps themselves are gc.c's.
 */
#include "vacuum.h"

#include "pool.h"

#include <stdlib.h>
#include <string.h>

/* Version numbers, ascending, as step 3 finds them. */
typedef struct DeadNumbers
{
	uint64_t   *numbers;
	uint64_t	count;
	uint64_t	capacity;
} DeadNumbers;

static const NvmVacuumHooks no_hooks = {0};

/*
 * vacuum_alloc returns size bytes of the pass's memory (hooks->alloc, else
 * malloc, aborting when there is none, as gc.c does).
 */
static void *
vacuum_alloc(const NvmVacuumHooks *hooks, size_t size)
{
	void	   *p;

	if (hooks->alloc != NULL)
		return hooks->alloc(hooks->arg, size);
	p = malloc(size > 0 ? size : 1);
	if (p == NULL)
		abort();
	return p;
}

/* vacuum_free gives back what vacuum_alloc returned. */
static void
vacuum_free(const NvmVacuumHooks *hooks, void *p)
{
	if (hooks->free != NULL)
		hooks->free(hooks->arg, p);
	else
		free(p);
}

/* vacuum_horizon computes the horizon into h (hooks->horizon, else gc.c's). */
static bool
vacuum_horizon(const NvmVacuumHooks *hooks, NvmHorizon *h)
{
	if (hooks->horizon != NULL)
		return hooks->horizon(hooks->arg, h);
	return nvm_gc_horizon(h);
}

/*
 * vacuum_progress says that done of the total items of step are done, to
 * hooks->progress at the step's start (0), at its end (total) and every
 * tick_every items in between.
 */
static void
vacuum_progress(const NvmVacuumHooks *hooks, NvmVacuumStep step, uint64_t done, uint64_t total)
{
	bool		tick = hooks->tick_every != 0 && done % hooks->tick_every == 0;

	if (hooks->progress != NULL && (done == 0 || done == total || tick))
		hooks->progress(hooks->arg, step, done, total);
}

/* dead_numbers_add appends n to d, growing it as needed. */
static void
dead_numbers_add(const NvmVacuumHooks *hooks, DeadNumbers *d, uint64_t n)
{
	if (d->count == d->capacity)
	{
		uint64_t	capacity = d->capacity ? d->capacity * 2 : 1024;
		uint64_t   *numbers = vacuum_alloc(hooks, capacity * sizeof(uint64_t));

		if (d->numbers != NULL)
		{
			memcpy(numbers, d->numbers, d->count * sizeof(uint64_t));
			vacuum_free(hooks, d->numbers);
		}
		d->numbers = numbers;
		d->capacity = capacity;
	}
	d->numbers[d->count++] = n;
}

/*
 * scan is step 2 over the records below nrec: finishes earlier retirements,
 * prunes, marks dead records in dead_record and counts live rows.
 */
static void
scan(NvmTable *t, const NvmVacuumHooks *hooks, const NvmHorizon *h, uint64_t nrec,
	 bool *dead_record, NvmVacuumResult *res)
{
	uint64_t	total = nrec > 1 ? nrec - 1 : 0;

	for (uint64_t r = nrec; r-- > 1;)
	{
		NvmVersion *head;

		vacuum_progress(hooks, NVM_VACUUM_SCAN, total - r, total);
		if (nvm_gc_finish_retired(t, r, h, &res->counts))
			continue;
		head = nvm_ptr(nvm_record_head(t, r));
		if (head == NULL)
			continue;
		(void) nvm_gc_prune_chain(t, r, h, &res->counts);
		if (nvm_gc_record_is_dead(t, r, h))
		{
			dead_record[r] = true;
			res->dead_records++;
		}
		else if (!nvm_version_is_tombstone(head))
			res->live_rows++;
	}
	vacuum_progress(hooks, NVM_VACUUM_SCAN, total, total);
}

/*
 * find_dead_numbers is step 3 over the version numbers below nver: index
 * roots whose run is gone, those of the records dead_record marks included.
 */
static void
find_dead_numbers(NvmTable *t, const NvmVacuumHooks *hooks, uint64_t nver,
				  const bool *dead_record, uint64_t nrec, DeadNumbers *dead)
{
	uint64_t	total = nver > 1 ? nver - 1 : 0;

	for (uint64_t n = 1; n < nver; n++)
	{
		vacuum_progress(hooks, NVM_VACUUM_DEAD_NUMBERS, n - 1, total);
		if (nvm_gc_number_is_dead_root(t, n, dead_record, nrec))
			dead_numbers_add(hooks, dead, n);
	}
	vacuum_progress(hooks, NVM_VACUUM_DEAD_NUMBERS, total, total);
}

/*
 * give_back is steps 6 and 7: the dead numbers go back, the dead records
 * are retired, and finished at once where a new horizon allows.
 */
static void
give_back(NvmTable *t, const NvmVacuumHooks *hooks, NvmHorizon *h, uint64_t nrec,
		  const bool *dead_record, const DeadNumbers *dead, NvmVacuumResult *res)
{
	for (uint64_t i = dead->count; i > 0; i--)
		nvm_gc_free_number(t, dead->numbers[i - 1], &res->counts);
	for (uint64_t r = nrec; r-- > 1;)
		if (dead_record[r])
			(void) nvm_gc_retire_record(t, r, h, &res->counts);
	if (res->dead_records == 0 || !vacuum_horizon(hooks, h))
		return;
	for (uint64_t r = nrec; r-- > 1;)
	{
		if (dead_record[r] && !nvm_gc_finish_retired(t, r, h, &res->counts))
			res->retired_waiting++;
	}
}

bool
nvm_vacuum_table(NvmTable *t, const NvmVacuumHooks *hooks, NvmVacuumResult *res)
{
	uint64_t	nrec = nvm_table_record_limit(t);
	uint64_t	nver = nvm_table_version_limit(t);
	NvmHorizon *h;
	bool	   *dead_record;
	DeadNumbers dead = {0};

	if (hooks == NULL)
		hooks = &no_hooks;
	memset(res, 0, sizeof(*res));
	h = vacuum_alloc(hooks, sizeof(NvmHorizon));
	/* 1 */
	if (!vacuum_horizon(hooks, h))
	{
		vacuum_free(hooks, h);
		return false;
	}
	dead_record = vacuum_alloc(hooks, nrec * sizeof(bool));
	memset(dead_record, 0, nrec * sizeof(bool));

	/* 2 */
	scan(t, hooks, h, nrec, dead_record, res);
	if (hooks->scanned != NULL)
		hooks->scanned(hooks->arg, nrec);
	/* 3 */
	find_dead_numbers(t, hooks, nver, dead_record, nrec, &dead);
	res->dead_numbers = dead.count;
	/* 4 */
	if (hooks->remove_index_entries != NULL)
		hooks->remove_index_entries(hooks->arg, dead.numbers, dead.count, res->live_rows);
	/* 5 */
	if (hooks->before_give_back != NULL)
		hooks->before_give_back(hooks->arg);
	/* 6 and 7 */
	give_back(t, hooks, h, nrec, dead_record, &dead, res);

	vacuum_free(hooks, dead_record);
	if (dead.numbers != NULL)
		vacuum_free(hooks, dead.numbers);
	vacuum_free(hooks, h);
	return true;
}
