/*
 * test_stress.c
 *	  Concurrency stress test of the core, without SQL, in both modes.
 *
 * Worker threads move random amounts between random accounts for a fixed
 * time, retrying on write-write conflicts; reader threads sum all balances.
 * Checked:
 *	 - every snapshot a reader takes sees the same total (snapshot
 *	   isolation: no torn transfer is ever visible);
 *	 - after the run the total is unchanged and every account holds exactly
 *	   what the acknowledged commits say (no lost update, no lost commit);
 *	 - a worker's next snapshot always contains its own last commit;
 *	 - any two snapshots taken during the run are ordered by containment
 *	   (MCSI paper Eq. 1).
 * Garbage collection runs all the time: every transaction pins its
 * snapshot and every update prunes its chain (gc.h), so readers walk chains
 * while writers cut them; the checks above then also say that no reader
 * ever lost a version it could see.
 * A checker thread runs the pool-wide integrity check (verify.h) over and
 * over while the workers write and prune: it must never crash, a pass it
 * calls exact must find no damage (a change in flight taken for damage
 * would be a false report), and the check after the run finds neither
 * damage nor leaks.  (A pass can be exact and still count a write in
 * flight, allocated and not yet published, as a leak: verify.h.)  Then
 * VACUUM-like passes prune long chains while the checker runs without any
 * writer: an exact pass must not take a prune in flight for a leak.
 * It also shows the anomaly of the paper's plain snapshot buffering (a
 * session can miss its own last commit) and that the default policy does
 * not have it.
 *
 * Usage: test_stress [seconds-per-run [max-workers [pool-MB]]]; CI runs 1 s
 * per worker count 1, 2, 4, 8, 16, 32 with a 512 MB pool.  With pruning,
 * the pool holds only the versions pinned snapshots still need, so long
 * runs fit in it too; a full pool fails the run.  "N passed, N failed"
 * closes the output.
 */
#include "core.h"
#include "gc.h"
#include "mcsi.h"
#include "n2db.h"
#include "persist.h"
#include "pomvcc.h"
#include "pool.h"
#include "store.h"
#include "txn.h"
#include "unit_pool.h"
#include "verify.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ACCOUNTS 32
#define INITIAL 1000
#define SNAPSHOTS_PER_THREAD 48

static int	passed = 0;
static int	failed = 0;

#define CHECK(cond, ...) \
	do { \
		if (cond) { passed++; printf("ok - "); } \
		else { failed++; printf("not ok - "); } \
		printf(__VA_ARGS__); printf("\n"); \
	} while (0)

typedef struct Shared
{
	NvmTable	table;
	uint64_t	record[ACCOUNTS];	/* record number of each account */
	_Atomic int64_t expected[ACCOUNTS]; /* balances by acknowledged commits */
	volatile int stop;
	_Atomic long torn_totals;
	_Atomic long own_commit_missed;
	_Atomic long commits;
	_Atomic long retries;
	_Atomic long pool_full;
	_Atomic long store_full;	/* writes the mode's store turned away */
	_Atomic long checks_exact;	/* pool checks that saw no change */
	_Atomic long checks_inexact;
	_Atomic long false_damage;	/* problems found by exact checks */
	bool		count_leaks;	/* ... leaks too, while nobody writes: */
	_Atomic long write_phase;	/* odd while the writer writes */
	NvmSnapshot *snaps;			/* recorded snapshots */
	_Atomic int nsnaps;
	int			max_snaps;
} Shared;

typedef struct Worker
{
	pthread_t	th;
	Shared	   *sh;
	int			id;
	bool		reader;
} Worker;

static int64_t
balance_of(const NvmVersion *v)
{
	int64_t		b;

	memcpy(&b, v->data, sizeof(b));
	return b;
}

static void
record_snapshot(Shared *sh, const NvmSnapshot *snap)
{
	int			i = atomic_fetch_add(&sh->nsnaps, 1);

	if (i < sh->max_snaps)
		memcpy(&sh->snaps[i], snap, nvm_snapshot_size(snap));
	else
		atomic_fetch_sub(&sh->nsnaps, 1);
}

static void *
worker_main(void *arg)
{
	Worker	   *w = arg;
	Shared	   *sh = w->sh;
	NvmTxn		txn;
	NvmSnapshot *snap = malloc(sizeof(NvmSnapshot));
	unsigned	seed = 977u * (unsigned) (w->id + 1);
	int			slot = nvm_slot_acquire((uint32_t) (100 + w->id));
	int			recorded = 0;
	uint64_t	last_commit = 0;

	nvm_txn_init(&txn, slot);
	while (!sh->stop)
	{
		NvmView		view = {NVM_VIEW_SNAPSHOT, snap, 0, 0, NULL, NULL, NULL};

		/* each transaction pins its snapshot: updates prune concurrently */
		nvm_gc_unpin(w->id);
		nvm_snapshot_take_pinned(w->id, snap);
		if (recorded < SNAPSHOTS_PER_THREAD && rand_r(&seed) % 16 == 0)
		{
			record_snapshot(sh, snap);
			recorded++;
		}
		if (last_commit && !nvm_snapshot_contains(snap, last_commit))
			atomic_fetch_add(&sh->own_commit_missed, 1);

		if (w->reader)
		{
			int64_t		total = 0;

			for (int a = 0; a < ACCOUNTS; a++)
				total += balance_of(nvm_chain_visible(&sh->table, sh->record[a], &view));
			if (total != (int64_t) ACCOUNTS * INITIAL)
				atomic_fetch_add(&sh->torn_totals, 1);
			continue;
		}
		else
		{
			int			from = rand_r(&seed) % ACCOUNTS,
						to = rand_r(&seed) % ACCOUNTS;
			int64_t		amount = 1 + rand_r(&seed) % 50;
			int			ends[2] = {from, to};
			int64_t		delta[2] = {-amount, amount};
			bool		conflict = false;

			if (from == to)
				continue;
			for (int i = 0; i < 2 && !conflict; i++)
			{
				NvmVersion *v;
				int64_t		nb;
				uint64_t	n;
				NvmConflict cf;
				NvmWriteResult res;

				view.my_txid = txn.txid;
				view.curcid = (uint32_t) i;
				v = nvm_chain_visible(&sh->table, sh->record[ends[i]], &view);
				nb = balance_of(v) + delta[i];
				res = nvm_record_update(&sh->table, &txn, 1, (uint32_t) i, v->version_no,
										&nb, sizeof(nb), false, &n, &cf);
				if (res == NVM_WRITE_NO_SPACE && txn.txid == NVM_INVALID_TXID &&
					nvm_txn_begin_failure() == NVM_BEGIN_STORE_FULL)
				{
					/*
					 * the mode's store has no room while a snapshot in use
					 * (the reader's, a pool check's) still needs its oldest
					 * entry: Pisces's and POMVCC's per-slot rings, N2DB's
					 * commit log.  The transfer is retried, as a client
					 * retries the error.
					 */
					atomic_fetch_add(&sh->store_full, 1);
					sched_yield();
				}
				else if (res == NVM_WRITE_NO_SPACE)
				{
					/* not a conflict: the run is over */
					atomic_fetch_add(&sh->pool_full, 1);
					sh->stop = 1;
				}
				if (res != NVM_WRITE_OK)
					conflict = true;
				else
					nvm_gc_after_update(&sh->table, sh->record[ends[i]]);
			}
			if (conflict)
			{
				nvm_txn_abort(&txn);
				atomic_fetch_add(&sh->retries, 1);
				continue;
			}
			last_commit = txn.txid;
			nvm_txn_commit(&txn);
			/* acknowledged: it must be there at the end */
			atomic_fetch_add(&sh->expected[from], -amount);
			atomic_fetch_add(&sh->expected[to], amount);
			atomic_fetch_add(&sh->commits, 1);
		}
	}
	nvm_gc_unpin(w->id);
	nvm_slot_release(slot);
	free(snap);
	return NULL;
}

/* checker_main runs the pool-wide integrity check until the run stops */
static void *
checker_main(void *arg)
{
	Shared	   *sh = arg;

	NvmVerifyOptions o = {0};

	o.leaks = true;
	while (!sh->stop)
	{
		NvmVerifyResult r;
		long		phase = atomic_load(&sh->write_phase);
		bool		no_writer;

		nvm_verify_check_pool(&o, &r);
		no_writer = phase % 2 == 0 && atomic_load(&sh->write_phase) == phase;
		if (!r.exact)
			atomic_fetch_add(&sh->checks_inexact, 1);
		else
		{
			atomic_fetch_add(&sh->checks_exact, 1);
			atomic_fetch_add(&sh->false_damage,
							 (long) (r.problems + (sh->count_leaks && no_writer ? r.leaks : 0)));
		}
	}
	return NULL;
}

/* is a contained in b (every transaction completed in a completed in b)? */
static bool
contained(const NvmSnapshot *a, const NvmSnapshot *b)
{
	if (a->mode == NVM_CC_MCSI)
	{
		for (uint32_t c = 0; c < NVM_MAX_SLOTS; c++)
		{
			uint64_t	av = c < a->nslots ? a->ts[c] : nvm_cc->slots[c < nvm_cc->max_slots ? c : 0].boot_last_completed;
			uint64_t	bv = c < b->nslots ? b->ts[c] : nvm_cc->slots[c < nvm_cc->max_slots ? c : 0].boot_last_completed;

			if (c >= nvm_cc->max_slots)
				break;
			if (av > bv)
				return false;
		}
		return true;
	}
	if (a->mode == NVM_CC_N2DB)
	{
		/* every value a counts as completed, b counts as completed too */
		if (a->xmax > b->xmax)
			return false;
		for (uint32_t i = 0; i < b->nslots; i++)
		{
			uint64_t	x = b->ts[i];

			if (x < a->xmax && nvm_n2db_snapshot_contains(a, x))
				return false;
		}
		return true;
	}
	/* a start timestamp (Pisces, POMVCC): a commit is in it iff its endTS is at most the start */
	return a->xmin <= b->xmin;
}

static uint64_t pool_mb = 512;

/*
 * start_pool creates a new pool of mb MiB at path in mode and starts the
 * core on it (unit_stop_core frees its memory).
 */
static void
start_pool(const char *path, uint32_t mode, uint64_t mb, uint32_t max_slots)
{
	NvmPoolOptions o = {0};

	o.path = path;
	o.create_size = mb << 20;
	o.system_identifier = 1;
	o.cc_mode = mode;
	o.max_slots = max_slots;
	unit_pool_create(&o);
}

static void
run(uint32_t mode, int nworkers, double seconds, const char *path)
{
	Shared	   *sh = calloc(1, sizeof(Shared));
	NvmTxn		loader;
	NvmTableKey key = {1, 1, 1, 0};
	Worker	   *ws = calloc((size_t) nworkers + 1, sizeof(Worker));
	int			nthreads = nworkers + 1;	/* plus one reader */
	const char *m = nvm_cc_mode_name(mode);
	int			bad_pairs = 0;
	int64_t		total = 0;
	bool		exact = true;

	start_pool(path, mode, pool_mb, 64);
	nvm_gc_set_auto_prune(true, 1);
	nvm_table_create(&key, 0, &sh->table);
	nvm_txn_init(&loader, nvm_slot_acquire(1));
	for (int a = 0; a < ACCOUNTS; a++)
	{
		int64_t		b = INITIAL;
		uint64_t	n;

		nvm_record_insert(&sh->table, &loader, 1, 0, &b, sizeof(b), &n);
		sh->record[a] = nvm_version_by_no(&sh->table, n)->record_no;
		sh->expected[a] = INITIAL;
	}
	nvm_txn_commit(&loader);
	nvm_slot_release(loader.slot);
	{
		/*
		 * The loader's session takes its next snapshot before the workers
		 * start: in POMVCC the load is in other sessions' snapshots only
		 * once the shared commit timestamp has moved past it, which the
		 * session rule does here (the paper's HISTORICAL READ otherwise).
		 */
		NvmSnapshot *s = malloc(sizeof(NvmSnapshot));

		nvm_snapshot_take(s);
		free(s);
	}
	sh->max_snaps = nthreads * SNAPSHOTS_PER_THREAD;
	sh->snaps = calloc((size_t) sh->max_snaps, sizeof(NvmSnapshot));

	for (int i = 0; i < nthreads; i++)
	{
		ws[i].sh = sh;
		ws[i].id = i;
		ws[i].reader = (i == nworkers);
		pthread_create(&ws[i].th, NULL, worker_main, &ws[i]);
	}
	{
		pthread_t	checker;
		NvmVerifyResult r;

		pthread_create(&checker, NULL, checker_main, sh);
		usleep((useconds_t) (seconds * 1e6));
		sh->stop = 1;
		for (int i = 0; i < nthreads; i++)
			pthread_join(ws[i].th, NULL);
		pthread_join(checker, NULL);
		{
			NvmVerifyOptions o = {0};

			o.leaks = true;
			nvm_verify_check_pool(&o, &r);
		}
		CHECK(r.exact && r.problems == 0 && r.leaks == 0 && r.tables == 1,
			  "%s %d: the integrity check after the run finds no damage and no leak", m, nworkers);
	}

	{
		NvmSnapshot *snap = malloc(sizeof(NvmSnapshot));
		NvmView		view = {NVM_VIEW_SNAPSHOT, snap, 0, 0, NULL, NULL, NULL};

		/*
		 * every acknowledged commit, in POMVCC too: its snapshot moves the
		 * shared commit timestamp and waits for the commits at it
		 */
		if (mode == NVM_CC_POMVCC)
			nvm_pomvcc_set_tick(0);
		nvm_snapshot_take(snap);
		if (mode == NVM_CC_POMVCC)
			nvm_pomvcc_set_tick(NVM_POMVCC_TICK_NS);
		for (int a = 0; a < ACCOUNTS; a++)
		{
			int64_t		b = balance_of(nvm_chain_visible(&sh->table, sh->record[a], &view));

			total += b;
			if (b != sh->expected[a])
				exact = false;
		}
		free(snap);
	}
	for (int i = 0; i < sh->nsnaps; i++)
		for (int j = i + 1; j < sh->nsnaps; j++)
			if (!contained(&sh->snaps[i], &sh->snaps[j]) && !contained(&sh->snaps[j], &sh->snaps[i]))
				bad_pairs++;

	printf("# %s, %d worker(s) + 1 reader, %.1f s: %ld commits, %ld retries (%ld with the mode's store full), %d snapshots compared\n",
		   m, nworkers, seconds, (long) sh->commits, (long) sh->retries, (long) sh->store_full, (int) sh->nsnaps);
	CHECK(sh->commits > 0, "%s %d: transfers commit", m, nworkers);
	CHECK(sh->pool_full == 0, "%s %d: the pool never filled (use a larger pool for long runs)", m, nworkers);
	CHECK(total == (int64_t) ACCOUNTS * INITIAL, "%s %d: the total never changes (%lld)", m, nworkers, (long long) total);
	CHECK(exact, "%s %d: every account matches the acknowledged commits", m, nworkers);
	CHECK(sh->torn_totals == 0, "%s %d: no snapshot sees a torn transfer (%ld did)", m, nworkers, (long) sh->torn_totals);
	CHECK(sh->own_commit_missed == 0, "%s %d: a worker always sees its own last commit (%ld misses)", m, nworkers, (long) sh->own_commit_missed);
	CHECK(bad_pairs == 0, "%s %d: any two snapshots are ordered by containment (%d pairs are not)", m, nworkers, bad_pairs);
	CHECK(sh->false_damage == 0,
		  "%s %d: pool checks during the run that saw no change found no damage (%ld problems in %ld exact checks; %ld saw changes)",
		  m, nworkers, (long) sh->false_damage, (long) sh->checks_exact, (long) sh->checks_inexact);

	nvm_pool_close();
	unlink(path);
	free(sh->snaps);
	free(sh);
	free(ws);
	unit_stop_core();
}

/*
 * vacuum_while_checking prunes long chains, one at a time, with the checker
 * running and nobody writing: every pass the checker calls exact must find
 * neither damage nor leaks (a prune counts as one change from its cut to
 * its last free, alloc.h).
 */
static void
vacuum_while_checking(uint32_t mode, const char *path)
{
	start_pool(path, mode, 64, 8);
	Shared	   *sh = calloc(1, sizeof(Shared));
	NvmTxn		txn;
	NvmTableKey key = {1, 1, 3, 0};
	const char *m = nvm_cc_mode_name(mode);
	pthread_t	checker;
	long		rounds = 0;

	nvm_table_create(&key, 0, &sh->table);
	nvm_txn_init(&txn, nvm_slot_acquire(1));
	sh->count_leaks = true;
	pthread_create(&checker, NULL, checker_main, sh);
	for (int round = 0; round < 10; round++)
	{
		static NvmHorizon h;
		NvmGcCounts cnt = {0};
		uint64_t	vno[ACCOUNTS];

		/* long chains (a write in flight may look like a leak: not counted) */
		atomic_fetch_add(&sh->write_phase, 1);
		for (int a = 0; a < ACCOUNTS; a++)
		{
			int64_t		b = a;

			nvm_record_insert(&sh->table, &txn, 1, 0, &b, sizeof(b), &vno[a]);
		}
		nvm_txn_commit(&txn);
		for (int u = 0; u < 20; u++)
		{
			for (int a = 0; a < ACCOUNTS; a++)
			{
				int64_t		b = u;
				NvmConflict cf;

				if (nvm_record_update(&sh->table, &txn, 1, 0, vno[a], &b, sizeof(b), u % 5 == 0, &vno[a], &cf) == NVM_WRITE_OK)
					nvm_gc_after_update(&sh->table, nvm_version_record_no(&sh->table, vno[a]));
			}
			nvm_txn_commit(&txn);
		}
		atomic_fetch_add(&sh->write_phase, 1);

		/*
		 * then the prunes alone, a little apart, with slow drains, so that
		 * a pass can fit between a cut and the frees that follow it
		 */
		if (!nvm_gc_horizon(&h))
			continue;
		nvm_persist_set_drain_delay_ns(100000);
		for (uint64_t r = 1; r < nvm_table_record_limit(&sh->table); r++)
		{
			nvm_gc_prune_chain(&sh->table, r, &h, &cnt);
			usleep(100);
		}
		nvm_persist_set_drain_delay_ns(0);
		rounds++;
	}
	sh->stop = 1;
	pthread_join(checker, NULL);
	CHECK(rounds > 0 && sh->checks_exact > 0 && sh->false_damage == 0,
		  "%s: pool checks while chains are pruned, that saw no change, found no damage and no leak (%ld problems or leaks in %ld exact checks; %ld saw changes)",
		  m, (long) sh->false_damage, (long) sh->checks_exact, (long) sh->checks_inexact);
	nvm_slot_release(txn.slot);
	free(txn.log);
	nvm_pool_close();
	unlink(path);
	free(sh);
	unit_stop_core();
}

typedef struct Holder
{
	volatile int release;
} Holder;

static void *
release_later(void *arg)
{
	usleep(20000);
	((Holder *) arg)->release = 1;
	return NULL;
}

static void *
hold_lock(void *arg)
{
	Holder	   *h = arg;

	NvmMcsiShared *ms = nvm_cc_mode_state();

	/* play a generation that started before the caller arrived */
	nvm_spin_lock(&ms->snapshot_lock);
	atomic_fetch_add(&ms->snapshot_gen, 1);
	while (!h->release)
		usleep(100);
	atomic_fetch_add(&ms->snapshot_gen, 1);
	nvm_spin_unlock(&ms->snapshot_lock);
	return NULL;
}

/*
 * buffering_anomaly: a session commits, then asks for a snapshot while a
 * generation that began before its commit is still running.  The paper's
 * plain buffering hands it an older snapshot without its own commit; the
 * default policy waits for a later generation.
 */
static void
buffering_anomaly(const char *path)
{
	NvmTable	t;
	NvmTableKey key = {1, 1, 2, 0};
	NvmTxn		txn;
	uint64_t	n,
				mine;
	NvmSnapshot *snap = malloc(sizeof(NvmSnapshot));
	int64_t		v = 1;

	for (int policy = 0; policy < 2; policy++)
	{
		pthread_t	th;
		Holder		h = {0};

		start_pool(path, NVM_CC_MCSI, 64, 8);
		nvm_snapshot_set_policy(policy == 0 ? NVM_SNAPSHOT_PAPER : NVM_SNAPSHOT_JOIN);
		nvm_table_create(&key, 0, &t);
		nvm_txn_init(&txn, nvm_slot_acquire(1));
		nvm_snapshot_take(snap);	/* buffered: before the commit */

		pthread_create(&th, NULL, hold_lock, &h);
		while (atomic_load(&((NvmMcsiShared *) nvm_cc_mode_state())->snapshot_gen) % 2 == 0)
			usleep(100);
		nvm_record_insert(&t, &txn, 1, 0, &v, sizeof(v), &n);
		mine = txn.txid;
		nvm_txn_commit(&txn);

		if (policy == 0)
		{
			nvm_snapshot_take(snap);
			CHECK(!nvm_snapshot_contains(snap, mine),
				  "paper buffering: the snapshot after a commit can miss that commit (the documented anomaly)");
			h.release = 1;
			pthread_join(th, NULL);
		}
		else
		{
			/* the holder finishes a little later; the caller must wait for a newer generation */
			pthread_t	releaser;

			pthread_create(&releaser, NULL, release_later, &h);
			nvm_snapshot_take(snap);
			CHECK(nvm_snapshot_contains(snap, mine),
				  "default buffering: the snapshot after a commit always contains it");
			pthread_join(th, NULL);
			pthread_join(releaser, NULL);
		}
		nvm_pool_close();
		unit_stop_core();
	}
	unlink(path);
	free(snap);
}

int
main(int argc, char **argv)
{
	double		seconds = argc > 1 ? atof(argv[1]) : 1.0;
	int			max_workers = argc > 2 ? atoi(argv[2]) : 32;

	if (argc > 3)
		pool_mb = strtoull(argv[3], NULL, 10);
	char		path[128];

	snprintf(path, sizeof(path), "/dev/shm/nvmam_stress_%d", (int) getpid());
	buffering_anomaly(path);
	for (uint32_t m = NVM_CC_FIRST; m < NVM_CC_END; m++)
		for (int nw = 1; nw <= max_workers; nw *= 2)
			run(m, nw, seconds, path);
	for (uint32_t m = NVM_CC_FIRST; m < NVM_CC_END; m++)
		vacuum_while_checking(m, path);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
