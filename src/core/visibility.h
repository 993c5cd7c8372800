/*
 * visibility.h
 *	  The core's visibility rules: which versions of a record a reader
 *	  sees (MCSI paper Fig. 7), in one place.
 *
 * A reader walks a record's chain from the head, newest to oldest, and
 * takes the first version whose creator passes its view's test
 * (nvm_chain_visible).  Every rule the core applies to a version's creator
 * is stated here; the code that applies it is in visibility.c unless said
 * otherwise:
 *
 *	 - Status.  A creator's status is the final status inlined into the
 *	   version if there is one, else its entry in the status store of the
 *	   pool's mode, read with helping; a status that is not final reads as
 *	   RUNNING (nvm_version_status).  Readers never write a status.
 *	 - Own changes.  A version of the reader's own transaction counts unless
 *	   it was rolled back (a subtransaction, a killed write: its inlined
 *	   status is ABORTED); a snapshot sees it only if it was made by an
 *	   earlier command (command id below curcid), like heap.
 *	 - Snapshot (NVM_VIEW_SNAPSHOT).  Another transaction's version is
 *	   visible if its creator had completed when the snapshot was taken
 *	   and committed.  "Had completed" is the mode's rule:
 *	   nvm_snapshot_contains (txn.c) calls the snapshot's mode's
 *	   snapshot_contains (ccmode.h): MCSI's vector test (mcsi.c) or N2DB's
 *	   xmin/active-list test (n2db.c).  A version carrying an
 *	   external id is judged by the view's external_visible instead, if the
 *	   view has one (a snapshot taken outside the core).
 *	 - Self (NVM_VIEW_SELF): every committed version.
 *	 - Dirty and any (NVM_VIEW_DIRTY, NVM_VIEW_ANY): every version that is
 *	   not aborted, running ones included (nvm_chain_newest is the same
 *	   walk without a view).
 *	 - Bounds (NVM_VIEW_BOUNDS): every committed version whose creator's
 *	   clock value is within the bound the view gives its slot: the
 *	   transactions that had committed at a moment, published or not.
 *
 * Two rules that build on these live with the code that needs them:
 *	 - Writes (store.c, check_newer; paper Fig. 8): a transaction may push a
 *	   version above old only if no version above old is committed or
 *	   running (first updater wins), and none of its own was made in this
 *	   or a later command.
 *	 - All-visible (gc.c, nvm_gc_all_visible): a committed version inside
 *	   the collection horizon is seen by every snapshot, present and future;
 *	   everything below the newest such version of a chain may be pruned.
 *	   The horizon is the mode's too (nvm_horizon_start/lower/contains in
 *	   txn.c, over mcsi.c and n2db.c).
 *
 * The PG layer maps each PostgreSQL snapshot type onto one of these views
 * in one place: src/pg/xact/nvm_visibility.c.
 *
 * This file reads the store's format (storefmt.h) and never calls the
 * store: the store calls it (its write rule asks nvm_version_status), and
 * store.h includes this header, so the arrow runs one way, store to
 * visibility.
 */
#ifndef NVM_CORE_VISIBILITY_H
#define NVM_CORE_VISIBILITY_H

#include "ccstate.h"
#include "nvm_types.h"
#include "segarray.h"
#include "storefmt.h"

/* How a chain is read: which versions count as visible. */
typedef enum NvmViewKind
{
	NVM_VIEW_SNAPSHOT,			/* MVCC: snapshot + own changes before curcid */
	NVM_VIEW_SELF,				/* committed now + all own changes */
	NVM_VIEW_DIRTY,				/* committed now + own + others' running */
	NVM_VIEW_ANY,				/* newest version that is not aborted */
	NVM_VIEW_BOUNDS				/* committed, clock value within its slot's bound */
} NvmViewKind;

typedef struct NvmView
{
	NvmViewKind kind;
	const NvmSnapshot *snap;	/* for NVM_VIEW_SNAPSHOT */
	uint64_t	my_txid;		/* current transaction's txid, 0 if none yet */
	uint32_t	curcid;			/* current command id */

	/*
	 * NVM_VIEW_SNAPSHOT: if set, decides whether the creator of another
	 * transaction's version that carries an external id is visible, in
	 * place of snap (PostgreSQL: a snapshot taken elsewhere; the garbage
	 * collector keeps what it sees through nvm_gc_set_external_floor).
	 */
	bool		(*external_visible) (NvmVersion *v, void *arg);
	void	   *external_arg;

	/*
	 * NVM_VIEW_BOUNDS: bounds[c] is the highest clock value of slot c whose
	 * transactions count (NVM_MAX_SLOTS entries); a creator counts if it is
	 * within its slot's bound and committed.  A checkpoint's capture reads
	 * the pool so, as of its cut (src/pg/checkpoint/nvm_checkpoint.c).
	 */
	const uint64_t *bounds;
} NvmView;

/*
 * Final (or current) status of a version's creator: the inlined status if
 * there is one, else the status store's (RUNNING while it is not final).
 */
extern NvmTxnStatus nvm_version_status(NvmVersion *v);

/* Does this one version pass the view's test for its creator? */
extern bool nvm_version_creator_visible(NvmVersion *v, const NvmView *view);

/*
 * nvm_record_head returns the offset of the newest version of record_no,
 * or 0 if the number is unused, free or retired: where a chain walk
 * starts.
 */
extern nvm_off nvm_record_head(const NvmTable *t, uint64_t record_no);

/*
 * nvm_chain_visible returns the version of record_no the view sees (it may
 * be a tombstone, meaning the row does not exist for the view), or NULL.
 */
extern NvmVersion *nvm_chain_visible(const NvmTable *t, uint64_t record_no, const NvmView *view);

/*
 * nvm_chain_newest returns the newest version of the record that is not
 * aborted (running ones included), or NULL.
 */
extern NvmVersion *nvm_chain_newest(const NvmTable *t, uint64_t record_no);

/*
 * What a scan that reads a table's versions by number keeps from one row to
 * the next (nvm_scan_visible): the segments of the version slots and record
 * heads it read last, and the snapshot test of the creator it met last.
 * Zeroed at the scan's start; good for one table and one view.
 */
typedef struct NvmScanCache
{
	NvmSegCache versions;
	NvmSegCache records;
	const NvmSnapshot *snap;	/* the test below is of this snapshot ... */
	uint64_t	txid;			/* ... and this creator: */
	bool		contains;		/* nvm_snapshot_contains(snap, txid) */
} NvmScanCache;

/*
 * nvm_scan_visible returns version version_no if it is the version of its
 * record the view sees (maybe a tombstone), else NULL: the answer of
 * nvm_version_by_no and then nvm_chain_visible on its record, compared.
 * When the version is its record's newest (no later write to the row, the
 * case of a scan with no writer beside it), that is one test of its
 * creator, done here without walking the chain; the lookups of numbers
 * near the last ones and the snapshot test of the creator met last come
 * from c.  A snapshot's test of a creator never changes (a snapshot is
 * fixed), so remembering it is exact; the creator's status is read for
 * every version (a version alone may have been rolled back).
 */
extern NvmVersion *nvm_scan_visible(const NvmTable *t, uint64_t version_no,
									const NvmView *view, NvmScanCache *c);

#endif							/* NVM_CORE_VISIBILITY_H */
