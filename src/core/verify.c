/*
 * verify.c
 *	  The integrity checker (see verify.h for what it checks and under
 *	  which conditions it is exact).
 *
 * The walk keeps, for the whole check, a set of the blocks reached so far
 * (by allocator block id), so that a block reached a second time is
 * reported and not walked again: that bounds every walk.  Per table it
 * keeps which version numbers the chains use and which numbers are on the
 * free lists.  Nothing in the pool is read before the allocator has said
 * that the block it is in is allocated and big enough (alloc.h,
 * nvm_alloc_check_block), or, for array entries, before the segment has
 * been found to be such a block.
 */
#include "verify.h"

#include "alloc.h"
#include "indexlog.h"
#include "pool.h"
#include "segarray.h"
#include "txn.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRESS_EVERY	4096

/* ---------------------------------------------------------------------
 * Sets of numbers (block ids, record and version numbers): bitmaps in
 * pages that are allocated when first written.
 * ---------------------------------------------------------------------
 */

#define SET_PAGE_BITS	15		/* 32,768 numbers, 4 KiB a page */
#define SET_PAGE_WORDS	((UINT64_C(1) << SET_PAGE_BITS) / 64)

typedef struct NumberSet
{
	uint64_t	limit;			/* numbers are below this */
	uint64_t	npages;
	uint64_t  **pages;
} NumberSet;

/* A version of the chain being walked. */
typedef struct ChainLink
{
	nvm_off		off;
	NvmBlockInfo block;
} ChainLink;

typedef struct Verifier
{
	const NvmVerifyOptions *opts;
	NvmVerifyResult *res;
	bool		stop;			/* out of memory */
	uint64_t	steps;
	NumberSet	reached;		/* blocks reached so far */
	NumberSet	in_chain;		/* blocks of the chain being walked */
	ChainLink  *chain;			/* ... in order, newest first */
	size_t		chain_len;
	size_t		chain_cap;

	/* the table being walked */
	bool		in_table;
	NvmTableKey key;
	NvmTableDesc *desc;
	uint64_t	rcounter;		/* the descriptor's counters */
	uint64_t	vcounter;
	uint64_t	rlimit;			/* numbers walked: below the counter, in a segment */
	uint64_t	vlimit;
	bool		rseg[NVM_SEG_COUNT];	/* segments found valid */
	bool		vseg[NVM_SEG_COUNT];
	NumberSet	vused;			/* version numbers of versions in chains */
	NumberSet	vfree;			/* version numbers on the free list */
	NumberSet	rfree;			/* record numbers on the free list */
} Verifier;

static void *
v_alloc(Verifier *v, size_t size)
{
	void	   *p;

	if (v->stop)
		return NULL;
	if (v->opts->alloc)
		p = v->opts->alloc(size, v->opts->arg);
	else
		p = malloc(size);
	if (p == NULL)
	{
		v->stop = true;
		v->res->out_of_memory = true;
		return NULL;
	}
	memset(p, 0, size);
	return p;
}

static void
v_free(Verifier *v, void *p)
{
	if (p == NULL)
		return;
	if (v->opts->free)
		v->opts->free(p, v->opts->arg);
	else if (v->opts->alloc == NULL)
		free(p);
}

static bool
set_init(Verifier *v, NumberSet *s, uint64_t limit)
{
	memset(s, 0, sizeof(*s));
	s->limit = limit;
	s->npages = (limit >> SET_PAGE_BITS) + 1;
	s->pages = v_alloc(v, s->npages * sizeof(uint64_t *));
	return s->pages != NULL;
}

static void
set_free(Verifier *v, NumberSet *s)
{
	if (s->pages == NULL)
		return;
	for (uint64_t i = 0; i < s->npages; i++)
		v_free(v, s->pages[i]);
	v_free(v, s->pages);
	s->pages = NULL;
}

static bool
set_has(const NumberSet *s, uint64_t n)
{
	uint64_t   *page;

	if (n >= s->limit || s->pages == NULL)
		return false;
	page = s->pages[n >> SET_PAGE_BITS];
	n &= (UINT64_C(1) << SET_PAGE_BITS) - 1;
	return page != NULL && (page[n / 64] & (UINT64_C(1) << (n % 64))) != 0;
}

/* set_add adds n and says whether it was there already (false also when out of memory) */
static bool
set_add(Verifier *v, NumberSet *s, uint64_t n)
{
	uint64_t  **page;
	uint64_t	bit;

	if (n >= s->limit || s->pages == NULL)
		return false;
	page = &s->pages[n >> SET_PAGE_BITS];
	if (*page == NULL && (*page = v_alloc(v, SET_PAGE_WORDS * sizeof(uint64_t))) == NULL)
		return false;
	n &= (UINT64_C(1) << SET_PAGE_BITS) - 1;
	bit = UINT64_C(1) << (n % 64);
	if ((*page)[n / 64] & bit)
		return true;
	(*page)[n / 64] |= bit;
	return false;
}

static void
set_remove(NumberSet *s, uint64_t n)
{
	uint64_t   *page;

	if (n >= s->limit || s->pages == NULL)
		return;
	page = s->pages[n >> SET_PAGE_BITS];
	n &= (UINT64_C(1) << SET_PAGE_BITS) - 1;
	if (page != NULL)
		page[n / 64] &= ~(UINT64_C(1) << (n % 64));
}

/* ---------------------------------------------------------------------
 * Reporting
 * ---------------------------------------------------------------------
 */

const char *
nvm_verify_kind_name(NvmVerifyKind kind)
{
	switch (kind)
	{
		case NVM_VERIFY_DIRECTORY:
			return "directory";
		case NVM_VERIFY_DESCRIPTOR:
			return "descriptor";
		case NVM_VERIFY_ARRAY:
			return "array";
		case NVM_VERIFY_RECORD:
			return "record";
		case NVM_VERIFY_CHAIN:
			return "chain";
		case NVM_VERIFY_VERSION:
			return "version";
		case NVM_VERIFY_STATUS:
			return "status";
		case NVM_VERIFY_VERSION_SLOT:
			return "version slot";
		case NVM_VERIFY_INDEX_ROOT:
			return "index root";
		case NVM_VERIFY_REDIRECT:
			return "redirect";
		case NVM_VERIFY_FREE_LIST:
			return "free list";
		case NVM_VERIFY_OWNERSHIP:
			return "ownership";
		case NVM_VERIFY_SLOT:
			return "clock slot";
		case NVM_VERIFY_ALLOCATOR:
			return "allocator";
		case NVM_VERIFY_LEAK:
			return "leak";
	}
	return "?";
}

static void problem(Verifier *v, NvmVerifyKind kind, uint64_t record_no, uint64_t version_no,
					nvm_off offset, const char *fmt,...) __attribute__((format(printf, 6, 7)));

/*
 * problem counts a problem (or a leak) and hands it to the caller's report
 * function; leaks only when the caller asked for them.
 */
static void
problem(Verifier *v, NvmVerifyKind kind, uint64_t record_no, uint64_t version_no,
		nvm_off offset, const char *fmt,...)
{
	NvmVerifyProblem p;
	char		msg[512];
	va_list		ap;

	if (kind == NVM_VERIFY_LEAK)
	{
		v->res->leaks++;
		if (!v->opts->leaks)
			return;
	}
	else
		v->res->problems++;
	if (v->opts->report == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memset(&p, 0, sizeof(p));
	p.kind = kind;
	p.in_table = v->in_table;
	if (v->in_table)
		p.table = v->key;
	p.record_no = record_no;
	p.version_no = version_no;
	p.offset = offset;
	p.message = msg;
	v->opts->report(&p, v->opts->arg);
}

static void
step(Verifier *v)
{
	if (++v->steps % PROGRESS_EVERY == 0 && v->opts->progress)
		v->opts->progress(v->opts->arg);
}

/* A txid as the PG layer prints none: clock id and clock value. */
#define TXID_FMT		"%u:%llu"
#define TXID_ARGS(t)	nvm_txid_clock_id(t), (unsigned long long) nvm_txid_clock_ts(t)

static const char *
status_name(uint64_t st)
{
	switch (st)
	{
		case NVM_STATUS_INITIAL:
			return "none";
		case NVM_STATUS_RUNNING:
			return "running";
		case NVM_STATUS_COMMITTED:
			return "committed";
		case NVM_STATUS_ABORTED:
			return "aborted";
	}
	return "?";
}

/*
 * block_of checks that off is the payload of an allocated block of at least
 * need bytes and fills *bi; otherwise it writes what off is into why and
 * returns false.
 */
static bool
block_of(nvm_off off, size_t need, NvmBlockInfo *bi, char *why, size_t whylen)
{
	NvmBlockState st = nvm_alloc_check_block(off, bi);

	if (st != NVM_BLOCK_OK)
	{
		snprintf(why, whylen, "%s", nvm_alloc_block_state_name(st));
		return false;
	}
	if (bi->size < need)
	{
		snprintf(why, whylen, "a block of %llu bytes, too small for it",
				 (unsigned long long) bi->size);
		return false;
	}
	return true;
}

/*
 * block_of_fits says whether the allocated block at off holds a header of
 * head bytes and n entries of size bytes each.
 */
static bool
block_of_fits(nvm_off off, size_t head, uint64_t n, size_t size)
{
	NvmBlockInfo bi;

	if (nvm_alloc_check_block(off, &bi) != NVM_BLOCK_OK || bi.size < head)
		return false;
	return n <= (bi.size - head) / size;
}

/* ---------------------------------------------------------------------
 * Arrays
 * ---------------------------------------------------------------------
 */

/*
 * check_array checks the segments of one of the table's arrays: each is
 * an allocated block big enough for its entries and reached nowhere else;
 * seg_ok[k] says which ones may be read.  Returns the number of indexes up
 * to the end of the last valid segment (entries in missing segments are
 * skipped).
 */
static uint64_t
check_array(Verifier *v, NvmSegArray *arr, bool *seg_ok, const char *what)
{
	uint64_t	covered = 0;

	for (int k = 0; k < NVM_SEG_COUNT; k++)
	{
		nvm_off		seg = atomic_load(&arr->seg[k]);
		uint64_t	entries = (uint64_t) NVM_SEG_BASE << k;
		NvmBlockInfo bi;
		char		why[96];

		seg_ok[k] = false;
		if (seg == 0)
			continue;
		if (!block_of(seg, entries * sizeof(uint64_t), &bi, why, sizeof(why)))
			problem(v, NVM_VERIFY_ARRAY, 0, 0, nvm_off_of(&arr->seg[k]),
					"segment %d of the %s array names offset %llu, %s",
					k, what, (unsigned long long) seg, why);
		else if (set_add(v, &v->reached, bi.id))
			problem(v, NVM_VERIFY_OWNERSHIP, 0, 0, seg,
					"segment %d of the %s array is a block reached a second time",
					k, what);
		else
		{
			seg_ok[k] = true;
			covered = (uint64_t) NVM_SEG_BASE * ((UINT64_C(2) << k) - 1);
		}
	}
	return covered;
}

/*
 * entry_at returns the address of entry idx of arr, or NULL if its segment
 * is missing or was found invalid.
 */
static _Atomic uint64_t *
entry_at(NvmSegArray *arr, const bool *seg_ok, uint64_t idx)
{
	int			k;
	uint64_t	pos;

	nvm_segarray_locate(idx, &k, &pos);
	if (k >= NVM_SEG_COUNT || !seg_ok[k])
		return NULL;
	return ((_Atomic uint64_t *) nvm_ptr(atomic_load(&arr->seg[k]))) + pos;
}

/* the value of entry idx; false if it cannot be read */
static bool
entry_value(NvmSegArray *arr, const bool *seg_ok, uint64_t idx, uint64_t *val, nvm_off *where)
{
	_Atomic uint64_t *e = entry_at(arr, seg_ok, idx);

	if (e == NULL)
		return false;
	*val = atomic_load_explicit(e, memory_order_acquire);
	if (where)
		*where = nvm_off_of((const void *) e);
	return true;
}

/* describe_value writes what an array entry holds, for messages */
static void
describe_value(uint64_t val, char *buf, size_t len)
{
	switch (val & NVM_TAG_MASK)
	{
		case 0:
			if (val == 0)
				snprintf(buf, len, "nothing");
			else
				snprintf(buf, len, "offset %llu", (unsigned long long) val);
			break;
		case NVM_TAG_FREE:
			snprintf(buf, len, "a free-list entry");
			break;
		case NVM_TAG_REDIRECT:
			snprintf(buf, len, "a redirect to record %llu", (unsigned long long) (val >> 3));
			break;
		case NVM_TAG_RETIRED:
			snprintf(buf, len, "a retired-record marker");
			break;
		default:
			snprintf(buf, len, "the invalid value %llu", (unsigned long long) val);
			break;
	}
}

/* ---------------------------------------------------------------------
 * Free lists
 * ---------------------------------------------------------------------
 */

/*
 * walk_free_list follows a free list from its head: every number on it is
 * below limit, has an entry, is tagged free and is met once; the numbers
 * go into set.  A problem is reported at the word that names the number
 * (the head, or the entry before it).
 */
static void
walk_free_list(Verifier *v, NvmSegArray *arr, const bool *seg_ok, _Atomic uint64_t *list,
			   uint64_t limit, NumberSet *set, bool versions)
{
	const char *what = versions ? "version" : "record";
	uint64_t	n = atomic_load(list) & NVM_FREE_NUMBER_MASK;
	nvm_off		from = nvm_off_of((const void *) list);

	while (n != 0 && !v->stop)
	{
		uint64_t	val;
		nvm_off		where;
		uint64_t	rec = versions ? 0 : n;
		uint64_t	ver = versions ? n : 0;

		step(v);
		if (n >= limit)
		{
			problem(v, NVM_VERIFY_FREE_LIST, rec, ver, from,
					"the free list of %s numbers names %llu, which is not below the counter (%llu)",
					what, (unsigned long long) n, (unsigned long long) limit);
			return;
		}
		if (!entry_value(arr, seg_ok, n, &val, &where))
		{
			problem(v, NVM_VERIFY_FREE_LIST, rec, ver, from,
					"the free list of %s numbers names %llu, which has no entry in the array",
					what, (unsigned long long) n);
			return;
		}
		if ((val & NVM_TAG_MASK) != NVM_TAG_FREE)
		{
			char		desc[96];

			describe_value(val, desc, sizeof(desc));
			problem(v, NVM_VERIFY_FREE_LIST, rec, ver, from,
					"the free list of %s numbers reaches %llu, which is in use (its entry holds %s)",
					what, (unsigned long long) n, desc);
			return;
		}
		if (set_add(v, set, n))
		{
			problem(v, NVM_VERIFY_FREE_LIST, rec, ver, from,
					"the free list of %s numbers has a cycle at %llu",
					what, (unsigned long long) n);
			return;
		}
		from = where;
		n = val >> 3;
	}
}

/* ---------------------------------------------------------------------
 * Versions and chains
 * ---------------------------------------------------------------------
 */

/* check_status checks v's status against the status store (verify.h) */
static void
check_status(Verifier *v, uint64_t r, NvmVersion *ver, nvm_off x)
{
	uint64_t	info = atomic_load_explicit(&ver->info, memory_order_acquire);
	uint64_t	inl = info & NVM_VINFO_STATUS_MASK;
	NvmTxnStatus st;

	if (inl == NVM_STATUS_RUNNING)
	{
		problem(v, NVM_VERIFY_STATUS, r, ver->version_no, x,
				"version has the inlined status \"running\", which is never inlined");
		return;
	}
	if (inl == NVM_STATUS_INITIAL)
	{
		bool		known = nvm_status_entry(ver->txid, &st);

		if (nvm_txid_unfinished(ver->txid))
			return;
		/* it may have finished, inlining, since the first look */
		if ((atomic_load_explicit(&ver->info, memory_order_acquire) & NVM_VINFO_STATUS_MASK) != 0)
			return;
		problem(v, NVM_VERIFY_STATUS, r, ver->version_no, x,
				"version has no final status, but its transaction " TXID_FMT " is neither running nor in doubt (the status store says %s)",
				TXID_ARGS(ver->txid), known ? status_name(st) : "nothing about it any more");
		return;
	}
	if (inl == NVM_STATUS_COMMITTED && nvm_status_entry(ver->txid, &st) &&
		st != NVM_STATUS_COMMITTED)
		problem(v, NVM_VERIFY_STATUS, r, ver->version_no, x,
				"version is committed, but the status store says %s for its transaction " TXID_FMT,
				status_name(st), TXID_ARGS(ver->txid));
}

/*
 * check_version checks the header of version ver (at x, in block bi) of
 * record r; newer is the version above it in the chain (NULL for the
 * head).
 */

/*
 * taken_over_by_replay says whether version slot value val may leave a
 * version with number n without its slot in a pool a standby replayed
 * into: the primary gave the number to a new version after it collected
 * the old one, which the standby may keep for its queries (replica.h), so
 * the slot names the new version, a redirect once the new version (an
 * index root) was collected in turn, or nothing if a crash cut the new
 * one's replay short (recovery unlinks it and empties the slot; replay
 * installs it again).
 */
static bool
taken_over_by_replay(uint64_t val, uint64_t n)
{
	if (nvm_pool_replayed_lsn() == 0)
		return false;
	if (val == 0 || (val & NVM_TAG_MASK) == NVM_TAG_REDIRECT)
		return true;
	if ((val & NVM_TAG_MASK) != 0 || !nvm_alloc_contains(val, sizeof(NvmVersion)))
		return false;
	return ((NvmVersion *) nvm_ptr(val))->version_no == n;
}

static void
check_version(Verifier *v, uint64_t r, NvmVersion *ver, nvm_off x, const NvmBlockInfo *bi,
			  NvmVersion *newer)
{
	uint64_t	n = ver->version_no;
	uint64_t	info = atomic_load_explicit(&ver->info, memory_order_acquire);
	uint64_t	known = NVM_VINFO_STATUS_MASK | NVM_VINFO_TOMBSTONE | NVM_VINFO_INSERTED |
		NVM_VINFO_MOVED | (UINT64_C(0xffffffff) << NVM_VINFO_CID_SHIFT);
	uint64_t	val;
	nvm_off		where;

	if (sizeof(NvmVersion) + (uint64_t) ver->data_len > bi->size)
		problem(v, NVM_VERIFY_VERSION, r, n, x,
				"version's data of %u bytes does not fit its block of %llu bytes",
				ver->data_len, (unsigned long long) bi->size);
	if (info & ~known)
		problem(v, NVM_VERIFY_VERSION, r, n, x,
				"version's info word %llx has unknown bits", (unsigned long long) info);
	if ((info & NVM_VINFO_MOVED) && !(info & NVM_VINFO_TOMBSTONE))
		problem(v, NVM_VERIFY_VERSION, r, n, x,
				"version is marked moved to another table but is not a tombstone");
	if ((info & NVM_VINFO_TOMBSTONE) && ver->data_len != 0)
		problem(v, NVM_VERIFY_VERSION, r, n, x,
				"tombstone has %u bytes of data", ver->data_len);
	if ((info & NVM_VINFO_INSERTED) && ver->prev != 0)
		problem(v, NVM_VERIFY_CHAIN, r, n, x,
				"the version that inserted the record has an older version (offset %llu)",
				(unsigned long long) ver->prev);

	/* its number: below the counter, its slot names it, nobody else's, not free */
	if (n == 0 || n >= v->vcounter)
		problem(v, NVM_VERIFY_VERSION, r, n, x,
				"version number %llu is not below the counter (%llu)",
				(unsigned long long) n, (unsigned long long) v->vcounter);
	else if (n >= v->vlimit || !entry_value(&v->desc->versions, v->vseg, n, &val, &where))
		problem(v, NVM_VERIFY_VERSION_SLOT, r, n, x,
				"version number %llu has no slot in the version array", (unsigned long long) n);
	else if (val != x && taken_over_by_replay(val, n))
	{
		/* a standby's replay gave the number to a newer version (replica.h) */
	}
	else
	{
		if (val != x)
		{
			char		desc[96];

			describe_value(val, desc, sizeof(desc));
			problem(v, NVM_VERIFY_VERSION_SLOT, r, n, where,
					"version slot %llu holds %s, not the version at offset %llu that has this number",
					(unsigned long long) n, desc, (unsigned long long) x);
		}
		if (set_add(v, &v->vused, n))
			problem(v, NVM_VERIFY_VERSION, r, n, x,
					"version number %llu is used by two versions", (unsigned long long) n);
		if (set_has(&v->vfree, n))
			problem(v, NVM_VERIFY_FREE_LIST, r, n, where,
					"version number %llu is on the free list, but the version at offset %llu uses it",
					(unsigned long long) n, (unsigned long long) x);
	}

	/* its creator and status */
	if (!nvm_txid_handed_out(ver->txid))
		problem(v, NVM_VERIFY_VERSION, r, n, x,
				"version's creator " TXID_FMT " was never handed out",
				TXID_ARGS(ver->txid));
	else
		check_status(v, r, ver, x);

	/* newest to oldest: a transaction's later commands are above its earlier ones */
	if (newer != NULL && newer->txid == ver->txid &&
		nvm_version_cid(newer) < nvm_version_cid(ver))
		problem(v, NVM_VERIFY_CHAIN, r, n, x,
				"version %llu of command %u is newer than this version of command %u of the same transaction",
				(unsigned long long) newer->version_no, nvm_version_cid(newer), nvm_version_cid(ver));
}

/*
 * check_index_root checks the index root of a version ver of record r (not
 * a tombstone): it is the version's own number, or names a version of the
 * same record, or a redirect to it.
 */
static void
check_index_root(Verifier *v, uint64_t r, NvmVersion *ver, nvm_off x)
{
	uint64_t	root = ver->index_root;
	uint64_t	val;
	char		desc[96];

	if (root == ver->version_no)
		return;
	if (root == 0 || root >= v->vcounter)
	{
		problem(v, NVM_VERIFY_INDEX_ROOT, r, ver->version_no, x,
				"index root %llu is not below the version counter (%llu)",
				(unsigned long long) root, (unsigned long long) v->vcounter);
		return;
	}
	if (root >= v->vlimit || !entry_value(&v->desc->versions, v->vseg, root, &val, NULL))
	{
		problem(v, NVM_VERIFY_INDEX_ROOT, r, ver->version_no, x,
				"index root %llu has no slot in the version array", (unsigned long long) root);
		return;
	}
	switch (val & NVM_TAG_MASK)
	{
		case 0:
			if (val != 0)
			{
				NvmBlockInfo bi;
				char		why[96];
				NvmVersion *target;

				if (!block_of(val, sizeof(NvmVersion), &bi, why, sizeof(why)))
				{
					problem(v, NVM_VERIFY_INDEX_ROOT, r, ver->version_no, x,
							"index root %llu names offset %llu, %s",
							(unsigned long long) root, (unsigned long long) val, why);
					return;
				}
				target = nvm_ptr(val);
				if (target->record_no == r && target->version_no == root)
					return;
				problem(v, NVM_VERIFY_INDEX_ROOT, r, ver->version_no, x,
						"index root %llu names a version of record %llu numbered %llu",
						(unsigned long long) root, (unsigned long long) target->record_no,
						(unsigned long long) target->version_no);
				return;
			}
			break;
		case NVM_TAG_REDIRECT:
			if ((val >> 3) == r)
				return;
			break;
		default:
			break;
	}
	describe_value(val, desc, sizeof(desc));
	problem(v, NVM_VERIFY_INDEX_ROOT, r, ver->version_no, x,
			"index root %llu holds %s, not a version of this record or a redirect to it",
			(unsigned long long) root, desc);
}

/*
 * check_retired checks the chain of a retired record r just walked: its
 * head is a tombstone with nothing older, or the head of a chain every
 * version of which was rolled back; either has room for the epoch it was
 * retired at (gc.h).
 */
static void
check_retired(Verifier *v, uint64_t r)
{
	ChainLink  *head = &v->chain[0];
	NvmVersion *tomb = nvm_ptr(head->off);

	if (nvm_version_is_tombstone(tomb))
	{
		if (head->block.size < sizeof(NvmVersion) + sizeof(uint64_t))
			problem(v, NVM_VERIFY_RECORD, r, tomb->version_no, head->off,
					"the tombstone of retired record %llu has no room for its epoch",
					(unsigned long long) r);
		if (tomb->prev != 0)
			problem(v, NVM_VERIFY_RECORD, r, tomb->version_no, head->off,
					"the tombstone of retired record %llu still has an older version",
					(unsigned long long) r);
		if ((atomic_load(&tomb->info) & NVM_VINFO_STATUS_MASK) != NVM_STATUS_COMMITTED)
			problem(v, NVM_VERIFY_RECORD, r, tomb->version_no, head->off,
					"the tombstone of retired record %llu is not committed",
					(unsigned long long) r);
		return;
	}
	if (tomb->data_len < sizeof(uint64_t))
		problem(v, NVM_VERIFY_RECORD, r, tomb->version_no, head->off,
				"retired record %llu has a head with no room for its epoch",
				(unsigned long long) r);
	for (size_t i = 0; i < v->chain_len; i++)
	{
		NvmVersion *ver = nvm_ptr(v->chain[i].off);

		if ((atomic_load(&ver->info) & NVM_VINFO_STATUS_MASK) != NVM_STATUS_ABORTED)
		{
			problem(v, NVM_VERIFY_RECORD, r, ver->version_no, v->chain[i].off,
					"retired record %llu has no tombstone, but its version %llu is not rolled back",
					(unsigned long long) r, (unsigned long long) ver->version_no);
			return;
		}
	}
}

/*
 * walk_chain walks the chain of record r from head (the head's value, or
 * for a retired record its tombstone): every link is checked before it is
 * followed; a block met before ends the walk.  link is where head was read
 * (for messages).
 */
static void
walk_chain(Verifier *v, uint64_t r, nvm_off head, nvm_off link, bool retired)
{
	NvmVersion *newer = NULL;
	nvm_off		x = head;
	NvmBlockInfo bi;
	char		why[96];

	v->chain_len = 0;
	while (x != 0 && !v->stop)
	{
		NvmVersion *ver;
		uint64_t	newer_no = newer ? newer->version_no : 0;

		step(v);
		if (!block_of(x, sizeof(NvmVersion), &bi, why, sizeof(why)))
		{
			if (newer)
				problem(v, NVM_VERIFY_CHAIN, r, newer_no, link,
						"the older version of version %llu is at offset %llu, %s",
						(unsigned long long) newer_no, (unsigned long long) x, why);
			else
				problem(v, NVM_VERIFY_RECORD, r, 0, link,
						"the head of record %llu names offset %llu, %s",
						(unsigned long long) r, (unsigned long long) x, why);
			break;
		}
		if (set_has(&v->in_chain, bi.id))
		{
			problem(v, NVM_VERIFY_CHAIN, r, newer_no, link,
					"the chain of record %llu has a cycle: the older version of version %llu is offset %llu, met before",
					(unsigned long long) r, (unsigned long long) newer_no, (unsigned long long) x);
			break;
		}
		if (set_add(v, &v->reached, bi.id))
		{
			problem(v, NVM_VERIFY_OWNERSHIP, r, newer_no, x,
					"the version at offset %llu, reached from record %llu, was already reached from another record, array or table",
					(unsigned long long) x, (unsigned long long) r);
			break;
		}
		if (v->stop)
			break;
		(void) set_add(v, &v->in_chain, bi.id);
		if (v->chain_len == v->chain_cap)
		{
			size_t		cap = v->chain_cap ? v->chain_cap * 2 : 64;
			ChainLink  *chain = v_alloc(v, cap * sizeof(ChainLink));

			if (chain == NULL)
				break;
			if (v->chain_len)
				memcpy(chain, v->chain, v->chain_len * sizeof(ChainLink));
			v_free(v, v->chain);
			v->chain = chain;
			v->chain_cap = cap;
		}
		v->chain[v->chain_len].off = x;
		v->chain[v->chain_len].block = bi;
		v->chain_len++;
		v->res->versions++;

		ver = nvm_ptr(x);
		if (ver->record_no != r)
		{
			problem(v, NVM_VERIFY_CHAIN, r, ver->version_no, x,
					"the version at offset %llu, in the chain of record %llu, names record %llu",
					(unsigned long long) x, (unsigned long long) r, (unsigned long long) ver->record_no);
			break;
		}
		check_version(v, r, ver, x, &bi, newer);
		newer = ver;
		link = nvm_off_of(&ver->prev);
		x = ver->prev;
	}

	for (size_t i = 0; i < v->chain_len && !v->stop; i++)
	{
		NvmVersion *ver = nvm_ptr(v->chain[i].off);

		if (ver->record_no == r && !nvm_version_is_tombstone(ver))
			check_index_root(v, r, ver, v->chain[i].off);
	}
	if (retired && v->chain_len > 0)
		check_retired(v, r);
	for (size_t i = 0; i < v->chain_len; i++)
		set_remove(&v->in_chain, v->chain[i].block.id);
	v->chain_len = 0;
}

/* walk_records walks every record head and its chain */
static void
walk_records(Verifier *v)
{
	for (uint64_t r = 1; r < v->rlimit && !v->stop; r++)
	{
		uint64_t	val;
		nvm_off		where;

		if (!entry_value(&v->desc->records, v->rseg, r, &val, &where) || val == 0)
			continue;
		switch (val & NVM_TAG_MASK)
		{
			case 0:
				v->res->records++;
				walk_chain(v, r, val, where, false);
				break;
			case NVM_TAG_RETIRED:
				v->res->records++;
				walk_chain(v, r, val & ~NVM_TAG_MASK, where, true);
				break;
			case NVM_TAG_FREE:
				break;			/* on the free list, or a number lost in a crash */
			default:
				{
					char		desc[96];

					describe_value(val, desc, sizeof(desc));
					problem(v, NVM_VERIFY_RECORD, r, 0, where,
							"the head of record %llu holds %s", (unsigned long long) r, desc);
					break;
				}
		}
	}
}

/*
 * walk_version_slots checks every version slot that was not met as the
 * slot of a version in a chain.  A redirect must name a record below the
 * counter.  An offset is a lost number, not damage (readers take a slot's
 * version only if it carries the slot's number, and use it only if its
 * record's chain reaches it): a version no chain reaches (a prune cut the
 * chain, then a crash came before the slot was rewritten), or a stale slot
 * (a crash before the drain that publishes a new version left the slot
 * durable and the version not; the block may have been reused since).
 */
static void
walk_version_slots(Verifier *v)
{
	for (uint64_t n = 1; n < v->vlimit && !v->stop; n++)
	{
		uint64_t	val;
		nvm_off		where;
		NvmBlockInfo bi;
		char		why[96];
		NvmVersion *ver;

		if (n % 64 == 0)
			step(v);
		if (!entry_value(&v->desc->versions, v->vseg, n, &val, &where) || val == 0)
			continue;
		switch (val & NVM_TAG_MASK)
		{
			case NVM_TAG_FREE:
				continue;
			case NVM_TAG_REDIRECT:
				if ((val >> 3) == 0 || (val >> 3) >= v->rcounter)
					problem(v, NVM_VERIFY_REDIRECT, 0, n, where,
							"version slot %llu redirects to record %llu, which is not below the record counter (%llu)",
							(unsigned long long) n, (unsigned long long) (val >> 3),
							(unsigned long long) v->rcounter);
				continue;
			case NVM_TAG_RETIRED:
				problem(v, NVM_VERIFY_VERSION_SLOT, 0, n, where,
						"version slot %llu holds a retired-record marker", (unsigned long long) n);
				continue;
			default:
				break;
		}
		if (set_has(&v->vused, n))
			continue;			/* the slot of a version in a chain: checked there */
		if (!block_of(val, sizeof(NvmVersion), &bi, why, sizeof(why)))
		{
			problem(v, NVM_VERIFY_LEAK, 0, n, where,
					"version number %llu is lost: its slot names offset %llu, %s",
					(unsigned long long) n, (unsigned long long) val, why);
			continue;
		}
		ver = nvm_ptr(val);
		if (ver->version_no != n || set_has(&v->reached, bi.id))
		{
			problem(v, NVM_VERIFY_LEAK, 0, n, where,
					"version number %llu is lost: its slot names the block at offset %llu, which holds version %llu of record %llu%s",
					(unsigned long long) n, (unsigned long long) val,
					(unsigned long long) ver->version_no, (unsigned long long) ver->record_no,
					set_has(&v->reached, bi.id) ? ", reached from elsewhere" : "");
			continue;
		}
		problem(v, NVM_VERIFY_LEAK, ver->record_no, n, val,
				"version %llu of record %llu is reached by no chain",
				(unsigned long long) n, (unsigned long long) ver->record_no);
	}
}

/* ---------------------------------------------------------------------
 * Tables
 * ---------------------------------------------------------------------
 */

static bool
key_equal(const NvmTableKey *a, const NvmTableKey *b)
{
	return a->spc == b->spc && a->db == b->db && a->rel == b->rel && a->pad == b->pad;
}

/*
 * check_descriptor_link checks the clone link of a descriptor: 0, or an
 * allocated table descriptor (store.h, "Reuse of numbers").
 */
static void
check_descriptor_link(Verifier *v, NvmTableDesc *desc)
{
	nvm_off		o = atomic_load(&desc->number_floor_of);
	NvmBlockInfo bi;
	char		why[96];

	if (o == 0)
		return;
	if (!block_of(o, sizeof(NvmTableDesc), &bi, why, sizeof(why)))
		problem(v, NVM_VERIFY_DESCRIPTOR, 0, 0, nvm_off_of(&desc->number_floor_of),
				"the table this one was cloned from is at offset %llu, %s",
				(unsigned long long) o, why);
	else if (((NvmTableDesc *) nvm_ptr(o))->magic != NVM_TABLE_MAGIC)
		problem(v, NVM_VERIFY_DESCRIPTOR, 0, 0, nvm_off_of(&desc->number_floor_of),
				"the table this one was cloned from, at offset %llu, is not a table descriptor",
				(unsigned long long) o);
}

/*
 * number_limit reads a counter of the descriptor into *counter and returns
 * the limit of the numbers to walk: the counter, but no more than the
 * array's valid segments cover.
 */
static uint64_t
number_limit(Verifier *v, _Atomic uint64_t *word, uint64_t covered, uint64_t *counter,
			 const char *what)
{
	uint64_t	limit = atomic_load(word);

	if (limit == 0)
		problem(v, NVM_VERIFY_DESCRIPTOR, 0, 0, nvm_off_of((const void *) word),
				"the %s counter is 0 (numbers start at 1)", what);
	*counter = limit;
	if (limit > covered)
		limit = covered;
	return limit > 0 ? limit : 1;
}

/*
 * check_lock_words checks a table's row-lock words (store.h), if it has
 * any: the array's directory block and its segments are allocated blocks
 * reached nowhere else.  The words themselves belong to the PG layer.
 */
static void
check_lock_words(Verifier *v, NvmTableDesc *desc)
{
	nvm_off		arr = atomic_load(&desc->lock_words);
	bool		seg_ok[NVM_SEG_COUNT];
	NvmBlockInfo bi;
	char		why[96];

	if (arr == 0)
		return;
	if (!block_of(arr, sizeof(NvmSegArray), &bi, why, sizeof(why)))
		problem(v, NVM_VERIFY_DESCRIPTOR, 0, 0, nvm_off_of(&desc->lock_words),
				"the descriptor names its lock-word array at offset %llu, %s",
				(unsigned long long) arr, why);
	else if (set_add(v, &v->reached, bi.id))
		problem(v, NVM_VERIFY_OWNERSHIP, 0, 0, arr,
				"the lock-word array at offset %llu is a block reached a second time",
				(unsigned long long) arr);
	else
		(void) check_array(v, nvm_ptr(arr), seg_ok, "lock-word");
}

/*
 * check_ckpt_marks checks a table's change marks (ckptmark.h), if it has
 * any: each bitmap's directory block and its segments are allocated blocks
 * reached nowhere else.  The bits themselves may say anything.
 */
static void
check_ckpt_marks(Verifier *v, NvmTableDesc *desc)
{
	for (int p = 0; p < 2; p++)
	{
		nvm_off		arr = atomic_load(&desc->ckpt_marks[p]);
		bool		seg_ok[NVM_SEG_COUNT];
		NvmBlockInfo bi;
		char		why[96];

		if (arr == 0)
			continue;
		if (!block_of(arr, sizeof(NvmSegArray), &bi, why, sizeof(why)))
			problem(v, NVM_VERIFY_DESCRIPTOR, 0, 0, nvm_off_of(&desc->ckpt_marks[p]),
					"the descriptor names its change marks at offset %llu, %s",
					(unsigned long long) arr, why);
		else if (set_add(v, &v->reached, bi.id))
			problem(v, NVM_VERIFY_OWNERSHIP, 0, 0, arr,
					"the change marks at offset %llu are a block reached a second time",
					(unsigned long long) arr);
		else
			(void) check_array(v, nvm_ptr(arr), seg_ok, "change-mark");
	}
}

/* walk_table checks the table whose directory entry has key and names desc_off */
static void
walk_table(Verifier *v, const NvmTableKey *key, nvm_off desc_off, nvm_off dir_where)
{
	NvmBlockInfo bi;
	char		why[96];
	NvmTableDesc *desc;
	uint64_t	rcovered,
				vcovered;

	v->in_table = true;
	v->key = *key;
	v->res->tables++;
	if (!block_of(desc_off, sizeof(NvmTableDesc), &bi, why, sizeof(why)))
	{
		problem(v, NVM_VERIFY_DIRECTORY, 0, 0, dir_where,
				"the directory names the descriptor at offset %llu, %s",
				(unsigned long long) desc_off, why);
		goto done;
	}
	if (set_add(v, &v->reached, bi.id))
	{
		problem(v, NVM_VERIFY_OWNERSHIP, 0, 0, desc_off,
				"the descriptor at offset %llu was already reached from another directory entry",
				(unsigned long long) desc_off);
		goto done;
	}
	desc = nvm_ptr(desc_off);
	if (desc->magic != NVM_TABLE_MAGIC)
	{
		problem(v, NVM_VERIFY_DESCRIPTOR, 0, 0, desc_off,
				"the descriptor at offset %llu has no table magic", (unsigned long long) desc_off);
		goto done;
	}
	if (!key_equal(&desc->key, key))
		problem(v, NVM_VERIFY_DESCRIPTOR, 0, 0, desc_off,
				"the descriptor's key %u/%u/%u/%x differs from its directory entry's",
				desc->key.spc, desc->key.db, desc->key.rel, desc->key.pad);
	v->desc = desc;
	check_descriptor_link(v, desc);
	rcovered = check_array(v, &desc->records, v->rseg, "record");
	vcovered = check_array(v, &desc->versions, v->vseg, "version");
	check_lock_words(v, desc);
	check_ckpt_marks(v, desc);
	v->rlimit = number_limit(v, &desc->next_record, rcovered, &v->rcounter, "record");
	v->vlimit = number_limit(v, &desc->next_version, vcovered, &v->vcounter, "version");
	if (!set_init(v, &v->vused, v->vlimit) || !set_init(v, &v->vfree, v->vlimit) ||
		!set_init(v, &v->rfree, v->rlimit))
		goto done;

	walk_free_list(v, &desc->versions, v->vseg, &desc->free_versions, v->vcounter, &v->vfree, true);
	walk_free_list(v, &desc->records, v->rseg, &desc->free_records, v->rcounter, &v->rfree, false);
	walk_records(v);
	walk_version_slots(v);

done:
	set_free(v, &v->vused);
	set_free(v, &v->vfree);
	set_free(v, &v->rfree);
	v->desc = NULL;
	v->in_table = false;
}

static bool
verifier_init(Verifier *v, const NvmVerifyOptions *opts, NvmVerifyResult *result)
{
	static const NvmVerifyOptions none = {0};

	memset(v, 0, sizeof(*v));
	memset(result, 0, sizeof(*result));
	v->opts = opts ? opts : &none;
	v->res = result;
	return set_init(v, &v->reached, nvm_alloc_block_id_limit()) &&
		set_init(v, &v->in_chain, nvm_alloc_block_id_limit());
}

static void
verifier_done(Verifier *v)
{
	set_free(v, &v->reached);
	set_free(v, &v->in_chain);
	v_free(v, v->chain);
	v->chain = NULL;
}

void
nvm_verify_check_table(const NvmTableKey *key, const NvmVerifyOptions *opts, NvmVerifyResult *result)
{
	Verifier	v;
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		ndir = nvm_table_dir_count();
	size_t		found = ndir;
	int			matches = 0;

	if (!verifier_init(&v, opts, result))
	{
		verifier_done(&v);
		return;
	}
	for (size_t i = 0; i < ndir; i++)
	{
		if (atomic_load(&dir[i].desc) != 0 && key_equal(&dir[i].key, key))
		{
			if (matches++ == 0)
				found = i;
		}
	}
	v.in_table = true;
	v.key = *key;
	if (matches == 0)
		problem(&v, NVM_VERIFY_DIRECTORY, 0, 0, 0,
				"no table with key %u/%u/%u/%x is in the pool's directory",
				key->spc, key->db, key->rel, key->pad);
	else
	{
		if (matches > 1)
			problem(&v, NVM_VERIFY_DIRECTORY, 0, 0, nvm_off_of(&dir[found]),
					"%d directory entries have this table's key", matches);
		walk_table(&v, key, atomic_load(&dir[found].desc), nvm_off_of(&dir[found]));
	}
	result->exact = true;
	verifier_done(&v);
}

/* ---------------------------------------------------------------------
 * The whole pool
 * ---------------------------------------------------------------------
 */

/*
 * claim_block checks that off is an allocated block of at least need bytes
 * reached from nowhere else, reporting what it is otherwise (as `what` of
 * kind, the link being the word at `link`); true if it may be read.
 */
static bool
claim_block(Verifier *v, NvmVerifyKind kind, nvm_off link, nvm_off off, size_t need,
			const char *what)
{
	NvmBlockInfo bi;
	char		why[96];

	if (!block_of(off, need, &bi, why, sizeof(why)))
	{
		problem(v, kind, 0, 0, link, "%s names offset %llu, %s",
				what, (unsigned long long) off, why);
		return false;
	}
	if (set_add(v, &v->reached, bi.id))
	{
		problem(v, NVM_VERIFY_OWNERSHIP, 0, 0, off, "%s was already reached from elsewhere", what);
		return false;
	}
	return true;
}

/*
 * walk_index_logs checks the index log (indexlog.h): each slot's ring and
 * the repair list are allocated blocks reached nowhere else, big enough
 * for their capacity, with their counters in range.  Their entries may
 * name anything (a stale entry is validated before it is used).
 */
static void
walk_index_logs(Verifier *v)
{
	NvmPoolHeader *hdr = nvm_pool_header;
	nvm_off		list = nvm_pool_root()->index_repair_off;

	for (uint32_t c = 0; c < hdr->max_slots && !v->stop; c++)
	{
		NvmSlotPersist *sp = nvm_pool_slot(c);
		NvmIndexLogRing *ring;
		char		what[64];

		if (sp->indexlog_off == 0)
			continue;
		snprintf(what, sizeof(what), "the index log of clock slot %u", c);
		if (!claim_block(v, NVM_VERIFY_SLOT, nvm_off_of(&sp->indexlog_off), sp->indexlog_off,
						 sizeof(NvmIndexLogRing), what))
			continue;
		ring = nvm_ptr(sp->indexlog_off);
		if (!block_of_fits(sp->indexlog_off, sizeof(NvmIndexLogRing),
						   ring->capacity, sizeof(NvmIndexLogEntry)) ||
			ring->tail > ring->head || ring->head - ring->tail > ring->capacity)
			problem(v, NVM_VERIFY_SLOT, 0, 0, sp->indexlog_off,
					"%s has capacity %llu, head %llu and tail %llu, which do not fit its block",
					what, (unsigned long long) ring->capacity,
					(unsigned long long) ring->head, (unsigned long long) ring->tail);
	}
	if (atomic_load(&nvm_pool_root()->durable_off) != 0 && !v->stop)
		(void) claim_block(v, NVM_VERIFY_SLOT, nvm_off_of(&nvm_pool_root()->durable_off),
						   atomic_load(&nvm_pool_root()->durable_off),
						   sizeof(uint64_t) * NVM_MAX_SLOTS, "the durable watermarks of the clock slots");
	if (list != 0 && !v->stop &&
		claim_block(v, NVM_VERIFY_SLOT, nvm_off_of(&nvm_pool_root()->index_repair_off), list,
					sizeof(NvmIndexRepairList), "the index repair list"))
	{
		NvmIndexRepairList *l = nvm_ptr(list);

		if (!block_of_fits(list, sizeof(NvmIndexRepairList), l->count,
						   sizeof(NvmIndexRepairEntry)) ||
			atomic_load(&l->remaining) > l->count)
			problem(v, NVM_VERIFY_SLOT, 0, 0, list,
					"the index repair list has %llu entries, %llu remaining, which do not fit its block",
					(unsigned long long) l->count,
					(unsigned long long) atomic_load(&l->remaining));
	}
}

/*
 * walk_slots checks the persistent part of every clock slot: its status
 * ring is where the layout puts it (or, in a pool whose rings are
 * allocated at first use, an allocated block reached nowhere else), its
 * write log is a chain of allocated
 * blocks reached nowhere else, and an in-doubt marker names a transaction
 * of the slot itself.
 */
static void
walk_slots(Verifier *v)
{
	NvmPoolHeader *hdr = nvm_pool_header;

	for (uint32_t c = 0; c < hdr->max_slots && !v->stop; c++)
	{
		NvmSlotPersist *sp = nvm_pool_slot(c);
		uint64_t	ring = hdr->rings_off + (uint64_t) c * hdr->ring_words * sizeof(uint64_t);
		nvm_off		x = sp->log_head;
		nvm_off		link = nvm_off_of(&sp->log_head);
		uint64_t	t = sp->indoubt_txid;

		if (hdr->flags & NVM_POOL_LAZY_RINGS)
		{
			/* a ring allocated at the slot's first write, or none yet */
			NvmBlockInfo bi;
			char		why[96];

			if (sp->ring_off != 0)
			{
				if (!block_of(sp->ring_off, (size_t) hdr->ring_words * sizeof(uint64_t),
							  &bi, why, sizeof(why)))
					problem(v, NVM_VERIFY_SLOT, 0, 0, nvm_off_of(&sp->ring_off),
							"the status ring of clock slot %u names offset %llu, %s",
							c, (unsigned long long) sp->ring_off, why);
				else if (set_add(v, &v->reached, bi.id))
					problem(v, NVM_VERIFY_OWNERSHIP, 0, 0, sp->ring_off,
							"the status ring of clock slot %u was already reached from elsewhere", c);
			}
		}
		else if (sp->ring_off != ring)
			problem(v, NVM_VERIFY_SLOT, 0, 0, nvm_off_of(&sp->ring_off),
					"clock slot %u names its status ring at offset %llu, not at %llu",
					c, (unsigned long long) sp->ring_off, (unsigned long long) ring);
		if (t != NVM_INVALID_TXID && nvm_txid_clock_id(t) != c)
			problem(v, NVM_VERIFY_SLOT, 0, 0, nvm_off_of(&sp->indoubt_txid),
					"clock slot %u has an in-doubt marker for transaction " TXID_FMT " of another slot",
					c, TXID_ARGS(t));
		while (x != 0 && !v->stop)
		{
			NvmBlockInfo bi;
			char		why[96];

			step(v);
			if (!block_of(x, sizeof(NvmWriteLogBlock), &bi, why, sizeof(why)))
			{
				problem(v, NVM_VERIFY_SLOT, 0, 0, link,
						"the write log of clock slot %u names offset %llu, %s",
						c, (unsigned long long) x, why);
				break;
			}
			if (set_add(v, &v->reached, bi.id))
			{
				problem(v, NVM_VERIFY_OWNERSHIP, 0, 0, x,
						"a block of the write log of clock slot %u was already reached from elsewhere",
						c);
				break;
			}
			link = nvm_off_of(&((NvmWriteLogBlock *) nvm_ptr(x))->next);
			x = ((NvmWriteLogBlock *) nvm_ptr(x))->next;
		}
	}
}

/* compare_entries orders directory entry indexes by key, for finding keys used twice */
static const NvmTableDirEntry *sort_dir;

static int
compare_entries(const void *a, const void *b)
{
	const NvmTableKey *x = &sort_dir[*(const uint32_t *) a].key;
	const NvmTableKey *y = &sort_dir[*(const uint32_t *) b].key;

	if (x->spc != y->spc)
		return x->spc < y->spc ? -1 : 1;
	if (x->db != y->db)
		return x->db < y->db ? -1 : 1;
	if (x->rel != y->rel)
		return x->rel < y->rel ? -1 : 1;
	if (x->pad != y->pad)
		return x->pad < y->pad ? -1 : 1;
	return 0;
}

/* walk_directory walks every table of the directory, after looking for keys used twice */
static void
walk_directory(Verifier *v)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		ndir = nvm_table_dir_count();
	uint32_t   *live = v_alloc(v, (ndir + 1) * sizeof(uint32_t));
	size_t		nlive = 0;

	if (live == NULL)
		return;
	for (size_t i = 0; i < ndir; i++)
		if (atomic_load(&dir[i].desc) != 0)
			live[nlive++] = (uint32_t) i;
	sort_dir = dir;
	qsort(live, nlive, sizeof(uint32_t), compare_entries);
	for (size_t i = 1; i < nlive; i++)
	{
		if (compare_entries(&live[i - 1], &live[i]) == 0)
		{
			NvmTableKey *k = &dir[live[i]].key;

			problem(v, NVM_VERIFY_DIRECTORY, 0, 0, nvm_off_of(&dir[live[i]]),
					"directory entries %u and %u have the same key %u/%u/%u/%x",
					live[i - 1], live[i], k->spc, k->db, k->rel, k->pad);
		}
	}
	v_free(v, live);

	for (size_t i = 0; i < ndir && !v->stop; i++)
	{
		nvm_off		d = atomic_load(&dir[i].desc);
		NvmTableKey key;

		if (d == 0)
			continue;
		key = dir[i].key;
		walk_table(v, &key, d, nvm_off_of(&dir[i]));
	}
}

static void
chunk_problem(uint64_t chunk, nvm_off where, const char *what, void *arg)
{
	problem((Verifier *) arg, NVM_VERIFY_ALLOCATOR, 0, 0, where,
			"chunk %llu: %s", (unsigned long long) chunk, what);
}

/* walk_leaks reports every allocated block that nothing reached */
static void
walk_leaks(Verifier *v)
{
	uint64_t	cursor = 0;
	NvmBlockInfo bi;

	while (!v->stop && nvm_alloc_next_block(&cursor, &bi))
	{
		step(v);
		if (set_has(&v->reached, bi.id))
			continue;
		v->res->leaked_bytes += bi.size;
		problem(v, NVM_VERIFY_LEAK, 0, 0, bi.payload,
				"the block of %llu bytes at offset %llu is allocated, but nothing reaches it",
				(unsigned long long) bi.size, (unsigned long long) bi.payload);
	}
}

void
nvm_verify_check_pool(const NvmVerifyOptions *opts, NvmVerifyResult *result)
{
	Verifier	v;
	uint64_t	mark;

	if (!verifier_init(&v, opts, result))
	{
		verifier_done(&v);
		return;
	}
	if (!nvm_alloc_quiet_mark(&mark))
	{
		/* a change is under way: nothing read now would be exact */
		result->exact = false;
		verifier_done(&v);
		return;
	}
	(void) nvm_alloc_check_chunk_table(chunk_problem, &v);
	walk_slots(&v);
	walk_index_logs(&v);
	walk_directory(&v);
	if (v.opts->leaks)
		walk_leaks(&v);
	result->exact = !nvm_alloc_changed_since(mark);
	verifier_done(&v);
}
