/*-------------------------------------------------------------------------
 *
 * nvm_published.h
 *	  What the transaction running in a clock slot publishes for others:
 *	  its PostgreSQL xid, its xid stand-in and its virtual transaction id.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_PUBLISHED_H
#define NVM_PUBLISHED_H

#include "storage/lock.h"

extern Size nvm_published_shmem_size(void);
extern void nvm_published_shmem_startup(void);

extern void nvm_published_set_vxid(int slot, VirtualTransactionId vxid);
extern void nvm_published_set_xid(int slot, TransactionId xid);
extern void nvm_published_set_standin(int slot, uint32 standin);
extern void nvm_published_clear(int slot);
extern TransactionId nvm_published_xid(int slot);
extern uint32 nvm_published_standin(int slot);
extern VirtualTransactionId nvm_published_vxid(int slot);

#endif							/* NVM_PUBLISHED_H */
