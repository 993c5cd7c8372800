/*
 * test_replica.c
 *	  Crash-consistency and idempotency test of a standby's replay
 *	  (src/core/replica.h) with the crash simulator.
 *
 * A simulated primary produces a stream of commits, each a few versions
 * with the numbers a primary gives them: new records (record numbers of
 * deleted records reused), updates that keep or start an index run,
 * deletes, and version numbers reused once the primary would have
 * collected their versions.  The standby side applies each commit as the
 * PG layer's replay does: one transaction that installs every version
 * (nvm_replica_install, pruning the chains it updates without giving
 * numbers back), commits, and then notes the commit as applied
 * (nvm_pool_note_replayed, the position replay skips up to after a
 * restart).  Before every drain the simulator builds crash images, and the
 * checker recovers each and verifies:
 *	 - every record's newest committed version is the primary's state
 *	   before the commit in progress, or after it (atomically), never a
 *	   mix;
 *	 - applying again every commit after the noted position (what replay
 *	   does after a restart) gives exactly the primary's state after the
 *	   commit in progress, with every version slot naming the version the
 *	   primary gave that number to;
 *	 - the integrity checker finds no damage in the pool (a version whose
 *	   number a later version took over is not damage in a pool a standby
 *	   replayed into).
 * Removing the drain of nvm_replica_install, or noting a commit before it
 * is committed, makes it fail.
 *
 * Then, without the simulator, reads while replay runs (replica.h, "Reads
 * while replay runs"): readers hold pinned snapshots, each taken before a
 * commit, while replay applies it and the next few; after every commit
 * each reader's walk of the records (S1, S2) must give exactly the
 * primary's state at its snapshot, every live row once.  The same readers
 * walking version numbers, as a primary's sequential scan does, must miss
 * rows once replay has moved the numbers their versions had (the test
 * fails if that never happens: it would not exercise the rule), and the
 * store must say that numbers moved.
 *
 * Usage: test_replica [commits [seed]]: every mode, MCSI and N2DB with all
 * the commits, the others with a quarter (unit_crash_budget); exit code
 * non-zero and "N passed, N failed" as the last line.
 */
#include "core.h"
#include "crashsim.h"
#include "gc.h"
#include "persist.h"
#include "pool.h"
#include "replica.h"
#include "store.h"
#include "txn.h"
#include "unit_pool.h"
#include "verify.h"
#include "visibility.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECORDS		24
#define MAX_OPS		4
#define MAX_COMMITS	400

typedef struct RowImage
{
	uint32_t	record;
	uint32_t	value;
	char		pad[40];
} RowImage;

/* One version of a commit, as the primary's COMMIT record carries it. */
typedef struct Op
{
	uint64_t	record_no;
	uint64_t	version_no;
	uint64_t	index_root;
	uint64_t	kind;
	RowImage	row;
} Op;

typedef struct Commit
{
	int			nops;
	Op			ops[MAX_OPS];
} Commit;

/* The primary's state of a record: its newest committed version. */
typedef struct RecState
{
	int			live;			/* 1 live, 0 deleted, -1 never used */
	uint64_t	version_no;
	uint64_t	index_root;
	uint32_t	value;
} RecState;

static Commit commits[MAX_COMMITS];
static RecState states[MAX_COMMITS + 1][RECORDS + 1];	/* states[i]: after i commits */
static int	applying = -1;		/* the commit being applied, -1 = none */
static char pool_path[256];
static NvmTableKey key = {1663, 1, 4000, 0};

static unsigned rng_state;

static unsigned
rnd(unsigned n)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (rng_state >> 8) % n;
}

/*
 * generate makes the primary's commit stream and the state after each
 * commit.  Version numbers of superseded versions that are no index root
 * go to a free list at once, as the primary's pruning gives them back, and
 * are reused.
 */
static void
generate(int ncommits)
{
	uint64_t	next_version = 1;
	uint64_t	free_numbers[4096];
	int			nfree = 0;

	for (int r = 0; r <= RECORDS; r++)
		states[0][r].live = -1;
	for (int i = 0; i < ncommits; i++)
	{
		Commit	   *c = &commits[i];
		RecState   *st = states[i + 1];
		bool		touched[RECORDS + 1] = {false};

		memcpy(st, states[i], sizeof(states[i]));
		c->nops = 1 + (int) rnd(MAX_OPS);
		for (int j = 0; j < c->nops; j++)
		{
			Op		   *op = &c->ops[j];
			uint64_t	r;
			uint64_t	n;

			do
				r = 1 + rnd(RECORDS);
			while (touched[r]);
			touched[r] = true;
			n = (nfree > 0 && rnd(3) == 0) ? free_numbers[--nfree] : next_version++;
			memset(op, 0, sizeof(*op));
			op->record_no = r;
			op->version_no = n;
			op->row.record = (uint32_t) r;
			op->row.value = (uint32_t) (i * 10 + j);
			if (st[r].live != 1)
			{
				/* an insert, into a new number or a deleted record's */
				op->kind = NVM_VINFO_INSERTED;
				op->index_root = n;
				st[r].live = 1;
			}
			else if (rnd(5) == 0)
			{
				/* a delete: a tombstone of the run */
				op->kind = NVM_VINFO_TOMBSTONE;
				op->index_root = st[r].index_root;
				st[r].live = 0;
			}
			else
			{
				/* an update, in the run or starting a new one */
				op->index_root = rnd(2) ? n : st[r].index_root;
			}
			/* the superseded version's number, if no index names it, is free */
			if (states[i][r].live == 1 && states[i][r].version_no != states[i][r].index_root &&
				nfree < 4096)
				free_numbers[nfree++] = states[i][r].version_no;
			st[r].version_no = n;
			st[r].index_root = op->index_root;
			st[r].value = op->row.value;
		}
	}
}

/* apply installs and commits commit i as the replay does; false if the pool is full */
static bool
apply(NvmTable *t, NvmTxn *txn, int i)
{
	Commit	   *c = &commits[i];

	for (int j = 0; j < c->nops; j++)
	{
		Op		   *op = &c->ops[j];
		NvmReplicaVersion rv = {
			.record_no = op->record_no,
			.version_no = op->version_no,
			.index_root = op->index_root,
			.kind = op->kind,
			.data = &op->row,
			.len = sizeof(RowImage)
		};
		NvmReplicaResult res = nvm_replica_install(t, txn, &rv);


		if (res == NVM_REPLICA_NO_SPACE)
			return false;
		if (res == NVM_REPLICA_INSTALLED && (op->kind & NVM_VINFO_INSERTED) == 0)
			nvm_gc_after_update(t, op->record_no);
	}
	nvm_txn_commit(txn);
	/* applied: a restart replays from the next commit (positions are i + 1) */
	nvm_pool_note_replayed((uint64_t) i + 1);
	return true;
}

/* matches says whether the table's newest committed versions are state st */
static bool
matches(NvmTable *t, const RecState *st, bool slots)
{
	for (uint64_t r = 1; r <= RECORDS; r++)
	{
		NvmVersion *v = nvm_replica_newest_committed(t, r);
		bool		live = v != NULL && !nvm_version_is_tombstone(v);

		if (live != (st[r].live == 1))
			return false;
		if (!live)
			continue;
		if (v->version_no != st[r].version_no || v->index_root != st[r].index_root ||
			((const RowImage *) v->data)->value != st[r].value ||
			((const RowImage *) v->data)->record != r)
			return false;
		if (slots && nvm_version_by_no(t, v->version_no) != v)
			return false;
	}
	return true;
}

static const char *
check_recovered(void *arg)
{
	NvmTable	t;
	NvmTxn		txn;
	int			slot;
	int			done;
	const char *err;

	(void) arg;
	if (applying < 0)
		return NULL;
	if ((err = unit_check_pool(false)) != NULL)
		return err;
	if (!nvm_table_open(&key, &t))
		return "table lost";
	if (!matches(&t, states[applying], false) && !matches(&t, states[applying + 1], false))
		return "the replayed commit in progress is neither absent nor whole, or an applied one is lost";

	/* a restart replays every commit after the noted position */
	done = (int) nvm_pool_replayed_lsn();
	if (done > applying + 1 || done < applying)
		return "the noted position is not the commit before or the commit in progress";
	slot = nvm_slot_acquire(4242);
	nvm_txn_init(&txn, slot);
	for (int i = done; i <= applying; i++)
		if (!apply(&t, &txn, i))
			return "the pool is full";
	nvm_slot_release(slot);
	if (!matches(&t, states[applying + 1], true))
		return "replaying again from the noted position does not give the primary's state";
	return unit_check_pool(false);
}

static bool
run_mode(uint32_t mode, int ncommits, unsigned seed)
{
	NvmPoolOptions o = {0};
	void	   *shmem;
	NvmTable	t;
	NvmTxn		txn;
	CrashSimOptions so = {0};
	const CrashSimStats *st;
	bool		ok = true;

	rng_state = seed;
	generate(ncommits);
	unlink(pool_path);
	o.path = pool_path;
	o.create_size = 32 << 20;
	o.system_identifier = 1;
	o.cc_mode = mode;
	o.max_slots = 8;
	o.ring_words = 16;
	o.max_tables = 8;
	shmem = unit_pool_create(&o);
	nvm_table_create(&key, 0, &t);
	nvm_txn_init(&txn, nvm_slot_acquire(1));
	nvm_gc_set_auto_prune(true, 0);
	nvm_gc_set_number_reuse(false);

	so.seed = seed;
	so.images_per_point = 2;
	so.point_stride = 1;
	so.check = check_recovered;
	crashsim_start(&so, shmem);
	for (int i = 0; i < ncommits && ok; i++)
	{
		applying = i;
		ok = apply(&t, &txn, i);
	}
	applying = -1;
	st = crashsim_stats();
	if (ok && !matches(&t, states[ncommits], true))
	{
		printf("not ok - %s: the replayed table is not the primary's\n",
			   nvm_cc_mode_name(mode));
		ok = false;
	}
	printf("# %s, %d commits, seed %u: %llu drains, %llu crash points, %llu images, %llu bad\n",
		   nvm_cc_mode_name(mode), ncommits, seed,
		   (unsigned long long) st->drains, (unsigned long long) st->crash_points,
		   (unsigned long long) st->images, (unsigned long long) st->bad_images);
	ok = ok && st->bad_images == 0 && st->images > 0;
	if (ok)
		printf("ok - %s: every crash image of replay recovers, and replays again, to the primary's state\n",
			   nvm_cc_mode_name(mode));
	else if (st->bad_images > 0)
		printf("not ok - %s: %llu of %llu crash images are inconsistent; first at crash point %llu: %s\n",
			   nvm_cc_mode_name(mode),
			   (unsigned long long) st->bad_images, (unsigned long long) st->images,
			   (unsigned long long) st->first_error_point, st->first_error ? st->first_error : "?");
	crashsim_stop();
	nvm_gc_set_auto_prune(false, 0);
	nvm_gc_set_number_reuse(true);
	nvm_pool_close();
	unlink(pool_path);
	unit_stop_core();
	return ok;
}

/* Snapshots a reader holds at once, each taken before one more commit. */
#define READ_WINDOW	4

/*
 * reader_sees says whether the reader with snapshot snap finds exactly the
 * rows of state st, each once: walking the records (S1, S2 of replica.h),
 * or, with by_number, walking version numbers.
 */
static bool
reader_sees(NvmTable *t, NvmSnapshot *snap, const RecState *st, bool by_number)
{
	NvmView		view = {NVM_VIEW_SNAPSHOT, snap, 0, 0, NULL, NULL, NULL};
	int			seen[RECORDS + 1] = {0};
	uint64_t	limit = by_number ? nvm_table_version_limit(t) : nvm_table_record_limit(t);

	for (uint64_t n = 1; n < limit; n++)
	{
		NvmVersion *v;

		if (by_number)
		{
			v = nvm_version_by_no(t, n);
			if (v == NULL || nvm_chain_visible(t, v->record_no, &view) != v)
				continue;
		}
		else if ((v = nvm_chain_visible(t, n, &view)) == NULL)
			continue;
		if (nvm_version_is_tombstone(v))
			continue;
		if (v->record_no == 0 || v->record_no > RECORDS || st[v->record_no].live != 1 ||
			v->version_no != st[v->record_no].version_no ||
			((const RowImage *) v->data)->value != st[v->record_no].value)
			return false;
		seen[v->record_no]++;
	}
	for (int r = 1; r <= RECORDS; r++)
		if (seen[r] != (st[r].live == 1 ? 1 : 0))
			return false;
	return true;
}

static bool
run_readers(uint32_t mode, int ncommits, unsigned seed)
{
	NvmPoolOptions o = {0};
	NvmTable	t;
	NvmTxn		txn;
	NvmSnapshot *snaps = malloc(sizeof(NvmSnapshot) * READ_WINDOW);
	uint64_t	reads = 0,
				bad = 0,
				by_number_missed = 0;
	bool		ok = true;

	rng_state = seed;
	generate(ncommits);
	o.path = pool_path;
	o.create_size = 32 << 20;
	o.system_identifier = 1;
	o.cc_mode = mode;
	o.max_slots = 8;
	o.ring_words = 16;
	o.max_tables = 8;
	(void) unit_pool_create(&o);
	nvm_table_create(&key, 0, &t);
	nvm_txn_init(&txn, nvm_slot_acquire(1));
	nvm_gc_set_auto_prune(true, 0);
	nvm_gc_set_number_reuse(false);

	for (int i = 0; i < ncommits && ok; i++)
	{
		/* a reader's snapshot before commit i sees the state after i commits */
		nvm_gc_unpin(10 + i % READ_WINDOW);
		nvm_snapshot_take_pinned(10 + i % READ_WINDOW, &snaps[i % READ_WINDOW]);
		ok = apply(&t, &txn, i);
		for (int k = i; ok && k >= 0 && k > i - READ_WINDOW; k--)
		{
			reads++;
			if (!reader_sees(&t, &snaps[k % READ_WINDOW], states[k], false))
				bad++;
			if (!reader_sees(&t, &snaps[k % READ_WINDOW], states[k], true))
				by_number_missed++;
		}
	}
	for (int p = 0; p < READ_WINDOW; p++)
		nvm_gc_unpin(10 + p);
	printf("# %s, %d commits, seed %llu: %llu reads while replay ran: %llu wrong by record, %llu wrong by version number\n",
		   nvm_cc_mode_name(mode), ncommits, (unsigned long long) seed,
		   (unsigned long long) reads, (unsigned long long) bad,
		   (unsigned long long) by_number_missed);
	if (!ok)
		printf("not ok - %s: readers: the pool is full\n", nvm_cc_mode_name(mode));
	else if (bad > 0)
		printf("not ok - %s: %llu reads by record while replay ran were not exactly the primary's rows at their snapshots\n",
			   nvm_cc_mode_name(mode), (unsigned long long) bad);
	else if (by_number_missed == 0 || !nvm_store_numbers_moved())
		printf("not ok - %s: replay never moved a number a reader's version had (the test does not exercise the rule)\n",
			   nvm_cc_mode_name(mode));
	else
		printf("ok - %s: every read by record while replay ran is exact (reads by version number miss rows, and the store says numbers moved)\n",
			   nvm_cc_mode_name(mode));
	ok = ok && bad == 0 && by_number_missed > 0 && nvm_store_numbers_moved();
	free(snaps);
	nvm_gc_set_auto_prune(false, 0);
	nvm_gc_set_number_reuse(true);
	nvm_pool_close();
	unlink(pool_path);
	unit_stop_core();
	return ok;
}

int
main(int argc, char **argv)
{
	int			ncommits = argc > 1 ? atoi(argv[1]) : 120;
	unsigned	seed = argc > 2 ? (unsigned) atoi(argv[2]) : 20261128;
	int			passed = 0,
				failed = 0;

	if (ncommits > MAX_COMMITS)
		ncommits = MAX_COMMITS;
	snprintf(pool_path, sizeof(pool_path), "/dev/shm/nvmam_replica_%d", (int) getpid());
	for (uint32_t m = NVM_CC_FIRST; m < NVM_CC_END; m++)
		run_mode(m, unit_crash_budget(m, ncommits), seed) ? passed++ : failed++;
	for (uint32_t m = NVM_CC_FIRST; m < NVM_CC_END; m++)
		run_readers(m, ncommits, seed) ? passed++ : failed++;
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
