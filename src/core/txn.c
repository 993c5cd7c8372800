/*
 * txn.c
 *	  The transaction and snapshot interface of the core (txn.h), the same
 *	  in every concurrency-control mode: the registry of the modes, clock
 *	  slots, the transaction life cycle with its write logs,
 *	  subtransactions, snapshots and the status API.  Transactions in doubt
 *	  are indoubt.c's; recovery and mode conversion recover.c's; the write
 *	  log is read back by writelog.c.
 *
 * Where the modes differ, a function below calls the pool's mode through
 * its operations (ccmode.h), registered in the section "The modes" (MCSI:
 * mcsi.c, N2DB: n2db.c, Pisces: pisces.c, POMVCC: pomvcc.c).  The persist
 * orders are written in txn.h; each step below says which of them it
 * implements.
 */
#include "txn.h"

#include "mcsi.h"
#include "n2db.h"
#include "pisces.h"
#include "pomvcc.h"

#include "persist.h"
#include "pool.h"
#include "segarray.h"
#include "storefmt.h"
#include "writelog.h"

#include "alloc.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * The modes
 *
 * The registry of the modes' operations (ccmode.h), and the calls into
 * them: every choice between modes is made here, on the pool's mode (a
 * snapshot and a horizon carry their own).
 * ---------------------------------------------------------------------
 */

static const NvmCcOps *const cc_ops[NVM_CC_END] = {
	[NVM_CC_MCSI] = &nvm_mcsi_ops,
	[NVM_CC_N2DB] = &nvm_n2db_ops,
	[NVM_CC_PISCES] = &nvm_pisces_ops,
	[NVM_CC_POMVCC] = &nvm_pomvcc_ops,
};

/* the operations of the mode nvm_cc runs (set with nvm_cc, NULL before) */
static const NvmCcOps *cur_ops = NULL;

/*
 * ops is the pool's mode's operations (before start-up, the mode of the
 * pool's header).
 */
static inline const NvmCcOps *
ops(void)
{
	if (__builtin_expect(cur_ops != NULL, 1))
		return cur_ops;
	return cc_ops[nvm_pool_header->cc_mode];
}

/* set_mode makes this process run nvm_cc's mode, whose state starts at state_off. */
static void
set_mode(void)
{
	cur_ops = cc_ops[nvm_cc->cc_mode];
	nvm_cc_state = (char *) nvm_cc + nvm_cc->state_off;
}

/* state_offset is where the mode's shared state starts, after the slots. */
static size_t
state_offset(uint32_t max_slots)
{
	size_t		off = sizeof(NvmCcShared) + (size_t) max_slots * sizeof(NvmSlotShared);

	return (off + NVM_CACHELINE - 1) / NVM_CACHELINE * NVM_CACHELINE;
}

/*
 * nvm_cc_shmem_size is the size of the shared state for max_slots slots,
 * with room for the state of the mode the pool was opened in and of the
 * mode it is converted to: the same before the conversion as after it, so
 * that every process lays the area out alike.
 */
size_t
nvm_cc_shmem_size(uint32_t max_slots)
{
	uint32_t	modes[3] = {nvm_pool_opened_mode, nvm_pool_header->cc_mode, nvm_pool_pending_mode};
	size_t		state = 0;

	for (int i = 0; i < 3; i++)
	{
		size_t		sz = nvm_cc_mode_known(modes[i]) ? cc_ops[modes[i]]->state_size(max_slots) : 0;

		if (sz > state)
			state = sz;
	}
	return state_offset(max_slots) + state;
}

void
nvm_cc_attach(void *shmem)
{
	nvm_cc = shmem;
	set_mode();
}

/*
 * nvm_cc_serializable says whether the pool's mode gives snapshots that
 * SERIALIZABLE can build on (ccmode.h).
 */
bool
nvm_cc_serializable(void)
{
	return ops()->serializable;
}

/*
 * nvm_cc_ops is the pool's mode's operations, for the files that share the
 * transaction state with this one (indoubt.c, recover.c).
 */
const NvmCcOps *
nvm_cc_ops(void)
{
	return ops();
}

/* nvm_status_get reads txid's entry in the status store of the pool's mode. */
NvmTxnStatus
nvm_status_get(uint64_t txid)
{
	return ops()->status_get(txid);
}

/*
 * known_completed says whether txid has completed without reading its
 * status, where the mode has such a shortcut (MCSI's last-completed
 * array).
 */
static inline bool
known_completed(uint64_t txid)
{
	const NvmCcOps *o = ops();

	return o->known_completed != NULL && o->known_completed(txid);
}

/*
 * handed_out_limit returns a value that every clock value of slot c
 * handed out so far is below.  It only grows.
 */
static uint64_t
handed_out_limit(uint32_t c)
{
	atomic_thread_fence(memory_order_acquire);
	return ops()->handed_out_limit(c);
}

/*
 * nvm_snapshot_contains says whether the transaction txid had completed when
 * the snapshot was taken (committed or aborted: the caller checks which).
 */
bool
nvm_snapshot_contains(const NvmSnapshot *snap, uint64_t txid)
{
	return cc_ops[snap->mode]->snapshot_contains(snap, txid);
}

/*
 * nvm_horizon_start: see txn.h.
 */
bool
nvm_horizon_start(NvmHorizon *h)
{
	h->mode = nvm_cc->cc_mode;
	return cc_ops[h->mode]->horizon_start(h);
}

/*
 * nvm_horizon_lower: see txn.h.
 */
void
nvm_horizon_lower(NvmHorizon *h, _Atomic uint64_t *vec, uint32_t nvec, uint64_t xmin)
{
	cc_ops[h->mode]->horizon_lower(h, vec, nvec, xmin);
}

/*
 * nvm_horizon_lower_to: see txn.h.
 */
void
nvm_horizon_lower_to(NvmHorizon *h, const NvmHorizon *to)
{
	if (h->mode != to->mode)
		return;
	cc_ops[h->mode]->horizon_lower_to(h, to);
}

/*
 * nvm_horizon_contains: see txn.h.
 */
bool
nvm_horizon_contains(const NvmHorizon *h, uint64_t txid)
{
	return cc_ops[h->mode]->horizon_contains(h, txid);
}

/* ---------------------------------------------------------------------
 * Transaction status
 * ---------------------------------------------------------------------
 */

/*
 * nvm_txn_final_status is the status that recovery and the resolution of a
 * transaction in doubt inline into txid's versions once its entry is
 * final: COMMITTED if the entry says so, else ABORTED.
 */
NvmTxnStatus
nvm_txn_final_status(uint64_t txid)
{
	return nvm_status_get(txid) == NVM_STATUS_COMMITTED ? NVM_STATUS_COMMITTED : NVM_STATUS_ABORTED;
}

bool
nvm_txid_is_running(uint64_t txid)
{
	if (known_completed(txid))
		return false;
	return nvm_status_get(txid) == NVM_STATUS_RUNNING;
}

/*
 * nvm_txid_handed_out: see txn.h.  A value is taken (the next value
 * raised) before any version carries it, so reading the limit after the
 * version is safe; a mode change restarts every clock and the counter
 * above every value handed out before.
 */
bool
nvm_txid_handed_out(uint64_t txid)
{
	uint32_t	c = nvm_txid_clock_id(txid);
	uint64_t	ts = nvm_txid_clock_ts(txid);

	if (c >= nvm_pool_header->max_slots || ts == 0)
		return false;
	return ts < handed_out_limit(c);
}

/*
 * nvm_status_entry: see txn.h.  The store's entry of value ts is reused
 * only by ts + one ring, which has not been handed out while it is not
 * below the limit, read after the entry.
 */
bool
nvm_status_entry(uint64_t txid, NvmTxnStatus *status)
{
	uint32_t	c = nvm_txid_clock_id(txid);
	uint64_t	ts = nvm_txid_clock_ts(txid);

	if (c >= nvm_pool_header->max_slots || ts == 0)
		return false;
	if (!ops()->status_entry(txid, status) ||
		ts + ops()->ring_size() < handed_out_limit(c))
		return false;
	return true;
}

bool
nvm_txid_unfinished(uint64_t txid)
{
	NvmSlotShared *ss;
	uint32_t	c = nvm_txid_clock_id(txid);

	if (txid == NVM_INVALID_TXID || c >= nvm_cc->max_slots)
		return false;
	ss = &nvm_cc->slots[c];
	return atomic_load(&ss->running_txid) == txid || atomic_load(&ss->indoubt_txid) == txid;
}

/* ---------------------------------------------------------------------
 * The shared state and the slots
 * ---------------------------------------------------------------------
 */

/*
 * nvm_cc_layout makes shmem (nvm_cc_shmem_size bytes) the shared state of
 * concurrency control for max_slots slots, all zero, in the pool's mode,
 * and makes this process run that mode (recovery, recover.c, fills it in).
 */
void
nvm_cc_layout(NvmCcShared *ms, uint32_t max_slots)
{
	nvm_cc = ms;
	memset(ms, 0, nvm_cc_shmem_size(max_slots));
	ms->cc_mode = nvm_pool_header->cc_mode;
	ms->max_slots = max_slots;
	ms->state_off = state_offset(max_slots);
	set_mode();
	nvm_spin_init(&ms->slot_alloc_lock);
	nvm_spin_init(&ms->indoubt_lock);
}

/*
 * nvm_cc_set_mode records mode as the one the shared state runs and makes
 * this process run it (mode conversion, recover.c).
 */
void
nvm_cc_set_mode(uint32_t mode)
{
	nvm_cc->cc_mode = mode;
	set_mode();
}

/*
 * nvm_slot_acquire claims the lowest free clock slot for the calling
 * process and returns it, or -1 when every slot is taken.  The high-water
 * mark is raised before the slot can run a transaction, so snapshots taken
 * afterwards scan it.
 */
int
nvm_slot_acquire(uint32_t owner_pid)
{
	NvmCcShared *ms = nvm_cc;
	int			found = -1;

	nvm_spin_lock(&ms->slot_alloc_lock);
	for (uint32_t c = 0; c < ms->max_slots; c++)
	{
		/* a slot with an unresolved in-doubt transaction keeps its write log */
		if (atomic_load(&ms->slots[c].in_use) == 0 &&
			atomic_load(&ms->slots[c].indoubt_txid) == NVM_INVALID_TXID)
		{
			atomic_store(&ms->slots[c].in_use, 1);
			ms->slots[c].owner_pid = owner_pid;
			if (atomic_load(&ms->slots_high_water) <= c)
				atomic_store(&ms->slots_high_water, c + 1);
			found = (int) c;
			break;
		}
	}
	nvm_spin_unlock(&ms->slot_alloc_lock);
	if (found >= 0)
		nvm_alloc_cache_bind(found);	/* the caller's cache of blocks */
	return found;
}

/*
 * nvm_slot_release gives the slot back, and the caller's cache of blocks
 * with it if it was bound for this slot.
 */
void
nvm_slot_release(int slot)
{
	NvmSlotShared *ss = &nvm_cc->slots[slot];

	nvm_alloc_cache_unbind(slot);

	atomic_store(&ss->running_txid, 0);
	ss->owner_pid = 0;
	atomic_store_explicit(&ss->in_use, 0, memory_order_release);
}

/* ---------------------------------------------------------------------
 * Snapshots
 * ---------------------------------------------------------------------
 */

void
nvm_snapshot_set_policy(NvmSnapshotPolicy policy)
{
	nvm_cc->snapshot_policy = (uint32_t) policy;
}

/*
 * nvm_snapshot_take gives the caller a snapshot.  MCSI: generation (a scan
 * of the last-completed array) is serialised by a try-lock, so any two
 * snapshots are ordered by containment (paper Eq. 1), and scanning never
 * blocks transactions from starting or completing; a caller that finds a
 * generation running uses a buffered result as its policy allows (see
 * NvmSnapshotPolicy).  N2DB: the PostgreSQL-style lock-and-scan.
 */
void
nvm_snapshot_take(NvmSnapshot *snap)
{
	ops()->snapshot(snap, (NvmSnapshotPolicy) nvm_cc->snapshot_policy);
}

/*
 * nvm_snapshot_take_fresh takes a snapshot that contains every transaction
 * completed before the call, whatever the buffering policy (PAPER falls
 * back to JOIN): what a snapshot pinned for garbage collection needs.
 */
void
nvm_snapshot_take_fresh(NvmSnapshot *snap)
{
	NvmSnapshotPolicy policy = (NvmSnapshotPolicy) nvm_cc->snapshot_policy;

	ops()->snapshot(snap, policy == NVM_SNAPSHOT_PAPER ? NVM_SNAPSHOT_JOIN : policy);
}

size_t
nvm_snapshot_size(const NvmSnapshot *snap)
{
	return offsetof(NvmSnapshot, ts) + (size_t) snap->nslots * sizeof(uint64_t);
}

/* ---------------------------------------------------------------------
 * Transactions
 * ---------------------------------------------------------------------
 */

void
nvm_txn_init(NvmTxn *txn, int slot)
{
	memset(txn, 0, sizeof(*txn));
	txn->slot = slot;
}

/* why nvm_txn_begin_write last failed in this thread */
static _Thread_local NvmBeginFailure begin_failure = NVM_BEGIN_OK;

NvmBeginFailure
nvm_txn_begin_failure(void)
{
	return begin_failure;
}

/*
 * nvm_txn_begin_failure_detail says, in a sentence for the user, why the
 * pool's mode had no room for a new transaction (NVM_BEGIN_STORE_FULL).
 */
const char *
nvm_txn_begin_failure_detail(void)
{
	const char *detail = ops()->store_full;

	return detail != NULL ? detail : "The concurrency control's status store has no room.";
}

/*
 * ensure_ring gives the slot its status ring at its first write, in a pool
 * whose rings are allocated at first use (in both modes, so that every
 * slot that has handed out a txid has a ring whatever mode the pool is
 * converted to).  Persist order: the zeroed ring is drained before the
 * slot names it, and the slot's ring_off is persisted before the ring is
 * used; a crash in between leaks the ring.  False if the pool is full.
 */
static bool
ensure_ring(NvmSlotPersist *sp)
{
	nvm_off		ring;

	if (sp->ring_off != 0)
		return true;
	ring = nvm_alloc_zeroed((size_t) nvm_pool_header->ring_words * sizeof(uint64_t));
	if (ring == 0)
		return false;
	nvm_drain();
	sp->ring_off = ring;
	nvm_persist(&sp->ring_off, sizeof(uint64_t));
	return true;
}

/*
 * nvm_txn_begin_write gives the transaction its txid at its first write:
 * the next clock value of its slot (raising and persisting the slot's clock
 * reservation first when needed), and stores RUNNING in its status entry.
 * That store is flushed but not drained: the drain that publishes the
 * transaction's first version makes it durable, and before that no version
 * carries this txid.  NVM_INVALID_TXID if the slot's ring found no room
 * or (N2DB) the commit log is full; nvm_txn_begin_failure says which.
 */
uint64_t
nvm_txn_begin_write(NvmTxn *txn)
{
	NvmSlotShared *ss;
	NvmSlotPersist *sp;

	if (txn->txid != NVM_INVALID_TXID)
		return txn->txid;

	ss = &nvm_cc->slots[txn->slot];
	sp = nvm_pool_slot((uint32_t) txn->slot);
	if (!ensure_ring(sp))
	{
		begin_failure = NVM_BEGIN_NO_SPACE;
		return NVM_INVALID_TXID;
	}
	/* the previous transaction's inlined statuses durable before its log is reused */
	nvm_drain();
	txn->txid = ops()->assign((uint32_t) txn->slot);
	if (txn->txid == NVM_INVALID_TXID)
	{
		begin_failure = NVM_BEGIN_STORE_FULL;
		return NVM_INVALID_TXID;	/* e.g. N2DB's commit-log ring is full */
	}

	txn->nt_versions = nvm_persist_version_writes() == NVM_WRITES_NONTEMPORAL;
	sp->log_txid = txn->txid;
	nvm_flush(&sp->log_txid, sizeof(uint64_t));
	txn->plog_block = sp->log_head;
	txn->plog_count = 0;

	atomic_store(&ss->running_txid, txn->txid);
	return txn->txid;
}

/*
 * nvm_txn_log_version remembers a version the transaction created: in the
 * backend-local log (for status inlining at the end and subtransaction
 * rollback) and in the slot's persistent write log (for recovery), whose
 * entry is flushed; the caller's next drain makes it durable before the
 * version is published.  Returns false if the pool has no room for a new
 * log block.
 */
bool
nvm_txn_log_version(NvmTxn *txn, nvm_off table, nvm_off version, int level)
{
	NvmSlotPersist *sp = nvm_pool_slot((uint32_t) txn->slot);
	size_t		pos = txn->plog_count % NVM_WRITE_LOG_ENTRIES;
	NvmWriteLogBlock *b;

	/* the persistent entry: find or chain the block it goes to */
	if (txn->plog_block == 0 || (pos == 0 && txn->plog_count > 0))
	{
		_Atomic nvm_off *link = txn->plog_block == 0 ? (_Atomic nvm_off *) &sp->log_head :
		(_Atomic nvm_off *) &((NvmWriteLogBlock *) nvm_ptr(txn->plog_block))->next;
		nvm_off		next = atomic_load(link);

		if (next == 0)
		{
			next = nvm_alloc_zeroed(sizeof(NvmWriteLogBlock));
			if (next == 0)
				return false;
			nvm_drain();		/* the zeroed block durable before it is linked */
			atomic_store(link, next);
			nvm_flush((const void *) link, sizeof(nvm_off));
		}
		txn->plog_block = next;
	}
	b = nvm_ptr(txn->plog_block);
	b->entries[pos].table = table;
	b->entries[pos].version = version;
	nvm_flush(&b->entries[pos], sizeof(NvmWriteLogEntryPair));
	txn->plog_count++;

	if (txn->nlog == txn->log_capacity)
		txn->log = nvm_array_grow(txn->log, &txn->log_capacity,
								  sizeof(NvmWriteLogEntry), 256);
	txn->log[txn->nlog].version = version;
	txn->log[txn->nlog].table = table;
	txn->log[txn->nlog].level = level;
	txn->nlog++;
	return true;
}

/*
 * nvm_txn_unlog_last forgets the last logged version (it was never
 * published).  Its persistent entry stays behind as a stale entry: the
 * next append overwrites it, and until then it names a block that no
 * longer carries this txid, or a version of this very transaction.
 */
void
nvm_txn_unlog_last(NvmTxn *txn)
{
	if (txn->nlog > 0)
		txn->nlog--;
	if (txn->plog_count > 0)
	{
		size_t		k = --txn->plog_count;

		if (k > 0 && k % NVM_WRITE_LOG_ENTRIES == 0)
		{
			/* entry k opened a block: the last entry is in the block before */
			NvmSlotPersist *sp = nvm_pool_slot((uint32_t) txn->slot);
			nvm_off		blk = sp->log_head;

			for (size_t i = 0; i + 1 < k / NVM_WRITE_LOG_ENTRIES; i++)
				blk = ((NvmWriteLogBlock *) nvm_ptr(blk))->next;
			txn->plog_block = blk;
		}
	}
}

static NvmTxnCommitHook commit_hook = NULL;

void
nvm_txn_set_commit_hook(NvmTxnCommitHook hook)
{
	commit_hook = hook;
}

/* nvm_txn_run_commit_hook runs the commit hook, if one is set (indoubt.c). */
void
nvm_txn_run_commit_hook(uint32_t slot, uint64_t txid, const NvmTxn *txn)
{
	if (commit_hook != NULL)
		commit_hook(slot, txid, txn);
}

size_t
nvm_txn_write_log_each(uint32_t slot, uint64_t txid, const NvmTxn *txn,
					   NvmWriteLogVisitor fn, void *arg)
{
	size_t		calls = 0;

	if (txn != NULL)
	{
		for (size_t i = 0; i < txn->nlog; i++)
		{
			if (nvm_version_inlined_aborted(nvm_ptr(txn->log[i].version)))
				continue;
			fn(txn->log[i].table, txn->log[i].version, arg);
			calls++;
		}
		return calls;
	}
	for (nvm_off block = nvm_pool_slot(slot)->log_head;
		 block != 0 && nvm_writelog_valid_offset(block);
		 block = ((NvmWriteLogBlock *) nvm_ptr(block))->next)
	{
		NvmWriteLogBlock *b = nvm_ptr(block);

		for (int i = 0; i < NVM_WRITE_LOG_ENTRIES; i++)
		{
			if (!nvm_writelog_valid_pair(&b->entries[i], txid))
				return calls;
			if (nvm_version_inlined_aborted(nvm_ptr(b->entries[i].version)))
				continue;
			fn(b->entries[i].table, b->entries[i].version, arg);
			calls++;
		}
	}
	return calls;
}

static void
inline_status(nvm_off version, NvmTxnStatus status)
{
	NvmVersion *v = nvm_ptr(version);
	uint64_t	info = atomic_load_explicit(&v->info, memory_order_relaxed);

	if ((info & NVM_VINFO_STATUS_MASK) == 0)
	{
		atomic_fetch_or_explicit(&v->info, (uint64_t) status, memory_order_release);
		nvm_flush(&v->info, sizeof(uint64_t));
	}
}

static void
finish(NvmTxn *txn, NvmTxnStatus status)
{
	NvmSlotShared *ss = &nvm_cc->slots[txn->slot];
	uint64_t	ts = nvm_txid_clock_ts(txn->txid);

	if (txn->txid == NVM_INVALID_TXID)
		return;					/* read-only: nothing was written */

	/* versions and heads flushed by the writes become durable here ... */
	nvm_drain();
	/* ... before the status that makes them committed (or aborted) */
	ops()->status_set(txn->txid, status);

	/* the in-doubt marker is stale once the status is final */
	{
		NvmSlotPersist *sp = nvm_pool_slot((uint32_t) txn->slot);

		if (sp->indoubt_txid != NVM_INVALID_TXID)
		{
			sp->indoubt_txid = NVM_INVALID_TXID;
			nvm_flush(&sp->indoubt_txid, sizeof(uint64_t));
		}
	}

	/* the commit is durable: the hook logs it before anybody can see it */
	if (status == NVM_STATUS_COMMITTED && commit_hook != NULL)
		commit_hook((uint32_t) txn->slot, txn->txid, txn);

	/* inline the final status; flushed now, drained by the next fence */
	for (size_t i = 0; i < txn->nlog; i++)
		inline_status(txn->log[i].version, status);

	/* publish the completion: snapshots taken from now on include it */
	ops()->publish_completion((uint32_t) txn->slot, ts, status);
	atomic_store(&ss->running_txid, 0);
	txn->txid = NVM_INVALID_TXID;
	txn->external_id = 0;
	txn->nlog = 0;
}

void
nvm_txn_commit(NvmTxn *txn)
{
	finish(txn, NVM_STATUS_COMMITTED);
}

void
nvm_txn_abort(NvmTxn *txn)
{
	finish(txn, NVM_STATUS_ABORTED);
}

/*
 * nvm_txn_subxact_commit hands the versions of a committed subtransaction
 * to its parent.
 */
void
nvm_txn_subxact_commit(NvmTxn *txn, int level)
{
	for (size_t i = 0; i < txn->nlog; i++)
		if (txn->log[i].level >= level)
			txn->log[i].level = level - 1;
}

/*
 * nvm_txn_subxact_abort marks every version created at nesting level
 * >= level as aborted (inlined, flushed; the commit's drain makes it
 * durable before the transaction's status can say committed) and forgets
 * them.
 */
void
nvm_txn_subxact_abort(NvmTxn *txn, int level)
{
	size_t		keep = 0;

	for (size_t i = 0; i < txn->nlog; i++)
	{
		if (txn->log[i].level >= level)
			inline_status(txn->log[i].version, NVM_STATUS_ABORTED);
		else
			txn->log[keep++] = txn->log[i];
	}
	txn->nlog = keep;
}
