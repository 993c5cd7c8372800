/*-------------------------------------------------------------------------
 *
 * nvm_snapshot.c
 *	  The vector (NvmSnapshot) a statement or a transaction reads nvm rows
 *	  with: when it is taken, pinned and forgotten, and the one a
 *	  transaction adopts with an imported snapshot.
 *
 * PostgreSQL has no hook around GetSnapshotData, and a transaction that
 * writes only nvm rows may leave PostgreSQL's snapshots unchanged, so the
 * MCSI vector cannot be derived from PostgreSQL's snapshot.  Instead,
 * ExecutorStart and ProcessUtility mark statement boundaries (queries run
 * inside functions included), and the first access that needs a vector
 * after a boundary takes a new one in READ COMMITTED; with a transaction
 * snapshot (REPEATABLE READ) the first vector serves the whole
 * transaction.  Scans copy the vector they began with, so a scan keeps its
 * view while later statements move on.  Own changes are judged by command
 * id against snapshot->curcid, exactly as heap does.  Every snapshot first
 * resolves the in-doubt transactions whose xids have ended
 * (nvm_indoubt.c); the transaction's end forgets its vector
 * (nvm_xact_forget_snapshot, called by nvm_xact.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "executor/execdesc.h"
#include "nodes/parsenodes.h"
#if PG_VERSION_NUM >= 160000
#include "parser/parse_relation.h"
#endif
#include "portability/instr_time.h"
#include "storage/proc.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "gc.h"

#include "nvm_compat.h"
#include "nvm_routine.h"
#include "nvm_settings.h"
#include "xact/nvm_imported_snapshot.h"
#include "xact/nvm_indoubt.h"
#include "xact/nvm_parallel.h"
#include "xact/nvm_snapshot.h"

/*
 * The statement snapshot: valid while nvm_snap_valid, taken at statement
 * number nvm_snap_statement.  nvm_statement counts statement boundaries.
 */
static NvmSnapshot *nvm_snap = NULL;
static bool nvm_snap_valid = false;
static uint64 nvm_snap_statement = 0;
static uint64 nvm_statement = 0;

/*
 * A statement that must see the latest commits although the transaction
 * has a transaction snapshot: a foreign-key check that runs with a
 * crosscheck snapshot (ri_triggers.c, detectNewRows in REPEATABLE READ)
 * scans with PostgreSQL's latest snapshot.  It gets its own fresh vector.
 */
static bool nvm_statement_latest = false;
static NvmSnapshot *nvm_latest_snap = NULL;
static uint64 nvm_latest_statement = 0;

/*
 * A snapshot imported with SET TRANSACTION SNAPSHOT whose nvm view could
 * not be adopted (nvm_xact_adopt_snapshot): why, or NULL.  Reading nvm
 * tables in such a transaction is refused rather than done with a view
 * the PostgreSQL snapshot does not match.
 */
static const char *nvm_snap_import_refused = NULL;

/* This backend's snapshot counters, for nvm_backend_stats(). */
NvmSnapshotStats nvm_xact_snapshot_stats;

/*
 * take_snapshot takes a snapshot and counts it and its cost.  Transactions
 * left in doubt by a crash are resolved first, so that no snapshot ever
 * sees them change.  The first snapshot of a transaction is pinned for
 * garbage collection: every later one of the transaction contains it, so
 * versions that any of them can see are kept until the transaction ends
 * (nvm_xact_forget_snapshot unpins).  A scan or cursor never outlives its
 * transaction with an nvm snapshot (WITH HOLD cursors are materialised at
 * commit).
 */
static void
take_snapshot(NvmSnapshot *snap)
{
	instr_time	start,
				duration;

	if (IsolationIsSerializable() && !nvm_cc_serializable())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nvm tables do not support SERIALIZABLE with nvm.concurrency_control = %s",
						nvm_concurrency_control_name()),
				 errdetail("A snapshot of this mode can miss a commit acknowledged to another session before it was taken."),
				 errhint("Use REPEATABLE READ or READ COMMITTED, or another concurrency control.")));
	nvm_xact_resolve_indoubt();
	INSTR_TIME_SET_CURRENT(start);
	/* the transaction's first snapshot is pinned until it ends (gc.h) */
	nvm_snapshot_take_pinned(NVM_PROC_NUMBER(MyProc), snap);
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	nvm_xact_snapshot_stats.snapshots++;
	nvm_xact_snapshot_stats.snapshot_ns +=
		(uint64) (INSTR_TIME_GET_DOUBLE(duration) * 1e9);
}

/*
 * nvm_xact_statement_boundary notes that a new statement starts: in READ
 * COMMITTED the next access that needs a snapshot takes a new vector.
 */
void
nvm_xact_statement_boundary(void)
{
	nvm_statement++;
	nvm_statement_latest = false;
}

/*
 * rte_required_perms returns the privileges the statement checks on the
 * range-table entry (16 on: in the statement's permission infos; none for
 * an entry without one).
 */
static AclMode
rte_required_perms(PlannedStmt *stmt, RangeTblEntry *rte)
{
#if PG_VERSION_NUM >= 160000
	if (rte->perminfoindex == 0)
		return 0;
	return getRTEPermissionInfo(stmt->permInfos, rte)->requiredPerms;
#else
	return rte->requiredPerms;
#endif
}

/*
 * query_reads_nvm says whether the query reads an nvm table: a table or
 * materialized view of its range table, read (SELECT privilege asked) and
 * of the nvm access method.  The executor holds the locks already.
 */
static bool
query_reads_nvm(QueryDesc *queryDesc)
{
	ListCell   *lc;

	foreach(lc, queryDesc->plannedstmt->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
		Relation	rel;
		bool		nvm;

		if (rte->rtekind != RTE_RELATION ||
			(rte_required_perms(queryDesc->plannedstmt, rte) & ACL_SELECT) == 0 ||
			(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW))
			continue;
		rel = RelationIdGetRelation(rte->relid);
		if (!RelationIsValid(rel))
			continue;
		nvm = nvm_routine_is_nvm(rel->rd_tableam);
		RelationClose(rel);
		if (nvm)
			return true;
	}
	return false;
}

/*
 * nvm_xact_query_start is called when the executor starts a query.  With a
 * transaction snapshot, PostgreSQL takes it at the transaction's first
 * query; so does nvm, rather than at the first nvm access, which may come
 * later (after a wait, say) and would then see commits that PostgreSQL's
 * snapshot does not (ON CONFLICT's visibility check in REPEATABLE READ).
 * In READ COMMITTED a query that reads nvm tables takes its statement's
 * vector now, before it reads any index: an index scan reads a page of
 * entries before its first fetch (a bitmap scan, every entry), and a
 * vector taken after that could see a commit whose new index entries the
 * page read did not have yet, while the row's older entries no longer
 * lead to the version it sees: the row would be missed.
 */
void
nvm_xact_query_start(QueryDesc *queryDesc)
{
	if (IsParallelWorker() || nvm_snap_import_refused != NULL)
		return;
	if (IsolationUsesXactSnapshot())
	{
		if (!nvm_snap_valid)
			(void) nvm_xact_transaction_snapshot();
	}
	else if (query_reads_nvm(queryDesc))
		(void) nvm_xact_transaction_snapshot();
}

/*
 * nvm_xact_statement_sees_latest notes that the statement that just
 * started scans with PostgreSQL's latest snapshot (it has a crosscheck
 * snapshot): it gets a fresh vector even with a transaction snapshot.
 */
void
nvm_xact_statement_sees_latest(void)
{
	nvm_statement_latest = true;
}

/*
 * nvm_xact_statement_snapshot returns the vector of the current statement
 * (or transaction, with a transaction snapshot), taking it if there is
 * none yet; a parallel worker gets its leader's.  The result stays valid
 * until the next boundary; callers that live longer copy it.
 */
const NvmSnapshot *
nvm_xact_statement_snapshot(void)
{
	if (IsParallelWorker())
		return nvm_parallel_leader_snapshot();
	if (nvm_statement_latest && IsolationUsesXactSnapshot())
	{
		if (nvm_latest_snap == NULL)
			nvm_latest_snap = MemoryContextAlloc(TopMemoryContext, sizeof(NvmSnapshot));
		if (nvm_latest_statement != nvm_statement)
		{
			take_snapshot(nvm_latest_snap);
			nvm_latest_statement = nvm_statement;
		}
		return nvm_latest_snap;
	}
	return nvm_xact_transaction_snapshot();
}

/*
 * nvm_xact_transaction_snapshot returns the vector of the transaction
 * snapshot (REPEATABLE READ) or of the current statement (READ COMMITTED),
 * ignoring nvm_xact_statement_sees_latest: a crosscheck snapshot's.
 */
const NvmSnapshot *
nvm_xact_transaction_snapshot(void)
{
	if (IsParallelWorker())
		return nvm_parallel_leader_snapshot();
	if (nvm_snap_import_refused != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nvm tables cannot be read with this imported snapshot"),
				 errdetail("%s", nvm_snap_import_refused),
				 errhint("Export the snapshot from a REPEATABLE READ or SERIALIZABLE transaction that is still running.")));
	if (nvm_snap == NULL)
		nvm_snap = MemoryContextAlloc(TopMemoryContext, sizeof(NvmSnapshot));

	if (!nvm_snap_valid ||
		(!IsolationUsesXactSnapshot() && nvm_snap_statement != nvm_statement))
	{
		take_snapshot(nvm_snap);
		nvm_snap_valid = true;
		nvm_snap_statement = nvm_statement;
	}
	return nvm_snap;
}

/*
 * refuse_import refuses nvm tables in this transaction, whose imported
 * snapshot's nvm view cannot be adopted, for the reason given; with
 * wal_level = logical the transaction reads them by the PostgreSQL snapshot
 * it imported instead (nvm_imported_snapshot.c: a replication slot's
 * snapshot, exported by a walsender, has no nvm view).
 */
static void
refuse_import(const char *reason)
{
	if (!nvm_imported_snapshot_follow())
		nvm_snap_import_refused = reason;
}

/*
 * nvm_xact_adopt_snapshot makes the nvm view of this transaction the one of
 * the transaction that exported the snapshot it just imported (SET
 * TRANSACTION SNAPSHOT; nvm_import.c finds the exporter): the exporter's
 * pinned vector, which is its transaction snapshot when it runs REPEATABLE
 * READ or SERIALIZABLE, becomes this transaction's, pinned as well.  So
 * pg_dump's parallel workers read nvm tables as their leader does.  still_runs
 * tells, after the copy, whether the exporter's transaction kept running
 * (then its pin, and so the copy, was whole).  On failure, nvm tables are
 * refused in this transaction with the reason given (refuse_import).
 */
void
nvm_xact_adopt_snapshot(int from_pgprocno, bool (*still_runs) (void *), void *arg,
						const char *refused)
{
	if (nvm_snap == NULL)
		nvm_snap = MemoryContextAlloc(TopMemoryContext, sizeof(NvmSnapshot));
	nvm_snap_valid = false;
	nvm_snap_import_refused = NULL;
	if (refused != NULL)
	{
		refuse_import(refused);
		return;
	}
	if (nvm_gc_is_pinned(NVM_PROC_NUMBER(MyProc)) ||
		!nvm_snapshot_adopt_pinned(NVM_PROC_NUMBER(MyProc), from_pgprocno, nvm_snap))
	{
		refuse_import("The exporting transaction has not read nvm tables' snapshot yet, or has ended.");
		return;
	}
	if (!still_runs(arg))
	{
		nvm_gc_unpin(NVM_PROC_NUMBER(MyProc));
		refuse_import("The exporting transaction ended while its snapshot was imported.");
		return;
	}
	nvm_snap_valid = true;
	nvm_snap_statement = nvm_statement;
}

/*
 * nvm_xact_copy_snapshot returns a palloc'd copy (in the current memory
 * context) of snap, or of the statement snapshot if snap is NULL; only the
 * slots the vector covers are copied.
 */
NvmSnapshot *
nvm_xact_copy_snapshot(const NvmSnapshot *snap)
{
	NvmSnapshot *copy;
	size_t		size;

	if (snap == NULL)
		snap = nvm_xact_statement_snapshot();
	size = nvm_snapshot_size(snap);
	copy = palloc(size);
	memcpy(copy, snap, size);
	return copy;
}

/*
 * nvm_xact_fresh_snapshot returns a new vector, palloc'd in the current
 * memory context, independent of statement boundaries (for ANALYZE).
 */
NvmSnapshot *
nvm_xact_fresh_snapshot(void)
{
	NvmSnapshot *snap = palloc(sizeof(NvmSnapshot));

	take_snapshot(snap);
	return snap;
}

/*
 * nvm_xact_forget_snapshot forgets the transaction's vector (and a refused
 * import) and unpins it for garbage collection, at the transaction's end.
 */
void
nvm_xact_forget_snapshot(void)
{
	nvm_snap_valid = false;
	nvm_snap_import_refused = NULL;
	if (MyProc != NULL)
		nvm_gc_unpin(NVM_PROC_NUMBER(MyProc));
}
