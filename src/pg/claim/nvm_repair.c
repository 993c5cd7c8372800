/*-------------------------------------------------------------------------
 *
 * nvm_repair.c
 *	  Re-inserting the index entries of nvm rows whose WAL a crash lost.
 *
 * A log-free commit (nvm_commit.c) makes its rows durable in the pool and
 * leaves its index entries' WAL to be flushed later.  If the server crashes
 * first, WAL replay ends before those entries, and the rows would be
 * missing from their indexes.  Each such transaction logged its index
 * roots in the pool before it committed (indexlog.h), and start-up moved
 * the roots that may have lost their WAL into the repair list.  This file
 * puts their index entries back, table by table, before any snapshot can
 * see the table.
 *
 * When.  Where physical standbys may replay this server's WAL, at its
 * start: the first access to nvm rows after a crash (the binding's
 * "resync" state, which every other access waits for) runs
 * nvm_repair_at_start before it logs the rows of the tables a crash may
 * have lost COMMIT records of (redo/nvm_resync.c).  For each database with
 * tables in the repair list it starts a worker ("nvm index repair")
 * connected to that database, which repairs each of them, and waits for
 * it.  So the WAL of the entries put back lies before the RESYNC records
 * that give standbys those rows: a standby's index has an entry for a row
 * before any of its snapshots can see the row (a standby cannot write its
 * indexes itself).  The worker takes every lock without waiting (the
 * process that waits for it may hold locks of its own, or another process
 * that holds them may wait for the binding's lock); a table it cannot lock
 * at once, or a database it cannot reach, is left to the next rule, and
 * reaches standbys later, with a WARNING.
 *
 * Every access to an nvm table's rows (scans, index fetches, DML,
 * index builds, VACUUM, amcheck's heap pass) gets its storage through
 * nvm_relation_table, which calls nvm_repair_table while the repair list
 * is not empty and this backend has not checked the table against it.
 * Index scans get there from index_beginscan (table_index_fetch_begin),
 * before the index is read, and bitmap heap scans when the executor
 * initialises them, before their index scans run; an insert gets there
 * before its index entries and uniqueness checks.  So no snapshot reads a
 * table's indexes before its repair, in any backend.  Tables of other
 * databases are repaired when a backend of their database first touches
 * them; their entries wait in the pool, across restarts if need be.
 *
 * Mutual exclusion.  The repair of a table runs under a lock of its own
 * (an object lock on the table's pg_class entry, which PostgreSQL never
 * takes for relations), held until the repair is done: a second backend
 * waits, then finds the entries gone.  It is a heavyweight lock, so a
 * deadlock with it is detected.
 *
 * What is repaired.  An entry names a version number n that index entries
 * name (an index root).  After a crash every snapshot sees the newest
 * committed version of each row (no transaction older than the crash
 * reads any more; a prepared transaction's versions are in doubt and are
 * passed over), so the entries needed are those of n's index run if the
 * newest committed version of n's record belongs to it and is not a
 * tombstone.  That version gives the key of every index (all versions of a
 * run have the same indexed values), and for each btree index the entry
 * (key, TID n) is looked up by descending the tree with the TID as the
 * last key column (btree refuses the same key and TID twice) and inserted
 * if it is missing, without a uniqueness check (the key was checked when
 * it was first inserted, and nothing wrote the table since the crash).
 * Anything else (a stale entry: version gone, aborted, in another run, a
 * number out of range) is skipped: repairing means "make sure the entries
 * of this live root exist", which is right for any root at any time.
 * Other index types are never in the log: a log-free commit that wrote a
 * table with one flushes its WAL instead (nvm_relation_indexes_repairable).
 *
 * Persist order: the WAL of the re-inserted entries is flushed before the
 * entries are cleared from the repair list (nvm_repair_done), so a crash
 * during a repair repeats it.
 *
 * Version numbers are not reused while an index entry may name them: VACUUM
 * flushes the WAL of its index deletions before it gives numbers back, and
 * that flush covers every earlier index insert too; pruning frees only
 * numbers that no index entry names (index roots become redirects, which
 * only VACUUM gives back).  So an entry never leads the repair to a number
 * that now holds another row than the one its WAL was lost for, and even
 * if it did, inserting that row's own missing entries would be right.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/nbtree.h"
#include "access/parallel.h"
#include "access/relation.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#if PG_VERSION_NUM >= 160000
#include "utils/relfilenumbermap.h"
#else
#include "utils/relfilenodemap.h"
#endif
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "indexlog.h"
#include "pool.h"
#include "store.h"

#include "claim/nvm_binding.h"
#include "claim/nvm_repair.h"
#include "nvm_compat.h"
#include "row/nvm_tid.h"
#include "row/nvm_tuple.h"

/* Set while this backend repairs a table (its own accesses do not recurse). */
static bool repairing = false;

/*
 * run_version returns the version whose values give the index entries of
 * index root n of table t, or NULL if none are needed (see the file
 * header).
 */
static NvmVersion *
run_version(const NvmTable *t, uint64 n)
{
	uint64		record;
	NvmVersion *root;

	if (n == 0 || n >= nvm_table_version_limit(t))
		return NULL;
	record = nvm_version_record_no(t, n);
	if (record == 0)
		return NULL;
	root = nvm_version_by_no(t, n);
	if (root != NULL && root->index_root != n)
		return NULL;
	for (NvmVersion *v = nvm_ptr(nvm_record_head(t, record)); v != NULL; v = nvm_ptr(v->prev))
	{
		NvmTxnStatus st = nvm_version_status(v);

		if (st != NVM_STATUS_COMMITTED)
			continue;			/* aborted, or in doubt (prepared) */
		if (nvm_version_is_tombstone(v) || v->index_root != n)
			return NULL;
		return v;
	}
	return NULL;
}

/*
 * btree_has_entry says whether btree index irel has the entry (values,
 * isnull, tid): it descends the tree with the heap TID as the last key
 * column, as an insertion of that entry would, and looks at the item where
 * the entry belongs (a plain tuple with that key and TID, or a posting
 * list with that key whose TIDs include it).
 */
static bool
btree_has_entry(Relation irel, Datum *values, bool *isnull, ItemPointer tid)
{
	IndexTuple	itup = index_form_tuple(RelationGetDescr(irel), values, isnull);
	BTScanInsert key;
	BTStack		stack;
	Buffer		buf;
	bool		found = false;

	itup->t_tid = *tid;
	key = _bt_mkscankey(irel, itup);
	if (!key->heapkeyspace)
		elog(ERROR, "btree index \"%s\" on an nvm table has no heap TID key column",
			 RelationGetRelationName(irel));
	stack = NVM_BT_SEARCH_READ(irel, key, &buf);
	if (BufferIsValid(buf))
	{
		BTInsertStateData insertstate;
		OffsetNumber offnum;
		Page		page = BufferGetPage(buf);

		memset(&insertstate, 0, sizeof(insertstate));
		insertstate.itup = itup;
		insertstate.itemsz = MAXALIGN(IndexTupleSize(itup));
		insertstate.itup_key = key;
		insertstate.buf = buf;
		offnum = _bt_binsrch_insert(irel, &insertstate);
		if (offnum <= PageGetMaxOffsetNumber(page) &&
			_bt_compare(irel, key, page, offnum) == 0)
		{
			IndexTuple	item = (IndexTuple) PageGetItem(page, PageGetItemId(page, offnum));

			if (!BTreeTupleIsPosting(item))
				found = true;	/* equal key and equal heap TID */
			else
			{
				for (int i = 0; i < BTreeTupleGetNPosting(item) && !found; i++)
					found = ItemPointerEquals(BTreeTupleGetPostingN(item, i), tid);
			}
		}
		_bt_relbuf(irel, buf);
	}
	_bt_freestack(stack);
	pfree(key);
	pfree(itup);
	return found;
}

/*
 * repair_entries makes sure every btree index of rel has the entries of
 * the index roots numbered versions[0..n-1]; returns how many entries it
 * inserted.
 */
static uint64
repair_entries(Relation rel, const NvmTable *table, const uint64 *versions, uint64 n)
{
	List	   *indexoids = RelationGetIndexList(rel);
	int			nindexes = list_length(indexoids);
	Relation   *indexes = palloc(nindexes * sizeof(Relation));
	IndexInfo **infos = palloc(nindexes * sizeof(IndexInfo *));
	ExprState **predicates = palloc0(nindexes * sizeof(ExprState *));
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	bool		pushed = false;
	uint64		inserted = 0;
	int			i = 0;
	ListCell   *lc;

	foreach(lc, indexoids)
	{
		indexes[i] = index_open(lfirst_oid(lc), RowExclusiveLock);
		infos[i] = BuildIndexInfo(indexes[i]);
		if (infos[i]->ii_Predicate != NIL)
			predicates[i] = ExecPrepareQual(infos[i]->ii_Predicate, estate);
		i++;
	}
	econtext->ecxt_scantuple = slot;
	/* index expressions may be SQL functions, which want a snapshot */
	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}

	for (uint64 k = 0; k < n; k++)
	{
		NvmVersion *v = run_version(table, versions[k]);
		ItemPointerData tid;

		if (v == NULL)
			continue;
		CHECK_FOR_INTERRUPTS();
		nvm_store_version(rel, v, slot);
		nvm_version_to_tid(versions[k], &tid);
		for (i = 0; i < nindexes; i++)
		{
			Datum		values[INDEX_MAX_KEYS];
			bool		isnull[INDEX_MAX_KEYS];

			if (indexes[i]->rd_rel->relam != BTREE_AM_OID || !infos[i]->ii_ReadyForInserts)
				continue;
			if (predicates[i] != NULL && !ExecQual(predicates[i], econtext))
				continue;
			FormIndexDatum(infos[i], slot, estate, values, isnull);
			if (btree_has_entry(indexes[i], values, isnull, &tid))
				continue;
			index_insert(indexes[i], values, isnull, &tid, rel, UNIQUE_CHECK_NO,
						 false, infos[i]);
			inserted++;
		}
		ResetExprContext(econtext);
		ExecClearTuple(slot);
	}

	if (pushed)
		PopActiveSnapshot();
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	for (i = 0; i < nindexes; i++)
		index_close(indexes[i], NoLock);
	return inserted;
}

/*
 * nvm_repair_table puts back the index entries of rel (whose storage is
 * table) that the repair list names, if any (see the file header).
 */
void
nvm_repair_table(Relation rel, const NvmTable *table)
{
	nvm_off		desc = nvm_off_of(table->desc);
	Oid			relid = RelationGetRelid(rel);
	uint64	   *versions;
	uint64		n;
	uint64		inserted;

	if (repairing || nvm_repair_count_for(desc) == 0)
		return;
	if (IsParallelWorker() || RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index entries of nvm table \"%s\" must be repaired after a crash",
						RelationGetRelationName(rel)),
				 errdetail("The repair cannot run in a parallel worker or during recovery."),
				 errhint("Access the table from an ordinary session first.")));

	LockDatabaseObject(RelationRelationId, relid, 0, ExclusiveLock);
	n = nvm_repair_count_for(desc);
	if (n == 0)
	{
		/* another backend repaired it meanwhile */
		UnlockDatabaseObject(RelationRelationId, relid, 0, ExclusiveLock);
		return;
	}
	versions = palloc(n * sizeof(uint64));
	n = nvm_repair_versions_for(desc, versions, n);

	repairing = true;
	PG_TRY();
	{
		inserted = repair_entries(rel, table, versions, n);
	}
	PG_FINALLY();
	{
		repairing = false;
	}
	PG_END_TRY();

	/* the repairs are durable before the list forgets them */
	if (inserted > 0 && XactLastRecEnd != InvalidXLogRecPtr)
		XLogFlush(XactLastRecEnd);
	(void) nvm_repair_done(desc);
	UnlockDatabaseObject(RelationRelationId, relid, 0, ExclusiveLock);
	pfree(versions);

	ereport(LOG,
			(errmsg("nvm: re-inserted %llu index entries of table \"%s\" after a crash",
					(unsigned long long) inserted, RelationGetRelationName(rel)),
			 errdetail("%llu index roots of transactions committed without a WAL flush were checked.",
					   (unsigned long long) n)));
}

/* ---------------------------------------------------------------------
 * The repair at the start of the server (see the file header)
 * ---------------------------------------------------------------------
 */

PGDLLEXPORT void nvm_repair_worker_main(Datum arg);

/* off_cmp orders pool offsets. */
static int
off_cmp(const void *a, const void *b)
{
	nvm_off		x = *(const nvm_off *) a;
	nvm_off		y = *(const nvm_off *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * tables_to_repair returns the sorted offsets of the table descriptors the
 * repair list names (repaired entries left out), and their number in *n.
 */
static nvm_off *
tables_to_repair(int *n)
{
	NvmIndexRepairList *list = nvm_repair_list();
	nvm_off    *descs;
	int			k = 0;

	*n = 0;
	if (list == NULL)
		return NULL;
	descs = palloc(sizeof(nvm_off) * Max(list->count, 1));
	for (uint64 i = 0; i < list->count; i++)
	{
		nvm_off		d = atomic_load(&list->entries[i].table);

		if (d != 0)
			descs[k++] = d;
	}
	qsort(descs, k, sizeof(nvm_off), off_cmp);
	for (int i = 0; i < k; i++)
		if (*n == 0 || descs[*n - 1] != descs[i])
			descs[(*n)++] = descs[i];
	return descs;
}

/*
 * each_table_to_repair calls visit with the key and descriptor of every
 * table of the directory that the repair list names.
 */
static void
each_table_to_repair(void (*visit) (const NvmTableKey *key, nvm_off desc, void *arg), void *arg)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		ndir = nvm_table_dir_count();
	int			n;
	nvm_off    *descs = tables_to_repair(&n);

	for (size_t i = 0; i < ndir && n > 0; i++)
	{
		nvm_off		d = atomic_load(&dir[i].desc);

		if (d != 0 && bsearch(&d, descs, n, sizeof(nvm_off), off_cmp) != NULL)
			visit(&((NvmTableDesc *) nvm_ptr(d))->key, d, arg);
	}
	if (descs != NULL)
		pfree(descs);
}

/* note_database adds the table's database to the list at arg, once. */
static void
note_database(const NvmTableKey *key, nvm_off desc, void *arg)
{
	List	  **dbs = (List **) arg;

	*dbs = list_append_unique_oid(*dbs, key->db);
}

/* count_tables counts the tables of each_table_to_repair. */
static void
count_tables(const NvmTableKey *key, nvm_off desc, void *arg)
{
	(*(int *) arg)++;
}

/*
 * repair_database runs the worker that repairs the tables of database db
 * and waits for it; false if it could not be started.
 */
static bool
repair_database(Oid db)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "nvmam");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "nvm_repair_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "nvm index repair of database %u", db);
	snprintf(worker.bgw_type, BGW_MAXLEN, "nvm index repair");
	worker.bgw_main_arg = ObjectIdGetDatum(db);
	worker.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		return false;
	(void) WaitForBackgroundWorkerShutdown(handle);
	pfree(handle);
	return true;
}

/*
 * nvm_repair_at_start puts back, before the rows a crash may have lost the
 * COMMIT records of are logged again, the index entries of every table in
 * the repair list, one worker per database (see the file header).  Tables
 * it leaves are repaired at their first use, and said so.
 */
void
nvm_repair_at_start(void)
{
	List	   *dbs = NIL;
	ListCell   *lc;
	int			left = 0;
	bool		started = true;

	if (nvm_repair_list() == NULL)
		return;
	each_table_to_repair(note_database, &dbs);
	foreach(lc, dbs)
	{
		/* storage of a database dropped since: nothing reads it */
		if (IsTransactionState() &&
			!SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(lfirst_oid(lc))))
			continue;
		if (!repair_database(lfirst_oid(lc)))
		{
			started = false;
			break;
		}
	}
	list_free(dbs);
	each_table_to_repair(count_tables, &left);
	if (left > 0)
		ereport(WARNING,
				(errmsg("nvm: index entries of %d nvm tables that a crash lost are put back at the first use of each table",
						left),
				 errdetail(started ? "The tables or their indexes were locked, or their database was not reachable." :
						   "No background worker could be started to put them back now (max_worker_processes)."),
				 errhint("Until a table is used on this server, index scans of it on physical standbys miss the rows of its last commits before the crash.")));
}

/*
 * repair_one repairs the table of key (descriptor desc) if it belongs to
 * this database and its relation and indexes can be locked at once.
 */
static void
repair_one(const NvmTableKey *key, nvm_off desc, void *arg)
{
	Oid			relid;
	Relation	rel;
	List	   *indexoids;
	ListCell   *lc;
	bool		locked = true;
	NvmTable	table;

	if (key->db != MyDatabaseId || NVM_KEY_KIND(key) == NVM_KIND_TEMP)
		return;
	StartTransactionCommand();
	relid = RelidByRelfilenode(key->spc, key->rel);
	rel = OidIsValid(relid) && ConditionalLockRelationOid(relid, AccessShareLock) ?
		try_relation_open(relid, NoLock) : NULL;
	if (rel != NULL)
	{
		indexoids = RelationGetIndexList(rel);
		foreach(lc, indexoids)
			locked = locked && ConditionalLockRelationOid(lfirst_oid(lc), RowExclusiveLock);
		if (locked && ConditionalLockDatabaseObject(RelationRelationId, relid, 0, ExclusiveLock))
		{
			table.desc = nvm_ptr(desc);
			nvm_repair_table(rel, &table);
		}
		list_free(indexoids);
		relation_close(rel, NoLock);
	}
	CommitTransactionCommand();
}

/*
 * nvm_repair_worker_main is the worker of nvm_repair_at_start: connected to
 * the database of its argument, it repairs every table of that database
 * in the repair list, each in a transaction of its own, while the process
 * that started it holds the binding's resync (so this process may use nvm
 * rows before the resync is done: nvm_binding_help_resync).
 */
void
nvm_repair_worker_main(Datum arg)
{
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(arg), InvalidOid,
											  BGWORKER_BYPASS_ALLOWCONN);
	pgstat_report_appname("nvm index repair");
	nvm_binding_help_resync();
	each_table_to_repair(repair_one, NULL);
}
