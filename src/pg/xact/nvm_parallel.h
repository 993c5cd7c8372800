/*-------------------------------------------------------------------------
 *
 * nvm_parallel.h
 *	  The leader's view for parallel workers (nvm_parallel.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_PARALLEL_H
#define NVM_PARALLEL_H

#include "txn.h"

extern Size nvm_parallel_shmem_size(void);
extern void nvm_parallel_shmem_startup(void);
extern bool nvm_parallel_may_publish(void);
extern void nvm_parallel_publish(const NvmSnapshot *snap, uint64 txid, bool imported);
extern bool nvm_parallel_worker_ready(void);
extern const NvmSnapshot *nvm_parallel_leader_snapshot(void);
extern uint64 nvm_parallel_leader_txid(void);
extern bool nvm_parallel_leader_imported(void);

#endif							/* NVM_PARALLEL_H */
