/*-------------------------------------------------------------------------
 *
 * nvm_imported_snapshot.c
 *	  Reading nvm tables with a PostgreSQL snapshot that another process
 *	  took: a replication slot's initial snapshot, or an imported one.
 *
 * A subscription's initial table synchronisation copies each table with
 * the snapshot of the replication slot it then streams from: a walsender
 * restores the slot's snapshot into its transaction (CREATE_REPLICATION_SLOT
 * ... USE_SNAPSHOT) and runs COPY with it; other tools export the slot's
 * snapshot and read with SET TRANSACTION SNAPSHOT (nvm_import.c adopts the
 * exporter's nvm view when the exporter has one; a walsender has none).
 * The copy must hold
 * exactly the transactions that committed before the slot's start and
 * nothing that the stream will send: otherwise rows arrive twice or never.
 * nvm's own vector snapshot is taken at the first nvm access, later than
 * the slot's snapshot, so it may hold more.
 *
 * So, with wal_level = logical, such a transaction (any walsender's; one
 * that imported a snapshot without an nvm view; and their parallel
 * workers, told by the leader's published view, nvm_parallel.c) judges
 * every version that carries a PostgreSQL xid by PostgreSQL's snapshot, as
 * heap judges a tuple by its xmin (follow_visible); versions without an
 * xid (none of a logically logged table is written without one while
 * wal_level = logical: see nvm_wal.c) keep the vector's answer.
 *
 * Garbage collection must then keep what such a snapshot sees, although
 * it has no vector pinned from the slot's start: the collector treats a
 * version that carries an xid as all-visible only once that xid precedes
 * the horizon of PostgreSQL's VACUUM for this database's tables
 * (external_floor), which the slot holds back while it builds its
 * snapshot and the exporting or reading transaction holds back
 * afterwards.  A chain is cut only below an all-visible version, which
 * every such snapshot sees, so nothing it needs goes.  Below wal_level =
 * logical none of this applies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "replication/walsender.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "gc.h"

#include "xact/nvm_imported_snapshot.h"
#include "xact/nvm_parallel.h"

/*
 * Whether the current transaction imported a snapshot whose exporter's nvm
 * view it could not adopt.
 */
static bool xact_imported = false;

static uint32_t external_floor(void);

/*
 * nvm_imported_snapshot_init gives the collector its external floor;
 * called from _PG_init.
 */
void
nvm_imported_snapshot_init(void)
{
	nvm_gc_set_external_floor(external_floor);
}

/*
 * nvm_imported_snapshot_at_xact_end forgets an import when its transaction
 * ends (commit, abort, prepare; a parallel worker, which never imports,
 * has nothing to forget).
 */
void
nvm_imported_snapshot_at_xact_end(void)
{
	xact_imported = false;
}

/*
 * external_floor returns, with wal_level = logical, the horizon below which
 * PostgreSQL removes dead rows of this database's tables, else 0: versions
 * whose xid does not precede it stay (see the file header).  That is the
 * oldest xmin of this database's sessions and the replication slots' data
 * xmin (a slot building its snapshot holds it back), not their catalog
 * xmin, which a logical slot holds back for decoding as long as its
 * consumer lags: that holds back catalogs, not user tables.
 * GetOldestNonRemovableTransactionId picks the horizon by the kind of
 * relation it is given; it is given a stand-in for an ordinary table.
 */
static uint32_t
external_floor(void)
{
	static FormData_pg_class user_class;
	static RelationData user_table;

	if (!XLogLogicalInfoActive() || MyProc == NULL || !OidIsValid(MyDatabaseId))
		return 0;
	if (user_table.rd_rel == NULL)
	{
		user_class.relkind = RELKIND_RELATION;
		user_class.relpersistence = RELPERSISTENCE_PERMANENT;
		user_class.relisshared = false;
		user_table.rd_id = FirstNormalObjectId;
		user_table.rd_rel = &user_class;
	}
	return (uint32_t) GetOldestNonRemovableTransactionId(&user_table);
}

/*
 * nvm_imported_snapshot_follow is called when the current transaction has
 * imported a snapshot (SET TRANSACTION SNAPSHOT) whose exporter's nvm view
 * it cannot adopt (nvm_import.c): a replication slot's snapshot, exported
 * by a walsender, has none.  With wal_level = logical the transaction then
 * reads by the PostgreSQL snapshot itself, and true is returned; else
 * false, and the import is refused for nvm tables.
 */
bool
nvm_imported_snapshot_follow(void)
{
	if (!XLogLogicalInfoActive())
		return false;
	xact_imported = true;
	return true;
}

/*
 * follow_visible says whether the creator of v, whose xid v carries, is
 * visible to the PostgreSQL snapshot arg, exactly as HeapTupleSatisfiesMVCC
 * judges an xmin: not in the snapshot (XidInMVCCSnapshot), and committed.
 * The pool's status answers for committed and rolled-back versions;
 * PostgreSQL's commit log for a transaction that ended in PostgreSQL but
 * has not yet written its nvm status.
 *
 * The snapshot's bounds are tested in XidInMVCCSnapshot's order, xmin
 * first: a replication slot's initial snapshot can have its xmin above its
 * xmax (the xmin comes from the running transactions logged at its
 * consistent point, the xmax from the commits decoded before it; seen under
 * load as 105360:105358), and an xid between the two is finished for it,
 * as it is for heap.  Testing xmax first hid the rows such transactions
 * wrote last from the initial copy, and the slot's stream never sends them.
 *
 * An xid that the snapshot counts as running because it seems to follow
 * its xmax, and that even seems to follow the next xid to be assigned, was
 * assigned more than 2^31 xids ago (nvm versions are never frozen): it is
 * old, hence visible if committed.  (An xid that XidInMVCCSnapshot counts
 * as running never precedes the xmin; the test of the xmax spares a running
 * one the look at the next xid, which takes a lock.)
 */
static bool
follow_visible(NvmVersion *v, void *arg)
{
	Snapshot	snapshot = (Snapshot) arg;
	TransactionId xid = (TransactionId) v->external_id;
	NvmTxnStatus st = nvm_version_status(v);

	if (st == NVM_STATUS_ABORTED)
		return false;
	if (XidInMVCCSnapshot(xid, snapshot))
		return st == NVM_STATUS_COMMITTED &&
			TransactionIdFollowsOrEquals(xid, snapshot->xmax) &&
			TransactionIdFollowsOrEquals(xid, ReadNextTransactionId());
	return st == NVM_STATUS_COMMITTED || TransactionIdDidCommit(xid);
}

/*
 * nvm_imported_snapshot_applies says whether the current transaction reads
 * nvm tables by a PostgreSQL snapshot that another process took (see the
 * file header): with wal_level = logical, in a walsender, in a transaction
 * that imported a snapshot without an nvm view, and in the parallel
 * workers of either.
 */
bool
nvm_imported_snapshot_applies(void)
{
	if (!XLogLogicalInfoActive())
		return false;
	if (IsParallelWorker())
		return nvm_parallel_leader_imported();
	return am_walsender || xact_imported;
}

/*
 * nvm_imported_snapshot_view makes view (an MVCC view for snapshot) judge
 * versions that carry an xid by snapshot when the transaction reads by a
 * snapshot taken elsewhere.
 */
void
nvm_imported_snapshot_view(NvmView *view, Snapshot snapshot)
{
	if (!nvm_imported_snapshot_applies())
		return;
	view->external_visible = follow_visible;
	view->external_arg = snapshot;
}
