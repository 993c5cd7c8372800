/*
 * recover.c
 *	  The transactions' state at start-up (recover.h): the status store of
 *	  the pool's mode recovered, every clock resumed at its persisted
 *	  reservation, the last writing transaction of every slot finished from
 *	  its write log, transactions in doubt kept running for their
 *	  resolution (indoubt.c); and the conversion of a recovered pool to
 *	  another mode.  The persist orders these rely on are written in txn.h;
 *	  each step below says which of them it completes.
 */
#include "recover.h"

#include "ccmode.h"
#include "persist.h"
#include "pool.h"
#include "txn.h"
#include "writelog.h"

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

	nvm_cc_layout(ms, max_slots);

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
	nvm_cc_ops()->recover_store(max_slots);
	nvm_drain();
	nvm_cc_ops()->state_init(nvm_cc_mode_state());

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
			nvm_cc_ops()->status_set(indoubt, NVM_STATUS_RUNNING);
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
			nvm_cc_ops()->recover_indoubt(c, ts);
			if (atomic_load(&ms->slots_high_water) <= c)
				atomic_store(&ms->slots_high_water, c + 1);
			atomic_store(&ss->running_txid, indoubt);
		}
		else
			nvm_writelog_replay(sp, nvm_txn_final_status, true);
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
	nvm_cc_set_mode(new_mode);
	nvm_cc_ops()->state_init(nvm_cc_mode_state());
}
