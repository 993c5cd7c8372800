/*
 * store.c
 *	  Record heads and version chains: a table's rows, their numbers (the
 *	  free lists that reuse them), and inserting, updating and deleting with
 *	  compare-and-swap on the record head (MCSI paper Fig. 8, Fig. 9).  The
 *	  table directory and a table's life cycle are tables.c's; which
 *	  versions a reader sees is in visibility.c, with the record head a
 *	  chain walk starts from.
 *
 * The persist order of every write is written in store.h and repeated at
 * each step below.
 */
#include "store.h"

#include "alloc.h"
#include "persist.h"
#include "pool.h"
#include "txn.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * Access
 * ---------------------------------------------------------------------
 */

/*
 * nvm_version_by_no returns the version numbered version_no, or NULL if the
 * number is unused, free, or a redirect.  A slot read while its version is
 * being collected may name a block already reused: the block's own number
 * tells.
 */
/* The value of version slot version_no, 0 if it has none. */
static uint64_t
version_slot_value(const NvmTable *t, uint64_t version_no)
{
	_Atomic uint64_t *slot;

	if (version_no == 0 || version_no >= atomic_load(&t->desc->next_version))
		return 0;
	slot = nvm_segarray_slot(&t->desc->versions, version_no, false);
	return slot ? atomic_load_explicit(slot, memory_order_acquire) : 0;
}

/*
 * version_of_slot_value returns the version a version slot's value val
 * names if it is version_no's (not empty, not a tagged redirect, not a
 * block already reused for another number); NULL otherwise.
 */
static inline NvmVersion *
version_of_slot_value(uint64_t val, uint64_t version_no)
{
	NvmVersion *v;

	if (val == 0 || (val & NVM_TAG_MASK) != 0)
		return NULL;
	v = nvm_ptr(val);
	if (v->version_no != version_no)
		return NULL;
	return v;
}

NvmVersion *
nvm_version_by_no(const NvmTable *t, uint64_t version_no)
{
	return version_of_slot_value(version_slot_value(t, version_no), version_no);
}

NvmVersion *
nvm_version_by_no_cached(const NvmTable *t, uint64_t version_no, NvmSegCache *c)
{
	_Atomic uint64_t *slot;

	if (version_no == 0 || version_no >= atomic_load(&t->desc->next_version))
		return NULL;
	slot = nvm_segarray_cached(&t->desc->versions, version_no, c);
	return version_of_slot_value(slot ? atomic_load_explicit(slot, memory_order_acquire) : 0,
								 version_no);
}

/*
 * nvm_version_record_no: see store.h.  The version the slot names may be
 * collected while it is read: pruning rewrites the slot (a redirect for an
 * index root) before it frees the block (gc.h, steps 2 and 3), and the
 * block may then hold another version at once.  So the slot is read again
 * after the block: if it still names the block, what was read is that
 * version's; if it changed, the lookup starts over from the new value.
 * (Reading the block's number alone, an index fetch of a root collected
 * at that moment found no record, and a row was missing from an index
 * scan: regress/t/034_standby_reads.pl met it on a standby, whose replay
 * prunes each chain it updates and allocates its next version at once.)
 */
uint64_t
nvm_version_record_no(const NvmTable *t, uint64_t version_no)
{
	for (;;)
	{
		uint64_t	val = version_slot_value(t, version_no);
		NvmVersion *v;
		uint64_t	number;
		uint64_t	record;

		if ((val & NVM_TAG_MASK) == NVM_TAG_REDIRECT)
			return val >> 3;
		if (val == 0 || (val & NVM_TAG_MASK) != 0)
			return 0;
		v = nvm_ptr(val);
		number = v->version_no;
		record = v->record_no;
		atomic_thread_fence(memory_order_acquire);
		if (version_slot_value(t, version_no) == val)
			return number == version_no ? record : 0;
	}
}

_Atomic uint64_t *
nvm_record_head_slot(const NvmTable *t, uint64_t record_no)
{
	if (record_no == 0 || record_no >= atomic_load(&t->desc->next_record))
		return NULL;
	return nvm_segarray_slot(&t->desc->records, record_no, false);
}

_Atomic uint64_t *
nvm_version_slot(const NvmTable *t, uint64_t version_no)
{
	if (version_no == 0 || version_no >= atomic_load(&t->desc->next_version))
		return NULL;
	return nvm_segarray_slot(&t->desc->versions, version_no, false);
}

/* ---------------------------------------------------------------------
 * Free lists of record and version numbers (persist orders in store.h)
 * ---------------------------------------------------------------------
 */

void
nvm_numbers_push(NvmSegArray *arr, _Atomic uint64_t *list, const uint64_t *nums, size_t n)
{
	_Atomic uint64_t *last;

	if (n == 0)
		return;
	/* chain nums[0] -> nums[1] -> ... -> nums[n-1] */
	for (size_t i = 0; i + 1 < n; i++)
	{
		_Atomic uint64_t *e = nvm_segarray_slot(arr, nums[i], false);

		atomic_store(e, (nums[i + 1] << 3) | NVM_TAG_FREE);
		nvm_flush((const void *) e, sizeof(uint64_t));
	}
	last = nvm_segarray_slot(arr, nums[n - 1], false);
	for (;;)
	{
		uint64_t	head = atomic_load(list);
		uint64_t	tag = head >> NVM_FREE_NUMBER_BITS;

		atomic_store(last, ((head & NVM_FREE_NUMBER_MASK) << 3) | NVM_TAG_FREE);
		nvm_flush((const void *) last, sizeof(uint64_t));
		/* the entries durable before the head names them */
		nvm_drain();
		if (atomic_compare_exchange_strong(list, &head, ((tag + 1) << NVM_FREE_NUMBER_BITS) | nums[0]))
			break;
	}
	nvm_flush((const void *) list, sizeof(uint64_t));
}

/*
 * numbers_pop takes a number off the free list, 0 if it is empty.  The new
 * head is durable when it returns.
 */
static uint64_t
numbers_pop(NvmSegArray *arr, _Atomic uint64_t *list)
{
	for (;;)
	{
		uint64_t	head = atomic_load(list);
		uint64_t	n = head & NVM_FREE_NUMBER_MASK;
		uint64_t	tag = head >> NVM_FREE_NUMBER_BITS;
		_Atomic uint64_t *e;
		uint64_t	val;

		if (n == 0)
			return 0;
		e = nvm_segarray_slot(arr, n, false);
		val = e ? atomic_load(e) : 0;
		if ((val & NVM_TAG_MASK) != NVM_TAG_FREE)
		{
			if (atomic_load(list) != head)
				continue;		/* popped and reused meanwhile */
			/* a crash cut the list here: drop the rest */
			if (atomic_compare_exchange_strong(list, &head, (tag + 1) << NVM_FREE_NUMBER_BITS))
			{
				nvm_flush((const void *) list, sizeof(uint64_t));
				nvm_drain();
				return 0;
			}
			continue;
		}
		if (atomic_compare_exchange_strong(list, &head,
										   ((tag + 1) << NVM_FREE_NUMBER_BITS) | (val >> 3)))
		{
			nvm_flush((const void *) list, sizeof(uint64_t));
			nvm_drain();
			return n;
		}
	}
}

uint64_t
nvm_numbers_count(NvmSegArray *arr, _Atomic uint64_t *list)
{
	uint64_t	n = atomic_load(list) & NVM_FREE_NUMBER_MASK;
	uint64_t	count = 0;

	while (n != 0 && count < (UINT64_C(1) << NVM_FREE_NUMBER_BITS))
	{
		_Atomic uint64_t *e = nvm_segarray_slot(arr, n, false);
		uint64_t	val = e ? atomic_load(e) : 0;

		if ((val & NVM_TAG_MASK) != NVM_TAG_FREE)
			break;
		count++;
		n = val >> 3;
	}
	return count;
}

uint64_t
nvm_table_record_limit(const NvmTable *t)
{
	return atomic_load(&t->desc->next_record);
}

uint64_t
nvm_table_version_limit(const NvmTable *t)
{
	return atomic_load(&t->desc->next_version);
}

bool
nvm_record_kill(NvmTable *t, NvmTxn *txn, uint64_t version_no)
{
	NvmVersion *v = nvm_version_by_no(t, version_no);

	if (v == NULL || txn->txid == NVM_INVALID_TXID || v->txid != txn->txid)
		return false;
	atomic_fetch_or_explicit(&v->info, (uint64_t) NVM_STATUS_ABORTED, memory_order_release);
	nvm_flush(&v->info, sizeof(uint64_t));
	return true;
}

/*
 * nvm_record_lock_word: see store.h, which states the persist order.
 */
_Atomic uint64_t *
nvm_record_lock_word(const NvmTable *t, uint64_t record_no, bool create)
{
	NvmSegArray *arr = nvm_segarray_at(&t->desc->lock_words, create);

	return arr == NULL ? NULL : nvm_segarray_slot(arr, record_no, create);
}

/* ---------------------------------------------------------------------
 * Writes
 * ---------------------------------------------------------------------
 */

/*
 * raise_originals raises the version counter of the table that desc was
 * cloned from, and of that one's original, to at least limit (flushed;
 * the caller's drain makes it durable before the version is published).
 * See "Reuse of numbers" in store.h.
 */
static void
raise_originals(NvmTableDesc *desc, uint64_t limit)
{
	nvm_off		o = atomic_load_explicit(&desc->number_floor_of, memory_order_acquire);

	while (o != 0)
	{
		NvmTableDesc *orig = nvm_ptr(o);
		uint64_t	cur = atomic_load(&orig->next_version);

		while (cur < limit &&
			   !atomic_compare_exchange_weak(&orig->next_version, &cur, limit))
			;
		nvm_flush(&orig->next_version, sizeof(uint64_t));
		o = atomic_load_explicit(&orig->number_floor_of, memory_order_acquire);
	}
}

/*
 * nt_padded is the room a row of len bytes takes when it is written by
 * non-temporal stores (DBX-N's padding): the block (its header, the
 * version's header and the row) rounded up to 64 bytes, to 256 above 256,
 * less the two headers, which fill the block's first line.
 */
static inline size_t
nt_padded(uint32_t len)
{
	size_t		block = NVM_BLOCK_HEADER_SIZE + sizeof(NvmVersion) + len;
	size_t		unit = block <= 256 ? 64 : 256;

	return (block + unit - 1) / unit * unit - NVM_BLOCK_HEADER_SIZE - sizeof(NvmVersion);
}

/*
 * row_written_nt says whether the row of a new version of txn's is (or is
 * to be) written by non-temporal stores: the transaction writes that way
 * (NvmVersionWrites, chosen at its first write), the version is not a
 * tombstone, and its row starts on a cache line of its own (the padded
 * block sizes are small-class sizes, whose blocks are line-aligned).
 */
static inline bool
row_written_nt(const NvmTxn *txn, const NvmVersion *v, bool tombstone, uint32_t len)
{
	return txn->nt_versions && !tombstone && len > 0 &&
		((uintptr_t) v->data & (NVM_CACHELINE - 1)) == 0;
}

/*
 * version_flush_len is how much of a new version of txn's is written back:
 * its header alone when its row was written by non-temporal stores.
 */
static inline size_t
version_flush_len(const NvmTxn *txn, const NvmVersion *v)
{
	if (row_written_nt(txn, v, nvm_version_is_tombstone(v), v->data_len))
		return sizeof(NvmVersion);
	return sizeof(NvmVersion) + v->data_len;
}

/* flush_version writes back the lines of a new version of txn's. */
static inline void
flush_version(const NvmTxn *txn, NvmVersion *v)
{
	nvm_flush(v, version_flush_len(txn, v));
}

/*
 * fill_version allocates and fills version number n of record record_no
 * (prev is set by the caller) and writes its version slot (slot).  Nothing
 * is flushed (a row written by non-temporal stores needs no flush, only
 * the caller's drain).  Returns NULL if the pool is full.
 */
static inline NvmVersion *
fill_version(const NvmTxn *txn, uint32_t cid, uint64_t record_no,
			 const void *data, uint32_t len, uint64_t kind, uint64_t n,
			 _Atomic uint64_t *slot)
{
	bool		tombstone = (kind & NVM_VINFO_TOMBSTONE) != 0;
	bool		nt = txn->nt_versions && !tombstone && len > 0;
	size_t		room = tombstone ? sizeof(uint64_t) : nt ? nt_padded(len) : len;
	nvm_off		off;
	NvmVersion *v;

	/* a tombstone has room for the epoch it is retired at (gc.h) */
	off = nvm_alloc(sizeof(NvmVersion) + room);
	if (off == 0)
		return NULL;
	v = nvm_ptr(off);
	v->txid = txn->txid;
	atomic_store_explicit(&v->info, ((uint64_t) cid << NVM_VINFO_CID_SHIFT) | kind,
						  memory_order_relaxed);
	v->prev = 0;
	v->record_no = record_no;
	v->version_no = n;
	v->index_root = n;
	v->data_len = len;
	v->external_id = txn->external_id;
	if (row_written_nt(txn, v, tombstone, len))
		nvm_write_nt(v->data, data, len, room);
	else if (len)
		memcpy(v->data, data, len);
	atomic_store_explicit(slot, off, memory_order_release);
	return v;
}

/*
 * new_version takes a version number, allocates and fills a version
 * (prev is set by the caller), and writes its version slot.  Everything is
 * flushed, not drained.  Returns NULL if the pool is full.
 */
static NvmVersion *
new_version(NvmTable *t, const NvmTxn *txn, uint32_t cid, uint64_t record_no,
			const void *data, uint32_t len, uint64_t kind,
			uint64_t *version_no)
{
	NvmTableDesc *desc = t->desc;
	uint64_t	n = numbers_pop(&desc->versions, &desc->free_versions);
	_Atomic uint64_t *slot;
	NvmVersion *v;

	if (n == 0)
	{
		n = atomic_fetch_add(&desc->next_version, 1);
		raise_originals(desc, n + 1);
	}
	slot = nvm_segarray_slot(&desc->versions, n, true);
	if (slot == NULL)
		return NULL;
	v = fill_version(txn, cid, record_no, data, len, kind, n, slot);
	if (v == NULL)
		return NULL;
	nvm_flush(slot, sizeof(uint64_t));
	nvm_flush(&desc->next_version, sizeof(uint64_t));
	*version_no = n;
	return v;
}

/*
 * discard_version gives back a version that was never published; its
 * number stays unused.
 */
static void
discard_version(NvmTable *t, NvmVersion *v)
{
	_Atomic uint64_t *slot = nvm_segarray_slot(&t->desc->versions, v->version_no, false);

	if (slot)
	{
		atomic_store(slot, 0);
		nvm_flush(slot, sizeof(uint64_t));
	}
	nvm_free(nvm_off_of(v));
}

/*
 * nvm_record_insert creates a new record whose only version holds data.
 */
NvmWriteResult
nvm_record_insert(NvmTable *t, NvmTxn *txn, int level, uint32_t cid,
				  const void *data, uint32_t len, uint64_t *version_no_out)
{
	NvmTableDesc *desc = t->desc;
	uint64_t	txid = nvm_txn_begin_write(txn);
	uint64_t	r;
	_Atomic uint64_t *head;
	NvmVersion *v;

	if (txid == NVM_INVALID_TXID)
		return NVM_WRITE_NO_SPACE;
	r = numbers_pop(&desc->records, &desc->free_records);
	if (r == 0)
		r = atomic_fetch_add(&desc->next_record, 1);
	head = nvm_segarray_slot(&desc->records, r, true);
	if (head == NULL)
		return NVM_WRITE_NO_SPACE;
	v = new_version(t, txn, cid, r, data, len, NVM_VINFO_INSERTED, version_no_out);
	if (v == NULL)
		return NVM_WRITE_NO_SPACE;
	if (!nvm_txn_log_version(txn, nvm_off_of(t->desc), nvm_off_of(v), level))
	{
		discard_version(t, v);
		return NVM_WRITE_NO_SPACE;
	}
	flush_version(txn, v);
	nvm_flush(&desc->next_record, sizeof(uint64_t));
	/* step 2: version, slots, counters and log entry durable before the record is reachable */
	nvm_drain();
	/* step 3: the record number is ours alone, so a plain store publishes it */
	atomic_store_explicit(head, nvm_off_of(v), memory_order_release);
	nvm_flush(head, sizeof(uint64_t));
	return NVM_WRITE_OK;
}

/*
 * FlushRun gathers the cache lines of neighbouring writes (version slots
 * and record heads of consecutive numbers, versions the allocator placed
 * one after the other) into one flush: a write is added after it is made,
 * and a run is flushed when a write outside it comes, or at the end.
 */
typedef struct FlushRun
{
	uintptr_t	lo;				/* first line of the run */
	uintptr_t	hi;				/* end of its last line; 0: no run */
} FlushRun;

static inline void
run_flush(FlushRun *r)
{
	if (r->hi > r->lo)
		nvm_flush((const void *) r->lo, r->hi - r->lo);
	r->lo = r->hi = 0;
}

static inline void
run_add(FlushRun *r, const void *addr, size_t len)
{
	uintptr_t	a = (uintptr_t) addr & ~(uintptr_t) (NVM_CACHELINE - 1);
	uintptr_t	b = ((uintptr_t) addr + len + NVM_CACHELINE - 1) & ~(uintptr_t) (NVM_CACHELINE - 1);

	if (r->hi != 0 && a >= r->lo && a <= r->hi)
	{
		if (b > r->hi)
			r->hi = b;
		return;
	}
	run_flush(r);
	r->lo = a;
	r->hi = b;
}

/*
 * take_number takes a number off list, else the next of the numbers
 * reserved from counter in [*next, *end), else reserves want numbers from
 * counter with one fetch-and-add (those a failed batch leaves unused are
 * never handed out: holes, as a discarded version leaves).  A fresh
 * reservation's first number goes to *fresh (0 if none was made).
 */
static inline uint64_t
take_number(NvmSegArray *arr, _Atomic uint64_t *list, _Atomic uint64_t *counter,
			uint64_t *next, uint64_t *end, uint64_t want, uint64_t *fresh)
{
	uint64_t	n;

	*fresh = 0;
	if (*next < *end)
		return (*next)++;
	n = numbers_pop(arr, list);
	if (n != 0)
		return n;
	n = atomic_fetch_add(counter, want);
	*next = n + 1;
	*end = n + want;
	*fresh = n;
	return n;
}

/*
 * batch_slot returns the address of entry idx of arr, creating its segment
 * if needed (NULL if the pool is full): the entry after *prev's (*prev_idx)
 * when idx follows it in the same segment, without a lookup.  *prev and
 * *prev_idx become idx's.
 */
static inline _Atomic uint64_t *
batch_slot(NvmSegArray *arr, uint64_t idx, _Atomic uint64_t **prev, uint64_t *prev_idx)
{
	int			seg;
	uint64_t	pos;
	_Atomic uint64_t *s;

	nvm_segarray_locate(idx, &seg, &pos);
	if (*prev != NULL && idx == *prev_idx + 1 && pos != 0)
		s = *prev + 1;
	else
		s = nvm_segarray_slot(arr, idx, true);
	*prev = s;
	*prev_idx = idx;
	return s;
}

/*
 * nvm_record_insert_many: see store.h, which states the persist order;
 * the steps are repeated below.
 */
NvmWriteResult
nvm_record_insert_many(NvmTable *t, NvmTxn *txn, int level, uint32_t cid, int n,
					   const void *const *data, const uint32_t *len,
					   uint64_t *version_nos, int *done)
{
	NvmTableDesc *desc = t->desc;
	uint64_t	txid = nvm_txn_begin_write(txn);
	uint64_t	rnext = 0,
				rend = 0,
				vnext = 0,
				vend = 0;
	FlushRun	slots = {0},
				versions = {0},
				heads = {0};
	_Atomic uint64_t **head_of;
	_Atomic uint64_t *last_head = NULL,
			   *last_slot = NULL;
	uint64_t	last_r = 0,
				last_vno = 0;
	NvmVersion **v_of;
	NvmWriteResult res = NVM_WRITE_OK;
	int			k;

	*done = 0;
	if (txid == NVM_INVALID_TXID)
		return NVM_WRITE_NO_SPACE;
	head_of = malloc(sizeof(*head_of) * (size_t) n);
	v_of = malloc(sizeof(*v_of) * (size_t) n);
	if (head_of == NULL || v_of == NULL)
	{
		free(head_of);
		free(v_of);
		return NVM_WRITE_NO_SPACE;
	}

	/*
	 * step 1: numbers; step 2: every version and its version slot written,
	 * its write-log entry too, all flushed
	 */
	for (k = 0; k < n; k++)
	{
		uint64_t	fresh;
		uint64_t	r = take_number(&desc->records, &desc->free_records,
									&desc->next_record, &rnext, &rend,
									(uint64_t) (n - k), &fresh);
		uint64_t	vno;
		_Atomic uint64_t *slot;
		NvmVersion *v;

		head_of[k] = batch_slot(&desc->records, r, &last_head, &last_r);
		if (head_of[k] == NULL)
		{
			res = NVM_WRITE_NO_SPACE;
			break;
		}
		vno = take_number(&desc->versions, &desc->free_versions, &desc->next_version,
						  &vnext, &vend, (uint64_t) (n - k), &fresh);
		if (fresh != 0)
			raise_originals(desc, vend);
		slot = batch_slot(&desc->versions, vno, &last_slot, &last_vno);
		if (slot == NULL)
		{
			res = NVM_WRITE_NO_SPACE;
			break;
		}
		v = fill_version(txn, cid, r, data[k], len[k], NVM_VINFO_INSERTED, vno, slot);
		if (v == NULL)
		{
			res = NVM_WRITE_NO_SPACE;
			break;
		}
		if (!nvm_txn_log_version(txn, nvm_off_of(desc), nvm_off_of(v), level))
		{
			discard_version(t, v);
			res = NVM_WRITE_NO_SPACE;
			break;
		}
		run_add(&slots, slot, sizeof(uint64_t));
		run_add(&versions, v, version_flush_len(txn, v));
		v_of[k] = v;
		version_nos[k] = vno;
	}
	run_flush(&slots);
	run_flush(&versions);
	nvm_flush(&desc->next_record, sizeof(uint64_t));
	nvm_flush(&desc->next_version, sizeof(uint64_t));

	/*
	 * One drain: the versions, slots, counters and log entries of all k
	 * rows durable before any of them is reachable.
	 */
	if (k > 0)
		nvm_drain();

	/* step 3: each record number is ours alone, so a plain store publishes it */
	for (int i = 0; i < k; i++)
	{
		atomic_store_explicit(head_of[i], nvm_off_of(v_of[i]), memory_order_release);
		run_add(&heads, head_of[i], sizeof(uint64_t));
	}
	run_flush(&heads);
	free(head_of);
	free(v_of);
	*done = k;
	return res;
}

/*
 * check_newer looks at every version above old in the chain that starts at
 * head and classifies the first one that is not aborted (paper Fig. 8).
 */
static NvmWriteResult
check_newer(NvmVersion *head, NvmVersion *old, const NvmTxn *txn, uint32_t cid,
			NvmConflict *conflict)
{
	for (NvmVersion *v = head; v != old; v = nvm_ptr(v->prev))
	{
		NvmTxnStatus st;

		if (v == NULL)
			return NVM_WRITE_INVISIBLE; /* old is not in this chain */
		if (txn->txid != NVM_INVALID_TXID && v->txid == txn->txid)
		{
			if (nvm_version_inlined_aborted(v))
				continue;
			conflict->newer_version_no = v->version_no;
			conflict->newer_txid = v->txid;
			conflict->newer_cid = nvm_version_cid(v);
			conflict->newer_is_tombstone = nvm_version_is_tombstone(v);
			conflict->newer_is_moved = nvm_version_is_moved(v);
			return nvm_version_cid(v) >= cid ? NVM_WRITE_SELF_MODIFIED : NVM_WRITE_INVISIBLE;
		}
		st = nvm_version_status(v);
		if (st == NVM_STATUS_ABORTED)
			continue;
		conflict->newer_version_no = v->version_no;
		conflict->newer_txid = v->txid;
		conflict->newer_cid = nvm_version_cid(v);
		conflict->newer_is_tombstone = nvm_version_is_tombstone(v);
		conflict->newer_is_moved = nvm_version_is_moved(v);
		/*
		 * A commit not completed yet (its status is final, its completion
		 * not published) is waited for as a running writer: whatever it
		 * logs at commit (the PG layer's redo for standbys, txn.h's commit
		 * hook) comes before any write that builds on its versions.
		 */
		if (st == NVM_STATUS_RUNNING ||
			(st == NVM_STATUS_COMMITTED && nvm_txid_unfinished(v->txid)))
			return NVM_WRITE_BEING_MODIFIED;
		return conflict->newer_is_tombstone ? NVM_WRITE_DELETED : NVM_WRITE_UPDATED;
	}
	return NVM_WRITE_OK;
}

/*
 * push_version is nvm_record_update and nvm_record_move_out: it pushes a
 * new version of the given kind (0, or NVM_VINFO_TOMBSTONE with or
 * without NVM_VINFO_MOVED) onto old_version_no's chain.
 */
static NvmWriteResult
push_version(NvmTable *t, NvmTxn *txn, int level, uint32_t cid,
			 uint64_t old_version_no, const void *data, uint32_t len,
			 uint64_t kind, bool new_index_run, uint64_t *version_no_out,
			 NvmConflict *conflict)
{
	NvmVersion *old = nvm_version_by_no(t, old_version_no);
	_Atomic uint64_t *head;
	NvmVersion *v = NULL;
	bool		tombstone = (kind & NVM_VINFO_TOMBSTONE) != 0;

	memset(conflict, 0, sizeof(*conflict));
	if (old == NULL)
		return NVM_WRITE_INVISIBLE;
	head = nvm_segarray_slot(&t->desc->records, old->record_no, false);
	if (head == NULL)
		return NVM_WRITE_INVISIBLE;

	for (;;)
	{
		nvm_off		h = atomic_load_explicit(head, memory_order_acquire);
		NvmWriteResult res = (h & NVM_TAG_MASK) != 0 ? NVM_WRITE_INVISIBLE :
		check_newer(nvm_ptr(h), old, txn, cid, conflict);

		if (res == NVM_WRITE_OK)
		{
			if (old->txid == txn->txid && txn->txid != NVM_INVALID_TXID)
			{
				/* rolled back, or made by this very command: not updatable (as heap) */
				if (nvm_version_inlined_aborted(old) || nvm_version_cid(old) >= cid)
					res = NVM_WRITE_INVISIBLE;
			}
			else if (nvm_version_status(old) == NVM_STATUS_ABORTED)
				res = NVM_WRITE_INVISIBLE;
		}
		if (res != NVM_WRITE_OK)
		{
			if (v != NULL)
			{
				nvm_txn_unlog_last(txn);
				discard_version(t, v);
			}
			return res;
		}

		if (v == NULL)
		{
			uint64_t	txid = nvm_txn_begin_write(txn);

			if (txid == NVM_INVALID_TXID)
				return NVM_WRITE_NO_SPACE;
			v = new_version(t, txn, cid, old->record_no, data, tombstone ? 0 : len,
							kind, version_no_out);
			if (v == NULL)
				return NVM_WRITE_NO_SPACE;
			if (tombstone || !new_index_run)
				v->index_root = old->index_root;
			if (!nvm_txn_log_version(txn, nvm_off_of(t->desc), nvm_off_of(v), level))
			{
				discard_version(t, v);
				return NVM_WRITE_NO_SPACE;
			}
		}
		v->prev = h;
		flush_version(txn, v);
		/* step 2: the new version (with its prev) durable before it is reachable */
		nvm_drain();
		/* step 3: install it; a failed CAS means a concurrent writer: check again */
		if (atomic_compare_exchange_strong(head, &h, nvm_off_of(v)))
			break;
	}
	nvm_flush(head, sizeof(uint64_t));
	return NVM_WRITE_OK;
}

NvmWriteResult
nvm_record_update(NvmTable *t, NvmTxn *txn, int level, uint32_t cid,
				  uint64_t old_version_no, const void *data, uint32_t len,
				  bool new_index_run, uint64_t *version_no_out, NvmConflict *conflict)
{
	return push_version(t, txn, level, cid, old_version_no, data, len,
						data == NULL ? NVM_VINFO_TOMBSTONE : 0,
						new_index_run, version_no_out, conflict);
}

NvmWriteResult
nvm_record_move_out(NvmTable *t, NvmTxn *txn, int level, uint32_t cid,
					uint64_t old_version_no, uint64_t *version_no_out,
					NvmConflict *conflict)
{
	return push_version(t, txn, level, cid, old_version_no, NULL, 0,
						NVM_VINFO_TOMBSTONE | NVM_VINFO_MOVED,
						false, version_no_out, conflict);
}
