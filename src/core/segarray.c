/*
 * segarray.c
 *	  Persistent growable arrays of 8-byte words (see segarray.h).
 */
#include "segarray.h"

#include "alloc.h"
#include "persist.h"
#include "pool.h"

/*
 * segment_of finds entry idx's segment: false if idx lies beyond the
 * array; else its number (*k), idx's position in it (*pos) and the
 * segment (*seg, read with acquire: 0 while none is installed).
 */
static bool
segment_of(NvmSegArray *arr, uint64_t idx, int *k, uint64_t *pos, nvm_off *seg)
{
	nvm_segarray_locate(idx, k, pos);
	if (*k >= NVM_SEG_COUNT)
		return false;
	*seg = atomic_load_explicit(&arr->seg[*k], memory_order_acquire);
	return true;
}

_Atomic uint64_t *
nvm_segarray_slot(NvmSegArray *arr, uint64_t idx, bool create)
{
	int			k;
	uint64_t	pos;
	nvm_off		seg;

	if (!segment_of(arr, idx, &k, &pos, &seg))
		return NULL;
	if (seg == 0)
	{
		size_t		bytes;
		nvm_off		fresh;
		nvm_off		expected = 0;

		if (!create)
			return NULL;
		bytes = ((size_t) NVM_SEG_BASE << k) * sizeof(uint64_t);
		fresh = nvm_alloc_zeroed(bytes);
		if (fresh == 0)
			return NULL;
		nvm_drain();			/* zeroed segment durable before it is reachable */
		if (atomic_compare_exchange_strong(&arr->seg[k], &expected, fresh))
			seg = fresh;
		else
		{
			nvm_free(fresh);
			seg = expected;
		}
	}
	if (create)
		nvm_flush(&arr->seg[k], sizeof(nvm_off));
	return ((_Atomic uint64_t *) nvm_ptr(seg)) + pos;
}

_Atomic uint64_t *
nvm_segarray_fill(NvmSegArray *arr, uint64_t idx, NvmSegCache *c)
{
	int			k;
	uint64_t	pos;
	nvm_off		seg;

	if (!segment_of(arr, idx, &k, &pos, &seg) || seg == 0)
		return NULL;			/* not remembered: it may be installed later */
	c->lo = idx - pos;
	c->hi = c->lo + ((uint64_t) NVM_SEG_BASE << k);
	c->base = (_Atomic uint64_t *) nvm_ptr(seg);
	return c->base + pos;
}

void
nvm_segarray_free(NvmSegArray *arr)
{
	for (int k = 0; k < NVM_SEG_COUNT; k++)
	{
		nvm_off		seg = atomic_load(&arr->seg[k]);

		if (seg)
		{
			atomic_store(&arr->seg[k], 0);
			nvm_flush(&arr->seg[k], sizeof(nvm_off));
			nvm_free(seg);
		}
	}
	nvm_drain();
}

NvmSegArray *
nvm_segarray_at(_Atomic nvm_off *word, bool create)
{
	nvm_off		arr = atomic_load_explicit(word, memory_order_acquire);

	if (arr == 0)
	{
		nvm_off		fresh;
		nvm_off		expected = 0;

		if (!create)
			return NULL;
		fresh = nvm_alloc_zeroed(sizeof(NvmSegArray));
		if (fresh == 0)
			return NULL;
		nvm_drain();
		if (atomic_compare_exchange_strong(word, &expected, fresh))
			arr = fresh;
		else
		{
			nvm_free(fresh);	/* another process installed one first */
			arr = expected;
		}
		nvm_persist(word, sizeof(nvm_off));
	}
	return nvm_ptr(arr);
}
