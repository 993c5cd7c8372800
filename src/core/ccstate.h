/*
 * ccstate.h
 *	  The concurrency-control state that the transaction interface (txn.c)
 *	  shares with the designs behind it (ccmode.h: MCSI's mcsi.c, N2DB's
 *	  n2db.c): the per-slot and global state in shared memory, the snapshot
 *	  and the collection horizon.  The process's pointers to it are defined
 *	  in ccstate.c.  Each mode keeps its own shared state in its own
 *	  header; only txn.c includes the modes' headers, so calls run one way:
 *	  txn.c -> a mode -> pool, persist.
 */
#ifndef NVM_CCSTATE_H
#define NVM_CCSTATE_H

#include "nvm_types.h"

#define NVM_CLOCK_RESERVE_STEP	4096

/*
 * Volatile per-slot state in shared memory.  last_completed is on its own
 * cache line (the paper's global completed-timestamp array).
 */
typedef struct NvmSlotShared
{
	_Alignas(NVM_CACHELINE) _Atomic uint64_t last_completed;
	_Alignas(NVM_CACHELINE) atomic_uint in_use;	/* owned by a backend */
	uint32_t	owner_pid;
	_Atomic uint64_t running_txid;	/* txid being run, 0 if none */
	uint64_t	next_ts;		/* owner-private: next clock value */
	uint64_t	boot_last_completed;	/* last completed value at start-up */
	_Atomic uint64_t indoubt_txid;	/* unresolved in-doubt transaction (recovered or prepared) */
	uint64_t	indoubt_xid;	/* ... and the external xid that decides it */
} NvmSlotShared;

/*
 * How MCSI hands out snapshots when another backend is generating one
 * (paper §4.3, snapshot buffering):
 *	 JOIN	(default) wait for a generation that began after the caller
 *			arrived and use its result, or generate one itself: a
 *			transaction always sees every transaction that completed before
 *			it asked, as in PostgreSQL;
 *	 PAPER	reuse the last buffered snapshot at once (the paper's plain
 *			buffering): it may predate commits that finished before the
 *			caller asked, even the caller's own previous commit;
 *	 LOCKED	no buffering: wait for the lock and scan.
 */
typedef enum NvmSnapshotPolicy
{
	NVM_SNAPSHOT_JOIN = 0,
	NVM_SNAPSHOT_PAPER,
	NVM_SNAPSHOT_LOCKED
} NvmSnapshotPolicy;

/*
 * The shared state of concurrency control, one for the server: the mode,
 * the slots, and after them the mode's own state (state_size bytes of the
 * mode's NvmCcOps, at state_off; nvm_cc_mode_state), which only the mode's
 * file reads.
 */
typedef struct NvmCcShared
{
	uint32_t	cc_mode;		/* NvmCcMode (ccmode.h) */
	uint32_t	snapshot_policy;	/* NvmSnapshotPolicy */
	uint32_t	max_slots;
	_Atomic uint32_t slots_high_water;	/* slots [0, hw) may have been used since start-up */
	NvmSpinLock slot_alloc_lock;
	NvmSpinLock indoubt_lock;	/* serialises resolving in-doubt transactions */
	_Atomic uint32_t indoubt_count; /* unresolved in-doubt transactions */
	uint64_t	state_off;		/* offset of the mode's state from this struct */
	NvmSlotShared slots[];		/* max_slots entries */
} NvmCcShared;

extern NvmCcShared *nvm_cc;

/* the current mode's shared state, NULL before start-up (txn.c sets it with nvm_cc; ccstate.c) */
extern void *nvm_cc_state;

/* nvm_cc_mode_state is the current mode's shared state (NULL before start-up). */
static inline void *
nvm_cc_mode_state(void)
{
	return nvm_cc_state;
}

/*
 * A snapshot.  MCSI: a vector, ts[c] is the last completed clock value of
 * slot c when the snapshot was taken; slots at or above nslots had not been
 * used since start-up, and for them the boot value applies.  N2DB: every
 * txid value below xmin has completed, none at or above xmax has, and in
 * between all but the nslots values listed in ts[] (the in-progress list).
 * Only the first nvm_snapshot_size() bytes are meaningful (copy those).
 */
typedef struct NvmSnapshot
{
	uint32_t	mode;			/* NvmCcMode (ccmode.h) */
	uint32_t	nslots;			/* entries of ts[] in use */
	uint64_t	xmin;			/* N2DB */
	uint64_t	xmax;			/* N2DB */
	uint64_t	ts[NVM_MAX_SLOTS];
} NvmSnapshot;

/*
 * The collection horizon (gc.h): what every snapshot, present (pinned) or
 * future, contains.  MCSI: a vector like a snapshot's, ts[c] the smallest
 * clock value of slot c that all of them count as completed; N2DB: every
 * txid value below xmin.  Each mode computes its part (mcsi.c, n2db.c,
 * through txn.c); gc.c adds the pins' epochs and the external floor.
 */
typedef struct NvmHorizon
{
	uint32_t	mode;			/* NvmCcMode (ccmode.h) */
	uint32_t	nslots;			/* MCSI: ts[] entries; slots above use their boot value */
	uint64_t	xmin;			/* N2DB: every txid value below it is all-visible if committed */
	uint64_t	min_epoch;		/* oldest epoch of any pin (UINT64_MAX if none) */
	uint32_t	external_floor; /* see nvm_gc_set_external_floor; 0 = none */
	uint64_t	ts[NVM_MAX_SLOTS];
} NvmHorizon;

/*
 * nvm_cc_horizon_fn computes the collection horizon (gc.c sets it at
 * start-up to nvm_gc_horizon; NULL before): for a mode that must know what
 * every snapshot in use contains (Pisces, before it reuses an entry).
 * False if it could not be computed.
 */
extern bool (*nvm_cc_horizon_fn) (NvmHorizon *h);

#endif							/* NVM_CCSTATE_H */
