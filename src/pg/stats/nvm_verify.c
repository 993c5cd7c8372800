/*-------------------------------------------------------------------------
 *
 * nvm_verify.c
 *	  SQL-callable integrity checks, as amcheck's verify_heapam is for heap:
 *	  nvm_verify_table(regclass) checks one nvm table, nvm_verify_pool() the
 *	  whole pool; both return one row per problem the core's checker
 *	  (src/core/verify.h) finds, and no row when there is none.  Also
 *	  nvm_debug_layout(regclass), which shows where a table's structures
 *	  are in the pool file, for tests that damage a pool on purpose.
 *
 * Locks.  The checker reads the pool without locks and is exact only when
 * what it reads does not change meanwhile:
 *	 - nvm_verify_table takes a ShareLock on the table, as amcheck's
 *	   bt_index_parent_check does on its heap: it waits for running
 *	   INSERT, UPDATE, DELETE, COPY and VACUUM of the table and keeps new
 *	   ones waiting until it ends (readers go on).  Every change of a
 *	   table's structure in the pool is made by one of those (writers
 *	   prune the chains they write, deferred pruning runs in a writer of
 *	   the same table, VACUUM retires and frees) or by DDL that takes an
 *	   ACCESS EXCLUSIVE lock.  Statuses still change (commits finish,
 *	   prepared transactions are resolved): the checker allows for that.
 *	 - nvm_verify_pool locks nothing (tables of other databases cannot be
 *	   locked by relfilenode).  The core tells whether any change of the
 *	   pool's blocks began or was under way while it read (alloc.h); then
 *	   what it found is thrown away and it tries again, a few times, and
 *	   fails with an error rather than report a change in flight as damage.
 *	   So it needs a pool that is quiet for as long as one pass takes.  Its
 *	   leaks are exact only while nobody writes (verify.h).
 *
 * Privileges follow amcheck: the extension script revokes EXECUTE on the
 * checks from PUBLIC, and a superuser may grant it to a monitoring role.
 * nvm_debug_layout refuses anybody but a superuser.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#if PG_VERSION_NUM >= 160000
#include "utils/relfilenumbermap.h"
#else
#include "utils/relfilenodemap.h"
#endif

#include "alloc.h"
#include "pool.h"
#include "store.h"
#include "verify.h"

#include "claim/nvm_binding.h"
#include "nvm_routine.h"
#include "nvm_settings.h"
#include "row/nvm_tid.h"
#include "space/nvm_relation.h"

PG_FUNCTION_INFO_V1(nvm_verify_table);
PG_FUNCTION_INFO_V1(nvm_verify_pool);
PG_FUNCTION_INFO_V1(nvm_debug_layout);

/* How often nvm_verify_pool tries to find the pool quiet, and the pause between tries. */
#define NVM_VERIFY_POOL_ATTEMPTS	20
#define NVM_VERIFY_POOL_PAUSE_MS	100

/* A problem reported by the core, kept until the pass is known to be exact. */
typedef struct VerifyRow
{
	NvmVerifyKind kind;
	bool		in_table;
	NvmTableKey table;
	uint64		record_no;
	uint64		version_no;
	nvm_off		offset;
	char	   *message;
} VerifyRow;

typedef struct VerifyState
{
	MemoryContext cxt;			/* the walk's memory and the rows */
	List	   *rows;
} VerifyState;

static void
verify_collect(const NvmVerifyProblem *p, void *arg)
{
	VerifyState *state = arg;
	MemoryContext old = MemoryContextSwitchTo(state->cxt);
	VerifyRow  *row = palloc(sizeof(VerifyRow));

	row->kind = p->kind;
	row->in_table = p->in_table;
	row->table = p->table;
	row->record_no = p->record_no;
	row->version_no = p->version_no;
	row->offset = p->offset;
	row->message = pstrdup(p->message);
	state->rows = lappend(state->rows, row);
	MemoryContextSwitchTo(old);
}

static void
verify_progress(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

/* the walk's memory: NULL when there is none (the core stops and says so) */
static void *
verify_alloc(size_t size, void *arg)
{
	VerifyState *state = arg;

	return MemoryContextAllocExtended(state->cxt, size, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
verify_free(void *ptr, void *arg)
{
	pfree(ptr);
}

/*
 * run_check runs the table check (key != NULL) or the pool check into
 * state->rows, which an interrupt or an error frees with state->cxt.
 */
static void
run_check(VerifyState *state, const NvmTableKey *key, bool leaks, NvmVerifyResult *result)
{
	NvmVerifyOptions opts;

	MemoryContextReset(state->cxt);
	state->rows = NIL;
	memset(&opts, 0, sizeof(opts));
	opts.report = verify_collect;
	opts.arg = state;
	opts.leaks = leaks;
	opts.progress = verify_progress;
	opts.alloc = verify_alloc;
	opts.free = verify_free;
	if (key != NULL)
		nvm_verify_check_table(key, &opts, result);
	else
		nvm_verify_check_pool(&opts, result);
	if (result->out_of_memory)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("The check of nvm pool \"%s\" could not allocate the memory it needs.",
						   nvm_pool_path_resolved)));
}

/* put_number stores n as column i, an int8, or null for 0 (none) */
static void
put_number(Datum *values, bool *nulls, int i, uint64 n)
{
	if (n == 0 || n > PG_INT64_MAX)
		nulls[i] = true;
	else
		values[i] = Int64GetDatum((int64) n);
}

/*
 * put_common fills the columns every check returns, starting at column i:
 * record_no, version_no, ctid, pool_offset, kind, msg.
 */
static void
put_common(const VerifyRow *row, Datum *values, bool *nulls, int i)
{
	put_number(values, nulls, i, row->record_no);
	put_number(values, nulls, i + 1, row->version_no);
	if (row->version_no >= 1 &&
		(row->version_no - 1) / NVM_TUPLES_PER_BLOCK < MaxBlockNumber)
	{
		ItemPointer tid = palloc(sizeof(ItemPointerData));

		nvm_version_to_tid(row->version_no, tid);
		values[i + 2] = PointerGetDatum(tid);
	}
	else
		nulls[i + 2] = true;
	put_number(values, nulls, i + 3, row->offset);
	values[i + 4] = CStringGetTextDatum(nvm_verify_kind_name(row->kind));
	values[i + 5] = CStringGetTextDatum(row->message);
}

static VerifyState *
verify_state_create(void)
{
	VerifyState *state = palloc0(sizeof(VerifyState));

	state->cxt = AllocSetContextCreate(CurrentMemoryContext, "nvm verify",
									   ALLOCSET_DEFAULT_SIZES);
	return state;
}

/*
 * nvm_verify_table checks one nvm table under a ShareLock and returns a
 * row per problem: its record and version numbers, the version's TID, the
 * offset in the pool where it was found, its kind and a message.  With
 * leaks, space and numbers that a crash leaked are listed too (kind
 * "leak"; they are not damage).
 */
Datum
nvm_verify_table(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	bool		leaks = PG_GETARG_BOOL(1);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	NvmTableKey key;
	VerifyState *state;
	NvmVerifyResult result;
	ListCell   *lc;

	nvm_check_pool_mapped();
	InitMaterializedSRF(fcinfo, 0);
	rel = relation_open(relid, ShareLock);
	if (!nvm_routine_is_nvm(rel->rd_tableam))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an nvm table", RelationGetRelationName(rel)),
				 errhint("nvm_verify_table() checks tables created USING nvm; amcheck's verify_heapam() checks heap tables.")));
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check temporary tables of other sessions")));
	/* a pool this data directory may not use (a copy, a standby) is not read */
	nvm_binding_settle(rel);
	nvm_relation_key(rel, &rel->rd_locator, rel->rd_rel->relpersistence, &key);

	state = verify_state_create();
	run_check(state, &key, leaks, &result);
	foreach(lc, state->rows)
	{
		VerifyRow  *row = lfirst(lc);
		Datum		values[6];
		bool		nulls[6] = {0};

		put_common(row, values, nulls, 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	MemoryContextDelete(state->cxt);
	relation_close(rel, ShareLock);
	return (Datum) 0;
}

/*
 * relation_of returns the relation of this database that a pool table key
 * belongs to, or InvalidOid (another database's, a temporary table's, or
 * storage no relation uses any more).
 */
static Oid
relation_of(const NvmTableKey *key)
{
	if (key->db != MyDatabaseId || NVM_KEY_KIND(key) == NVM_KIND_TEMP)
		return InvalidOid;
	return RelidByRelfilenode(key->spc, key->rel);
}

/*
 * nvm_verify_pool checks the whole pool: every table of every database,
 * the directory, the clock slots, and that no block is reached twice.  It
 * locks nothing and returns its rows only from a pass during which the
 * pool's blocks did not change (see the file header).
 */
Datum
nvm_verify_pool(PG_FUNCTION_ARGS)
{
	bool		leaks = PG_GETARG_BOOL(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	VerifyState *state;
	NvmVerifyResult result;
	ListCell   *lc;
	int			attempt;

	nvm_check_pool_mapped();
	nvm_binding_settle(NULL);
	InitMaterializedSRF(fcinfo, 0);
	state = verify_state_create();
	for (attempt = 1;; attempt++)
	{
		run_check(state, NULL, leaks, &result);
		if (result.exact)
			break;
		if (attempt == NVM_VERIFY_POOL_ATTEMPTS)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("could not check nvm pool \"%s\" while it was changing",
							nvm_pool_path_resolved),
					 errdetail("Blocks of the pool were allocated or freed during each of %d attempts, so that changes in progress could not be told from damage.",
							   NVM_VERIFY_POOL_ATTEMPTS),
					 errhint("Run nvm_verify_pool() while no session writes nvm tables and no VACUUM runs on them, or check tables one at a time with nvm_verify_table(), which locks the table it checks.")));
		pg_usleep(NVM_VERIFY_POOL_PAUSE_MS * 1000L);
		CHECK_FOR_INTERRUPTS();
	}

	foreach(lc, state->rows)
	{
		VerifyRow  *row = lfirst(lc);
		Datum		values[10];
		bool		nulls[10] = {0};
		Oid			relid = InvalidOid;

		if (row->in_table)
		{
			relid = relation_of(&row->table);
			values[1] = ObjectIdGetDatum(row->table.spc);
			values[2] = ObjectIdGetDatum(row->table.db);
			values[3] = ObjectIdGetDatum(row->table.rel);
		}
		else
			nulls[1] = nulls[2] = nulls[3] = true;
		if (OidIsValid(relid))
			values[0] = ObjectIdGetDatum(relid);
		else
			nulls[0] = true;
		put_common(row, values, nulls, 4);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	MemoryContextDelete(state->cxt);
	return (Datum) 0;
}

/* ---------------------------------------------------------------------
 * nvm_debug_layout (tests only)
 * ---------------------------------------------------------------------
 */

typedef struct LayoutOut
{
	ReturnSetInfo *rsinfo;
} LayoutOut;

static void
layout_row(LayoutOut *out, const char *item, uint64 record_no, uint64 version_no,
		   const void *where, uint64 value)
{
	Datum		values[5];
	bool		nulls[5] = {0};

	values[0] = CStringGetTextDatum(item);
	put_number(values, nulls, 1, record_no);
	put_number(values, nulls, 2, version_no);
	values[3] = Int64GetDatum((int64) nvm_off_of(where));
	values[4] = Int64GetDatum((int64) value);
	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, nulls);
}

/*
 * nvm_debug_layout lists where a table's structures are in the pool (whose
 * file offsets are pool offsets): its descriptor and counters and
 * free-list heads, every record head and version slot, and for every
 * version reachable from a head its header's txid, info word, prev link
 * and index root.  Every link is checked with the allocator before it is
 * followed.  For tests that damage a pool on purpose; superusers only.
 */
Datum
nvm_debug_layout(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LayoutOut	out;
	Relation	rel;
	NvmTableKey key;
	NvmTable	table;
	NvmTableDesc *desc;
	uint64		rlimit,
				vlimit;

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser to use nvm_debug_layout()")));
	nvm_check_pool_mapped();
	InitMaterializedSRF(fcinfo, 0);
	out.rsinfo = rsinfo;
	rel = relation_open(relid, ShareLock);
	if (!nvm_routine_is_nvm(rel->rd_tableam))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an nvm table", RelationGetRelationName(rel))));
	nvm_binding_settle(rel);
	nvm_relation_key(rel, &rel->rd_locator, rel->rd_rel->relpersistence, &key);
	if (!nvm_table_open(&key, &table))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("nvm table \"%s\" has no storage in the pool",
						RelationGetRelationName(rel))));
	desc = table.desc;
	rlimit = atomic_load(&desc->next_record);
	vlimit = atomic_load(&desc->next_version);
	layout_row(&out, "descriptor", 0, 0, desc, desc->magic);
	layout_row(&out, "next_record", 0, 0, (const void *) &desc->next_record, rlimit);
	layout_row(&out, "next_version", 0, 0, (const void *) &desc->next_version, vlimit);
	layout_row(&out, "free_records", 0, 0, (const void *) &desc->free_records,
			   atomic_load(&desc->free_records));
	layout_row(&out, "free_versions", 0, 0, (const void *) &desc->free_versions,
			   atomic_load(&desc->free_versions));
	for (uint64 n = 1; n < vlimit; n++)
	{
		_Atomic uint64_t *slot = nvm_version_slot(&table, n);

		CHECK_FOR_INTERRUPTS();
		if (slot != NULL)
			layout_row(&out, "version_slot", 0, n, (const void *) slot, atomic_load(slot));
	}
	for (uint64 r = 1; r < rlimit; r++)
	{
		_Atomic uint64_t *head = nvm_record_head_slot(&table, r);
		nvm_off		x;
		uint64		steps = 0;

		CHECK_FOR_INTERRUPTS();
		if (head == NULL)
			continue;
		x = atomic_load(head);
		layout_row(&out, "record_head", r, 0, (const void *) head, x);
		if ((x & NVM_TAG_MASK) == NVM_TAG_RETIRED)
			x &= ~NVM_TAG_MASK;
		else if ((x & NVM_TAG_MASK) != 0)
			continue;
		while (x != 0 && steps++ < vlimit)
		{
			NvmBlockInfo bi;
			NvmVersion *v;

			if (nvm_alloc_check_block(x, &bi) != NVM_BLOCK_OK || bi.size < sizeof(NvmVersion))
				break;
			v = nvm_ptr(x);
			layout_row(&out, "version", r, v->version_no, v, v->txid);
			layout_row(&out, "version.info", r, v->version_no, (const void *) &v->info,
					   atomic_load(&v->info));
			layout_row(&out, "version.prev", r, v->version_no, &v->prev, v->prev);
			layout_row(&out, "version.index_root", r, v->version_no, &v->index_root,
					   v->index_root);
			x = v->prev;
		}
	}
	relation_close(rel, ShareLock);
	return (Datum) 0;
}
