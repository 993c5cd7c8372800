/*
 * recover.h
 *	  The transactions' state at start-up: recovery of the status store, the
 *	  clocks, the write logs and the transactions in doubt, and the
 *	  conversion of a recovered pool to another concurrency-control mode.
 *	  core.c runs both (nvm_core_startup).
 */
#ifndef NVM_RECOVER_H
#define NVM_RECOVER_H

#include "nvm_types.h"

/*
 * nvm_cc_recover runs at start-up (also after a crash-restart): every
 * status entry that is not final becomes ABORTED (persisted), clocks resume
 * at the persisted reservation, and the last-completed array is set so that
 * every transaction from before the start counts as completed.  shmem is
 * the concurrency-control state's area (nvm_cc_shmem_size bytes, txn.h).
 */
extern void nvm_cc_recover(void *shmem, uint32_t max_slots);

/*
 * nvm_cc_convert restarts every clock and the global counter above every
 * txid handed out so far and records the new mode (after recovery).
 */
extern void nvm_cc_convert(uint32_t new_mode);

#endif							/* NVM_RECOVER_H */
