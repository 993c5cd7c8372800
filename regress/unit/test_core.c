/*
 * test_core.c
 *	  Unit tests of the storage core without PostgreSQL: pool validation,
 *	  status words, the allocator (also under concurrent threads), tables,
 *	  version chains, MCSI visibility and conflicts, subtransactions,
 *	  recovery of transactions in flight, garbage collection (pins, pruning,
 *	  retired records, reuse of numbers), cloning a table (SET TABLESPACE),
 *	  the start-up sweep of temporary and unlogged tables, row-lock words, the status
 *	  rings wrapping, the index log of log-free commits and its repair
 *	  list, and in-doubt transactions whose external xid is reused.
 *
 * Each test prints "ok" or "not ok" lines; the last line is
 * "N passed, N failed" and the exit code is non-zero on any failure.
 */
#include "alloc.h"
#include "ckptmark.h"
#include "core.h"
#include "gc.h"
#include "indexlog.h"
#include "indoubt.h"
#include "mcsi.h"
#include "persist.h"
#include "pisces.h"
#include "pomvcc.h"
#include "pool.h"
#include "store.h"
#include "txn.h"
#include "unit_pool.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int	passed = 0;
static int	failed = 0;

#define CHECK(cond, name) \
	do { \
		if (cond) { passed++; printf("ok - %s\n", name); } \
		else { failed++; printf("not ok - %s (%s:%d)\n", name, __FILE__, __LINE__); } \
	} while (0)

/* a check that reports only a failure (for checks in a loop) */
#define CHECK_QUIET(cond) \
	do { \
		if (!(cond)) { failed++; printf("not ok - %s (%s:%d)\n", #cond, __FILE__, __LINE__); } \
	} while (0)

static char pool_path[256];
static uint32_t cur_mode = NVM_CC_MCSI;
static bool allow_switch = false;
#define SYSID UINT64_C(0x1234567890)

static NvmPoolOpenResult
open_pool(uint64_t size, uint64_t sysid, uint32_t mode, char *err)
{
	NvmPoolOptions o = {0};

	o.allow_mode_switch = allow_switch;
	o.path = pool_path;
	o.create_size = size;
	o.system_identifier = sysid;
	o.cc_mode = mode;
	o.max_slots = 64;
	o.ring_words = 64;
	o.max_tables = 128;
	return nvm_pool_open(&o, err, 256);
}

static void
test_pool_validation(void)
{
	char		err[256];
	int			fd;
	struct stat st;

	unlink(pool_path);

	CHECK(open_pool(64 << 20, SYSID, NVM_CC_MCSI, err) == NVM_POOL_CREATED, "new pool is created");
	CHECK(stat(pool_path, &st) == 0 && (st.st_mode & 0777) == 0600, "pool file mode is 0600");
	CHECK(st.st_blocks * 512 >= (64 << 20), "pool file is allocated, not sparse");

	/* a second opener (another process) is refused while we hold the lock */
	{
		pid_t		pid = fork();
		int			status;

		if (pid == 0)
		{
			char		e2[256];

			nvm_pool_base = NULL;
			_exit(open_pool(64 << 20, SYSID, NVM_CC_MCSI, e2) == NVM_POOL_ERR_LOCKED ? 0 : 1);
		}
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a locked pool is refused");
	}
	nvm_pool_close();

	CHECK(open_pool(64 << 20, SYSID, NVM_CC_MCSI, err) == NVM_POOL_OK, "existing pool reopens");
	nvm_pool_close();
	CHECK(open_pool(64 << 20, SYSID + 1, NVM_CC_MCSI, err) == NVM_POOL_ERR_FOREIGN &&
		  strstr(err, pool_path) != NULL, "pool of another cluster is refused, naming the file");
	CHECK(open_pool(64 << 20, SYSID, NVM_CC_N2DB, err) == NVM_POOL_ERR_MODE, "pool of another mode is refused");

	/* corrupt one header byte */
	fd = open(pool_path, O_RDWR);
	{
		unsigned char b;

		pread(fd, &b, 1, 20);
		b ^= 0xff;
		pwrite(fd, &b, 1, 20);
		CHECK(open_pool(64 << 20, SYSID, NVM_CC_MCSI, err) == NVM_POOL_ERR_BAD_CHECKSUM, "corrupt header is refused");
		b ^= 0xff;
		pwrite(fd, &b, 1, 20);
	}
	/* random bytes in place of the magic */
	{
		uint64_t	junk = 0xdeadbeefcafef00dULL,
					saved;

		pread(fd, &saved, 8, 0);
		pwrite(fd, &junk, 8, 0);
		CHECK(open_pool(64 << 20, SYSID, NVM_CC_MCSI, err) == NVM_POOL_ERR_BAD_MAGIC, "file without magic is refused");
		pwrite(fd, &saved, 8, 0);
	}
	/* truncated to less than the header says */
	CHECK(ftruncate(fd, 32 << 20) == 0, "truncate");
	CHECK(open_pool(64 << 20, SYSID, NVM_CC_MCSI, err) == NVM_POOL_ERR_TRUNCATED, "truncated pool is refused");
	CHECK(ftruncate(fd, 100) == 0, "truncate");
	CHECK(open_pool(64 << 20, SYSID, NVM_CC_MCSI, err) == NVM_POOL_ERR_TRUNCATED, "pool shorter than a header is refused");
	close(fd);
	unlink(pool_path);
}

/*
 * Huge pages for the mapping: off maps with small pages; on either gets
 * them (the mapping at a 2 MiB boundary) or fails to open with its own
 * code, leaving no half-created file; try opens in every case.
 */
static void
test_pool_huge_pages(void)
{
	char		err[256];
	NvmPoolOptions o = {0};
	NvmPoolOpenResult r;

	unlink(pool_path);
	o.path = pool_path;
	o.create_size = 64 << 20;
	o.system_identifier = SYSID;
	o.cc_mode = NVM_CC_MCSI;
	o.max_slots = 8;
	o.ring_words = 64;
	o.max_tables = 128;

	o.huge_pages = NVM_HUGE_PAGES_OFF;
	CHECK(nvm_pool_open(&o, err, sizeof(err)) == NVM_POOL_CREATED && !nvm_pool_huge_pages,
		  "huge_pages off: the pool is mapped with small pages");
	nvm_pool_close();
	unlink(pool_path);

	o.huge_pages = NVM_HUGE_PAGES_ON;
	r = nvm_pool_open(&o, err, sizeof(err));
	if (r == NVM_POOL_CREATED)
	{
		CHECK(nvm_pool_huge_pages && ((uintptr_t) nvm_pool_base & ((2u << 20) - 1)) == 0,
			  "huge_pages on: the pool is mapped at a 2 MiB boundary in huge pages");
		nvm_pool_close();
		o.huge_pages = NVM_HUGE_PAGES_TRY;
		CHECK(nvm_pool_open(&o, err, sizeof(err)) == NVM_POOL_OK && nvm_pool_huge_pages,
			  "huge_pages try: an existing pool reopens in huge pages");
		nvm_pool_close();
	}
	else
	{
		printf("# huge pages not granted here: %s\n", err);
		CHECK(r == NVM_POOL_ERR_HUGE_PAGES && access(pool_path, F_OK) != 0,
			  "huge_pages on: refused with its own code, and no half-created file is left");
		o.huge_pages = NVM_HUGE_PAGES_TRY;
		CHECK(nvm_pool_open(&o, err, sizeof(err)) == NVM_POOL_CREATED && !nvm_pool_huge_pages,
			  "huge_pages try: the pool opens with small pages");
		nvm_pool_close();
	}
	unlink(pool_path);
}

static void
fresh_pool(uint32_t mode)
{
	char		err[256];

	nvm_pool_close();
	unlink(pool_path);
	CHECK(open_pool(64 << 20, SYSID, mode, err) == NVM_POOL_CREATED, "fresh pool");
	unit_start_core();
}

static void
test_status_word(void)
{
	_Atomic uint64_t word = 0;

	nvm_status_word_set(&word, 0, NVM_STATUS_RUNNING);
	nvm_status_word_set(&word, 30, NVM_STATUS_COMMITTED);
	nvm_status_word_set(&word, 5, NVM_STATUS_ABORTED);
	CHECK(nvm_status_word_get(&word, 0) == NVM_STATUS_RUNNING &&
		  nvm_status_word_get(&word, 30) == NVM_STATUS_COMMITTED &&
		  nvm_status_word_get(&word, 5) == NVM_STATUS_ABORTED &&
		  nvm_status_word_get(&word, 6) == NVM_STATUS_INITIAL, "status word keeps 31 independent entries");
	CHECK((atomic_load(&word) & NVM_STATUS_DIRTY_BIT) == 0, "dirty bit is clear after set");
	atomic_store(&word, atomic_load(&word) | NVM_STATUS_DIRTY_BIT);
	CHECK(nvm_status_word_get(&word, 30) == NVM_STATUS_COMMITTED, "a dirty word still reads its status");
}

static void
test_alloc_basic(void)
{
	NvmAllocStats before,
				after;
	nvm_off		a = nvm_alloc(100),
				b = nvm_alloc(100),
				big = nvm_alloc((3 << 20) - 64);

	CHECK(a && b && a != b, "two small blocks are distinct");
	CHECK(nvm_alloc_usable_size(a) >= 100, "usable size covers the request");
	CHECK(big && nvm_alloc_usable_size(big) >= (3 << 20) - 64, "large block spans chunks");
	memset(nvm_ptr(big), 0xab, (3 << 20) - 64);
	nvm_drain();
	nvm_alloc_get_stats(&before);
	/* rebuilding from the pool gives the same accounting */
	unit_start_core();
	nvm_alloc_get_stats(&after);
	CHECK(before.bytes_allocated == after.bytes_allocated &&
		  before.chunks_free == after.chunks_free, "allocator state rebuilds from the pool");
	nvm_free(a);
	nvm_free(b);
	nvm_alloc_get_stats(&after);
	CHECK(after.chunks_free == before.chunks_free + 1, "a small-class chunk whose blocks are all freed is given back");
	before = after;
	nvm_free(big);
	nvm_alloc_get_stats(&after);
	CHECK(after.chunks_free == before.chunks_free + 3, "freeing a large block returns its chunks");
}

static void
test_alloc_full(void)
{
	nvm_off		offs[1024];
	int			n = 0;
	NvmAllocStats st;

	while (n < 1024 && (offs[n] = nvm_alloc(1 << 20)) != 0)
		n++;
	CHECK(n > 0 && n < 1024, "a full pool returns 0 instead of crashing");
	nvm_alloc_get_stats(&st);
	CHECK(nvm_alloc(2 << 20) == 0, "allocation fails when the pool is full");
	for (int i = 0; i < n; i++)
		nvm_free(offs[i]);
	CHECK(nvm_alloc(1 << 20) != 0, "space freed can be allocated again");
}

#define THREADS 4
#define PER_THREAD 20000

static void *
alloc_worker(void *arg)
{
	long		id = (long) arg;
	nvm_off    *mine = calloc(PER_THREAD, sizeof(nvm_off));
	size_t	   *sizes = calloc(PER_THREAD, sizeof(size_t));
	unsigned	seed = (unsigned) id * 7919;
	long		bad = 0;

	for (int i = 0; i < PER_THREAD; i++)
	{
		sizes[i] = 16 + rand_r(&seed) % 2000;
		mine[i] = nvm_alloc(sizes[i]);
		if (mine[i])
			memset(nvm_ptr(mine[i]), (int) id + 1, sizes[i]);
		if (i % 3 == 0 && mine[i / 2])
		{
			nvm_free(mine[i / 2]);
			mine[i / 2] = 0;
		}
	}
	for (int i = 0; i < PER_THREAD; i++)
	{
		unsigned char *p = nvm_ptr(mine[i]);

		if (!p)
			continue;
		for (size_t k = 0; k < sizes[i]; k++)
			if (p[k] != (unsigned char) (id + 1))
			{
				bad++;
				break;
			}
		nvm_free(mine[i]);
	}
	free(mine);
	free(sizes);
	return (void *) bad;
}

static void
test_alloc_concurrent(void)
{
	pthread_t	th[THREADS];
	long		bad = 0;
	NvmAllocStats before,
				after;

	nvm_alloc_get_stats(&before);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, alloc_worker, (void *) i);
	for (int i = 0; i < THREADS; i++)
	{
		void	   *r;

		pthread_join(th[i], &r);
		bad += (long) r;
	}
	nvm_alloc_get_stats(&after);
	CHECK(bad == 0, "concurrent threads never receive overlapping blocks");
	CHECK(after.blocks_allocated == before.blocks_allocated, "every block freed is accounted for");
}

/*
 * Caches: two threads with a clock slot each (so a cache each) allocate
 * blocks of the cached classes and of others, free their own and, through
 * a mailbox, each other's (a free into another cache than the one the
 * block came from).  Every block carries its owner's pattern, checked
 * before it is freed; halfway, with both threads paused and their caches
 * full, every live block must be distinct, allocated as the checker sees
 * it, and the pool check exact and clean.  A block handed out twice breaks
 * a pattern or the distinctness.
 */
#define CACHE_THREADS 2
#define CACHE_OPS 30000
#define CACHE_LIVE 512

typedef struct CacheWorker
{
	int			id;
	nvm_off		live[CACHE_LIVE];
	size_t		size[CACHE_LIVE];
	long		bad;
} CacheWorker;

static pthread_barrier_t cache_barrier;
static pthread_mutex_t mailbox_lock = PTHREAD_MUTEX_INITIALIZER;
static nvm_off mailbox[CACHE_THREADS][64];	/* blocks for thread i to free */
static size_t mailbox_size[CACHE_THREADS][64];
static int	mailbox_n[CACHE_THREADS];

static bool
pattern_intact(nvm_off off, size_t size, int id)
{
	unsigned char *p = nvm_ptr(off);

	for (size_t k = 0; k < size; k++)
		if (p[k] != (unsigned char) (0x30 + id))
			return false;
	return true;
}

static void
cache_worker_phase(CacheWorker *w, unsigned *seed, int ops)
{
	for (int i = 0; i < ops; i++)
	{
		int			k = (int) (rand_r(seed) % CACHE_LIVE);
		int			other = (w->id + 1) % CACHE_THREADS;

		if (w->live[k])
		{
			if (!pattern_intact(w->live[k], w->size[k], w->id))
				w->bad++;
			pthread_mutex_lock(&mailbox_lock);
			if (i % 4 == 0 && mailbox_n[other] < 64)
			{
				/* the other thread frees it */
				mailbox[other][mailbox_n[other]] = w->live[k];
				mailbox_size[other][mailbox_n[other]++] = w->size[k];
				w->live[k] = 0;
			}
			pthread_mutex_unlock(&mailbox_lock);
			if (w->live[k])
				nvm_free(w->live[k]);
		}
		w->size[k] = (rand_r(seed) % 16 == 0) ? 5000 + rand_r(seed) % 20000 : 8 + rand_r(seed) % 600;
		w->live[k] = nvm_alloc(w->size[k]);
		if (w->live[k])
			memset(nvm_ptr(w->live[k]), 0x30 + w->id, w->size[k]);

		pthread_mutex_lock(&mailbox_lock);
		while (mailbox_n[w->id] > 0)
		{
			int			m = --mailbox_n[w->id];

			if (!pattern_intact(mailbox[w->id][m], mailbox_size[w->id][m], other))
				w->bad++;
			nvm_free(mailbox[w->id][m]);
		}
		pthread_mutex_unlock(&mailbox_lock);
	}
}

static void *
cache_worker(void *arg)
{
	CacheWorker *w = arg;
	unsigned	seed = 77u + (unsigned) w->id;
	int			slot = nvm_slot_acquire((uint32_t) (500 + w->id));

	cache_worker_phase(w, &seed, CACHE_OPS);
	pthread_barrier_wait(&cache_barrier);	/* the main thread checks */
	pthread_barrier_wait(&cache_barrier);
	cache_worker_phase(w, &seed, CACHE_OPS);
	pthread_barrier_wait(&cache_barrier);	/* mailboxes are final */
	for (int k = 0; k < CACHE_LIVE; k++)
	{
		if (w->live[k] && !pattern_intact(w->live[k], w->size[k], w->id))
			w->bad++;
		if (w->live[k])
			nvm_free(w->live[k]);
		w->live[k] = 0;
	}
	pthread_mutex_lock(&mailbox_lock);
	while (mailbox_n[w->id] > 0)
	{
		int			m = --mailbox_n[w->id];

		nvm_free(mailbox[w->id][m]);
	}
	pthread_mutex_unlock(&mailbox_lock);
	nvm_slot_release(slot);		/* gives the cache back */
	return NULL;
}

static int
cmp_off(const void *a, const void *b)
{
	nvm_off		x = *(const nvm_off *) a,
				y = *(const nvm_off *) b;

	return x < y ? -1 : x > y;
}

static void
test_alloc_caches(void)
{
	static CacheWorker w[CACHE_THREADS];
	pthread_t	th[CACHE_THREADS];
	nvm_off    *all = calloc(CACHE_THREADS * (CACHE_LIVE + 64), sizeof(nvm_off));
	int			n = 0;
	bool		distinct = true,
				allocated = true;
	long		bad = 0;
	const char *err;
	NvmAllocStats before,
				after;

	nvm_alloc_get_stats(&before);
	pthread_barrier_init(&cache_barrier, NULL, CACHE_THREADS + 1);
	for (int i = 0; i < CACHE_THREADS; i++)
	{
		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = i;
		pthread_create(&th[i], NULL, cache_worker, &w[i]);
	}
	pthread_barrier_wait(&cache_barrier);
	for (int i = 0; i < CACHE_THREADS; i++)
	{
		for (int k = 0; k < CACHE_LIVE; k++)
			if (w[i].live[k])
				all[n++] = w[i].live[k];
		for (int m = 0; m < mailbox_n[i]; m++)
			all[n++] = mailbox[i][m];
	}
	qsort(all, (size_t) n, sizeof(nvm_off), cmp_off);
	for (int i = 0; i < n; i++)
	{
		NvmBlockInfo info;

		if (nvm_alloc_check_block(all[i], &info) != NVM_BLOCK_OK)
			allocated = false;
		if (i > 0 && all[i - 1] + nvm_alloc_usable_size(all[i - 1]) + NVM_BLOCK_HEADER_SIZE > all[i])
			distinct = false;
	}
	err = unit_check_pool(true);
	pthread_barrier_wait(&cache_barrier);
	pthread_barrier_wait(&cache_barrier);
	for (int i = 0; i < CACHE_THREADS; i++)
	{
		pthread_join(th[i], NULL);
		bad += w[i].bad;
	}
	nvm_alloc_get_stats(&after);
	CHECK(n > CACHE_LIVE, "threads with caches hold many blocks at once");
	CHECK(distinct, "no block is handed out twice by the caches");
	CHECK(allocated, "every block a cache handed out is allocated in the pool and the shared state");
	CHECK(bad == 0, "no block's contents are overwritten by another's owner");
	CHECK(err == NULL, "the pool check is exact and clean while caches hold blocks");
	if (err)
		printf("# %s\n", err);
	CHECK(after.blocks_allocated == before.blocks_allocated &&
		  after.bytes_allocated == before.bytes_allocated,
		  "the counts summed over the caches come back to where they were");
	/* each class keeps the chunk it fills, empty or not */
	CHECK(after.chunks_free + 49 >= before.chunks_free,
		  "returned caches give their chunks back");
	printf("# chunks free before %llu, after %llu\n", (unsigned long long) before.chunks_free,
		   (unsigned long long) after.chunks_free);
	free(all);
}

/*
 * A thread with a cache fills the pool with small blocks of two classes
 * until nvm_alloc returns 0, frees them, and gives its cache back: every
 * chunk but those the classes keep filling is free again, and each can
 * be allocated whole.
 */
static void
test_alloc_cache_full(void)
{
	int			slot = nvm_slot_acquire(600);
	size_t		cap = 1 << 20,
				n = 0;
	nvm_off    *offs = malloc(cap * sizeof(nvm_off));
	NvmAllocStats before,
				after;

	nvm_alloc_get_stats(&before);
	while (n < cap && (offs[n] = nvm_alloc(n % 2 ? 100 : 40)) != 0)
		n++;
	nvm_alloc_get_stats(&after);
	CHECK(n > 0 && n < cap && after.chunks_free == 0,
		  "a caching thread fills the pool before nvm_alloc returns 0");
	for (size_t i = 0; i < n; i++)
		nvm_free(offs[i]);
	nvm_slot_release(slot);
	nvm_alloc_get_stats(&after);
	CHECK(after.blocks_allocated == before.blocks_allocated &&
		  after.chunks_free + 2 >= before.chunks_free,
		  "its blocks and chunks come back once its cache is returned");
	n = 0;
	while (n < cap && (offs[n] = nvm_alloc((1 << 20) - 64)) != 0)
		n++;
	CHECK(n == after.chunks_free, "and every free chunk can be allocated whole");
	for (size_t i = 0; i < n; i++)
		nvm_free(offs[i]);
	free(offs);
}

static NvmView
snapshot_view(NvmSnapshot *snap, NvmTxn *txn, uint32_t curcid)
{
	NvmView		v = {NVM_VIEW_SNAPSHOT, snap, txn->txid, curcid, NULL, NULL, NULL};

	nvm_snapshot_take(snap);
	return v;
}

static NvmTableKey key1 = {1663, 5, 16384, 0};

static void
test_mvcc(void)
{
	NvmTable	t,
				t2;
	NvmTxn		a,
				b;
	int			sa = nvm_slot_acquire(1),
				sb = nvm_slot_acquire(2);
	uint64_t	n1,
				n2,
				n3;
	static NvmSnapshot snap_before,
				snap_after,
				snap;
	NvmView		v;
	NvmConflict cf;
	NvmVersion *vis;

	CHECK(sa >= 0 && sb >= 0 && sa != sb, "two clock slots");
	nvm_txn_init(&a, sa);
	nvm_txn_init(&b, sb);
	CHECK(nvm_table_create(&key1, 0, &t), "table created");
	CHECK(nvm_table_open(&key1, &t2) && t2.desc == t.desc, "table found by key");

	nvm_snapshot_take(&snap_before);
	CHECK(nvm_record_insert(&t, &a, 1, 0, "hello", 6, &n1) == NVM_WRITE_OK, "insert");
	CHECK(nvm_txid_clock_id(a.txid) == (uint32_t) sa, "txid carries the clock id");

	/* invisible to others before commit, visible to own later commands */
	v = snapshot_view(&snap, &b, 0);
	CHECK(nvm_chain_visible(&t, 1, &v) == NULL, "uncommitted insert invisible to others");
	v = snapshot_view(&snap, &a, 1);
	vis = nvm_chain_visible(&t, 1, &v);
	CHECK(vis && strcmp(vis->data, "hello") == 0, "own insert visible to a later command");
	v = snapshot_view(&snap, &a, 0);
	CHECK(nvm_chain_visible(&t, 1, &v) == NULL, "own insert invisible to the same command");
	nvm_txn_commit(&a);

	v.kind = NVM_VIEW_SNAPSHOT;
	v.snap = &snap_before;
	v.my_txid = 0;
	CHECK(nvm_chain_visible(&t, 1, &v) == NULL, "old snapshot does not see a later commit");
	v = snapshot_view(&snap_after, &b, 0);
	CHECK(nvm_chain_visible(&t, 1, &v) != NULL, "new snapshot sees the commit");

	/* b updates with its snapshot; a concurrent a conflicts */
	CHECK(nvm_record_update(&t, &b, 1, 0, n1, "world", 6, false, &n2, &cf) == NVM_WRITE_OK, "update");
	CHECK(nvm_version_by_no(&t, n2)->index_root == n1, "update of no key keeps the index root");
	CHECK(nvm_record_update(&t, &a, 1, 0, n1, "other", 6, false, &n3, &cf) == NVM_WRITE_BEING_MODIFIED &&
		  cf.newer_version_no == n2, "concurrent update of a running version conflicts");
	CHECK(nvm_record_update(&t, &b, 1, 0, n1, "again", 6, false, &n3, &cf) == NVM_WRITE_SELF_MODIFIED &&
		  cf.newer_cid == 0, "updating a version this command replaced is self-modified");
	CHECK(nvm_record_update(&t, &b, 1, 0, n2, "again", 6, false, &n3, &cf) == NVM_WRITE_INVISIBLE,
		  "a version made by this very command cannot be updated by it");
	nvm_txn_commit(&b);
	nvm_txn_abort(&a);
	CHECK(nvm_record_update(&t, &a, 1, 0, n1, "other", 6, false, &n3, &cf) == NVM_WRITE_UPDATED &&
		  cf.newer_version_no == n2, "update from an old snapshot sees the committed newer version");
	nvm_txn_abort(&a);

	v = snapshot_view(&snap, &a, 0);
	vis = nvm_chain_visible(&t, 1, &v);
	CHECK(vis && strcmp(vis->data, "world") == 0, "snapshot sees the newest committed version");
	v.snap = &snap_after;
	vis = nvm_chain_visible(&t, 1, &v);
	CHECK(vis && strcmp(vis->data, "hello") == 0, "older snapshot still reads the older version");

	/* delete + subtransaction rollback */
	CHECK(nvm_record_update(&t, &a, 1, 0, n2, "keyed", 6, true, &n3, &cf) == NVM_WRITE_OK, "key update");
	CHECK(nvm_version_by_no(&t, n3)->index_root == n3, "key update starts a new index run");
	{
		uint64_t	n4;

		CHECK(nvm_record_update(&t, &a, 2, 1, n3, NULL, 0, false, &n4, &cf) == NVM_WRITE_OK, "delete in a subtransaction");
		v = snapshot_view(&snap, &a, 2);
		vis = nvm_chain_visible(&t, 1, &v);
		CHECK(vis && nvm_version_is_tombstone(vis), "own delete seen as a tombstone");
		nvm_txn_subxact_abort(&a, 2);
		vis = nvm_chain_visible(&t, 1, &v);
		CHECK(vis && strcmp(vis->data, "keyed") == 0, "rolled-back subtransaction's delete is gone");
	}
	nvm_txn_commit(&a);
	v = snapshot_view(&snap, &b, 0);
	vis = nvm_chain_visible(&t, 1, &v);
	CHECK(vis && strcmp(vis->data, "keyed") == 0, "commit after subtransaction rollback keeps the rest");

	/* read-only transactions write nothing */
	{
		NvmPersistStats s0 = nvm_persist_stats;

		v = snapshot_view(&snap, &b, 0);
		nvm_chain_visible(&t, 1, &v);
		nvm_txn_commit(&b);
		CHECK(nvm_persist_stats.flushes == s0.flushes && nvm_persist_stats.drains == s0.drains,
			  "a read-only transaction persists nothing");
	}

	/* a row moved to another table leaves a tombstone marked as moved */
	{
		uint64_t	n5,
					n6,
					n7;

		CHECK(nvm_record_move_out(&t, &b, 1, 0, n3, &n5, &cf) == NVM_WRITE_OK, "move out");
		CHECK(nvm_version_is_tombstone(nvm_version_by_no(&t, n5)) &&
			  nvm_version_is_moved(nvm_version_by_no(&t, n5)), "a moved row's tombstone is marked");
		CHECK(nvm_record_update(&t, &a, 1, 0, n3, "late", 5, false, &n6, &cf) == NVM_WRITE_BEING_MODIFIED &&
			  cf.newer_is_tombstone && cf.newer_is_moved, "a running move is seen as one");
		nvm_txn_commit(&b);
		CHECK(nvm_record_update(&t, &a, 1, 0, n3, "late", 5, false, &n6, &cf) == NVM_WRITE_DELETED &&
			  cf.newer_is_moved, "a writer learns that the row moved, not vanished");
		nvm_txn_abort(&a);

		CHECK(nvm_record_insert(&t, &b, 1, 0, "gone", 5, &n6) == NVM_WRITE_OK, "insert");
		nvm_txn_commit(&b);
		CHECK(nvm_record_update(&t, &b, 1, 0, n6, NULL, 0, false, &n7, &cf) == NVM_WRITE_OK &&
			  !nvm_version_is_moved(nvm_version_by_no(&t, n7)), "a delete's tombstone is not marked");
		nvm_txn_commit(&b);
		CHECK(nvm_record_update(&t, &a, 1, 0, n6, "late", 5, false, &n7, &cf) == NVM_WRITE_DELETED &&
			  !cf.newer_is_moved, "a writer learns that a deleted row vanished");
		nvm_txn_abort(&a);
	}
	nvm_slot_release(sa);
	nvm_slot_release(sb);
}

/*
 * scan_mismatches counts the version numbers of t below limit for which
 * nvm_scan_visible, with one cache for the whole walk as a scan keeps it,
 * answers otherwise than nvm_version_by_no and nvm_chain_visible on its
 * record, compared.
 */
static int
scan_mismatches(NvmTable *t, uint64_t limit, const NvmView *view)
{
	NvmScanCache c;
	int			bad = 0;

	memset(&c, 0, sizeof(c));
	for (uint64_t n = 0; n <= limit; n++)
	{
		NvmVersion *v = nvm_version_by_no(t, n);
		NvmVersion *want = (v != NULL && nvm_chain_visible(t, v->record_no, view) == v) ? v : NULL;

		if (nvm_scan_visible(t, n, view, &c) != want)
			bad++;
	}
	return bad;
}

/*
 * A scan's test of each version by number (nvm_scan_visible) answers as
 * the chain walk does, for every view: rows of several creators in runs
 * across segments of the version slots, rows updated and deleted after
 * them, a snapshot that sees some creators and not others, own rows by
 * command id, a subtransaction's rolled-back rows, a creator still running.
 */
static void
test_scan_visible(void)
{
	static NvmTableKey k = {1663, 5, 16390, 0};
	static NvmSnapshot s_none,
				s_a,
				s_ab,
				s_own;
	NvmTable	t;
	NvmTxn		a,
				b,
				c;
	NvmConflict cf;
	uint64_t	n,
				first_a = 0,
				limit;
	NvmView		v;

	nvm_txn_init(&a, nvm_slot_acquire(1));
	nvm_txn_init(&b, nvm_slot_acquire(2));
	nvm_txn_init(&c, nvm_slot_acquire(3));
	CHECK(nvm_table_create(&k, 0, &t), "table created");
	nvm_snapshot_take(&s_none);
	for (int i = 0; i < 1500; i++)
	{
		CHECK_QUIET(nvm_record_insert(&t, &a, 1, 0, "a", 2, &n) == NVM_WRITE_OK);
		if (i == 0)
			first_a = n;
	}
	nvm_txn_commit(&a);
	nvm_snapshot_take(&s_a);
	for (int i = 0; i < 1000; i++)
		CHECK_QUIET(nvm_record_insert(&t, &b, 1, 0, "b", 2, &n) == NVM_WRITE_OK);
	for (uint64_t no = first_a; no < first_a + 1500; no += 7)
		CHECK_QUIET(nvm_record_update(&t, &b, 1, 0, no, (no % 2) ? "u" : NULL, (no % 2) ? 2 : 0, false, &n, &cf) == NVM_WRITE_OK);
	nvm_txn_commit(&b);
	nvm_snapshot_take(&s_ab);
	/* c: rows and updates in commands 0 and 1, some rolled back, left running */
	for (int i = 0; i < 300; i++)
		CHECK_QUIET(nvm_record_insert(&t, &c, 1, (uint32_t) (i % 2), "c", 2, &n) == NVM_WRITE_OK);
	for (int i = 0; i < 50; i++)
		CHECK_QUIET(nvm_record_insert(&t, &c, 2, 1, "r", 2, &n) == NVM_WRITE_OK);
	for (uint64_t no = first_a + 3; no < first_a + 1500; no += 11)
	{
		NvmVersion *cur = nvm_chain_newest(&t, nvm_version_record_no(&t, no));

		if (cur != NULL && !nvm_version_is_tombstone(cur) && cur->txid != c.txid)
			CHECK_QUIET(nvm_record_update(&t, &c, 2, 1, cur->version_no, "x", 2, false, &n, &cf) == NVM_WRITE_OK);
	}
	nvm_txn_subxact_abort(&c, 2);
	limit = nvm_table_version_limit(&t) + 2;

	v = (NvmView) {NVM_VIEW_SNAPSHOT, &s_none, 0, 0, NULL, NULL, NULL};
	CHECK(scan_mismatches(&t, limit, &v) == 0, "scan test: a snapshot before every row");
	v.snap = &s_a;
	CHECK(scan_mismatches(&t, limit, &v) == 0, "scan test: a snapshot that sees the first creator only");
	v.snap = &s_ab;
	CHECK(scan_mismatches(&t, limit, &v) == 0, "scan test: a snapshot that sees both committed creators");
	for (uint32_t cid = 0; cid <= 2; cid++)
	{
		v = (NvmView) {NVM_VIEW_SNAPSHOT, &s_own, c.txid, cid, NULL, NULL, NULL};
		nvm_snapshot_take(&s_own);
		CHECK(scan_mismatches(&t, limit, &v) == 0, "scan test: the running creator's own view, by command");
	}
	v = (NvmView) {NVM_VIEW_SELF, NULL, 0, 0, NULL, NULL, NULL};
	CHECK(scan_mismatches(&t, limit, &v) == 0, "scan test: a view of what committed");
	v.kind = NVM_VIEW_DIRTY;
	CHECK(scan_mismatches(&t, limit, &v) == 0, "scan test: a dirty view");
	nvm_txn_abort(&c);
	v = (NvmView) {NVM_VIEW_SNAPSHOT, &s_own, 0, 0, NULL, NULL, NULL};
	nvm_snapshot_take(&s_own);
	CHECK(scan_mismatches(&t, limit, &v) == 0, "scan test: after the running creator aborted");
	nvm_table_drop(&k);
	nvm_slot_release(a.slot);
	nvm_slot_release(b.slot);
	nvm_slot_release(c.slot);
}

static void
test_recovery(void)
{
	NvmTable	t;
	NvmTxn		a;
	int			sa = nvm_slot_acquire(1);
	uint64_t	n,
				txid_before,
				committed_txid,
				bytes_before_inflight = 0;
	static NvmSnapshot snap;
	NvmView		v;

	nvm_txn_init(&a, sa);
	CHECK(nvm_table_open(&key1, &t), "table survives");
	CHECK(nvm_record_insert(&t, &a, 1, 0, "committed", 10, &n) == NVM_WRITE_OK, "insert to commit");
	committed_txid = a.txid;
	nvm_txn_commit(&a);
	{
		NvmAllocStats st;

		nvm_alloc_get_stats(&st);
		bytes_before_inflight = st.bytes_allocated;
	}
	CHECK(nvm_record_insert(&t, &a, 1, 0, "inflight", 9, &n) == NVM_WRITE_OK, "insert left in flight");
	txid_before = a.txid;

	/* crash: the process state is gone; the pool stays */
	nvm_pool_close();
	{
		char		err[256];

		CHECK(open_pool(64 << 20, SYSID, cur_mode, err) == NVM_POOL_OK, "pool reopens after crash");
	}
	unit_start_core();
	CHECK(nvm_status_get(txid_before) == NVM_STATUS_ABORTED, "transaction in flight at the crash is aborted");
	{
		NvmAllocStats st;

		nvm_alloc_get_stats(&st);
		CHECK(st.bytes_allocated == bytes_before_inflight, "the space of the aborted transaction comes back at recovery");
	}
	CHECK(nvm_status_get(committed_txid) == NVM_STATUS_COMMITTED, "committed transaction stays committed");
	CHECK(nvm_table_open(&key1, &t), "table found after restart");
	nvm_txn_init(&a, nvm_slot_acquire(1));
	v = snapshot_view(&snap, &a, 0);
	{
		int			seen_committed = 0,
					seen_inflight = 0;

		for (uint64_t r = 1; r < nvm_table_record_limit(&t); r++)
		{
			NvmVersion *x = nvm_chain_visible(&t, r, &v);

			if (x && strcmp(x->data, "committed") == 0)
				seen_committed++;
			if (x && strcmp(x->data, "inflight") == 0)
				seen_inflight++;
		}
		CHECK(seen_committed == 1 && seen_inflight == 0, "after recovery committed rows are there, in-flight ones are not");
	}
	nvm_txn_begin_write(&a);
	CHECK(nvm_txid_clock_id(a.txid) == nvm_txid_clock_id(txid_before) &&
		  nvm_txid_clock_ts(a.txid) > nvm_txid_clock_ts(txid_before), "clocks never go back across a crash");
	nvm_txn_abort(&a);
	{
		uint64_t	n2;

		CHECK(nvm_record_insert(&t, &a, 1, 0, "after", 6, &n2) == NVM_WRITE_OK && n2 > n,
			  "version numbers are not reused after a crash");
		nvm_txn_commit(&a);
	}
}

/*
 * count rows whose data equals text (every row if text is NULL), as a
 * fresh snapshot sees them
 */
static int
count_rows(NvmTable *t, const char *text)
{
	static NvmSnapshot snap;
	NvmView		v = {NVM_VIEW_SNAPSHOT, &snap, 0, 0, NULL, NULL, NULL};
	int			n = 0;

	nvm_snapshot_take(&snap);
	for (uint64_t r = 1; r < nvm_table_record_limit(t); r++)
	{
		NvmVersion *x = nvm_chain_visible(t, r, &v);

		if (x && !nvm_version_is_tombstone(x) && (text == NULL || strcmp(x->data, text) == 0))
			n++;
	}
	return n;
}

static void
test_drop_and_kill(void)
{
	NvmTableKey k = {1663, 5, 777, 0};
	NvmTable	t;
	NvmTxn		a;
	NvmAllocStats before,
				filled,
				after;
	uint64_t	n = 0;
	char		row[500];

	memset(row, 'd', sizeof(row));
	row[sizeof(row) - 1] = 0;
	nvm_txn_init(&a, nvm_slot_acquire(7));
	{
		/* the slot's write-log block is allocated once and kept: allocate it first */
		NvmTableKey warm = {1663, 5, 778, 0};
		NvmTable	w;

		nvm_table_create(&warm, 0, &w);
		for (int i = 0; i < 3000; i++)
			nvm_record_insert(&w, &a, 1, 0, "warm", 5, &n);
		nvm_txn_commit(&a);
	}
	nvm_alloc_get_stats(&before);
	nvm_table_create(&k, 0, &t);
	for (int i = 0; i < 3000; i++)
		nvm_record_insert(&t, &a, 1, 0, row, sizeof(row), &n);
	nvm_txn_commit(&a);
	nvm_alloc_get_stats(&filled);
	CHECK(filled.bytes_allocated > before.bytes_allocated + 3000 * 500, "a filled table uses space");
	CHECK(nvm_table_drop(&k) && !nvm_table_open(&k, &t), "a dropped table is gone");
	nvm_alloc_get_stats(&after);
	CHECK(after.bytes_allocated == before.bytes_allocated, "dropping a table gives back all its space");
	CHECK(!nvm_table_drop(&k), "dropping twice finds nothing");

	/* kill: a speculative insertion that lost its race disappears at once */
	nvm_table_create(&k, 0, &t);
	nvm_record_insert(&t, &a, 1, 0, "spec", 5, &n);
	CHECK(nvm_record_kill(&t, &a, n), "own version can be killed");
	{
		static NvmSnapshot snap;
		NvmView		v = {NVM_VIEW_SNAPSHOT, &snap, a.txid, 5, NULL, NULL, NULL};

		nvm_snapshot_take(&snap);
		CHECK(nvm_chain_visible(&t, 1, &v) == NULL, "a killed version is invisible even to its own transaction");
	}
	nvm_txn_commit(&a);
	CHECK(count_rows(&t, "spec") == 0, "a killed version stays invisible after commit");
	nvm_table_drop(&k);
	nvm_slot_release(a.slot);
}

/*
 * test_lock_words: a table has no row-lock words until one is asked for
 * with create; words start at zero, keep what is written to them (also
 * far apart, in another segment), are not copied by a clone, and their
 * space goes back with the table.
 */
static void
test_lock_words(void)
{
	NvmTableKey k = {1663, 5, 779, 0};
	NvmTableKey kc = {1700, 5, 780, 0};
	NvmTable	t;
	NvmTable	c;
	NvmAllocStats before,
				after;
	_Atomic uint64_t *w1;
	_Atomic uint64_t *w2;

	nvm_alloc_get_stats(&before);
	nvm_table_create(&k, 0, &t);
	CHECK(nvm_record_lock_word(&t, 1, false) == NULL, "a new table has no lock words");
	w1 = nvm_record_lock_word(&t, 1, true);
	w2 = nvm_record_lock_word(&t, 5000, true);
	CHECK(w1 != NULL && w2 != NULL && w1 != w2 && atomic_load(w1) == 0 && atomic_load(w2) == 0,
		  "lock words are created zeroed");
	atomic_store(w1, 42);
	atomic_store(w2, 43);
	CHECK(nvm_record_lock_word(&t, 1, false) == w1 && atomic_load(nvm_record_lock_word(&t, 5000, false)) == 43,
		  "a lock word keeps its value");
	CHECK(nvm_record_lock_word(&t, 100000, false) == NULL, "a word of a segment never created is missing");
	CHECK(nvm_table_clone(&t, &kc, 0, NULL, 1, &c) && nvm_record_lock_word(&c, 1, false) == NULL,
		  "a clone starts without lock words");
	nvm_table_drop(&kc);
	nvm_table_drop(&k);
	nvm_alloc_get_stats(&after);
	CHECK(after.bytes_allocated == before.bytes_allocated, "dropping a table gives back its lock words");
}

/*
 * same_version says whether two versions hold the same header (prev
 * aside) and data.
 */
static bool
same_version(const NvmVersion *a, const NvmVersion *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return a->txid == b->txid &&
		atomic_load(&((NvmVersion *) a)->info) == atomic_load(&((NvmVersion *) b)->info) &&
		a->record_no == b->record_no && a->version_no == b->version_no &&
		a->index_root == b->index_root && a->data_len == b->data_len &&
		a->external_id == b->external_id && memcmp(a->data, b->data, a->data_len) == 0 &&
		(a->prev == 0) == (b->prev == 0);
}

/*
 * same_table compares every version slot, record head and chain of two
 * tables: the clone must mean by every number what the original means.
 */
static bool
same_table(NvmTable *a, NvmTable *b)
{
	if (nvm_table_version_limit(a) != nvm_table_version_limit(b) ||
		nvm_table_record_limit(a) != nvm_table_record_limit(b) ||
		atomic_load(&a->desc->free_records) != atomic_load(&b->desc->free_records))
		return false;
	for (uint64_t n = 1; n < nvm_table_version_limit(a); n++)
	{
		uint64_t	sa = atomic_load(nvm_version_slot(a, n));
		uint64_t	sb = atomic_load(nvm_version_slot(b, n));

		if ((sa & NVM_TAG_MASK) != (sb & NVM_TAG_MASK) ||
			((sa & NVM_TAG_MASK) != 0 && sa != sb) ||
			(sa == 0) != (sb == 0))
			return false;
		if (!same_version(nvm_version_by_no(a, n), nvm_version_by_no(b, n)) ||
			nvm_version_record_no(a, n) != nvm_version_record_no(b, n))
			return false;
		if (sa != 0 && (sa & NVM_TAG_MASK) == 0 && sa == sb)
			return false;		/* a copy is a block of its own */
	}
	for (uint64_t r = 1; r < nvm_table_record_limit(a); r++)
	{
		uint64_t	ha = atomic_load(nvm_record_head_slot(a, r));
		uint64_t	hb = atomic_load(nvm_record_head_slot(b, r));
		NvmVersion *va = nvm_ptr(nvm_record_head(a, r));
		NvmVersion *vb = nvm_ptr(nvm_record_head(b, r));

		if ((ha & NVM_TAG_MASK) != (hb & NVM_TAG_MASK) ||
			((ha & NVM_TAG_MASK) == NVM_TAG_FREE && ha != hb))
			return false;
		for (; va != NULL || vb != NULL; va = nvm_ptr(va->prev), vb = nvm_ptr(vb->prev))
		{
			if (!same_version(va, vb))
				return false;
		}
	}
	return true;
}

/*
 * test_clone: nvm_table_clone (SET TABLESPACE) copies a table with chains,
 * deleted rows, collected versions (redirects and free numbers) and a
 * running transaction's versions, keeping every number; the running
 * transaction's copies get its final status; the original's freed version
 * numbers and the numbers a clone hands out are never handed out by the
 * original again; a dropped original leaves the clone intact; the sweep
 * drops temporary and empties unlogged tables.
 */
static void
test_clone(void)
{
	NvmTableKey ka = {1663, 5, 3000, NVM_KEY_PAD(NVM_KIND_PERMANENT, 0)};
	NvmTableKey kb = {1700, 5, 3001, NVM_KEY_PAD(NVM_KIND_PERMANENT, 0)};
	NvmTableKey kc = {1663, 5, 3002, NVM_KEY_PAD(NVM_KIND_PERMANENT, 0)};
	NvmTableKey kt = {1663, 5, 3000, NVM_KEY_PAD(NVM_KIND_TEMP, 7)};
	NvmTableKey ku = {1663, 5, 3003, NVM_KEY_PAD(NVM_KIND_UNLOGGED, 0)};
	NvmTable	a,
				b,
				c,
				t,
				u;
	NvmTxn		x;
	NvmConflict cf;
	NvmHorizon	h;
	NvmGcCounts counts;
	NvmAllocStats before,
				after;
	uint64_t	n,
				vno[200],
				own_insert,
				own_update,
				limit_b,
				new_no;
	char		row[32];
	static NvmSnapshot snap;
	NvmView		v;
	NvmSweepResult sweep;

	nvm_txn_init(&x, nvm_slot_acquire(11));
	nvm_alloc_get_stats(&before);
	CHECK(nvm_table_create(&ka, 0, &a), "clone: original created");
	/* a temporary table with the same relfilenode is another table */
	CHECK(nvm_table_create(&kt, 0, &t) && t.desc != a.desc, "a temporary key is a table of its own");
	CHECK(nvm_table_open(&ka, &b) && b.desc == a.desc, "the permanent key still finds the original");
	for (int i = 0; i < 200; i++)
	{
		snprintf(row, sizeof(row), "row %d", i);
		nvm_record_insert(&a, &x, 1, 0, row, strlen(row) + 1, &vno[i]);
	}
	nvm_txn_commit(&x);
	for (int i = 0; i < 200; i += 3)
	{
		snprintf(row, sizeof(row), "row %d+", i);
		nvm_record_update(&a, &x, 1, 0, vno[i], row, strlen(row) + 1, i % 2 == 0, &n, &cf);
		vno[i] = n;
	}
	nvm_txn_commit(&x);
	for (int i = 0; i < 200; i += 3)
	{
		snprintf(row, sizeof(row), "row %d+", i);
		nvm_record_update(&a, &x, 1, 0, vno[i], row, strlen(row) + 1, false, &n, &cf);
		vno[i] = n;
	}
	for (int i = 1; i < 200; i += 7)
		nvm_record_update(&a, &x, 1, 0, vno[i], NULL, 0, false, &n, &cf);
	nvm_txn_commit(&x);
	/* collection: redirects for index roots, free numbers for the rest */
	CHECK(nvm_gc_horizon(&h), "clone: horizon");
	memset(&counts, 0, sizeof(counts));
	for (uint64_t r = 1; r < nvm_table_record_limit(&a); r++)
		nvm_gc_prune_chain(&a, r, &h, &counts);
	CHECK((atomic_load(&a.desc->free_versions) & NVM_FREE_NUMBER_MASK) != 0,
		  "clone: the original has free version numbers");
	/* a running transaction's versions */
	nvm_record_insert(&a, &x, 1, 0, "own insert", 11, &own_insert);
	nvm_record_update(&a, &x, 1, 1, vno[5], "own update", 11, true, &own_update, &cf);

	CHECK(nvm_table_clone(&a, &kb, 0, &x, 1, &b), "clone: cloned");
	CHECK(b.desc != a.desc && nvm_table_open(&kb, &c) && c.desc == b.desc, "clone: found by its key");
	limit_b = nvm_table_version_limit(&b);
	CHECK((atomic_load(&a.desc->free_versions) & NVM_FREE_NUMBER_MASK) == 0,
		  "clone: the original's free version numbers went to the clone");
	atomic_store(&a.desc->free_versions, atomic_load(&b.desc->free_versions));
	CHECK(same_table(&a, &b), "clone: every number means the same in the clone");
	atomic_store(&a.desc->free_versions, (uint64_t) 0);
	nvm_txn_commit(&x);
	CHECK((atomic_load(&nvm_version_by_no(&b, own_insert)->info) & NVM_VINFO_STATUS_MASK) == NVM_STATUS_COMMITTED &&
		  (atomic_load(&nvm_version_by_no(&b, own_update)->info) & NVM_VINFO_STATUS_MASK) == NVM_STATUS_COMMITTED,
		  "clone: the running transaction's copies got its final status");
	v = (NvmView) {NVM_VIEW_SNAPSHOT, &snap, 0, 0, NULL, NULL, NULL};
	nvm_snapshot_take(&snap);
	CHECK(nvm_chain_visible(&b, nvm_version_by_no(&b, own_update)->record_no, &v) ==
		  nvm_version_by_no(&b, own_update), "clone: the committed update is visible in the clone");

	/*
	 * The clone's new numbers (popped from the free list it took over, or
	 * from its counter) are never handed out by the original, which is the
	 * table again if the move rolls back.
	 */
	{
		uint64_t	clone_nos[300];
		bool		reused = false;

		for (int i = 0; i < 300; i++)
			nvm_record_insert(&b, &x, 1, 0, "in the clone", 13, &clone_nos[i]);
		nvm_txn_abort(&x);
		CHECK(clone_nos[299] >= limit_b && nvm_table_version_limit(&a) > clone_nos[299],
			  "clone: the original's counter is above every number the clone took");
		for (int i = 0; i < 300; i++)
		{
			nvm_record_insert(&a, &x, 1, 0, "in the original", 16, &n);
			for (int j = 0; j < 300; j++)
				reused |= (n == clone_nos[j]);
		}
		nvm_txn_commit(&x);
		CHECK(!reused, "clone: the original (rolled back to) reuses none of the clone's numbers");
	}

	/* a clone of a clone raises both originals; dropping the original unlinks */
	CHECK(nvm_table_clone(&b, &kc, 0, NULL, 1, &c), "clone: a clone of the clone");
	nvm_record_insert(&c, &x, 1, 0, "in clone 2", 11, &new_no);
	nvm_txn_commit(&x);
	CHECK(nvm_table_version_limit(&b) > new_no && nvm_table_version_limit(&a) > new_no,
		  "clone: both originals' counters are raised");
	CHECK(nvm_table_drop(&kb) && atomic_load(&c.desc->number_floor_of) == 0,
		  "clone: dropping the original unlinks its clone");
	CHECK(count_rows(&c, "own insert") == 1 && count_rows(&c, "in clone 2") == 1 &&
		  count_rows(&c, "row 3+") == 1 && count_rows(&c, "row 1") == 0,
		  "clone: the clone's rows are intact after the original is gone");

	/* the start-up sweep: temporary tables dropped, unlogged ones emptied */
	CHECK(nvm_table_create(&ku, 0, &u), "sweep: unlogged table created");
	nvm_record_insert(&u, &x, 1, 0, "unlogged", 9, &n);
	nvm_record_insert(&t, &x, 1, 0, "temporary", 10, &n);
	nvm_txn_commit(&x);
	nvm_table_sweep(false, &sweep);
	CHECK(sweep.temp_dropped == 1 && sweep.unlogged_emptied == 0 && !nvm_table_open(&kt, &t) &&
		  nvm_table_open(&ku, &u) && count_rows(&u, "unlogged") == 1,
		  "sweep after a clean shutdown: the temporary table is gone, the unlogged one kept");
	nvm_table_sweep(true, &sweep);
	CHECK(sweep.temp_dropped == 0 && sweep.unlogged_emptied == 1 && nvm_table_open(&ku, &u) &&
		  nvm_table_record_limit(&u) == 1 && nvm_table_open(&ka, &a) && nvm_table_open(&kc, &c),
		  "sweep after a crash: the unlogged table is empty, permanent ones stay");
	nvm_table_drop(&ka);
	nvm_table_drop(&kc);
	nvm_table_drop(&ku);
	nvm_alloc_get_stats(&after);
	CHECK(after.bytes_allocated <= before.bytes_allocated + sizeof(NvmWriteLogBlock) + 64,
		  "clone: dropping every table gives the space back");
	nvm_slot_release(x.slot);
}

static int	resolver_answer = -1;
static uint64_t resolver_asked = 0;

static int
test_resolver(uint64_t xid)
{
	resolver_asked = xid;
	return resolver_answer;
}

/* crash: forget the process state, reopen the pool, run recovery */
static void
crash_and_restart(void)
{
	char		err[256];

	nvm_pool_close();
	CHECK(open_pool(64 << 20, SYSID, cur_mode, err) == NVM_POOL_OK, "pool reopens after crash");
	unit_start_core();
}

static void
test_indoubt(void)
{
	NvmTableKey k = {1663, 5, 900, 0};
	NvmTable	t;
	NvmTxn		a;
	uint64_t	n,
				txid;
	int			slot;

	for (int outcome = 1; outcome >= 0; outcome--)
	{
		const char *text = outcome ? "ext-committed" : "ext-aborted";

		slot = nvm_slot_acquire(9);
		nvm_txn_init(&a, slot);
		nvm_table_create(&k, 0, &t);
		nvm_record_insert(&t, &a, 1, 0, text, (uint32_t) strlen(text) + 1, &n);
		txid = a.txid;
		nvm_txn_mark_indoubt(&a, 4242);
		/* the external log commits (or not); the server crashes before the nvm status */
		crash_and_restart();
		CHECK(nvm_indoubt_pending(), "a transaction in doubt at the crash is kept for resolution");
		CHECK(nvm_status_get(txid) == NVM_STATUS_RUNNING, "recovery does not abort an in-doubt transaction");
		CHECK(nvm_slot_acquire(1) != slot || false, "its slot is not handed out before resolution");
		resolver_answer = -1;
		CHECK(nvm_indoubt_resolve_all(test_resolver) == 1 && resolver_asked == 4242,
			  "an unanswerable resolver leaves it in doubt");
		resolver_answer = outcome;
		CHECK(nvm_indoubt_resolve_all(test_resolver) == 0 && !nvm_indoubt_pending(), "resolution finishes it");
		nvm_table_open(&k, &t);
		CHECK(count_rows(&t, text) == outcome, outcome ?
			  "an in-doubt transaction whose external xid committed is committed" :
			  "an in-doubt transaction whose external xid did not commit is aborted");
		CHECK(nvm_status_get(txid) == (outcome ? NVM_STATUS_COMMITTED : NVM_STATUS_ABORTED),
			  "its status is final");
		crash_and_restart();
		CHECK(!nvm_indoubt_pending(), "a resolved transaction is not in doubt after the next restart");
		nvm_table_open(&k, &t);
		CHECK(count_rows(&t, text) == outcome, "the outcome survives the next restart");
		nvm_table_drop(&k);
	}

	/* a marker is stale once the transaction completes normally */
	slot = nvm_slot_acquire(9);
	nvm_txn_init(&a, slot);
	nvm_table_create(&k, 0, &t);
	nvm_record_insert(&t, &a, 1, 0, "normal", 7, &n);
	nvm_txn_mark_indoubt(&a, 77);
	nvm_txn_commit(&a);
	crash_and_restart();
	CHECK(!nvm_indoubt_pending(), "a transaction that committed after marking is not in doubt");
	nvm_table_open(&k, &t);
	CHECK(count_rows(&t, "normal") == 1, "and its rows are there");
	nvm_table_drop(&k);
}

/*
 * test_indoubt_reused_xid: the external log hands an in-doubt
 * transaction's xid out again (a crash lost every record carrying it) and
 * aborts the marker before it commits the new owner
 * (nvm_indoubt_abort_external); the marker's transaction is then aborted,
 * whatever the external log says about the xid afterwards.
 */
static void
test_indoubt_reused_xid(void)
{
	NvmTableKey k = {1663, 5, 903, 0};
	NvmTable	t;
	NvmTxn		a;
	uint64_t	n,
				txid;
	uint64_t	xids[2] = {554, 555};
	int			slot = nvm_slot_acquire(9);

	nvm_txn_init(&a, slot);
	nvm_table_create(&k, 0, &t);
	nvm_record_insert(&t, &a, 1, 0, "reused", 7, &n);
	txid = a.txid;
	nvm_txn_mark_indoubt(&a, 555);
	crash_and_restart();
	CHECK(nvm_indoubt_pending(), "reused xid: the transaction is in doubt after the crash");
	CHECK(nvm_indoubt_abort_external(xids, 1) == 0 && nvm_indoubt_pending(),
		  "reused xid: a commit of another xid leaves it in doubt");
	CHECK(nvm_indoubt_abort_external(xids, 2) == 1 && !nvm_indoubt_pending(),
		  "reused xid: a commit of its xid resolves it first");
	CHECK(nvm_status_get(txid) == NVM_STATUS_ABORTED, "reused xid: as aborted");
	resolver_answer = 1;
	CHECK(nvm_indoubt_resolve_all(test_resolver) == 0, "reused xid: nothing left to resolve");
	nvm_table_open(&k, &t);
	CHECK(count_rows(&t, "reused") == 0, "reused xid: its rows stay invisible although the xid committed later");
	crash_and_restart();
	nvm_table_open(&k, &t);
	CHECK(count_rows(&t, "reused") == 0, "reused xid: also after the next restart");
	nvm_table_drop(&k);
}

/*
 * test_indexlog: a slot's ring of index roots (appending, dropping what the
 * external log made durable, refusing what does not fit) and the repair
 * list that recovery builds from the rings.
 */
static void
test_indexlog(void)
{
	NvmTableKey k = {1663, 5, 904, 0};
	NvmTableKey gone = {1663, 5, 905, 0};
	NvmTable	t,
				g;
	NvmTxn		a;
	NvmIndexLogEntry e[10];
	uint64_t	v[10];
	int			slot = nvm_slot_acquire(9);
	char		data[16];

	nvm_indexlog_set_capacity(8);
	nvm_txn_init(&a, slot);
	nvm_table_create(&k, 0, &t);
	nvm_table_create(&gone, 0, &g);
	for (int i = 0; i < 10; i++)
	{
		snprintf(data, sizeof(data), "root%d", i);
		nvm_record_insert(&t, &a, 1, 0, data, (uint32_t) strlen(data) + 1, &v[i]);
		e[i].table = nvm_off_of(t.desc);
		e[i].version_no = v[i];
		e[i].lsn = i < 5 ? 100 : 200;
	}
	nvm_txn_commit(&a);

	CHECK(nvm_indexlog_pending((uint32_t) slot) == 0, "indexlog: a slot has no entries at first");
	CHECK(nvm_indexlog_append((uint32_t) slot, e, 5, 0) && nvm_indexlog_pending((uint32_t) slot) == 5,
		  "indexlog: entries are appended");
	CHECK(!nvm_indexlog_append((uint32_t) slot, e + 5, 4, 99) && nvm_indexlog_pending((uint32_t) slot) == 5,
		  "indexlog: a full ring of entries not yet durable refuses more");
	CHECK(nvm_indexlog_append((uint32_t) slot, e + 5, 4, 100) && nvm_indexlog_pending((uint32_t) slot) == 4,
		  "indexlog: entries made durable by the external log are dropped for new ones");
	CHECK(!nvm_indexlog_append((uint32_t) slot, e, 9, 1000),
		  "indexlog: more entries than the ring holds are refused");
	CHECK(nvm_indexlog_room((uint32_t) slot) == 8, "indexlog: the ring keeps its capacity");

	/* an entry of a table dropped before the crash, and a duplicate */
	e[9].table = nvm_off_of(g.desc);
	CHECK(nvm_indexlog_append((uint32_t) slot, e + 8, 2, 0), "indexlog: a duplicate and another table's entry");
	nvm_table_drop(&gone);

	crash_and_restart();
	CHECK(nvm_indexlog_recover(false) == 4, "indexlog: recovery lists each root not known durable, once");
	nvm_table_open(&k, &t);
	CHECK(nvm_repair_list() != NULL && nvm_repair_count_for(nvm_off_of(t.desc)) == 4 &&
		  nvm_repair_names(nvm_off_of(t.desc), v[5]) && nvm_repair_names(nvm_off_of(t.desc), v[8]) && !nvm_repair_names(nvm_off_of(t.desc), v[0]),
		  "indexlog: the repair list names the roots whose log may be lost");
	CHECK(nvm_indexlog_pending((uint32_t) slot) == 0, "indexlog: recovery empties the rings");

	/* new entries after the restart; a clean stop keeps the list, not them */
	slot = nvm_slot_acquire(9);
	CHECK(nvm_indexlog_append((uint32_t) slot, e, 2, 0), "indexlog: the ring is used again after recovery");
	crash_and_restart();
	CHECK(nvm_indexlog_recover(true) == 4 && nvm_indexlog_pending((uint32_t) slot) == 0,
		  "indexlog: after a clean stop the unrepaired list stays and the rings are emptied");
	nvm_table_open(&k, &t);
	CHECK(!nvm_repair_names(nvm_off_of(t.desc), v[0]), "indexlog: ... without the entries of the clean stop");

	CHECK(nvm_repair_done(nvm_off_of(t.desc)) == 4 && nvm_repair_count_for(nvm_off_of(t.desc)) == 0 &&
		  nvm_repair_list() == NULL, "indexlog: repaired entries leave the list");
	crash_and_restart();
	CHECK(nvm_indexlog_recover(false) == 0 && nvm_pool_root()->index_repair_off == 0,
		  "indexlog: a list with nothing left is freed at the next start");
	nvm_indexlog_set_capacity(0);
	nvm_table_drop(&k);
}

/*
 * test_indexlog_external: external entries ride in the rings with index
 * roots, are dropped with them once the external log is durable, and
 * recovery after a crash keeps those not known durable, in order, in the
 * external list (not in the repair list) until they are cleared; after a
 * clean stop the list stays as it is.
 */
static void
test_indexlog_external(void)
{
	NvmTableKey k = {1663, 5, 906, 0};
	NvmTable	t;
	NvmTxn		a;
	NvmIndexLogEntry e[4];
	NvmExternalList *list;
	uint64_t	v;
	int			slot = nvm_slot_acquire(10);

	nvm_indexlog_set_capacity(8);
	nvm_txn_init(&a, slot);
	nvm_table_create(&k, 0, &t);
	nvm_record_insert(&t, &a, 1, 0, "x", 2, &v);
	nvm_txn_commit(&a);
	e[0].table = nvm_off_of(t.desc);
	e[0].version_no = v;
	e[0].lsn = 300;
	for (int i = 1; i < 4; i++)
	{
		e[i].table = NVM_INDEXLOG_EXTERNAL | (uint64_t) (0x100 + i);
		e[i].version_no = 1000 + (uint64_t) i;
		e[i].lsn = i == 1 ? 100 : 300;
	}

	CHECK(nvm_indexlog_append((uint32_t) slot, e + 1, 1, 0), "external: an entry is appended");
	CHECK(nvm_indexlog_append((uint32_t) slot, e, 1, 0) && nvm_indexlog_append((uint32_t) slot, e + 2, 2, 100) &&
		  nvm_indexlog_pending((uint32_t) slot) == 3,
		  "external: entries whose log is durable are dropped with the roots");
	CHECK(nvm_external_list() == NULL, "external: no list before a crash");

	crash_and_restart();
	CHECK(nvm_indexlog_recover(false) == 1, "external: recovery lists the index root alone for repair");
	list = nvm_external_list();
	CHECK(list != NULL && list->count == 2 &&
		  atomic_load(&list->entries[0].word0) == e[2].table && list->entries[0].word1 == e[2].version_no &&
		  atomic_load(&list->entries[1].word0) == e[3].table && list->entries[1].word1 == e[3].version_no,
		  "external: the external list holds the entries not known durable, in ring order");
	CHECK(nvm_indexlog_pending((uint32_t) slot) == 0, "external: recovery empties the rings");

	/* a crash before they are cleared: kept, with the new ones after */
	slot = nvm_slot_acquire(10);
	e[1].lsn = 400;
	CHECK(nvm_indexlog_append((uint32_t) slot, e + 1, 1, 0), "external: the ring takes new entries");
	crash_and_restart();
	(void) nvm_indexlog_recover(false);
	list = nvm_external_list();
	CHECK(list != NULL && list->count == 3 && atomic_load(&list->entries[2].word0) == e[1].table,
		  "external: a second crash keeps the uncleared entries and adds the new ones");

	CHECK(nvm_external_clear(0, 2) == 2 && nvm_external_clear(0, 2) == 0 && nvm_external_list() != NULL,
		  "external: entries are cleared once");
	crash_and_restart();
	(void) nvm_indexlog_recover(true);
	list = nvm_external_list();
	CHECK(list != NULL && list->count == 3 && atomic_load(&list->entries[2].word0) == e[1].table,
		  "external: a clean stop keeps the list as it is");
	CHECK(nvm_external_clear(2, 1) == 1 && nvm_external_list() == NULL, "external: a list with every entry cleared is empty");
	crash_and_restart();
	(void) nvm_indexlog_recover(true);
	CHECK(nvm_pool_root()->external_off == 0, "external: ... and freed at the next start");
	nvm_repair_done(nvm_off_of(t.desc));
	nvm_indexlog_set_capacity(0);
	nvm_table_drop(&k);
}

/*
 * test_inlined_status_wins: recovery never reclaims a version whose own
 * inlined status says committed, whatever the status store says (here the
 * status-array entry is damaged to RUNNING after the commit).
 */
static void
test_inlined_status_wins(void)
{
	NvmTableKey k = {1663, 5, 901, 0};
	NvmTable	t;
	NvmTxn		a;
	uint64_t	n,
				ts;
	int			slot = nvm_slot_acquire(9);
	NvmSlotPersist *sp = nvm_pool_slot((uint32_t) slot);
	uint64_t	ring_txns = (uint64_t) nvm_pool_header->ring_words * NVM_STATUS_PER_WORD;

	nvm_txn_init(&a, slot);
	nvm_table_create(&k, 0, &t);
	nvm_record_insert(&t, &a, 1, 0, "kept", 5, &n);
	ts = nvm_txid_clock_ts(a.txid);
	nvm_txn_commit(&a);
	nvm_drain();
	nvm_status_word_set(((_Atomic uint64_t *) nvm_ptr(sp->ring_off)) + (ts % ring_txns) / NVM_STATUS_PER_WORD,
						(int) ((ts % ring_txns) % NVM_STATUS_PER_WORD), NVM_STATUS_RUNNING);
	crash_and_restart();
	nvm_table_open(&k, &t);
	CHECK(count_rows(&t, "kept") == 1, "recovery keeps a version whose inlined status is committed");
	nvm_table_drop(&k);
}

/*
 * test_nt_versions: with non-temporal version writes (DBX-N's technique,
 * nvm.commit_variant = dbxn) rows of every size are written and read back
 * exactly, inserted one by one, in a batch and by updates; each row starts
 * on a cache line of its own in a block padded to 64 bytes (256 above
 * 256), is counted as written by non-temporal stores and not flushed, and
 * the pool's integrity check finds nothing; the rows stay after a restart,
 * and cached writes follow again once the setting is back.
 */
static void
test_nt_versions(void)
{
	NvmTableKey k = {1663, 5, 905, 0};
	NvmTable	t;
	NvmTxn		a;
	static const uint32_t lens[] = {1, 8, 63, 64, 65, 190, 200, 300, 1000, 4000};
	enum {NLENS = sizeof(lens) / sizeof(lens[0])};
	uint64_t	nos[NLENS];
	char		row[4000];
	const char *problem;
	NvmPersistStats before;
	bool		all_aligned = true;
	bool		all_exact = true;

	nvm_table_create(&k, 0, &t);
	nvm_txn_init(&a, nvm_slot_acquire(16));
	nvm_persist_set_version_writes(NVM_WRITES_NONTEMPORAL);
	before = nvm_persist_stats;
	for (int i = 0; i < NLENS; i++)
	{
		memset(row, 'a' + i, lens[i]);
		CHECK(nvm_record_insert(&t, &a, 1, 0, row, lens[i], &nos[i]) == NVM_WRITE_OK, "nt: insert");
	}
	{
		/* a batch of the same rows */
		const void *data[NLENS];
		uint32_t	len[NLENS];
		uint64_t	vnos[NLENS];
		int			done;

		for (int i = 0; i < NLENS; i++)
		{
			data[i] = row;
			len[i] = lens[i];
		}
		memset(row, 'b', sizeof(row));
		CHECK(nvm_record_insert_many(&t, &a, 1, 0, NLENS, data, len, vnos, &done) == NVM_WRITE_OK &&
			  done == NLENS, "nt: batch insert");
		for (int i = 0; i < NLENS; i++)
		{
			NvmVersion *v = nvm_version_by_no(&t, vnos[i]);

			all_exact &= v->data_len == lens[i] && memcmp(v->data, row, lens[i]) == 0;
			all_aligned &= ((uintptr_t) v->data % NVM_CACHELINE) == 0;
		}
	}
	nvm_txn_commit(&a);
	CHECK(nvm_persist_stats.nt_lines > before.nt_lines, "nt: rows are written by non-temporal stores");
	{
		/* a 4,000-byte row: its 63 lines are not flushed, only its header's */
		uint64_t	n,
					nt_flushed,
					cached_flushed;

		memset(row, 'c', sizeof(row));
		before = nvm_persist_stats;
		nvm_record_insert(&t, &a, 1, 0, row, 4000, &n);
		nt_flushed = nvm_persist_stats.lines - before.lines;
		nvm_persist_set_version_writes(NVM_WRITES_CACHED);
		nvm_txn_commit(&a);
		before = nvm_persist_stats;
		nvm_record_insert(&t, &a, 1, 0, row, 4000, &n);
		cached_flushed = nvm_persist_stats.lines - before.lines;
		nvm_txn_commit(&a);
		nvm_persist_set_version_writes(NVM_WRITES_NONTEMPORAL);
		CHECK(cached_flushed >= nt_flushed + 62,
			  "nt: a row's lines are not flushed, only its header's line");
	}
	for (int i = 0; i < NLENS; i++)
	{
		NvmVersion *v = nvm_version_by_no(&t, nos[i]);
		uint64_t	n;
		NvmConflict cf;
		uint32_t	newlen = lens[NLENS - 1 - i];

		memset(row, 'a' + i, lens[i]);
		all_exact &= v->data_len == lens[i] && memcmp(v->data, row, lens[i]) == 0;
		all_aligned &= ((uintptr_t) v->data % NVM_CACHELINE) == 0;
		/* the zeros of the padding follow the row up to its line's end */
		for (uint32_t j = lens[i]; j % NVM_CACHELINE != 0; j++)
			all_exact &= v->data[j] == 0;
		memset(row, 'A' + i, newlen);
		CHECK(nvm_record_update(&t, &a, 1, 0, nos[i], row, newlen, false, &n, &cf) == NVM_WRITE_OK, "nt: update");
		nos[i] = n;
	}
	nvm_txn_commit(&a);
	CHECK(all_exact, "nt: every row reads back exactly, padded with zeros");
	CHECK(all_aligned, "nt: every row starts on a cache line of its own");
	problem = unit_check_pool(true);
	if (problem)
		printf("# %s\n", problem);
	CHECK(problem == NULL, "nt: the integrity check finds nothing");
	nvm_persist_set_version_writes(NVM_WRITES_CACHED);
	crash_and_restart();
	nvm_table_open(&k, &t);
	for (int i = 0; i < NLENS; i++)
	{
		NvmVersion *v = nvm_version_by_no(&t, nos[i]);
		uint32_t	newlen = lens[NLENS - 1 - i];

		memset(row, 'A' + i, newlen);
		all_exact &= v->data_len == newlen && memcmp(v->data, row, newlen) == 0;
	}
	CHECK(all_exact, "nt: the updated rows are there after a restart");
	nvm_txn_init(&a, nvm_slot_acquire(16));
	before = nvm_persist_stats;
	CHECK(nvm_record_insert(&t, &a, 1, 0, "cached", 7, &nos[0]) == NVM_WRITE_OK, "nt: insert after");
	nvm_txn_commit(&a);
	CHECK(nvm_persist_stats.nt_lines == before.nt_lines, "nt: cached writes again once the setting is back");
	nvm_slot_release(a.slot);
	nvm_table_drop(&k);
}

/*
 * test_mode_conversion: a pool converts from MCSI through every other
 * registered mode and back to MCSI; at each step only with conversion
 * allowed, the header says the new mode, every commit of every earlier
 * mode stays visible, the row in flight at the stop is gone, and the new
 * mode writes.
 */
static void
test_mode_conversion(void)
{
	char		err[256];
	NvmTable	t;
	NvmTxn		a;
	uint64_t	n;
	uint32_t	from = NVM_CC_MCSI;
	int			committed = 0;

	fresh_pool(NVM_CC_MCSI);
	nvm_txn_init(&a, nvm_slot_acquire(1));
	nvm_table_create(&key1, 0, &t);
	for (uint32_t step = 1; step <= NVM_CC_END - NVM_CC_FIRST; step++)
	{
		/* the modes after MCSI in the registry's order, then MCSI again */
		uint32_t	to = NVM_CC_MCSI + step < NVM_CC_END ? NVM_CC_MCSI + step :
			NVM_CC_FIRST + (NVM_CC_MCSI + step - NVM_CC_END);
		char		label[16];

		snprintf(label, sizeof(label), "%s", nvm_cc_mode_name(from));
		for (int i = 0; i < 2; i++)
		{
			nvm_record_insert(&t, &a, 1, 0, label, strlen(label) + 1, &n);
			nvm_txn_commit(&a);
			committed++;
		}
		nvm_record_insert(&t, &a, 1, 0, "lost", 5, &n);	/* in flight at the stop */
		nvm_pool_close();

		allow_switch = false;
		CHECK(open_pool(64 << 20, SYSID, to, err) == NVM_POOL_ERR_MODE,
			  "a pool of another mode is refused unless conversion is allowed");
		allow_switch = true;
		CHECK(open_pool(64 << 20, SYSID, to, err) == NVM_POOL_OK, "conversion opens the pool");
		unit_start_core();
		CHECK(nvm_pool_header->cc_mode == to &&
			  nvm_pool_header->checksum == nvm_pool_header_checksum(nvm_pool_header),
			  "the header says the new mode");
		nvm_table_open(&key1, &t);
		CHECK(count_rows(&t, label) == 2 && count_rows(&t, "lost") == 0,
			  "after conversion the old mode's commits are visible and its row in flight is not");
		CHECK(count_rows(&t, NULL) == committed, "every commit of every earlier mode is visible");
		nvm_txn_init(&a, nvm_slot_acquire(1));
		from = to;
	}
	nvm_record_insert(&t, &a, 1, 0, "back", 5, &n);
	nvm_txn_commit(&a);
	CHECK(count_rows(&t, "back") == 1 && count_rows(&t, NULL) == committed + 1,
		  "MCSI writes after the round of conversions, and every row is there");
	allow_switch = false;
}


/* The length of record r's chain. */
static int
chain_length(NvmTable *t, uint64_t r)
{
	int			n = 0;

	for (NvmVersion *v = nvm_ptr(nvm_record_head(t, r)); v != NULL; v = nvm_ptr(v->prev))
		n++;
	return n;
}

/* Commits one update of the version numbered *no to value; *no becomes the new one. */
static void
update_int(NvmTable *t, NvmTxn *a, uint64_t *no, int value, bool new_run)
{
	NvmConflict cf;
	uint64_t	newno;
	NvmWriteResult r = nvm_record_update(t, a, 1, 0, *no, &value, sizeof(value), new_run, &newno, &cf);

	if (r != NVM_WRITE_OK)
	{
		printf("not ok - update failed (%d)\n", (int) r);
		failed++;
		return;
	}
	nvm_txn_commit(a);
	*no = newno;
}

/*
 * test_gc_deferred: deferred pruning prunes the rows of the table it is run
 * for whose entries are old enough, and keeps the young entries and the
 * other tables' entries for later; the list survives wrapping around.
 */
static void
test_gc_deferred(void)
{
	NvmTableKey ka = {1663, 5, 906, 0};
	NvmTableKey kb = {1663, 5, 907, 0};
	NvmTable	ta,
				tb;
	NvmTxn		a;
	int			slot = nvm_slot_acquire(14);
	uint64_t	na[3],
				nb[2],
				ra[3],
				rb[2];
	int			value = 0;
	const uint64_t age = 20 * 1000 * 1000;
	struct timespec pause = {0, 40 * 1000 * 1000};

	nvm_txn_init(&a, slot);
	nvm_table_create(&ka, 0, &ta);
	nvm_table_create(&kb, 0, &tb);
	for (int i = 0; i < 3; i++)
	{
		nvm_record_insert(&ta, &a, 1, 0, &value, sizeof(value), &na[i]);
		ra[i] = nvm_version_by_no(&ta, na[i])->record_no;
	}
	for (int i = 0; i < 2; i++)
	{
		nvm_record_insert(&tb, &a, 1, 0, &value, sizeof(value), &nb[i]);
		rb[i] = nvm_version_by_no(&tb, nb[i])->record_no;
	}
	nvm_txn_commit(&a);
	nvm_gc_set_auto_prune(true, 0);

	/* old entries: a0, b0, a1; young ones: a2, b1 */
	update_int(&ta, &a, &na[0], 1, false);
	nvm_gc_defer(&ta, ra[0]);
	update_int(&tb, &a, &nb[0], 1, false);
	nvm_gc_defer(&tb, rb[0]);
	update_int(&ta, &a, &na[1], 1, false);
	nvm_gc_defer(&ta, ra[1]);
	nanosleep(&pause, NULL);
	update_int(&ta, &a, &na[2], 1, false);
	nvm_gc_defer(&ta, ra[2]);
	update_int(&tb, &a, &nb[1], 1, false);
	nvm_gc_defer(&tb, rb[1]);

	nvm_gc_run_deferred(&ta, age);
	CHECK(chain_length(&ta, ra[0]) == 1 && chain_length(&ta, ra[1]) == 1,
		  "deferred pruning prunes the table's rows whose entries are old enough");
	CHECK(chain_length(&ta, ra[2]) == 2 && chain_length(&tb, rb[0]) == 2 &&
		  chain_length(&tb, rb[1]) == 2,
		  "it leaves young entries and other tables' entries alone");
	nvm_gc_run_deferred(&tb, age);
	CHECK(chain_length(&tb, rb[0]) == 1 && chain_length(&tb, rb[1]) == 2,
		  "another table's old entry is kept for that table's next run");
	nvm_gc_run_deferred(&ta, 0);
	nvm_gc_run_deferred(&tb, 0);
	CHECK(chain_length(&ta, ra[2]) == 1 && chain_length(&tb, rb[1]) == 1,
		  "the young entries are pruned once old enough");

	/* more entries than the list holds: the oldest are dropped, the rest pruned */
	for (int i = 0; i < 1500; i++)
	{
		update_int(&ta, &a, &na[i % 3], i, false);
		nvm_gc_defer(&ta, ra[i % 3]);
		if (i % 700 == 0)
			nvm_gc_run_deferred(&tb, 0);
	}
	nvm_gc_run_deferred(&ta, 0);
	CHECK(chain_length(&ta, ra[0]) == 1 && chain_length(&ta, ra[1]) == 1 &&
		  chain_length(&ta, ra[2]) == 1,
		  "a list that wrapped around is pruned whole");
	nvm_gc_set_auto_prune(false, 0);
	nvm_slot_release(slot);
}

/*
 * test_gc: a pinned snapshot keeps exactly what it sees; pruning frees the
 * rest once the pin is gone; index roots become redirects; numbers are
 * reused; a deleted record is retired and finished once no older pin is
 * left; the free lists survive a crash.
 */
static void
test_gc(void)
{
	NvmTableKey k = {1663, 5, 902, 0};
	NvmTable	t;
	NvmTxn		a;
	int			slot = nvm_slot_acquire(12);
	static NvmSnapshot snap;
	static NvmHorizon h;
	NvmGcCounts cnt = {0};
	NvmAllocStats before,
				after;
	uint64_t	no,
				root,
				rec,
				limit,
				newno;
	int			value = 0;
	NvmView		view;
	NvmVersion *v;

	nvm_txn_init(&a, slot);
	nvm_table_create(&k, 0, &t);
	nvm_record_insert(&t, &a, 1, 0, &value, sizeof(value), &no);
	nvm_txn_commit(&a);
	nvm_alloc_get_stats(&before);	/* arrays and the write log exist from here on */
	root = no;
	rec = nvm_version_by_no(&t, no)->record_no;

	/* a reader pins a snapshot that sees value 0 */
	nvm_snapshot_take_pinned(5, &snap);
	CHECK(nvm_gc_is_pinned(5), "a pinned snapshot is published");
	for (int i = 1; i <= 10; i++)
		update_int(&t, &a, &no, i, false);
	CHECK(nvm_gc_horizon(&h), "the horizon is computed");
	CHECK(nvm_gc_prune_chain(&t, rec, &h, &cnt) && chain_length(&t, rec) == 11 && cnt.versions_freed == 0,
		  "a pinned snapshot keeps the version it sees (and pruning keeps everything above it)");
	view = (NvmView) {NVM_VIEW_SNAPSHOT, &snap, 0, 0, NULL, NULL, NULL};
	v = nvm_chain_visible(&t, rec, &view);
	CHECK(v != NULL && *(int *) v->data == 0, "the pinned reader still reads its value");

	nvm_gc_unpin(5);
	CHECK(nvm_gc_horizon(&h) && nvm_gc_prune_chain(&t, rec, &h, &cnt), "pruning runs after the pin is gone");
	CHECK(chain_length(&t, rec) == 1 && cnt.versions_freed == 10,
		  "every version below the newest all-visible one is freed");
	CHECK(cnt.redirects == 1 && cnt.numbers_freed == 9,
		  "the index root becomes a redirect, the other numbers go to the free list");
	CHECK(nvm_version_by_no(&t, root) == NULL && nvm_version_record_no(&t, root) == rec,
		  "an index scan of the collected root still finds its record");
	v = nvm_chain_visible(&t, rec, &view);
	CHECK(v == NULL || *(int *) v->data == 10, "readers see the newest version");

	limit = nvm_table_version_limit(&t);
	update_int(&t, &a, &no, 11, false);
	CHECK(nvm_table_version_limit(&t) == limit, "a new version reuses a freed number");

	/* a new index run: the old root's run is then dead */
	update_int(&t, &a, &no, 12, true);
	CHECK(nvm_gc_horizon(&h) && nvm_gc_prune_chain(&t, rec, &h, &cnt), "prune after a key change");
	CHECK(nvm_gc_number_is_dead_root(&t, root, NULL, 0), "a root whose run is gone is dead");
	CHECK(!nvm_gc_number_is_dead_root(&t, no, NULL, 0), "the live run's root is not");
	nvm_gc_free_number(&t, root, &cnt);
	CHECK(nvm_version_record_no(&t, root) == 0, "a dead root's number is given back");

	/* delete: the record dies, is retired, and is finished after older pins */
	{
		NvmConflict cf;

		CHECK(nvm_record_update(&t, &a, 1, 0, no, NULL, 0, false, &newno, &cf) == NVM_WRITE_OK, "delete");
		nvm_txn_commit(&a);
	}
	CHECK(nvm_gc_horizon(&h) && nvm_gc_record_is_dead(&t, rec, &h), "a committed, all-visible delete makes a dead record");
	nvm_snapshot_take_pinned(6, &snap);
	CHECK(nvm_gc_retire_record(&t, rec, &h, &cnt) && nvm_record_head(&t, rec) == 0,
		  "a dead record is retired and unreachable");
	CHECK(nvm_gc_horizon(&h) && !nvm_gc_finish_retired(&t, rec, &h, &cnt),
		  "a retired record waits for pins older than its retirement");
	nvm_gc_unpin(6);
	CHECK(nvm_gc_horizon(&h) && nvm_gc_finish_retired(&t, rec, &h, &cnt) && cnt.records_freed == 1,
		  "then it is finished");
	nvm_alloc_get_stats(&after);
	CHECK(after.blocks_allocated == before.blocks_allocated - 1,
		  "every version of the deleted record has been freed");

	/* the free lists survive a crash and hand out the numbers again */
	crash_and_restart();
	nvm_table_open(&k, &t);
	slot = nvm_slot_acquire(12);
	nvm_txn_init(&a, slot);
	limit = nvm_table_version_limit(&t);
	nvm_record_insert(&t, &a, 1, 0, &value, sizeof(value), &newno);
	nvm_txn_commit(&a);
	CHECK(nvm_version_by_no(&t, newno)->record_no == rec && nvm_table_version_limit(&t) == limit,
		  "after a restart an insert reuses the freed record and version numbers");
	{
		NvmView		any = {NVM_VIEW_ANY, NULL, 0, 0, NULL, NULL, NULL};
		int			rows = 0;

		for (uint64_t r = 1; r < nvm_table_record_limit(&t); r++)
			if (nvm_chain_visible(&t, r, &any) != NULL)
				rows++;
		CHECK(rows == 1, "and the table holds exactly the new row");
	}
	nvm_table_drop(&k);
	nvm_slot_release(slot);
}

/*
 * test_gc_rolled_back: a record every version of which was rolled back (an
 * insert, then an update of its own row, in a transaction that aborted) is
 * dead for VACUUM: its index roots' entries are to be removed, it is
 * retired, and finishing it gives back its record number, both version
 * numbers and both blocks.  A running insert is not dead.
 */
static void
test_gc_rolled_back(void)
{
	NvmTableKey k = {1663, 5, 903, 0};
	NvmTable	t;
	NvmTxn		a;
	int			slot = nvm_slot_acquire(12);
	static NvmHorizon h;
	NvmGcCounts cnt = {0};
	NvmAllocStats before,
				after;
	NvmConflict cf;
	uint64_t	value = 1,
				live,
				first,
				second,
				again,
				rec;
	bool		dead[8] = {false};

	nvm_txn_init(&a, slot);
	nvm_table_create(&k, 0, &t);
	nvm_record_insert(&t, &a, 1, 0, &value, sizeof(value), &live);
	nvm_txn_commit(&a);
	nvm_alloc_get_stats(&before);

	nvm_record_insert(&t, &a, 1, 0, &value, sizeof(value), &first);
	rec = nvm_version_by_no(&t, first)->record_no;
	CHECK(nvm_gc_horizon(&h) && !nvm_gc_record_is_dead(&t, rec, &h), "a running insert is not dead");
	CHECK(nvm_record_update(&t, &a, 1, 1, first, &value, sizeof(value), true, &second, &cf) == NVM_WRITE_OK,
		  "own update of the new row");
	nvm_txn_abort(&a);
	CHECK(nvm_gc_horizon(&h) && nvm_gc_record_is_dead(&t, rec, &h), "a rolled-back record is dead");
	CHECK(!nvm_gc_record_is_dead(&t, nvm_version_by_no(&t, live)->record_no, &h), "a live one is not");
	CHECK(rec < 8, "record numbers are small");
	dead[rec] = true;
	CHECK(nvm_gc_number_is_dead_root(&t, first, dead, 8) && nvm_gc_number_is_dead_root(&t, second, dead, 8),
		  "both index roots of the rolled-back record are dead numbers");
	CHECK(!nvm_gc_number_is_dead_root(&t, live, dead, 8), "the live row's root is not");
	CHECK(nvm_gc_retire_record(&t, rec, &h, &cnt) && nvm_record_head(&t, rec) == 0,
		  "the rolled-back record is retired");
	CHECK(nvm_gc_horizon(&h) && nvm_gc_finish_retired(&t, rec, &h, &cnt) &&
		  cnt.records_freed == 1 && cnt.numbers_freed == 2 && cnt.versions_freed == 2,
		  "finishing it gives back its record number, version numbers and versions");
	nvm_alloc_get_stats(&after);
	CHECK(after.blocks_allocated == before.blocks_allocated, "every block of the rolled-back record is free");
	nvm_record_insert(&t, &a, 1, 0, &value, sizeof(value), &again);
	nvm_txn_commit(&a);
	CHECK(nvm_version_by_no(&t, again)->record_no == rec && (again == first || again == second),
		  "an insert reuses the numbers");
	nvm_table_drop(&k);
	nvm_slot_release(slot);
}

/*
 * test_index_root_dead: which index roots nvm_gc_index_root_is_dead calls
 * dead (the PG layer's answer to index fetches' all_dead and to index
 * tuple deletion): runs whose versions are all aborted, runs replaced or
 * deleted by commits inside the horizon; never a run some pinned snapshot,
 * a running transaction or the table's newest version still has.
 */
static void
test_index_root_dead(void)
{
	NvmTableKey k = {1663, 5, 904, 0};
	NvmTable	t;
	NvmTxn		a,
				b;
	int			sa = nvm_slot_acquire(15),
				sb = nvm_slot_acquire(16);
	static NvmSnapshot snap;
	static NvmHorizon h;
	NvmGcCounts cnt = {0};
	NvmConflict cf;
	uint64_t	no,
				root,
				rec,
				sub,
				newno;
	int			value = 0;

	nvm_txn_init(&a, sa);
	nvm_txn_init(&b, sb);
	nvm_table_create(&k, 0, &t);

	/* aborted inserts, whole transaction or subtransaction */
	nvm_record_insert(&t, &a, 1, 0, &value, sizeof(value), &no);
	CHECK(!nvm_gc_index_root_is_dead(&t, no, NULL), "a running insert is not dead");
	nvm_txn_abort(&a);
	CHECK(nvm_gc_index_root_is_dead(&t, no, NULL), "a rolled-back insert is dead, with or without a horizon");
	nvm_record_insert(&t, &a, 1, 0, &value, sizeof(value), &no);
	nvm_record_insert(&t, &a, 2, 1, &value, sizeof(value), &sub);
	nvm_txn_subxact_abort(&a, 2);
	CHECK(nvm_gc_index_root_is_dead(&t, sub, NULL) && !nvm_gc_index_root_is_dead(&t, no, NULL),
		  "an insert rolled back with its subtransaction is dead while its transaction runs on");
	nvm_txn_commit(&a);
	CHECK(nvm_gc_horizon(&h) && !nvm_gc_index_root_is_dead(&t, no, &h), "a committed insert is not dead");
	root = no;
	rec = nvm_version_by_no(&t, no)->record_no;

	/* updates in the run keep it; an aborted update starting a run is dead */
	update_int(&t, &a, &no, 1, false);
	CHECK(nvm_gc_horizon(&h) && !nvm_gc_index_root_is_dead(&t, root, &h), "an update in the run keeps the root");
	CHECK(nvm_record_update(&t, &a, 1, 0, no, &value, sizeof(value), true, &newno, &cf) == NVM_WRITE_OK,
		  "key update");
	CHECK(!nvm_gc_index_root_is_dead(&t, newno, NULL) && !nvm_gc_index_root_is_dead(&t, root, &h),
		  "while it runs, neither run is dead");
	nvm_txn_abort(&a);
	CHECK(nvm_gc_index_root_is_dead(&t, newno, NULL) && !nvm_gc_index_root_is_dead(&t, root, &h),
		  "after its rollback the new run is dead, the old one is not");

	/* a committed key update: the old run dies when the horizon passes it */
	nvm_snapshot_take_pinned(7, &snap);
	update_int(&t, &a, &no, 2, true);
	CHECK(nvm_gc_horizon(&h) && !nvm_gc_index_root_is_dead(&t, root, &h),
		  "a pinned snapshot that sees the old run keeps it");
	CHECK(!nvm_gc_index_root_is_dead(&t, no, &h), "the new run is live");
	nvm_gc_unpin(7);
	CHECK(!nvm_gc_index_root_is_dead(&t, root, NULL), "without a horizon the old run is not known dead");
	CHECK(nvm_gc_horizon(&h) && nvm_gc_index_root_is_dead(&t, root, &h),
		  "once the update is all-visible, the old run is dead");
	CHECK(nvm_gc_prune_chain(&t, rec, &h, &cnt) && nvm_version_record_no(&t, root) == rec &&
		  nvm_gc_index_root_is_dead(&t, root, NULL),
		  "a collected old root (a redirect) is dead even without a horizon");

	/* deletes */
	CHECK(nvm_record_update(&t, &b, 1, 0, no, NULL, 0, false, &newno, &cf) == NVM_WRITE_OK, "delete");
	CHECK(nvm_gc_horizon(&h) && !nvm_gc_index_root_is_dead(&t, no, &h), "a running delete is not dead");
	nvm_snapshot_take_pinned(8, &snap);
	nvm_txn_commit(&b);
	CHECK(nvm_gc_horizon(&h) && !nvm_gc_index_root_is_dead(&t, no, &h),
		  "a committed delete that a pinned snapshot does not see is not dead");
	nvm_gc_unpin(8);
	CHECK(nvm_gc_horizon(&h) && nvm_gc_index_root_is_dead(&t, no, &h),
		  "an all-visible delete is dead");
	CHECK(!nvm_gc_index_root_is_dead(&t, 0, &h) && !nvm_gc_index_root_is_dead(&t, 1000000, &h),
		  "numbers that name nothing are not called dead");

	nvm_table_drop(&k);
	nvm_slot_release(sa);
	nvm_slot_release(sb);
}

/*
 * test_status_wrap: the per-slot status rings (MCSI) and the shared commit
 * log (N2DB) are reused.  A version whose status is inlined keeps it while
 * its entry serves later transactions; N2DB refuses to lap a transaction
 * that is still running.
 */
static void
test_status_wrap(void)
{
	NvmTableKey k = {1663, 5, 903, 0};
	NvmTable	t;
	NvmTxn		a,
				b;
	int			sa = nvm_slot_acquire(13),
				sb = nvm_slot_acquire(14);
	uint64_t	no;
	NvmVersion *v;

	nvm_txn_init(&a, sa);
	nvm_txn_init(&b, sb);
	nvm_table_create(&k, 0, &t);
	nvm_record_insert(&t, &a, 1, 0, "x", 2, &no);
	nvm_txn_commit(&a);
	v = nvm_version_by_no(&t, no);
	if (cur_mode == NVM_CC_MCSI)
	{
		uint64_t	ring = (uint64_t) nvm_pool_header->ring_words * NVM_STATUS_PER_WORD;

		/* lap the ring with aborted transactions */
		for (uint64_t i = 0; i < 3 * ring; i++)
		{
			nvm_txn_begin_write(&a);
			nvm_txn_abort(&a);
		}
		CHECK(nvm_status_get(v->txid) == NVM_STATUS_ABORTED,
			  "the ring entry of the committed transaction now serves an aborted one");
		CHECK(nvm_version_status(v) == NVM_STATUS_COMMITTED,
			  "the version keeps its inlined commit across three laps of the ring");
	}
	else if (cur_mode == NVM_CC_N2DB)
	{
		uint64_t	ring = (uint64_t) nvm_pool_header->clog_words * 32;
		uint64_t	started = 0;
		uint64_t	running;

		running = nvm_txn_begin_write(&b);	/* stays open */
		for (;;)
		{
			if (nvm_txn_begin_write(&a) == NVM_INVALID_TXID)
				break;
			nvm_txn_abort(&a);
			started++;
		}
		CHECK(started > ring - 128 && started < ring,
			  "new transactions are refused just before they would lap a running one");
		CHECK(nvm_status_get(running) == NVM_STATUS_RUNNING, "the running transaction's entry is intact");
		nvm_txn_commit(&b);
		CHECK(nvm_txn_begin_write(&a) != NVM_INVALID_TXID, "once it ends, transactions start again");
		nvm_txn_abort(&a);
		CHECK(nvm_version_status(v) == NVM_STATUS_COMMITTED, "the early version keeps its inlined commit");
	}
	else if (cur_mode == NVM_CC_PISCES)
	{
		NvmSnapshot *old = malloc(sizeof(NvmSnapshot));
		uint64_t	started = 0;
		uint64_t	later;

		/* a pinned snapshot taken before a commit of b */
		nvm_snapshot_take_pinned(9, old);
		later = nvm_txn_begin_write(&b);
		nvm_txn_commit(&b);
		CHECK(!nvm_snapshot_contains(old, later), "an old snapshot does not contain a later commit");
		while (started < 2 * NVM_PISCES_RING)
		{
			if (nvm_txn_begin_write(&b) == NVM_INVALID_TXID)
				break;
			nvm_txn_commit(&b);
			started++;
		}
		CHECK(started == NVM_PISCES_RING - 1 && nvm_txn_begin_failure() == NVM_BEGIN_STORE_FULL,
			  "a slot stops one ring of commits after one an old pinned snapshot does not contain");
		CHECK(!nvm_snapshot_contains(old, later),
			  "the old snapshot still does not contain that commit");
		nvm_gc_unpin(9);
		CHECK(nvm_txn_begin_write(&b) != NVM_INVALID_TXID, "once the snapshot is released, the slot goes on");
		nvm_txn_commit(&b);
		for (uint64_t i = 0; i < 3 * NVM_PISCES_RING; i++)
		{
			nvm_txn_begin_write(&a);
			nvm_txn_abort(&a);
		}
		nvm_snapshot_take(old);
		CHECK(nvm_snapshot_contains(old, later) && nvm_version_status(v) == NVM_STATUS_COMMITTED,
			  "a commit whose entry was reused is in every later snapshot");
		free(old);
	}
	nvm_table_drop(&k);
	nvm_slot_release(sa);
	nvm_slot_release(sb);
}

/* a commit in a session of its own (a thread): see test_session_reads */
typedef struct SessionCommit
{
	NvmTable   *table;
	int			slot;
	uint64_t	txid;
	bool		sees_own;
	pthread_barrier_t committed;	/* the other session looks between the two */
	pthread_barrier_t looked;
} SessionCommit;

static void *
commit_in_session(void *arg)
{
	SessionCommit *sc = arg;
	NvmTxn		txn;
	NvmSnapshot *snap = malloc(sizeof(NvmSnapshot));
	uint64_t	no;
	int			v = 1;

	nvm_txn_init(&txn, sc->slot);
	nvm_record_insert(sc->table, &txn, 1, 0, &v, sizeof(v), &no);
	sc->txid = txn.txid;
	nvm_txn_commit(&txn);
	pthread_barrier_wait(&sc->committed);
	pthread_barrier_wait(&sc->looked);
	nvm_snapshot_take(snap);
	sc->sees_own = nvm_snapshot_contains(snap, sc->txid);
	free(snap);
	return NULL;
}

/*
 * session_round: another session (thread) commits while this one holds an
 * older snapshot; it returns whether this session's next snapshot misses
 * the acknowledged commit, and checks the committer sees its own.
 */
static bool
session_round(NvmTable *t, NvmSnapshot *snap)
{
	SessionCommit sc = {.table = t};
	pthread_t	th;
	bool		missed;

	sc.slot = nvm_slot_acquire(15);
	pthread_barrier_init(&sc.committed, NULL, 2);
	pthread_barrier_init(&sc.looked, NULL, 2);
	nvm_snapshot_take(snap);	/* this session has committed nothing since */
	pthread_create(&th, NULL, commit_in_session, &sc);
	pthread_barrier_wait(&sc.committed);
	CHECK(nvm_snapshot_contains(snap, sc.txid) == false, "an older snapshot does not contain a later commit");
	nvm_snapshot_take(snap);
	missed = !nvm_snapshot_contains(snap, sc.txid);
	pthread_barrier_wait(&sc.looked);
	pthread_join(th, NULL);
	CHECK(sc.sees_own, "a session's next snapshot contains its own commit");
	if (missed && cur_mode == NVM_CC_POMVCC)
	{
		nvm_pomvcc_set_tick(1);
		usleep(1000);
		nvm_snapshot_take(snap);
		CHECK(nvm_snapshot_contains(snap, sc.txid), "POMVCC: once CTs moves, every later snapshot contains it");
	}
	pthread_barrier_destroy(&sc.committed);
	pthread_barrier_destroy(&sc.looked);
	nvm_slot_release(sc.slot);
	return missed;
}

/*
 * test_session_reads: a commit acknowledged in one session (thread) is in
 * every later snapshot of that session in every start-timestamp mode; in
 * another session's, in Pisces always, in POMVCC only after CTs moves (the
 * paper's HISTORICAL READ, why POMVCC refuses SERIALIZABLE), or always when
 * every snapshot moves it (an interval of 0).
 */
static void
test_session_reads(void)
{
	NvmTableKey k = {1663, 5, 904, 0};
	NvmTable	t;
	NvmSnapshot *snap = malloc(sizeof(NvmSnapshot));
	bool		pomvcc = cur_mode == NVM_CC_POMVCC;
	bool		missed;

	nvm_table_create(&k, 0, &t);
	if (pomvcc)
		nvm_pomvcc_set_tick(NVM_POMVCC_TICK_NEVER);
	missed = session_round(&t, snap);
	CHECK(missed == pomvcc,
		  pomvcc ? "POMVCC: another session's snapshot, taken after the commit, can miss it (HISTORICAL READ)" :
		  "another session's snapshot taken after the commit contains it");
	CHECK(nvm_cc_serializable() == !pomvcc, "only POMVCC refuses SERIALIZABLE");
	if (pomvcc)
	{
		nvm_pomvcc_set_tick(0);
		CHECK(!session_round(&t, snap), "POMVCC, interval 0: every snapshot contains every acknowledged commit");
		nvm_pomvcc_set_tick(NVM_POMVCC_TICK_NS);
	}
	nvm_table_drop(&k);
	free(snap);
}

/* count_marked is the visitor of test_ckpt_marks: it counts, and keeps the last. */
static bool
count_marked(uint64_t record_no, void *arg)
{
	uint64_t   *last = arg;

	*last = record_no;
	return true;
}

/*
 * test_ckpt_marks: change marks are stored, except while the table is to
 * be read whole at the next cut because that was asked in the current
 * epoch; a request of an earlier epoch (a capture that did not finish)
 * does not spare a mark.
 */
static void
test_ckpt_marks(void)
{
	static NvmTableKey k = {1663, 5, 16395, 0};
	NvmTable	t;
	uint64_t	last = 0,
				ended;

	CHECK(nvm_table_create(&k, 0, &t), "marks: table created");
	nvm_ckpt_mark_whole(&t);
	CHECK(nvm_ckpt_wants_whole(&t), "marks: a whole read is asked");
	CHECK(nvm_ckpt_mark(&t, 5), "marks: a mark while the whole table is to be read");
	CHECK(nvm_ckpt_each_marked(&t, count_marked, &last) == 0,
		  "marks: nothing stored while the next cut reads the whole table");

	/* the cut: the capture reads the table whole; a change after it is marked */
	ended = nvm_ckpt_epoch_advance();
	CHECK(nvm_ckpt_mark(&t, 6), "marks: a mark after the cut");
	CHECK(nvm_ckpt_each_marked(&t, count_marked, &last) == 1 && last == 6,
		  "marks: a change after the cut is marked although the whole read is still asked");
	nvm_ckpt_drop_marks(&t, ended);
	CHECK(!nvm_ckpt_wants_whole(&t), "marks: the capture of the cut clears the whole read");
	CHECK(nvm_ckpt_each_marked(&t, count_marked, &last) == 1 && last == 6,
		  "marks: the mark made after the cut stays for the next capture");

	/* a request of an earlier epoch, its capture cut short: marks are stored */
	nvm_ckpt_mark_whole(&t);
	ended = nvm_ckpt_epoch_advance();
	CHECK(nvm_ckpt_mark(&t, 9), "marks: a mark after an older request");
	last = 0;
	CHECK(nvm_ckpt_each_marked(&t, count_marked, &last) == 2 && last == 9,
		  "marks: a whole read asked in an earlier epoch does not spare a mark");
	nvm_ckpt_drop_marks(&t, ended);
	nvm_ckpt_drop_marks(&t, ended + 1);
	nvm_table_drop(&k);
}

int
main(void)
{
	snprintf(pool_path, sizeof(pool_path), "/dev/shm/nvmam_unit_%d", (int) getpid());
	test_pool_validation();
	test_pool_huge_pages();
	for (uint32_t m = NVM_CC_FIRST; m < NVM_CC_END; m++)
	{
		cur_mode = m;
		printf("# concurrency control: %s\n", nvm_cc_mode_name(m));
		fresh_pool(cur_mode);
		if (m == NVM_CC_FIRST)
		{
			test_status_word();
			test_alloc_basic();
			test_alloc_full();
			test_alloc_concurrent();
			test_alloc_caches();
			test_alloc_cache_full();
			test_ckpt_marks();
		}
		test_mvcc();
		test_scan_visible();
		test_recovery();
		test_drop_and_kill();
		test_lock_words();
		test_clone();
		test_indoubt();
		test_indoubt_reused_xid();
		test_indexlog();
		test_indexlog_external();
		test_gc();
		test_gc_deferred();
		test_gc_rolled_back();
		test_index_root_dead();
		test_status_wrap();
		if (m == NVM_CC_PISCES || m == NVM_CC_POMVCC)
			test_session_reads();
		if (m == NVM_CC_FIRST)
		{
			test_inlined_status_wins();
			test_nt_versions();
		}
	}
	test_mode_conversion();
	nvm_pool_close();
	unlink(pool_path);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
