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
 * word names the locker, as heap's xmax does; its bits, and how the
 * lockers it names are read back, are nvm_lockword.c's.
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
 * means nothing: its start number says so, and readers ignore it.  The
 * exception, a prepared transaction's words, is nvm_prepared_locks.c's.
 *
 * Wraparound.  VACUUM clears every word whose lockers have ended
 * (nvm_rowlock_vacuum; nvm_lockword.c says why that suffices).
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
 *	 W2. publishes in its slot's decision word (nvm_decision.c) that it is
 *		 deciding about r;
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

#include "access/multixact.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/rel.h"

#include "persist.h"

#include "space/nvm_relation.h"
#include "wait/nvm_decision.h"
#include "wait/nvm_lockword.h"
#include "wait/nvm_prepared_locks.h"
#include "wait/nvm_rowlock.h"

/* The queue lock of a record is a tuple lock with this bit in the offset. */
#define NVM_QUEUE_LOCK_BIT		0x8000

/*
 * The word this backend has made PROVISIONAL, if any (nvm_rowlock_take),
 * with its value before and the value installed.
 */
static _Atomic uint64_t *pending_word = NULL;
static uint64 pending_prev = 0;
static uint64 pending_set = 0;

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
	word = pg_atomic_read_u64(nvm_lockword_pg(w));
	if (word == 0 || !nvm_lockword_modes_conflict(mode, NVM_LW_MODE(word)))
		return false;
	nvm_lockword_read(word, &l);
	result = nvm_lockword_conflicting_other(&l, mode) >= 0;
	nvm_lockword_clear_if_ended(nvm_lockword_pg(w), word, &l);
	nvm_lockword_free(&l);
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
		word = pg_atomic_read_u64(nvm_lockword_pg(w));
		nvm_lockword_read(word, &l);
		i = nvm_lockword_conflicting_other(&l, mode);
		if (i < 0)
		{
			nvm_lockword_clear_if_ended(nvm_lockword_pg(w), word, &l);
			nvm_lockword_free(&l);
			return true;
		}
		xid = l.members[i].xid;
		if (l.provisional)
		{
			nvm_lockword_free(&l);
			backoff(&spins);
			continue;
		}
		nvm_lockword_free(&l);
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
			if (nvm_lockword_status_mode(l->members[i].status) > mode)
				mode = nvm_lockword_status_mode(l->members[i].status);
			continue;
		}
		m[n++] = l->members[i];
		if (nvm_lockword_status_mode(l->members[i].status) > strongest)
			strongest = nvm_lockword_status_mode(l->members[i].status);
		if (old & NVM_LW_PREPARED)
			*prepared = true;
	}
	if (mode > strongest)
		strongest = mode;
	m[n].xid = xid;
	m[n].status = nvm_lockword_status_of(mode);
	n++;

	if (n == 1)
		word = (uint64) xid;
	else
		word = NVM_LW_MULTI | (uint64) MultiXactIdCreateFromMembers(n, m);
	pfree(m);
	word |= (uint64) strongest << NVM_LW_MODE_SHIFT;
	word |= nvm_lockword_gen() << NVM_LW_GEN_SHIFT;
	if (*prepared)
		word |= NVM_LW_PREPARED;
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
		uint64		old = pg_atomic_read_u64(nvm_lockword_pg(w));
		uint64		new;
		NvmLockers	l;
		bool		prepared;

		nvm_lockword_read(old, &l);
		if (l.provisional && nvm_lockword_any_running(&l))
		{
			nvm_lockword_free(&l);
			backoff(&spins);
			continue;
		}
		if (nvm_lockword_conflicting_other(&l, mode) >= 0)
		{
			nvm_lockword_free(&l);
			return NVM_ROWLOCK_BUSY;
		}
		if (nvm_lockword_own_mode(&l) >= (int) mode)
		{
			nvm_lockword_free(&l);
			return NVM_ROWLOCK_HELD;
		}
		new = compose_word(old, &l, xid, mode, &prepared) | NVM_LW_PROVISIONAL;
		nvm_lockword_free(&l);

		/*
		 * A word that keeps a prepared transaction's lock must outlive a
		 * crash: its MultiXactId's record is flushed before the word can be
		 * seen.
		 */
		if (prepared && (new & NVM_LW_MULTI))
			XLogFlush(XactLastRecEnd);
		if (!pg_atomic_compare_exchange_u64(nvm_lockword_pg(w), &old, new))
			continue;
		pending_word = w;
		pending_prev = old;
		pending_set = new;
		nvm_prepared_locks_remember(table, record_no);
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
	uint64		kept = pending_set & ~NVM_LW_PROVISIONAL;

	Assert(w != NULL);
	pending_word = NULL;
	if (!pg_atomic_compare_exchange_u64(nvm_lockword_pg(w), &expected, kept))
		elog(ERROR, "row-lock word of an nvm table changed while it was provisional");
	if (kept & NVM_LW_PREPARED)
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
	(void) pg_atomic_compare_exchange_u64(nvm_lockword_pg(w), &expected, pending_prev);
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
	nvm_lockword_read(pg_atomic_read_u64(nvm_lockword_pg(w)), &l);
	held = nvm_lockword_own_mode(&l) >= 0;
	nvm_lockword_free(&l);
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
	q->lockmode = nvm_lockword_hw_mode(mode);
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
		if (w == NULL || (word = pg_atomic_read_u64(nvm_lockword_pg(w))) == 0)
			continue;
		nvm_lockword_read(word, &l);
		if (!l.provisional && !nvm_lockword_any_running(&l) &&
			pg_atomic_compare_exchange_u64(nvm_lockword_pg(w), &word, 0))
			cleared++;
		nvm_lockword_free(&l);
	}
	return cleared;
}

/* ---------------------------------------------------------------------
 * Transaction end
 * ---------------------------------------------------------------------
 */

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
	nvm_decision_clear();
	nvm_prepared_locks_forget();
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
