/*
 * visibility.c
 *	  The core's visibility rules (MCSI paper Fig. 7): the status of a
 *	  version's creator, the test a view applies to it, and the chain walks
 *	  built on that test, from the record head they start at.  visibility.h states every rule and says where
 *	  the ones kept elsewhere live.
 */
#include "visibility.h"

#include "pool.h"
#include "segarray.h"
#include "txn.h"

/*
 * nvm_version_status returns the status of v's creator: the inlined final
 * status if there is one, else the status array's (read with helping).
 * Readers never inline a status themselves: a read-only transaction stores
 * nothing into the pool.  The creator inlines its final status into every
 * version it wrote before it publishes its completion, so only versions of
 * transactions cut short by a crash are looked up in the status array.
 *
 * The inlined status is read again after the status array: it may have
 * been set since the first look, by a rollback of the version alone (a
 * subtransaction, a killed write), or by the creator finishing, after which
 * its status entry may be reused by a later transaction (status arrays are
 * rings; see "bounded bookkeeping" in src/core/README.md).  An entry is
 * reused only after the inlining, so the second look is always right.
 */
NvmTxnStatus
nvm_version_status(NvmVersion *v)
{
	uint64_t	info = atomic_load_explicit(&v->info, memory_order_acquire);
	NvmTxnStatus st = (NvmTxnStatus) (info & NVM_VINFO_STATUS_MASK);
	NvmTxnStatus inlined;

	if (st != NVM_STATUS_INITIAL)
		return st;
	st = nvm_status_get(v->txid);
	info = atomic_load_explicit(&v->info, memory_order_acquire);
	inlined = (NvmTxnStatus) (info & NVM_VINFO_STATUS_MASK);
	if (inlined != NVM_STATUS_INITIAL)
		return inlined;
	if (st != NVM_STATUS_COMMITTED && st != NVM_STATUS_ABORTED)
		st = NVM_STATUS_RUNNING;
	return st;
}

/*
 * nvm_version_creator_visible applies the view's test to v's creator
 * (paper Fig. 7 for snapshots; own changes by command id, like heap).
 */
bool
nvm_version_creator_visible(NvmVersion *v, const NvmView *view)
{
	if (view->my_txid != NVM_INVALID_TXID && v->txid == view->my_txid)
	{
		if (nvm_version_inlined_aborted(v))
			return false;		/* rolled back with a subtransaction */
		if (view->kind == NVM_VIEW_SNAPSHOT)
			return nvm_version_cid(v) < view->curcid;
		return true;
	}

	switch (view->kind)
	{
		case NVM_VIEW_SNAPSHOT:
			if (view->external_visible != NULL && v->external_id != 0)
				return view->external_visible(v, view->external_arg);
			if (!nvm_snapshot_contains(view->snap, v->txid))
				return false;
			return nvm_version_status(v) == NVM_STATUS_COMMITTED;
		case NVM_VIEW_SELF:
			return nvm_version_status(v) == NVM_STATUS_COMMITTED;
		case NVM_VIEW_DIRTY:
		case NVM_VIEW_ANY:
			return nvm_version_status(v) != NVM_STATUS_ABORTED;
		case NVM_VIEW_BOUNDS:
			if (nvm_txid_clock_ts(v->txid) > view->bounds[nvm_txid_clock_id(v->txid)])
				return false;
			return nvm_version_status(v) == NVM_STATUS_COMMITTED;
	}
	return false;
}

/*
 * nvm_record_head returns the offset of the newest version of record_no,
 * or 0 if the number is unused, free or retired.
 */
nvm_off
nvm_record_head(const NvmTable *t, uint64_t record_no)
{
	_Atomic uint64_t *slot;
	uint64_t	val;

	if (record_no == 0 || record_no >= atomic_load(&t->desc->next_record))
		return 0;
	slot = nvm_segarray_slot(&t->desc->records, record_no, false);
	if (slot == NULL)
		return 0;
	val = atomic_load_explicit(slot, memory_order_acquire);
	return (val & NVM_TAG_MASK) == 0 ? val : 0;
}

/*
 * nvm_chain_visible: see visibility.h.
 */
NvmVersion *
nvm_chain_visible(const NvmTable *t, uint64_t record_no, const NvmView *view)
{
	NvmVersion *v = nvm_ptr(nvm_record_head(t, record_no));

	for (; v != NULL; v = nvm_ptr(v->prev))
	{
		if (nvm_version_creator_visible(v, view))
			return v;
	}
	return NULL;
}

/*
 * creator_visible_cached is nvm_version_creator_visible with the snapshot
 * test of another transaction's version taken from c when it is of the
 * same snapshot and creator as the last one.
 */
static inline bool
creator_visible_cached(NvmVersion *v, const NvmView *view, NvmScanCache *c)
{
	uint64_t	txid = v->txid;
	uint64_t	info;

	if (view->kind != NVM_VIEW_SNAPSHOT ||
		(view->my_txid != NVM_INVALID_TXID && txid == view->my_txid) ||
		(view->external_visible != NULL && v->external_id != 0))
		return nvm_version_creator_visible(v, view);
	if (c->snap != view->snap || c->txid != txid)
	{
		c->contains = nvm_snapshot_contains(view->snap, txid);
		c->snap = view->snap;
		c->txid = txid;
	}
	if (!c->contains)
		return false;
	/* nvm_version_status's first look, here: the inlined status */
	info = atomic_load_explicit(&v->info, memory_order_acquire);
	if ((info & NVM_VINFO_STATUS_MASK) != NVM_STATUS_INITIAL)
		return (info & NVM_VINFO_STATUS_MASK) == NVM_STATUS_COMMITTED;
	return nvm_version_status(v) == NVM_STATUS_COMMITTED;
}

/*
 * nvm_scan_visible: see visibility.h.  The slot and head are read as
 * nvm_version_by_no (store.c) and nvm_record_head read them.
 */
NvmVersion *
nvm_scan_visible(const NvmTable *t, uint64_t version_no, const NvmView *view,
				 NvmScanCache *c)
{
	_Atomic uint64_t *slot;
	uint64_t	val;
	uint64_t	head = 0;
	uint64_t	record_no;
	NvmVersion *v;

	if (version_no == 0 || version_no >= atomic_load(&t->desc->next_version))
		return NULL;
	slot = nvm_segarray_cached(&t->desc->versions, version_no, &c->versions);
	if (slot == NULL)
		return NULL;
	val = atomic_load_explicit(slot, memory_order_acquire);
	if (val == 0 || (val & NVM_TAG_MASK) != 0)
		return NULL;
	v = nvm_ptr(val);
	if (v->version_no != version_no)
		return NULL;

	record_no = v->record_no;
	if (record_no != 0 && record_no < atomic_load(&t->desc->next_record))
	{
		slot = nvm_segarray_cached(&t->desc->records, record_no, &c->records);
		if (slot != NULL)
			head = atomic_load_explicit(slot, memory_order_acquire);
	}
	/* a later version, or none: the walk decides */
	if (head != val)
		return nvm_chain_visible(t, record_no, view) == v ? v : NULL;
	/* the newest: the walk would stop here if the view sees it */
	return creator_visible_cached(v, view, c) ? v : NULL;
}

/*
 * nvm_chain_newest: see visibility.h.
 */
NvmVersion *
nvm_chain_newest(const NvmTable *t, uint64_t record_no)
{
	NvmVersion *v = nvm_ptr(nvm_record_head(t, record_no));

	for (; v != NULL; v = nvm_ptr(v->prev))
	{
		if (nvm_version_status(v) != NVM_STATUS_ABORTED)
			return v;
	}
	return NULL;
}
