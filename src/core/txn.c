/*
 * txn.c
 *	  The transaction and snapshot interface of the core (txn.h), the same
 *	  in every concurrency-control mode: clock slots, the transaction life
 *	  cycle with its write logs, in-doubt and prepared transactions,
 *	  subtransactions, the status API, recovery and mode conversion.
 *
 * Where the modes differ, a function below calls the pool's mode through
 * its operations (ccmode.h), registered in the section "The modes" (MCSI:
 * mcsi.c, N2DB: n2db.c).  The persist orders are written in txn.h; each
 * step below says which of them it implements.
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

#include "alloc.h"

#include <stdlib.h>
#include <string.h>

NvmCcShared *nvm_cc = NULL;
void	   *nvm_cc_state = NULL;
bool		(*nvm_cc_horizon_fn) (NvmHorizon *h) = NULL;

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
 * Recovery and slots
 * ---------------------------------------------------------------------
 */

/*
 * valid_version_offset says whether off can be the offset of a version
 * inside the chunk area (write-log entries may be stale).
 */
static bool
valid_version_offset(nvm_off off)
{
	return off % 8 == 0 && off >= NVM_BLOCK_HEADER_SIZE &&
		nvm_alloc_contains(off - NVM_BLOCK_HEADER_SIZE, NVM_BLOCK_HEADER_SIZE + sizeof(NvmVersion));
}

/*
 * valid_log_pair says whether a write-log entry names an allocated version
 * of transaction txid in a valid table.
 */
static bool
valid_log_pair(const NvmWriteLogEntryPair *e, uint64_t txid)
{
	NvmVersion *v;

	if (!valid_version_offset(e->version) || !valid_version_offset(e->table))
		return false;
	if (!(*(uint64_t *) (nvm_pool_base + e->version - NVM_BLOCK_HEADER_SIZE) & NVM_BLOCK_ALLOCATED))
		return false;
	v = nvm_ptr(e->version);
	return v->txid == txid &&
		((NvmTableDesc *) nvm_ptr(e->table))->magic == NVM_TABLE_MAGIC;
}

/*
 * reclaim_version unlinks an aborted version from the head of its chain and
 * frees it, when it is the head (a version below another one stays, for
 * garbage collection).  Only at start-up, when nobody reads the chains.
 * Persist order: head and version slot durable before the block is freed.
 */
static void
reclaim_version(const NvmWriteLogEntryPair *e)
{
	NvmTableDesc *desc = nvm_ptr(e->table);
	NvmVersion *v = nvm_ptr(e->version);
	_Atomic uint64_t *head = nvm_segarray_slot(&desc->records, v->record_no, false);
	_Atomic uint64_t *vslot = nvm_segarray_slot(&desc->versions, v->version_no, false);

	if (head == NULL || atomic_load(head) != e->version)
		return;
	atomic_store(head, v->prev);
	nvm_flush((const void *) head, sizeof(uint64_t));
	if (vslot != NULL && atomic_load(vslot) == e->version)
	{
		atomic_store(vslot, 0);
		nvm_flush((const void *) vslot, sizeof(uint64_t));
	}
	nvm_drain();
	nvm_free(e->version);
}

/*
 * replay_write_log inlines the final status of the slot's last writing
 * transaction into every version it logged (its status entry was made
 * final just before).  Stale entries of older transactions end the scan.
 * With reclaim (start-up only), an aborted transaction's versions are then
 * unlinked and freed, newest first: its space comes back.
 */
static void
replay_write_log(NvmSlotPersist *sp, bool reclaim)
{
	uint64_t	txid = sp->log_txid;
	NvmTxnStatus st;
	nvm_off		block = sp->log_head;
	NvmWriteLogEntryPair *found = NULL;
	size_t		nfound = 0,
				cap = 0;
	bool		done = false;

	if (txid == NVM_INVALID_TXID || block == 0)
		return;
	st = nvm_status_get(txid);
	if (st != NVM_STATUS_COMMITTED)
		st = NVM_STATUS_ABORTED;
	while (!done && block != 0 && valid_version_offset(block))
	{
		NvmWriteLogBlock *b = nvm_ptr(block);

		for (int i = 0; i < NVM_WRITE_LOG_ENTRIES; i++)
		{
			NvmVersion *v;
			uint64_t	info;

			if (!valid_log_pair(&b->entries[i], txid))
			{
				done = true;
				break;
			}
			v = nvm_ptr(b->entries[i].version);
			info = atomic_load(&v->info);
			if ((info & NVM_VINFO_STATUS_MASK) == 0)
			{
				info |= (uint64_t) st;
				atomic_store(&v->info, info);
				nvm_flush(&v->info, sizeof(uint64_t));
			}
			/* a version's own inlined status wins over the status store */
			if (reclaim && (info & NVM_VINFO_STATUS_MASK) == NVM_STATUS_ABORTED)
			{
				if (nfound == cap)
					found = nvm_array_grow(found, &cap, sizeof(*found), 64);
				found[nfound++] = b->entries[i];
			}
		}
		block = b->next;
	}
	nvm_drain();				/* inlined statuses durable before anything is unlinked */
	while (nfound > 0)
		reclaim_version(&found[--nfound]);
	free(found);
}

/*
 * nvm_cc_recover makes every non-final entry of the pool's status store
 * ABORTED (the mode's recover_store), keeps in-doubt transactions running, and
 * resumes every clock at its persisted reservation.  It reads the status
 * store and the slot array only: its cost depends on the number of slots,
 * not on the amount of data.
 */
void
nvm_cc_recover(void *shmem, uint32_t max_slots)
{
	NvmCcShared *ms = shmem;

	nvm_cc = ms;
	memset(ms, 0, nvm_cc_shmem_size(max_slots));
	ms->cc_mode = nvm_pool_header->cc_mode;
	ms->max_slots = max_slots;
	ms->state_off = state_offset(max_slots);
	set_mode();
	nvm_spin_init(&ms->slot_alloc_lock);
	nvm_spin_init(&ms->indoubt_lock);

	/*
	 * In-doubt transactions (see txn.h) are kept RUNNING for resolution;
	 * a marker whose transaction has a final status is stale.
	 */
	for (uint32_t c = 0; c < max_slots; c++)
	{
		NvmSlotPersist *sp = nvm_pool_slot(c);
		uint64_t	t = sp->indoubt_txid;

		if (t == NVM_INVALID_TXID)
			continue;
		if (nvm_txid_clock_id(t) == c && t == sp->log_txid &&
			nvm_status_get(t) == NVM_STATUS_RUNNING)
		{
			atomic_store(&ms->slots[c].indoubt_txid, t);
			ms->slots[c].indoubt_xid = sp->indoubt_xid;
		}
		else
		{
			sp->indoubt_txid = NVM_INVALID_TXID;
			nvm_flush(&sp->indoubt_txid, sizeof(uint64_t));
		}
	}

	/* the status store of the pool's mode: every non-final entry aborts */
	ops()->recover_store(max_slots);
	nvm_drain();
	ops()->state_init(nvm_cc_mode_state());

	for (uint32_t c = 0; c < max_slots; c++)
	{
		NvmSlotPersist *sp = nvm_pool_slot(c);
		NvmSlotShared *ss = &ms->slots[c];
		uint64_t	reserved = sp->clock_reserved;
		uint64_t	indoubt = atomic_load(&ss->indoubt_txid);

		if (reserved == 0)
			reserved = 1;
		atomic_store(&ss->last_completed, reserved - 1);
		ss->boot_last_completed = reserved - 1;
		ss->next_ts = reserved;
		if (indoubt != NVM_INVALID_TXID)
		{
			uint64_t	ts = nvm_txid_clock_ts(indoubt);

			/* undo the abort above: its outcome is the external log's */
			ops()->status_set(indoubt, NVM_STATUS_RUNNING);
			atomic_fetch_add(&ms->indoubt_count, 1);

			/*
			 * Until it is resolved, no snapshot may count it as completed
			 * (it may stay in doubt while snapshots are taken: a prepared
			 * transaction).  MCSI: the slot's last completed value stays
			 * below its clock value (every older transaction of the slot
			 * has a smaller one; none ran after it) and the slot is
			 * scanned by every snapshot; N2DB: it is on the active list.
			 * Resolution publishes its completion.  Waiters find it
			 * running under its external xid.
			 */
			ops()->recover_indoubt(c, ts);
			if (atomic_load(&ms->slots_high_water) <= c)
				atomic_store(&ms->slots_high_water, c + 1);
			atomic_store(&ss->running_txid, indoubt);
		}
		else
			replay_write_log(sp, true);
	}
	nvm_drain();
}

/*
 * nvm_cc_convert switches a recovered pool to new_mode.  After recovery
 * every version carries its final status inlined, so old transactions need
 * neither status store; it only remains that every old txid counts as
 * completed in the new mode: all clocks and the global counter restart
 * above the highest value either ever handed out.
 */
void
nvm_cc_convert(uint32_t new_mode)
{
	NvmCcShared *ms = nvm_cc;
	NvmPoolRoot *root = nvm_pool_root();
	uint64_t	start = root->n2db_reserved;
	NvmPoolHeader hdr;

	for (uint32_t c = 0; c < nvm_pool_header->max_slots; c++)
		if (nvm_pool_slot(c)->clock_reserved > start)
			start = nvm_pool_slot(c)->clock_reserved;
	for (uint32_t c = 0; c < nvm_pool_header->max_slots; c++)
	{
		NvmSlotPersist *sp = nvm_pool_slot(c);

		sp->clock_reserved = start;
		nvm_flush(&sp->clock_reserved, sizeof(uint64_t));
		if (c < ms->max_slots)
		{
			atomic_store(&ms->slots[c].last_completed, start - 1);
			ms->slots[c].boot_last_completed = start - 1;
			ms->slots[c].next_ts = start;
		}
	}
	root->n2db_reserved = start;
	nvm_flush(&root->n2db_reserved, sizeof(uint64_t));
	nvm_drain();

	/* last: the header says which mode the pool is in */
	hdr = *nvm_pool_header;
	hdr.cc_mode = new_mode;
	nvm_pool_header_rewrite(&hdr);
	ms->cc_mode = new_mode;
	set_mode();
	ops()->state_init(nvm_cc_mode_state());
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
		 block != 0 && valid_version_offset(block);
		 block = ((NvmWriteLogBlock *) nvm_ptr(block))->next)
	{
		NvmWriteLogBlock *b = nvm_ptr(block);

		for (int i = 0; i < NVM_WRITE_LOG_ENTRIES; i++)
		{
			if (!valid_log_pair(&b->entries[i], txid))
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
 * nvm_txn_mark_indoubt ties the outcome of the transaction to an external
 * xid, before the external log's commit record is written: its versions
 * and heads are made durable, then the slot's in-doubt marker (xid first,
 * then txid, one cache line) is persisted.  If the server crashes before
 * the nvm status is final, recovery asks the external log (see txn.h).
 */
void
nvm_txn_mark_indoubt(NvmTxn *txn, uint64_t external_xid)
{
	NvmSlotPersist *sp;

	if (txn->txid == NVM_INVALID_TXID)
		return;
	sp = nvm_pool_slot((uint32_t) txn->slot);
	nvm_drain();
	sp->indoubt_xid = external_xid;
	sp->indoubt_txid = txn->txid;
	nvm_persist(&sp->indoubt_xid, 2 * sizeof(uint64_t));
}

/*
 * nvm_txn_hand_over_indoubt hands the running transaction, whose in-doubt
 * marker is persisted (nvm_txn_mark_indoubt) and whose external xid has
 * been prepared (PostgreSQL's PREPARE TRANSACTION), over to the in-doubt
 * machinery, exactly as if recovery had found it in doubt: the slot keeps
 * it running (running_txid, and the external xid for waiters), is not
 * claimed by anybody until it is resolved, and does not publish its
 * completion.  So its last completed value stays below the transaction's
 * clock value (MCSI), or the transaction stays on the active list (N2DB),
 * and no snapshot counts it as completed until nvm_indoubt_resolve_all
 * finishes it.  The caller's process is detached from the slot: txn is
 * reset, and its next write must claim a slot again.
 */
void
nvm_txn_hand_over_indoubt(NvmTxn *txn)
{
	NvmCcShared *ms = nvm_cc;
	NvmSlotShared *ss;
	NvmSlotPersist *sp;

	if (txn->txid == NVM_INVALID_TXID)
		return;
	ss = &ms->slots[txn->slot];
	sp = nvm_pool_slot((uint32_t) txn->slot);
	/* the marker must be durable: after a crash, recovery finds it */
	if (sp->indoubt_txid != txn->txid)
		abort();
	ss->indoubt_xid = sp->indoubt_xid;
	atomic_store(&ss->running_txid, txn->txid);
	atomic_fetch_add(&ms->indoubt_count, 1);
	/* in doubt before the slot is free: nvm_slot_acquire skips it */
	atomic_store(&ss->indoubt_txid, txn->txid);
	ss->owner_pid = 0;
	atomic_store_explicit(&ss->in_use, 0, memory_order_release);

	free(txn->log);
	memset(txn, 0, sizeof(*txn));
	txn->slot = -1;
}

/*
 * finish_indoubt makes the in-doubt transaction t of slot c final; the
 * caller holds indoubt_lock.  Persist order: the final status is durable,
 * then inlined into every version its write log names (drained), then the
 * marker is cleared durably; only then is the completion published (MCSI:
 * the slot's last completed value; N2DB: off the active list), so a
 * snapshot that counts it as completed finds its status final, and then
 * the slot is free to be claimed.
 */
static void
finish_indoubt(uint32_t c, uint64_t t, bool commit)
{
	NvmCcShared *ms = nvm_cc;
	NvmSlotShared *ss = &ms->slots[c];
	NvmSlotPersist *sp = nvm_pool_slot(c);
	uint64_t	ts = nvm_txid_clock_ts(t);
	uint64_t	running = t;

	ops()->status_set(t, commit ? NVM_STATUS_COMMITTED : NVM_STATUS_ABORTED);
	/* the commit is durable: the hook logs it before anybody can see it */
	if (commit && commit_hook != NULL)
		commit_hook(c, t, NULL);
	replay_write_log(sp, false);	/* others may be reading: no reclaim */
	nvm_drain();
	sp->indoubt_txid = NVM_INVALID_TXID;
	nvm_persist(&sp->indoubt_txid, sizeof(uint64_t));
	ops()->publish_completion(c, ts, commit ? NVM_STATUS_COMMITTED : NVM_STATUS_ABORTED);
	(void) atomic_compare_exchange_strong(&ss->running_txid, &running, 0);
	atomic_store(&ss->indoubt_txid, NVM_INVALID_TXID);
	atomic_fetch_sub(&ms->indoubt_count, 1);
}

/*
 * nvm_indoubt_resolve_all decides every in-doubt transaction the resolver
 * can answer for (see finish_indoubt).  The resolver is asked without the
 * lock (it may take a while: PostgreSQL's procarray and commit log); the
 * decision is applied under it, if the slot still has that transaction.
 * Returns the number still unresolved.
 */
uint32_t
nvm_indoubt_resolve_all(NvmIndoubtResolver resolver)
{
	NvmCcShared *ms = nvm_cc;
	uint32_t	remaining = 0;
	uint32_t	n = atomic_load(&ms->slots_high_water);

	/* every in-doubt slot is below the high-water mark (recovery, hand-over) */
	for (uint32_t c = 0; c < n; c++)
	{
		NvmSlotShared *ss = &ms->slots[c];
		uint64_t	t = atomic_load(&ss->indoubt_txid);
		int			r;

		if (t == NVM_INVALID_TXID)
			continue;
		r = resolver(ss->indoubt_xid);
		if (r < 0)
		{
			remaining++;
			continue;
		}
		nvm_spin_lock(&ms->indoubt_lock);
		if (atomic_load(&ss->indoubt_txid) == t)
			finish_indoubt(c, t, r != 0);
		nvm_spin_unlock(&ms->indoubt_lock);
	}
	return remaining;
}

/*
 * nvm_indoubt_each calls fn for every transaction in doubt, with its slot,
 * txid and external xid, under the lock its resolution takes: it is not
 * resolved (and its slot not reused) while fn reads its write log.  fn
 * must not take that lock (it may write the external log, as the commit
 * hook does under it).  Returns how many it visited.
 */
uint32_t
nvm_indoubt_each(NvmIndoubtVisitor fn, void *arg)
{
	NvmCcShared *ms = nvm_cc;
	uint32_t	visited = 0;
	uint32_t	nslots = atomic_load(&ms->slots_high_water);

	if (!nvm_indoubt_pending())
		return 0;
	for (uint32_t c = 0; c < nslots; c++)
	{
		NvmSlotShared *ss = &ms->slots[c];
		uint64_t	t;

		if (atomic_load(&ss->indoubt_txid) == NVM_INVALID_TXID)
			continue;
		nvm_spin_lock(&ms->indoubt_lock);
		t = atomic_load(&ss->indoubt_txid);
		if (t != NVM_INVALID_TXID)
		{
			fn(c, t, ss->indoubt_xid, arg);
			visited++;
		}
		nvm_spin_unlock(&ms->indoubt_lock);
	}
	return visited;
}

/*
 * nvm_indoubt_abort_external resolves as aborted every unresolved in-doubt
 * transaction whose external xid is one of the n in xids, and returns how
 * many it resolved.  The external log calls it before it commits a
 * transaction with those xids: an xid named by a marker is handed out again
 * only if the marker's transaction never committed (its commit record, and
 * every record carrying the xid, were lost in a crash), so the marker's
 * transaction is certainly aborted, and once it is resolved the new
 * commit of the same xid cannot be taken for its.
 */
uint32_t
nvm_indoubt_abort_external(const uint64_t *xids, size_t n)
{
	NvmCcShared *ms = nvm_cc;
	uint32_t	aborted = 0;
	uint32_t	nslots = atomic_load(&ms->slots_high_water);

	if (!nvm_indoubt_pending())
		return 0;
	for (uint32_t c = 0; c < nslots; c++)
	{
		NvmSlotShared *ss = &ms->slots[c];
		uint64_t	t = atomic_load(&ss->indoubt_txid);
		bool		match = false;

		if (t == NVM_INVALID_TXID)
			continue;
		for (size_t i = 0; i < n && !match; i++)
			match = ss->indoubt_xid == xids[i];
		if (!match)
			continue;
		nvm_spin_lock(&ms->indoubt_lock);
		if (atomic_load(&ss->indoubt_txid) == t)
		{
			finish_indoubt(c, t, false);
			aborted++;
		}
		nvm_spin_unlock(&ms->indoubt_lock);
	}
	return aborted;
}

/*
 * nvm_indoubt_xid_of returns the external xid of txid if txid is an
 * unresolved in-doubt transaction, else 0.
 */
uint64_t
nvm_indoubt_xid_of(uint64_t txid)
{
	NvmSlotShared *ss;
	uint64_t	xid;

	if (!nvm_indoubt_pending() || txid == NVM_INVALID_TXID)
		return 0;
	ss = &nvm_cc->slots[nvm_txid_clock_id(txid)];
	if (atomic_load(&ss->indoubt_txid) != txid)
		return 0;
	xid = ss->indoubt_xid;
	if (atomic_load(&ss->indoubt_txid) != txid)
		return 0;
	return xid;
}

bool
nvm_indoubt_names_table(nvm_off table)
{
	NvmCcShared *ms = nvm_cc;

	if (!nvm_indoubt_pending())
		return false;
	for (uint32_t c = 0; c < ms->max_slots; c++)
	{
		uint64_t	t = atomic_load(&ms->slots[c].indoubt_txid);
		nvm_off		block;

		if (t == NVM_INVALID_TXID)
			continue;
		block = nvm_pool_slot(c)->log_head;
		while (block != 0 && valid_version_offset(block))
		{
			NvmWriteLogBlock *b = nvm_ptr(block);
			int			i;

			for (i = 0; i < NVM_WRITE_LOG_ENTRIES; i++)
			{
				if (!valid_log_pair(&b->entries[i], t))
					break;
				if (b->entries[i].table == table)
					return true;
			}
			if (i < NVM_WRITE_LOG_ENTRIES)
				break;
			block = b->next;
		}
	}
	return false;
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
