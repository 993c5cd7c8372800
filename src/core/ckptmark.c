/*
 * ckptmark.c
 *	  Change marks of incremental checkpoints and the per-slot durable
 *	  watermarks (ckptmark.h has what they are for and their persist
 *	  orders).
 */
#include <stdatomic.h>
#include <string.h>

#include "alloc.h"
#include "ccmode.h"
#include "ckptmark.h"
#include "persist.h"
#include "pool.h"
#include "segarray.h"

#define BITS_PER_WORD	64

uint64_t
nvm_ckpt_epoch(void)
{
	return atomic_load_explicit(&nvm_pool_root()->ckpt_epoch, memory_order_acquire);
}

uint64_t
nvm_ckpt_epoch_advance(void)
{
	NvmPoolRoot *root = nvm_pool_root();
	uint64_t	ended = atomic_load(&root->ckpt_epoch);

	atomic_store_explicit(&root->ckpt_epoch, ended + 1, memory_order_release);
	nvm_persist(&root->ckpt_epoch, sizeof(uint64_t));
	return ended;
}

/*
 * marks_array returns t's bitmap of parity p, made (zeroed, drained,
 * installed with a compare-and-swap, persisted) if create; NULL if there is
 * none, or no room for one.
 */
static NvmSegArray *
marks_array(const NvmTable *t, int p, bool create)
{
	return nvm_segarray_at(&t->desc->ckpt_marks[p], create);
}

bool
nvm_ckpt_mark(NvmTable *t, uint64_t record_no)
{
	uint64_t	epoch = nvm_ckpt_epoch();
	int			parity = (int) (epoch & 1);
	NvmSegArray *arr;
	_Atomic uint64_t *w;
	uint64_t	bit = UINT64_C(1) << (record_no % BITS_PER_WORD);

	/*
	 * The table is read whole at the next cut (asked in this epoch: a
	 * table created, emptied or cloned since the last cut, as a bulk load
	 * into a new or truncated table is): the capture of that cut reads
	 * every record, and clears the request only then (nvm_ckpt_drop_marks:
	 * a stamp of this epoch + 1).  The marker keeps the epoch from moving,
	 * so what it changed is either counted by that cut or marked again in
	 * the next epoch, where the stamp no longer matches.  An older request
	 * (a capture that did not finish) does not count: the one that clears
	 * it may have its cut before this change.
	 */
	if (atomic_load_explicit(&t->desc->ckpt_whole, memory_order_relaxed) == epoch + 1)
		return true;
	arr = marks_array(t, parity, false);

	/*
	 * Marked already in this epoch (the record changed before, or this
	 * transaction's redo is logged twice, as a prepared transaction's is:
	 * at PREPARE, then at COMMIT PREPARED): nothing to store, and nothing to flush, as below when
	 * the bit is set, since who set it flushed its word and the offset of
	 * its segment.
	 */
	if (arr != NULL &&
		(w = nvm_segarray_slot(arr, record_no / BITS_PER_WORD, false)) != NULL &&
		(atomic_load_explicit(w, memory_order_relaxed) & bit) != 0)
		return true;
	if (arr == NULL)
		arr = marks_array(t, parity, true);
	if (arr == NULL || (w = nvm_segarray_slot(arr, record_no / BITS_PER_WORD, true)) == NULL)
	{
		nvm_ckpt_mark_whole(t);
		return false;
	}
	if ((atomic_load_explicit(w, memory_order_relaxed) & bit) == 0)
	{
		atomic_fetch_or_explicit(w, bit, memory_order_relaxed);
		nvm_flush(w, sizeof(uint64_t));
	}
	return true;
}

void
nvm_ckpt_mark_whole(NvmTable *t)
{
	uint64_t	stamp = nvm_ckpt_epoch() + 1;
	uint64_t	old = atomic_load(&t->desc->ckpt_whole);

	/* keep the oldest request: a drop clears it only once it is captured */
	while (old == 0 || old > stamp)
	{
		if (atomic_compare_exchange_weak(&t->desc->ckpt_whole, &old, stamp))
		{
			nvm_flush(&t->desc->ckpt_whole, sizeof(uint64_t));
			break;
		}
	}
}

bool
nvm_ckpt_wants_whole(const NvmTable *t)
{
	return atomic_load(&t->desc->ckpt_whole) != 0;
}

/* array_has_marks says whether any word of arr has a bit set. */
static bool
array_has_marks(NvmSegArray *arr)
{
	if (arr == NULL)
		return false;
	for (int k = 0; k < NVM_SEG_COUNT; k++)
	{
		nvm_off		seg = atomic_load(&arr->seg[k]);
		const _Atomic uint64_t *words;

		if (seg == 0)
			continue;
		words = nvm_ptr(seg);
		for (uint64_t i = 0; i < ((uint64_t) NVM_SEG_BASE << k); i++)
			if (atomic_load_explicit(&words[i], memory_order_relaxed) != 0)
				return true;
	}
	return false;
}

bool
nvm_ckpt_has_marks(const NvmTable *t)
{
	return nvm_ckpt_wants_whole(t) ||
		array_has_marks(marks_array(t, 0, false)) ||
		array_has_marks(marks_array(t, 1, false));
}

/* word_of returns word idx of arr, 0 if it has none (no array, no segment). */
static uint64_t
word_of(NvmSegArray *arr, uint64_t idx)
{
	_Atomic uint64_t *w;

	if (arr == NULL || (w = nvm_segarray_slot(arr, idx, false)) == NULL)
		return 0;
	return atomic_load_explicit(w, memory_order_relaxed);
}

/* array_words returns how many words arr covers (its highest segment's end). */
static uint64_t
array_words(NvmSegArray *arr)
{
	if (arr == NULL)
		return 0;
	for (int k = NVM_SEG_COUNT - 1; k >= 0; k--)
		if (atomic_load(&arr->seg[k]) != 0)
			return (uint64_t) NVM_SEG_BASE * ((UINT64_C(2) << k) - 1);
	return 0;
}

uint64_t
nvm_ckpt_each_marked(const NvmTable *t, NvmCkptMarkVisitor fn, void *arg)
{
	NvmSegArray *a = marks_array(t, 0, false);
	NvmSegArray *b = marks_array(t, 1, false);
	uint64_t	nwords = array_words(a) > array_words(b) ? array_words(a) : array_words(b);
	uint64_t	n = 0;

	for (uint64_t i = 0; i < nwords; i++)
	{
		uint64_t	w = word_of(a, i) | word_of(b, i);

		while (w != 0)
		{
			int			bit = __builtin_ctzll(w);

			w &= w - 1;
			n++;
			if (!fn(i * BITS_PER_WORD + (uint64_t) bit, arg))
				return n;
		}
	}
	return n;
}

/* free_array clears word (persisted), then frees the bitmap it named. */
static void
free_array(_Atomic nvm_off *word)
{
	nvm_off		arr = atomic_exchange(word, 0);

	if (arr == 0)
		return;
	nvm_persist(word, sizeof(nvm_off));
	nvm_segarray_free(nvm_ptr(arr));
	nvm_free(arr);
}

void
nvm_ckpt_drop_marks(NvmTable *t, uint64_t ended_epoch)
{
	uint64_t	stamp = atomic_load(&t->desc->ckpt_whole);

	free_array(&t->desc->ckpt_marks[ended_epoch & 1]);
	if (stamp != 0 && stamp <= ended_epoch + 1 &&
		atomic_compare_exchange_strong(&t->desc->ckpt_whole, &stamp, 0))
		nvm_persist(&t->desc->ckpt_whole, sizeof(uint64_t));
}

void
nvm_ckpt_free_marks(NvmTableDesc *desc)
{
	free_array(&desc->ckpt_marks[0]);
	free_array(&desc->ckpt_marks[1]);
}

uint64_t
nvm_ckpt_boot_bound(uint32_t slot)
{
	uint64_t	bound = 0;

	if (nvm_cc != NULL && slot < nvm_cc->max_slots)
		bound = nvm_cc->slots[slot].boot_last_completed;
	/* N2DB hands out one counter's values to every slot */
	if (nvm_cc != NULL && nvm_cc->cc_mode == NVM_CC_N2DB)
	{
		uint64_t	counter = nvm_pool_root()->n2db_reserved;

		if (counter > 0 && counter - 1 > bound)
			bound = counter - 1;
	}
	return bound;
}

/* ---------------------------------------------------------------------
 * Durable watermarks
 * ---------------------------------------------------------------------
 */

/* durable_array returns the watermarks, made at the first call if create. */
static _Atomic uint64_t *
durable_array(bool create)
{
	NvmPoolRoot *root = nvm_pool_root();
	nvm_off		arr = atomic_load_explicit(&root->durable_off, memory_order_acquire);

	if (arr == 0)
	{
		nvm_off		fresh;
		nvm_off		expected = 0;

		if (!create)
			return NULL;
		fresh = nvm_alloc_zeroed(sizeof(uint64_t) * NVM_MAX_SLOTS);
		if (fresh == 0)
			return NULL;
		nvm_drain();
		if (atomic_compare_exchange_strong(&root->durable_off, &expected, fresh))
			arr = fresh;
		else
		{
			nvm_free(fresh);
			arr = expected;
		}
		nvm_persist(&root->durable_off, sizeof(uint64_t));
	}
	return nvm_ptr(arr);
}

void
nvm_slot_note_durable(uint32_t slot, uint64_t txid)
{
	_Atomic uint64_t *arr = durable_array(true);
	uint64_t	old;

	if (arr == NULL || slot >= NVM_MAX_SLOTS)
		return;
	old = atomic_load_explicit(&arr[slot], memory_order_relaxed);
	while (nvm_txid_clock_ts(old) < nvm_txid_clock_ts(txid) || nvm_txid_clock_id(old) != slot)
	{
		if (atomic_compare_exchange_weak(&arr[slot], &old, txid))
		{
			nvm_flush(&arr[slot], sizeof(uint64_t));
			break;
		}
	}
}

uint64_t
nvm_slot_durable_txid(uint32_t slot)
{
	_Atomic uint64_t *arr = durable_array(false);

	if (arr == NULL || slot >= NVM_MAX_SLOTS)
		return 0;
	return atomic_load(&arr[slot]);
}
