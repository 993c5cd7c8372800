/*-------------------------------------------------------------------------
 *
 * nvm_wait.h
 *	  Waiting for the transaction that is writing a row of an nvm table.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_WAIT_H
#define NVM_WAIT_H

#include "storage/lock.h"
#include "utils/rel.h"

#include "store.h"

#include "nvm_compat.h"

/* nvm.write_conflict */
typedef enum NvmWriteConflictPolicy
{
	NVM_WRITE_CONFLICT_WAIT = 0,
	NVM_WRITE_CONFLICT_ABORT
} NvmWriteConflictPolicy;

extern int	nvm_write_conflict;

extern void nvm_wait_define_settings(void);
extern Size nvm_wait_shmem_size(void);
extern void nvm_wait_shmem_startup(void);
extern void nvm_wait_before_subxact_change(void);
extern void nvm_wait_at_subxact_abort(void);
extern void nvm_wait_at_xact_end(void);
extern void nvm_wait_for_vxid(VirtualTransactionId vxid);
extern void nvm_wait_for_writer(Relation rel, NvmVersion *v);
pg_noreturn extern void nvm_report_write_conflict(Relation rel);

#endif							/* NVM_WAIT_H */
