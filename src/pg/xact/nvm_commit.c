/*-------------------------------------------------------------------------
 *
 * nvm_commit.c
 *	  How a transaction that wrote nvm rows commits: on the pool alone
 *	  (log-free), or tied to PostgreSQL's commit record.
 *
 * The rows of an nvm transaction are durable in the pool when its status
 * word says committed; the pool needs no WAL.  What else the transaction
 * did decides whether PostgreSQL's WAL must be flushed before that status
 * is written (nvm_commit_decide):
 *
 *	 - Heap and TOAST rows, catalog changes (catalogs are heap tables) and
 *	   relation drops commit with PostgreSQL's commit record.  Such a
 *	   transaction is TIED: before the commit record it persists an
 *	   in-doubt marker naming its xid (prepare_tied), PostgreSQL flushes the
 *	   commit record (synchronous_commit is raised to "local" for this
 *	   commit if it was "off": an nvm status written after a commit record
 *	   that a crash may still lose would split the transaction), and the
 *	   nvm status follows.  One flush, PostgreSQL's own, with group commit.
 *
 *	 - Everything else is LOG-FREE: index entries of nvm rows, sequence
 *	   advances, and WAL that no outcome depends on (pruning of heap pages,
 *	   hint-bit images, row locks of foreign-key checks on heap tables,
 *	   which a crash voids anyway).  Its nvm status is the commit point;
 *	   PostgreSQL writes its commit record without waiting for it
 *	   (synchronous_commit is "off" for this commit: the record tells
 *	   PostgreSQL nothing it needs after a crash, and standbys have no nvm
 *	   rows to wait for).  What it must not lose before its status is
 *	   written:
 *		 - its index entries: each index root it created is logged in the
 *		   pool (indexlog.h) with the position of its WAL, and a crash that
 *		   loses that WAL is repaired from the log before the table is read
 *		   again (nvm_repair.c).  When the roots do not fit in the slot's
 *		   ring, or a table has an index repair cannot check (not btree),
 *		   the WAL is flushed instead.
 *		 - the sequence values it used: a sequence logs 32 values ahead and
 *		   a row holding such a value must not outlive the record, or the
 *		   sequence hands the value out again after a crash.  The sequences
 *		   of identity columns of the tables the transaction wrote are
 *		   checked one by one (the page's LSN against the flushed WAL);
 *		   one whose record is not durable yet has its position (the
 *		   page's last_value) logged in the slot's ring with the index
 *		   roots, and the end of WAL replay after a crash advances it
 *		   (nvm_seqlog.c); a cycling sequence, or the first such commit
 *		   after a checkpoint began, flushes the record instead.  A call of
 *		   nextval() or setval() anywhere in the transaction flushes the
 *		   WAL written so far, as the sequence it used is not known.  (Not
 *		   covered: a value taken by nextval in an earlier transaction that
 *		   wrote no WAL of its own, from a log-ahead record another
 *		   transaction had not flushed yet.)
 *
 * Knowing what the transaction wrote.  The table AM does not see index
 * inserts nor other AMs' WAL; the signals, each an over-approximation
 * where it is not exact, are:
 *	 - PostgreSQL's per-transaction table statistics: heap counts every row
 *	   it inserts, updates or deletes, in user tables, TOAST tables and
 *	   catalogs alike (heap_insert, heap_update, heap_delete,
 *	   heap_multi_insert), before the transaction ends.  A count on any
 *	   relation that is not an nvm table this transaction wrote ties the
 *	   commit.  With track_counts off (at commit or at the start of any
 *	   statement of the transaction) nothing is counted, and every commit
 *	   with an xid is tied.
 *	 - the result relations of every query: a table of another table
 *	   access method (neither heap nor nvm, which may not count its rows)
 *	   ties the commit.  Not covered: partitions of another access method
 *	   that an INSERT reaches by routing.
 *	 - replication origins (a logical replication apply worker): its
 *	   progress is in the commit record, so the commit is tied.
 *	 - change records for logical decoding (wal_level = logical,
 *	   nvm_wal.c): a transaction that wrote them is tied, and its commit
 *	   record is flushed before its nvm status also with synchronous_commit
 *	   off (nvm_logical_must_flush), so the pool and the decoded stream
 *	   agree after a crash.
 *
 * The xid of a log-free commit.  Most have none: nvm takes one only for a
 * serializable transaction and for changes logical decoding reads
 * (btree's uniqueness check waits on an xid stand-in instead,
 * nvm_standin.c); PostgreSQL assigns one for a row lock or a sequence's
 * log-ahead record.  Without an xid there is no commit record, and
 * PostgreSQL is told that the transaction wrote no WAL
 * (prepare_log_free), so that it does not wake the WAL writer
 * for it: the WAL it wrote (index entries, hint bits, pruning) reaches the
 * disk with the WAL writer's next round or the next flush, and the pool
 * covers what a crash could lose before that.  With an xid, the commit
 * record may be lost in a crash, after which PostgreSQL treats
 * the xid as aborted and may hand it out again (when no record carrying it
 * survived).  What stores or trusts such an xid:
 *	 - NvmVersion.external_id: read only by serializable reads (nvm_ssi.c),
 *	   for versions whose creator is concurrent with the reader, which no
 *	   version from before a crash is (every transaction of the pool's past
 *	   is completed for every snapshot taken since); the predicate lock of
 *	   a version read is taken without the stored xid (a reused xid must
 *	   not make a read look like the reader's own write).
 *	 - waiters (the slot's published xid, SnapshotDirty, TM_FailureData):
 *	   live transactions only, gone with the crash; a recovered in-doubt
 *	   transaction publishes its marker's xid, and a waiter whose xid was
 *	   handed out again waits for the new owner, then finds the in-doubt
 *	   one resolved.
 *	 - SSI conflict reporting: running transactions' xids only.
 *	 - in-doubt markers (tied commits and PREPARE): see
 *	   nvm_commit_abort_reused_xids.
 *	 - xmin shown to users: nvm rows show a row-version token, never an
 *	   xid (nvm_token.c); an xid shown there could not be taken from
 *	   external_id for rows older than the last start, whose xid
 *	   PostgreSQL may not know as committed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parsetree.h"
#include "pgstat.h"
#include "replication/origin.h"
#include "storage/bufmgr.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/pgstat_internal.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "indexlog.h"
#include "indoubt.h"
#include "pool.h"

#include "logical/nvm_seqlog.h"
#include "logical/nvm_wal.h"
#include "nvm_settings.h"
#include "redo/nvm_redo.h"
#include "space/nvm_relation.h"
#include "xact/nvm_commit.h"

NvmCommitStats nvm_commit_stats;

/*
 * What the current transaction did that its commit depends on; reset at
 * its end (commit_end).  Lists live in TopTransactionContext.
 */
typedef struct NvmCommitState
{
	List	   *nvm_rels;		/* nvm tables it wrote (their statistics are ours) */
	List	   *sequences;		/* identity sequences of tables it wrote */
	bool		sequence_call;	/* it called nextval() or setval() */
	bool		must_tie;		/* another signal ties the commit */
	bool		roots_overflow; /* index roots not kept: flush the index WAL */
	int			nroots;			/* index roots in roots[] */
	bool		sync_saved;		/* synchronous_commit changed for this commit */
	int			saved_sync;
} NvmCommitState;

static NvmCommitState state;

/* Index roots created by the current transaction (lsn filled at commit). */
static NvmIndexLogEntry *roots = NULL;
static int	roots_capacity = 0;

/* Per relation: its access method and identity sequences (see relinfo). */
typedef struct NvmRelInfo
{
	Oid			relid;			/* hash key */
	bool		other_am;		/* a table of neither heap nor nvm */
	int			nsequences;
	Oid			sequences[FLEXIBLE_ARRAY_MEMBER];
} NvmRelInfo;

#define NVM_RELINFO_MAX_SEQS	8

static HTAB *relinfo_cache = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

static void nvm_commit_object_access(ObjectAccessType access, Oid classId,
									 Oid objectId, int subId, void *arg);
static void relinfo_invalidate(Datum arg, Oid relid);
static void nvm_commit_abort_reused_xids(void);
static NvmCommitPath nvm_commit_decide(void);

/*
 * nvm_commit_init installs the object-access hook (to see calls of
 * nextval() and setval()) and the relcache callback of the relation-info
 * cache; called from _PG_init.
 */
void
nvm_commit_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = nvm_commit_object_access;
	CacheRegisterRelcacheCallback(relinfo_invalidate, (Datum) 0);
}

/*
 * nvm_commit_object_access notes a call of a function that advances a
 * sequence: the executor reports every function it prepares to call
 * (OAT_FUNCTION_EXECUTE, ExecInitFunc), in queries, PL/pgSQL expressions
 * and SQL functions alike.
 */
static void
nvm_commit_object_access(ObjectAccessType access, Oid classId, Oid objectId,
						 int subId, void *arg)
{
	if (access == OAT_FUNCTION_EXECUTE &&
		(objectId == F_NEXTVAL || objectId == F_SETVAL_REGCLASS_INT8 ||
		 objectId == F_SETVAL_REGCLASS_INT8_BOOL))
		state.sequence_call = true;
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
}

/* relinfo_invalidate forgets what the cache knows of relid (all: InvalidOid). */
static void
relinfo_invalidate(Datum arg, Oid relid)
{
	if (relinfo_cache == NULL)
		return;
	if (OidIsValid(relid))
		hash_search(relinfo_cache, &relid, HASH_REMOVE, NULL);
	else
	{
		HASH_SEQ_STATUS status;
		NvmRelInfo *info;

		hash_seq_init(&status, relinfo_cache);
		while ((info = hash_seq_search(&status)) != NULL)
			hash_search(relinfo_cache, &info->relid, HASH_REMOVE, NULL);
	}
}

/*
 * relinfo returns what the cache knows of relation relid, filling it in
 * first: whether it is a table of another access method than heap and nvm,
 * and the sequences of its identity columns.  NULL if it does not exist.
 */
static NvmRelInfo *
relinfo(Oid relid)
{
	NvmRelInfo *info;
	NvmRelInfo *local;
	bool		other_am;
	HeapTuple	tuple;
	Form_pg_class form;
	Relation	rel;

	if (relinfo_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = offsetof(NvmRelInfo, sequences) + NVM_RELINFO_MAX_SEQS * sizeof(Oid);
		ctl.hcxt = CacheMemoryContext;
		relinfo_cache = hash_create("nvm relation info", 64, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	info = hash_search(relinfo_cache, &relid, HASH_FIND, NULL);
	if (info != NULL)
		return info;

	/*
	 * Filled in a local copy first: the catalog lookups may process
	 * invalidations, which remove cache entries.
	 */
	local = palloc0(offsetof(NvmRelInfo, sequences) + NVM_RELINFO_MAX_SEQS * sizeof(Oid));
	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		return NULL;
	form = (Form_pg_class) GETSTRUCT(tuple);
	other_am = (form->relkind == RELKIND_RELATION || form->relkind == RELKIND_MATVIEW ||
				form->relkind == RELKIND_TOASTVALUE) &&
		form->relam != HEAP_TABLE_AM_OID;
	ReleaseSysCache(tuple);
	local->other_am = other_am && !nvm_relid_is_nvm(relid);

	/* the identity columns' sequences */
	rel = RelationIdGetRelation(relid);
	if (RelationIsValid(rel))
	{
		TupleDesc	desc = RelationGetDescr(rel);

		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);
			Oid			seq;

			if (att->attisdropped || att->attidentity == '\0')
				continue;
			#if PG_VERSION_NUM >= 170000
			seq = getIdentitySequence(rel, att->attnum, true);
#else
			seq = getIdentitySequence(relid, att->attnum, true);
#endif
			if (!OidIsValid(seq))
				continue;
			if (local->nsequences == NVM_RELINFO_MAX_SEQS)
			{
				/* more than a table has in practice: treat as a nextval call */
				local->nsequences = -1;
				break;
			}
			local->sequences[local->nsequences++] = seq;
		}
		RelationClose(rel);
	}

	info = hash_search(relinfo_cache, &relid, HASH_ENTER, NULL);
	memcpy(((char *) info) + sizeof(Oid), ((char *) local) + sizeof(Oid),
		   offsetof(NvmRelInfo, sequences) + NVM_RELINFO_MAX_SEQS * sizeof(Oid) - sizeof(Oid));
	pfree(local);
	return info;
}

/*
 * note_relation records what writing relid means for the commit: its
 * identity sequences may advance, and a table of another access method
 * ties the commit.
 */
static void
note_relation(Oid relid)
{
	NvmRelInfo *info = relinfo(relid);
	MemoryContext oldcxt;

	if (info == NULL)
		return;
	if (info->other_am)
		state.must_tie = true;
	if (info->nsequences < 0)
		state.sequence_call = true;
	if (info->nsequences <= 0)
		return;
	oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	for (int i = 0; i < info->nsequences; i++)
		state.sequences = list_append_unique_oid(state.sequences, info->sequences[i]);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * nvm_commit_note_query runs at the start of every query (ExecutorStart,
 * before the executor initialises it): its result relations are noted,
 * and a statement run with track_counts off makes the statistics useless
 * as a signal for this transaction.
 */
void
nvm_commit_note_query(QueryDesc *queryDesc)
{
	PlannedStmt *pstmt = queryDesc->plannedstmt;
	ListCell   *lc;

	if (!pgstat_track_counts)
		state.must_tie = true;
	if (pstmt == NULL || pstmt->resultRelations == NIL)
		return;
	foreach(lc, pstmt->resultRelations)
	{
		RangeTblEntry *rte = rt_fetch(lfirst_int(lc), pstmt->rtable);

		if (rte->rtekind == RTE_RELATION)
			note_relation(rte->relid);
	}
}

/*
 * nvm_commit_note_utility runs before every utility statement: COPY FROM
 * writes its table without the executor's queries.
 */
void
nvm_commit_note_utility(PlannedStmt *pstmt)
{
	if (!pgstat_track_counts)
		state.must_tie = true;
	if (IsA(pstmt->utilityStmt, CopyStmt))
	{
		CopyStmt   *copy = (CopyStmt *) pstmt->utilityStmt;
		Oid			relid;

		if (!copy->is_from || copy->relation == NULL)
			return;
		relid = RangeVarGetRelid(copy->relation, NoLock, true);
		if (OidIsValid(relid))
			note_relation(relid);
	}
}

/* nvm_commit_note_write records that the transaction wrote nvm table rel. */
void
nvm_commit_note_write(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	MemoryContext oldcxt;

	if (state.nvm_rels != NIL && llast_oid(state.nvm_rels) == relid)
		return;
	oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	state.nvm_rels = list_append_unique_oid(state.nvm_rels, relid);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * nvm_commit_note_index_root records that the transaction created index
 * entries naming version version_no of rel (an insert, or an update that
 * changed an indexed column).  Tables whose rows vanish in a crash
 * (temporary, unlogged) need nothing; a table with an index that repair
 * cannot check, or more roots than a ring holds, make the commit flush
 * the index WAL instead.
 */
void
nvm_commit_note_index_root(Relation rel, const NvmTable *table, uint64 version_no)
{
	if (!RelationNeedsWAL(rel) || state.roots_overflow)
		return;
	if (!nvm_relation_indexes_repairable(rel) ||
		state.nroots >= NVM_INDEXLOG_DEFAULT_CAPACITY)
	{
		state.roots_overflow = true;
		return;
	}
	if (state.nroots == roots_capacity)
	{
		int			cap = roots_capacity ? roots_capacity * 2 : 64;

		if (roots == NULL)
			roots = MemoryContextAlloc(TopMemoryContext, cap * sizeof(NvmIndexLogEntry));
		else
			roots = repalloc(roots, cap * sizeof(NvmIndexLogEntry));
		roots_capacity = cap;
	}
	roots[state.nroots].table = nvm_off_of(table->desc);
	roots[state.nroots].version_no = version_no;
	roots[state.nroots].lsn = 0;
	state.nroots++;
}

/*
 * nvm_commit_abort_reused_xids runs at PRE_COMMIT and PRE_PREPARE of every
 * transaction with an xid, in every backend (the library is preloaded, so
 * every backend has the callback): it resolves as aborted each unresolved
 * in-doubt marker that names one of the transaction's xids (top-level or
 * committed subtransaction), before the commit or prepare record.
 *
 * Why: the marker of a tied commit (or a PREPARE) is persisted before
 * PostgreSQL's commit (prepare) record, with no WAL flush of its own.  If
 * a crash loses that record and every other record carrying the xid, WAL
 * replay leaves the next xid at or below it and PostgreSQL hands the xid
 * out again.  The marker's transaction then certainly did not commit.  The
 * resolver (resolve_indoubt in nvm_xact.c) says so itself while the xid
 * is not handed out yet or a live backend runs under it, but it cannot
 * tell a commit of the new owner from its own transaction's in
 * PostgreSQL's commit log: the new owner may commit before any nvm
 * snapshot resolves the marker.  Resolved here before the new owner's
 * commit record, "committed" is the answer for the marker's own
 * transaction only, also across restarts.
 */
static void
nvm_commit_abort_reused_xids(void)
{
	TransactionId xid;
	TransactionId *children;
	int			nchildren;
	uint64	   *xids;

	if (nvm_cc == NULL || !nvm_indoubt_pending())
		return;
	xid = GetTopTransactionIdIfAny();
	if (!TransactionIdIsValid(xid))
		return;
	nchildren = xactGetCommittedChildren(&children);
	xids = palloc((nchildren + 1) * sizeof(uint64));
	xids[0] = xid;
	for (int i = 0; i < nchildren; i++)
		xids[i + 1] = children[i];
	if (nvm_indoubt_abort_external(xids, nchildren + 1) > 0)
		ereport(LOG,
				(errmsg("nvm: resolved an in-doubt transaction as aborted: its xid %u was handed out again after a crash",
						xid)));
	pfree(xids);
}

/*
 * other_rows_written says whether PostgreSQL's statistics of the current
 * transaction count a row written in a relation other than the nvm tables
 * it wrote (at PRE_COMMIT every subtransaction has handed its counts to
 * the top level).
 */
static bool
other_rows_written(void)
{
	PgStat_SubXactStatus *xs = pgstat_get_xact_stack_level(1);

	for (PgStat_TableXactStatus *trans = xs->first; trans != NULL; trans = trans->next)
	{
		if (trans->tuples_inserted == 0 && trans->tuples_updated == 0 &&
			trans->tuples_deleted == 0 && !trans->truncdropped)
			continue;
		if (!list_member_oid(state.nvm_rels, NVM_TABLE_STATUS_RELID(trans->parent)))
			return true;
	}
	return false;
}

/*
 * nvm_commit_decide chooses how the current transaction, which wrote nvm
 * rows, commits (see the file header).  This is the one place that
 * decides whether a transaction may skip the WAL flush.
 */
static NvmCommitPath
nvm_commit_decide(void)
{
	if (!TransactionIdIsValid(GetTopTransactionIdIfAny()))
		return NVM_COMMIT_LOG_FREE; /* no heap row, catalog change or drop */
	if (state.must_tie || !pgstat_track_counts)
		return NVM_COMMIT_TIED;
	/* changes logical decoding reads must not outlive their WAL (nvm_wal.c) */
	if (nvm_logical_must_flush())
		return NVM_COMMIT_TIED;
	if (replorigin_session_origin != InvalidRepOriginId &&
		replorigin_session_origin != DoNotReplicateId)
		return NVM_COMMIT_TIED;
	if (MyXactFlags & XACT_FLAGS_NEEDIMMEDIATECOMMIT)
		return NVM_COMMIT_TIED;
	if (other_rows_written())
		return NVM_COMMIT_TIED;
	return NVM_COMMIT_LOG_FREE;
}

/*
 * sequence_flush_target returns the WAL position that must be durable
 * before the rows of a log-free commit are, for the sequences it used;
 * InvalidXLogRecPtr if none.  The identity sequences whose log-ahead
 * record is not durable yet go to the pool instead where they can
 * (nvm_seqlog.c): their entries are added to roots[] (state.nroots stays
 * the count of index roots) and their number returned in *nseq.
 */
static XLogRecPtr
sequence_flush_target(int *nseq)
{
	int			room = NVM_SEQLOG_ITEM_ENTRIES * list_length(state.sequences);
	XLogRecPtr	target;
	bool		flushed;

	*nseq = 0;
	if (state.sequence_call)
		return nvm_inserted_wal_end();
	if (room == 0)
		return InvalidXLogRecPtr;
	if (state.nroots + room > roots_capacity)
	{
		int			cap = state.nroots + room + 64;

		if (roots == NULL)
			roots = MemoryContextAlloc(TopMemoryContext, cap * sizeof(NvmIndexLogEntry));
		else
			roots = repalloc(roots, cap * sizeof(NvmIndexLogEntry));
		roots_capacity = cap;
	}
	target = nvm_seqlog_collect(state.sequences, GetFlushRecPtr(NULL),
								roots + state.nroots, nseq, &flushed);
	if (flushed)
		nvm_commit_stats.wal_flushes++;
	return target;
}

/*
 * set_sync_commit sets synchronous_commit for this commit only (restored
 * by commit_end, which runs after PostgreSQL's commit record).  The
 * variable is set directly, not through the GUC machinery: nothing runs
 * between PRE_COMMIT and the commit record that could look at it, and
 * RecordTransactionCommit and SyncRepWaitForLSN read exactly this
 * variable.
 */
static void
set_sync_commit(int value)
{
	if (!state.sync_saved)
	{
		state.saved_sync = synchronous_commit;
		state.sync_saved = true;
	}
	synchronous_commit = value;
}

/*
 * prepare_log_free makes a log-free commit safe, at PRE_COMMIT
 * (before the nvm status): the index roots go to the slot's ring in the
 * pool with the end of the transaction's WAL, and the positions of the
 * identity sequences whose log-ahead record is not durable with that
 * record's position, in one append (persisted by the commit's drain,
 * before the status); when the ring cannot take them, or a flush is due
 * anyway, that WAL is flushed instead.  PostgreSQL's commit record, if
 * any, is then written without a flush.
 *
 * Persist order: ring entries (roots, sequence positions) flushed ->
 * drain -> nvm status COMMITTED; the WAL they stand for is flushed later
 * (WAL writer, next flush).  After a crash: start-up copies the ring into
 * the repair list and the external list, the end of WAL replay advances
 * the sequences, the end-of-recovery checkpoint writes them, the first
 * statement of their database logs and flushes them as setval does, and
 * only then are the items cleared from the pool (nvm_seqlog.c).
 */
static void
prepare_log_free(NvmTxn *txn)
{
	int			nseq;
	XLogRecPtr	flush_to = sequence_flush_target(&nseq);
	XLogRecPtr	end = XactLastRecEnd;
	XLogRecPtr	durable = GetFlushRecPtr(NULL);
	XLogRecPtr	seq_lsn = InvalidXLogRecPtr;
	bool		index_wal;
	int			nroots = 0;

	index_wal = end != InvalidXLogRecPtr && end > durable &&
		(state.nroots > 0 || state.roots_overflow);
	for (int i = 0; i < nseq; i++)
		seq_lsn = Max(seq_lsn, roots[state.nroots + i].lsn);
	if (index_wal && state.roots_overflow)
		flush_to = Max(flush_to, end);
	else if (index_wal)
		nroots = state.nroots;

	if (flush_to != InvalidXLogRecPtr)
	{
		/* a flush is due anyway: it covers the index and sequence WAL too */
		flush_to = Max(flush_to, seq_lsn);
		if (index_wal)
			flush_to = Max(flush_to, end);
	}
	else if (nroots + nseq > 0)
	{
		for (int i = 0; i < nroots; i++)
			roots[i].lsn = end;
		/* the sequences' entries follow the roots that are logged */
		if (nroots < state.nroots && nseq > 0)
			memmove(roots + nroots, roots + state.nroots, nseq * sizeof(NvmIndexLogEntry));
		if (nvm_indexlog_append((uint32) txn->slot, roots, nroots + nseq, durable))
		{
			nvm_commit_stats.index_log_entries += nroots;
			nvm_commit_stats.sequence_positions += nseq / NVM_SEQLOG_ITEM_ENTRIES;
		}
		else
		{
			/*
			 * No place in the ring (it is full of entries whose WAL is not
			 * durable yet, which this flush makes durable too): the index
			 * and sequence WAL is flushed.
			 */
			flush_to = Max(seq_lsn, index_wal ? end : InvalidXLogRecPtr);
		}
	}
	if (flush_to != InvalidXLogRecPtr && flush_to > GetFlushRecPtr(NULL))
	{
		XLogFlush(flush_to);
		nvm_commit_stats.wal_flushes++;
	}
	set_sync_commit(SYNCHRONOUS_COMMIT_OFF);

	/*
	 * Without an xid PostgreSQL writes no commit record, but it would still
	 * ask the WAL writer to flush the WAL written (XLogSetAsyncXactLSN),
	 * which wakes it at nearly every commit.  Nothing above needs that WAL
	 * soon (the ring covers it, or it was flushed), so PostgreSQL is told
	 * that the transaction wrote none; XLogInsert sets XactLastRecEnd again
	 * if anything writes WAL before the commit.
	 */
	if (!TransactionIdIsValid(GetTopTransactionIdIfAny()))
		XactLastRecEnd = InvalidXLogRecPtr;
	nvm_commit_stats.log_free++;
}

/*
 * tie_outcome_to_xid ties the outcome of txn to PostgreSQL's xid before
 * PostgreSQL writes its commit or prepare record (named by record, for the
 * debug crash point): the in-doubt marker is persisted (after the drain
 * that makes the versions durable).  No WAL is flushed for it:
 * PostgreSQL's flush of the record itself is the only one.  If a crash
 * loses the record, the xid may be handed out again; its new owner then
 * resolves the marker as aborted before it commits
 * (nvm_commit_abort_reused_xids), so the resolver (resolve_indoubt in
 * nvm_xact.c) never takes the new owner's commit for this transaction's.
 */
static void
tie_outcome_to_xid(NvmTxn *txn, const char *record)
{
	nvm_txn_mark_indoubt(txn, (uint64) GetTopTransactionId());
	if (nvm_debug_crash_point == NVM_CRASH_AFTER_INDOUBT)
		elog(PANIC, "nvm.debug_crash_point: crashing after the in-doubt marker, before the %s record",
			 record);
}

/*
 * prepare_tied makes PostgreSQL flush the commit record of a tied commit
 * before the nvm status is written, also when the session asked for
 * asynchronous commits, and ties the outcome of txn to the xid.  If the
 * server crashes between the commit record and the nvm status, recovery
 * asks PostgreSQL's commit log (resolve_indoubt in nvm_xact.c): both
 * parts are there, or neither.
 */
static void
prepare_tied(NvmTxn *txn)
{
	if (synchronous_commit < SYNCHRONOUS_COMMIT_LOCAL_FLUSH)
		set_sync_commit(SYNCHRONOUS_COMMIT_LOCAL_FLUSH);
	nvm_commit_stats.tied++;
	tie_outcome_to_xid(txn, "commit");

	/*
	 * For copies of the cluster (standbys, restored backups, point-in-time
	 * recovery), the versions go into the WAL before PostgreSQL's commit
	 * record, in doubt under the xid, as a prepare's do: a copy whose
	 * replay stops between the two records (recovery_target_xid, _lsn,
	 * _name) decides the nvm part from its commit log, as the heap part
	 * is decided.  These records are the commit's only ones: no COMMIT
	 * record follows the nvm status unless a checkpoint's cut came
	 * between (nvm_redo.c, tied_records_of).
	 */
	nvm_redo_log_tied(txn, GetTopTransactionId());
}

/*
 * nvm_commit_session_sync returns the session's synchronous_commit, which
 * a log-free or tied commit changes for its own commit (set_sync_commit):
 * what the session asked for of replication.
 */
int
nvm_commit_session_sync(void)
{
	return state.sync_saved ? state.saved_sync : synchronous_commit;
}

/*
 * commit_end runs at the end of every transaction (commit, abort, prepare,
 * a parallel worker's): synchronous_commit gets its value back and the
 * notes of the transaction are forgotten.
 */
static void
commit_end(void)
{
	if (state.sync_saved)
		synchronous_commit = state.saved_sync;
	memset(&state, 0, sizeof(state));
}

/*
 * nvm_commit_at_xact_end is the commit path's part of PostgreSQL's
 * transaction event; nvm_xact.c calls it once per event, for the nvm
 * transaction txn (NULL if the transaction wrote no nvm rows), before it
 * writes the nvm status.  The steps, in their persist order (the file
 * header, src/pg/README.md's commit protocol):
 *
 *	 PRE_COMMIT   an in-doubt marker naming one of the transaction's xids
 *				  is resolved as aborted (nvm_commit_abort_reused_xids);
 *				  with txn, the path is chosen (nvm_commit_decide) and
 *				  prepared: log-free (prepare_log_free), or tied
 *				  (prepare_tied: the in-doubt marker persisted)
 *	 PRE_PREPARE  the same resolution; with txn, its outcome is tied to the
 *				  xid exactly as a tied commit's (the prepare record is
 *				  flushed always)
 *	 COMMIT		  with txn whose changes were logged for logical decoding,
 *				  the commit record is flushed before the nvm status, also
 *				  with synchronous_commit off (such a commit is tied), so
 *				  that the nvm commit never outlives it (nvm_wal.c); then,
 *				  as at every end (ABORT, PREPARE, a parallel worker's
 *				  events), commit_end
 *
 * Returns the path txn commits by at PRE_COMMIT, NVM_COMMIT_LOG_FREE
 * otherwise.
 */
NvmCommitPath
nvm_commit_at_xact_end(XactEvent event, NvmTxn *txn)
{
	NvmCommitPath path = NVM_COMMIT_LOG_FREE;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			/* every transaction: an xid handed out again after a crash */
			nvm_commit_abort_reused_xids();
			if (txn == NULL)
				break;
			path = nvm_commit_decide();
			if (path == NVM_COMMIT_TIED)
				prepare_tied(txn);
			else
				prepare_log_free(txn);
			break;
		case XACT_EVENT_PRE_PREPARE:
			nvm_commit_abort_reused_xids();
			if (txn != NULL)
			{
				tie_outcome_to_xid(txn, "prepare");
				/* for standbys, before the prepare record that flushes it */
				nvm_redo_log_prepared(txn, GetTopTransactionId());
			}
			break;
		case XACT_EVENT_COMMIT:
			if (txn != NULL && nvm_logical_must_flush())
				XLogFlush(XactLastCommitEnd);
			commit_end();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			commit_end();
			break;
	}
	return path;
}
