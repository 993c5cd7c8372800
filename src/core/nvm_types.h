/*
 * nvm_types.h
 *	  Basic types, constants and small inline helpers shared by the whole
 *	  nvmam storage core.
 *
 * The core (everything under src/core/) never includes PostgreSQL headers.
 * It talks about offsets into the persistent pool (nvm_off), transaction ids
 * made of a clock id and a clock value, and a few status codes.  The
 * PostgreSQL table-AM layer (src/pg/) translates between these and
 * PostgreSQL's own notions.
 */
#ifndef NVM_TYPES_H
#define NVM_TYPES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* An offset into the pool; 0 means "none".  Never store pointers in the pool. */
typedef uint64_t nvm_off;

#define NVM_CACHELINE 64

/*
 * Transaction ids (MCSI paper §4.2): the top 10 bits are the clock id (the
 * clock slot the transaction ran on), the low 54 bits the clock value of
 * that slot when the transaction started.  Clock values start at 1, so the
 * txid 0 is never a real transaction.
 */
#define NVM_CLOCK_ID_BITS	10
#define NVM_CLOCK_TS_BITS	54
#define NVM_MAX_SLOTS		(1 << NVM_CLOCK_ID_BITS)	/* 1024 */
#define NVM_CLOCK_TS_MASK	((UINT64_C(1) << NVM_CLOCK_TS_BITS) - 1)
#define NVM_INVALID_TXID	UINT64_C(0)

static inline uint64_t
nvm_make_txid(uint32_t clock_id, uint64_t clock_ts)
{
	return ((uint64_t) clock_id << NVM_CLOCK_TS_BITS) | (clock_ts & NVM_CLOCK_TS_MASK);
}

static inline uint32_t
nvm_txid_clock_id(uint64_t txid)
{
	return (uint32_t) (txid >> NVM_CLOCK_TS_BITS);
}

static inline uint64_t
nvm_txid_clock_ts(uint64_t txid)
{
	return txid & NVM_CLOCK_TS_MASK;
}

/* Transaction status values kept in status arrays and inlined in versions. */
typedef enum NvmTxnStatus
{
	NVM_STATUS_INITIAL = 0,		/* never started (or unknown) */
	NVM_STATUS_RUNNING = 1,
	NVM_STATUS_COMMITTED = 2,
	NVM_STATUS_ABORTED = 3
} NvmTxnStatus;

/*
 * A spinlock in (volatile) shared memory.  Only for short critical sections
 * that never block; never placed in the pool (a lock in persistent memory
 * would still look held after a crash).
 */
typedef struct NvmSpinLock
{
	atomic_uint locked;
} NvmSpinLock;

static inline void
nvm_spin_init(NvmSpinLock *lock)
{
	atomic_store_explicit(&lock->locked, 0, memory_order_relaxed);
}

static inline bool
nvm_spin_trylock(NvmSpinLock *lock)
{
	return atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire) == 0;
}

extern void nvm_spin_lock_slow(NvmSpinLock *lock);

static inline void
nvm_spin_lock(NvmSpinLock *lock)
{
	if (!nvm_spin_trylock(lock))
		nvm_spin_lock_slow(lock);
}

static inline void
nvm_spin_unlock(NvmSpinLock *lock)
{
	atomic_store_explicit(&lock->locked, 0, memory_order_release);
}

#define NVM_ALIGN_UP(x, a)	(((x) + ((a) - 1)) & ~((uint64_t) (a) - 1))

/*
 * nvm_array_grow doubles the capacity *cap of a process-local array arr of
 * elements of elem bytes (to first elements when it has none) and returns
 * the array, moved by realloc.  Running out of process memory aborts: the
 * callers are in the middle of a write and have nothing sane to do.
 */
static inline void *
nvm_array_grow(void *arr, size_t *cap, size_t elem, size_t first)
{
	size_t		newcap = *cap ? *cap * 2 : first;
	void	   *p = realloc(arr, newcap * elem);

	if (p == NULL)
		abort();
	*cap = newcap;
	return p;
}

#endif							/* NVM_TYPES_H */
