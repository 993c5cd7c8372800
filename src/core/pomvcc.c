/*
 * pomvcc.c
 *	  POMVCC's shared commit timestamps on the Pisces mode (pomvcc.h): CTs
 *	  and BTs, the pre-commit and commit counters, the session rule, and the
 *	  start-timestamp snapshot over Pisces's commit-timestamp rings
 *	  (pisces.h); the status store and the clocks are MCSI's (mcsi.h).
 *
 * Memory order.  Every access to CTs, BTs and the counters is sequentially
 * consistent: a committer that finds CTs unchanged after counting itself in
 * PC[CTs] is seen by every advance of BTs that finds CTs above it.
 */
#include "pomvcc.h"

#include "mcsi.h"
#include "pool.h"

#include <sched.h>
#include <string.h>
#include <time.h>

#define COUNT_MASK	((uint64_t) NVM_POMVCC_COUNTS - 1)

/* the CTs of this session's (thread's) last commit, 0 if none yet */
static _Thread_local uint64_t session_cts = 0;

/*
 * how long after CTs's last move a snapshot of this process moves it
 * (NVM_POMVCC_TICK_NEVER: never; 0: every snapshot)
 */
static int64_t tick_ns = NVM_POMVCC_TICK_NS;

static inline NvmPomvccShared *
pomvcc_state(void)
{
	return nvm_cc_mode_state();
}

/* header_size is where the commit-timestamp rings start in the state. */
static inline size_t
header_size(void)
{
	return (sizeof(NvmPomvccShared) + NVM_CACHELINE - 1) / NVM_CACHELINE * NVM_CACHELINE;
}

static inline NvmPiscesShared *
pomvcc_rings(NvmPomvccShared *ps)
{
	return (NvmPiscesShared *) ((char *) ps + header_size());
}

static inline NvmPomvccCount *
count_at(NvmPomvccShared *ps, uint64_t ts)
{
	return &ps->counts[ts & COUNT_MASK];
}

static uint64_t
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

static size_t
pomvcc_state_size(uint32_t max_slots)
{
	return header_size() + nvm_pisces_rings_size(max_slots);
}

/*
 * pomvcc_state_init starts BTs at 1 and CTs at 2 (BTs < CTs always), with
 * empty counters and rings: every transaction from before is below its
 * slot's boot value.
 */
static void
pomvcc_state_init(void *state)
{
	NvmPomvccShared *ps = state;

	memset(ps, 0, header_size());
	atomic_store(&ps->bts, 1);
	atomic_store(&ps->cts, 2);
	atomic_store(&ps->cts_raised_ns, now_ns());
	nvm_pisces_rings_init(pomvcc_rings(ps), nvm_cc->max_slots);
}

/*
 * raise_cts raises CTs by one if it is below target and one more would not
 * put it a counter ring ahead of BTs (D5: "any time").
 */
static void
raise_cts(NvmPomvccShared *ps, uint64_t target)
{
	uint64_t	c = atomic_load(&ps->cts);

	while (c < target && c + 1 - atomic_load(&ps->bts) < NVM_POMVCC_COUNTS)
	{
		if (atomic_compare_exchange_weak(&ps->cts, &c, c + 1))
		{
			atomic_store(&ps->cts_raised_ns, now_ns());
			return;
		}
	}
}

/*
 * advance_bts advances BTs as far as D6 allows (b+1 < CTs and every commit
 * counted at b+1 recorded) and returns it.
 */
static uint64_t
advance_bts(NvmPomvccShared *ps)
{
	uint64_t	b = atomic_load(&ps->bts);

	for (;;)
	{
		NvmPomvccCount *n;

		if (b + 1 >= atomic_load(&ps->cts))
			return b;
		n = count_at(ps, b + 1);
		if (atomic_load(&n->pc) != atomic_load(&n->cc))
			return b;
		if (atomic_compare_exchange_strong(&ps->bts, &b, b + 1))
			b++;
	}
}

/*
 * nvm_pomvcc_set_tick sets how long after CTs's last move a snapshot of
 * this process moves it (NVM_POMVCC_TICK_NEVER: never; 0: every snapshot;
 * the PG layer's nvm.pomvcc_update_interval, a session's own setting).
 */
void
nvm_pomvcc_set_tick(int64_t ns)
{
	tick_ns = ns;
}

/*
 * catch_up raises CTs if this process's periodic update is due (D5's "any
 * time") or the session's last commit is not below it (the session rule),
 * and advances BTs; with wait, until BTs reaches the session's last commit,
 * and with a zero interval also every timestamp below the CTs it moved
 * from, so that every commit acknowledged before the snapshot is in it.
 * It returns BTs.
 */
static uint64_t
catch_up(NvmPomvccShared *ps, bool wait)
{
	uint64_t	need = session_cts;
	uint64_t	bts;
	unsigned	spins = 0;

	if (tick_ns != NVM_POMVCC_TICK_NEVER &&
		now_ns() - atomic_load(&ps->cts_raised_ns) >= (uint64_t) tick_ns)
	{
		uint64_t	from = atomic_load(&ps->cts);

		raise_cts(ps, from + 1);
		if (tick_ns == 0 && atomic_load(&ps->cts) > from && from > need)
			need = from;
	}
	for (;;)
	{
		if (need >= atomic_load(&ps->cts))
			raise_cts(ps, need + 1);
		bts = advance_bts(ps);
		if (bts >= need || !wait)
			return bts;
		if (++spins % 64 == 0)
			sched_yield();
	}
}

/*
 * pomvcc_snapshot takes startTS = BTs, once BTs has caught up with the
 * session's last commit (catch_up).  No buffering: the policy is ignored.
 */
static void
pomvcc_snapshot(NvmSnapshot *snap, NvmSnapshotPolicy policy)
{
	uint64_t	bts = catch_up(pomvcc_state(), true);

	(void) policy;
	snap->mode = NVM_CC_POMVCC;
	snap->nslots = 0;
	snap->xmin = bts;
	snap->xmax = bts;
}

static bool
pomvcc_snapshot_contains(const NvmSnapshot *snap, uint64_t txid)
{
	return nvm_pisces_completed_by(pomvcc_rings(pomvcc_state()), txid, snap->xmin);
}

static uint64_t
pomvcc_assign(uint32_t slot)
{
	return nvm_pisces_assign_in(pomvcc_rings(pomvcc_state()), slot);
}

/*
 * pomvcc_publish_completion records slot c's transaction ts as completed
 * (its status is already durable).  A commit counts itself in PC[CTs]
 * (again if CTs moved meanwhile), records CTs as its endTS, counts itself
 * in CC[CTs], and becomes this session's last commit; BTs passes that
 * timestamp later.  An abort records BTs as its completion and raises CTs
 * (a conflict: its retry should see what it conflicted with).
 */
static void
pomvcc_publish_completion(uint32_t c, uint64_t ts, NvmTxnStatus status)
{
	NvmPomvccShared *ps = pomvcc_state();
	NvmPiscesShared *rings = pomvcc_rings(ps);

	if (status == NVM_STATUS_COMMITTED)
	{
		uint64_t	a;

		for (;;)
		{
			a = atomic_load(&ps->cts);
			atomic_fetch_add(&count_at(ps, a)->pc, 1);
			if (atomic_load(&ps->cts) == a)
				break;
			atomic_fetch_sub(&count_at(ps, a)->pc, 1);
		}
		nvm_pisces_set_end(rings, c, ts, a);
		atomic_fetch_add(&count_at(ps, a)->cc, 1);
		session_cts = a;
	}
	else
	{
		nvm_pisces_set_end(rings, c, ts, atomic_load(&ps->bts));
		raise_cts(ps, atomic_load(&ps->cts) + 1);
	}
	nvm_mcsi_publish_completion(c, ts, status);
}

/* ---------------------------------------------------------------------
 * Collection horizon (gc.h): BTs (caught up as far as it goes without
 * waiting: every later snapshot starts there or later), lowered to every
 * pin's start.
 * ---------------------------------------------------------------------
 */

static bool
pomvcc_horizon_start(NvmHorizon *h)
{
	h->nslots = 0;
	h->xmin = catch_up(pomvcc_state(), false);
	return true;
}

static bool
pomvcc_horizon_contains(const NvmHorizon *h, uint64_t txid)
{
	return nvm_pisces_completed_by(pomvcc_rings(pomvcc_state()), txid, h->xmin);
}

const NvmCcOps nvm_pomvcc_ops = {
	.state_size = pomvcc_state_size,
	.state_init = pomvcc_state_init,
	NVM_MCSI_STORE_OPS,
	.assign = pomvcc_assign,
	.publish_completion = pomvcc_publish_completion,
	.recover_indoubt = nvm_mcsi_recover_indoubt,
	.snapshot = pomvcc_snapshot,
	.snapshot_contains = pomvcc_snapshot_contains,
	.horizon_start = pomvcc_horizon_start,
	.horizon_lower = nvm_pisces_horizon_lower,
	.horizon_lower_to = nvm_pisces_horizon_lower_to,
	.horizon_contains = pomvcc_horizon_contains,
	.store_full = "POMVCC keeps the commit timestamps of a backend's last 4,096 transactions, and a snapshot older than the oldest of them is still in use.",
	.serializable = false,
};
