/*
 * gc.c
 *	  Garbage collection: snapshot pins, the collection horizon, pruning of
 *	  version chains, retiring of deleted records, and per-table statistics.
 *
 * The design, and the persist order of every step, is in gc.h.
 */
#include "gc.h"

#include "alloc.h"
#include "persist.h"
#include "pool.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static NvmGcShared *gc_shared = NULL;

/* This process's external floor (nvm_gc_set_external_floor), or NULL. */
static uint32_t (*external_floor_fn) (void) = NULL;

/* This process's horizon floor (nvm_gc_set_horizon_floor), or NULL. */
static void (*horizon_floor_fn) (NvmHorizon *h) = NULL;

static inline NvmPin *
pin_at(uint32_t pin)
{
	return (NvmPin *) ((char *) gc_shared + NVM_ALIGN_UP(sizeof(NvmGcShared), NVM_CACHELINE)) + pin;
}

static inline _Atomic uint64_t *
pin_vector(uint32_t pin)
{
	char	   *base = (char *) pin_at(gc_shared->max_pins);

	return (_Atomic uint64_t *) base + (size_t) pin * gc_shared->max_slots;
}

size_t
nvm_gc_shmem_size(uint32_t max_pins, uint32_t max_slots)
{
	return NVM_ALIGN_UP(sizeof(NvmGcShared), NVM_CACHELINE) +
		(size_t) max_pins * sizeof(NvmPin) +
		(size_t) max_pins * max_slots * sizeof(uint64_t);
}

void
nvm_gc_startup(void *shmem, uint32_t max_pins, uint32_t max_slots, uint64_t start_count)
{
	gc_shared = shmem;
	memset(shmem, 0, nvm_gc_shmem_size(max_pins, max_slots));
	gc_shared->max_pins = max_pins;
	gc_shared->max_slots = max_slots;
	/* epochs of earlier starts are all below this one's */
	atomic_store(&gc_shared->epoch, (start_count + 1) << 40);
	for (int i = 0; i < NVM_GC_CHAIN_LOCKS; i++)
		nvm_spin_init(&gc_shared->chain_locks[i]);
	nvm_cc_horizon_fn = nvm_gc_horizon;
}

void
nvm_gc_attach(void *shmem)
{
	gc_shared = shmem;
	nvm_cc_horizon_fn = nvm_gc_horizon;
}

uint64_t
nvm_gc_versions_collected(void)
{
	return gc_shared ? atomic_load(&gc_shared->versions_freed) : 0;
}

/* ---------------------------------------------------------------------
 * Pins
 * ---------------------------------------------------------------------
 */

/*
 * pin_store publishes snap in pin p (vector vec): MCSI's vector, or N2DB's
 * xmin, xmax and in-progress list.
 */
static void
pin_store(NvmPin *p, _Atomic uint64_t *vec, const NvmSnapshot *snap)
{
	uint32_t	n = snap->nslots;

	if (n > gc_shared->max_slots)
		n = gc_shared->max_slots;
	atomic_store_explicit(&p->xmin, snap->xmin, memory_order_relaxed);
	atomic_store_explicit(&p->xmax, snap->xmax, memory_order_relaxed);
	for (uint32_t c = 0; c < n; c++)
		atomic_store_explicit(&vec[c], snap->ts[c], memory_order_relaxed);
	p->nslots = n;
}

void
nvm_snapshot_take_pinned(int pin, NvmSnapshot *snap)
{
	NvmPin	   *p;

	if (pin < 0 || gc_shared == NULL || (uint32_t) pin >= gc_shared->max_pins)
	{
		nvm_snapshot_take(snap);
		return;
	}
	p = pin_at((uint32_t) pin);
	if (atomic_load_explicit(&p->state, memory_order_relaxed) == NVM_PIN_SET)
	{
		/*
		 * Already pinned: a newer snapshot contains the pinned one, and the
		 * pin keeps guarding the older snapshots still in use.
		 */
		nvm_snapshot_take(snap);
		return;
	}
	/* announce the pin before the snapshot is read (see gc.h) */
	atomic_store(&p->state, NVM_PIN_ACQUIRING);
	atomic_store(&p->epoch, atomic_load(&gc_shared->epoch));
	atomic_thread_fence(memory_order_seq_cst);
	/* a buffered snapshot from before the announcement would not do */
	nvm_snapshot_take_fresh(snap);
	pin_store(p, pin_vector((uint32_t) pin), snap);
	atomic_store_explicit(&p->state, NVM_PIN_SET, memory_order_release);
}

bool
nvm_snapshot_adopt_pinned(int pin, int from, NvmSnapshot *snap)
{
	NvmPin	   *p;
	NvmPin	   *f;
	_Atomic uint64_t *fvec;

	if (pin < 0 || from < 0 || gc_shared == NULL ||
		(uint32_t) pin >= gc_shared->max_pins || (uint32_t) from >= gc_shared->max_pins)
		return false;
	p = pin_at((uint32_t) pin);
	f = pin_at((uint32_t) from);
	if (atomic_load(&f->state) != NVM_PIN_SET)
		return false;
	/* announced before the copy, with the older snapshot's epoch (gc.h) */
	atomic_store(&p->state, NVM_PIN_ACQUIRING);
	atomic_store(&p->epoch, atomic_load(&f->epoch));
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&f->state, memory_order_acquire) != NVM_PIN_SET)
	{
		atomic_store(&p->state, NVM_PIN_IDLE);
		return false;
	}
	snap->mode = nvm_cc->cc_mode;
	snap->nslots = f->nslots;
	if (snap->nslots > gc_shared->max_slots)
		snap->nslots = gc_shared->max_slots;
	snap->xmin = atomic_load_explicit(&f->xmin, memory_order_relaxed);
	snap->xmax = atomic_load_explicit(&f->xmax, memory_order_relaxed);
	fvec = pin_vector((uint32_t) from);
	for (uint32_t c = 0; c < snap->nslots; c++)
		snap->ts[c] = atomic_load_explicit(&fvec[c], memory_order_relaxed);
	pin_store(p, pin_vector((uint32_t) pin), snap);
	atomic_store_explicit(&p->state, NVM_PIN_SET, memory_order_release);
	return true;
}

void
nvm_gc_unpin(int pin)
{
	if (pin < 0 || gc_shared == NULL || (uint32_t) pin >= gc_shared->max_pins)
		return;
	atomic_store_explicit(&pin_at((uint32_t) pin)->state, NVM_PIN_IDLE, memory_order_release);
}

bool
nvm_gc_is_pinned(int pin)
{
	if (pin < 0 || gc_shared == NULL || (uint32_t) pin >= gc_shared->max_pins)
		return false;
	return atomic_load(&pin_at((uint32_t) pin)->state) != NVM_PIN_IDLE;
}

/* ---------------------------------------------------------------------
 * Horizon
 * ---------------------------------------------------------------------
 */

/*
 * wait_pin_taken waits until a pin that is being taken is set or dropped;
 * returns its state, or NVM_PIN_ACQUIRING if it takes too long (its owner
 * is descheduled in the middle, or waits for a snapshot generation).
 */
static unsigned
wait_pin_taken(NvmPin *p)
{
	unsigned	st = NVM_PIN_ACQUIRING;

	for (int spins = 0; spins < 4096; spins++)
	{
		st = atomic_load_explicit(&p->state, memory_order_acquire);
		if (st != NVM_PIN_ACQUIRING)
			return st;
		if (spins % 64 == 63)
			sched_yield();
	}
	return st;
}

/*
 * horizon_compute computes the horizon into h; with wait, pins being taken
 * are waited for (briefly), else their presence makes it fail at once.
 */
static bool
horizon_compute(NvmHorizon *h, bool wait)
{
	uint32_t	max_pins = gc_shared->max_pins;

	/* the floor only rises: reading it first errs on the safe side */
	h->external_floor = external_floor_fn != NULL ? external_floor_fn() : 0;
	h->min_epoch = UINT64_MAX;
	if (!nvm_horizon_start(h))
		return false;
	if (horizon_floor_fn != NULL)
		horizon_floor_fn(h);
	/* what every future snapshot contains is read before the pins */
	atomic_thread_fence(memory_order_seq_cst);

	for (uint32_t i = 0; i < max_pins; i++)
	{
		NvmPin	   *p = pin_at(i);
		unsigned	st = atomic_load_explicit(&p->state, memory_order_acquire);
		uint64_t	epoch;

		if (st == NVM_PIN_IDLE)
			continue;
		epoch = atomic_load(&p->epoch);
		if (epoch < h->min_epoch)
			h->min_epoch = epoch;
		if (st == NVM_PIN_ACQUIRING && wait)
			st = wait_pin_taken(p);
		if (st == NVM_PIN_ACQUIRING)
			return false;
		if (st == NVM_PIN_IDLE)
			continue;
		nvm_horizon_lower(h, pin_vector(i), p->nslots,
						  atomic_load_explicit(&p->xmin, memory_order_relaxed));
	}
	return true;
}

bool
nvm_gc_horizon(NvmHorizon *h)
{
	return horizon_compute(h, true);
}

void
nvm_gc_set_external_floor(uint32_t (*floor_fn) (void))
{
	external_floor_fn = floor_fn;
}

void
nvm_gc_set_horizon_floor(void (*floor_fn) (NvmHorizon *h))
{
	horizon_floor_fn = floor_fn;
}

bool
nvm_gc_all_visible(const NvmHorizon *h, NvmVersion *v)
{
	/* not yet behind every reader that judges by external id */
	if (h->external_floor != 0 && v->external_id != 0 &&
		(int32_t) (v->external_id - h->external_floor) >= 0)
		return false;

	if (!nvm_horizon_contains(h, v->txid))
		return false;
	return nvm_version_status(v) == NVM_STATUS_COMMITTED;
}

/* ---------------------------------------------------------------------
 * Pruning
 * ---------------------------------------------------------------------
 */

static NvmSpinLock *
chain_lock(const NvmTable *t, uint64_t record_no)
{
	uint64_t	k = (nvm_off_of(t->desc) >> 6) * UINT64_C(0x9E3779B97F4A7C15) ^ record_no * UINT64_C(0xC2B2AE3D27D4EB4F);

	return &gc_shared->chain_locks[(k >> 20) % NVM_GC_CHAIN_LOCKS];
}

static size_t
version_bytes(NvmVersion *v)
{
	return nvm_alloc_usable_size(nvm_off_of(v));
}

/* qsort comparator of version numbers, ascending */
static int
compare_numbers(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

/* Whether pruning gives numbers back (nvm_gc_set_number_reuse). */
static bool reuse_numbers = true;

/*
 * free_chain frees the versions from first down its prev links, which
 * nobody can reach any more (the caller holds the chain lock): their
 * numbers go to the table's free list, ascending so that the lowest is
 * reused first, except that with keep_roots an index root's slot becomes a
 * redirect to its record instead (index entries still name it).  Persist
 * order: the slots are rewritten and flushed, the free list's push drains
 * them with its own entries, and one more drain precedes the freeing of
 * the blocks.
 */
static void
free_chain(NvmTable *t, nvm_off first, bool keep_roots, NvmGcCounts *counts)
{
	nvm_off		off_buf[64];
	uint64_t	num_buf[64];
	nvm_off    *offs = off_buf;
	uint64_t   *nums = num_buf;
	size_t		len = 0,
				n = 0,
				nnums = 0;

	for (nvm_off x = first; x != 0; x = ((NvmVersion *) nvm_ptr(x))->prev)
		len++;
	if (len > sizeof(off_buf) / sizeof(off_buf[0]))
	{
		offs = malloc(len * sizeof(nvm_off));
		nums = malloc(len * sizeof(uint64_t));
		if (offs == NULL || nums == NULL)
			abort();
	}
	for (nvm_off x = first; x != 0; x = ((NvmVersion *) nvm_ptr(x))->prev)
	{
		NvmVersion *v = nvm_ptr(x);
		_Atomic uint64_t *slot = nvm_version_slot(t, v->version_no);

		offs[n++] = x;
		if (slot == NULL || atomic_load(slot) != x)
			continue;
		if (keep_roots && v->index_root == v->version_no)
		{
			atomic_store(slot, (v->record_no << 3) | NVM_TAG_REDIRECT);
			nvm_flush((const void *) slot, sizeof(uint64_t));
			counts->redirects++;
		}
		else if (!reuse_numbers)
		{
			/* a standby's replay: the number stays the primary's to give */
			atomic_store(slot, 0);
			nvm_flush((const void *) slot, sizeof(uint64_t));
		}
		else
			nums[nnums++] = v->version_no;
	}
	qsort(nums, nnums, sizeof(uint64_t), compare_numbers);
	nvm_numbers_push(&t->desc->versions, &t->desc->free_versions, nums, nnums);
	counts->numbers_freed += nnums;
	/* slots durable before the blocks are given back */
	nvm_drain();
	for (size_t i = 0; i < n; i++)
	{
		counts->versions_freed++;
		counts->bytes_freed += nvm_alloc_usable_size(offs[i]);
		nvm_free(offs[i]);
	}
	atomic_fetch_add_explicit(&gc_shared->versions_freed, n, memory_order_relaxed);
	if (offs != off_buf)
	{
		free(offs);
		free(nums);
	}
}

/*
 * cut_below frees every version below w (the caller holds the chain lock
 * and w is all-visible); persist order in gc.h.
 */
static void
cut_below(NvmTable *t, NvmVersion *w, NvmGcCounts *counts)
{
	nvm_off		tail = w->prev;

	if (tail == 0)
		return;
	/* one change for the pool-wide check (alloc.h), from the cut to the frees */
	nvm_alloc_change_begin();
	/* 1. the cut, durable before anything below changes */
	atomic_store((_Atomic nvm_off *) &w->prev, 0);
	nvm_flush(&w->prev, sizeof(nvm_off));
	nvm_drain();
	/* 2 and 3. version slots (redirects for index roots), then the blocks */
	free_chain(t, tail, true, counts);
	nvm_alloc_change_end();
}

/*
 * newest_all_visible returns the newest all-visible version of the chain
 * that starts at head, or NULL.
 */
static NvmVersion *
newest_all_visible(NvmVersion *head, const NvmHorizon *h)
{
	for (NvmVersion *v = head; v != NULL; v = nvm_ptr(v->prev))
	{
		if (nvm_gc_all_visible(h, v))
			return v;
	}
	return NULL;
}

bool
nvm_gc_prune_chain(NvmTable *t, uint64_t record_no, const NvmHorizon *h, NvmGcCounts *counts)
{
	NvmSpinLock *lock = chain_lock(t, record_no);
	NvmVersion *w;

	if (!nvm_spin_trylock(lock))
		return false;
	w = newest_all_visible(nvm_ptr(nvm_record_head(t, record_no)), h);
	if (w != NULL && w->prev != 0)
		cut_below(t, w, counts);
	nvm_spin_unlock(lock);
	return true;
}

/*
 * Automatic pruning by writers: settings of the process; the cached horizon
 * is per thread (test and benchmark programs run many).  A horizon that
 * cannot be computed at once (a pin is being taken) is not waited for: the
 * previous one stays in use, a stale horizon being a safe one.
 */
static bool auto_prune = false;
static uint64_t auto_refresh_ns = 0;
static _Thread_local NvmHorizon *auto_horizon = NULL;
static _Thread_local NvmHorizon *auto_scratch = NULL;
static _Thread_local uint64_t auto_horizon_at = 0;
static _Thread_local bool auto_horizon_valid = false;
static _Thread_local uint64_t auto_generation = 0;
static _Atomic uint64_t auto_settings_generation = 0;
static _Thread_local NvmGcCounts local_counts;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

void
nvm_gc_set_auto_prune(bool on, uint32_t refresh_ms)
{
	auto_prune = on;
	auto_refresh_ns = (uint64_t) refresh_ms * 1000000u;
	atomic_fetch_add(&auto_settings_generation, 1);
}

/*
 * cached_horizon returns the thread's horizon, recomputed if it is older
 * than the refresh interval, or NULL if there has never been one.
 */
static const NvmHorizon *
cached_horizon(void)
{
	uint64_t	now;
	uint64_t	gen = atomic_load_explicit(&auto_settings_generation, memory_order_relaxed);

	if (gen != auto_generation)
	{
		auto_generation = gen;
		auto_horizon_valid = false;
	}
	now = now_ns();
	if (!auto_horizon_valid || now - auto_horizon_at >= auto_refresh_ns)
	{
		if (auto_horizon == NULL)
		{
			auto_horizon = malloc(sizeof(NvmHorizon));
			auto_scratch = malloc(sizeof(NvmHorizon));
			if (auto_horizon == NULL || auto_scratch == NULL)
				abort();
		}
		if (horizon_compute(auto_scratch, false))
		{
			NvmHorizon *tmp = auto_horizon;

			auto_horizon = auto_scratch;
			auto_scratch = tmp;
			auto_horizon_valid = true;
			auto_horizon_at = now;
		}
	}
	return auto_horizon_valid ? auto_horizon : NULL;
}

const NvmHorizon *
nvm_gc_cached_horizon(void)
{
	if (gc_shared == NULL)
		return NULL;
	return cached_horizon();
}

void
nvm_gc_set_number_reuse(bool on)
{
	reuse_numbers = on;
}

void
nvm_gc_after_update(NvmTable *t, uint64_t record_no)
{
	const NvmHorizon *h;

	if (!auto_prune || gc_shared == NULL)
		return;
	h = cached_horizon();
	if (h != NULL)
		(void) nvm_gc_prune_chain(t, record_no, h, &local_counts);
}

/*
 * Deferred pruning.  Right after an update, the version it replaced is
 * still needed by the snapshots of transactions running at that moment; it
 * becomes garbage a little later, and nobody would prune it until the row
 * is written again or VACUUM runs.  So the writer remembers the row and
 * prunes it once the row's entry is older than min_age_ns, the next time it
 * writes the same table.  The list is per thread and bounded: when it is
 * full the oldest entry is dropped (VACUUM collects what it would have).
 */
#define DEFER_SLOTS 1024

typedef struct DeferredPrune
{
	NvmTableDesc *desc;
	uint64_t	record_no;
	uint64_t	at_ns;
} DeferredPrune;

static _Thread_local DeferredPrune deferred[DEFER_SLOTS];
static _Thread_local uint32_t deferred_first = 0;
static _Thread_local uint32_t deferred_count = 0;

void
nvm_gc_defer(NvmTable *t, uint64_t record_no)
{
	DeferredPrune *d;

	if (!auto_prune || gc_shared == NULL)
		return;
	if (deferred_count == DEFER_SLOTS)
	{
		deferred_first = (deferred_first + 1) % DEFER_SLOTS;
		deferred_count--;
	}
	d = &deferred[(deferred_first + deferred_count) % DEFER_SLOTS];
	d->desc = t->desc;
	d->record_no = record_no;
	d->at_ns = now_ns();
	deferred_count++;
}

void
nvm_gc_run_deferred(NvmTable *t, uint64_t min_age_ns)
{
	const NvmHorizon *h;
	uint64_t	now;
	uint32_t	old = 0;
	uint32_t	kept = 0;

	if (deferred_count == 0 || !auto_prune || gc_shared == NULL)
		return;
	now = now_ns();

	/*
	 * Entries are appended in the order of the (monotonic) clock, so the
	 * old enough ones are a prefix of the list: only that prefix is walked,
	 * never the young entries after it (at one update every few
	 * microseconds, most of the list is younger than min_age_ns).
	 */
	while (old < deferred_count &&
		   now - deferred[(deferred_first + old) % DEFER_SLOTS].at_ns >= min_age_ns)
		old++;
	if (old == 0)
		return;
	h = cached_horizon();
	if (h == NULL)
		return;

	/*
	 * The prefix, newest first: t's rows are pruned, the other tables'
	 * entries move up to close the gaps (in their order, next to the young
	 * entries); a slot is written only once the walk has read it.
	 */
	for (uint32_t i = old; i-- > 0;)
	{
		DeferredPrune d = deferred[(deferred_first + i) % DEFER_SLOTS];

		if (d.desc == t->desc)
		{
			(void) nvm_gc_prune_chain(t, d.record_no, h, &local_counts);
			continue;
		}
		kept++;
		deferred[(deferred_first + old - kept) % DEFER_SLOTS] = d;
	}
	deferred_first = (deferred_first + old - kept) % DEFER_SLOTS;
	deferred_count -= old - kept;
}

/* ---------------------------------------------------------------------
 * Deleted records
 * ---------------------------------------------------------------------
 */

/*
 * chain_aborted says whether every version of the chain from head down was
 * rolled back (an insert whose transaction aborted, with any updates it
 * made of its own row): nobody can see such a record, nor write to it,
 * since writers only push onto a version they see.
 */
static bool
chain_aborted(NvmVersion *head)
{
	for (NvmVersion *v = head; v != NULL; v = nvm_ptr(v->prev))
		if (nvm_version_status(v) != NVM_STATUS_ABORTED)
			return false;
	return true;
}

bool
nvm_gc_record_is_dead(NvmTable *t, uint64_t record_no, const NvmHorizon *h)
{
	NvmVersion *head = nvm_ptr(nvm_record_head(t, record_no));

	if (head == NULL)
		return false;
	/* nothing can be pushed onto a committed tombstone: it stays the head */
	if (nvm_version_is_tombstone(head))
		return nvm_gc_all_visible(h, head);
	/* the head of a rolled-back record stands in for the tombstone: it needs room for the epoch */
	return head->data_len >= sizeof(uint64_t) && chain_aborted(head);
}

/*
 * nvm_gc_retire_record makes a dead record unreachable: its chain is cut
 * below the tombstone, the epoch is stored in the tombstone (flushed,
 * drained), then the head becomes the retired marker.  The caller has
 * removed every index entry that names a version of the record.
 */
bool
nvm_gc_retire_record(NvmTable *t, uint64_t record_no, const NvmHorizon *h, NvmGcCounts *counts)
{
	NvmSpinLock *lock = chain_lock(t, record_no);
	_Atomic uint64_t *head = nvm_record_head_slot(t, record_no);
	NvmVersion *tomb;
	uint64_t	epoch;

	if (head == NULL)
		return false;
	nvm_spin_lock(lock);
	if (!nvm_gc_record_is_dead(t, record_no, h))
	{
		nvm_spin_unlock(lock);
		return false;
	}
	tomb = nvm_ptr(atomic_load(head));
	/*
	 * Views stop at an all-visible tombstone, so what lies below goes now;
	 * they walk through rolled-back versions, so those wait for the finish.
	 */
	if (nvm_version_is_tombstone(tomb))
		cut_below(t, tomb, counts);
	epoch = atomic_fetch_add(&gc_shared->epoch, 1);
	memcpy(tomb->data, &epoch, sizeof(uint64_t));
	nvm_flush(tomb->data, sizeof(uint64_t));
	nvm_drain();
	atomic_store(head, nvm_off_of(tomb) | NVM_TAG_RETIRED);
	nvm_flush((const void *) head, sizeof(uint64_t));
	nvm_drain();
	nvm_spin_unlock(lock);
	counts->records_retired++;
	return true;
}

/*
 * nvm_gc_finish_retired gives back a retired record's number, and the
 * numbers and blocks of its tombstone (or of its rolled-back versions),
 * once no pin is older than the retirement.  Returns false if the record
 * is not retired or the time has not come.  Persist order: the record
 * number's push drains the retired head, and the version numbers' push
 * drains their list, before any block is freed.
 */
bool
nvm_gc_finish_retired(NvmTable *t, uint64_t record_no, const NvmHorizon *h, NvmGcCounts *counts)
{
	_Atomic uint64_t *head = nvm_record_head_slot(t, record_no);
	uint64_t	val;
	NvmVersion *tomb;
	uint64_t	epoch;

	if (head == NULL)
		return false;
	val = atomic_load(head);
	if ((val & NVM_TAG_MASK) != NVM_TAG_RETIRED)
		return false;
	tomb = nvm_ptr(val & ~NVM_TAG_MASK);
	memcpy(&epoch, tomb->data, sizeof(uint64_t));
	if (epoch >= h->min_epoch)
		return false;
	nvm_alloc_change_begin();
	/* the record number first: its push drains the head before the blocks go */
	nvm_numbers_push(&t->desc->records, &t->desc->free_records, &record_no, 1);
	counts->records_freed++;
	/* a tombstone's chain was cut at retirement; a rolled-back one is whole */
	free_chain(t, nvm_off_of(tomb), false, counts);
	nvm_alloc_change_end();
	return true;
}

bool
nvm_gc_number_is_dead_root(NvmTable *t, uint64_t version_no, const bool *dead_records,
						   uint64_t dead_records_len)
{
	_Atomic uint64_t *slot = nvm_version_slot(t, version_no);
	uint64_t	val;
	uint64_t	rec;
	NvmSpinLock *lock;
	bool		dead = true;

	if (slot == NULL)
		return false;
	val = atomic_load(slot);
	if (val != 0 && (val & NVM_TAG_MASK) == 0)
	{
		/* a version of a dead rolled-back record: its own entries go */
		NvmVersion *v = nvm_ptr(val);

		rec = v->record_no;
		return v->index_root == version_no && !nvm_version_is_tombstone(v) &&
			rec < dead_records_len && dead_records[rec] &&
			nvm_version_status(v) == NVM_STATUS_ABORTED;
	}
	if ((val & NVM_TAG_MASK) != NVM_TAG_REDIRECT)
		return false;
	rec = val >> 3;
	if (rec < dead_records_len && dead_records[rec])
		return true;
	lock = chain_lock(t, rec);
	nvm_spin_lock(lock);
	for (NvmVersion *v = nvm_ptr(nvm_record_head(t, rec)); v != NULL; v = nvm_ptr(v->prev))
	{
		if (v->index_root == version_no && nvm_version_status(v) != NVM_STATUS_ABORTED)
		{
			dead = false;
			break;
		}
	}
	nvm_spin_unlock(lock);
	return dead;
}

bool
nvm_gc_index_root_is_dead(NvmTable *t, uint64_t root, const NvmHorizon *h)
{
	uint64_t	rec = nvm_version_record_no(t, root);
	NvmSpinLock *lock;
	bool		dead = true;

	if (rec == 0 || gc_shared == NULL)
		return false;
	lock = chain_lock(t, rec);
	nvm_spin_lock(lock);
	/* pruned into a redirect meanwhile is fine; anything else is not */
	if (nvm_version_record_no(t, root) != rec)
	{
		nvm_spin_unlock(lock);
		return false;
	}
	/* a retired (or free) record has no head: every version is gone */
	for (NvmVersion *v = nvm_ptr(nvm_record_head(t, rec)); v != NULL; v = nvm_ptr(v->prev))
	{
		if (nvm_version_status(v) == NVM_STATUS_ABORTED)
			continue;
		if (!nvm_version_is_tombstone(v) && v->index_root == root)
		{
			dead = false;
			break;
		}
		if (h != NULL && nvm_gc_all_visible(h, v))
			break;
	}
	nvm_spin_unlock(lock);
	return dead;
}

void
nvm_gc_free_number(NvmTable *t, uint64_t version_no, NvmGcCounts *counts)
{
	_Atomic uint64_t *slot = nvm_version_slot(t, version_no);

	if (slot == NULL || (atomic_load(slot) & NVM_TAG_MASK) != NVM_TAG_REDIRECT)
		return;
	nvm_numbers_push(&t->desc->versions, &t->desc->free_versions, &version_no, 1);
	counts->numbers_freed++;
}

/* ---------------------------------------------------------------------
 * Statistics
 * ---------------------------------------------------------------------
 */

void
nvm_gc_table_stats(NvmTable *t, const NvmHorizon *h, NvmTableStats *st)
{
	uint64_t	nrec = nvm_table_record_limit(t);
	uint64_t	nver = nvm_table_version_limit(t);

	memset(st, 0, sizeof(*st));
	st->version_numbers = nver - 1;
	for (uint64_t r = 1; r < nrec; r++)
	{
		_Atomic uint64_t *hs = nvm_record_head_slot(t, r);
		NvmSpinLock *lock;
		uint64_t	val;
		uint64_t	len = 0;
		uint64_t	chain_bytes = 0;
		bool		below = false;
		bool		seen_committed = false;

		if (hs == NULL)
			continue;
		val = atomic_load(hs);
		if (val == 0 || (val & NVM_TAG_MASK) == NVM_TAG_FREE)
			continue;
		st->records++;
		if ((val & NVM_TAG_MASK) == NVM_TAG_RETIRED)
		{
			st->retired_records++;
			continue;
		}
		lock = chain_lock(t, r);
		nvm_spin_lock(lock);
		for (NvmVersion *v = nvm_ptr(nvm_record_head(t, r)); v != NULL; v = nvm_ptr(v->prev))
		{
			size_t		bytes = version_bytes(v);
			NvmTxnStatus s = nvm_version_status(v);

			len++;
			chain_bytes += bytes;
			st->versions++;
			st->version_bytes += bytes;
			if (below)
			{
				st->reclaimable_versions++;
				st->reclaimable_bytes += bytes;
			}
			if (s == NVM_STATUS_COMMITTED && !seen_committed)
			{
				seen_committed = true;
				if (!nvm_version_is_tombstone(v))
					st->live_rows++;
			}
			if (!below && nvm_gc_all_visible(h, v))
				below = true;
		}
		nvm_spin_unlock(lock);
		if (nvm_gc_record_is_dead(t, r, h))
		{
			NvmVersion *tomb = nvm_ptr(nvm_record_head(t, r));

			st->dead_records++;
			if (tomb != NULL && nvm_version_is_tombstone(tomb))
			{
				/* the tombstone goes with the record (what is below it is counted) */
				st->reclaimable_versions++;
				st->reclaimable_bytes += version_bytes(tomb);
			}
			else if (tomb != NULL)
			{
				/* a rolled-back record goes whole */
				st->reclaimable_versions += len;
				st->reclaimable_bytes += chain_bytes;
			}
		}
		if (len > st->longest_chain)
			st->longest_chain = len;
	}
	for (uint64_t n = 1; n < nver; n++)
	{
		_Atomic uint64_t *slot = nvm_version_slot(t, n);

		if (slot != NULL && (atomic_load(slot) & NVM_TAG_MASK) == NVM_TAG_REDIRECT)
			st->redirects++;
	}
	st->free_numbers = nvm_numbers_count(&t->desc->versions, &t->desc->free_versions);
}
