/*-------------------------------------------------------------------------
 *
 * nvm_rebuild.c
 *	  The load of a rebuilt pool from its checkpoint files, in parallel,
 *	  and the progress of a rebuild (the server log, the nvm_rebuild view).
 *
 * A pool that a crash of the operating system tore or lost is rebuilt
 * (claim/nvm_binding.c, the "restore" states with "rebuild"): a new, empty
 * pool, into which the first record replayed loads the checkpoint files
 * the manifest names (nvm_replay_files.c calls nvm_rebuild_load), and then the
 * WAL from the last checkpoint's redo point, each table's records from its
 * files' position on.
 *
 * The load.  Every table of the manifest is created, with its counters and
 * reserved version numbers, by the startup process; then the rows are
 * loaded by NVM_REBUILD_WORKERS threads of the startup process, each taking
 * parts from a shared list: a table, or for a large one a range of record
 * numbers (cut from its base file's block index, nvm_ckptfile_split).  A
 * part is read with a cursor over the table's files (its base and deltas
 * merged by record number, redo/nvm_ckptfile.h), tombstones skipped, and
 * each row becomes the only version of its record, created by the startup
 * process's replay transaction, inserted, committed and inlined (core
 * replica.h, nvm_replica_load_write and _link: versions of a batch drained
 * before they are linked).  The threads call only the core and the
 * reader, which use neither palloc nor ereport; pool growth's log line is
 * left out while they run, and the startup process reports the rest.
 *
 * Visibility: the rows count once the replay transaction commits (after
 * the load, the caller), as its snapshot test says; before that no query
 * can run (a rebuild serves nothing until its replay is consistent).
 *
 * A crash during the load: the next start of the server begins the rebuild
 * again, from a new pool (claim/nvm_binding.c); a crash-restart, which
 * keeps the pool, drops the tables the load had begun before it loads
 * again (nvm_replay_files.c): the load's transaction was aborted by the
 * crash.
 * A test's crash midway (nvm.debug_crash_point = rebuild_mid_load) stops
 * the threads once half the parts are loaded, then stops the server.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "alloc.h"
#include "grow.h"
#include "persist.h"
#include "replica.h"
#include "store.h"

#include "nvm_settings.h"
#include "redo/nvm_rebuild.h"

/* Rows loaded between two drains, at most. */
#define LOAD_BATCH		1024

/* Parts per worker a large table is cut into. */
#define PARTS_PER_WORKER	4

/* How often the startup process logs the progress of a load. */
#define PROGRESS_LOG_MS		5000

static NvmRebuildProgress *progress = NULL;

Size
nvm_rebuild_shmem_size(void)
{
	return sizeof(NvmRebuildProgress);
}

void
nvm_rebuild_shmem_startup(void)
{
	bool		found;

	progress = ShmemInitStruct("nvm rebuild", sizeof(NvmRebuildProgress), &found);
	if (!found)
	{
		pg_atomic_init_u32(&progress->state, NVM_REBUILD_NONE);
		pg_atomic_init_u32(&progress->workers, 0);
		pg_atomic_init_u64(&progress->tables, 0);
		pg_atomic_init_u64(&progress->parts, 0);
		pg_atomic_init_u64(&progress->parts_done, 0);
		pg_atomic_init_u64(&progress->rows, 0);
		pg_atomic_init_u64(&progress->bytes, 0);
		pg_atomic_init_u64(&progress->files_lsn, 0);
		pg_atomic_init_u64(&progress->replay_end, 0);
		pg_atomic_init_u64(&progress->started, 0);
		pg_atomic_init_u64(&progress->loaded, 0);
		pg_atomic_init_u64(&progress->finished, 0);
	}
}

NvmRebuildProgress *
nvm_rebuild_progress(void)
{
	return progress;
}

/* One part of the load: records [lo, hi) of a table. */
typedef struct LoadPart
{
	const NvmCkptTable *mt;
	NvmTable	t;
	uint64		lo;
	uint64		hi;
} LoadPart;

/* What the threads share. */
typedef struct LoadShared
{
	LoadPart   *parts;
	int			nparts;
	int			stop_at;		/* parts taken at most (a test's crash midway) */
	_Atomic int next;			/* the next part to take */
	_Atomic int failed;			/* a thread failed: the others stop */
	uint64		txid;			/* the creator of every row */
	int			slot;			/* tags the threads' allocation caches */
	NvmCkptError err;			/* the first failure */
	pthread_mutex_t err_lock;
} LoadShared;

static void
load_fail(LoadShared *ls, const NvmCkptError *err)
{
	pthread_mutex_lock(&ls->err_lock);
	if (!atomic_load(&ls->failed))
		ls->err = *err;
	atomic_store(&ls->failed, 1);
	pthread_mutex_unlock(&ls->err_lock);
}

/*
 * link_batch drains the batch's versions, then makes them reachable, and
 * adds them and the bytes they were read from to the progress (once a
 * batch: the threads share its counters).
 */
static void
link_batch(LoadPart *p, nvm_off *batch, int n, uint64 *bytes)
{
	nvm_drain();
	for (int i = 0; i < n; i++)
		nvm_replica_load_link(&p->t, batch[i]);
	pg_atomic_fetch_add_u64(&progress->rows, n);
	pg_atomic_fetch_add_u64(&progress->bytes, *bytes);
	*bytes = 0;
}

/* load_part loads one part; false if it failed (the failure is noted). */
static bool
load_part(LoadShared *ls, LoadPart *p)
{
	NvmCkptError err;
	NvmCkptCursor *c = nvm_ckptcursor_open(NVM_CHECKPOINT_DIR, p->mt, p->lo, p->hi, &err);
	nvm_off		batch[LOAD_BATCH];
	int			n = 0;
	uint64		bytes = 0;
	xl_nvm_version xv;
	const char *data;

	if (c == NULL)
	{
		load_fail(ls, &err);
		return false;
	}
	while (!atomic_load(&ls->failed) && nvm_ckptcursor_next(c, &xv, &data, &err))
	{
		NvmReplicaVersion rv;
		bool		present;
		nvm_off		off;

		if (xv.kind & NVM_VINFO_TOMBSTONE)
			continue;
		rv.record_no = xv.record_no;
		rv.version_no = xv.version_no;
		rv.index_root = xv.index_root;
		rv.kind = xv.kind;
		rv.data = data;
		rv.len = xv.data_len;
		off = nvm_replica_load_write(&p->t, ls->txid, &rv, &present);
		bytes += sizeof(xv) + xv.data_len;
		if (off == 0)
		{
			if (present)
				continue;
			nvm_ckptcursor_close(c);
			memset(&err, 0, sizeof(err));
			snprintf(err.msg, sizeof(err.msg),
					 "the nvm pool has no room for the rows of the checkpoint files");
			load_fail(ls, &err);
			return false;
		}
		batch[n++] = off;
		if (n == LOAD_BATCH)
		{
			link_batch(p, batch, n, &bytes);
			n = 0;
		}
	}
	if (err.msg[0] != '\0')
	{
		nvm_ckptcursor_close(c);
		load_fail(ls, &err);
		return false;
	}
	if (n > 0)
		link_batch(p, batch, n, &bytes);
	nvm_ckptcursor_close(c);
	return true;
}

/* load_worker is a thread of the load: parts until there are none. */
static void *
load_worker(void *arg)
{
	LoadShared *ls = (LoadShared *) arg;

	nvm_alloc_cache_bind(ls->slot);
	for (;;)
	{
		int			i = atomic_fetch_add(&ls->next, 1);

		if (i >= ls->stop_at || atomic_load(&ls->failed))
			break;
		if (!load_part(ls, &ls->parts[i]))
			break;
		pg_atomic_fetch_add_u64(&progress->parts_done, 1);
	}
	nvm_drain();
	nvm_alloc_cache_unbind(ls->slot);
	return NULL;
}

/* open_or_create opens key's table in the new pool, creating it. */
static NvmTable
open_or_create(const NvmTableKey *key)
{
	NvmTable	t;

	if (!nvm_table_open(key, &t) && !nvm_table_create(key, 0, &t))
		ereport(FATAL,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("could not rebuild nvm table %u/%u/%u: the nvm pool is full",
						key->spc, key->db, key->rel),
				 errhint("Give the pool more room (nvm.pool_max_size).")));
	return t;
}

/* plan_parts lists the parts of the load: a table, or ranges of a large one. */
static LoadPart *
plan_parts(const NvmCkptManifest *m, int workers, int *nparts)
{
	int			cap = Max(m->ntables * (PARTS_PER_WORKER * workers + 1), 1);
	LoadPart   *parts = palloc0(sizeof(LoadPart) * cap);
	uint64	   *cuts = palloc(sizeof(uint64) * PARTS_PER_WORKER * workers);
	int			n = 0;

	for (uint32 i = 0; i < m->ntables; i++)
	{
		const NvmCkptTable *mt = &m->tables[i];
		NvmTable	t = open_or_create(&mt->key);
		NvmCkptError err;
		int			ncuts;
		uint64		lo = 0;

		nvm_replica_raise_counters(&t, mt->next_record, Max(mt->next_version, mt->reserved));
		nvm_table_raise_redo_reserved(&t, mt->reserved);
		ncuts = nvm_ckptfile_split(NVM_CHECKPOINT_DIR, mt, cuts, PARTS_PER_WORKER * workers, &err);
		if (ncuts < 0)
			nvm_ckptfile_report(FATAL, "could not rebuild the nvm pool", &err,
								"The nvm pool cannot be rebuilt without it: restore the cluster from a base backup.");
		for (int k = 0; k <= ncuts; k++)
		{
			parts[n].mt = mt;
			parts[n].t = t;
			parts[n].lo = lo;
			parts[n].hi = k < ncuts ? cuts[k] : PG_UINT64_MAX;
			lo = parts[n].hi;
			n++;
		}
	}
	pfree(cuts);
	*nparts = n;
	return parts;
}

void
nvm_rebuild_load(const NvmCkptManifest *m, NvmTxn *txn, int slot)
{
	LoadShared *ls = palloc0(sizeof(LoadShared));
	pthread_t	threads[NVM_REBUILD_WORKERS];
	int			started = 0;
	NvmGrowHook hook = nvm_pool_grow_hook();
	TimestampTz last_log = GetCurrentTimestamp();

	pg_atomic_write_u32(&progress->state, NVM_REBUILD_LOADING);
	pg_atomic_write_u64(&progress->started, (uint64) GetCurrentTimestamp());
	pg_atomic_write_u64(&progress->tables, m->ntables);
	pg_atomic_write_u64(&progress->files_lsn, m->lsn);
	if (nvm_txn_begin_write(txn) == NVM_INVALID_TXID)
		ereport(FATAL,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("could not rebuild the nvm pool: it has no room for a transaction")));
	ls->parts = plan_parts(m, NVM_REBUILD_WORKERS, &ls->nparts);
	/* a test's crash midway: the threads stop with half the parts loaded */
	ls->stop_at = nvm_debug_crash_point == NVM_CRASH_REBUILD_MID_LOAD && ls->nparts > 1 ?
		ls->nparts / 2 : ls->nparts;
	ls->txid = txn->txid;
	ls->slot = slot;
	pthread_mutex_init(&ls->err_lock, NULL);
	pg_atomic_write_u64(&progress->parts, ls->nparts);
	pg_atomic_write_u32(&progress->workers, NVM_REBUILD_WORKERS);

	/* growth's log line is the server's: not from the threads */
	nvm_pool_set_grow_hook(NULL);
	for (int i = 0; i < NVM_REBUILD_WORKERS; i++)
	{
		if (pthread_create(&threads[i], NULL, load_worker, ls) != 0)
			break;
		started++;
	}
	if (started == 0)
		load_worker(ls);
	for (;;)
	{
		uint64		done = pg_atomic_read_u64(&progress->parts_done);

		if (done >= (uint64) ls->stop_at || atomic_load(&ls->failed))
			break;
		pg_usleep(20000L);
		if (TimestampDifferenceExceeds(last_log, GetCurrentTimestamp(), PROGRESS_LOG_MS))
		{
			last_log = GetCurrentTimestamp();
			ereport(LOG,
					(errmsg("nvm: rebuilding the pool: %llu of %d parts of %u tables loaded, %llu rows, %llu MB read",
							(unsigned long long) done, ls->nparts, m->ntables,
							(unsigned long long) pg_atomic_read_u64(&progress->rows),
							(unsigned long long) (pg_atomic_read_u64(&progress->bytes) >> 20))));
		}
	}
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	nvm_pool_set_grow_hook(hook);
	if (ls->stop_at < ls->nparts && !atomic_load(&ls->failed))
		nvm_crash_here(NVM_CRASH_REBUILD_MID_LOAD, "with half the nvm checkpoint files loaded");
	nvm_drain();
	if (atomic_load(&ls->failed))
		nvm_ckptfile_report(FATAL, "could not rebuild the nvm pool from its checkpoint files", &ls->err,
							"The nvm pool cannot be rebuilt without them: restore the cluster from a base backup.");
	pg_atomic_write_u64(&progress->loaded, (uint64) GetCurrentTimestamp());
	pg_atomic_write_u32(&progress->state, NVM_REBUILD_REPLAYING);
	pthread_mutex_destroy(&ls->err_lock);
	pfree(ls->parts);
	pfree(ls);
}

/*
 * nvm_rebuild_note_wal_end notes where the WAL a rebuild replays ends, as
 * far as pg_wal tells (the end of its last segment), for the WAL left to
 * replay in the nvm_rebuild view.
 */
void
nvm_rebuild_note_wal_end(void)
{
	DIR		   *d = AllocateDir(XLOGDIR);
	struct dirent *de;
	XLogSegNo	last = 0;

	if (d == NULL)
		return;
	while ((de = ReadDir(d, XLOGDIR)) != NULL)
	{
		TimeLineID	tli;
		XLogSegNo	segno;

		if (!IsXLogFileName(de->d_name))
			continue;
		XLogFromFileName(de->d_name, &tli, &segno, wal_segment_size);
		if (segno > last)
			last = segno;
	}
	FreeDir(d);
	if (last > 0)
		pg_atomic_write_u64(&progress->replay_end, (last + 1) * (uint64) wal_segment_size);
}

void
nvm_rebuild_replay_done(void)
{
	if (progress == NULL || pg_atomic_read_u32(&progress->state) != NVM_REBUILD_REPLAYING)
		return;
	pg_atomic_write_u64(&progress->finished, (uint64) GetCurrentTimestamp());
	pg_atomic_write_u32(&progress->state, NVM_REBUILD_DONE);
}
