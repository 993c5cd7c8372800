/*-------------------------------------------------------------------------
 *
 * nvm_rowlock.h
 *	  Row locks on nvm tables (SELECT FOR UPDATE/SHARE, foreign-key checks)
 *	  as heavyweight locks on records, and the handshake that lets writers
 *	  skip them while nobody locks rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_ROWLOCK_H
#define NVM_ROWLOCK_H

#include "access/tableam.h"
#include "nodes/lockoptions.h"
#include "storage/lock.h"
#include "utils/rel.h"

#include "store.h"

extern Size nvm_rowlock_shmem_size(void);
extern void nvm_rowlock_shmem_startup(void);

/* Lock modes */
extern bool nvm_rowlock_modes_conflict(LockTupleMode a, LockTupleMode b);
extern LockTupleMode nvm_rowlock_writer_mode(NvmVersion *v);

/* A place in the queue of waiters for a row (see nvm_rowlock_enqueue). */
typedef struct NvmRowQueue
{
	bool		queued;
	LOCKTAG		tag;
	LOCKMODE	lockmode;
} NvmRowQueue;

/* Row locks and waiting for their holders */
extern bool nvm_rowlock_try(Relation rel, uint64 record_no, LockTupleMode mode);
extern void nvm_rowlock_release(Relation rel, uint64 record_no, LockTupleMode mode);
extern bool nvm_rowlock_free(Relation rel, uint64 record_no, LockTupleMode mode);
extern bool nvm_rowlock_try_provisional(Relation rel, uint64 record_no, LockTupleMode mode);
extern void nvm_rowlock_settle(void);
extern void nvm_rowlock_enqueue(Relation rel, uint64 record_no, LockTupleMode mode,
								bool own_newest, NvmRowQueue *q);
extern void nvm_rowlock_dequeue(NvmRowQueue *q);
extern void nvm_rowlock_wait_holders(Relation rel, uint64 record_no, LockTupleMode mode,
									 bool keep);

/* Locker counts (lockers announce, writers look) */
extern void nvm_rowlock_announce(Relation rel);
extern bool nvm_rowlock_lockers_present(Relation rel);
extern void nvm_rowlock_forget_ended_prepared(void);

/* Decision words of writers */
extern void nvm_rowlock_deciding(int slot, Relation rel, uint64 record_no);
extern void nvm_rowlock_decided(void);
extern bool nvm_rowlock_wait_decision(uint64 txid, Relation rel, uint64 record_no);

#endif							/* NVM_ROWLOCK_H */
