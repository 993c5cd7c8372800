/*-------------------------------------------------------------------------
 *
 * nvm_lockword.c
 *	  A row's lock word in the pool (nvm_lockword.h): the modes and their
 *	  conflicts, and the lockers a word names read back, with whether each
 *	  is this transaction's and still runs.  How the words are taken and
 *	  waited for is nvm_rowlock.c's; a prepared transaction's words are
 *	  nvm_prepared_locks.c's.
 *
 * Where the locks live.  Heap keeps a row lock in the tuple header (xmax
 * and infomask bits, a MultiXactId for several lockers) and uses the lock
 * manager only for waiting (README.tuplock).  An nvm version never changes
 * once published, so the lock of a row lives next to it: every table has,
 * from the first row lock taken in it, an array of lock words in the pool,
 * one 8-byte word per record number (store.h, nvm_record_lock_word).  A
 * word names the locker, as heap's xmax does:
 *
 *	 bits  0..31	the locker's xid (the current subtransaction's, as heap
 *					takes it), or a MultiXactId of several lockers
 *	 bit  32		MULTI: bits 0..31 are a MultiXactId, whose members carry
 *					heap's lock-only statuses (ForKeyShare ... ForUpdate)
 *	 bits 33..34	the strongest LockTupleMode in the word
 *	 bit  35		PROVISIONAL: a locker is deciding whether to keep it
 *	 bit  36		PREPARED: a prepared transaction is among the lockers;
 *					the word is valid across restarts
 *	 bits 40..63	the server start (the pool's start count) that wrote it
 *
 * Zero is "not locked".  A locker is one as long as its (sub)transaction
 * runs: a word whose lockers have all ended means nothing and is cleared
 * by whoever meets it (and by VACUUM), as heap sets HEAP_XMAX_INVALID.
 * Modes and their conflicts are heap's (the matrix of README.tuplock).
 *
 * Wraparound.  Words hold 32-bit xids and MultiXactIds.  An xid that
 * appears to be in the future, or older than every running transaction,
 * is taken as ended; a MultiXactId outside PostgreSQL's live range
 * likewise.  VACUUM clears every word whose lockers have ended
 * (nvm_rowlock_vacuum), and nvm tables carry relfrozenxid and relminmxid
 * like heap tables (set at creation, advanced by VACUUM), so PostgreSQL's
 * anti-wraparound vacuums reach them before their values could come round
 * again.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/transam.h"
#include "access/xact.h"
#include "storage/lock.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "pool.h"

#include "wait/nvm_lockword.h"

/* heap's LockTupleMode -> LOCKMODE mapping (tupleLockExtraInfo, heapam.c) */
static const LOCKMODE nvm_tuplock_hw[LockTupleExclusive + 1] = {
	[LockTupleKeyShare] = AccessShareLock,
	[LockTupleShare] = RowShareLock,
	[LockTupleNoKeyExclusive] = ExclusiveLock,
	[LockTupleExclusive] = AccessExclusiveLock
};

/* ... and -> heap's lock-only MultiXact status */
static const MultiXactStatus nvm_tuplock_status[LockTupleExclusive + 1] = {
	[LockTupleKeyShare] = MultiXactStatusForKeyShare,
	[LockTupleShare] = MultiXactStatusForShare,
	[LockTupleNoKeyExclusive] = MultiXactStatusForNoKeyUpdate,
	[LockTupleExclusive] = MultiXactStatusForUpdate
};

/* ---------------------------------------------------------------------
 * Lock modes
 * ---------------------------------------------------------------------
 */

/*
 * nvm_lockword_modes_conflict says whether two row-lock modes conflict
 * (heap's matrix, README.tuplock).
 */
bool
nvm_lockword_modes_conflict(LockTupleMode a, LockTupleMode b)
{
	return DoLockModesConflict(nvm_lockword_hw_mode(a), nvm_lockword_hw_mode(b));
}

/*
 * nvm_lockword_writer_mode returns the row-lock mode that the write which
 * created version v amounts to: a delete (tombstone), a key update (marked
 * HEAP_KEYS_UPDATED in the image by nvm_modify.c) or an insert count as
 * FOR UPDATE, any other update as FOR NO KEY UPDATE.  (An insert is told
 * by its flag, not by a missing older version: collection cuts chains.)
 */
LockTupleMode
nvm_lockword_writer_mode(NvmVersion *v)
{
	if (nvm_version_is_tombstone(v) ||
		(atomic_load(&v->info) & NVM_VINFO_INSERTED) != 0)
		return LockTupleExclusive;
	if (((HeapTupleHeader) v->data)->t_infomask2 & HEAP_KEYS_UPDATED)
		return LockTupleExclusive;
	return LockTupleNoKeyExclusive;
}

/*
 * nvm_lockword_status_mode is the row-lock mode of a MultiXact member's
 * lock-only status.
 */
LockTupleMode
nvm_lockword_status_mode(MultiXactStatus status)
{
	switch (status)
	{
		case MultiXactStatusForKeyShare:
			return LockTupleKeyShare;
		case MultiXactStatusForShare:
			return LockTupleShare;
		case MultiXactStatusForNoKeyUpdate:
		case MultiXactStatusNoKeyUpdate:
			return LockTupleNoKeyExclusive;
		default:
			return LockTupleExclusive;
	}
}

/* nvm_lockword_hw_mode is the lock manager's mode for a row-lock mode. */
LOCKMODE
nvm_lockword_hw_mode(LockTupleMode mode)
{
	return nvm_tuplock_hw[mode];
}

/* nvm_lockword_status_of is heap's lock-only MultiXact status of a mode. */
MultiXactStatus
nvm_lockword_status_of(LockTupleMode mode)
{
	return nvm_tuplock_status[mode];
}

/* ---------------------------------------------------------------------
 * Reading lock words
 * ---------------------------------------------------------------------
 */

/* nvm_lockword_gen returns this start's number as lock words carry it. */
uint64
nvm_lockword_gen(void)
{
	static uint64 gen = UINT64_MAX;

	if (gen == UINT64_MAX)
		gen = nvm_pool_root()->start_count & NVM_LW_GEN_MASK;
	return gen;
}

/*
 * locker_running says whether xid, named by a lock word, belongs to a
 * transaction that still runs (this one's own xids included).  An xid
 * that appears to lie in the future is a stale one that came round
 * (PostgreSQL's TransactionIdIsInProgress would call it running).
 */
static bool
locker_running(TransactionId xid, bool *own)
{
	*own = false;
	if (!TransactionIdIsNormal(xid))
		return false;
	if (TransactionIdIsCurrentTransactionId(xid))
	{
		*own = true;
		return true;
	}
	if (TransactionIdPrecedes(xid, RecentXmin))
		return false;
	if (!TransactionIdPrecedes(xid, ReadNextTransactionId()))
		return false;
	return TransactionIdIsInProgress(xid);
}

/*
 * multi_members returns the members of lock-only MultiXactId multi (in
 * *members, palloc'd), or -1 if it is outside PostgreSQL's live range (a
 * stale one) or too old to have running members.
 */
static int
multi_members(MultiXactId multi, MultiXactMember **members)
{
	MultiXactId oldest;
	MultiXactId next;

	ReadMultiXactIdRange(&oldest, &next);
	if (!MultiXactIdIsValid(multi) || MultiXactIdPrecedes(multi, oldest) ||
		!MultiXactIdPrecedes(multi, next))
		return -1;
	return GetMultiXactIdMembers(multi, members, false, true);
}

/*
 * nvm_lockword_read decodes word into l: every locker it names with its mode,
 * whether it is this transaction's and whether it still runs.  A word of
 * an earlier start means nothing unless PREPARED (and then nobody of that
 * start is still deciding about it).  Free with nvm_lockword_free.
 */
void
nvm_lockword_read(uint64 word, NvmLockers *l)
{
	memset(l, 0, sizeof(*l));
	if (word == 0)
		return;
	if (NVM_LW_GEN(word) != nvm_lockword_gen() && !(word & NVM_LW_PREPARED))
		return;
	l->valid = true;
	l->provisional = (word & NVM_LW_PROVISIONAL) != 0 && NVM_LW_GEN(word) == nvm_lockword_gen();
	if (!(word & NVM_LW_MULTI))
	{
		l->n = 1;
		l->one.xid = NVM_LW_XID(word);
		l->one.status = nvm_tuplock_status[NVM_LW_MODE(word)];
		l->members = &l->one;
		l->own = &l->one_own;
		l->running = &l->one_running;
	}
	else
	{
		l->n = multi_members(NVM_LW_XID(word), &l->members);
		if (l->n <= 0)
		{
			l->n = 0;
			return;
		}
		l->own = palloc(l->n * sizeof(bool));
		l->running = palloc(l->n * sizeof(bool));
	}
	for (int i = 0; i < l->n; i++)
		l->running[i] = locker_running(l->members[i].xid, &l->own[i]);
}

/* nvm_lockword_free frees what nvm_lockword_read allocated. */
void
nvm_lockword_free(NvmLockers *l)
{
	if (l->members != NULL && l->members != &l->one)
	{
		pfree(l->members);
		pfree(l->own);
		pfree(l->running);
	}
}

/* nvm_lockword_any_running says whether some locker of l still runs. */
bool
nvm_lockword_any_running(const NvmLockers *l)
{
	for (int i = 0; i < l->n; i++)
	{
		if (l->running[i])
			return true;
	}
	return false;
}

/*
 * nvm_lockword_conflicting_other returns the index in l of a running locker of another
 * transaction whose mode conflicts with mode, or -1.
 */
int
nvm_lockword_conflicting_other(const NvmLockers *l, LockTupleMode mode)
{
	for (int i = 0; i < l->n; i++)
	{
		if (l->running[i] && !l->own[i] &&
			nvm_lockword_modes_conflict(mode, nvm_lockword_status_mode(l->members[i].status)))
			return i;
	}
	return -1;
}

/*
 * nvm_lockword_own_mode returns the strongest mode this transaction holds in l, or -1.
 */
int
nvm_lockword_own_mode(const NvmLockers *l)
{
	int			best = -1;

	for (int i = 0; i < l->n; i++)
	{
		if (l->own[i] && (int) nvm_lockword_status_mode(l->members[i].status) > best)
			best = (int) nvm_lockword_status_mode(l->members[i].status);
	}
	return best;
}

/*
 * nvm_lockword_clear_if_ended clears word (compare-and-swap from old) if none of its
 * lockers runs any more and nobody is deciding about it: nothing to keep.
 */
void
nvm_lockword_clear_if_ended(pg_atomic_uint64 *word, uint64 old, const NvmLockers *l)
{
	if (old != 0 && !l->provisional && !nvm_lockword_any_running(l))
		(void) pg_atomic_compare_exchange_u64(word, &old, 0);
}
