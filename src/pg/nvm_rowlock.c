/*-------------------------------------------------------------------------
 *
 * nvm_rowlock.c
 *	  Row locks on nvm tables (SELECT FOR UPDATE / FOR NO KEY UPDATE /
 *	  FOR SHARE / FOR KEY SHARE, foreign-key checks, EvalPlanQual, ON
 *	  CONFLICT DO UPDATE), and the handshake that lets writers skip them
 *	  while nobody locks rows of their table.
 *
 * Heap keeps row locks in the tuple header (xmax, multixacts) and uses the
 * lock manager only to queue waiters (README.tuplock).  An nvm version never
 * changes once published, so there is no header to write a lock into.
 * Instead, a row lock is a PostgreSQL heavyweight tuple lock on the
 * *record* (the row, whatever its version): LOCKTAG_TUPLE with the record
 * number written like a TID, (n / 291, n % 291 + 1); it is not the TID of
 * a version.  Modes are heap's (tupleLockExtraInfo in heapam.c):
 *
 *		FOR KEY SHARE		AccessShareLock
 *		FOR SHARE			RowShareLock
 *		FOR NO KEY UPDATE	ExclusiveLock		(an update keeping the key)
 *		FOR UPDATE			AccessExclusiveLock (a delete, a key update)
 *
 * whose conflicts are exactly heap's row-lock matrix.  Row locks are held
 * until the end of the (sub)transaction that took them, as heap attributes
 * a row lock to the subtransaction that took it.
 *
 * Nobody waits on a row lock itself: it is only ever taken without
 * waiting, so it is granted exactly when no holder's mode conflicts, as
 * heap grants a lock that does not conflict with the lockers in xmax, even
 * while a conflicting request waits.  A request that conflicts queues, as
 * on heap, on a second lock of the record (the queue lock: the offset with
 * NVM_QUEUE_LOCK_BIT set) in its mode, and at the head of the queue waits
 * for each conflicting holder's transaction to end (nvm_wait.c), all in
 * the lock manager:
 * the deadlock detector sees every wait, NOWAIT is the failed attempt and
 * SKIP LOCKED skips.  As on heap, a backend that already holds the row lock
 * in some mode does not queue when it asks for a stronger one.
 *
 * The cost: every locked row holds an entry of the shared lock table
 * (sized by max_locks_per_transaction * max_connections) until the
 * transaction ends, so one transaction cannot lock an unbounded number of
 * rows as it can on heap; running out raises "out of shared memory" with a
 * hint to raise max_locks_per_transaction.
 *
 * Prepared transactions.  PREPARE TRANSACTION hands the row locks, like
 * every other lock, to the prepared transaction, and the counts the
 * transaction raised stay raised: the shared list of prepared lockers
 * remembers which counters each prepared transaction keeps up, and the
 * backend that runs COMMIT or ROLLBACK PREPARED lowers them once the xid
 * has ended (nvm_rowlock_forget_ended_prepared).  The counts live in
 * shared memory, which a restart empties while PostgreSQL restores the
 * prepared transactions and their locks; so the first look at a count
 * after a start scans the lock table once for row locks that prepared
 * transactions hold (their holders have no process) and raises their
 * tables' counts again.  Until that scan has finished every count reads as
 * raised, which only makes writers look in the lock table.
 *
 * Writers.  An update or a delete installs a new version (the core's
 * compare-and-swap on the record head); a running version of another
 * transaction is what keeps writers and later lockers away: whoever meets
 * it waits for that transaction to end (nvm_wait.c), as heap's xmax does.
 * Writers must also respect row locks, but should not pay a lock-manager
 * call per write when nobody locks rows.  So every table has a count of the
 * transactions that lock its rows (a shared array of counters, indexed by
 * a hash of the table's OID: tables sharing a counter only make their
 * writers check locks they could have skipped), and a writer looks at the
 * row lock only when its table's count is not zero.  It never keeps the
 * row lock: it only checks that no conflicting holder is left.
 *
 * The protocols.  A locker L asking for mode m on record r:
 *	 L1. raises its table's count (an atomic read-modify-write, a full
 *		 barrier), once per transaction and table; the count is lowered when
 *		 the transaction ends;
 *	 L2. if the chain shows a running newer version of another transaction
 *		 X whose write conflicts with m, waits for X (nvm_wait.c) and starts
 *		 again; then takes the row lock in mode m (waiting for conflicting
 *		 holders, or NOWAIT, or SKIP);
 *	 L3. after a full barrier reads the chain again.  If X has come
 *		 meanwhile, L gives back the acquisition made in L2 (not one it held
 *		 before), waits for X and starts again.  Otherwise L keeps the lock.
 *		 From just before L2's attempt until this decision, L's lock window
 *		 (a word in shared memory by backend id) names r.
 * A writer W writing record r in mode m:
 *	 W1. if the count is not zero and another transaction holds a
 *		 conflicting row lock, waits until none does (nvm_rowlock_free and
 *		 nvm_rowlock_wait_holders look in the lock table, without taking the
 *		 lock);
 *	 W2. publishes in its slot's decision word that it is deciding about r;
 *	 W3. installs its version (the core's compare-and-swap);
 *	 W4. after a full barrier reads the count again; if it is not zero and
 *		 a conflicting row lock is held, W kills the version it just
 *		 installed (nvm_record_kill), clears its decision word, and goes
 *		 back to W1;
 *	 W5. clears its decision word.
 *
 * Why a locker never misses a writer.  Suppose L holds its lock and W keeps
 * a running version in a conflicting mode.  If W's compare-and-swap came
 * before L's read in L3, L saw the version and waited for W (or W had
 * killed it).  Otherwise L's count raise (L1) came before W's
 * compare-and-swap, and both sides put a full barrier between their write
 * and their read (the "store buffer" pattern), so W's read of the count in
 * W4 sees it non-zero.  W then looks for L's lock in the lock table; L's
 * acquisition and W's look both hold the lock's partition lock, and L's
 * acquisition came first (else L's read in L3 would come after W's
 * compare-and-swap), so W finds it and kills its version.  So W keeps no
 * conflicting version while L holds the lock.
 *
 * Why this adds no deadlock heap does not have.  The waits are: in the
 * queue, for a holder's transaction, for a writer's transaction (all in
 * the lock manager), and for another slot's decision, which is short and
 * never circular: a writer in W2..W5 waits for nothing.  Only real holders
 * are waited for: writers never take the row lock, and a locker that may
 * give its lock back in L3 says so in its lock window, which a waiter waits
 * out (it is short) instead of waiting for that locker's transaction; the
 * waiter takes a holder as real only if the holder's window word did not
 * change around a look that found it holding.  A backend about to wait for
 * a writer X gives back the row lock it took in the current call first, so
 * X, which may check the row lock later, only ever waits for locks their
 * holders took in earlier statements, as on heap, where a row lock stays
 * in the tuple.  A writer whose own running version is the row's newest
 * does not queue (it would deadlock with a waiter that waits for it;
 * heap's queue is per tuple version, so there it is a different queue).
 * And a locker that holds a conflicting lock from an earlier statement and
 * meets a running conflicting version of X: by the argument above X cannot
 * keep that version, so X is in W4; its decision word names the record,
 * and the locker waits for the decision, not for X, and then finds the
 * version killed.  The decision word is set before the compare-and-swap and
 * cleared after the kill, so a reader that sees the version and then a
 * cleared word also sees the kill.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "storage/lwlock.h"
#include "utils/rel.h"

#include "mcsi.h"
#include "nvm_rowlock.h"
#include "nvm_visibility.h"
#include "nvm_wait.h"

/* The queue lock of a record is its row lock with this bit in the offset. */
#define NVM_QUEUE_LOCK_BIT		0x8000

/* Locker counters: a power of two, each on its own cache line. */
#define NVM_LOCKER_COUNTERS		1024

typedef union NvmLockerCount
{
	pg_atomic_uint32 n;
	char		pad[PG_CACHE_LINE_SIZE];
} NvmLockerCount;

typedef union NvmDecisionWord
{
	pg_atomic_uint64 tag;		/* 0: not deciding */
	char		pad[PG_CACHE_LINE_SIZE];
} NvmDecisionWord;

/* States of the scan for the row locks of recovered prepared transactions. */
#define PREPARED_SCAN_NEEDED	0
#define PREPARED_SCAN_RUNNING	1
#define PREPARED_SCAN_DONE		2

typedef struct NvmRowlockShared
{
	NvmLockerCount lockers[NVM_LOCKER_COUNTERS];
	NvmDecisionWord deciding[NVM_MAX_SLOTS];	/* by clock slot */
	pg_atomic_uint32 prepared_scan; /* PREPARED_SCAN_* */
	slock_t		prepared_mutex; /* protects the prepared lockers */
} NvmRowlockShared;

/* A prepared transaction that keeps locker counts raised. */
typedef struct NvmPreparedLocker
{
	TransactionId xid;			/* InvalidTransactionId: a free entry */
	uint64		counters[NVM_LOCKER_COUNTERS / 64]; /* the counts it keeps raised */
} NvmPreparedLocker;

static NvmRowlockShared *rowlock_shared = NULL;
static NvmPreparedLocker *prepared_lockers = NULL;	/* max_prepared_xacts of them */

/* The xid this backend's PREPARE TRANSACTION registered, until it is done. */
static TransactionId registered_prepare = InvalidTransactionId;

/*
 * Lock windows, by backend id: (generation << 40) | record tag while the
 * backend holds a row lock it may still give back (between steps L2 and
 * L3), (generation << 40) otherwise.  Every change makes a new value.
 */
#define WINDOW_TAG_MASK		((UINT64CONST(1) << 40) - 1)
static pg_atomic_uint64 *lock_windows = NULL;
static uint64 window_gen = 0;
static bool window_open = false;

/* heap's LockTupleMode -> LOCKMODE mapping (tupleLockExtraInfo, heapam.c) */
static const LOCKMODE nvm_tuplock_hw[LockTupleExclusive + 1] = {
	[LockTupleKeyShare] = AccessShareLock,
	[LockTupleShare] = RowShareLock,
	[LockTupleNoKeyExclusive] = ExclusiveLock,
	[LockTupleExclusive] = AccessExclusiveLock
};

/* The counters this backend's transaction raised. */
static uint64 raised_bits[NVM_LOCKER_COUNTERS / 64];
static int	raised[NVM_LOCKER_COUNTERS];
static int	nraised = 0;
static bool callback_registered = false;

/* The decision word this backend set, -1 if none. */
static int	deciding_slot = -1;

static void nvm_rowlock_xact_callback(XactEvent event, void *arg);
static bool scan_recovered_prepared(void);

/*
 * nvm_rowlock_shmem_size says how much shared memory the counters and the
 * decision words take.
 */
Size
nvm_rowlock_shmem_size(void)
{
	Size		size = sizeof(NvmRowlockShared);

	size = add_size(size, mul_size(MaxBackends + 1, sizeof(pg_atomic_uint64)));
	size = add_size(size, mul_size(Max(max_prepared_xacts, 1), sizeof(NvmPreparedLocker)));
	return add_size(size, nvm_wait_shmem_size());
}

/*
 * nvm_rowlock_shmem_startup finds or creates the shared state; counters
 * start at zero (also after a crash-restart: no transaction survives one).
 */
void
nvm_rowlock_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	rowlock_shared = ShmemInitStruct("nvmam row locks", nvm_rowlock_shmem_size(), &found);
	if (!found)
	{
		for (int i = 0; i < NVM_LOCKER_COUNTERS; i++)
			pg_atomic_init_u32(&rowlock_shared->lockers[i].n, 0);
		for (int i = 0; i < NVM_MAX_SLOTS; i++)
			pg_atomic_init_u64(&rowlock_shared->deciding[i].tag, 0);
		/* without prepared transactions there is nothing to scan for */
		pg_atomic_init_u32(&rowlock_shared->prepared_scan,
						   max_prepared_xacts > 0 ? PREPARED_SCAN_NEEDED : PREPARED_SCAN_DONE);
		SpinLockInit(&rowlock_shared->prepared_mutex);
	}
	lock_windows = (pg_atomic_uint64 *) (rowlock_shared + 1);
	prepared_lockers = (NvmPreparedLocker *) (lock_windows + MaxBackends + 1);
	if (!found)
	{
		for (int i = 0; i <= MaxBackends; i++)
			pg_atomic_init_u64(&lock_windows[i], 0);
		memset(prepared_lockers, 0, Max(max_prepared_xacts, 1) * sizeof(NvmPreparedLocker));
	}
	nvm_wait_shmem_init((char *) (prepared_lockers + Max(max_prepared_xacts, 1)), found);
	LWLockRelease(AddinShmemInitLock);
}

/* ---------------------------------------------------------------------
 * Lock modes
 * ---------------------------------------------------------------------
 */

/*
 * nvm_rowlock_modes_conflict says whether two row-lock modes conflict
 * (heap's matrix, README.tuplock).
 */
bool
nvm_rowlock_modes_conflict(LockTupleMode a, LockTupleMode b)
{
	return DoLockModesConflict(nvm_tuplock_hw[a], nvm_tuplock_hw[b]);
}

/*
 * nvm_rowlock_writer_mode returns the row-lock mode that the write which
 * created version v amounts to: a delete (tombstone), a key update (marked
 * HEAP_KEYS_UPDATED in the image by nvm_modify.c) or an insert count as
 * FOR UPDATE, any other update as FOR NO KEY UPDATE.  (An insert is told
 * by its flag, not by a missing older version: collection cuts chains.)
 */
LockTupleMode
nvm_rowlock_writer_mode(NvmVersion *v)
{
	if (nvm_version_is_tombstone(v) ||
		(atomic_load(&v->info) & NVM_VINFO_INSERTED) != 0)
		return LockTupleExclusive;
	if (((HeapTupleHeader) v->data)->t_infomask2 & HEAP_KEYS_UPDATED)
		return LockTupleExclusive;
	return LockTupleNoKeyExclusive;
}

/* ---------------------------------------------------------------------
 * Record locks
 * ---------------------------------------------------------------------
 */

static inline void
record_locktag(LOCKTAG *tag, Relation rel, uint64 record_no)
{
	SET_LOCKTAG_TUPLE(*tag,
					  rel->rd_lockInfo.lockRelId.dbId,
					  rel->rd_lockInfo.lockRelId.relId,
					  (BlockNumber) (record_no / NVM_TUPLES_PER_BLOCK),
					  (OffsetNumber) (record_no % NVM_TUPLES_PER_BLOCK + 1));
}

/*
 * report_lock_table_full raises the error for a full lock table, saying
 * why an nvm table needs it.
 */
static void
report_lock_table_full(Relation rel)
{
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("out of shared memory"),
			 errdetail("Every row of an nvm table that a transaction locks (SELECT FOR UPDATE or FOR SHARE, foreign-key checks) holds an entry of the shared lock table until the transaction ends."),
			 errhint("You might need to increase max_locks_per_transaction, or lock fewer rows of nvm table \"%s\" in one transaction.",
					 RelationGetRelationName(rel))));
}

/*
 * rowlock_error_context says, for an error while taking a row lock (the
 * lock table full, most likely), what the lock was for.
 */
static void
rowlock_error_context(void *arg)
{
	errcontext("locking a row of nvm table \"%s\" (every row an nvm transaction locks holds a lock-table entry until the transaction ends)",
			   RelationGetRelationName((Relation) arg));
}

/*
 * try_lock takes one acquisition of lock tag in lockmode if it is free,
 * without waiting.  Nobody ever waits on a row lock itself (see
 * wait_for_holders), so this fails only if a holder's mode conflicts, as
 * heap's check against the lockers in a tuple's xmax.
 */
static bool
try_lock(Relation rel, const LOCKTAG *tag, LOCKMODE lockmode)
{
	ErrorContextCallback errcallback;
	bool		ok;

	errcallback.callback = rowlock_error_context;
	errcallback.arg = (void *) rel;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;
	ok = LockAcquireExtended(tag, lockmode, false, true, true, NULL) !=
		LOCKACQUIRE_NOT_AVAIL;
	error_context_stack = errcallback.previous;
	return ok;
}

/*
 * holds_row_lock says whether this transaction holds the row lock tag in
 * any mode.
 */
static bool
holds_row_lock(const LOCKTAG *tag)
{
	for (int m = LockTupleKeyShare; m <= LockTupleExclusive; m++)
	{
		if (LockHeldByMe(tag, nvm_tuplock_hw[m]))
			return true;
	}
	return false;
}

/*
 * nvm_rowlock_try takes one acquisition of the row lock on record_no in
 * mode if no other transaction holds it in a conflicting mode, without
 * waiting.  nvm_rowlock_release takes one back, leaving acquisitions made
 * before.
 */
bool
nvm_rowlock_try(Relation rel, uint64 record_no, LockTupleMode mode)
{
	LOCKTAG		tag;

	record_locktag(&tag, rel, record_no);
	return try_lock(rel, &tag, nvm_tuplock_hw[mode]);
}

void
nvm_rowlock_release(Relation rel, uint64 record_no, LockTupleMode mode)
{
	LOCKTAG		tag;

	record_locktag(&tag, rel, record_no);
	LockRelease(&tag, nvm_tuplock_hw[mode], false);
}

/*
 * nvm_rowlock_free says whether no other transaction holds a row lock on
 * record_no that conflicts with mode (steps W1 and W4).  It looks without
 * taking the lock: a momentary holder could be mistaken by a waiter for a
 * real one, and waited for until its transaction ends.
 */
bool
nvm_rowlock_free(Relation rel, uint64 record_no, LockTupleMode mode)
{
	LOCKTAG		tag;
	VirtualTransactionId *holders;
	bool		free;

	record_locktag(&tag, rel, record_no);
	holders = GetLockConflicts(&tag, nvm_tuplock_hw[mode], NULL);
	free = !VirtualTransactionIdIsValid(holders[0]);
	pfree(holders);
	return free;
}

/*
 * nvm_rowlock_enqueue queues the caller, which is about to wait on the
 * row record_no for an operation in mode, behind the earlier waiters, by
 * taking the record's queue lock in mode (heap's LockTuple before
 * XactLockTableWait, README.tuplock), unless it is queued already.  A
 * backend that holds the row lock in some mode, or whose own running
 * version is the row's newest (own_newest), does not queue: a waiter ahead
 * may be waiting for it.  The caller keeps its place until
 * nvm_rowlock_dequeue (the queue lock is also released if the
 * subtransaction fails).
 */
void
nvm_rowlock_enqueue(Relation rel, uint64 record_no, LockTupleMode mode,
					bool own_newest, NvmRowQueue *q)
{
	LOCKTAG		tag;

	if (q->queued || own_newest)
		return;
	record_locktag(&tag, rel, record_no);
	if (holds_row_lock(&tag))
		return;
	q->tag = tag;
	q->tag.locktag_field4 |= NVM_QUEUE_LOCK_BIT;
	q->lockmode = nvm_tuplock_hw[mode];
	if (LockAcquireExtended(&q->tag, q->lockmode, false, false, false, NULL) ==
		LOCKACQUIRE_NOT_AVAIL)
		report_lock_table_full(rel);
	q->queued = true;
}

void
nvm_rowlock_dequeue(NvmRowQueue *q)
{
	if (!q->queued)
		return;
	LockRelease(&q->tag, q->lockmode, false);
	q->queued = false;
}

/*
 * window_tag names record_no of rel in a lock window.
 */
static inline uint64
window_tag(Relation rel, uint64 record_no)
{
	uint64		relid = rel->rd_lockInfo.lockRelId.relId;
	uint64		tag = ((relid << 24) ^ record_no) & WINDOW_TAG_MASK;

	return tag == 0 ? 1 : tag;
}

static void
window_set(uint64 tag)
{
	window_gen++;
	window_open = (tag != 0);
	pg_write_barrier();
	pg_atomic_write_u64(&lock_windows[MyBackendId], (window_gen << 40) | tag);
	pg_memory_barrier();
}

/*
 * nvm_rowlock_try_provisional is nvm_rowlock_try for a locker that may
 * still give the lock back (L2): it opens its lock window first, and
 * closes it again if the lock is not free.  After success the caller
 * decides, and calls nvm_rowlock_settle once it has kept or given back
 * the lock.
 */
bool
nvm_rowlock_try_provisional(Relation rel, uint64 record_no, LockTupleMode mode)
{
	window_set(window_tag(rel, record_no));
	if (nvm_rowlock_try(rel, record_no, mode))
		return true;
	nvm_rowlock_settle();
	return false;
}

void
nvm_rowlock_settle(void)
{
	if (window_open)
		window_set(0);
}

/*
 * backoff waits a moment, longer each time, for a backend in a short step.
 */
static void
backoff(int *spins)
{
	CHECK_FOR_INTERRUPTS();
	if (++*spins < 100)
		pg_spin_delay();
	else
		pg_usleep(Min(10L << Min((*spins - 100) / 10, 7), 1000L));
}

/*
 * stable_holder returns a transaction that holds a row lock tag conflicting
 * with lockmode for good, to be waited for; sets *none if nobody holds one.
 * A holder whose lock window names the record may give its lock back in a
 * moment (step L3): that is waited out, since waiting for its transaction
 * could deadlock with it.  A holder is taken as stable only if its window
 * word did not change from before to after a look that found it holding.
 */
static bool
stable_holder(const LOCKTAG *tag, LOCKMODE lockmode, uint64 wtag,
			  VirtualTransactionId *holder, bool *none)
{
	VirtualTransactionId *holders = GetLockConflicts(tag, lockmode, NULL);
	VirtualTransactionId hv = holders[0];
	uint64		w1;
	uint64		w2;
	bool		still = false;

	pfree(holders);
	*none = !VirtualTransactionIdIsValid(hv);
	if (*none)
		return false;
	if (hv.backendId < 1 || hv.backendId > MaxBackends)
	{
		*holder = hv;			/* a prepared transaction */
		return true;
	}

	w1 = pg_atomic_read_u64(&lock_windows[hv.backendId]);
	if ((w1 & WINDOW_TAG_MASK) == wtag)
		return false;
	pg_memory_barrier();
	holders = GetLockConflicts(tag, lockmode, NULL);
	for (int i = 0; VirtualTransactionIdIsValid(holders[i]); i++)
	{
		if (VirtualTransactionIdEquals(holders[i], hv))
			still = true;
	}
	pfree(holders);
	pg_memory_barrier();
	w2 = pg_atomic_read_u64(&lock_windows[hv.backendId]);
	if (!still || w1 != w2)
		return false;
	*holder = hv;
	return true;
}

/*
 * nvm_rowlock_wait_holders waits until no other transaction holds a row
 * lock on record_no that conflicts with mode, by waiting for each such
 * holder's transaction to end (nvm_wait_for_vxid), and then, if keep,
 * takes the row lock provisionally as nvm_rowlock_try_provisional does (a
 * writer only waits: it never holds the row lock, not even for a moment,
 * see nvm_rowlock_free).  The caller has queued first.
 *
 * Waiting for the holder's transaction rather than for its lock keeps the
 * row lock itself free of waiters, so that a request compatible with every
 * holder is granted at once, as on heap, even while a conflicting one
 * waits.  A holder that took its lock in a subtransaction that rolls back
 * wakes its waiters through its wait token (nvm_wait.c).
 */
void
nvm_rowlock_wait_holders(Relation rel, uint64 record_no, LockTupleMode mode,
						 bool keep)
{
	LOCKMODE	lockmode = nvm_tuplock_hw[mode];
	uint64		wtag = window_tag(rel, record_no);
	LOCKTAG		tag;
	int			spins = 0;

	record_locktag(&tag, rel, record_no);
	for (;;)
	{
		VirtualTransactionId holder;
		bool		none;

		if (keep && nvm_rowlock_try_provisional(rel, record_no, mode))
			break;
		if (stable_holder(&tag, lockmode, wtag, &holder, &none))
		{
			nvm_wait_for_vxid(holder);
			spins = 0;
		}
		else if (none)
		{
			if (!keep)
				break;
		}
		else
			backoff(&spins);
	}
}

/* ---------------------------------------------------------------------
 * Locker counts
 * ---------------------------------------------------------------------
 */

/* counter_of returns the locker counter of the table relid of database dbid. */
static inline int
counter_of(Oid relid, Oid dbid)
{
	uint32		h = hash_combine(murmurhash32(relid), murmurhash32(dbid));

	return (int) (h & (NVM_LOCKER_COUNTERS - 1));
}

static inline int
locker_counter(Relation rel)
{
	return counter_of(rel->rd_lockInfo.lockRelId.relId, rel->rd_lockInfo.lockRelId.dbId);
}

/*
 * nvm_rowlock_announce counts the current transaction among the lockers of
 * rel's rows until it ends (step L1), and issues a full memory barrier.
 */
void
nvm_rowlock_announce(Relation rel)
{
	int			c = locker_counter(rel);

	if (raised_bits[c / 64] & (UINT64CONST(1) << (c % 64)))
	{
		pg_memory_barrier();
		return;
	}
	if (!callback_registered)
	{
		RegisterXactCallback(nvm_rowlock_xact_callback, NULL);
		callback_registered = true;
	}
	raised_bits[c / 64] |= UINT64CONST(1) << (c % 64);
	raised[nraised++] = c;
	pg_atomic_fetch_add_u32(&rowlock_shared->lockers[c].n, 1);
}

/*
 * nvm_rowlock_lockers_present says whether some transaction may hold row
 * locks on rel (after a full memory barrier).
 */
bool
nvm_rowlock_lockers_present(Relation rel)
{
	pg_memory_barrier();
	if (unlikely(pg_atomic_read_u32(&rowlock_shared->prepared_scan) != PREPARED_SCAN_DONE) &&
		!scan_recovered_prepared())
		return true;
	return pg_atomic_read_u32(&rowlock_shared->lockers[locker_counter(rel)].n) != 0;
}

/* ---------------------------------------------------------------------
 * Prepared transactions
 * ---------------------------------------------------------------------
 */

/*
 * register_prepared enters xid in the list of prepared lockers, with the
 * counters in bits added to those of its entry; with raise, it also raises
 * each count it adds (under the list's lock, so that forget_prepared never
 * lowers a count before it is raised).  False if the list is full.
 */
static bool
register_prepared(TransactionId xid, const uint64 *bits, bool raise)
{
	int			free_entry = -1;
	int			entry = -1;

	SpinLockAcquire(&rowlock_shared->prepared_mutex);
	for (int i = 0; i < max_prepared_xacts && entry < 0; i++)
	{
		if (prepared_lockers[i].xid == xid)
			entry = i;
		else if (free_entry < 0 && !TransactionIdIsValid(prepared_lockers[i].xid))
			free_entry = i;
	}
	if (entry < 0)
		entry = free_entry;
	if (entry >= 0)
	{
		NvmPreparedLocker *e = &prepared_lockers[entry];

		e->xid = xid;
		for (int c = 0; c < NVM_LOCKER_COUNTERS; c++)
		{
			uint64		bit = UINT64CONST(1) << (c % 64);

			if (!(bits[c / 64] & bit) || (e->counters[c / 64] & bit))
				continue;
			e->counters[c / 64] |= bit;
			if (raise)
				pg_atomic_fetch_add_u32(&rowlock_shared->lockers[c].n, 1);
		}
	}
	SpinLockRelease(&rowlock_shared->prepared_mutex);
	return entry >= 0;
}

/*
 * forget_prepared removes xid's entry; with lower, it also lowers the
 * counts the entry keeps raised.
 */
static void
forget_prepared(TransactionId xid, bool lower)
{
	SpinLockAcquire(&rowlock_shared->prepared_mutex);
	for (int i = 0; i < max_prepared_xacts; i++)
	{
		NvmPreparedLocker *e = &prepared_lockers[i];

		if (e->xid != xid)
			continue;
		for (int c = 0; lower && c < NVM_LOCKER_COUNTERS; c++)
			if (e->counters[c / 64] & (UINT64CONST(1) << (c % 64)))
				pg_atomic_fetch_sub_u32(&rowlock_shared->lockers[c].n, 1);
		memset(e, 0, sizeof(*e));
		break;
	}
	SpinLockRelease(&rowlock_shared->prepared_mutex);
}

/*
 * nvm_rowlock_forget_ended_prepared lowers the counts of the prepared
 * transactions whose xids have ended (COMMIT or ROLLBACK PREPARED released
 * their row locks).
 */
void
nvm_rowlock_forget_ended_prepared(void)
{
	TransactionId *xids;
	int			n = 0;

	if (max_prepared_xacts == 0)
		return;
	xids = palloc(max_prepared_xacts * sizeof(TransactionId));
	SpinLockAcquire(&rowlock_shared->prepared_mutex);
	for (int i = 0; i < max_prepared_xacts; i++)
		if (TransactionIdIsValid(prepared_lockers[i].xid))
			xids[n++] = prepared_lockers[i].xid;
	SpinLockRelease(&rowlock_shared->prepared_mutex);
	for (int i = 0; i < n; i++)
		if (!TransactionIdIsInProgress(xids[i]))
			forget_prepared(xids[i], true);
	pfree(xids);
}

/*
 * scan_recovered_prepared raises the counts of the tables whose rows the
 * prepared transactions restored at start-up hold locks on, once per
 * start: their holders have no process, and the "virtual xid" of a
 * recovered prepared transaction is its xid.  Returns whether the scan is
 * done; false while another backend runs it, or during recovery.
 */
static bool
scan_recovered_prepared(void)
{
	uint32		expected = PREPARED_SCAN_NEEDED;
	LockData   *locks;

	if (RecoveryInProgress())
		return false;
	if (!pg_atomic_compare_exchange_u32(&rowlock_shared->prepared_scan, &expected,
										PREPARED_SCAN_RUNNING))
		return expected == PREPARED_SCAN_DONE;

	PG_TRY();
	{
		locks = GetLockStatusData();
		for (int i = 0; i < locks->nelements; i++)
		{
			LockInstanceData *l = &locks->locks[i];
			uint64		bits[NVM_LOCKER_COUNTERS / 64] = {0};
			int			c;

			if (l->locktag.locktag_type != LOCKTAG_TUPLE || l->holdMask == 0 ||
				l->pid != 0 || l->backend != InvalidBackendId ||
				!TransactionIdIsValid((TransactionId) l->lxid))
				continue;
			c = counter_of(l->locktag.locktag_field2, l->locktag.locktag_field1);
			bits[c / 64] = UINT64CONST(1) << (c % 64);
			if (!register_prepared((TransactionId) l->lxid, bits, true))
				elog(ERROR, "too many prepared transactions hold row locks of nvm tables");
		}
		/* one may have ended between the lock table's answer and now */
		nvm_rowlock_forget_ended_prepared();
	}
	PG_CATCH();
	{
		pg_atomic_write_u32(&rowlock_shared->prepared_scan, PREPARED_SCAN_NEEDED);
		PG_RE_THROW();
	}
	PG_END_TRY();
	pg_atomic_exchange_u32(&rowlock_shared->prepared_scan, PREPARED_SCAN_DONE);
	return true;
}

/* ---------------------------------------------------------------------
 * Decision words
 * ---------------------------------------------------------------------
 */

static inline uint64
decision_tag(Relation rel, uint64 record_no)
{
	uint64		tag = ((uint64) rel->rd_lockInfo.lockRelId.relId << 40) ^ record_no;

	return tag == 0 ? 1 : tag;
}

/*
 * nvm_rowlock_deciding publishes that this backend, on clock slot slot, is
 * about to install a version of record_no without holding its row lock
 * (step W2); nvm_rowlock_decided clears it (W5).
 */
void
nvm_rowlock_deciding(int slot, Relation rel, uint64 record_no)
{
	deciding_slot = slot;
	pg_atomic_write_u64(&rowlock_shared->deciding[slot].tag,
						decision_tag(rel, record_no));
	pg_write_barrier();
}

void
nvm_rowlock_decided(void)
{
	if (deciding_slot < 0)
		return;
	pg_write_barrier();			/* a kill is visible before the word clears */
	pg_atomic_write_u64(&rowlock_shared->deciding[deciding_slot].tag, 0);
	deciding_slot = -1;
}

/*
 * nvm_rowlock_wait_decision waits while the transaction txid is deciding
 * whether to keep a version of record_no (W2..W5): a short wait, since the
 * other side waits for nothing meanwhile.  Returns true if it waited (the
 * caller rereads the chain).
 */
bool
nvm_rowlock_wait_decision(uint64 txid, Relation rel, uint64 record_no)
{
	pg_atomic_uint64 *word = &rowlock_shared->deciding[nvm_txid_clock_id(txid)].tag;
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

/* ---------------------------------------------------------------------
 * Transaction end
 * ---------------------------------------------------------------------
 */

/*
 * nvm_rowlock_xact_callback lowers the counts the transaction raised and
 * clears a decision word left behind by an error.  The row locks
 * themselves go with the transaction's other locks, a moment later; the
 * transaction has committed or aborted by then, so a writer that no longer
 * waits for them changes nothing.  A transaction being prepared enters
 * its counts in the list of prepared lockers first (PRE_PREPARE, where it
 * may still fail) and keeps them raised when it is prepared; they come
 * down when its xid has ended (nvm_rowlock_forget_ended_prepared), or here
 * if the PREPARE fails.
 */
static void
nvm_rowlock_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (nraised > 0)
			{
				TransactionId xid = GetTopTransactionId();

				if (!register_prepared(xid, raised_bits, false))
				{
					/* entries of prepared transactions that ended may be left */
					nvm_rowlock_forget_ended_prepared();
					if (!register_prepared(xid, raised_bits, false))
						elog(ERROR, "no free entry for a prepared transaction's row locks on nvm tables");
				}
				registered_prepare = xid;
			}
			break;
		case XACT_EVENT_PREPARE:
			nvm_rowlock_decided();
			nvm_rowlock_settle();
			/* the prepared transaction keeps the counts raised */
			for (int i = 0; i < nraised; i++)
				raised_bits[raised[i] / 64] = 0;
			nraised = 0;
			registered_prepare = InvalidTransactionId;
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			nvm_rowlock_decided();
			nvm_rowlock_settle();
			if (TransactionIdIsValid(registered_prepare))
			{
				/* the PREPARE failed */
				forget_prepared(registered_prepare, false);
				registered_prepare = InvalidTransactionId;
			}
			for (int i = 0; i < nraised; i++)
			{
				int			c = raised[i];

				pg_atomic_fetch_sub_u32(&rowlock_shared->lockers[c].n, 1);
				raised_bits[c / 64] &= ~(UINT64CONST(1) << (c % 64));
			}
			nraised = 0;
			break;
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			break;
	}
}
