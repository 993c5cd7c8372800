/*
 * mcsi.c
 *	  Multi-clock snapshot isolation, MCSI's own design behind the
 *	  transaction interface (txn.c calls it through nvm_mcsi_ops; see
 *	  mcsi.h): status rings with
 *	  the dirty-bit helping protocol (MCSI paper Algorithm 1), per-slot
 *	  clocks and their reservation, the last-completed array, and vector
 *	  snapshots generated under a try-lock with buffering (§4.3).  Its
 *	  sibling n2db.c is the N2DB baseline.
 *
 * The persist orders are written in mcsi.h and txn.h; each step below says
 * which of them it implements.
 */
#include "mcsi.h"

#include "alloc.h"
#include "persist.h"
#include "pool.h"

#include <sched.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * Status words (Algorithm 1)
 * ---------------------------------------------------------------------
 */

/*
 * nvm_status_word_set stores a 2-bit status at position index of a status
 * word owned by the caller: the new value is stored with the dirty bit set,
 * flushed and drained, and only then is the dirty bit cleared.  A reader
 * that sees the dirty bit helps persist the word before trusting it, so no
 * reader ever acts on a status that a crash could still take back.
 */
void
nvm_status_word_set(_Atomic uint64_t *word, int index, NvmTxnStatus status)
{
	uint64_t	mask = UINT64_C(3) << (2 * index);
	uint64_t	old = atomic_load_explicit(word, memory_order_relaxed);
	uint64_t	newval = (old & ~mask & ~NVM_STATUS_DIRTY_BIT) | ((uint64_t) status << (2 * index));

	atomic_store_explicit(word, newval | NVM_STATUS_DIRTY_BIT, memory_order_release);
	nvm_flush((const void *) word, sizeof(uint64_t));
	nvm_drain();
	atomic_store_explicit(word, newval, memory_order_release);
}

/*
 * nvm_status_word_get reads the 2-bit status at position index; if the word
 * is dirty, it is persisted first (helping).
 */
NvmTxnStatus
nvm_status_word_get(_Atomic uint64_t *word, int index)
{
	uint64_t	res = atomic_load_explicit(word, memory_order_acquire);

	if (res & NVM_STATUS_DIRTY_BIT)
	{
		nvm_flush((const void *) word, sizeof(uint64_t));
		nvm_drain();
	}
	return (NvmTxnStatus) ((res >> (2 * index)) & 3);
}

/* status_word finds the word and position of clock value ts in slot's ring. */
static inline _Atomic uint64_t *
status_word(uint32_t slot, uint64_t ts, int *index)
{
	NvmSlotPersist *sp = nvm_pool_slot(slot);
	uint64_t	ring_txns = (uint64_t) nvm_pool_header->ring_words * NVM_STATUS_PER_WORD;
	uint64_t	i = ts % ring_txns;

	*index = (int) (i % NVM_STATUS_PER_WORD);
	return ((_Atomic uint64_t *) nvm_ptr(sp->ring_off)) + i / NVM_STATUS_PER_WORD;
}

/* mcsi_state is MCSI's shared state, NULL before start-up has built it. */
static inline NvmMcsiShared *
mcsi_state(void)
{
	return nvm_cc_mode_state();
}

static size_t
mcsi_state_size(uint32_t max_slots)
{
	(void) max_slots;
	return sizeof(NvmMcsiShared);
}

/*
 * mcsi_state_init sets up the snapshot generation with no buffered result
 * (the clocks and the last-completed array are the slots', which txn.c
 * sets up in every mode).
 */
static void
mcsi_state_init(void *state)
{
	NvmMcsiShared *ms = state;

	memset(ms, 0, sizeof(*ms));
	nvm_spin_init(&ms->snapshot_lock);
}

/*
 * nvm_mcsi_status_get reads txid's entry in its slot's status ring, with the
 * helping protocol (never dirty).
 */
NvmTxnStatus
nvm_mcsi_status_get(uint64_t txid)
{
	int			index;
	_Atomic uint64_t *word;

	word = status_word(nvm_txid_clock_id(txid), nvm_txid_clock_ts(txid), &index);
	return nvm_status_word_get(word, index);
}

/*
 * nvm_mcsi_status_set stores a status for txid durably in its slot's status
 * ring (Algorithm 1).
 */
void
nvm_mcsi_status_set(uint64_t txid, NvmTxnStatus status)
{
	int			index;
	_Atomic uint64_t *word;

	word = status_word(nvm_txid_clock_id(txid), nvm_txid_clock_ts(txid), &index);
	nvm_status_word_set(word, index, status);
}

/*
 * nvm_mcsi_status_entry reads the status-ring entry of txid as it is (no
 * helping) for nvm_status_entry, and says whether txid is from the current
 * MCSI era: the clocks restarted at the N2DB counter's reservation when the
 * pool last became an MCSI pool (a pool created in MCSI mode keeps that
 * word at 1).  The caller checks that no later value has reused the entry:
 * the ring entry of value ts is reused only by ts + one ring, which has not
 * been handed out while it is not below the slot's limit, read after the
 * entry.
 */
bool
nvm_mcsi_status_entry(uint64_t txid, NvmTxnStatus *status)
{
	uint32_t	c = nvm_txid_clock_id(txid);
	uint64_t	ts = nvm_txid_clock_ts(txid);
	nvm_off		ring = nvm_pool_slot(c)->ring_off;
	size_t		ring_bytes = (size_t) nvm_pool_header->ring_words * sizeof(uint64_t);
	int			index;
	_Atomic uint64_t *word;

	if (ts < atomic_load((_Atomic uint64_t *) &nvm_pool_root()->n2db_reserved))
		return false;
	/* a damaged slot must not make the checker read outside the pool */
	if ((nvm_pool_header->flags & NVM_POOL_LAZY_RINGS) ?
		!nvm_alloc_contains(ring, ring_bytes) :
		ring != nvm_pool_header->rings_off + (uint64_t) c * ring_bytes)
		return false;
	word = status_word(c, ts, &index);
	*status = (NvmTxnStatus) ((atomic_load_explicit(word, memory_order_acquire) >> (2 * index)) & 3);
	return true;
}

/* nvm_mcsi_ring_size is the number of entries of a slot's status ring. */
uint64_t
nvm_mcsi_ring_size(void)
{
	return (uint64_t) nvm_pool_header->ring_words * NVM_STATUS_PER_WORD;
}

/*
 * nvm_mcsi_recover_store makes every non-final status-ring entry ABORTED and
 * clears dirty bits (their values were flushed before the bit was ever
 * cleared, and a dirty word is exactly a flushed one); the caller drains.
 * It reads the status rings only: its cost depends on the number of slots,
 * not on the amount of data.
 */
void
nvm_mcsi_recover_store(uint32_t max_slots)
{
	uint32_t	ring_words = nvm_pool_header->ring_words;

	for (uint32_t c = 0; c < max_slots; c++)
	{
		_Atomic uint64_t *ring = nvm_ptr(nvm_pool_slot(c)->ring_off);

		if (ring == NULL)
			continue;		/* never ran a transaction (lazy rings) */
		for (uint32_t w = 0; w < ring_words; w++)
		{
			uint64_t	val = atomic_load(&ring[w]);
			uint64_t	fixed = val & ~NVM_STATUS_DIRTY_BIT;

			for (int i = 0; i < NVM_STATUS_PER_WORD; i++)
			{
				if (((fixed >> (2 * i)) & 3) == NVM_STATUS_RUNNING)
					fixed |= (uint64_t) NVM_STATUS_ABORTED << (2 * i);
			}
			if (fixed != val)
			{
				atomic_store(&ring[w], fixed);
				nvm_flush((const void *) &ring[w], sizeof(uint64_t));
			}
		}
	}
}

/*
 * nvm_mcsi_recover_indoubt keeps the recovered in-doubt transaction with
 * clock value ts of slot c out of every snapshot until it is resolved: the
 * slot's last completed value stays below ts (every older transaction of
 * the slot has a smaller one; none ran after it), and the slot is scanned
 * by every snapshot (the caller raises the high-water mark).
 */
void
nvm_mcsi_recover_indoubt(uint32_t c, uint64_t ts)
{
	NvmSlotShared *ss = &nvm_cc->slots[c];

	atomic_store(&ss->last_completed, ts - 1);
	ss->boot_last_completed = ts - 1;
}

/* ---------------------------------------------------------------------
 * Clocks and the last-completed array
 * ---------------------------------------------------------------------
 */

/*
 * nvm_mcsi_known_completed says whether txid has completed, from its slot's
 * last completed value, without reading its status.
 */
bool
nvm_mcsi_known_completed(uint64_t txid)
{
	return nvm_txid_clock_ts(txid) <=
		atomic_load_explicit(&nvm_cc->slots[nvm_txid_clock_id(txid)].last_completed, memory_order_acquire);
}

/*
 * nvm_mcsi_handed_out_limit returns a value that every clock value of slot
 * c handed out so far is below: the next value to hand out, which is below
 * the persisted reservation (the reservation before start-up has built the
 * shared state).  It only grows.
 */
uint64_t
nvm_mcsi_handed_out_limit(uint32_t c)
{
	if (nvm_cc != NULL && c < nvm_cc->max_slots)
		return *(volatile uint64_t *) &nvm_cc->slots[c].next_ts;
	return atomic_load((_Atomic uint64_t *) &nvm_pool_slot(c)->clock_reserved);
}

/*
 * nvm_mcsi_assign takes the next clock value of the slot (raising and
 * persisting the slot's clock reservation first when needed: the Clock
 * persist order) and stores RUNNING in its status-ring entry, flushed but
 * not drained (see nvm_txn_begin_write).  Returns the txid.
 */
uint64_t
nvm_mcsi_assign(uint32_t slot)
{
	NvmSlotShared *ss = &nvm_cc->slots[slot];
	NvmSlotPersist *sp = nvm_pool_slot(slot);
	uint64_t	ts;
	int			index;
	_Atomic uint64_t *word;
	uint64_t	mask,
				val;

	ts = ss->next_ts++;
	if (ts >= sp->clock_reserved)
	{
		sp->clock_reserved = ts + NVM_CLOCK_RESERVE_STEP;
		nvm_persist(&sp->clock_reserved, sizeof(uint64_t));
	}
	word = status_word(slot, ts, &index);
	mask = UINT64_C(3) << (2 * index);
	val = atomic_load(word) & ~NVM_STATUS_DIRTY_BIT;
	atomic_store(word, (val & ~mask) | ((uint64_t) NVM_STATUS_RUNNING << (2 * index)));
	nvm_flush((const void *) word, sizeof(uint64_t));
	return nvm_make_txid(slot, ts);
}

/*
 * nvm_mcsi_publish_completion publishes the completion of slot c's
 * transaction with clock value ts, committed or aborted alike: the slot's
 * last completed value is raised to ts (never lowered; at a commit it is
 * always below ts), and snapshots taken from now on include it.
 */
void
nvm_mcsi_publish_completion(uint32_t c, uint64_t ts, NvmTxnStatus status)
{
	NvmSlotShared *ss = &nvm_cc->slots[c];

	(void) status;
	if (atomic_load(&ss->last_completed) < ts)
		atomic_store_explicit(&ss->last_completed, ts, memory_order_release);
}

/* ---------------------------------------------------------------------
 * Snapshots
 * ---------------------------------------------------------------------
 */

/*
 * generate scans the last-completed array into snap and a shared buffer;
 * the caller holds snapshot_lock.  The generation counter is odd while the
 * scan runs; generation k (ending at counter 2k) fills buffer k % 2, so the
 * previous generation's result stays readable while this one runs.
 */
static void
generate(NvmMcsiShared *ms, NvmSnapshot *snap)
{
	uint64_t	start = atomic_fetch_add_explicit(&ms->snapshot_gen, 1, memory_order_acq_rel) + 1;
	int			b = (int) (((start + 1) / 2) % 2);
	uint32_t	n = atomic_load_explicit(&nvm_cc->slots_high_water, memory_order_acquire);

	for (uint32_t c = 0; c < n; c++)
	{
		snap->ts[c] = atomic_load_explicit(&nvm_cc->slots[c].last_completed, memory_order_acquire);
		ms->buffered_ts[b][c] = snap->ts[c];
	}
	snap->nslots = n;
	ms->buffered_nslots[b] = n;
	atomic_fetch_add_explicit(&ms->snapshot_gen, 1, memory_order_acq_rel);
}

/*
 * copy_buffered copies the result of the generation that ended at counter
 * value end; false if it may have been overwritten meanwhile (the
 * generation after next has begun).
 */
static bool
copy_buffered(NvmMcsiShared *ms, uint64_t end, NvmSnapshot *snap)
{
	int			b = (int) ((end / 2) % 2);
	uint32_t	n = ms->buffered_nslots[b];

	if (n > NVM_MAX_SLOTS)
		return false;
	for (uint32_t c = 0; c < n; c++)
		snap->ts[c] = ms->buffered_ts[b][c];
	snap->nslots = n;
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&ms->snapshot_gen, memory_order_relaxed) < end + 3;
}

/*
 * mcsi_snapshot takes a vector snapshot.  Generation (a scan of the
 * last-completed array) is serialised by a try-lock, so any two snapshots
 * are ordered by containment (paper Eq. 1), and scanning never blocks
 * transactions from starting or completing; a caller that finds a
 * generation running uses a buffered result as its policy allows (see
 * NvmSnapshotPolicy).
 */
static void
mcsi_snapshot(NvmSnapshot *snap, NvmSnapshotPolicy policy)
{
	NvmMcsiShared *ms = mcsi_state();
	uint64_t	arrival;
	uint64_t	target;
	unsigned	spins = 0;

	snap->mode = NVM_CC_MCSI;
	arrival = atomic_load_explicit(&ms->snapshot_gen, memory_order_acquire);

	if (policy == NVM_SNAPSHOT_LOCKED)
	{
		nvm_spin_lock(&ms->snapshot_lock);
		generate(ms, snap);
		nvm_spin_unlock(&ms->snapshot_lock);
		return;
	}

	/* a generation that starts after our arrival ends at this counter value */
	target = (arrival % 2 == 1) ? arrival + 3 : arrival + 2;
	for (;;)
	{
		uint64_t	g;

		if (nvm_spin_trylock(&ms->snapshot_lock))
		{
			generate(ms, snap);
			nvm_spin_unlock(&ms->snapshot_lock);
			return;
		}
		g = atomic_load_explicit(&ms->snapshot_gen, memory_order_acquire);
		{
			uint64_t	last_end = g - g % 2;	/* the latest finished generation */

			if (last_end > 0 &&
				(policy == NVM_SNAPSHOT_PAPER || last_end >= target) &&
				copy_buffered(ms, last_end, snap))
				return;
		}
		if (++spins % 64 == 0)
			sched_yield();
	}
}

/*
 * mcsi_snapshot_contains says whether txid's clock value is at most its
 * slot's entry in snap (slots that snap does not list: their boot value).
 */
static bool
mcsi_snapshot_contains(const NvmSnapshot *snap, uint64_t txid)
{
	uint32_t	c = nvm_txid_clock_id(txid);
	uint64_t	ts = nvm_txid_clock_ts(txid);
	uint64_t	limit;

	if (c < snap->nslots)
		limit = snap->ts[c];
	else
		limit = nvm_cc->slots[c].boot_last_completed;
	return ts <= limit;
}

/* ---------------------------------------------------------------------
 * Collection horizon (gc.h)
 * ---------------------------------------------------------------------
 */

/*
 * mcsi_horizon_start sets h's vector to what every future snapshot
 * contains: the last completed value of each slot used since start-up
 * (slots above use their boot value).
 */
static bool
mcsi_horizon_start(NvmHorizon *h)
{
	NvmCcShared *ms = nvm_cc;
	uint32_t	n = atomic_load_explicit(&ms->slots_high_water, memory_order_acquire);

	for (uint32_t c = 0; c < n; c++)
		h->ts[c] = atomic_load_explicit(&ms->slots[c].last_completed, memory_order_acquire);
	h->nslots = n;
	return true;
}

/*
 * mcsi_horizon_lower lowers h's vector to a pinned snapshot's, vec with
 * nvec entries (slots above use their boot value): the component-wise
 * minimum.
 */
static void
mcsi_horizon_lower(NvmHorizon *h, _Atomic uint64_t *vec, uint32_t nvec, uint64_t xmin)
{
	(void) xmin;
	for (uint32_t c = 0; c < h->nslots; c++)
	{
		uint64_t	v = c < nvec ? atomic_load_explicit(&vec[c], memory_order_relaxed) :
			nvm_cc->slots[c].boot_last_completed;

		if (v < h->ts[c])
			h->ts[c] = v;
	}
}

/*
 * mcsi_horizon_lower_to lowers h's vector to another horizon's, to (the
 * component-wise minimum; slots that `to` does not list had their boot
 * value when it was computed), as mcsi_horizon_lower does to a pin's.
 */
static void
mcsi_horizon_lower_to(NvmHorizon *h, const NvmHorizon *to)
{
	for (uint32_t c = 0; c < h->nslots; c++)
	{
		uint64_t	v = c < to->nslots ? to->ts[c] : nvm_cc->slots[c].boot_last_completed;

		if (v < h->ts[c])
			h->ts[c] = v;
	}
}

/*
 * mcsi_horizon_contains says whether every snapshot the horizon h stands
 * for counts txid as completed.
 */
static bool
mcsi_horizon_contains(const NvmHorizon *h, uint64_t txid)
{
	uint32_t	c = nvm_txid_clock_id(txid);
	uint64_t	limit = c < h->nslots ? h->ts[c] : nvm_cc->slots[c].boot_last_completed;

	return nvm_txid_clock_ts(txid) <= limit;
}

const NvmCcOps nvm_mcsi_ops = {
	.state_size = mcsi_state_size,
	.state_init = mcsi_state_init,
	NVM_MCSI_STORE_OPS,
	.assign = nvm_mcsi_assign,
	.publish_completion = nvm_mcsi_publish_completion,
	.recover_indoubt = nvm_mcsi_recover_indoubt,
	.snapshot = mcsi_snapshot,
	.snapshot_contains = mcsi_snapshot_contains,
	.horizon_start = mcsi_horizon_start,
	.horizon_lower = mcsi_horizon_lower,
	.horizon_lower_to = mcsi_horizon_lower_to,
	.horizon_contains = mcsi_horizon_contains,
	.store_full = NULL,
	.serializable = true,
};
