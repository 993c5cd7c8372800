/*
 * segarray.h
 *	  A persistent, growable array of 8-byte words that never moves.
 *
 * Used for a table's record heads (record number -> newest version) and its
 * version slots (version number -> version offset).  Segment k holds
 * NVM_SEG_BASE << k words, so 40 segment offsets cover more entries than a
 * table can ever number, while a small table uses a single 8 KiB segment.
 *
 * Persist order for growing: a new segment is allocated zeroed and made
 * durable (flush + drain) before its offset is installed with a
 * compare-and-swap into seg[k].  Every writer that asks for an entry with
 * create = true also flushes seg[k], so its own next drain (which comes
 * before it publishes anything it wrote into the entry) makes the segment
 * reachable durably.  A crash before that leaks the segment, which then
 * holds nothing published.
 */
#ifndef NVM_SEGARRAY_H
#define NVM_SEGARRAY_H

#include "nvm_types.h"

#define NVM_SEG_BASE	1024
#define NVM_SEG_COUNT	40

typedef struct NvmSegArray
{
	_Atomic nvm_off seg[NVM_SEG_COUNT];
} NvmSegArray;

/*
 * nvm_segarray_locate maps an index to its segment number and position in
 * the segment: segment k holds indexes [BASE * (2^k - 1), BASE * (2^(k+1) - 1)).
 */
static inline void
nvm_segarray_locate(uint64_t idx, int *seg, uint64_t *pos)
{
	uint64_t	j = idx / NVM_SEG_BASE + 1;
	int			k = 63 - __builtin_clzll(j);

	*seg = k;
	*pos = idx - (uint64_t) NVM_SEG_BASE * ((UINT64_C(1) << k) - 1);
}

/*
 * nvm_segarray_slot returns the address of entry idx, allocating its
 * segment if create is true (NULL if the segment is missing and create is
 * false, or the pool is full).  With create = true, seg[k] has been
 * flushed: the caller's next drain makes it durable.
 */
extern _Atomic uint64_t *nvm_segarray_slot(NvmSegArray *arr, uint64_t idx, bool create);

/*
 * A reader's memory of one segment of an array: entries [lo, hi) are at
 * base[0 ..].  A reader that asks for entries near each other (a scan
 * walking numbers in order) finds most of them here without the array.
 * A segment never moves and is freed only with its array, so what is
 * remembered stays right as long as the array is the reader's to use.
 * Zeroed, it remembers nothing.
 */
typedef struct NvmSegCache
{
	uint64_t	lo;
	uint64_t	hi;
	_Atomic uint64_t *base;
} NvmSegCache;

/* The slow path of nvm_segarray_cached: looks up idx, remembers its segment. */
extern _Atomic uint64_t *nvm_segarray_fill(NvmSegArray *arr, uint64_t idx, NvmSegCache *c);

/*
 * nvm_segarray_cached returns the address of entry idx as
 * nvm_segarray_slot(arr, idx, false) does, from c when idx lies in the
 * segment c remembers (c must be arr's, or zeroed).
 */
static inline _Atomic uint64_t *
nvm_segarray_cached(NvmSegArray *arr, uint64_t idx, NvmSegCache *c)
{
	if (idx - c->lo < c->hi - c->lo)
		return c->base + (idx - c->lo);
	return nvm_segarray_fill(arr, idx, c);
}

/*
 * nvm_segarray_at returns the array whose offset the pool word *word holds,
 * made if create and there is none: the array allocated zeroed and
 * drained, installed with a compare-and-swap (the loser frees its own),
 * and the word persisted.  NULL if there is none and create is false, or
 * the pool is full.  A crash before the word is durable leaks the array.
 */
extern NvmSegArray *nvm_segarray_at(_Atomic nvm_off *word, bool create);

/* Frees every segment (the array must be unreachable for everybody). */
extern void nvm_segarray_free(NvmSegArray *arr);

#endif							/* NVM_SEGARRAY_H */
