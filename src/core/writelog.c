/*
 * writelog.c
 *	  A clock slot's persistent write log read back (writelog.h): its valid
 *	  entries, and the replay that inlines a transaction's final status into
 *	  every version it logged and, at start-up, gives an aborted
 *	  transaction's versions back.  The persist orders of the log's writing
 *	  are in txn.h; the replay's are stated at each step below.
 */
#include "writelog.h"

#include "alloc.h"
#include "persist.h"
#include "segarray.h"
#include "storefmt.h"

#include <stdlib.h>

bool
nvm_writelog_valid_offset(nvm_off off)
{
	return off % 8 == 0 && off >= NVM_BLOCK_HEADER_SIZE &&
		nvm_alloc_contains(off - NVM_BLOCK_HEADER_SIZE, NVM_BLOCK_HEADER_SIZE + sizeof(NvmVersion));
}

bool
nvm_writelog_valid_pair(const NvmWriteLogEntryPair *e, uint64_t txid)
{
	NvmVersion *v;

	if (!nvm_writelog_valid_offset(e->version) || !nvm_writelog_valid_offset(e->table))
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
 * nvm_writelog_replay: see writelog.h.  The slot's status entry was made
 * final just before.
 */
void
nvm_writelog_replay(NvmSlotPersist *sp, NvmTxnStatus (*status_of) (uint64_t txid), bool reclaim)
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
	st = status_of(txid);
	while (!done && block != 0 && nvm_writelog_valid_offset(block))
	{
		NvmWriteLogBlock *b = nvm_ptr(block);

		for (int i = 0; i < NVM_WRITE_LOG_ENTRIES; i++)
		{
			NvmVersion *v;
			uint64_t	info;

			if (!nvm_writelog_valid_pair(&b->entries[i], txid))
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
