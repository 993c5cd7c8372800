/*
 * test_grow.c
 *	  Unit tests of the pool's growth: the allocator grows the pool by
 *	  segments when it runs out of chunks, up to the maximum size and no
 *	  further; every block stays intact and the allocator's state rebuilds
 *	  the same from the grown pool; an allocation larger than the growth
 *	  step gets a segment large enough; a growth that a crash interrupted
 *	  (a longer file with leftover bytes) is redone cleanly; a truncated
 *	  pool or a corrupt segment is refused; threads and forked processes
 *	  grow one pool at once (processes share the core's memory-file-backed
 *	  shared memory, and see each other's new segments without remapping);
 *	  a pool of format 2 is upgraded in place and grows; a header rewrite a
 *	  crash interrupted is finished from its shadow copy; a new pool
 *	  allocates a clock slot's status ring only at the slot's first write;
 *	  and the table directory, which does not grow, says when it is full.
 *
 * Each test prints "ok" or "not ok" lines; the last line is
 * "N passed, N failed" and the exit code is non-zero on any failure.
 */
#include "alloc.h"
#include "core.h"
#include "grow.h"
#include "persist.h"
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
#include <unistd.h>

static int	passed = 0;
static int	failed = 0;

#define CHECK(cond, name) \
	do { \
		if (cond) { passed++; printf("ok - %s\n", name); } \
		else { failed++; printf("not ok - %s (%s:%d)\n", name, __FILE__, __LINE__); } \
	} while (0)

#define MB(n)	((uint64_t) (n) << 20)
#define SYSID	UINT64_C(0x1234567890)

static char pool_path[256];
static uint32_t cur_mode = NVM_CC_MCSI;

static void
pool_options(NvmPoolOptions *o, uint64_t size, uint64_t max, uint64_t step, uint32_t format)
{
	memset(o, 0, sizeof(*o));
	o->path = pool_path;
	o->create_size = size;
	o->system_identifier = SYSID;
	o->cc_mode = cur_mode;
	o->max_slots = 16;
	o->max_tables = 64;
	o->max_size = max;
	o->grow_step = step;
	o->create_format = format;
}

static NvmPoolOpenResult
open_pool(uint64_t size, uint64_t max, uint64_t step, uint32_t format, char *err)
{
	NvmPoolOptions o;

	pool_options(&o, size, max, step, format);
	return nvm_pool_open(&o, err, 256);
}

static void
new_pool(uint64_t size, uint64_t max, uint64_t step)
{
	NvmPoolOptions o;

	nvm_pool_close();
	pool_options(&o, size, max, step, 0);
	unit_pool_create(&o);
}

/* close and reopen the pool without a clean shutdown, as after a crash */
static NvmPoolOpenResult
reopen(uint64_t max, uint64_t step, char *err)
{
	NvmPoolOpenResult rc;

	nvm_pool_close();
	rc = open_pool(MB(32), max, step, 0, err);
	if (rc == NVM_POOL_OK)
		unit_start_core();
	return rc;
}

static unsigned char
fill_byte(nvm_off off)
{
	return (unsigned char) (off * 2654435761u >> 24);
}

static void
fill(nvm_off off, size_t len)
{
	memset(nvm_ptr(off), fill_byte(off), len);
}

static bool
intact(nvm_off off, size_t len)
{
	const unsigned char *p = nvm_ptr(off);

	for (size_t i = 0; i < len; i += 997)
		if (p[i] != fill_byte(off))
			return false;
	return p[len - 1] == fill_byte(off);
}

static uint64_t
file_size(void)
{
	struct stat st;

	return stat(pool_path, &st) == 0 ? (uint64_t) st.st_size : 0;
}

static void
test_grow_to_max(void)
{
	enum
	{
		MAXBLOCKS = 4096
	};
	static nvm_off blocks[MAXBLOCKS];
	size_t		len = 65000;
	int			n = 0;
	bool		ok = true;
	NvmAllocStats before,
				after;
	char		err[256];
	int			e;

	printf("# growth up to the maximum\n");
	new_pool(MB(32), MB(96), MB(8));
	nvm_alloc_get_stats(&before);
	CHECK(before.segments == 0 && before.pool_size == MB(32), "a new pool has its initial size and no segment");
	while (n < MAXBLOCKS && (blocks[n] = nvm_alloc(len)) != 0)
	{
		fill(blocks[n], len);
		n++;
	}
	nvm_alloc_get_stats(&after);
	CHECK(n > 0 && n < MAXBLOCKS, "allocation stops at the maximum");
	CHECK(after.segments >= 7, "the pool grew by segments of the growth step");
	CHECK(after.pool_size > MB(96) - MB(8) && after.pool_size <= MB(96),
		  "the pool grew up to its maximum, not beyond");
	CHECK(file_size() >= after.pool_size && file_size() <= MB(96), "the file holds the grown pool");
	CHECK(nvm_pool_grow_failure(&e) == NVM_GROW_AT_MAX, "the failure says the maximum is reached");
	CHECK((uint64_t) n * len > MB(80), "the grown space is used");
	for (int i = 0; i < n; i++)
		ok = ok && intact(blocks[i], len);
	CHECK(ok, "every block is intact after growing");

	/* a crash: the allocator rebuilds the same from the grown pool */
	CHECK(reopen(MB(96), MB(8), err) == NVM_POOL_OK, "the grown pool reopens");
	nvm_alloc_get_stats(&before);
	CHECK(before.segments == after.segments && before.pool_size == after.pool_size &&
		  before.bytes_allocated == after.bytes_allocated && before.chunks_free == after.chunks_free &&
		  before.chunks_total == after.chunks_total,
		  "after a crash the allocator rebuilds the same state from the segments");
	for (int i = 0; i < n; i++)
		ok = ok && intact(blocks[i], len);
	CHECK(ok, "every block is intact after the crash");
	CHECK(nvm_alloc(len) == 0, "the reopened pool is still at its maximum");

	/* freed space is reused without growing */
	for (int i = 0; i < n; i += 2)
		nvm_free(blocks[i]);
	for (int i = 0; i < n; i += 2)
		blocks[i] = nvm_alloc(len);
	nvm_alloc_get_stats(&after);
	ok = true;
	for (int i = 0; i < n; i += 2)
		ok = ok && blocks[i] != 0;
	CHECK(ok && after.segments == before.segments, "freed space is reused without growing");
	for (int i = 0; i < n; i++)
		nvm_free(blocks[i]);
	nvm_alloc_get_stats(&after);
	/* (but the chunk its size class is filling) */
	CHECK(after.blocks_allocated == 0 && after.chunks_free + 1 == after.chunks_total,
		  "every chunk of every segment is free again");

	/* a larger maximum at the next start: the pool grows on */
	CHECK(reopen(MB(160), MB(8), err) == NVM_POOL_OK, "reopens with a larger maximum");
	{
		nvm_off		big = nvm_alloc(MB(40));

		nvm_alloc_get_stats(&after);
		CHECK(big != 0 && after.pool_size > before.pool_size,
			  "a larger maximum lets the pool grow on");
		if (big)
			nvm_free(big);
	}
}

static void
test_grow_large(void)
{
	NvmAllocStats st;
	nvm_off		big;
	int			e;

	printf("# allocations larger than the growth step\n");
	new_pool(MB(32), MB(128), MB(4));
	/* larger than the pool's first chunks, too */
	big = nvm_alloc(MB(40));
	nvm_alloc_get_stats(&st);
	CHECK(big != 0 && st.segments == 1, "a block larger than the step gets one segment large enough");
	fill(big, MB(40));
	CHECK(nvm_alloc(MB(100)) == 0, "a block larger than what is left below the maximum fails");
	CHECK(nvm_pool_grow_failure(&e) == NVM_GROW_AT_MAX, "... saying the maximum is reached");
	nvm_alloc_get_stats(&st);
	CHECK(st.segments == 1, "... without growing");
	CHECK(intact(big, MB(40)), "the large block is intact");
}

/*
 * test_grow_leftovers: a growth that a crash interrupted after extending
 * the file leaves bytes past the pool's end (here: junk, as after a torn
 * attempt); the next growth writes its segment over them and every new
 * chunk is free.
 */
static void
test_grow_leftovers(void)
{
	NvmAllocStats st,
				after;
	char		err[256];
	uint64_t	end,
				grid_end;
	int			fd;
	char	   *junk = malloc(MB(2));
	nvm_off		b;

	printf("# a growth that a crash interrupted\n");
	new_pool(MB(32), MB(128), MB(8));
	nvm_alloc_get_stats(&st);
	end = st.pool_size;
	/* the first growth segment starts where the first chunks end */
	grid_end = nvm_pool_chunk_offset(nvm_pool_header->nchunks);
	nvm_pool_close();
	fd = open(pool_path, O_RDWR);
	memset(junk, 0x5a, MB(2));
	CHECK(pwrite(fd, junk, MB(2), (off_t) grid_end) == (ssize_t) MB(2), "junk written past the pool's end");
	close(fd);
	CHECK(reopen(MB(128), MB(8), err) == NVM_POOL_OK, "a pool with leftovers past its end opens");
	nvm_alloc_get_stats(&st);
	CHECK(st.segments == 0 && st.pool_size == end, "leftovers past the end are no segment");
	while ((b = nvm_alloc(200000)) != 0)
	{
		nvm_alloc_get_stats(&after);
		if (after.segments > 0)
			break;
	}
	nvm_alloc_get_stats(&after);
	CHECK(after.segments == 1 && after.chunks_total == st.chunks_total + 7,
		  "the next growth writes a fresh segment over the leftovers");
	CHECK(after.chunks_free == 7 - 1, "every chunk of that segment but the one now used is free");
	{
		uint64_t	first = nvm_pool_header->nchunks;
		int			kinds_ok = nvm_alloc_chunk_entry(first) == NVM_CHUNK_META;

		for (uint64_t c = first + 1; c < first + 8; c++)
			kinds_ok = kinds_ok && (nvm_alloc_chunk_entry(c) == NVM_CHUNK_FREE ||
									NVM_CHUNK_KIND(nvm_alloc_chunk_entry(c)) == 1);
		CHECK(kinds_ok, "its chunk table holds no leftover bytes");
	}
	CHECK(reopen(MB(128), MB(8), err) == NVM_POOL_OK, "it reopens");
	nvm_alloc_get_stats(&st);
	CHECK(st.segments == 1 && st.chunks_free == after.chunks_free, "and its allocator finds the same");
	free(junk);
}

static void
test_grow_refused(void)
{
	NvmAllocStats st;
	char		err[256];
	int			fd;
	uint64_t	seg_off;
	unsigned char b;

	printf("# grown pools that are damaged\n");
	new_pool(MB(32), MB(128), MB(8));
	while (nvm_alloc(500000) != 0)
	{
		nvm_alloc_get_stats(&st);
		if (st.segments == 3)
			break;
	}
	nvm_alloc_get_stats(&st);
	seg_off = nvm_pool_chunk_offset(nvm_pool_header->nchunks);
	nvm_pool_close();

	CHECK(truncate(pool_path, (off_t) (st.pool_size - MB(1))) == 0, "truncate the last segment");
	CHECK(reopen(MB(128), MB(8), err) == NVM_POOL_ERR_TRUNCATED && strstr(err, pool_path) != NULL,
		  "a pool shorter than its segments is refused, naming the file");
	printf("# %s\n", err);
	CHECK(truncate(pool_path, (off_t) st.pool_size) == 0, "extend it again");

	fd = open(pool_path, O_RDWR);
	pread(fd, &b, 1, (off_t) (seg_off + 24));
	b ^= 0x40;
	pwrite(fd, &b, 1, (off_t) (seg_off + 24));
	CHECK(reopen(MB(128), MB(8), err) == NVM_POOL_ERR_BAD_LAYOUT, "a corrupt segment header is refused");
	printf("# %s\n", err);
	b ^= 0x40;
	pwrite(fd, &b, 1, (off_t) (seg_off + 24));
	close(fd);
	CHECK(reopen(MB(128), MB(8), err) == NVM_POOL_OK, "repaired, it opens");
	nvm_alloc_get_stats(&st);
	CHECK(st.segments == 3, "with its three segments");
}

#define THREADS 4
#define PER_THREAD 3000

static void *
grow_worker(void *arg)
{
	long		id = (long) arg;
	nvm_off    *mine = calloc(PER_THREAD, sizeof(nvm_off));
	unsigned	seed = (unsigned) id * 7919;
	long		bad = 0;

	for (int i = 0; i < PER_THREAD; i++)
	{
		size_t		len = rand_r(&seed) % 50 == 0 ? MB(1) + 1000 : 1000 + (size_t) (rand_r(&seed) % 20000);

		mine[i] = nvm_alloc(len);
		if (mine[i] == 0)
		{
			bad++;
			break;
		}
		memset(nvm_ptr(mine[i]), (int) id + 1, 64);
	}
	for (int i = 0; i < PER_THREAD && mine[i]; i++)
	{
		const unsigned char *p = nvm_ptr(mine[i]);

		for (int k = 0; k < 64; k++)
			if (p[k] != (unsigned char) (id + 1))
			{
				bad++;
				break;
			}
	}
	free(mine);
	return (void *) bad;
}

static void
test_grow_threads(void)
{
	pthread_t	th[THREADS];
	long		bad = 0;
	NvmAllocStats st;
	char		err[256];
	uint64_t	segments;

	printf("# threads growing one pool at once\n");
	new_pool(MB(32), MB(1024), MB(8));
	for (long i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, grow_worker, (void *) i);
	for (int i = 0; i < THREADS; i++)
	{
		void	   *r;

		pthread_join(th[i], &r);
		bad += (long) r;
	}
	nvm_alloc_get_stats(&st);
	CHECK(bad == 0, "threads growing the pool at once never get 0 or overlapping blocks");
	CHECK(st.segments >= 10, "the pool grew many times");
	segments = st.segments;
	CHECK(reopen(MB(1024), MB(8), err) == NVM_POOL_OK, "the pool reopens");
	nvm_alloc_get_stats(&st);
	CHECK(st.segments == segments && st.blocks_allocated == (uint64_t) THREADS * PER_THREAD,
		  "and its allocator finds every segment and block");
}

/*
 * test_grow_processes: forked processes share the core's shared memory
 * made by nvm_core_shmem_create and the pool's mapping; each grows the
 * pool and hands its blocks to the parent, which reads them through its
 * own, unchanged mapping.
 */
static void
test_grow_processes(void)
{
	enum
	{
		CHILDREN = 3, PER_CHILD = 60
	};
	char		err[256];
	void	   *area;
	int			fds[2];
	int			good = 0,
				ok_exits = 0;
	NvmAllocStats st;
	char	   *base_before;

	printf("# processes growing one pool at once\n");
	nvm_pool_close();
	unlink(pool_path);
	if (open_pool(MB(32), MB(1024), MB(16), 0, err) != NVM_POOL_CREATED)
	{
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	area = nvm_core_shmem_create(err, sizeof(err));
	CHECK(area != NULL, "the core's shared memory is made");
	if (area == NULL)
		return;
	CHECK(nvm_core_startup(area), "and backed as far as the pool needs");
	base_before = nvm_pool_base;
	pipe(fds);
	for (int c = 0; c < CHILDREN; c++)
	{
		if (fork() == 0)
		{
			close(fds[0]);
			for (int i = 0; i < PER_CHILD; i++)
			{
				nvm_off		b = nvm_alloc(MB(1) - 64);

				if (b == 0)
					_exit(1);
				fill(b, MB(1) - 64);
				if (write(fds[1], &b, sizeof(b)) != sizeof(b))
					_exit(1);
			}
			_exit(0);
		}
	}
	close(fds[1]);
	{
		nvm_off		b;

		while (read(fds[0], &b, sizeof(b)) == sizeof(b))
			if (nvm_alloc_contains(b, MB(1) - 64) && intact(b, MB(1) - 64))
				good++;
	}
	close(fds[0]);
	for (int c = 0; c < CHILDREN; c++)
	{
		int			status;

		wait(&status);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			ok_exits++;
	}
	nvm_alloc_get_stats(&st);
	CHECK(ok_exits == CHILDREN, "every child allocated its blocks");
	CHECK(good == CHILDREN * PER_CHILD,
		  "the parent reads every block the children wrote in the segments they added");
	CHECK(st.segments >= 10 && nvm_pool_base == base_before,
		  "the pool grew while mapped at one address in every process");
	CHECK(st.blocks_allocated == CHILDREN * PER_CHILD, "the shared allocator counts every block");
	/* later tests use calloc'd shared memory again */
}

static NvmTableKey tkey = {1663, 1, 4242, 0};

static uint64_t
count_visible(NvmTable *t)
{
	static NvmSnapshot snap;
	NvmView		v = {NVM_VIEW_SNAPSHOT, &snap, 0, 0, NULL, NULL, NULL};
	uint64_t	n = 0;

	nvm_snapshot_take(&snap);
	for (uint64_t r = 1; r < nvm_table_record_limit(t); r++)
		if (nvm_chain_visible(t, r, &v))
			n++;
	return n;
}

static uint64_t
insert_rows(NvmTable *t, int slot, int rows, size_t len)
{
	NvmTxn		txn;
	char	   *row = calloc(1, len);
	uint64_t	n,
				done = 0;

	nvm_txn_init(&txn, slot);
	for (int i = 0; i < rows; i++)
		if (nvm_record_insert(t, &txn, 1, 0, row, (uint32_t) len, &n) == NVM_WRITE_OK)
			done++;
	nvm_txn_commit(&txn);
	free(row);
	return done;
}

static void
test_v2_upgrade(void)
{
	char		err[256];
	NvmTable	t;
	NvmAllocStats st;
	int			slot;
	uint64_t	rows;

	printf("# a pool of format 2\n");
	nvm_pool_close();
	unlink(pool_path);
	CHECK(open_pool(MB(64), 0, 0, NVM_POOL_FORMAT_V2, err) == NVM_POOL_CREATED, "a pool of format 2 is made");
	CHECK(nvm_pool_header->format_version == NVM_POOL_FORMAT_V2 && nvm_pool_header->flags == 0 &&
		  nvm_pool_slot(3)->ring_off != 0, "with every ring preallocated");
	unit_start_core();
	nvm_table_create(&tkey, 0, &t);
	slot = nvm_slot_acquire(1);
	rows = insert_rows(&t, slot, 5000, 1000);
	nvm_slot_release(slot);
	CHECK(rows == 5000 && count_visible(&t) == rows, "rows written in the format-2 pool");

	nvm_pool_close();
	CHECK(open_pool(MB(64), MB(256), MB(16), 0, err) == NVM_POOL_OK, "the format-2 pool opens");
	CHECK(nvm_pool_upgraded_from == NVM_POOL_FORMAT_V2 &&
		  nvm_pool_header->format_version == NVM_POOL_FORMAT_VERSION &&
		  nvm_pool_header->checksum == nvm_pool_header_checksum(nvm_pool_header),
		  "it is upgraded to the current format, with a valid header");
	unit_start_core();
	CHECK(nvm_table_open(&tkey, &t) && count_visible(&t) == rows, "its rows are all there");
	slot = nvm_slot_acquire(1);
	rows += insert_rows(&t, slot, 150000, 1000);
	nvm_slot_release(slot);
	nvm_alloc_get_stats(&st);
	CHECK(rows == 155000 && st.segments > 0 && st.pool_size > MB(64), "it grows past its fixed size");
	CHECK(reopen(MB(256), MB(16), err) == NVM_POOL_OK && nvm_pool_upgraded_from == 0,
		  "it reopens without another upgrade");
	CHECK(nvm_table_open(&tkey, &t) && count_visible(&t) == rows, "with every row, old and new");
}

static void
test_shadow_header(void)
{
	char		err[256];
	NvmPoolHeader hdr,
				shadow;
	int			fd;
	unsigned char b;

	printf("# header rewrites a crash interrupted\n");
	new_pool(MB(32), 0, 0);
	hdr = *nvm_pool_header;
	nvm_pool_close();

	/* the shadow says N2DB, the header is torn: the rewrite is finished */
	shadow = hdr;
	shadow.cc_mode = NVM_CC_N2DB;
	shadow.checksum = nvm_pool_header_checksum(&shadow);
	fd = open(pool_path, O_RDWR);
	pwrite(fd, &shadow, sizeof(shadow), NVM_POOL_SHADOW_OFF);
	pread(fd, &b, 1, 40);
	b ^= 0xff;
	pwrite(fd, &b, 1, 40);
	cur_mode = NVM_CC_N2DB;
	CHECK(open_pool(MB(32), 0, 0, 0, err) == NVM_POOL_OK, "a torn header with a valid shadow copy opens");
	CHECK(nvm_pool_header->cc_mode == NVM_CC_N2DB &&
		  nvm_pool_header->checksum == nvm_pool_header_checksum(nvm_pool_header),
		  "the header is rewritten from the shadow copy");
	CHECK(((NvmPoolHeader *) (nvm_pool_base + NVM_POOL_SHADOW_OFF))->magic == 0,
		  "and the shadow copy is cleared");
	nvm_pool_close();

	/* a torn shadow copy with a whole header: the header counts */
	pread(fd, &shadow, sizeof(shadow), 0);
	shadow.cc_mode = NVM_CC_MCSI;
	pwrite(fd, &shadow, sizeof(shadow), NVM_POOL_SHADOW_OFF);
	close(fd);
	CHECK(open_pool(MB(32), 0, 0, 0, err) == NVM_POOL_OK && nvm_pool_header->cc_mode == NVM_CC_N2DB,
		  "a torn shadow copy is ignored");
	nvm_pool_close();
	cur_mode = NVM_CC_MCSI;
}

static void
test_lazy_rings(void)
{
	NvmTable	t;
	NvmAllocStats st;
	int			slot;
	bool		none = true;
	nvm_off		ring;

	printf("# status rings allocated at first use\n");
	new_pool(MB(32), 0, 0);
	for (uint32_t c = 0; c < nvm_pool_header->max_slots; c++)
		none = none && nvm_pool_slot(c)->ring_off == 0;
	CHECK(none && (nvm_pool_header->flags & NVM_POOL_LAZY_RINGS), "a new pool has no ring yet");
	nvm_alloc_get_stats(&st);
	CHECK(st.bytes_allocated == 0, "and nothing allocated");
	nvm_table_create(&tkey, 0, &t);
	slot = nvm_slot_acquire(1);
	insert_rows(&t, slot, 10, 100);
	ring = nvm_pool_slot((uint32_t) slot)->ring_off;
	CHECK(ring != 0 && nvm_alloc_usable_size(ring) >= nvm_pool_header->ring_words * sizeof(uint64_t),
		  "a slot's first write gives it its ring, an allocated block");
	CHECK(nvm_pool_slot((uint32_t) slot + 1)->ring_off == 0, "other slots still have none");
	nvm_slot_release(slot);
	unit_start_core();				/* a crash */
	CHECK(nvm_table_open(&tkey, &t) && count_visible(&t) == 10 &&
		  nvm_pool_slot((uint32_t) slot)->ring_off == ring,
		  "after a crash the slot keeps its ring and the rows are there");
	slot = nvm_slot_acquire(1);
	insert_rows(&t, slot, 10, 100);
	CHECK(count_visible(&t) == 20, "and writes go on");
	nvm_slot_release(slot);
}

static void
test_directory_full(void)
{
	NvmTable	t;
	NvmTableKey k = {1663, 2, 0, 0};
	size_t		n = 0;

	printf("# the table directory's limit\n");
	new_pool(MB(32), MB(64), MB(8));
	for (k.rel = 1; nvm_table_create(&k, 0, &t); k.rel++)
		n++;
	CHECK(n == nvm_table_dir_count() && nvm_table_dir_used() == n,
		  "tables are created until every directory entry is used, and the count says so");
	k.rel = 1;
	CHECK(nvm_table_drop(&k) && nvm_table_dir_used() == n - 1, "a dropped table frees its entry");
	k.rel = 100000;
	CHECK(nvm_table_create(&k, 0, &t), "and a new table takes it");
}

int
main(void)
{
	snprintf(pool_path, sizeof(pool_path), "/dev/shm/nvmam_grow_%d", (int) getpid());
	test_grow_to_max();
	test_grow_large();
	test_grow_leftovers();
	test_grow_refused();
	test_grow_threads();
	test_lazy_rings();
	test_shadow_header();
	test_v2_upgrade();
	test_directory_full();
	test_grow_processes();
	nvm_pool_close();
	unlink(pool_path);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
