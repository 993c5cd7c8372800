/*-------------------------------------------------------------------------
 *
 * nvm_rowlock.h
 *	  Row locks on nvm tables (SELECT FOR UPDATE/SHARE, foreign-key checks)
 *	  as lock words in the pool, one per record (nvm_lockword.h), and the
 *	  handshake between lockers and writers; writers' decision words are
 *	  nvm_decision.h's, a prepared transaction's locks
 *	  nvm_prepared_locks.h's.
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

/* Lockers (steps L2, L3) */
typedef enum NvmRowLockResult
{
	NVM_ROWLOCK_TAKEN,			/* installed, PROVISIONAL: keep or give back */
	NVM_ROWLOCK_HELD,			/* held in this mode or a stronger one already */
	NVM_ROWLOCK_BUSY			/* another transaction holds a conflicting mode */
} NvmRowLockResult;

extern NvmRowLockResult nvm_rowlock_take(Relation rel, const NvmTable *table,
										 uint64 record_no, LockTupleMode mode);
extern void nvm_rowlock_keep(void);
extern void nvm_rowlock_give_back(void);

/* Waiting for lockers (lockers, and writers in steps W1, W4) */
extern bool nvm_rowlock_conflicts(const NvmTable *table, uint64 record_no,
								  LockTupleMode mode);
extern bool nvm_rowlock_wait_lockers(Relation rel, const NvmTable *table,
									 uint64 record_no, LockTupleMode mode,
									 LockWaitPolicy policy);

/* A place in the queue of waiters for a row (see nvm_rowlock_enqueue). */
typedef struct NvmRowQueue
{
	bool		queued;
	LOCKTAG		tag;
	LOCKMODE	lockmode;
} NvmRowQueue;

extern void nvm_rowlock_enqueue(Relation rel, const NvmTable *table, uint64 record_no,
								LockTupleMode mode, bool own_newest, NvmRowQueue *q);
extern void nvm_rowlock_dequeue(NvmRowQueue *q);

/* VACUUM */
extern uint64 nvm_rowlock_vacuum(const NvmTable *table, uint64 nrec);

/* Transaction end (nvm_xact_end.c) */
extern void nvm_rowlock_at_xact_end(void);
extern void nvm_rowlock_at_subxact_abort(void);

#endif							/* NVM_ROWLOCK_H */
