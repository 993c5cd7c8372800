/*
 * pisces.h
 *	  Pisces's snapshot isolation (Gu et al., ATC'19, Algorithm 1), one of
 *	  the modes behind the transaction interface (txn.h), reached through
 *	  its NvmCcOps (ccmode.h) from txn.c only (and the unit tests): one
 *	  global timestamp, a snapshot that is one start timestamp, and a
 *	  commit that is durable before it is visible.
 *
 * On this store.  Pisces keeps MCSI's txids, clocks and status store (the
 * per-slot status rings with the dirty bit: mcsi.h); what it changes is
 * what a snapshot is and how a commit becomes visible:
 *	 - Snapshot: startTS = globalTS (one load of a cache line of its own).
 *	 - Commit, stage 1 (durable): the versions and the COMMITTED status are
 *	   made durable by txn.c before the completion is published (the order
 *	   every mode shares, txn.h).
 *	 - Commit, stage 2 (visible): inCritical = 1; endTS = globalTS + 1;
 *	   inCritical = 0; globalTS incremented.  endTS is stored in the slot's
 *	   commit-timestamp ring, at the transaction's clock value.
 *	 - Stage 3 (write-back) has no counterpart: versions are new objects in
 *	   their chains, never written back over a home copy; old versions go
 *	   when the collection horizon passes them (gc.h), which is Pisces's
 *	   grace period without the wait.
 *	 - Read: a version whose creator's slot is in its critical section is
 *	   waited for; otherwise it is in the snapshot iff the creator's endTS is
 *	   at most startTS.
 * An aborted transaction is published with endTS = globalTS and no
 * increment (its versions are never visible; the entry only says it has
 * completed).
 *
 * The commit-timestamp ring.  Slot c keeps the endTS of its last
 * NVM_PISCES_RING clock values in shared memory (0 while the transaction
 * runs).  An entry is reused only when every snapshot in use (every pin,
 * gc.h) and every future one counts its transaction as completed: its
 * endTS is at most the collection horizon.  A reader that finds its
 * txid's entry reused therefore counts it as completed, rightly.  When the
 * entry is still needed, the slot's next transaction cannot start
 * (NVM_INVALID_TXID: the PG layer reports it, as N2DB's full commit log),
 * until the old snapshot is released.  Transactions from before start-up
 * (or before the pool became a Pisces pool) completed before every
 * snapshot: the slot's boot value says which.
 *
 * Persist orders: those of MCSI's clocks and status words (mcsi.h); the
 * global timestamp and the ring are volatile (after a crash every
 * transaction from before has completed).
 */
#ifndef NVM_PISCES_H
#define NVM_PISCES_H

#include "ccmode.h"

/* commit timestamps kept per slot (a power of two) */
#define NVM_PISCES_RING		4096

/*
 * Pisces's shared state (nvm_cc_mode_state): the global timestamp on its
 * own cache line, the oldest start timestamp any snapshot in use may have
 * (a cache of the collection horizon), each slot's in-critical flag on its
 * own cache line, and the slots' commit-timestamp rings.  POMVCC keeps one
 * too (pomvcc.h), behind its own timestamps, and uses the functions below.
 */
typedef struct NvmPiscesFlag
{
	_Alignas(NVM_CACHELINE) _Atomic uint32_t in_critical;
} NvmPiscesFlag;

typedef struct NvmPiscesShared
{
	_Alignas(NVM_CACHELINE) _Atomic uint64_t global_ts;
	_Alignas(NVM_CACHELINE) _Atomic uint64_t horizon;	/* only rises */
	uint32_t	max_slots;
	NvmPiscesFlag flags[NVM_MAX_SLOTS];
	_Atomic uint64_t end_ts[];	/* max_slots * NVM_PISCES_RING */
} NvmPiscesShared;

extern const NvmCcOps nvm_pisces_ops;

/*
 * The commit-timestamp rings, for the modes that keep them (Pisces,
 * POMVCC): their size and set-up; the test of a txid against a start
 * timestamp; handing out a txid once its entry may be reused; and
 * recording a transaction's endTS (plain: Pisces's own commit adds the
 * in-critical section around it).
 */
extern size_t nvm_pisces_rings_size(uint32_t max_slots);
extern void nvm_pisces_rings_init(NvmPiscesShared *ps, uint32_t max_slots);
extern bool nvm_pisces_completed_by(NvmPiscesShared *ps, uint64_t txid, uint64_t start);
extern uint64_t nvm_pisces_assign_in(NvmPiscesShared *ps, uint32_t slot);
extern void nvm_pisces_set_end(NvmPiscesShared *ps, uint32_t c, uint64_t ts, uint64_t end);

/* The collection horizon's operations of a start-timestamp mode (ccmode.h). */
extern void nvm_pisces_horizon_lower(NvmHorizon *h, _Atomic uint64_t *vec, uint32_t nvec, uint64_t xmin);
extern void nvm_pisces_horizon_lower_to(NvmHorizon *h, const NvmHorizon *to);

#endif							/* NVM_PISCES_H */
