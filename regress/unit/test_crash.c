/*
 * test_crash.c
 *	  Crash-consistency test of the storage core with the crash simulator.
 *
 * A random workload of small transactions (inserts, batches of inserts as
 * COPY makes them, updates, deletes, aborts, rolled-back subtransactions,
 * new tables, row-lock words) runs
 * against a pool
 * whose persists go through the simulator.  Before every drain the
 * simulator builds crash images (durable state plus a random subset of the
 * dirty cache lines) and this file's checker runs recovery on each and
 * verifies:
 *	 - every acknowledged commit is there and nothing uncommitted is visible
 *	   (the transaction whose commit was in progress may be either, but
 *	   atomically);
 *	 - no key is live twice;
 *	 - the integrity checker (src/core/verify.h) finds no damage in the
 *	   whole pool: the directory names valid descriptors; chains are intact
 *	   (every reachable version is an allocated block, its version slot
 *	   points back at it, it names its record, its status agrees with the
 *	   status store, its index root names its record); the free lists of
 *	   record and version numbers name only free entries; no block is
 *	   reached twice; leaks are allowed;
 *	 - after recovery the allocator hands out no block that is still in use
 *	   (a new committed insert leaves every old row unchanged, and the
 *	   checker, which now also compares every reached block with the
 *	   allocator's rebuilt state, still finds nothing);
 *	 - a transaction in doubt (marked for an external log, as PostgreSQL's
 *	   WAL) ends as the external log decided once it is resolved;
 *	 - every live row whose index entries the external log may have lost
 *	   (log-free commits log their index roots in the pool, indexlog.h, and
 *	   the simulated log is durable only up to its last flush) is in the
 *	   repair list recovery builds from the index log, and the external
 *	   entry a log-free commit logs with them (as a sequence's position)
 *	   is in the external list.
 * Garbage collection runs throughout: every update prunes its chain (no
 * snapshot is pinned, so everything below the newest committed version
 * goes), and every tenth transaction is followed by a VACUUM, in the order
 * the server's runs (vacuum.h), that retires deleted records, finishes them
 * and gives back dead index roots, so the crash points include every step
 * of collection.  Every fortieth
 * transaction the table is cloned under a new key and the original dropped,
 * as ALTER TABLE ... SET TABLESPACE does, so they include every step of a
 * clone too.
 *
 * A second run per mode (without batches of inserts) starts from a small
 * pool that must grow: it takes
 * and gives back "ballast" blocks of a whole chunk between transactions, so
 * that the pool grows by a segment again and again (until its maximum) and
 * the rows move into the segments; the crash points include every step of
 * each growth.  Its checker also asks that every crash image opens (its
 * segments are whole), that every reachable version lies in a chunk the
 * recovered allocator knows, and that every ballast block whose allocation
 * had been made durable is still allocated and intact after the write that
 * follows recovery.
 *
 * Usage: test_crash [transactions [seed [mode [nt]]]], nt: rows written
 * by non-temporal stores (nvm.commit_variant = dbxn); without a mode every
 * mode runs (meson runs one test per mode), MCSI and N2DB with the whole
 * budget, the modes that persist through MCSI's status store with a
 * quarter (unit_crash_budget) but for the growing pool, which needs its
 * half to grow to its maximum.  CI runs the default budget; a longer run
 * is e.g.
 * `build/test_crash 5000 7`.
 * Exit code non-zero and "N passed, N failed" as the last line.
 */
#include "alloc.h"
#include "core.h"
#include "crashsim.h"
#include "gc.h"
#include "indexlog.h"
#include "indoubt.h"
#include "persist.h"
#include "pool.h"
#include "store.h"
#include "txn.h"
#include "unit_pool.h"
#include "vacuum.h"
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEYS 48
#define BALLAST_MAX 24
#define BALLAST_SIZE (700 * 1024)	/* a large block: one whole chunk */

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
	nvm_off		ballast[BALLAST_MAX];	/* durable ballast blocks, 0 = none */
	/* the external log of index entries: written up to lsn, durable up to flushed */
	uint64_t	lsn;
	uint64_t	flushed;
	uint64_t	pending_lsn;	/* position of the committing transaction's entries */
	/* external entries of log-free commits: numbered, the latest committed */
	uint64_t	ext_counter;
	uint64_t	pending_ext;	/* the committing transaction's, 0 = none */
	uint64_t	committed_ext;
	uint64_t	committed_ext_lsn;
} Oracle;

static Oracle oracle;
static NvmTableKey main_key = {1663, 1, 5000, 0};
static char pool_path[256];

/* the first problem the checker reports, kept for the message of the image */

/* scan: read the visible rows into got[]; NULL or an error */
static const char *
scan_rows(NvmTable *t, NvmTxn *txn, int64_t *got)
{
	static NvmSnapshot snap;
	NvmView		view;

	nvm_snapshot_take(&snap);
	memset(&view, 0, sizeof(view));
	view.kind = NVM_VIEW_SNAPSHOT;
	view.snap = &snap;
	view.my_txid = txn->txid;
	view.curcid = 0;
	for (int k = 0; k < KEYS; k++)
		got[k] = -1;
	for (uint64_t r = 1; r < nvm_table_record_limit(t); r++)
	{
		NvmVersion *v = nvm_chain_visible(t, r, &view);

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

/* the byte a ballast block is filled with: from its offset */
static unsigned char
ballast_byte(nvm_off off)
{
	return (unsigned char) (0x11 + (off >> 20) * 7);
}

/* every durable ballast block is allocated, inside the pool, and intact */
static const char *
check_ballast(void)
{
	for (int i = 0; i < BALLAST_MAX; i++)
	{
		nvm_off		b = oracle.ballast[i];
		const unsigned char *p;

		if (b == 0)
			continue;
		if (!nvm_alloc_contains(b - NVM_BLOCK_HEADER_SIZE, BALLAST_SIZE + NVM_BLOCK_HEADER_SIZE))
			return "a ballast block lies outside the chunks the allocator knows";
		if (!(*(uint64_t *) (nvm_pool_base + b - NVM_BLOCK_HEADER_SIZE) & NVM_BLOCK_ALLOCATED))
			return "a ballast block is not allocated after recovery";
		p = nvm_ptr(b);
		if (p[0] != ballast_byte(b) || p[BALLAST_SIZE / 2] != ballast_byte(b) ||
			p[BALLAST_SIZE - 1] != ballast_byte(b))
			return "a ballast block was overwritten";
	}
	return NULL;
}

/*
 * ballast_step takes a new ballast block (growing the pool when no chunk is
 * free) or, once BALLAST_MAX are held or the pool is at its maximum, gives
 * one back.  A block counts once its contents and header are drained.
 */
static void
ballast_step(unsigned r)
{
	int			slot = (int) (r % BALLAST_MAX);
	nvm_off		b;

	if (oracle.ballast[slot] != 0)
	{
		b = oracle.ballast[slot];
		oracle.ballast[slot] = 0;
		nvm_free(b);
		return;
	}
	b = nvm_alloc(BALLAST_SIZE);
	if (b == 0)
		return;					/* at the maximum: the next steps free some */
	memset(nvm_ptr(b), ballast_byte(b), BALLAST_SIZE);
	nvm_flush(nvm_ptr(b), BALLAST_SIZE);
	nvm_drain();
	oracle.ballast[slot] = b;
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

	(void) arg;
	if ((err = unit_check_pool(true)) != NULL)
		return err;
	if (!nvm_table_open(&main_key, &t))
		return "table lost";
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

	/*
	 * External entries: that of the latest log-free commit (the committing
	 * one if its rows are there) is in the external list if the external
	 * log may have lost its position.
	 */
	{
		bool		is_new = match_new && !match_committed && oracle.pending_ext != 0;
		uint64_t	ext = is_new ? oracle.pending_ext : oracle.committed_ext;
		uint64_t	lsn = is_new ? oracle.pending_lsn : oracle.committed_ext_lsn;
		NvmExternalList *list = nvm_external_list();
		bool		found = false;

		for (uint64_t i = 0; list != NULL && i < list->count && !found; i++)
			found = atomic_load(&list->entries[i].word0) == (NVM_INDEXLOG_EXTERNAL | 7) &&
				list->entries[i].word1 == ext;
		if (ext != 0 && lsn > oracle.flushed && !found)
			return "the external entry of a log-free commit whose log may be lost is not in the external list";
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
		if ((err = unit_check_pool(true)) != NULL || (err = check_ballast()) != NULL)
			return err;
	}
	nvm_slot_release(slot);
	return NULL;
}

static unsigned rng_state;

/*
 * whether transactions insert batches: only in the fixed-size pool's run.
 * The growing pool's run keeps the sequence of transactions it was tuned
 * with: another sequence (batches, or the same rows inserted one by one)
 * takes the pool to its maximum where recovery finds no room for its
 * repair list.
 */
static bool batches;

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
	NvmIndexLogEntry roots[65];
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
		if (cur < 0 && batches && rnd(2) == 0)
		{
			/*
			 * a batch (COPY): this key and up to three more absent ones,
			 * with one drain for all (nvm_record_insert_many)
			 */
			Row			rows[4];
			const void *data[4];
			uint32_t	lens[4];
			uint64_t	nos[4];
			unsigned	keys[4];
			int			nb = 0,
						done = 0;

			/* as many rows as keep the transaction's roots within the index log's ring */
			int			most = 5 - nroots - (ops + (sub ? 2 : 0) - i - 1);

			for (unsigned k2 = key; nb < 4 && (nb == 0 || nb < most) && k2 < key + KEYS; k2++)
			{
				unsigned	kk = k2 % KEYS;
				int64_t		c2 = oracle.pending[kk] != -2 ? oracle.pending[kk] : oracle.committed[kk];

				if (c2 >= 0)
					continue;
				memset(&rows[nb], 0, sizeof(Row));
				rows[nb].key = kk;
				rows[nb].value = rnd(1000000);
				data[nb] = &rows[nb];
				lens[nb] = sizeof(Row);
				keys[nb++] = kk;
			}
			res = nvm_record_insert_many(t, txn, level, cid, nb, data, lens, nos, &done);
			for (int j = 0; res == NVM_WRITE_OK && j < done; j++)
			{
				oracle.pending[keys[j]] = rows[j].value;
				oracle.pending_root[keys[j]] = nos[j];
				vno[keys[j]] = nos[j];
				if (j + 1 < done && nroots < 64)
				{
					roots[nroots].table = nvm_off_of(t->desc);
					roots[nroots].version_no = nos[j];
					nroots++;
					oracle.lsn++;
				}
				else
					new_root = nos[j];
			}
		}
		else if (cur < 0)
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
			{
				oracle.pending[key] = -1;
				nvm_gc_after_update(t, nvm_version_record_no(t, n));
			}
		}
		else
		{
			bool		new_run = rnd(2);

			res = nvm_record_update(t, txn, level, cid, vno[key], &row, sizeof(row), new_run, &n, &cf);
			if (res == NVM_WRITE_OK)
			{
				nvm_gc_after_update(t, nvm_version_record_no(t, n));
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
		/* an external entry (as a sequence's position) rides with them */
		oracle.pending_ext = ++oracle.ext_counter;
		roots[nroots].table = NVM_INDEXLOG_EXTERNAL | 7;
		roots[nroots].version_no = oracle.pending_ext;
		roots[nroots].lsn = oracle.lsn;
		nroots++;
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
	if (oracle.pending_ext != 0)
	{
		oracle.committed_ext = oracle.pending_ext;
		oracle.committed_ext_lsn = oracle.pending_lsn;
		oracle.pending_ext = 0;
	}
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
 * VACUUM's hook before numbers are given back (vacuum.h, step 5): the
 * external log is flushed, which covers every entry written so far.
 */
static void
vacuum_flush(void *arg)
{
	(void) arg;
	oracle.flushed = oracle.lsn;
}

/*
 * runs the workload in one mode, on a pool that grows if grow is set;
 * returns true if every crash image was consistent
 */
static bool
run_mode(uint32_t mode, int ntx, unsigned seed, bool grow)
{
	NvmPoolOptions o = {0};
	void	   *shmem;
	NvmTable	t;
	NvmTxn		txn;
	CrashSimOptions so = {0};
	const CrashSimStats *st;
	bool		ok;

	rng_state = seed;
	batches = !grow;
	memset(&oracle, 0, sizeof(oracle));
	unlink(pool_path);
	o.path = pool_path;
	o.create_size = 32 << 20;
	if (grow)
	{
		/* a few chunks, then segments of one chunk (and its header's) each */
		o.create_size = 8 << 20;
		o.grow_step = 2 << 20;
		o.max_size = 40 << 20;
	}
	o.system_identifier = 1;
	o.cc_mode = mode;
	o.max_slots = 8;
	o.ring_words = 16;
	/* a table is created every 50 transactions and a clone made every 40 */
	o.max_tables = 32 + (uint32_t) (ntx / 50 + ntx / 40);
	/* a small ring, so that full rings and their flushes are exercised */
	nvm_indexlog_set_capacity(6);
	shmem = unit_pool_create(&o);
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
		if (grow && i % 2 == 0)
			ballast_step(rnd(1000));
		run_transaction(&t, &txn);
		if (i % 10 == 9)
		{
			NvmVacuumHooks vh = {.before_give_back = vacuum_flush};
			NvmVacuumResult vr;

			nvm_vacuum_table(&t, &vh, &vr);
		}
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
			/*
			 * the PG layer's row locks: a table's first lock word (store.h);
			 * not in the growing pool, which the ballast keeps nearly full
			 */
			if (!grow)
				atomic_store(nvm_record_lock_word(&other, 1 + (uint64_t) rnd(3000), true), 1);
		}
		if (i % 40 == 20 && !grow)
		{
			/* lock words of the main table, freed when a clone replaces it */
			atomic_store(nvm_record_lock_word(&t, 1 + (uint64_t) rnd(KEYS), true), 1);
		}
	}
	st = crashsim_stats();
	{
		NvmAllocStats as;

		nvm_alloc_get_stats(&as);
		printf("# %s%s, %d transactions, seed %u: %llu drains, %llu crash points, %llu images, %llu bad; "
			   "pool %llu MB in %llu growth segments\n",
			   nvm_cc_mode_name(mode), grow ? " (growing pool)" : "", ntx, seed,
			   (unsigned long long) st->drains, (unsigned long long) st->crash_points,
			   (unsigned long long) st->images, (unsigned long long) st->bad_images,
			   (unsigned long long) (as.pool_size >> 20), (unsigned long long) as.segments);
		if (grow && as.segments < 8)
		{
			printf("not ok - %s (growing pool): the pool grew only %llu times\n",
				   nvm_cc_mode_name(mode), (unsigned long long) as.segments);
			st = NULL;
		}
	}
	ok = st != NULL && st->bad_images == 0 && st->images > 0;
	if (ok)
		printf("ok - %s%s: every crash image recovers to a consistent state\n",
			   nvm_cc_mode_name(mode), grow ? " (growing pool)" : "");
	else if (st != NULL)
		printf("not ok - %s%s: %llu of %llu crash images are inconsistent; first at crash point %llu: %s\n",
			   nvm_cc_mode_name(mode), grow ? " (growing pool)" : "",
			   (unsigned long long) st->bad_images, (unsigned long long) st->images,
			   (unsigned long long) st->first_error_point, st->first_error ? st->first_error : "no images");
	crashsim_stop();
	nvm_gc_set_auto_prune(false, 0);
	nvm_pool_close();
	unlink(pool_path);
	unit_stop_core();
	return ok;
}

int
main(int argc, char **argv)
{
	int			ntx = argc > 1 ? atoi(argv[1]) : 150;
	unsigned	seed = argc > 2 ? (unsigned) atoi(argv[2]) : 20261122;
	const char *mode = argc > 3 ? argv[3] : NULL;
	bool		nt = argc > 4 && strcmp(argv[4], "nt") == 0;
	int			failed = 0,
				passed = 0;

	snprintf(pool_path, sizeof(pool_path), "/dev/shm/nvmam_crash_%d", (int) getpid());
	if (nt)
	{
		/* rows written by non-temporal stores (nvm.commit_variant = dbxn) */
		nvm_persist_set_version_writes(NVM_WRITES_NONTEMPORAL);
		printf("# rows written by non-temporal stores\n");
	}
	for (int grow = 0; grow <= 1; grow++)
	{
		/* growth is the same in every mode: half the budget each */
		int			n = grow ? (ntx + 1) / 2 : ntx;

		for (uint32_t m = NVM_CC_FIRST; m < NVM_CC_END; m++)
			if (!mode || strcmp(mode, nvm_cc_mode_name(m)) == 0)
				run_mode(m, grow ? n : unit_crash_budget(m, n), seed, grow) ? passed++ : failed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
