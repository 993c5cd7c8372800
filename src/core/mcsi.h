/*
 * mcsi.h
 *	  Multi-clock snapshot isolation (MCSI paper §4), one of the two designs
 *	  behind the transaction interface (txn.h), called by txn.c only (and
 *	  the unit tests): per-slot clocks, persistent per-slot status rings
 *	  with the dirty-bit helping protocol (Algorithm 1), the last-completed
 *	  array, and vector snapshots generated under a try-lock with buffering.
 *	  Its sibling n2db.h is the N2DB baseline.
 *
 * Persist orders:
 *	 - Clock: a clock value is handed out only if it is below the slot's
 *	   persisted clock_reserved; raising clock_reserved is persisted (flush +
 *	   drain) before the new values are used, so clocks never go back, even
 *	   across crashes.
 *	 - Status word: the new value is stored with the dirty bit set, flushed
 *	   and drained, and only then is the dirty bit cleared
 *	   (nvm_status_word_set); txn.h says where commit and abort use it.
 */
#ifndef NVM_MCSI_H
#define NVM_MCSI_H

#include "ccstate.h"

#define NVM_STATUS_PER_WORD		31
#define NVM_STATUS_DIRTY_BIT	(UINT64_C(1) << 63)

/* Low-level status-word operations (Algorithm 1), exposed for unit tests. */
extern void nvm_status_word_set(_Atomic uint64_t *word, int index, NvmTxnStatus status);
extern NvmTxnStatus nvm_status_word_get(_Atomic uint64_t *word, int index);

/* The status ring of txid's slot: read (helping), set durably, recover. */
extern NvmTxnStatus nvm_mcsi_get_status(uint64_t txid);
extern void nvm_mcsi_set_status(uint64_t txid, NvmTxnStatus status);
extern bool nvm_mcsi_status_entry(uint64_t txid, NvmTxnStatus *status);
extern uint64_t nvm_mcsi_ring_size(void);
extern void nvm_mcsi_recover(uint32_t max_slots);
extern void nvm_mcsi_recover_indoubt(uint32_t c, uint64_t ts);

/* Clocks and the last-completed array. */
extern uint64_t nvm_mcsi_handed_out_limit(uint32_t c);
extern uint64_t nvm_mcsi_assign(uint32_t slot);
extern void nvm_mcsi_complete(uint32_t c, uint64_t ts);

/*
 * nvm_mcsi_completed says whether txid's clock value is at or below its
 * slot's last completed value: it has completed, whatever its status says.
 */
static inline bool
nvm_mcsi_completed(uint64_t txid)
{
	return nvm_txid_clock_ts(txid) <=
		atomic_load_explicit(&nvm_cc->slots[nvm_txid_clock_id(txid)].last_completed, memory_order_acquire);
}

/* Vector snapshots. */
extern void nvm_mcsi_snapshot(NvmSnapshot *snap, NvmSnapshotPolicy policy);

/*
 * nvm_mcsi_snapshot_contains says whether the vector snapshot snap counts
 * txid as completed.  Inline: every visibility check runs it.
 */
static inline bool
nvm_mcsi_snapshot_contains(const NvmSnapshot *snap, uint64_t txid)
{
	uint32_t	c = nvm_txid_clock_id(txid);
	uint64_t	ts = nvm_txid_clock_ts(txid);
	uint64_t	limit;

	if (c < snap->nslots)
		limit = snap->ts[c];
	else
		limit = nvm_cc->slots[c].boot_last_completed;
	return ts <= limit;
}

/* The collection horizon's vector (gc.h; called through txn.c). */
extern void nvm_mcsi_horizon_start(NvmHorizon *h);
extern void nvm_mcsi_horizon_lower(NvmHorizon *h, _Atomic uint64_t *vec, uint32_t nvec);
extern void nvm_mcsi_horizon_lower_to(NvmHorizon *h, const NvmHorizon *to);
extern bool nvm_mcsi_horizon_contains(const NvmHorizon *h, uint64_t txid);

#endif							/* NVM_MCSI_H */
