/*
 * n2db.c
 *	  The N2DB baseline: PostgreSQL-style snapshot isolation on the same
 *	  store, as the MCSI paper describes N2DB (§2.3, §4.3, Table 2); one of
 *	  the two designs behind the transaction interface (txn.c calls it; see
 *	  n2db.h), the sibling of MCSI's mcsi.c.
 *
 *	 - One global transaction counter hands out txid values.
 *	 - A global active-transaction list in shared memory.
 *	 - A snapshot is built under the one lock that also guards assigning a
 *	   txid and completing a transaction: it reads the counter (xmax) and
 *	   scans the list (the in-progress txids and xmin).  While it runs, no
 *	   transaction can start or end.
 *	 - A commit log in the pool written by every backend: 2 bits per
 *	   transaction, 32 to a 64-bit word, adjacent txids in adjacent bits, so
 *	   concurrent committers write the same cache lines.  Updates are atomic
 *	   read-modify-writes, persisted (flush + drain) at commit.
 *
 * The txid still carries the slot in its top 10 bits (so waiters can find
 * the backend running it); snapshots and the commit log use the 54-bit
 * counter value alone.
 *
 * Persist orders:
 *	 - Counter: a value is handed out only below the persisted reservation
 *	   root->n2db_reserved, raised (flush + drain) under the lock.
 *	 - Commit: (the caller drains the transaction's versions first) status
 *	   bits set with a compare-and-swap, flushed, drained; only then is the
 *	   transaction removed from the active list, so no snapshot counts it as
 *	   completed before its status is durable.
 */
#include "n2db.h"

#include "persist.h"
#include "pool.h"

#include <stdlib.h>

#define CLOG_PER_WORD 32
#define NVM_N2DB_RING_MARGIN 64

static inline _Atomic uint64_t *
clog_word(uint64_t value, int *shift)
{
	uint64_t	n = (uint64_t) nvm_pool_header->clog_words * CLOG_PER_WORD;
	uint64_t	i = value % n;

	*shift = (int) (i % CLOG_PER_WORD) * 2;
	return ((_Atomic uint64_t *) (nvm_pool_base + nvm_pool_header->clog_off)) + i / CLOG_PER_WORD;
}

/* n2db_state is N2DB's shared state, NULL before start-up has built it. */
static inline NvmN2dbShared *
n2db_state(void)
{
	return nvm_cc_mode_state();
}

static size_t
n2db_state_size(uint32_t max_slots)
{
	(void) max_slots;
	return sizeof(NvmN2dbShared);
}

/*
 * n2db_state_init resumes the counter at its persisted reservation with an
 * empty active list (after recovery, or after the pool became an N2DB
 * pool: the conversion set the reservation above every value handed out).
 */
static void
n2db_state_init(void *state)
{
	NvmN2dbShared *ns = state;
	NvmPoolRoot *root = nvm_pool_root();

	nvm_spin_init(&ns->lock);
	if (root->n2db_reserved == 0)
		root->n2db_reserved = 1;
	ns->next = root->n2db_reserved;
	ns->reserved = root->n2db_reserved;
	ns->nactive = 0;
}

/*
 * n2db_recover_store makes every non-final commit-log entry ABORTED.  Reads
 * only the commit log: independent of the amount of data.
 */
static void
n2db_recover_store(uint32_t max_slots)
{
	_Atomic uint64_t *clog = (_Atomic uint64_t *) (nvm_pool_base + nvm_pool_header->clog_off);

	(void) max_slots;
	for (uint32_t w = 0; w < nvm_pool_header->clog_words; w++)
	{
		uint64_t	val = atomic_load(&clog[w]);
		uint64_t	fixed = val;

		for (int i = 0; i < CLOG_PER_WORD; i++)
			if (((fixed >> (2 * i)) & 3) == NVM_STATUS_RUNNING)
				fixed |= (uint64_t) NVM_STATUS_ABORTED << (2 * i);
		if (fixed != val)
		{
			atomic_store(&clog[w], fixed);
			nvm_flush((const void *) &clog[w], sizeof(uint64_t));
		}
	}
}

/*
 * n2db_recover_indoubt keeps the recovered in-doubt transaction with
 * counter value value out of every snapshot until it is resolved: it is
 * on the active list.
 */
static void
n2db_recover_indoubt(uint32_t c, uint64_t value)
{
	NvmN2dbShared *ns = n2db_state();

	(void) c;

	ns->active[ns->nactive++] = value;
}

/*
 * n2db_handed_out_limit returns a value that every counter value handed
 * out so far is below: the next value to hand out (before start-up has
 * built the shared state, the persisted reservation).  It only grows.
 */
static uint64_t
n2db_handed_out_limit(uint32_t c)
{
	const NvmN2dbShared *ns = n2db_state();

	(void) c;

	if (ns != NULL)
		return *(volatile uint64_t *) &ns->next;
	return atomic_load((_Atomic uint64_t *) &nvm_pool_root()->n2db_reserved);
}

/*
 * next_value hands out the next txid value and enters it in the active
 * list, under the global lock.  The commit log is a ring: a value is handed
 * out only while it is less than one ring (minus a margin) ahead of the
 * oldest running transaction, whose entry it would otherwise overwrite
 * (completed transactions have inlined their status and need no entry).
 * Returns 0 when that limit is reached.
 */
static uint64_t
next_value(NvmN2dbShared *ns)
{
	uint64_t	value;
	uint64_t	ring = (uint64_t) nvm_pool_header->clog_words * CLOG_PER_WORD;
	uint64_t	oldest;

	nvm_spin_lock(&ns->lock);
	oldest = ns->next;
	for (uint32_t i = 0; i < ns->nactive; i++)
		if (ns->active[i] < oldest)
			oldest = ns->active[i];
	if (ns->next - oldest + NVM_N2DB_RING_MARGIN >= ring)
	{
		nvm_spin_unlock(&ns->lock);
		return 0;
	}
	value = ns->next++;
	if (value >= ns->reserved)
	{
		NvmPoolRoot *root = nvm_pool_root();

		ns->reserved = value + NVM_CLOCK_RESERVE_STEP;
		root->n2db_reserved = ns->reserved;
		nvm_persist(&root->n2db_reserved, sizeof(uint64_t));
	}
	ns->active[ns->nactive++] = value;
	nvm_spin_unlock(&ns->lock);
	return value;
}

/*
 * set_status writes a status into the shared commit log with a
 * compare-and-swap (other backends write the same word), flushes it, and
 * drains when durable is set.
 */
static void
set_status(uint64_t value, NvmTxnStatus status, bool durable)
{
	int			shift;
	_Atomic uint64_t *word = clog_word(value, &shift);
	uint64_t	old = atomic_load(word);
	uint64_t	mask = UINT64_C(3) << shift;

	while (!atomic_compare_exchange_weak(word, &old, (old & ~mask) | ((uint64_t) status << shift)))
		;
	nvm_flush((const void *) word, sizeof(uint64_t));
	if (durable)
		nvm_drain();
}

/* n2db_status_get reads txid's commit-log entry. */
static NvmTxnStatus
n2db_status_get(uint64_t txid)
{
	uint64_t	value = nvm_txid_clock_ts(txid);
	int			shift;
	_Atomic uint64_t *word = clog_word(value, &shift);

	return (NvmTxnStatus) ((atomic_load_explicit(word, memory_order_acquire) >> shift) & 3);
}

/* n2db_status_set stores txid's status durably in the commit log. */
static void
n2db_status_set(uint64_t txid, NvmTxnStatus status)
{
	set_status(nvm_txid_clock_ts(txid), status, true);
}

/*
 * n2db_assign hands out the next counter value as slot's txid and stores
 * RUNNING in its commit-log entry, flushed but not drained;
 * NVM_INVALID_TXID if the commit-log ring is full.
 */
static uint64_t
n2db_assign(uint32_t slot)
{
	uint64_t	value = next_value(n2db_state());

	if (value == 0)
		return NVM_INVALID_TXID;
	set_status(value, NVM_STATUS_RUNNING, false);
	return nvm_make_txid(slot, value);
}

/*
 * n2db_status_entry reads the commit-log entry of txid for
 * nvm_status_entry, and says whether txid is from the current N2DB era:
 * the counter restarted at the slots' clock reservations when the pool
 * last became an N2DB pool (N2DB never changes them).  The caller checks
 * that no later value has reused the entry.
 */
static bool
n2db_status_entry(uint64_t txid, NvmTxnStatus *status)
{
	uint64_t	value = nvm_txid_clock_ts(txid);
	int			shift;
	_Atomic uint64_t *word;

	if (value < atomic_load((_Atomic uint64_t *) &nvm_pool_slot(nvm_txid_clock_id(txid))->clock_reserved))
		return false;
	word = clog_word(value, &shift);
	*status = (NvmTxnStatus) ((atomic_load_explicit(word, memory_order_acquire) >> shift) & 3);
	return true;
}

/* n2db_ring_size is the number of entries of the commit log. */
static uint64_t
n2db_ring_size(void)
{
	return (uint64_t) nvm_pool_header->clog_words * CLOG_PER_WORD;
}

/*
 * n2db_publish_completion removes a finished transaction from the active
 * list.
 */
static void
n2db_publish_completion(uint32_t c, uint64_t value, NvmTxnStatus status)
{
	NvmN2dbShared *ns = n2db_state();

	(void) c;
	(void) status;

	nvm_spin_lock(&ns->lock);
	for (uint32_t i = 0; i < ns->nactive; i++)
	{
		if (ns->active[i] == value)
		{
			ns->active[i] = ns->active[--ns->nactive];
			break;
		}
	}
	nvm_spin_unlock(&ns->lock);
}

/*
 * n2db_snapshot builds a PostgreSQL-style snapshot under the global lock:
 * xmax is the counter, the in-progress list is the active list, xmin the
 * oldest of those (or xmax).  There is no buffering: policy is ignored.
 */
static void
n2db_snapshot(NvmSnapshot *snap, NvmSnapshotPolicy policy)
{
	NvmN2dbShared *ns = n2db_state();
	uint64_t	xmin;

	(void) policy;
	nvm_spin_lock(&ns->lock);
	snap->xmax = ns->next;
	xmin = ns->next;
	for (uint32_t i = 0; i < ns->nactive; i++)
	{
		snap->ts[i] = ns->active[i];
		if (ns->active[i] < xmin)
			xmin = ns->active[i];
	}
	snap->nslots = ns->nactive;
	nvm_spin_unlock(&ns->lock);
	snap->xmin = xmin;
	snap->mode = NVM_CC_N2DB;
}

/*
 * nvm_n2db_snapshot_contains says whether the counter value had completed
 * when snap was taken.
 */
bool
nvm_n2db_snapshot_contains(const NvmSnapshot *snap, uint64_t value)
{
	if (value < snap->xmin)
		return true;
	if (value >= snap->xmax)
		return false;
	for (uint32_t i = 0; i < snap->nslots; i++)
		if (snap->ts[i] == value)
			return false;
	return true;
}

static bool
n2db_snapshot_contains(const NvmSnapshot *snap, uint64_t txid)
{
	return nvm_n2db_snapshot_contains(snap, nvm_txid_clock_ts(txid));
}

/* ---------------------------------------------------------------------
 * Collection horizon (gc.h)
 * ---------------------------------------------------------------------
 */

/*
 * n2db_horizon_start sets h's xmin to what every future snapshot contains:
 * the oldest running txid bounds every future snapshot's xmin.  Returns
 * false if there is no memory for the snapshot it reads.
 */
static bool
n2db_horizon_start(NvmHorizon *h)
{
	NvmSnapshot *now = malloc(sizeof(NvmSnapshot));

	if (now == NULL)
		return false;
	n2db_snapshot(now, NVM_SNAPSHOT_LOCKED);
	h->xmin = now->xmin;
	free(now);
	h->nslots = 0;
	return true;
}

/*
 * n2db_horizon_lower lowers h's xmin to a pinned snapshot's xmin (N2DB
 * snapshots have no vector).
 */
static void
n2db_horizon_lower(NvmHorizon *h, _Atomic uint64_t *vec, uint32_t nvec, uint64_t xmin)
{
	(void) vec;
	(void) nvec;
	if (xmin < h->xmin)
		h->xmin = xmin;
}

/* n2db_horizon_lower_to lowers h's xmin to another horizon's. */
static void
n2db_horizon_lower_to(NvmHorizon *h, const NvmHorizon *to)
{
	if (to->xmin < h->xmin)
		h->xmin = to->xmin;
}

/*
 * n2db_horizon_contains says whether every snapshot the horizon h stands
 * for counts txid as completed.
 */
static bool
n2db_horizon_contains(const NvmHorizon *h, uint64_t txid)
{
	return nvm_txid_clock_ts(txid) < h->xmin;
}

const NvmCcOps nvm_n2db_ops = {
	.state_size = n2db_state_size,
	.state_init = n2db_state_init,
	.recover_store = n2db_recover_store,
	.status_get = n2db_status_get,
	.status_set = n2db_status_set,
	.status_entry = n2db_status_entry,
	.ring_size = n2db_ring_size,
	.known_completed = NULL,
	.handed_out_limit = n2db_handed_out_limit,
	.assign = n2db_assign,
	.publish_completion = n2db_publish_completion,
	.recover_indoubt = n2db_recover_indoubt,
	.snapshot = n2db_snapshot,
	.snapshot_contains = n2db_snapshot_contains,
	.horizon_start = n2db_horizon_start,
	.horizon_lower = n2db_horizon_lower,
	.horizon_lower_to = n2db_horizon_lower_to,
	.horizon_contains = n2db_horizon_contains,
	.store_full = "The N2DB commit log holds the status of 1,048,576 transactions, and a transaction that started that many transactions ago is still running.",
	.serializable = true,
};
