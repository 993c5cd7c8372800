/*-------------------------------------------------------------------------
 *
 * nvm_published.c
 *	  What the transaction running in a clock slot publishes for others:
 *	  its PostgreSQL xid, its xid stand-in and its virtual transaction id.
 *
 * Others meet a running nvm transaction by its txid, whose clock id names
 * its slot; to wait for it they need PostgreSQL's names for it.  The
 * owner of a slot publishes its virtual transaction id when its
 * transaction first writes, and its top-level xid when it takes one
 * (nvm_xact.c), in an array of this layer's shared memory indexed by
 * clock slot; waiters (nvm_wait.c) and SnapshotDirty (nvm_visibility.c,
 * through nvm_xact_published_xid) read them.  The core never sees them:
 * it knows the slot's running txid, and for a transaction in doubt its
 * external xid (nvm_indoubt_xid_of).
 *
 * A reader reads the slot's running txid (core) before and after a word
 * of this array and uses the word only if both reads name the transaction
 * it asks about, so a word a later transaction of the slot wrote is never
 * used.  The owner writes its words before its versions can be seen and
 * clears them when its transaction ends, before the slot can pass to
 * another backend.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/shmem.h"

#include "nvm_compat.h"
#include "nvm_types.h"

#include "xact/nvm_published.h"

/* What one slot's running transaction published (zero: nothing). */
typedef struct NvmPublished
{
	_Atomic uint32_t xid;		/* top-level PostgreSQL xid */
	_Atomic uint32_t standin;	/* xid stand-in (nvm_standin.c) */
	_Atomic int32_t vxid_backend;	/* virtual transaction id */
	_Atomic uint32_t vxid_lxid;
} NvmPublished;

/* One entry per clock slot. */
static NvmPublished *nvm_published = NULL;

/*
 * nvm_published_shmem_size returns the shared memory of the array; called
 * from the shmem_request hook.
 */
Size
nvm_published_shmem_size(void)
{
	return mul_size(NVM_MAX_SLOTS, sizeof(NvmPublished));
}

/*
 * nvm_published_shmem_startup finds (or creates, zeroed) the array.
 */
void
nvm_published_shmem_startup(void)
{
	bool		found;

	nvm_published = ShmemInitStruct("nvmam published ids",
									nvm_published_shmem_size(), &found);
	if (!found)
		memset(nvm_published, 0, nvm_published_shmem_size());
}

/*
 * nvm_published_set_vxid publishes the virtual transaction id of the
 * transaction that starts running in slot.
 */
void
nvm_published_set_vxid(int slot, VirtualTransactionId vxid)
{
	atomic_store(&nvm_published[slot].vxid_backend, (int32) NVM_VXID_BACKEND(vxid));
	atomic_store(&nvm_published[slot].vxid_lxid, (uint32) vxid.localTransactionId);
}

/*
 * nvm_published_set_xid publishes the top-level xid of the transaction
 * running in slot.
 */
void
nvm_published_set_xid(int slot, TransactionId xid)
{
	atomic_store(&nvm_published[slot].xid, (uint32) xid);
}

/*
 * nvm_published_set_standin publishes the xid stand-in of the transaction
 * running in slot.
 */
void
nvm_published_set_standin(int slot, uint32 standin)
{
	atomic_store(&nvm_published[slot].standin, standin);
}

/*
 * nvm_published_clear forgets what slot's transaction published.
 */
void
nvm_published_clear(int slot)
{
	atomic_store(&nvm_published[slot].xid, 0);
	atomic_store(&nvm_published[slot].standin, 0);
	atomic_store(&nvm_published[slot].vxid_backend, 0);
	atomic_store(&nvm_published[slot].vxid_lxid, 0);
}

/*
 * nvm_published_xid returns the xid slot's transaction published, or
 * InvalidTransactionId.
 */
TransactionId
nvm_published_xid(int slot)
{
	return (TransactionId) atomic_load(&nvm_published[slot].xid);
}

/*
 * nvm_published_standin returns the xid stand-in slot's transaction
 * published, or 0.
 */
uint32
nvm_published_standin(int slot)
{
	return atomic_load(&nvm_published[slot].standin);
}

/*
 * nvm_published_vxid returns the virtual transaction id slot's transaction
 * published (invalid if none).
 */
VirtualTransactionId
nvm_published_vxid(int slot)
{
	VirtualTransactionId vxid;

	NVM_VXID_BACKEND(vxid) = (NvmBackendNumber) atomic_load(&nvm_published[slot].vxid_backend);
	vxid.localTransactionId = (LocalTransactionId) atomic_load(&nvm_published[slot].vxid_lxid);
	return vxid;
}
