/*-------------------------------------------------------------------------
 *
 * nvm_lockword.h
 *	  A row's lock word in the pool: its bits, and the lockers it names read
 *	  back (nvm_lockword.c).  Row locks are taken and waited for by
 *	  nvm_rowlock.c; a prepared transaction's words are marked by
 *	  nvm_prepared_locks.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_LOCKWORD_H
#define NVM_LOCKWORD_H

#include "access/multixact.h"
#include "nodes/lockoptions.h"
#include "port/atomics.h"
#include "storage/lockdefs.h"

#include "store.h"

/* Bits of a lock word (see nvm_lockword.c's header). */
#define NVM_LW_XID_MASK			UINT64CONST(0xffffffff)
#define NVM_LW_MULTI			(UINT64CONST(1) << 32)
#define NVM_LW_MODE_SHIFT		33
#define NVM_LW_MODE_MASK		(UINT64CONST(3) << NVM_LW_MODE_SHIFT)
#define NVM_LW_PROVISIONAL		(UINT64CONST(1) << 35)
#define NVM_LW_PREPARED			(UINT64CONST(1) << 36)
#define NVM_LW_GEN_SHIFT		40
#define NVM_LW_GEN_MASK			UINT64CONST(0xffffff)

#define NVM_LW_XID(w)			((uint32) ((w) & NVM_LW_XID_MASK))
#define NVM_LW_MODE(w)			((LockTupleMode) (((w) & NVM_LW_MODE_MASK) >> NVM_LW_MODE_SHIFT))
#define NVM_LW_GEN(w)			((uint32) ((w) >> NVM_LW_GEN_SHIFT))

/*
 * The lockers a word names, as read now: their xids and modes, whether
 * each is this transaction's, and whether it still runs.
 */
typedef struct NvmLockers
{
	int			n;
	MultiXactMember *members;	/* n of them */
	bool	   *own;
	bool	   *running;
	bool		valid;			/* the word means something at all */
	bool		provisional;	/* a locker of this start is deciding */
	MultiXactMember one;		/* storage for a single locker */
	bool		one_own;
	bool		one_running;
} NvmLockers;

/* Lock modes: heap's, with heap's conflicts (README.tuplock). */
extern bool nvm_lockword_modes_conflict(LockTupleMode a, LockTupleMode b);
extern LockTupleMode nvm_lockword_writer_mode(NvmVersion *v);
extern LOCKMODE nvm_lockword_hw_mode(LockTupleMode mode);
extern MultiXactStatus nvm_lockword_status_of(LockTupleMode mode);
extern LockTupleMode nvm_lockword_status_mode(MultiXactStatus status);

/* Reading a word: this start's number, the lockers it names. */
extern uint64 nvm_lockword_gen(void);
extern void nvm_lockword_read(uint64 word, NvmLockers *l);
extern void nvm_lockword_free(NvmLockers *l);
extern bool nvm_lockword_any_running(const NvmLockers *l);
extern int	nvm_lockword_conflicting_other(const NvmLockers *l, LockTupleMode mode);
extern int	nvm_lockword_own_mode(const NvmLockers *l);
extern void nvm_lockword_clear_if_ended(pg_atomic_uint64 *word, uint64 old, const NvmLockers *l);

/* nvm_lockword_pg gives the PostgreSQL view of a word in the pool. */
static inline pg_atomic_uint64 *
nvm_lockword_pg(_Atomic uint64_t *word)
{
	StaticAssertStmt(sizeof(pg_atomic_uint64) == sizeof(uint64), "lock words are 8 bytes");
	return (pg_atomic_uint64 *) word;
}

#endif							/* NVM_LOCKWORD_H */
