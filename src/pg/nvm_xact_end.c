/*-------------------------------------------------------------------------
 *
 * nvm_xact_end.c
 *	  Transaction end: the one owner of PostgreSQL's transaction and
 *	  subtransaction callbacks for nvmam, and the order of its parts.
 *
 * PostgreSQL calls the transaction callbacks of a module in the reverse
 * order of their registration, and nvmam's parts once registered their
 * own, some at _PG_init and some at their first use, so the order in
 * which they ran depended on what a backend had done first.  Instead, the
 * two callbacks below are registered once, at _PG_init, and call each
 * part, a plain function of its file, in the order stated here:
 *
 *	 event				parts, in order
 *	 PRE_COMMIT			xact (the commit path: nvm_commit.c decides and
 *	 (also a parallel	prepares; a tied commit's in-doubt marker)
 *	 worker's)
 *	 PRE_PREPARE		prepared_locks (lock words marked PREPARED, persisted),
 *						xact (outcome tied to the xid, the xid published)
 *	 COMMIT, ABORT,		rowlock (a PROVISIONAL word given back, the decision
 *	 PREPARE, and a		word cleared, the words to mark at PREPARE
 *	 parallel worker's	forgotten), token (xmin tokens forgotten), wait
 *	 COMMIT, ABORT		(wait token unpublished), imported_snapshot (import
 *						forgotten), xact (the nvm status, or the hand-over of
 *						a prepared transaction; snapshot unpinned, slot's
 *						publications cleared), drop (storage freed)
 *	 ABORT_SUB			rowlock (a PROVISIONAL word given back), wait (the
 *						token swap noted), xact (the level's versions
 *						aborted), drop (the level's new storage freed)
 *	 COMMIT_SUB			xact (the level's versions handed up), drop (its
 *						entries handed up)
 *	 START_SUB,			nothing
 *	 PRE_COMMIT_SUB
 *
 * This is the order the separate callbacks had in every backend, as far as
 * it was fixed: nvm_xact.c's and nvm_imported_snapshot.c's were registered
 * at _PG_init and so ran last, the imported snapshot's before the nvm
 * transaction's; those of row locks, tokens and waits, registered at first
 * use, ran before both, among themselves in an order that varied.  What
 * depends on the order:
 *
 *	 - The drops come last.  Storage a transaction or subtransaction
 *	   created is freed at its abort, and may hold both its versions,
 *	   which the nvm outcome writes into first, and a PROVISIONAL lock word
 *	   an error left behind, which rowlock puts back first: after the free
 *	   either write would land in freed pool space.
 *	 - Nothing else.  token, wait and imported_snapshot read and write only
 *	   their own state, so their order among themselves and relative to
 *	   rowlock and xact is free.  rowlock's decision word may clear before
 *	   or after the nvm status: a writer waiting on it stops at whichever
 *	   comes first (nvm_decision_wait).  At PRE_PREPARE the lock
 *	   words are persisted before the outcome is tied to the xid, as
 *	   before, but both only have to precede the prepare record: an error
 *	   in either aborts the transaction, and the abort clears a marker.
 *	 - Every part of COMMIT, ABORT and PREPARE runs before PostgreSQL
 *	   releases the transaction's locks (ResourceOwnerRelease follows the
 *	   callbacks): waiters on its vxid, xid, xid stand-in or wait token
 *	   wake up to the final nvm status.
 *
 * One part stays outside: the wait token's swap at a subtransaction's
 * abort (nvm_wait.c), which wakes the writers waiting for the
 * subtransaction's versions.  They look again at once, so the swap comes
 * after the versions' abort status (xact, above): a waiter that still saw
 * them running would wait on the new token, until the top-level
 * transaction ends.  It also comes after the release of the
 * subtransaction's heavyweight locks (queue locks of rows it waited for,
 * its xid's lock), so that a waiter finds the subtransaction gone as a
 * whole rather than blocking again on a lock about to go.  PostgreSQL
 * releases those locks after the subtransaction callbacks, in the
 * resource-release phase: so wait's part above only notes the swap, and
 * nvm_wait.c's resource-release callback (RESOURCE_RELEASE_AFTER_LOCKS,
 * registered at the backend's first wait token) makes it, as before.
 *
 * Cost.  Row locks, tokens and waits registered their callbacks at first
 * use, so that backends that never used them paid nothing; now their
 * parts test their own state and return (no token handed out, no wait
 * token, no PROVISIONAL word or decision word).  PRE_COMMIT, the one
 * event before the commit record of every transaction, calls the commit
 * path alone.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"

#include "nvm_xact_end.h"
#include "space/nvm_drop.h"
#include "wait/nvm_prepared_locks.h"
#include "wait/nvm_rowlock.h"
#include "wait/nvm_wait.h"
#include "xact/nvm_imported_snapshot.h"
#include "xact/nvm_token.h"
#include "xact/nvm_xact.h"

static void nvm_xact_end_callback(XactEvent event, void *arg);
static void nvm_subxact_end_callback(SubXactEvent event, SubTransactionId mySubid,
									 SubTransactionId parentSubid, void *arg);

/*
 * nvm_xact_end_init registers the transaction and subtransaction
 * callbacks; called from _PG_init.
 */
void
nvm_xact_end_init(void)
{
	RegisterXactCallback(nvm_xact_end_callback, NULL);
	RegisterSubXactCallback(nvm_subxact_end_callback, NULL);
}

/*
 * nvm_xact_end_callback runs the parts of a transaction event in the
 * order of the file header.
 */
static void
nvm_xact_end_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			nvm_xact_at_xact_end(event);
			break;
		case XACT_EVENT_PRE_PREPARE:
			nvm_prepared_locks_before_prepare();
			nvm_xact_at_xact_end(event);
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			nvm_rowlock_at_xact_end();
			nvm_token_at_xact_end();
			nvm_wait_at_xact_end();
			nvm_imported_snapshot_at_xact_end();
			nvm_xact_at_xact_end(event);
			nvm_drop_at_xact_end(event);
			break;
	}
}

/*
 * nvm_subxact_end_callback runs the parts of a subtransaction event in the
 * order of the file header.  Both ending events come while the
 * subtransaction is still current.
 */
static void
nvm_subxact_end_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	switch (event)
	{
		case SUBXACT_EVENT_ABORT_SUB:
			nvm_rowlock_at_subxact_abort();
			nvm_wait_at_subxact_abort();
			nvm_xact_at_subxact_end(event);
			nvm_drop_at_subxact_end(event);
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			nvm_xact_at_subxact_end(event);
			nvm_drop_at_subxact_end(event);
			break;
		case SUBXACT_EVENT_START_SUB:
		case SUBXACT_EVENT_PRE_COMMIT_SUB:
			break;
	}
}
