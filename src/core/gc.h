/*
 * gc.h
 *	  Garbage collection of versions: snapshot pins, the collection horizon,
 *	  chain pruning and the removal of deleted records.
 *
 * Pins.  Every process that reads chains with a snapshot pins the oldest
 * snapshot it may still use (the PG layer: its transaction's first
 * snapshot, until the transaction ends).  A pin is a copy of that snapshot
 * in shared memory (MCSI: the vector; N2DB: its xmin), published with a
 * two-step protocol so that collection never overtakes a snapshot being
 * taken: the pin is marked ACQUIRING (sequentially consistent) before the
 * snapshot is taken, and SET with its values after.
 *
 * Horizon.  The collector first reads what every future snapshot will at
 * least contain (MCSI: the last-completed array; N2DB: the oldest running
 * txid), then takes the component-wise minimum with every pin, waiting
 * briefly for ACQUIRING ones.  A committed version whose creator is inside
 * the horizon is seen by every running and future snapshot: "all-visible".
 * A stale horizon is still a safe one (it only grows).
 *
 * Pruning.  Below the newest all-visible version w of a chain no snapshot
 * can ever look: every view stops at w or above it (snapshots see w; the
 * dirty, self and any views stop at the newest non-aborted version, which
 * is w or newer).  So the versions below w are cut off and freed at once.
 * Pruners of one chain exclude each other with a striped lock in shared
 * memory; readers and writers never take it.  Persist order of a prune:
 *	 1. w->prev = 0, flushed, drained: the cut is durable before anything
 *		below it is changed (a crash leaves a shorter chain, or the old one);
 *	 2. the version slot of every cut version is rewritten, flushed: an
 *		index root (a version that index entries name) becomes a redirect
 *		to its record, so index scans still find the record's newer versions
 *		of the same index run; any other number goes to the table's free
 *		list of version numbers (its own persist order is in store.c);
 *	 3. drained; then the blocks are freed (the allocator persists each
 *		block header).  A crash between 1 and 3 leaks blocks that nothing
 *		reaches, never frees a reachable one.
 *
 * Deleted records (VACUUM).  A record whose newest version is an
 * all-visible tombstone is dead; so is a rolled-back one, every version of
 * which was aborted (an insert whose transaction rolled back), whose head
 * then stands in for the tombstone below.  Its index entries are removed
 * first (the PG layer runs the indexes' bulk delete with the dead numbers),
 * then the record is retired: its head becomes a "retired" marker naming the
 * tombstone, and the collection epoch is stored in the tombstone (the first
 * eight bytes of a rolled-back head's data, which nobody reads).  A later
 * VACUUM finishes it once every pin is younger than that epoch (readers
 * that might still be standing on the tombstone are gone): the record
 * number and the tombstone's version number go to the free lists and the
 * tombstone is freed.  Epochs start above start_count << 40, so after a
 * restart every retired record can be finished.
 *
 * VACUUM runs these steps over a whole table in the order vacuum.h states.
 */
#ifndef NVM_GC_H
#define NVM_GC_H

#include "nvm_types.h"
#include "store.h"
#include "txn.h"

#define NVM_PIN_IDLE		0
#define NVM_PIN_ACQUIRING	1
#define NVM_PIN_SET			2

#define NVM_GC_CHAIN_LOCKS	4096

/*
 * A published pin (one cache line of header; the vector, or N2DB's
 * in-progress list, is elsewhere).  It holds the whole snapshot, so that
 * another transaction can adopt it (nvm_snapshot_adopt_pinned).
 */
typedef struct NvmPin
{
	_Alignas(NVM_CACHELINE) atomic_uint state;
	uint32_t	nslots;			/* entries of the vector (N2DB: of the list) */
	_Atomic uint64_t epoch;		/* collection epoch when the pin was taken */
	_Atomic uint64_t xmin;		/* N2DB: the snapshot's xmin */
	_Atomic uint64_t xmax;		/* N2DB: the snapshot's xmax */
} NvmPin;

/* What collection did (added to, never reset, by the functions below). */
typedef struct NvmGcCounts
{
	uint64_t	versions_freed;
	uint64_t	bytes_freed;
	uint64_t	redirects;		/* index roots kept as redirects */
	uint64_t	records_retired;
	uint64_t	records_freed;
	uint64_t	numbers_freed;	/* version numbers put on the free list */
} NvmGcCounts;

typedef struct NvmGcShared
{
	uint32_t	max_pins;
	uint32_t	max_slots;
	_Atomic uint64_t epoch;
	_Atomic uint64_t versions_freed;	/* pool-wide total since start-up */
	NvmSpinLock chain_locks[NVM_GC_CHAIN_LOCKS];
	/* followed by max_pins NvmPin, then max_pins * max_slots vector words */
} NvmGcShared;

extern size_t nvm_gc_shmem_size(uint32_t max_pins, uint32_t max_slots);
extern void nvm_gc_startup(void *shmem, uint32_t max_pins, uint32_t max_slots, uint64_t start_count);
extern void nvm_gc_attach(void *shmem);

/* Versions freed by collection in any process since start-up. */
extern uint64_t nvm_gc_versions_collected(void);

/*
 * nvm_snapshot_take_pinned takes a snapshot and publishes it as pin's pin
 * (replacing an older one of the same pin); pin < 0 takes it unpinned.
 */
extern void nvm_snapshot_take_pinned(int pin, NvmSnapshot *snap);

/*
 * nvm_snapshot_adopt_pinned copies the snapshot pinned by pin `from` into
 * snap and pins it as pin's own, with from's epoch, announcing the pin
 * before reading (as a new pin does): a transaction that imports another
 * one's snapshot sees exactly what it sees.  Returns false (pin left
 * idle) if from holds no pin.  The copy is whole only if from's pin stayed
 * set throughout, which the caller checks afterwards (the exporting
 * transaction still runs).
 */
extern bool nvm_snapshot_adopt_pinned(int pin, int from, NvmSnapshot *snap);
extern void nvm_gc_unpin(int pin);
extern bool nvm_gc_is_pinned(int pin);

/* Compute the horizon; false if a pin being taken did not finish in time. */
extern bool nvm_gc_horizon(NvmHorizon *h);

/*
 * Is v committed by a transaction inside the horizon?  A version that
 * carries an external id (PostgreSQL: the creator's xid) is all-visible
 * only if that id also precedes the external floor.
 */
extern bool nvm_gc_all_visible(const NvmHorizon *h, NvmVersion *v);

/*
 * nvm_gc_set_external_floor installs, in this process, a function that
 * every horizon computation calls for its external floor: an external id
 * (32-bit, compared modulo 2^32 like PostgreSQL's xids) such that versions
 * carrying an id that does not precede it are never all-visible.  It lets
 * readers that judge versions by their external id (PostgreSQL snapshots
 * taken elsewhere: a replication slot's, an imported one) keep what they
 * can see.  The function returns 0 for no floor; NULL removes it.
 */
extern void nvm_gc_set_external_floor(uint32_t (*floor_fn) (void));

/*
 * nvm_gc_set_horizon_floor installs, in this process, a function that
 * every horizon computation calls after reading what every future
 * snapshot contains and before lowering it to the pins: it may lower the
 * horizon further (nvm_horizon_lower_to, txn.h) for readers that hold no
 * pin in this pool (a physical standby's queries, held back with
 * hot_standby_feedback), and may keep a copy of the horizon it is given,
 * which every later snapshot contains.  NULL removes it.
 */
extern void nvm_gc_set_horizon_floor(void (*floor_fn) (NvmHorizon *h));

/*
 * nvm_gc_prune_chain frees the versions of record_no below its newest
 * all-visible version.  Returns false if another pruner holds the chain.
 */
extern bool nvm_gc_prune_chain(NvmTable *t, uint64_t record_no, const NvmHorizon *h,
							   NvmGcCounts *counts);

/*
 * Automatic pruning by writers: after an update has pushed a version (and
 * the writer is done with the row), the writer calls nvm_gc_after_update,
 * which prunes the row's chain with a horizon cached for at most
 * refresh_ms.  The store never calls into collection itself: the write
 * path (src/pg/am/nvm_modify.c) triggers it beside the deferred pruning, so
 * data flows one way, store <- gc <- writer.  Off by default: a process
 * turns it on only when every reader it shares the pool with pins its
 * snapshots.
 */
extern void nvm_gc_set_auto_prune(bool on, uint32_t refresh_ms);
extern void nvm_gc_after_update(NvmTable *t, uint64_t record_no);

/*
 * nvm_gc_set_number_reuse(false) makes this process's pruning give no
 * numbers back: the version slot of a collected version that is no index
 * root becomes unused (0) instead of going to the free list.  A standby's
 * replay (replica.h) prunes so, as the numbers are the primary's to hand
 * out; free_chain still touches only slots that name the version it frees.
 */
extern void nvm_gc_set_number_reuse(bool on);

/*
 * Deferred pruning of rows a thread wrote (see gc.c): nvm_gc_defer
 * remembers a row; nvm_gc_run_deferred prunes the remembered rows of table
 * t whose entries are at least min_age_ns old.  The caller guarantees that
 * t cannot be dropped meanwhile (the PG layer holds a lock on it).
 */
extern void nvm_gc_defer(NvmTable *t, uint64_t record_no);
extern void nvm_gc_run_deferred(NvmTable *t, uint64_t min_age_ns);

/* Deleted records (VACUUM). */
extern bool nvm_gc_record_is_dead(NvmTable *t, uint64_t record_no, const NvmHorizon *h);
extern bool nvm_gc_retire_record(NvmTable *t, uint64_t record_no, const NvmHorizon *h,
								 NvmGcCounts *counts);
extern bool nvm_gc_finish_retired(NvmTable *t, uint64_t record_no, const NvmHorizon *h,
								  NvmGcCounts *counts);

/*
 * nvm_gc_cached_horizon returns the calling thread's horizon, the one
 * automatic pruning uses (recomputed when older than its refresh interval,
 * never waited for), or NULL if none could be computed yet.  It may be
 * stale, which is safe: a horizon only grows.
 */
extern const NvmHorizon *nvm_gc_cached_horizon(void);

/*
 * nvm_gc_index_root_is_dead says whether the index entries that hold
 * version number root (an index run's root, see store.h) can never lead to
 * a row again, for any running or future view: no version of the run is
 * visible to anybody now, and none can be created.  Precisely, walking the
 * chain of root's record from its head, no version that is not aborted and
 * not a tombstone belongs to the run before the walk reaches the end of the
 * chain or a version all-visible under h (below which nobody looks).  Future
 * versions inherit the run of the version they replace, which is the newest
 * version that is not aborted; so they cannot join the run either.  h may be
 * NULL (then nothing counts as all-visible: only runs whose versions are all
 * aborted or gone are dead).  The chain is read under its pruning lock, so
 * the walk may go below what the caller's snapshot sees.  False when unsure:
 * root names no version or redirect, or changes meanwhile.
 *
 * The answer stays true: the number root keeps its version or redirect
 * until VACUUM has removed every index entry naming it (gc.h, "Index
 * roots"), so an entry found dead is never reused for another row.
 */
extern bool nvm_gc_index_root_is_dead(NvmTable *t, uint64_t root, const NvmHorizon *h);

/*
 * Index roots whose index run is gone: slot n redirects to a record that is
 * dead or has no version with index_root n, or holds a rolled-back index
 * root of a dead record.  nvm_gc_free_number gives a redirect's number back
 * after the index entries naming it are gone; a version's number goes when
 * its record is finished, or when a later VACUUM finds it cut into a
 * redirect.
 */
extern bool nvm_gc_number_is_dead_root(NvmTable *t, uint64_t version_no, const bool *dead_records,
									   uint64_t dead_records_len);
extern void nvm_gc_free_number(NvmTable *t, uint64_t version_no, NvmGcCounts *counts);

/* Per-table statistics, walked under the chain locks. */
typedef struct NvmTableStats
{
	uint64_t	records;		/* record numbers in use (retired ones included) */
	uint64_t	live_rows;		/* records whose newest committed version is a row */
	uint64_t	versions;		/* versions reachable from the heads */
	uint64_t	version_bytes;	/* their allocated bytes */
	uint64_t	longest_chain;
	uint64_t	reclaimable_versions;	/* what pruning and VACUUM would free now */
	uint64_t	reclaimable_bytes;
	uint64_t	dead_records;	/* records VACUUM would remove */
	uint64_t	retired_records;	/* removed, waiting to be finished */
	uint64_t	redirects;		/* version numbers kept as redirects */
	uint64_t	free_numbers;	/* version numbers on the free list */
	uint64_t	version_numbers;	/* version numbers ever handed out */
} NvmTableStats;

extern void nvm_gc_table_stats(NvmTable *t, const NvmHorizon *h, NvmTableStats *st);

#endif							/* NVM_GC_H */
