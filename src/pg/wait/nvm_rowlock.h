/*-------------------------------------------------------------------------
 *
 * nvm_rowlock.h
 *	  Row locks on nvm tables (SELECT FOR UPDATE/SHARE, foreign-key checks)
 *	  as lock words in the pool, one per record, and the handshake between
 *	  lockers and writers.
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

/* Decision words of writers (steps W2, W5) */
extern void nvm_rowlock_deciding(int slot, Relation rel, uint64 record_no);
extern void nvm_rowlock_decided(void);
extern bool nvm_rowlock_wait_decision(uint64 txid, Relation rel, uint64 record_no);

/* VACUUM */
extern uint64 nvm_rowlock_vacuum(const NvmTable *table, uint64 nrec);

/* PREPARE TRANSACTION and transaction end (nvm_xact_end.c) */
extern void nvm_rowlock_before_prepare(void);
extern void nvm_rowlock_log_prepared_words(const NvmTable *t);
extern void nvm_rowlock_at_xact_end(void);
extern void nvm_rowlock_at_subxact_abort(void);

#endif							/* NVM_ROWLOCK_H */
