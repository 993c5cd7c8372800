/*
 * test_verify.c
 *	  Unit tests of the integrity checker (src/core/verify.h), in both
 *	  concurrency-control modes.
 *
 * A pool is built with the core: tables with inserts, updates (with and
 * without new index runs), deletes, rolled-back transactions and
 * subtransactions, a rolled-back insert, garbage collection and VACUUM's
 * steps (pruning into redirects, retired and finished records, numbers
 * given back), a clone (SET TABLESPACE) with its original dropped, a
 * transaction still running and one in doubt, row-lock words.  The checker must find
 * nothing in it, also after a restart.  Then damage is planted, one kind
 * at a time, and undone: a broken chain link, a link outside the pool, a
 * cycle, a version shared by two tables, a version whose status disagrees
 * with the status store, a version without a final status whose
 * transaction has ended, a creator that was never handed out, a number on
 * a free list that is in use (the list's head, and a slot overwritten while
 * its version is still in a chain), an index root naming another record, a
 * redirect to a record beyond the counter, a damaged array segment, bad
 * entries of the allocator's chunk table, and a directory entry naming a
 * block that is not a descriptor; each must be
 * reported as exactly that problem.  A chain cut as a crash in the middle
 * of a prune leaves it, and a block nothing reaches, are leaks, not damage.
 * Finally random words of the pool's blocks are overwritten many times: the
 * checker must never crash.
 *
 * Each test prints "ok" or "not ok" lines; the last line is
 * "N passed, N failed" and the exit code is non-zero on any failure.
 */
#include "alloc.h"
#include "core.h"
#include "gc.h"
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

static int	passed = 0;
static int	failed = 0;

#define CHECK(cond, ...) \
	do { \
		char name_[256]; \
		snprintf(name_, sizeof(name_), __VA_ARGS__); \
		if (cond) { passed++; printf("ok - %s\n", name_); } \
		else { failed++; printf("not ok - %s (%s:%d)\n", name_, __FILE__, __LINE__); } \
	} while (0)

static char pool_path[256];
static const char *mode_name = "mcsi";

static NvmTableKey key_a = {1663, 5, 20000, 0};
static NvmTableKey key_b = {1663, 5, 20001, 0};
static NvmTableKey key_c = {1663, 5, 20002, 0};
static NvmTableKey key_gone = {1663, 5, 20003, 0};

/* ---------------------------------------------------------------------
 * Collecting what the checker reports
 * ---------------------------------------------------------------------
 */

#define MAX_FOUND 64

typedef struct Found
{
	NvmVerifyKind kind;
	uint64_t	record_no;
	uint64_t	version_no;
	nvm_off		offset;
	char		message[512];
} Found;

static Found found[MAX_FOUND];
static int	nfound;

static void
collect(const NvmVerifyProblem *p, void *arg)
{
	(void) arg;
	if (nfound < MAX_FOUND)
	{
		found[nfound].kind = p->kind;
		found[nfound].record_no = p->record_no;
		found[nfound].version_no = p->version_no;
		found[nfound].offset = p->offset;
		snprintf(found[nfound].message, sizeof(found[nfound].message), "%s", p->message);
	}
	nfound++;
}

/* verify_pool runs the pool check; returns its result and fills found[] */
static NvmVerifyResult
verify_pool(bool leaks)
{
	NvmVerifyOptions o = {0};
	NvmVerifyResult r;

	o.report = collect;
	o.leaks = leaks;
	nfound = 0;
	nvm_verify_check_pool(&o, &r);
	return r;
}

static NvmVerifyResult
verify_table(const NvmTableKey *key)
{
	NvmVerifyOptions o = {0};
	NvmVerifyResult r;

	o.report = collect;
	nfound = 0;
	nvm_verify_check_table(key, &o, &r);
	return r;
}

static void
print_found(void)
{
	for (int i = 0; i < nfound && i < MAX_FOUND; i++)
		printf("#   %s: record %llu version %llu offset %llu: %s\n",
			   nvm_verify_kind_name(found[i].kind),
			   (unsigned long long) found[i].record_no,
			   (unsigned long long) found[i].version_no,
			   (unsigned long long) found[i].offset, found[i].message);
}

/*
 * expect_one checks that the pool check reports exactly one problem, of
 * the given kind, whose message contains text.
 */
static void
expect_one(const char *what, NvmVerifyKind kind, const char *text)
{
	NvmVerifyResult r = verify_pool(false);
	bool		ok = r.exact && !r.out_of_memory && r.problems == 1 && nfound == 1 &&
		found[0].kind == kind && strstr(found[0].message, text) != NULL;

	CHECK(ok, "%s: %s is reported as one %s problem", mode_name, what, nvm_verify_kind_name(kind));
	if (!ok)
		print_found();
}

/* expect_clean checks that the pool check and every table check find nothing */
static void
expect_clean(const char *what)
{
	NvmVerifyResult r = verify_pool(false);
	bool		ok = r.exact && !r.out_of_memory && r.problems == 0 && nfound == 0 && r.tables >= 3;

	CHECK(ok, "%s: %s: the pool check finds nothing (%llu tables, %llu records, %llu versions)",
		  mode_name, what, (unsigned long long) r.tables, (unsigned long long) r.records,
		  (unsigned long long) r.versions);
	if (!ok)
		print_found();
	for (int i = 0; i < 3; i++)
	{
		const NvmTableKey *k = i == 0 ? &key_a : i == 1 ? &key_b : &key_c;

		r = verify_table(k);
		CHECK(r.problems == 0 && nfound == 0 && r.tables == 1,
			  "%s: %s: the check of table %u finds nothing", mode_name, what, k->rel);
		if (nfound)
			print_found();
	}
}

/* ---------------------------------------------------------------------
 * The pool
 * ---------------------------------------------------------------------
 */

static void
open_pool(uint32_t mode)
{
	NvmPoolOptions o = {0};
	char		err[256];
	NvmPoolOpenResult res;

	o.path = pool_path;
	o.create_size = 64 << 20;
	o.system_identifier = 77;
	o.cc_mode = mode;
	o.max_slots = 16;
	o.ring_words = 64;
	o.max_tables = 64;
	res = nvm_pool_open(&o, err, sizeof(err));
	if (res != NVM_POOL_OK && res != NVM_POOL_CREATED)
	{
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
}

typedef struct Row
{
	uint32_t	key;
	uint32_t	value;
	char		pad[40];
} Row;

static Row
row(uint32_t key, uint32_t value)
{
	Row			r;

	memset(&r, 0, sizeof(r));
	r.key = key;
	r.value = value;
	return r;
}

#define ROWS 120

/* what the workload leaves for the damage tests to use */
static uint64_t chain4_record;	/* a chain of four versions, not pruned (table C) */
static uint64_t aborted_vno;	/* a rolled-back update at the head of its row (table C) */
static uint64_t committed_vno;	/* a committed version of table C */
static uint64_t other_record_vno;	/* a version of another record of table C */

/*
 * build runs the workload: table A gets every kind of write and garbage
 * collection, is cloned into table B (SET TABLESPACE) and dropped; table C
 * keeps long chains; a transaction stays running and one stays in doubt.
 */
static void
build(void)
{
	NvmTable	a,
				b,
				c,
				gone;
	NvmTxn		t,
				run,
				doubt;
	uint64_t	vno[ROWS];
	uint64_t	n;
	NvmConflict cf;
	Row			rw;
	NvmVacuumResult vr;

	nvm_txn_init(&t, nvm_slot_acquire(1));
	nvm_table_create(&key_a, 0, &a);
	nvm_table_create(&key_c, 0, &c);
	nvm_table_create(&key_gone, 0, &gone);

	/* table A: inserts, updates with and without new index runs, deletes */
	for (uint32_t k = 0; k < ROWS; k++)
	{
		rw = row(k, k);
		nvm_record_insert(&a, &t, 1, 0, &rw, sizeof(rw), &vno[k]);
	}
	nvm_txn_commit(&t);
	for (int round = 0; round < 3; round++)
	{
		for (uint32_t k = 0; k < ROWS; k += 2)
		{
			rw = row(k, 1000 * (round + 1) + k);
			if (nvm_record_update(&a, &t, 1, 0, vno[k], &rw, sizeof(rw), k % 4 == 0, &n, &cf) == NVM_WRITE_OK)
				vno[k] = n;
		}
		nvm_txn_commit(&t);
	}
	for (uint32_t k = 1; k < ROWS; k += 10)
		nvm_record_update(&a, &t, 1, 0, vno[k], NULL, 0, false, &n, &cf);
	nvm_txn_commit(&t);
	/* a rolled-back update, a rolled-back insert, a rolled-back subtransaction */
	rw = row(3, 7);
	nvm_record_update(&a, &t, 1, 0, vno[3], &rw, sizeof(rw), false, &n, &cf);
	rw = row(ROWS + 1, 1);
	nvm_record_insert(&a, &t, 1, 1, &rw, sizeof(rw), &n);
	nvm_txn_abort(&t);
	rw = row(5, 55);
	nvm_record_update(&a, &t, 1, 0, vno[5], &rw, sizeof(rw), false, &vno[5], &cf);
	rw = row(7, 77);
	nvm_record_update(&a, &t, 2, 1, vno[7], &rw, sizeof(rw), false, &n, &cf);
	nvm_txn_subxact_abort(&t, 2);
	nvm_txn_commit(&t);

	/* garbage collection: pruning into redirects, retiring, finishing, numbers back */
	CHECK(nvm_vacuum_table(&a, NULL, &vr) && vr.counts.versions_freed > 0 &&
		  vr.counts.records_retired > 0 && vr.counts.records_freed == vr.counts.records_retired &&
		  vr.dead_numbers > 0 && vr.retired_waiting == 0,
		  "%s: VACUUM prunes, retires and finishes dead records, gives back dead index roots", mode_name);
	nvm_vacuum_table(&a, NULL, &vr);
	for (uint32_t k = 0; k < ROWS; k += 3)
	{
		rw = row(k, 9000 + k);
		if (nvm_record_update(&a, &t, 1, 0, vno[k], &rw, sizeof(rw), false, &n, &cf) == NVM_WRITE_OK)
			vno[k] = n;
	}
	rw = row(ROWS + 2, 2);
	nvm_record_insert(&a, &t, 1, 0, &rw, sizeof(rw), &n);	/* reuses freed numbers */
	nvm_txn_commit(&t);

	/* SET TABLESPACE: A cloned into B, A dropped; B is written on */
	nvm_table_clone(&a, &key_b, 0, NULL, 0, &b);
	nvm_table_drop(&key_a);
	nvm_table_create(&key_a, 0, &a);	/* a new, small table A */
	rw = row(1, 1);
	nvm_record_insert(&a, &t, 1, 0, &rw, sizeof(rw), &n);
	for (uint32_t k = 0; k < ROWS; k += 7)
	{
		rw = row(k, 7000 + k);
		if (nvm_record_update(&b, &t, 1, 0, vno[k], &rw, sizeof(rw), true, &n, &cf) == NVM_WRITE_OK)
			vno[k] = n;
	}
	nvm_txn_commit(&t);
	nvm_table_drop(&key_gone);

	/* table C: long chains, no collection */
	rw = row(0, 0);
	nvm_record_insert(&c, &t, 1, 0, &rw, sizeof(rw), &n);
	nvm_txn_commit(&t);
	chain4_record = nvm_version_by_no(&c, n)->record_no;
	for (int i = 1; i <= 3; i++)
	{
		rw = row(0, i);
		nvm_record_update(&c, &t, 1, 0, n, &rw, sizeof(rw), false, &n, &cf);
		nvm_txn_commit(&t);
	}
	committed_vno = n;
	rw = row(1, 1);
	nvm_record_insert(&c, &t, 1, 0, &rw, sizeof(rw), &n);
	nvm_txn_commit(&t);
	other_record_vno = n;
	rw = row(1, 2);
	nvm_record_update(&c, &t, 1, 0, n, &rw, sizeof(rw), false, &aborted_vno, &cf);
	nvm_txn_abort(&t);

	/* a transaction left running on another slot, one left in doubt */
	nvm_txn_init(&run, nvm_slot_acquire(2));
	rw = row(2, 2);
	nvm_record_insert(&c, &run, 1, 0, &rw, sizeof(rw), &n);
	nvm_txn_init(&doubt, nvm_slot_acquire(3));
	rw = row(3, 3);
	nvm_record_insert(&b, &doubt, 1, 0, &rw, sizeof(rw), &n);
	nvm_txn_mark_indoubt(&doubt, 4242);
	nvm_txn_hand_over_indoubt(&doubt);

	/* row-lock words of table C, in two segments */
	atomic_store(nvm_record_lock_word(&c, 1, true), 42);
	atomic_store(nvm_record_lock_word(&c, 5000, true), 43);
	nvm_slot_release(t.slot);
	free(t.log);
}

/* ---------------------------------------------------------------------
 * Planting damage
 * ---------------------------------------------------------------------
 */

/* A word of the pool, remembered so that it can be put back. */
typedef struct Saved
{
	uint64_t   *addr;
	uint64_t	value;
} Saved;

static Saved saved[16];
static int	nsaved;

static void
plant(void *addr, uint64_t value)
{
	saved[nsaved].addr = addr;
	saved[nsaved].value = *(uint64_t *) addr;
	nsaved++;
	*(uint64_t *) addr = value;
}

static void
undo(void)
{
	while (nsaved > 0)
	{
		nsaved--;
		*saved[nsaved].addr = saved[nsaved].value;
	}
}

static NvmTable
open_table(const NvmTableKey *key)
{
	NvmTable	t;

	if (!nvm_table_open(key, &t))
	{
		fprintf(stderr, "table %u not found\n", key->rel);
		exit(2);
	}
	return t;
}

static void
test_damage(void)
{
	NvmTable	b = open_table(&key_b);
	NvmTable	c = open_table(&key_c);
	NvmTable	a = open_table(&key_a);
	NvmVersion *head = nvm_ptr(nvm_record_head(&c, chain4_record));
	NvmVersion *second = nvm_ptr(head->prev);
	NvmVersion *aborted = nvm_version_by_no(&c, aborted_vno);
	NvmVersion *committed = nvm_version_by_no(&c, committed_vno);
	NvmVersion *other = nvm_version_by_no(&c, other_record_vno);
	uint64_t	last_chunk = nvm_pool_header->chunks_off +
		(nvm_pool_header->nchunks - 1) * nvm_pool_header->chunk_size;

	if (head == NULL || second == NULL || second->prev == 0 || aborted == NULL ||
		committed == NULL || other == NULL)
	{
		CHECK(false, "%s: the workload left the versions the damage tests need", mode_name);
		return;
	}

	/* chains */
	plant(&second->prev, last_chunk + 64 + NVM_BLOCK_HEADER_SIZE);
	expect_one("a chain link into a free chunk", NVM_VERIFY_CHAIN, "in a free chunk");
	undo();
	plant(&second->prev, nvm_pool_header->pool_size + 4096);
	expect_one("a chain link outside the pool", NVM_VERIFY_CHAIN, "outside the pool");
	undo();
	plant(&second->prev, nvm_off_of(head));
	expect_one("a cycle in a chain", NVM_VERIFY_CHAIN, "cycle");
	undo();
	plant(&second->prev, nvm_off_of(second) + 16);
	expect_one("a chain link into the middle of a block", NVM_VERIFY_CHAIN, "not the start of a block");
	undo();

	/* a block owned twice: table B's first record's head is table A's */
	plant(nvm_record_head_slot(&b, 1), nvm_record_head(&a, 1));
	expect_one("a version reached from two tables", NVM_VERIFY_OWNERSHIP, "already reached");
	undo();

	/* statuses */
	plant((void *) &aborted->info, (atomic_load(&aborted->info) & ~NVM_VINFO_STATUS_MASK) | NVM_STATUS_COMMITTED);
	expect_one("a rolled-back version marked committed", NVM_VERIFY_STATUS, "status store says aborted");
	undo();
	plant((void *) &committed->info, atomic_load(&committed->info) & ~NVM_VINFO_STATUS_MASK);
	expect_one("a version without a final status of an ended transaction", NVM_VERIFY_STATUS,
			   "neither running nor in doubt");
	undo();
	plant((void *) &committed->info,
		  (atomic_load(&committed->info) & ~NVM_VINFO_STATUS_MASK) | NVM_STATUS_RUNNING);
	expect_one("an inlined status \"running\"", NVM_VERIFY_STATUS, "never inlined");
	undo();
	plant(&committed->txid, nvm_make_txid(nvm_txid_clock_id(committed->txid), UINT64_C(1) << 50));
	expect_one("a creator never handed out", NVM_VERIFY_VERSION, "never handed out");
	undo();

	/* free lists */
	plant((void *) &c.desc->free_versions, committed_vno);
	expect_one("a free list whose head is a number in use", NVM_VERIFY_FREE_LIST, "which is in use");
	undo();
	plant((void *) nvm_version_slot(&c, committed_vno), NVM_TAG_FREE);
	plant((void *) &c.desc->free_versions, committed_vno);
	{
		NvmVerifyResult r = verify_pool(false);
		bool		slot = false,
					list = false;

		for (int i = 0; i < nfound; i++)
		{
			slot |= found[i].kind == NVM_VERIFY_VERSION_SLOT && found[i].version_no == committed_vno;
			list |= found[i].kind == NVM_VERIFY_FREE_LIST && found[i].version_no == committed_vno &&
				strstr(found[i].message, "uses it") != NULL;
		}
		CHECK(r.problems == 2 && slot && list,
			  "%s: a number given to the free list while its version is in a chain is reported for the slot and the list",
			  mode_name);
		if (!(r.problems == 2 && slot && list))
			print_found();
	}
	undo();
	{
		/* a cycle in a free list: its head's entry names itself */
		uint64_t	n = atomic_load(&b.desc->free_versions) & NVM_FREE_NUMBER_MASK;

		CHECK(n != 0, "%s: the workload left numbers on a free list", mode_name);
		if (n != 0)
		{
			plant((void *) nvm_version_slot(&b, n), (n << 3) | NVM_TAG_FREE);
			expect_one("a cycle in a free list", NVM_VERIFY_FREE_LIST, "cycle");
			undo();
		}
	}

	/* index roots and redirects */
	plant(&committed->index_root, other_record_vno);
	expect_one("an index root naming another record's version", NVM_VERIFY_INDEX_ROOT,
			   "a version of record");
	undo();
	{
		/*
		 * A redirect to a record beyond the counter: the versions of its
		 * index run (still in their chain) now name a redirect to another
		 * record too.
		 */
		uint64_t	n;
		uint64_t	limit = nvm_table_version_limit(&b);
		bool		redirect = false,
					others = true;

		for (n = 1; n < limit; n++)
			if ((atomic_load(nvm_version_slot(&b, n)) & NVM_TAG_MASK) == NVM_TAG_REDIRECT)
				break;
		CHECK(n < limit, "%s: the workload left redirects", mode_name);
		if (n < limit)
		{
			NvmVerifyResult r;

			plant((void *) nvm_version_slot(&b, n), (UINT64_C(999999) << 3) | NVM_TAG_REDIRECT);
			r = verify_pool(false);
			for (int i = 0; i < nfound; i++)
			{
				redirect |= found[i].kind == NVM_VERIFY_REDIRECT && found[i].version_no == n &&
					strstr(found[i].message, "not below the record counter") != NULL;
				others &= found[i].kind == NVM_VERIFY_REDIRECT ||
					(found[i].kind == NVM_VERIFY_INDEX_ROOT && strstr(found[i].message, "redirect to record 999999"));
			}
			CHECK(r.problems >= 1 && redirect && others,
				  "%s: a redirect beyond the record counter is reported (with the versions whose index root it is)",
				  mode_name);
			if (!(redirect && others))
				print_found();
			undo();
		}
	}

	/* the allocator's chunk table: a free chunk with a class that does not exist, an orphan continuation */
	{
		_Atomic uint64_t *chunks = (_Atomic uint64_t *) (nvm_pool_base + nvm_pool_header->chunk_table_off);
		uint64_t	last = nvm_pool_header->nchunks - 1;

		CHECK(atomic_load(&chunks[last]) == NVM_CHUNK_FREE, "%s: the last chunk is free", mode_name);
		plant((void *) &chunks[last], NVM_CHUNK_SMALL(999));
		expect_one("a chunk of a size class that does not exist", NVM_VERIFY_ALLOCATOR, "size class");
		undo();
		plant((void *) &chunks[last], NVM_CHUNK_CONT);
		expect_one("a continuation chunk of no large run", NVM_VERIFY_ALLOCATOR, "no large run");
		undo();
	}

	/* arrays, the directory */
	plant((void *) &c.desc->versions.seg[5], nvm_off_of(head));
	expect_one("an array segment naming a version", NVM_VERIFY_ARRAY, "too small");
	undo();
	{
		NvmTableDirEntry *dir = nvm_table_dir();
		size_t		i;

		for (i = 0; i < nvm_table_dir_count(); i++)
			if (atomic_load(&dir[i].desc) == nvm_off_of(c.desc))
				break;
		CHECK(i < nvm_table_dir_count(), "%s: table C is in the directory", mode_name);
		if (i < nvm_table_dir_count())
		{
			plant((void *) &dir[i].desc, nvm_off_of(head));
			expect_one("a directory entry naming a version", NVM_VERIFY_DIRECTORY, "too small");
			undo();
		}
	}
	expect_clean("after the damage is undone");
}

/* ---------------------------------------------------------------------
 * Leaks
 * ---------------------------------------------------------------------
 */

static void
test_leaks(void)
{
	NvmTable	c = open_table(&key_c);
	NvmVersion *head = nvm_ptr(nvm_record_head(&c, chain4_record));
	NvmVerifyResult r;
	nvm_off		block;
	bool		ok;

	/* a prune cut the chain, and the crash came before the slots were rewritten */
	plant(&head->prev, 0);
	r = verify_pool(false);
	CHECK(r.problems == 0 && r.leaks == 3 && nfound == 0,
		  "%s: versions cut off by a crash in the middle of a prune are leaks, not damage (%llu leaks)",
		  mode_name, (unsigned long long) r.leaks);
	r = verify_pool(true);
	{
		int			numbers = 0,
					blocks = 0;

		for (int i = 0; i < nfound; i++)
		{
			numbers += found[i].kind == NVM_VERIFY_LEAK && found[i].record_no == chain4_record &&
				strstr(found[i].message, "reached by no chain") != NULL;
			blocks += found[i].kind == NVM_VERIFY_LEAK && strstr(found[i].message, "nothing reaches it") != NULL;
		}
		ok = r.problems == 0 && nfound == 6 && numbers == 3 && blocks == 3;
	}
	CHECK(ok, "%s: with leaks, each of them is reported as a lost number of its record and a block nothing reaches",
		  mode_name);
	if (!ok)
		print_found();
	undo();

	/* a block nothing reaches */
	block = nvm_alloc(100);
	r = verify_pool(true);
	ok = false;
	for (int i = 0; i < nfound; i++)
		ok |= found[i].kind == NVM_VERIFY_LEAK && found[i].offset == block;
	CHECK(r.problems == 0 && ok, "%s: an allocated block that nothing reaches is a leak", mode_name);
	nvm_free(block);
	r = verify_pool(true);
	CHECK(r.problems == 0 && r.leaks == 0, "%s: a clean pool has no leaks", mode_name);
	if (r.leaks)
		print_found();
}

/* ---------------------------------------------------------------------
 * Random damage: the checker never crashes
 * ---------------------------------------------------------------------
 */

static void
test_fuzz(void)
{
	unsigned	seed = 4711;
	int			iterations = 300;
	uint64_t	found_damage = 0;
	nvm_off		blocks[4096];
	int			nblocks = 0;
	uint64_t	cursor = 0;
	NvmBlockInfo bi;

	while (nblocks < 4096 && nvm_alloc_next_block(&cursor, &bi))
		blocks[nblocks++] = bi.payload;
	for (int i = 0; i < iterations; i++)
	{
		int			words = 1 + rand_r(&seed) % 4;

		for (int w = 0; w < words; w++)
		{
			nvm_off		b = blocks[rand_r(&seed) % nblocks];
			uint64_t	size = nvm_alloc_usable_size(b);
			uint64_t   *addr = (uint64_t *) nvm_ptr(b) + (rand_r(&seed) % (size / 8 < 16 ? size / 8 : 16));
			uint64_t	value;

			switch (rand_r(&seed) % 4)
			{
				case 0:
					value = ((uint64_t) rand_r(&seed) << 32) ^ (uint64_t) rand_r(&seed);
					break;
				case 1:
					value = blocks[rand_r(&seed) % nblocks] + (rand_r(&seed) % 3) * 8;
					break;
				case 2:
					value = *addr ^ (UINT64_C(1) << (rand_r(&seed) % 64));
					break;
				default:
					value = 0;
					break;
			}
			plant(addr, value);
		}
		found_damage += verify_pool(true).problems > 0;
		undo();
	}
	CHECK(true, "%s: %d pools with random damage checked without a crash (%llu reported damage)",
		  mode_name, iterations, (unsigned long long) found_damage);
	expect_clean("after the random damage is undone");
}

static void
run_mode(uint32_t mode)
{
	mode_name = nvm_cc_mode_name(mode);
	unlink(pool_path);
	open_pool(mode);
	unit_start_core();
	build();
	expect_clean("after the workload");
	test_damage();
	test_leaks();
	test_fuzz();

	/* a restart recovers the running transaction as aborted, keeps the in-doubt one */
	nvm_pool_close();
	open_pool(mode);
	unit_start_core();
	expect_clean("after a restart");
	nvm_pool_close();
	unlink(pool_path);
}

int
main(void)
{
	snprintf(pool_path, sizeof(pool_path), "/dev/shm/nvmam_verify_%d", (int) getpid());
	nvm_persist_set_mode(NVM_PERSIST_NONE, NULL);
	for (uint32_t m = NVM_CC_FIRST; m < NVM_CC_END; m++)
		run_mode(m);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
