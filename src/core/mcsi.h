/*
 * mcsi.h
 *	  Multi-clock snapshot isolation (MCSI paper §4), one of the modes
 *	  behind the transaction interface (txn.h), reached through its
 *	  NvmCcOps (ccmode.h) from txn.c only (and the unit tests): per-slot
 *	  clocks, persistent per-slot status rings
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

#include "ccmode.h"

#define NVM_STATUS_PER_WORD		31
#define NVM_STATUS_DIRTY_BIT	(UINT64_C(1) << 63)

/*
 * MCSI's shared state (nvm_cc_mode_state): the snapshot generation's
 * try-lock and counter, and the buffers of the last two generations.  The
 * clocks and the last-completed array are the slots' (NvmSlotShared).
 */
typedef struct NvmMcsiShared
{
	NvmSpinLock snapshot_lock;	/* serialises snapshot generation */
	_Alignas(NVM_CACHELINE) _Atomic uint64_t snapshot_gen;	/* odd while a generation scans */
	/* generation k (ending at counter 2k) writes buffer k % 2 */
	uint32_t	buffered_nslots[2];
	uint64_t	buffered_ts[2][NVM_MAX_SLOTS];
} NvmMcsiShared;

extern const NvmCcOps nvm_mcsi_ops;

/*
 * MCSI's status store, clocks and last-completed array, which Pisces
 * (pisces.h) shares: the operations of nvm_mcsi_ops of the same names
 * (ccmode.h says what each does).
 */
extern void nvm_mcsi_recover_store(uint32_t max_slots);
extern NvmTxnStatus nvm_mcsi_status_get(uint64_t txid);
extern void nvm_mcsi_status_set(uint64_t txid, NvmTxnStatus status);
extern bool nvm_mcsi_status_entry(uint64_t txid, NvmTxnStatus *status);
extern uint64_t nvm_mcsi_ring_size(void);
extern bool nvm_mcsi_known_completed(uint64_t txid);
extern uint64_t nvm_mcsi_handed_out_limit(uint32_t c);
extern uint64_t nvm_mcsi_assign(uint32_t slot);
extern void nvm_mcsi_publish_completion(uint32_t c, uint64_t ts, NvmTxnStatus status);
extern void nvm_mcsi_recover_indoubt(uint32_t c, uint64_t ts);

/* the operations of MCSI's status store and clocks, in an NvmCcOps initializer */
#define NVM_MCSI_STORE_OPS \
	.recover_store = nvm_mcsi_recover_store, \
	.status_get = nvm_mcsi_status_get, \
	.status_set = nvm_mcsi_status_set, \
	.status_entry = nvm_mcsi_status_entry, \
	.ring_size = nvm_mcsi_ring_size, \
	.known_completed = nvm_mcsi_known_completed, \
	.handed_out_limit = nvm_mcsi_handed_out_limit

extern void nvm_status_word_set(_Atomic uint64_t *word, int index, NvmTxnStatus status);
extern NvmTxnStatus nvm_status_word_get(_Atomic uint64_t *word, int index);

#endif							/* NVM_MCSI_H */
