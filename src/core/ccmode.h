/*
 * ccmode.h
 *	  The concurrency-control modes and the interface every mode
 *	  implements: the mode numbers a pool records (NvmPoolHeader.cc_mode),
 *	  their names (nvm.concurrency_control), and NvmCcOps, the table of
 *	  operations through which the transaction interface (txn.c) reaches a
 *	  mode's design.  txn.c registers one NvmCcOps per mode; nothing else
 *	  chooses between modes.
 *
 * Adding a mode: a number and a name below, the mode's own file pair
 * (x.h declaring its NvmCcOps, x.c implementing it), its entry in txn.c's
 * registry, and its source in meson.build.  Code that loops over the modes
 * (tests, benchmarks, settings) runs from NVM_CC_FIRST to NVM_CC_END.
 *
 * What a mode owns:
 *	 - its status store in the pool (where a transaction's RUNNING,
 *	   COMMITTED or ABORTED lives until the status is inlined into its
 *	   versions), and the store's recovery;
 *	 - how txids are handed out (the clock slot is always the txid's top
 *	   bits; the value below it is the mode's) and how their reservation is
 *	   persisted;
 *	 - the shared state behind its snapshots (state_size bytes of shared
 *	   memory, nvm_cc_mode_state()), the snapshot, and the test of a txid
 *	   against one;
 *	 - its part of the collection horizon (gc.h).
 * What every mode shares (txn.c): clock slots and their persisted clock
 * reservations, write logs, the order of a commit (versions durable, then
 * the status, then the inlined statuses, then the completion published);
 * in-doubt and prepared transactions (indoubt.c), recovery and mode
 * conversion (recover.c).
 */
#ifndef NVM_CCMODE_H
#define NVM_CCMODE_H

#include "ccstate.h"

/* Concurrency-control modes (NvmPoolHeader.cc_mode, nvm.concurrency_control). */
typedef enum NvmCcMode
{
	NVM_CC_MCSI = 1,			/* multi-clock snapshot isolation: mcsi.h */
	NVM_CC_N2DB = 2,			/* the N2DB baseline: n2db.h */
	NVM_CC_PISCES = 3,			/* Pisces's global timestamp: pisces.h */
	NVM_CC_POMVCC = 4,			/* POMVCC's shared commit timestamps: pomvcc.h */
	NVM_CC_END					/* one past the last mode */
} NvmCcMode;

#define NVM_CC_FIRST NVM_CC_MCSI

/* nvm_cc_mode_name is the name of mode (nvm.concurrency_control), "unknown" if it is none. */
static inline const char *
nvm_cc_mode_name(uint32_t mode)
{
	static const char *const names[NVM_CC_END] = {
		[NVM_CC_MCSI] = "mcsi",
		[NVM_CC_N2DB] = "n2db",
		[NVM_CC_PISCES] = "pisces",
		[NVM_CC_POMVCC] = "pomvcc",
	};

	return mode >= NVM_CC_FIRST && mode < NVM_CC_END ? names[mode] : "unknown";
}

/* nvm_cc_mode_known says whether mode is one this build implements. */
static inline bool
nvm_cc_mode_known(uint32_t mode)
{
	return mode >= NVM_CC_FIRST && mode < NVM_CC_END;
}

/*
 * The operations of a mode.  ts is a clock value (the low bits of a txid),
 * c a clock slot.  Every operation is required unless its comment says
 * NULL is allowed.
 */
typedef struct NvmCcOps
{
	/* shared state: its size for max_slots slots, and its set-up from the pool */
	size_t		(*state_size) (uint32_t max_slots);
	void		(*state_init) (void *state);

	/*
	 * Status store.  recover_store makes every non-final entry ABORTED (the
	 * caller drains).  status_set stores a status durably; status_get reads
	 * one as the store has it durably.  status_entry reads txid's entry as
	 * it is and says whether txid is from the store's current era (see
	 * nvm_status_entry); ring_size is the number of entries after which the
	 * store reuses one.  known_completed (NULL if the mode has no such
	 * shortcut) says, without the store, that txid has completed.
	 */
	void		(*recover_store) (uint32_t max_slots);
	NvmTxnStatus (*status_get) (uint64_t txid);
	void		(*status_set) (uint64_t txid, NvmTxnStatus status);
	bool		(*status_entry) (uint64_t txid, NvmTxnStatus *status);
	uint64_t	(*ring_size) (void);
	bool		(*known_completed) (uint64_t txid);

	/*
	 * Txids.  handed_out_limit is a value every ts of slot c handed out so
	 * far is below (it only grows; also before the shared state exists,
	 * from the pool).  assign gives slot the next txid and stores RUNNING
	 * in its status entry, flushed but not drained (NVM_INVALID_TXID if the
	 * store has no room; store_full then says why, for the user).
	 * publish_completion makes snapshots taken from now on include slot
	 * c's transaction ts, whose final status (durable) is status.
	 * recover_indoubt keeps a recovered in-doubt transaction out of every
	 * snapshot until its completion is published.
	 */
	uint64_t	(*handed_out_limit) (uint32_t c);
	uint64_t	(*assign) (uint32_t slot);
	void		(*publish_completion) (uint32_t c, uint64_t ts, NvmTxnStatus status);
	void		(*recover_indoubt) (uint32_t c, uint64_t ts);

	/*
	 * Snapshots.  snapshot takes one (policy: MCSI's buffering, see
	 * NvmSnapshotPolicy; other modes may ignore it) and sets snap->mode;
	 * snapshot_contains says whether txid had completed when snap was
	 * taken (committed or aborted: the caller checks which).
	 */
	void		(*snapshot) (NvmSnapshot *snap, NvmSnapshotPolicy policy);
	bool		(*snapshot_contains) (const NvmSnapshot *snap, uint64_t txid);

	/*
	 * The collection horizon (gc.h): horizon_start sets h to what every
	 * future snapshot contains (false if out of memory); horizon_lower
	 * lowers it to a pinned snapshot's (vec, nvec: its vector; xmin: its
	 * xmin); horizon_lower_to lowers it to another horizon of the mode;
	 * horizon_contains says whether every snapshot h stands for counts txid
	 * as completed.
	 */
	bool		(*horizon_start) (NvmHorizon *h);
	void		(*horizon_lower) (NvmHorizon *h, _Atomic uint64_t *vec, uint32_t nvec, uint64_t xmin);
	void		(*horizon_lower_to) (NvmHorizon *h, const NvmHorizon *to);
	bool		(*horizon_contains) (const NvmHorizon *h, uint64_t txid);

	/* why assign may find no room (a sentence, for the user), NULL if it cannot */
	const char *store_full;

	/*
	 * Whether every snapshot contains every commit acknowledged before it
	 * was taken, in any session, as PostgreSQL's do: what SERIALIZABLE
	 * builds on (POMVCC's do not).
	 */
	bool		serializable;
} NvmCcOps;

#endif							/* NVM_CCMODE_H */
