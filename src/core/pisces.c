/*
 * pisces.c
 *	  Pisces's snapshot isolation on this store (pisces.h): one global
 *	  timestamp, start-timestamp snapshots, the in-critical commit that is
 *	  durable before it is visible, and the per-slot commit-timestamp
 *	  rings; the status store and the clocks are MCSI's (mcsi.h).
 *
 * Memory order.  Every access to the global timestamp, an in-critical flag
 * and a ring entry is sequentially consistent, as Algorithm 1 assumes of
 * TSO: a reader that finds a creator's entry empty and its flag clear
 * after taking its own start timestamp knows that the creator's endTS,
 * still to come, is above that start timestamp.
 */
#include "pisces.h"

#include "mcsi.h"
#include "pool.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define RING_MASK	((uint64_t) NVM_PISCES_RING - 1)

/* pisces_state is Pisces's shared state. */
static inline NvmPiscesShared *
pisces_state(void)
{
	return nvm_cc_mode_state();
}

/* end_ts_entry is the ring entry of slot c's clock value ts. */
static inline _Atomic uint64_t *
end_ts_entry(NvmPiscesShared *ps, uint32_t c, uint64_t ts)
{
	return &ps->end_ts[(size_t) c * NVM_PISCES_RING + (ts & RING_MASK)];
}

/*
 * entry_reused says whether slot c has handed out a clock value that
 * reuses ts's ring entry (ts + one ring).
 */
static inline bool
entry_reused(uint32_t c, uint64_t ts)
{
	atomic_thread_fence(memory_order_acquire);
	return ts + NVM_PISCES_RING < nvm_mcsi_handed_out_limit(c);
}

/* nvm_pisces_rings_size is the size of an NvmPiscesShared for max_slots slots. */
size_t
nvm_pisces_rings_size(uint32_t max_slots)
{
	return sizeof(NvmPiscesShared) + (size_t) max_slots * NVM_PISCES_RING * sizeof(uint64_t);
}

/*
 * nvm_pisces_rings_init starts the global timestamp and the horizon at 1
 * with every ring entry empty: every transaction from before (recovered,
 * or of the mode the pool was converted from) is below its slot's boot
 * value.
 */
void
nvm_pisces_rings_init(NvmPiscesShared *ps, uint32_t max_slots)
{
	memset(ps, 0, nvm_pisces_rings_size(max_slots));
	ps->max_slots = max_slots;
	atomic_store(&ps->global_ts, 1);
	atomic_store(&ps->horizon, 1);
}

static size_t
pisces_state_size(uint32_t max_slots)
{
	return nvm_pisces_rings_size(max_slots);
}

static void
pisces_state_init(void *state)
{
	nvm_pisces_rings_init(state, nvm_cc->max_slots);
}

/*
 * nvm_pisces_completed_by says whether the transaction txid completed with
 * an endTS at most start: the test of a snapshot with that start
 * timestamp, and of the collection horizon.  A creator in its critical
 * section is waited for (Algorithm 1, lines 14-15).
 */
bool
nvm_pisces_completed_by(NvmPiscesShared *ps, uint64_t txid, uint64_t start)
{
	uint32_t	c = nvm_txid_clock_id(txid);
	uint64_t	ts = nvm_txid_clock_ts(txid);
	_Atomic uint64_t *e;
	uint64_t	end;
	unsigned	spins = 0;

	if (ts <= nvm_cc->slots[c].boot_last_completed)
		return true;			/* completed before start-up */
	if (entry_reused(c, ts))
		return true;			/* reused only once every snapshot contains it */
	e = end_ts_entry(ps, c, ts);
	end = atomic_load(e);
	if (end == 0)
	{
		while (atomic_load(&ps->flags[c].in_critical) != 0)
		{
			if (++spins % 64 == 0)
				sched_yield();
		}
		end = atomic_load(e);
	}
	if (entry_reused(c, ts))
		return true;
	return end != 0 && end <= start;
}

/*
 * horizon_now computes the collection horizon (gc.c's, through
 * nvm_cc_horizon_fn) and raises the cached one to it; it returns the
 * cached one if it cannot (no collector, or no memory).
 */
static uint64_t
horizon_now(NvmPiscesShared *ps)
{
	NvmHorizon *h;
	uint64_t	now;
	uint64_t	cached;

	if (nvm_cc_horizon_fn == NULL || (h = malloc(sizeof(NvmHorizon))) == NULL)
		return atomic_load(&ps->horizon);
	if (!nvm_cc_horizon_fn(h))
	{
		free(h);
		return atomic_load(&ps->horizon);
	}
	now = h->xmin;
	free(h);
	cached = atomic_load(&ps->horizon);
	while (cached < now && !atomic_compare_exchange_weak(&ps->horizon, &cached, now))
		;
	return cached < now ? now : cached;
}

/*
 * entry_dead says whether a completed transaction with this endTS is in
 * every snapshot in use and to come, so that its ring entry may be reused.
 */
static bool
entry_dead(NvmPiscesShared *ps, uint64_t end)
{
	if (end <= atomic_load(&ps->horizon))
		return true;
	return end <= horizon_now(ps);
}

/*
 * nvm_pisces_assign_in gives slot its next txid, MCSI's way (clock value,
 * RUNNING in the status ring), once the ring entry the value reuses is
 * dead; NVM_INVALID_TXID while a snapshot in use may still ask for it.
 * The entry is cleared after the clock has moved on, so a reader that
 * finds it cleared also finds it reused.
 */
uint64_t
nvm_pisces_assign_in(NvmPiscesShared *ps, uint32_t slot)
{
	uint64_t	next = nvm_cc->slots[slot].next_ts;	/* owner-private */
	_Atomic uint64_t *e = end_ts_entry(ps, slot, next);
	uint64_t	old = atomic_load(e);
	uint64_t	txid;

	if (old != 0 && !entry_dead(ps, old))
		return NVM_INVALID_TXID;
	txid = nvm_mcsi_assign(slot);
	atomic_store(e, 0);
	return txid;
}

/* nvm_pisces_set_end records the endTS of slot c's transaction ts. */
void
nvm_pisces_set_end(NvmPiscesShared *ps, uint32_t c, uint64_t ts, uint64_t end)
{
	atomic_store(end_ts_entry(ps, c, ts), end);
}

static uint64_t
pisces_assign(uint32_t slot)
{
	return nvm_pisces_assign_in(pisces_state(), slot);
}

/*
 * pisces_publish_completion makes slot c's transaction ts visible to
 * snapshots taken from now on (Algorithm 1, lines 43-47): its status is
 * already durable (stage 1).  A commit takes endTS = globalTS + 1 inside
 * the critical section, then increments globalTS; an abort records the
 * current globalTS as its completion and increments nothing.  The slot's
 * last completed value is raised too (nvm_txid_is_running's shortcut).
 */
static void
pisces_publish_completion(uint32_t c, uint64_t ts, NvmTxnStatus status)
{
	NvmPiscesShared *ps = pisces_state();
	_Atomic uint64_t *e = end_ts_entry(ps, c, ts);

	if (status == NVM_STATUS_COMMITTED)
	{
		/*
		 * The flag is set before globalTS is read (a full fence: a reader
		 * that finds it clear and the entry empty started before this
		 * endTS); the entry is published before the flag is cleared
		 * (release: a reader that sees the flag clear sees the entry).
		 */
		atomic_store(&ps->flags[c].in_critical, 1);
		atomic_store_explicit(e, atomic_load(&ps->global_ts) + 1, memory_order_release);
		atomic_store_explicit(&ps->flags[c].in_critical, 0, memory_order_release);
		atomic_fetch_add(&ps->global_ts, 1);
	}
	else
		atomic_store(e, atomic_load(&ps->global_ts));
	nvm_mcsi_publish_completion(c, ts, status);
}

/*
 * pisces_snapshot takes startTS = globalTS (Algorithm 1, line 4; the
 * caller's pin, marked before, is the ACTIVE mark).  No buffering: the
 * policy is ignored.
 */
static void
pisces_snapshot(NvmSnapshot *snap, NvmSnapshotPolicy policy)
{
	(void) policy;
	snap->mode = NVM_CC_PISCES;
	snap->nslots = 0;
	snap->xmin = atomic_load(&pisces_state()->global_ts);
	snap->xmax = snap->xmin;
}

static bool
pisces_snapshot_contains(const NvmSnapshot *snap, uint64_t txid)
{
	return nvm_pisces_completed_by(pisces_state(), txid, snap->xmin);
}

/* ---------------------------------------------------------------------
 * Collection horizon (gc.h): a start timestamp, the oldest of every
 * snapshot in use (its pin's xmin) and to come (globalTS).
 * ---------------------------------------------------------------------
 */

static bool
pisces_horizon_start(NvmHorizon *h)
{
	h->nslots = 0;
	h->xmin = atomic_load(&pisces_state()->global_ts);
	return true;
}

void
nvm_pisces_horizon_lower(NvmHorizon *h, _Atomic uint64_t *vec, uint32_t nvec, uint64_t xmin)
{
	(void) vec;
	(void) nvec;
	if (xmin < h->xmin)
		h->xmin = xmin;
}

void
nvm_pisces_horizon_lower_to(NvmHorizon *h, const NvmHorizon *to)
{
	if (to->xmin < h->xmin)
		h->xmin = to->xmin;
}

static bool
pisces_horizon_contains(const NvmHorizon *h, uint64_t txid)
{
	return nvm_pisces_completed_by(pisces_state(), txid, h->xmin);
}

const NvmCcOps nvm_pisces_ops = {
	.state_size = pisces_state_size,
	.state_init = pisces_state_init,
	NVM_MCSI_STORE_OPS,
	.assign = pisces_assign,
	.publish_completion = pisces_publish_completion,
	.recover_indoubt = nvm_mcsi_recover_indoubt,
	.snapshot = pisces_snapshot,
	.snapshot_contains = pisces_snapshot_contains,
	.horizon_start = pisces_horizon_start,
	.horizon_lower = nvm_pisces_horizon_lower,
	.horizon_lower_to = nvm_pisces_horizon_lower_to,
	.horizon_contains = pisces_horizon_contains,
	.store_full = "Pisces keeps the commit timestamps of a backend's last 4,096 transactions, and a snapshot older than the oldest of them is still in use.",
	.serializable = true,
};
