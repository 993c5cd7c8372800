/*-------------------------------------------------------------------------
 *
 * nvm_decision.c
 *	  Writers' decision words (nvm_decision.h), one cache line per clock
 *	  slot in shared memory.  A writer that installs a version of a record
 *	  without holding its row lock sets its slot's word to a tag of the
 *	  record before the compare-and-swap (W2) and clears it after it has
 *	  kept or killed the version (W5).  A locker that holds a conflicting
 *	  lock from an earlier statement and meets the writer's running version
 *	  waits for the decision, not for the writer's transaction, and then
 *	  finds the version killed: the argument is in nvm_rowlock.c's header
 *	  ("Why this adds no deadlock heap does not have").  The word is set
 *	  before the compare-and-swap and cleared after the kill, with barriers,
 *	  so a reader that sees the version and then a cleared word also sees
 *	  the kill.  The words need no durability: a crash ends every decision.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/rel.h"

#include "txn.h"

#include "wait/nvm_decision.h"

typedef union NvmDecisionWord
{
	pg_atomic_uint64 tag;		/* 0: not deciding */
	char		pad[PG_CACHE_LINE_SIZE];
} NvmDecisionWord;

typedef struct NvmDecisionShared
{
	NvmDecisionWord deciding[NVM_MAX_SLOTS];	/* by clock slot */
} NvmDecisionShared;

static NvmDecisionShared *decision_shared = NULL;

/* The decision word this backend set, -1 if none. */
static int	deciding_slot = -1;

/*
 * nvm_decision_shmem_size says how much shared memory the decision words
 * take.
 */
Size
nvm_decision_shmem_size(void)
{
	return MAXALIGN(sizeof(NvmDecisionShared));
}

/*
 * nvm_decision_shmem_startup finds or creates the decision words.
 */
void
nvm_decision_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	decision_shared = ShmemInitStruct("nvmam row locks", nvm_decision_shmem_size(), &found);
	if (!found)
	{
		for (int i = 0; i < NVM_MAX_SLOTS; i++)
			pg_atomic_init_u64(&decision_shared->deciding[i].tag, 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

static inline uint64
decision_tag(Relation rel, uint64 record_no)
{
	uint64		tag = ((uint64) rel->rd_lockInfo.lockRelId.relId << 40) ^ record_no;

	return tag == 0 ? 1 : tag;
}

/*
 * nvm_decision_set publishes that this backend, on clock slot slot, is
 * about to install a version of record_no without holding its row lock
 * (step W2); nvm_decision_clear clears it (W5).
 */
void
nvm_decision_set(int slot, Relation rel, uint64 record_no)
{
	deciding_slot = slot;
	pg_atomic_write_u64(&decision_shared->deciding[slot].tag,
						decision_tag(rel, record_no));
	pg_write_barrier();
}

void
nvm_decision_clear(void)
{
	if (deciding_slot < 0)
		return;
	pg_write_barrier();			/* a kill is visible before the word clears */
	pg_atomic_write_u64(&decision_shared->deciding[deciding_slot].tag, 0);
	deciding_slot = -1;
}

/*
 * nvm_decision_wait waits while the transaction txid is deciding
 * whether to keep a version of record_no (W2..W5): a short wait, since the
 * other side waits for nothing meanwhile.  Returns true if it waited (the
 * caller rereads the chain).
 */
bool
nvm_decision_wait(uint64 txid, Relation rel, uint64 record_no)
{
	pg_atomic_uint64 *word = &decision_shared->deciding[nvm_txid_clock_id(txid)].tag;
	uint64		tag = decision_tag(rel, record_no);
	int			spins = 0;
	long		delay_us = 10;

	pg_read_barrier();
	if (pg_atomic_read_u64(word) != tag)
		return false;
	while (pg_atomic_read_u64(word) == tag && nvm_txid_is_running(txid))
	{
		CHECK_FOR_INTERRUPTS();
		if (++spins < 1000)
		{
			pg_spin_delay();
			continue;
		}
		pg_usleep(delay_us);
		delay_us = Min(delay_us * 2, 1000);
	}
	pg_read_barrier();
	return true;
}
