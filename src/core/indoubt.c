/*
 * indoubt.c
 *	  Transactions in doubt (indoubt.h): the marker that ties a
 *	  transaction's outcome to an external xid, the hand-over of a prepared
 *	  transaction, and the resolution of every transaction in doubt, from
 *	  the external log's answer or because the external log hands its xid
 *	  out again.  Recovery (recover.c) finds the markers a crash left; the
 *	  persist orders ("In doubt", "Prepared") are written in txn.h, and each
 *	  step below says which of them it implements.
 */
#include "indoubt.h"

#include "ccmode.h"
#include "persist.h"
#include "pool.h"
#include "writelog.h"

#include <stdlib.h>
#include <string.h>

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

	nvm_cc_ops()->status_set(t, commit ? NVM_STATUS_COMMITTED : NVM_STATUS_ABORTED);
	/* the commit is durable: the hook logs it before anybody can see it */
	if (commit)
		nvm_txn_run_commit_hook(c, t, NULL);
	/* others may be reading: no reclaim */
	nvm_writelog_replay(sp, nvm_txn_final_status, false);
	nvm_drain();
	sp->indoubt_txid = NVM_INVALID_TXID;
	nvm_persist(&sp->indoubt_txid, sizeof(uint64_t));
	nvm_cc_ops()->publish_completion(c, ts, commit ? NVM_STATUS_COMMITTED : NVM_STATUS_ABORTED);
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
		while (block != 0 && nvm_writelog_valid_offset(block))
		{
			NvmWriteLogBlock *b = nvm_ptr(block);
			int			i;

			for (i = 0; i < NVM_WRITE_LOG_ENTRIES; i++)
			{
				if (!nvm_writelog_valid_pair(&b->entries[i], t))
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
