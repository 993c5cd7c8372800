/*-------------------------------------------------------------------------
 *
 * nvm_rowlock.c
 *	  Row locks on nvm tables (SELECT FOR UPDATE / FOR NO KEY UPDATE /
 *	  FOR SHARE / FOR KEY SHARE, foreign-key checks, EvalPlanQual, ON
 *	  CONFLICT DO UPDATE), kept in the pool as heap keeps them in the tuple.
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
 * Why memory stays bounded.  A transaction may lock any number of rows:
 * each costs the 8 bytes of its row's word, which the table has once
 * whoever locks it (like heap's xmax, it is per row, not per lock).  The
 * lock manager holds only waits: the queue lock of the row a backend
 * waits for (one at a time, as heap's LockTuple) and the xid locks that
 * PostgreSQL keeps anyway.  MultiXactIds are PostgreSQL's, kept in
 * pg_multixact (a bounded cache of disk pages), exactly as heap's.  So
 * max_locks_per_transaction does not limit row locks.  The one list a
 * backend keeps (the words to mark at PREPARE TRANSACTION) is capped; past
 * the cap PREPARE scans the words of the tables the transaction locked
 * rows in.
 *
 * Why the words need no durability.  Lockers of a server that crashed or
 * stopped are not running any more, so a word written by an earlier start
 * means nothing: its start number says so, and readers ignore it (an xid
 * of that start may even be handed out again, since lockers write no WAL).
 * The exception is a prepared transaction, whose locks PostgreSQL keeps
 * across restarts: before the prepare record is written (PRE_PREPARE),
 * every word naming the transaction is marked PREPARED and persisted,
 * along with the directory entries that lead to it (persist order: words
 * and their array's segment pointers flushed -> drain -> prepare record).
 * A PREPARED word is read whatever its start number; its xid was written
 * to WAL by the prepare record (and a MultiXactId's members by its own
 * record, which precedes it), so neither is handed out again.  A locker
 * that later adds itself to such a word keeps the mark, flushes the WAL of
 * the new MultiXactId before publishing it and persists the word.
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
 * The protocols.  Locker and writer meet through two different words (the
 * lock word and the record head), so each writes its own and then reads
 * the other's, with a full barrier in between (the "store buffer"
 * pattern): at least one of them sees the other.
 *
 * A locker L asking for mode m on record r (nvm_tuple_lock):
 *	 L1. if the chain shows a running newer version of another transaction
 *		 X whose write conflicts with m, waits for X (nvm_wait.c) and starts
 *		 again;
 *	 L2. reads the lock word: if a running locker of another transaction
 *		 holds a conflicting mode, waits for it (queued on the row as heap
 *		 does; NOWAIT fails, SKIP LOCKED skips) and starts again; if L
 *		 holds m or a stronger mode already, goes to L3 with nothing to
 *		 give back; else installs a word that adds L in mode m, marked
 *		 PROVISIONAL (compare-and-swap, a full barrier);
 *	 L3. reads the chain again.  If X has come meanwhile, L puts the word
 *		 back as it was, waits for X and starts again.  Otherwise it keeps
 *		 the lock (clears PROVISIONAL) if the row is locked, and puts the
 *		 word back if not (the row was updated or deleted: TM_Updated ...).
 * A writer W writing record r in mode m (nvm_write_row in nvm_modify.c):
 *	 W1. if a running locker of another transaction holds a conflicting
 *		 mode (PROVISIONAL or not), waits until none does;
 *	 W2. publishes in its slot's decision word that it is deciding about r;
 *	 W3. installs its version (the core's compare-and-swap on the head);
 *	 W4. after a full barrier reads the lock word again; if a conflicting
 *		 locker is there now, kills the version it just installed
 *		 (nvm_record_kill), clears its decision word, and goes back to W1;
 *	 W5. clears its decision word.
 *
 * Why a locker never misses a writer.  Suppose L keeps its lock and W
 * keeps a running version in a conflicting mode.  If W's compare-and-swap
 * came before L's read in L3, L saw the version and gave the word back (or
 * W had killed it).  Otherwise L's word was in place before W's read in W4
 * (both sides put a full barrier between their write and their read), so
 * W saw it and killed its version.
 *
 * Why this adds no deadlock heap does not have.  The waits are: in the
 * queue, for a locker's transaction (its xid, XactLockTableWait), for a
 * writer's transaction (nvm_wait.c), all in the lock manager where the
 * deadlock detector sees them; and for a PROVISIONAL word to settle, or
 * another slot's decision, which are short and never circular: a locker in
 * L2..L3 and a writer in W2..W5 wait for nothing.  Only real holders are
 * waited for through the lock manager: a PROVISIONAL locker is waited out.
 * A locker about to wait for a writer X gives back the word it installed
 * in the current call first, so X, which may wait for lockers later, only
 * ever waits for locks taken in earlier statements, as on heap.  A writer
 * whose own running version is the row's newest does not queue (it would
 * deadlock with a waiter that waits for it; heap's queue is per tuple
 * version, so there it is a different queue).  And a locker that holds a
 * conflicting lock from an earlier statement and meets a running
 * conflicting version of X: by the argument above X cannot keep that
 * version, so X is in W4; its decision word names the record, and the
 * locker waits for the decision, not for X, and then finds the version
 * killed.  The decision word is set before the compare-and-swap and
 * cleared after the kill, so a reader that sees the version and then a
 * cleared word also sees the kill.
 *
 * Subtransactions.  A lock is taken under the current subtransaction's
 * xid, as heap takes it: when the subtransaction rolls back its xid ends,
 * the lock with it, and waiters (which wait on that xid) wake up; a lock
 * of the parent taken earlier stays, also when the subtransaction had
 * taken a stronger one (both are in the word).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/lwlock.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "persist.h"
#include "pool.h"
#include "txn.h"

#include "redo/nvm_redo.h"
#include "space/nvm_relation.h"
#include "wait/nvm_rowlock.h"

/* Bits of a lock word (see the file header). */
#define LW_XID_MASK			UINT64CONST(0xffffffff)
#define LW_MULTI			(UINT64CONST(1) << 32)
#define LW_MODE_SHIFT		33
#define LW_MODE_MASK		(UINT64CONST(3) << LW_MODE_SHIFT)
#define LW_PROVISIONAL		(UINT64CONST(1) << 35)
#define LW_PREPARED			(UINT64CONST(1) << 36)
#define LW_GEN_SHIFT		40
#define LW_GEN_MASK			UINT64CONST(0xffffff)

#define LW_XID(w)			((uint32) ((w) & LW_XID_MASK))
#define LW_MODE(w)			((LockTupleMode) (((w) & LW_MODE_MASK) >> LW_MODE_SHIFT))
#define LW_GEN(w)			((uint32) ((w) >> LW_GEN_SHIFT))

/* The queue lock of a record is a tuple lock with this bit in the offset. */
#define NVM_QUEUE_LOCK_BIT		0x8000

/* How many locked words a backend remembers for PREPARE TRANSACTION. */
#define NVM_REMEMBERED_LOCKS	4096

typedef union NvmDecisionWord
{
	pg_atomic_uint64 tag;		/* 0: not deciding */
	char		pad[PG_CACHE_LINE_SIZE];
} NvmDecisionWord;

typedef struct NvmRowlockShared
{
	NvmDecisionWord deciding[NVM_MAX_SLOTS];	/* by clock slot */
} NvmRowlockShared;

static NvmRowlockShared *rowlock_shared = NULL;

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

/*
 * The word this backend has made PROVISIONAL, if any (nvm_rowlock_take),
 * with its value before and the value installed.
 */
static _Atomic uint64_t *pending_word = NULL;
static uint64 pending_prev = 0;
static uint64 pending_set = 0;

/* Words this transaction installed, for PREPARE TRANSACTION. */
typedef struct NvmLockedRow
{
	NvmTableDesc *desc;
	uint64		record_no;
} NvmLockedRow;

static NvmLockedRow *locked_rows = NULL;	/* NVM_REMEMBERED_LOCKS of them */
static int	nlocked_rows = 0;
static bool locked_rows_overflow = false;
static NvmTableDesc **locked_tables = NULL;
static int	nlocked_tables = 0;
static int	max_locked_tables = 0;

/* The decision word this backend set, -1 if none. */
static int	deciding_slot = -1;

/*
 * nvm_rowlock_shmem_size says how much shared memory the decision words
 * take.
 */
Size
nvm_rowlock_shmem_size(void)
{
	return MAXALIGN(sizeof(NvmRowlockShared));
}

/*
 * nvm_rowlock_shmem_startup finds or creates the decision words.
 */
void
nvm_rowlock_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	rowlock_shared = ShmemInitStruct("nvmam row locks", nvm_rowlock_shmem_size(), &found);
	if (!found)
	{
		for (int i = 0; i < NVM_MAX_SLOTS; i++)
			pg_atomic_init_u64(&rowlock_shared->deciding[i].tag, 0);
	}
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

static LockTupleMode
status_mode(MultiXactStatus status)
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

/* ---------------------------------------------------------------------
 * Reading lock words
 * ---------------------------------------------------------------------
 */

/* current_gen returns this start's number as lock words carry it. */
static inline uint64
current_gen(void)
{
	static uint64 gen = UINT64_MAX;

	if (gen == UINT64_MAX)
		gen = nvm_pool_root()->start_count & LW_GEN_MASK;
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
 * read_lockers decodes word into l: every locker it names with its mode,
 * whether it is this transaction's and whether it still runs.  A word of
 * an earlier start means nothing unless PREPARED (and then nobody of that
 * start is still deciding about it).  Free with free_lockers.
 */
static void
read_lockers(uint64 word, NvmLockers *l)
{
	memset(l, 0, sizeof(*l));
	if (word == 0)
		return;
	if (LW_GEN(word) != current_gen() && !(word & LW_PREPARED))
		return;
	l->valid = true;
	l->provisional = (word & LW_PROVISIONAL) != 0 && LW_GEN(word) == current_gen();
	if (!(word & LW_MULTI))
	{
		l->n = 1;
		l->one.xid = LW_XID(word);
		l->one.status = nvm_tuplock_status[LW_MODE(word)];
		l->members = &l->one;
		l->own = &l->one_own;
		l->running = &l->one_running;
	}
	else
	{
		l->n = multi_members(LW_XID(word), &l->members);
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

static void
free_lockers(NvmLockers *l)
{
	if (l->members != NULL && l->members != &l->one)
	{
		pfree(l->members);
		pfree(l->own);
		pfree(l->running);
	}
}

/* any_running says whether some locker of l still runs. */
static bool
any_running(const NvmLockers *l)
{
	for (int i = 0; i < l->n; i++)
	{
		if (l->running[i])
			return true;
	}
	return false;
}

/*
 * conflicting_other returns the index in l of a running locker of another
 * transaction whose mode conflicts with mode, or -1.
 */
static int
conflicting_other(const NvmLockers *l, LockTupleMode mode)
{
	for (int i = 0; i < l->n; i++)
	{
		if (l->running[i] && !l->own[i] &&
			nvm_rowlock_modes_conflict(mode, status_mode(l->members[i].status)))
			return i;
	}
	return -1;
}

/*
 * own_mode returns the strongest mode this transaction holds in l, or -1.
 */
static int
own_mode(const NvmLockers *l)
{
	int			best = -1;

	for (int i = 0; i < l->n; i++)
	{
		if (l->own[i] && (int) status_mode(l->members[i].status) > best)
			best = (int) status_mode(l->members[i].status);
	}
	return best;
}

/*
 * clear_if_ended clears word (compare-and-swap from old) if none of its
 * lockers runs any more and nobody is deciding about it: nothing to keep.
 */
static void
clear_if_ended(pg_atomic_uint64 *word, uint64 old, const NvmLockers *l)
{
	if (old != 0 && !l->provisional && !any_running(l))
		(void) pg_atomic_compare_exchange_u64(word, &old, 0);
}

/* as_pg gives the PostgreSQL view of a word in the pool. */
static inline pg_atomic_uint64 *
as_pg(_Atomic uint64_t *word)
{
	StaticAssertStmt(sizeof(pg_atomic_uint64) == sizeof(uint64), "lock words are 8 bytes");
	return (pg_atomic_uint64 *) word;
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

/* ---------------------------------------------------------------------
 * Waiting for lockers
 * ---------------------------------------------------------------------
 */

/*
 * nvm_rowlock_conflicts says whether another transaction's running locker
 * of record_no holds a mode conflicting with mode, or is deciding about a
 * word that does (writers, step W4).  The word's strongest mode answers
 * most questions without reading a MultiXactId's members.
 */
bool
nvm_rowlock_conflicts(const NvmTable *table, uint64 record_no, LockTupleMode mode)
{
	_Atomic uint64_t *w = nvm_record_lock_word(table, record_no, false);
	uint64		word;
	NvmLockers	l;
	bool		result;

	if (w == NULL)
		return false;
	pg_memory_barrier();
	word = pg_atomic_read_u64(as_pg(w));
	if (word == 0 || !nvm_rowlock_modes_conflict(mode, LW_MODE(word)))
		return false;
	read_lockers(word, &l);
	result = conflicting_other(&l, mode) >= 0;
	clear_if_ended(as_pg(w), word, &l);
	free_lockers(&l);
	return result;
}

/*
 * nvm_rowlock_wait_lockers waits until no running locker of another
 * transaction holds a mode of record_no's lock conflicting with mode:
 * for each one, until its xid ends (XactLockTableWait, in the lock
 * manager), and for a PROVISIONAL word, until it settles (a short wait).
 * With LockWaitError it raises heap's error instead of waiting for a
 * locker, with LockWaitSkip it returns false.  The caller has queued on
 * the row (nvm_rowlock_enqueue) if it waits.
 */
bool
nvm_rowlock_wait_lockers(Relation rel, const NvmTable *table, uint64 record_no,
						 LockTupleMode mode, LockWaitPolicy policy)
{
	_Atomic uint64_t *w = nvm_record_lock_word(table, record_no, false);
	int			spins = 0;

	if (w == NULL)
		return true;
	for (;;)
	{
		uint64		word;
		NvmLockers	l;
		int			i;
		TransactionId xid;

		pg_memory_barrier();
		word = pg_atomic_read_u64(as_pg(w));
		read_lockers(word, &l);
		i = conflicting_other(&l, mode);
		if (i < 0)
		{
			clear_if_ended(as_pg(w), word, &l);
			free_lockers(&l);
			return true;
		}
		xid = l.members[i].xid;
		if (l.provisional)
		{
			free_lockers(&l);
			backoff(&spins);
			continue;
		}
		free_lockers(&l);
		spins = 0;
		if (policy == LockWaitError)
		{
			if (!NVM_CONDITIONAL_XACT_LOCK_TABLE_WAIT(xid))
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("could not obtain lock on row in relation \"%s\"",
								RelationGetRelationName(rel))));
		}
		else if (policy == LockWaitSkip)
		{
			if (!NVM_CONDITIONAL_XACT_LOCK_TABLE_WAIT(xid))
				return false;
		}
		else
			XactLockTableWait(xid, NULL, NULL, XLTW_None);
	}
}

/* ---------------------------------------------------------------------
 * Taking locks
 * ---------------------------------------------------------------------
 */

/*
 * remember_locked notes that this transaction installed a word for
 * record_no of table, for PREPARE TRANSACTION: the row (up to
 * NVM_REMEMBERED_LOCKS of them) and its table (always).
 */
static void
remember_locked(const NvmTable *table, uint64 record_no)
{
	int			i;

	if (locked_rows == NULL)
		locked_rows = MemoryContextAlloc(TopMemoryContext,
										 NVM_REMEMBERED_LOCKS * sizeof(NvmLockedRow));
	if (nlocked_rows < NVM_REMEMBERED_LOCKS)
	{
		locked_rows[nlocked_rows].desc = table->desc;
		locked_rows[nlocked_rows].record_no = record_no;
		nlocked_rows++;
	}
	else
		locked_rows_overflow = true;
	for (i = 0; i < nlocked_tables; i++)
	{
		if (locked_tables[i] == table->desc)
			return;
	}
	if (nlocked_tables == max_locked_tables)
	{
		max_locked_tables = Max(8, max_locked_tables * 2);
		if (locked_tables == NULL)
			locked_tables = MemoryContextAlloc(TopMemoryContext,
											   max_locked_tables * sizeof(NvmTableDesc *));
		else
			locked_tables = repalloc(locked_tables,
									 max_locked_tables * sizeof(NvmTableDesc *));
	}
	locked_tables[nlocked_tables++] = table->desc;
}

/*
 * compose_word makes the word that adds xid in mode to the lockers l of
 * old: the lockers that still run are kept (an entry of xid itself in a
 * weaker mode is replaced), and if more than one is left they become a
 * new MultiXactId.  *prepared says whether the word must stay PREPARED
 * (it keeps a locker of a PREPARED word).
 */
static uint64
compose_word(uint64 old, const NvmLockers *l, TransactionId xid, LockTupleMode mode,
			 bool *prepared)
{
	MultiXactMember *m = palloc((l->n + 1) * sizeof(MultiXactMember));
	int			n = 0;
	LockTupleMode strongest = mode;
	uint64		word;

	*prepared = false;
	for (int i = 0; i < l->n; i++)
	{
		if (!l->running[i])
			continue;
		if (TransactionIdEquals(l->members[i].xid, xid))
		{
			if (status_mode(l->members[i].status) > mode)
				mode = status_mode(l->members[i].status);
			continue;
		}
		m[n++] = l->members[i];
		if (status_mode(l->members[i].status) > strongest)
			strongest = status_mode(l->members[i].status);
		if (old & LW_PREPARED)
			*prepared = true;
	}
	if (mode > strongest)
		strongest = mode;
	m[n].xid = xid;
	m[n].status = nvm_tuplock_status[mode];
	n++;

	if (n == 1)
		word = (uint64) xid;
	else
		word = LW_MULTI | (uint64) MultiXactIdCreateFromMembers(n, m);
	pfree(m);
	word |= (uint64) strongest << LW_MODE_SHIFT;
	word |= current_gen() << LW_GEN_SHIFT;
	if (*prepared)
		word |= LW_PREPARED;
	return word;
}

/*
 * nvm_rowlock_take takes the row lock of record_no in mode for the current
 * (sub)transaction, without waiting (step L2):
 *	 - NVM_ROWLOCK_BUSY: another transaction's running locker holds a
 *	   conflicting mode (the caller waits with nvm_rowlock_wait_lockers,
 *	   or gives up);
 *	 - NVM_ROWLOCK_HELD: this transaction holds mode or a stronger one
 *	   already (nothing to give back);
 *	 - NVM_ROWLOCK_TAKEN: a word adding it is installed, PROVISIONAL;
 *	   the caller settles it with nvm_rowlock_keep or nvm_rowlock_give_back
 *	   before it takes another (an error on the way puts it back).
 * A word that another locker is deciding about is waited out first.
 */
NvmRowLockResult
nvm_rowlock_take(Relation rel, const NvmTable *table, uint64 record_no,
				 LockTupleMode mode)
{
	TransactionId xid = GetCurrentTransactionId();
	_Atomic uint64_t *w;
	int			spins = 0;

	Assert(pending_word == NULL);
	/* before this transaction can become a member of any MultiXactId */
	MultiXactIdSetOldestMember();
	w = nvm_record_lock_word(table, record_no, true);
	if (w == NULL)
		nvm_report_pool_full(rel);

	for (;;)
	{
		uint64		old = pg_atomic_read_u64(as_pg(w));
		uint64		new;
		NvmLockers	l;
		bool		prepared;

		read_lockers(old, &l);
		if (l.provisional && any_running(&l))
		{
			free_lockers(&l);
			backoff(&spins);
			continue;
		}
		if (conflicting_other(&l, mode) >= 0)
		{
			free_lockers(&l);
			return NVM_ROWLOCK_BUSY;
		}
		if (own_mode(&l) >= (int) mode)
		{
			free_lockers(&l);
			return NVM_ROWLOCK_HELD;
		}
		new = compose_word(old, &l, xid, mode, &prepared) | LW_PROVISIONAL;
		free_lockers(&l);

		/*
		 * A word that keeps a prepared transaction's lock must outlive a
		 * crash: its MultiXactId's record is flushed before the word can be
		 * seen.
		 */
		if (prepared && (new & LW_MULTI))
			XLogFlush(XactLastRecEnd);
		if (!pg_atomic_compare_exchange_u64(as_pg(w), &old, new))
			continue;
		pending_word = w;
		pending_prev = old;
		pending_set = new;
		remember_locked(table, record_no);
		return NVM_ROWLOCK_TAKEN;
	}
}

/*
 * nvm_rowlock_keep keeps the lock nvm_rowlock_take installed (step L3):
 * the word loses its PROVISIONAL mark (and is persisted if it is PREPARED).
 */
void
nvm_rowlock_keep(void)
{
	_Atomic uint64_t *w = pending_word;
	uint64		expected = pending_set;
	uint64		kept = pending_set & ~LW_PROVISIONAL;

	Assert(w != NULL);
	pending_word = NULL;
	if (!pg_atomic_compare_exchange_u64(as_pg(w), &expected, kept))
		elog(ERROR, "row-lock word of an nvm table changed while it was provisional");
	if (kept & LW_PREPARED)
		nvm_persist((void *) w, sizeof(uint64));
}

/*
 * nvm_rowlock_give_back puts the word back as it was before
 * nvm_rowlock_take installed it.
 */
void
nvm_rowlock_give_back(void)
{
	_Atomic uint64_t *w = pending_word;
	uint64		expected = pending_set;

	if (w == NULL)
		return;
	pending_word = NULL;
	(void) pg_atomic_compare_exchange_u64(as_pg(w), &expected, pending_prev);
}

/*
 * nvm_rowlock_held says whether this transaction holds a lock on
 * record_no in some mode.
 */
static bool
nvm_rowlock_held(const NvmTable *table, uint64 record_no)
{
	_Atomic uint64_t *w = nvm_record_lock_word(table, record_no, false);
	NvmLockers	l;
	bool		held;

	if (w == NULL)
		return false;
	read_lockers(pg_atomic_read_u64(as_pg(w)), &l);
	held = own_mode(&l) >= 0;
	free_lockers(&l);
	return held;
}

/* ---------------------------------------------------------------------
 * The queue of waiters
 * ---------------------------------------------------------------------
 */

/*
 * nvm_rowlock_enqueue queues the caller, which is about to wait on the row
 * record_no for an operation in mode, behind the earlier waiters, by taking
 * the record's queue lock in mode (heap's LockTuple before
 * XactLockTableWait, README.tuplock), unless it is queued already.  The
 * queue lock is a tuple lock of the relation named by the record number
 * with NVM_QUEUE_LOCK_BIT in the offset (never a TID).  A backend that
 * holds a lock on the row in some mode, or whose own running version is
 * the row's newest (own_newest), does not queue: a waiter ahead may be
 * waiting for it.  The caller keeps its place until nvm_rowlock_dequeue
 * (the queue lock is also released if the subtransaction fails).
 */
void
nvm_rowlock_enqueue(Relation rel, const NvmTable *table, uint64 record_no,
					LockTupleMode mode, bool own_newest, NvmRowQueue *q)
{
	if (q->queued || own_newest || nvm_rowlock_held(table, record_no))
		return;
	SET_LOCKTAG_TUPLE(q->tag,
					  rel->rd_lockInfo.lockRelId.dbId,
					  rel->rd_lockInfo.lockRelId.relId,
					  (BlockNumber) (record_no / NVM_TUPLES_PER_BLOCK),
					  (OffsetNumber) ((record_no % NVM_TUPLES_PER_BLOCK + 1) | NVM_QUEUE_LOCK_BIT));
	q->lockmode = nvm_tuplock_hw[mode];
	(void) LockAcquire(&q->tag, q->lockmode, false, false);
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
 * VACUUM
 * ---------------------------------------------------------------------
 */

/*
 * nvm_rowlock_vacuum clears the lock words of records below nrec whose
 * lockers have all ended, and returns how many it cleared: afterwards
 * every word names only running transactions (see "Wraparound" above).
 */
uint64
nvm_rowlock_vacuum(const NvmTable *table, uint64 nrec)
{
	uint64		cleared = 0;

	if (atomic_load(&table->desc->lock_words) == 0)
		return 0;
	for (uint64 r = 1; r < nrec; r++)
	{
		_Atomic uint64_t *w = nvm_record_lock_word(table, r, false);
		uint64		word;
		NvmLockers	l;

		if (r % 4096 == 0)
			CHECK_FOR_INTERRUPTS();
		if (w == NULL || (word = pg_atomic_read_u64(as_pg(w))) == 0)
			continue;
		read_lockers(word, &l);
		if (!l.provisional && !any_running(&l) &&
			pg_atomic_compare_exchange_u64(as_pg(w), &word, 0))
			cleared++;
		free_lockers(&l);
	}
	return cleared;
}

/* ---------------------------------------------------------------------
 * PREPARE TRANSACTION and transaction end
 * ---------------------------------------------------------------------
 */

/*
 * Words marked at PREPARE TRANSACTION, for the redo of standbys: pairs of
 * record number and word of one table at a time (prepared_words_table).
 */
static uint64 *prepared_words = NULL;
static uint32 nprepared_words = 0;
static uint32 max_prepared_words = 0;
static const NvmTableDesc *prepared_words_table = NULL;

/*
 * log_prepared_words writes the words gathered for the standbys' redo
 * (nvm_redo_log_lock_words) and starts an empty list.
 */
static void
log_prepared_words(void)
{
	if (nprepared_words > 0)
		nvm_redo_log_lock_words(&prepared_words_table->key, prepared_words, nprepared_words);
	nprepared_words = 0;
}

/*
 * note_prepared_word remembers, for the standbys' redo or a checkpoint's
 * in-doubt file, that record_no's word of table is word, which names a
 * prepared transaction.  Where neither is written (no redo, and no
 * in-doubt file being gathered: nvm_redo_log_lock_words says), the words
 * are dropped when logged.  The capture at the end of recovery gathers
 * its in-doubt file in the startup process, which writes no redo: the
 * words must reach its file all the same.
 */
static void
note_prepared_word(const NvmTable *table, uint64 record_no, uint64 word)
{
	if (prepared_words_table != table->desc || nprepared_words == max_prepared_words)
	{
		log_prepared_words();
		prepared_words_table = table->desc;
	}
	if (prepared_words == NULL)
	{
		max_prepared_words = NVM_REMEMBERED_LOCKS;
		prepared_words = MemoryContextAlloc(TopMemoryContext,
											2 * sizeof(uint64) * max_prepared_words);
	}
	prepared_words[2 * nprepared_words] = record_no;
	prepared_words[2 * nprepared_words + 1] = word;
	nprepared_words++;
}

/*
 * mark_prepared marks record_no's word PREPARED if it names this
 * transaction, and flushes it (with the array's segment pointer).  A word
 * that names it is noted for the standbys' redo even when another prepared
 * locker marked it already: the standby must have this locker too.
 */
static void
mark_prepared(const NvmTable *table, uint64 record_no)
{
	_Atomic uint64_t *w = nvm_record_lock_word(table, record_no, true);

	if (w == NULL)
		return;
	for (;;)
	{
		uint64		word = pg_atomic_read_u64(as_pg(w));
		NvmLockers	l;
		bool		mine;

		if (word == 0)
			return;
		read_lockers(word, &l);
		mine = own_mode(&l) >= 0;
		free_lockers(&l);
		if (!mine)
			return;
		if ((word & LW_PREPARED) ||
			pg_atomic_compare_exchange_u64(as_pg(w), &word, word | LW_PREPARED))
		{
			nvm_flush((void *) w, sizeof(uint64));
			note_prepared_word(table, record_no, word | LW_PREPARED);
			return;
		}
	}
}

/*
 * persist_prepared_locks marks every word this transaction installed
 * PREPARED and makes them durable, before the prepare record: the rows it
 * remembers, or, if it locked more than it remembers, every word of the
 * tables it locked rows in.  Then it logs the marked words for standbys
 * (LOCKS records, nvm_redofmt.h), also before the prepare record, so that
 * a standby promoted while the transaction is prepared holds its locks.
 */
static void
persist_prepared_locks(void)
{
	for (int i = 0; i < nlocked_tables; i++)
	{
		NvmTable	t = {locked_tables[i]};

		if (locked_rows_overflow)
		{
			uint64		limit = nvm_table_record_limit(&t);

			for (uint64 r = 1; r < limit; r++)
			{
				if (r % 4096 == 0)
					CHECK_FOR_INTERRUPTS();
				if (nvm_record_lock_word(&t, r, false) != NULL)
					mark_prepared(&t, r);
			}
		}
		nvm_flush(&t.desc->lock_words, sizeof(nvm_off));
	}
	if (!locked_rows_overflow)
	{
		for (int i = 0; i < nlocked_rows; i++)
		{
			NvmTable	t = {locked_rows[i].desc};

			mark_prepared(&t, locked_rows[i].record_no);
		}
	}
	nvm_drain();
	log_prepared_words();
}

/*
 * nvm_rowlock_log_prepared_words logs (LOCKS records) every word of table t
 * that a prepared transaction holds, as PREPARE TRANSACTION logged them:
 * the image of the pool for a base backup (checkpoint/nvm_backup.c) carries them,
 * so that a restored cluster holds the row locks of transactions still
 * prepared.  A word a COMMIT or ROLLBACK PREPARED releases meanwhile is
 * logged as it was; the restored cluster treats it as its primary would
 * after a restart.
 */
void
nvm_rowlock_log_prepared_words(const NvmTable *t)
{
	uint64		limit = nvm_table_record_limit(t);

	for (uint64 r = 1; r < limit; r++)
	{
		_Atomic uint64_t *w = nvm_record_lock_word(t, r, false);
		uint64		word;

		if (r % 4096 == 0)
			CHECK_FOR_INTERRUPTS();
		if (w == NULL)
			continue;
		word = atomic_load(w);
		if (word & LW_PREPARED)
			note_prepared_word(t, r, word);
	}
	log_prepared_words();
}

/*
 * nvm_rowlock_before_prepare persists the words of a transaction being
 * prepared (PRE_PREPARE comes before the prepare record); the transaction
 * end (nvm_xact_end.c) calls it.
 */
void
nvm_rowlock_before_prepare(void)
{
	if (nlocked_tables > 0)
		persist_prepared_locks();
}

/*
 * nvm_rowlock_at_xact_end puts back a PROVISIONAL word left by an error,
 * clears a decision word and forgets the words to mark at PREPARE, at the
 * end of a transaction (commit, abort, prepare; a parallel worker's).  The
 * locks themselves end with the transaction's xids.
 */
void
nvm_rowlock_at_xact_end(void)
{
	nvm_rowlock_give_back();
	nvm_rowlock_decided();
	nlocked_rows = 0;
	nlocked_tables = 0;
	locked_rows_overflow = false;
	nprepared_words = 0;
	prepared_words_table = NULL;
}

/*
 * nvm_rowlock_at_subxact_abort puts back a PROVISIONAL word left by an
 * error in a subtransaction.
 */
void
nvm_rowlock_at_subxact_abort(void)
{
	nvm_rowlock_give_back();
}
