/*
 * test_crash.c
 *	  Crash-consistency test of the storage core with the crash simulator.
 *
 * A random workload of small transactions (inserts, updates, deletes,
 * aborts, rolled-back subtransactions, new tables) runs against a pool
 * whose persists go through the simulator.  Before every drain the
 * simulator builds crash images (durable state plus a random subset of the
 * dirty cache lines) and this file's checker runs recovery on each and
 * verifies:
 *	 - every acknowledged commit is there and nothing uncommitted is visible
 *	   (the transaction whose commit was in progress may be either, but
 *	   atomically);
 *	 - no key is live twice;
 *	 - chains are intact: every reachable version is an allocated block, its
 *	   version slot points back at it and it names its record;
 *	 - the table directory points only at valid descriptors;
 *	 - after recovery the allocator hands out no block that is still in use
 *	   (a new committed insert leaves every old row unchanged);
 *	 - a transaction in doubt (marked for an external log, as PostgreSQL's
 *	   WAL) ends as the external log decided once it is resolved;
 *	 - the free lists of record and version numbers name only free entries;
 *	 - every live row whose index entries the external log may have lost
 *	   (log-free commits log their index roots in the pool, indexlog.h, and
 *	   the simulated log is durable only up to its last flush) is in the
 *	   repair list recovery builds from the index log.
 * Garbage collection runs throughout: every update prunes its chain (no
 * snapshot is pinned, so everything below the newest committed version
 * goes), and every tenth transaction is followed by a VACUUM-like pass that
 * retires deleted records, finishes them and gives back dead index roots,
 * so the crash points include every step of collection.  Every fortieth
 * transaction the table is cloned under a new key and the original dropped,
 * as ALTER TABLE ... SET TABLESPACE does, so they include every step of a
 * clone too.
 *
 * Usage: test_crash [transactions [seed [mcsi|n2db]]]; without a mode both
 * modes run.  CI runs the default budget; a longer run is e.g.
 * `build/test_crash 5000 7`.
 * Exit code non-zero and "N passed, N failed" as the last line.
 */
#include "alloc.h"
#include "core.h"
#include "crashsim.h"
#include "gc.h"
#include "indexlog.h"
#include "mcsi.h"
#include "persist.h"
#include "pool.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEYS 48

typedef struct Row
{
	uint32_t	key;
	uint32_t	value;
	char		pad[56];
} Row;

typedef struct Oracle
{
	int64_t		committed[KEYS];	/* value, -1 = absent */
	uint64_t	committed_vno[KEYS];
	uint64_t	committed_root[KEYS];	/* index root of the committed version */
	uint64_t	committed_lsn[KEYS];	/* external log position of its index entries */
	uint64_t	pending_root[KEYS];
	int64_t		pending[KEYS];	/* -2 untouched, -1 deleted, else value */
	int			commit_in_progress;
	int			marked;			/* the committing transaction is in doubt */
	int			ext_committed;	/* ... and the external log has committed it */
	uint64_t	ext_xid;
	uint32_t	tables_created;
	/* the external log of index entries: written up to lsn, durable up to flushed */
	uint64_t	lsn;
	uint64_t	flushed;
	uint64_t	pending_lsn;	/* position of the committing transaction's entries */
} Oracle;

static Oracle oracle;
static NvmTableKey main_key = {1663, 1, 5000, 0};
static char pool_path[256];

static const char *
check_chain(NvmTable *t, uint64_t r)
{
	for (NvmVersion *v = nvm_ptr(nvm_record_head(t, r)); v; v = nvm_ptr(v->prev))
	{
		nvm_off		off = nvm_off_of(v);
		uint64_t	hdr = *(uint64_t *) (nvm_pool_base + off - NVM_BLOCK_HEADER_SIZE);
		NvmVersion *bynum = nvm_version_by_no(t, v->version_no);

		if (!(hdr & NVM_BLOCK_ALLOCATED))
			return "reachable version is not an allocated block";
		if (bynum != v)
			return "version slot does not point at its version";
		if (v->record_no != r)
			return "version names another record";
	}
	return NULL;
}

/* a free list is well formed: every entry it names is a free entry */
static const char *
check_free_list(NvmSegArray *arr, _Atomic uint64_t *list, uint64_t limit)
{
	uint64_t	n = atomic_load(list) & NVM_FREE_NUMBER_MASK;
	uint64_t	steps = 0;

	while (n != 0)
	{
		_Atomic uint64_t *e = nvm_segarray_slot(arr, n, false);

		if (n >= limit || e == NULL || (atomic_load(e) & NVM_TAG_MASK) != NVM_TAG_FREE)
			return "a free list names an entry that is not free";
		if (++steps > limit)
			return "a free list has a cycle";
		n = atomic_load(e) >> 3;
	}
	return NULL;
}

/* scan: read the visible rows into got[]; NULL or an error */
static const char *
scan_rows(NvmTable *t, NvmTxn *txn, int64_t *got)
{
	static NvmSnapshot snap;
	NvmView		view;

	nvm_snapshot_take(&snap);
	view.kind = NVM_VIEW_SNAPSHOT;
	view.snap = &snap;
	view.my_txid = txn->txid;
	view.curcid = 0;
	for (int k = 0; k < KEYS; k++)
		got[k] = -1;
	for (uint64_t r = 1; r < nvm_table_record_limit(t); r++)
	{
		NvmVersion *v = nvm_chain_visible(t, r, &view);
		const char *err = check_chain(t, r);

		if (err)
			return err;
		if (v && !nvm_version_is_tombstone(v))
		{
			const Row  *row = (const Row *) v->data;

			if (row->key >= KEYS)
				continue;		/* rows the checker itself added */
			if (got[row->key] != -1)
				return "a key is live twice";
			got[row->key] = row->value;
		}
	}
	return NULL;
}

/* the external log's answer, as it was at the crash */
static int
oracle_resolver(uint64_t xid)
{
	return xid == oracle.ext_xid && oracle.ext_committed ? 1 : 0;
}

static const char *
check_recovered(void *arg)
{
	NvmTable	t;
	NvmTxn		txn;
	int			slot;
	int64_t		got[KEYS],
				again[KEYS];
	const char *err;
	int			match_committed = 1,
				match_new = 1;
	NvmTableDirEntry *dir = nvm_table_dir();

	(void) arg;
	for (size_t i = 0; i < nvm_table_dir_count(); i++)
	{
		nvm_off		d = atomic_load(&dir[i].desc);

		if (d && ((NvmTableDesc *) nvm_ptr(d))->magic != NVM_TABLE_MAGIC)
			return "table directory points at an invalid descriptor";
	}
	if (!nvm_table_open(&main_key, &t))
		return "table lost";
	if ((err = check_free_list(&t.desc->records, &t.desc->free_records, nvm_table_record_limit(&t))) != NULL ||
		(err = check_free_list(&t.desc->versions, &t.desc->free_versions, nvm_table_version_limit(&t))) != NULL)
		return err;
	if (nvm_indoubt_resolve_all(oracle_resolver) != 0)
		return "an in-doubt transaction could not be resolved";
	slot = nvm_slot_acquire(4242);
	nvm_txn_init(&txn, slot);
	if ((err = scan_rows(&t, &txn, got)) != NULL)
		return err;
	for (int k = 0; k < KEYS; k++)
	{
		int64_t		after = oracle.pending[k] == -2 ? oracle.committed[k] : oracle.pending[k];

		if (got[k] != oracle.committed[k])
			match_committed = 0;
		if (got[k] != after)
			match_new = 0;
	}
	if (oracle.marked && oracle.ext_committed)
	{
		/* the external log committed it: so must we */
		if (!match_new)
			return "an in-doubt transaction committed externally is lost";
	}
	else if (!match_committed && !(oracle.commit_in_progress && match_new))
		return match_new ? "an uncommitted transaction is visible" : "an acknowledged commit is lost";

	/*
	 * Index entries: every live row's index root whose entries the external
	 * log may have lost (written past the durable position) is in the
	 * repair list that recovery builds from the index log.
	 */
	if (nvm_indexlog_recover(false) < 0)
		return "no room for the repair list";
	for (int k = 0; k < KEYS; k++)
	{
		bool		is_new = match_new && !match_committed && oracle.pending[k] != -2 &&
			oracle.pending_root[k] != oracle.committed_root[k];
		uint64_t	root = is_new ? oracle.pending_root[k] : oracle.committed_root[k];
		uint64_t	lsn = is_new ? oracle.pending_lsn : oracle.committed_lsn[k];

		if (got[k] < 0 || lsn <= oracle.flushed)
			continue;
		if (!nvm_repair_names(nvm_off_of(t.desc), root))
			return "a committed row whose index entries may be lost is not in the repair list";
	}

	/* the allocator must not hand out blocks that are still in use */
	{
		Row			row;
		uint64_t	n;

		memset(&row, 0x5a, sizeof(row));
		row.key = KEYS + 1;
		if (nvm_record_insert(&t, &txn, 1, 0, &row, sizeof(row), &n) != NVM_WRITE_OK)
			return "insert after recovery failed";
		nvm_txn_commit(&txn);
		if ((err = scan_rows(&t, &txn, again)) != NULL)
			return err;
		if (memcmp(got, again, sizeof(got)) != 0)
			return "a write after recovery damaged existing rows";
	}
	nvm_slot_release(slot);
	return NULL;
}

static unsigned rng_state;

static unsigned
rnd(unsigned n)
{
	return (unsigned) (rand_r(&rng_state) % n);
}

/* one random transaction; returns nothing, updates the oracle */
static void
run_transaction(NvmTable *t, NvmTxn *txn)
{
	uint64_t	vno[KEYS];
	int			ops = 1 + (int) rnd(3);
	int			sub = rnd(10) == 0;
	int64_t		saved_pending[KEYS];
	uint64_t	saved_vno[KEYS];
	uint64_t	saved_root[KEYS];
	NvmIndexLogEntry roots[64];
	int			nroots = 0;
	uint32_t	cid = 0;

	for (int k = 0; k < KEYS; k++)
	{
		oracle.pending[k] = -2;
		oracle.pending_root[k] = oracle.committed_root[k];
		vno[k] = oracle.committed_vno[k];
	}
	for (int i = 0; i < ops + (sub ? 2 : 0); i++)
	{
		int			level = 1;
		unsigned	key = rnd(KEYS);
		int64_t		cur = oracle.pending[key] != -2 ? oracle.pending[key] : oracle.committed[key];
		Row			row;
		uint64_t	n;
		uint64_t	new_root = 0;
		NvmConflict cf;
		NvmWriteResult res;

		if (sub && i == ops)
		{
			memcpy(saved_pending, oracle.pending, sizeof(saved_pending));
			memcpy(saved_vno, vno, sizeof(saved_vno));
			memcpy(saved_root, oracle.pending_root, sizeof(saved_root));
		}
		if (sub && i >= ops)
			level = 2;
		memset(&row, 0, sizeof(row));
		row.key = key;
		row.value = rnd(1000000);
		if (cur < 0)
		{
			res = nvm_record_insert(t, txn, level, cid, &row, sizeof(row), &n);
			if (res == NVM_WRITE_OK)
			{
				oracle.pending[key] = row.value;
				oracle.pending_root[key] = n;
				vno[key] = n;
				new_root = n;
			}
		}
		else if (rnd(3) == 0)
		{
			res = nvm_record_update(t, txn, level, cid, vno[key], NULL, 0, false, &n, &cf);
			if (res == NVM_WRITE_OK)
				oracle.pending[key] = -1;
		}
		else
		{
			bool		new_run = rnd(2);

			res = nvm_record_update(t, txn, level, cid, vno[key], &row, sizeof(row), new_run, &n, &cf);
			if (res == NVM_WRITE_OK)
			{
				oracle.pending[key] = row.value;
				if (new_run)
					oracle.pending_root[key] = new_root = n;
				vno[key] = n;
			}
		}
		if (res != NVM_WRITE_OK)
		{
			fprintf(stderr, "unexpected write result %d\n", res);
			exit(2);
		}
		if (new_root != 0 && nroots < 64)
		{
			/* its index entries go to the external log */
			roots[nroots].table = nvm_off_of(t->desc);
			roots[nroots].version_no = new_root;
			nroots++;
			oracle.lsn++;
		}
		cid++;
	}
	if (sub)
	{
		nvm_txn_subxact_abort(txn, 2);
		memcpy(oracle.pending, saved_pending, sizeof(saved_pending));
		memcpy(vno, saved_vno, sizeof(saved_vno));
		memcpy(oracle.pending_root, saved_root, sizeof(saved_root));
	}
	if (rnd(10) == 0)
	{
		nvm_txn_abort(txn);
		for (int k = 0; k < KEYS; k++)
			oracle.pending[k] = -2;
		return;
	}
	oracle.pending_lsn = oracle.lsn;
	if (rnd(3) == 0)
	{
		/*
		 * commit through an external log too (a tied commit): mark, then
		 * its commit record, whose flush makes the index entries durable
		 */
		oracle.ext_xid++;
		oracle.marked = 1;
		nvm_txn_mark_indoubt(txn, oracle.ext_xid);
		oracle.ext_committed = 1;
		oracle.flushed = oracle.lsn;
	}
	else if (nroots > 0)
	{
		/*
		 * a log-free commit: its index roots go to the slot's ring before
		 * the status; a full ring makes it flush the external log
		 */
		for (int i = 0; i < nroots; i++)
			roots[i].lsn = oracle.lsn;
		if (rnd(8) == 0)
			oracle.flushed = oracle.lsn;	/* the log writer got there first */
		else if (!nvm_indexlog_append((uint32_t) txn->slot, roots, nroots, oracle.flushed))
		{
			oracle.flushed = oracle.lsn;
			if (!nvm_indexlog_append((uint32_t) txn->slot, roots, nroots, oracle.flushed))
			{
				fprintf(stderr, "index log refuses entries after a flush\n");
				exit(2);
			}
		}
	}
	oracle.commit_in_progress = 1;
	nvm_txn_commit(txn);
	oracle.commit_in_progress = 0;
	oracle.marked = 0;
	oracle.ext_committed = 0;
	for (int k = 0; k < KEYS; k++)
	{
		if (oracle.pending[k] != -2)
		{
			oracle.committed[k] = oracle.pending[k];
			oracle.committed_vno[k] = oracle.pending[k] >= 0 ? vno[k] : 0;
			if (oracle.pending_root[k] != oracle.committed_root[k])
			{
				oracle.committed_root[k] = oracle.pending_root[k];
				oracle.committed_lsn[k] = oracle.pending_lsn;
			}
		}
		oracle.pending[k] = -2;
	}
}

/*
 * vacuum_pass does what VACUUM does on a table without indexes: prune every
 * chain, retire dead records, finish retired ones, give back dead roots.
 */
static void
vacuum_pass(NvmTable *t)
{
	static NvmHorizon h;
	NvmGcCounts cnt = {0};
	uint64_t	nrec = nvm_table_record_limit(t);

	/* VACUUM's WAL flush, before numbers are given back (covers every older entry) */
	oracle.flushed = oracle.lsn;
	if (!nvm_gc_horizon(&h))
		return;
	for (uint64_t r = 1; r < nrec; r++)
	{
		nvm_gc_prune_chain(t, r, &h, &cnt);
		if (nvm_gc_record_is_dead(t, r, &h))
			nvm_gc_retire_record(t, r, &h, &cnt);
	}
	if (!nvm_gc_horizon(&h))
		return;
	for (uint64_t r = 1; r < nrec; r++)
		nvm_gc_finish_retired(t, r, &h, &cnt);
	for (uint64_t n = 1; n < nvm_table_version_limit(t); n++)
		if (nvm_gc_number_is_dead_root(t, n, NULL, 0))
			nvm_gc_free_number(t, n, &cnt);
}

/* runs the workload in one mode; returns true if every crash image was consistent */
static bool
run_mode(uint32_t mode, int ntx, unsigned seed)
{
	NvmPoolOptions o = {0};
	char		err[256];
	void	   *shmem;
	NvmTable	t;
	NvmTxn		txn;
	CrashSimOptions so = {0};
	const CrashSimStats *st;
	bool		ok;

	rng_state = seed;
	memset(&oracle, 0, sizeof(oracle));
	unlink(pool_path);
	o.path = pool_path;
	o.create_size = 32 << 20;
	o.system_identifier = 1;
	o.cc_mode = mode;
	o.max_slots = 8;
	o.ring_words = 16;
	/* a table is created every 50 transactions and a clone made every 40 */
	o.max_tables = 32 + (uint32_t) (ntx / 50 + ntx / 40);
	/* a small ring, so that full rings and their flushes are exercised */
	nvm_indexlog_set_capacity(6);
	if (nvm_pool_open(&o, err, sizeof(err)) != NVM_POOL_CREATED)
	{
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	shmem = calloc(1, nvm_core_shmem_size());
	nvm_core_startup(shmem);
	main_key.rel = 5000;
	nvm_table_create(&main_key, 0, &t);
	for (int k = 0; k < KEYS; k++)
	{
		oracle.committed[k] = -1;
		oracle.pending[k] = -2;
	}
	nvm_txn_init(&txn, nvm_slot_acquire(1));
	nvm_gc_set_auto_prune(true, 0);

	so.seed = seed;
	so.images_per_point = 2;
	so.point_stride = 1;
	so.check = check_recovered;
	crashsim_start(&so, shmem);
	for (int i = 0; i < ntx; i++)
	{
		run_transaction(&t, &txn);
		if (i % 10 == 9)
			vacuum_pass(&t);
		if (i % 40 == 30)
		{
			/*
			 * SET TABLESPACE: the table is cloned whole under a new key, the
			 * workload goes on in the clone, and the original is dropped.
			 * Until the clone is installed the checker reads the original
			 * (which the clone must leave intact), afterwards the clone.
			 */
			NvmTableKey old_key = main_key;
			NvmTableKey new_key = main_key;
			NvmTable	copy;

			new_key.rel = 7000 + (uint32_t) i;
			oracle.flushed = oracle.lsn;	/* a tied commit, with a flush */
			if (!nvm_table_clone(&t, &new_key, 0, NULL, 0, &copy))
			{
				fprintf(stderr, "clone failed\n");
				exit(2);
			}
			main_key = new_key;
			t = copy;
			nvm_table_drop(&old_key);
		}
		if (i % 50 == 25)
		{
			/* the table-create path: a new table takes a directory entry */
			NvmTableKey k = {1663, 1, 6000 + (uint32_t) i, 0};
			NvmTable	other;

			nvm_table_create(&k, 0, &other);
		}
	}
	st = crashsim_stats();
	printf("# %s, %d transactions, seed %u: %llu drains, %llu crash points, %llu images, %llu bad\n",
		   mode == NVM_CC_MCSI ? "mcsi" : "n2db", ntx, seed,
		   (unsigned long long) st->drains, (unsigned long long) st->crash_points,
		   (unsigned long long) st->images, (unsigned long long) st->bad_images);
	ok = st->bad_images == 0 && st->images > 0;
	if (ok)
		printf("ok - %s: every crash image recovers to a consistent state\n", mode == NVM_CC_MCSI ? "mcsi" : "n2db");
	else
		printf("not ok - %s: %llu of %llu crash images are inconsistent; first at crash point %llu: %s\n",
			   mode == NVM_CC_MCSI ? "mcsi" : "n2db",
			   (unsigned long long) st->bad_images, (unsigned long long) st->images,
			   (unsigned long long) st->first_error_point, st->first_error ? st->first_error : "no images");
	crashsim_stop();
	nvm_gc_set_auto_prune(false, 0);
	nvm_pool_close();
	unlink(pool_path);
	free(shmem);
	return ok;
}

int
main(int argc, char **argv)
{
	int			ntx = argc > 1 ? atoi(argv[1]) : 150;
	unsigned	seed = argc > 2 ? (unsigned) atoi(argv[2]) : 20261122;
	const char *mode = argc > 3 ? argv[3] : NULL;
	int			failed = 0,
				passed = 0;

	snprintf(pool_path, sizeof(pool_path), "/dev/shm/nvmam_crash_%d", (int) getpid());
	if (!mode || strcmp(mode, "mcsi") == 0)
		run_mode(NVM_CC_MCSI, ntx, seed) ? passed++ : failed++;
	if (!mode || strcmp(mode, "n2db") == 0)
		run_mode(NVM_CC_N2DB, ntx, seed) ? passed++ : failed++;
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
