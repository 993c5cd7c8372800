/*
 * alloc.c
 *	  The pool allocator: size-class chunks and whole-chunk runs, with its
 *	  volatile state in shared memory rebuilt from the pool at start-up.
 *
 * See alloc.h for the persistent format and the persist order.  The
 * volatile state is:
 *	 - per chunk: its kind, its size class, a bitmap of allocated blocks and
 *	   a free count (for small-class chunks);
 *	 - per size class: a spinlock, the chunk being filled and a list of
 *	   chunks with free blocks;
 *	 - a spinlock over chunk-level changes (taking free chunks).
 * Lock order: a class lock may be held while taking the chunk lock, never
 * the other way round.
 *
 * Start-up reads only the chunk tables, so its cost depends on the pool's
 * size in chunks, not on the number of blocks: a small-class chunk's block
 * headers are read (scan_chunk) the first time the allocator needs a chunk
 * of its class, or a block of it is freed, or statistics are asked for.
 *
 * Growth: when no run of free chunks is found, the allocator drops its
 * locks, asks grow.c for a new segment (which writes its chunk table with
 * nvm_alloc_format_segment and publishes it here with
 * nvm_alloc_publish_segment, both handed to it by core.c) and tries again.  Lock order: a class lock,
 * then the chunk lock; the growth lock is taken with neither held.
 */
#include "alloc.h"

#include "grow.h"
#include "persist.h"
#include "pool.h"

#include <string.h>

#define MAX_BLOCKS_PER_CHUNK	((1u << 20) / 64)	/* chunk_size / smallest class */
#define BITMAP_WORDS			(MAX_BLOCKS_PER_CHUNK / 64)

/* Block sizes (header included) of the small classes. */
static const uint32_t class_sizes[] = {
	64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896,
	1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
	10240, 12288, 14336, 16384, 20480, 24576, 28672, 32768, 40960, 49152, 57344,
	65536, 81920, 98304, 114688, 131072, 163840, 196608, 229376, 262144
};

#define NCLASSES ((int) (sizeof(class_sizes) / sizeof(class_sizes[0])))

typedef struct ChunkState
{
	uint64_t	entry_off;		/* pool offset of its chunk-table entry */
	int64_t		next_partial;	/* next chunk in its class's partial list, -1 = end */
	uint32_t	free_count;		/* free blocks (small chunks) */
	uint32_t	nblocks;
	int16_t		cls;			/* size class, -1 if not a small chunk */
	uint8_t		kind;			/* NVM_CHUNK_KIND of the chunk-table entry (4: segment's first) */
	uint8_t		on_list;		/* in the partial list or current */
	uint8_t		scanned;		/* block headers read since start-up */
	int64_t		next_unscanned; /* next chunk in its class's unscanned list */
	uint32_t	hint;			/* bitmap word to start searching at */
	uint64_t	bitmap[BITMAP_WORDS];
} ChunkState;

typedef struct ClassState
{
	NvmSpinLock lock;
	int64_t		current;		/* chunk being filled, -1 if none */
	int64_t		partial;		/* head of the list of chunks with free blocks */
	int64_t		unscanned;		/* head of the list of chunks not read yet */
} ClassState;

typedef struct AllocShared
{
	NvmSpinLock chunk_lock;
	_Atomic uint64_t nchunks;	/* chunks on the grid, published segments included */
	uint64_t	segments;		/* growth segments among them */
	uint64_t	chunks_free;
	uint64_t	free_hint;		/* lowest chunk that may be free */
	_Atomic uint64_t unscanned_chunks;	/* small chunks whose headers are unread */
	_Atomic uint64_t bytes_allocated;
	_Atomic uint64_t blocks_allocated;
	_Atomic uint64_t changes_begun;	/* see nvm_alloc_change_begin */
	_Atomic uint64_t changes_ended;
	ClassState	classes[NCLASSES];
	ChunkState	chunks[];
} AllocShared;

static AllocShared *alloc_shared = NULL;

#define KIND_META 4				/* NVM_CHUNK_KIND(NVM_CHUNK_META) */

/* the chunk-table entry of a chunk, in the pool's table or its segment's */
static inline _Atomic uint64_t *
chunk_entry(uint64_t chunk)
{
	return (_Atomic uint64_t *) (nvm_pool_base + alloc_shared->chunks[chunk].entry_off);
}

static inline char *
chunk_addr(uint64_t chunk)
{
	return nvm_pool_base + nvm_pool_header->chunks_off + chunk * nvm_pool_header->chunk_size;
}

static int
class_for_size(uint64_t total)
{
	int			lo = 0,
				hi = NCLASSES - 1;

	if (total > class_sizes[NCLASSES - 1])
		return -1;
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (class_sizes[mid] >= total)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

size_t
nvm_alloc_shmem_size(uint64_t nchunks)
{
	return sizeof(AllocShared) + nchunks * sizeof(ChunkState);
}

void
nvm_alloc_attach(void *shmem)
{
	alloc_shared = shmem;
}

static void
set_chunk_entry(uint64_t chunk, uint64_t entry)
{
	atomic_store_explicit(chunk_entry(chunk), entry, memory_order_relaxed);
	nvm_flush(chunk_entry(chunk), sizeof(uint64_t));
}

/*
 * for_each_segment calls fn for every growth segment of the pool as it is
 * in the file (their headers were checked when the pool was opened), and
 * returns the number of chunks on the grid.
 */
static uint64_t
for_each_segment(void (*fn) (AllocShared *as, const NvmSegmentHeader *seg, bool *changed),
				 AllocShared *as, bool *changed)
{
	uint64_t	end = nvm_pool_root()->pool_end;
	uint64_t	chunk = nvm_pool_header->nchunks;
	uint64_t	seq = 1;

	while (end != 0 && nvm_pool_chunk_offset(chunk) < end)
	{
		const NvmSegmentHeader *seg = nvm_pool_segment_at(chunk, seq);

		if (seg == NULL)
			break;
		if (fn)
			fn(as, seg, changed);
		chunk += seg->nchunks;
		seq++;
	}
	return chunk;
}

uint64_t
nvm_alloc_chunks_in_pool(void)
{
	return for_each_segment(NULL, NULL, NULL);
}

/*
 * rebuild_range builds the volatile state of the n chunks from first on,
 * whose chunk-table entries start at table_off, from those entries (block
 * headers are read later, scan_chunk).  Large runs whose block header is
 * not marked allocated (a crash during allocation or free), runs that
 * would leave the range, orphaned continuation entries and entries of
 * unknown kinds are given back.
 */
static void
rebuild_range(AllocShared *as, uint64_t first, uint64_t n, uint64_t table_off, bool *changed)
{
	uint32_t	chunk_size = nvm_pool_header->chunk_size;
	uint64_t	end = first + n;

	for (uint64_t i = first; i < end; i++)
	{
		as->chunks[i].entry_off = table_off + (i - first) * sizeof(uint64_t);
		as->chunks[i].cls = -1;
		as->chunks[i].next_partial = -1;
	}
	for (uint64_t i = first; i < end; i++)
	{
		uint64_t	entry = atomic_load(chunk_entry(i));
		ChunkState *cs = &as->chunks[i];

		switch (NVM_CHUNK_KIND(entry))
		{
			case 1:				/* small: headers are read later (scan_chunk) */
				{
					int			cls = (int) NVM_CHUNK_ARG(entry);

					if (cls >= NCLASSES)
					{
						set_chunk_entry(i, NVM_CHUNK_FREE);
						*changed = true;
						goto free_chunk;
					}
					cs->kind = 1;
					cs->cls = (int16_t) cls;
					cs->nblocks = chunk_size / class_sizes[cls];
					cs->scanned = 0;
					cs->next_unscanned = as->classes[cls].unscanned;
					as->classes[cls].unscanned = (int64_t) i;
					as->unscanned_chunks++;
					break;
				}
			case 2:				/* large run */
				{
					uint64_t	runlen = NVM_CHUNK_ARG(entry);
					uint64_t	hdr = *(uint64_t *) chunk_addr(i);

					if (runlen == 0 || i + runlen > end || !(hdr & NVM_BLOCK_ALLOCATED))
					{
						set_chunk_entry(i, NVM_CHUNK_FREE);
						*changed = true;
						goto free_chunk;
					}
					for (uint64_t j = i; j < i + runlen; j++)
					{
						as->chunks[j].kind = (j == i) ? 2 : 3;
						if (j > i && NVM_CHUNK_KIND(atomic_load(chunk_entry(j))) != 3)
						{
							set_chunk_entry(j, NVM_CHUNK_CONT);
							*changed = true;
						}
					}
					as->bytes_allocated += runlen * chunk_size;
					as->blocks_allocated++;
					i += runlen - 1;
					break;
				}
			case 3:				/* continuation without a head: orphan */
				set_chunk_entry(i, NVM_CHUNK_FREE);
				*changed = true;
				/* FALLTHROUGH */
			default:
		free_chunk:
				cs->kind = 0;
				as->chunks_free++;
				break;
		}
	}
}

/* a segment: its first chunk holds its header and table, the rest as above */
static void
rebuild_segment(AllocShared *as, const NvmSegmentHeader *seg, bool *changed)
{
	ChunkState *meta = &as->chunks[seg->first_chunk];

	meta->entry_off = seg->offset + NVM_SEGMENT_TABLE_OFF;
	meta->kind = KIND_META;
	meta->cls = -1;
	meta->next_partial = -1;
	rebuild_range(as, seg->first_chunk + 1, seg->nchunks - 1,
				  seg->offset + NVM_SEGMENT_TABLE_OFF + sizeof(uint64_t), changed);
	as->segments++;
}

/*
 * nvm_alloc_rebuild builds the volatile allocator state from the chunk
 * tables of the pool and of its growth segments.  The shared memory must
 * be backed for nvm_alloc_chunks_in_pool() chunks.
 */
void
nvm_alloc_rebuild(void *shmem)
{
	AllocShared *as = shmem;
	uint64_t	nchunks = nvm_alloc_chunks_in_pool();
	bool		changed = false;

	alloc_shared = as;
	memset(as, 0, nvm_alloc_shmem_size(nchunks));
	nvm_spin_init(&as->chunk_lock);
	for (int c = 0; c < NCLASSES; c++)
	{
		nvm_spin_init(&as->classes[c].lock);
		as->classes[c].current = -1;
		as->classes[c].partial = -1;
		as->classes[c].unscanned = -1;
	}
	rebuild_range(as, 0, nvm_pool_header->nchunks, nvm_pool_header->chunk_table_off, &changed);
	for_each_segment(rebuild_segment, as, &changed);
	atomic_store(&as->nchunks, nchunks);
	if (changed)
		nvm_drain();
}

/*
 * take_free_chunks finds a run of n free chunks, marks them with the given
 * chunk-table entries (persisted) and returns the first, or -1.  Caller
 * holds no chunk lock.
 */
static int64_t
take_free_chunks(uint64_t n, int cls)
{
	AllocShared *as = alloc_shared;
	int64_t		found = -1;

	nvm_spin_lock(&as->chunk_lock);
	if (as->chunks_free >= n)
	{
		uint64_t	run = 0;

		uint64_t	nchunks = atomic_load(&as->nchunks);

		for (uint64_t i = as->free_hint; i < nchunks; i++)
		{
			if (as->chunks[i].kind == 0)
			{
				if (++run == n)
				{
					found = (int64_t) (i + 1 - n);
					break;
				}
			}
			else
				run = 0;
		}
	}
	if (found >= 0)
	{
		for (uint64_t j = (uint64_t) found; j < (uint64_t) found + n; j++)
			as->chunks[j].kind = (cls >= 0) ? 1 : (j == (uint64_t) found ? 2 : 3);
		as->chunks_free -= n;
		if ((uint64_t) found == as->free_hint)
			as->free_hint = (uint64_t) found + n;
	}
	nvm_spin_unlock(&as->chunk_lock);
	if (found < 0)
		return -1;

	if (cls >= 0)
	{
		/*
		 * A chunk for a size class: its old contents must not look like
		 * block headers at the next rebuild, so zero it and make that
		 * durable before the chunk-table entry says it is a small chunk.
		 */
		char	   *addr = chunk_addr((uint64_t) found);

		memset(addr, 0, nvm_pool_header->chunk_size);
		nvm_flush(addr, nvm_pool_header->chunk_size);
		nvm_drain();
		set_chunk_entry((uint64_t) found, NVM_CHUNK_SMALL(cls));
		nvm_drain();
	}
	else
	{
		/* continuation entries first, then the head entry */
		for (uint64_t j = (uint64_t) found + 1; j < (uint64_t) found + n; j++)
			set_chunk_entry(j, NVM_CHUNK_CONT);
		set_chunk_entry((uint64_t) found, NVM_CHUNK_LARGE(n));
	}
	return found;
}

static void
give_back_chunks(uint64_t first, uint64_t n)
{
	AllocShared *as = alloc_shared;

	for (uint64_t j = first; j < first + n; j++)
		set_chunk_entry(j, NVM_CHUNK_FREE);
	nvm_spin_lock(&as->chunk_lock);
	for (uint64_t j = first; j < first + n; j++)
	{
		as->chunks[j].kind = 0;
		as->chunks[j].cls = -1;
	}
	as->chunks_free += n;
	if (first < as->free_hint)
		as->free_hint = first;
	nvm_spin_unlock(&as->chunk_lock);
}

static int64_t
find_free_block(ChunkState *cs)
{
	uint32_t	nwords = (cs->nblocks + 63) / 64;

	for (uint32_t k = 0; k < nwords; k++)
	{
		uint32_t	w = (cs->hint + k) % nwords;
		uint64_t	bits = cs->bitmap[w];

		if (w == nwords - 1 && cs->nblocks % 64)
			bits |= ~UINT64_C(0) << (cs->nblocks % 64);
		if (bits != ~UINT64_C(0))
		{
			int			b = __builtin_ctzll(~bits);

			cs->hint = w;
			return (int64_t) w * 64 + b;
		}
	}
	return -1;
}

/*
 * scan_chunk reads the block headers of a small chunk that has not been
 * read since start-up; the caller holds its class lock.  An empty chunk
 * goes back to the free chunks, one with free blocks onto the class's
 * partial list.
 */
static void
scan_chunk(int64_t chunk)
{
	AllocShared *as = alloc_shared;
	ChunkState *cs = &as->chunks[chunk];
	ClassState *cl = &as->classes[cs->cls];
	uint32_t	bsize = class_sizes[cs->cls];
	uint64_t	used = 0;

	memset(cs->bitmap, 0, sizeof(cs->bitmap));
	cs->free_count = 0;
	for (uint32_t b = 0; b < cs->nblocks; b++)
	{
		uint64_t	hdr = *(uint64_t *) (chunk_addr((uint64_t) chunk) + (uint64_t) b * bsize);

		if (hdr & NVM_BLOCK_ALLOCATED)
		{
			cs->bitmap[b / 64] |= UINT64_C(1) << (b % 64);
			used++;
		}
		else
			cs->free_count++;
	}
	cs->scanned = 1;
	atomic_fetch_sub(&as->unscanned_chunks, 1);
	atomic_fetch_add(&as->bytes_allocated, used * bsize);
	atomic_fetch_add(&as->blocks_allocated, used);
	if (cs->free_count == cs->nblocks)
	{
		cs->on_list = 0;
		give_back_chunks((uint64_t) chunk, 1);
	}
	else if (cs->free_count > 0 && !cs->on_list)
	{
		cs->on_list = 1;
		cs->next_partial = cl->partial;
		cl->partial = chunk;
	}
}

static nvm_off
alloc_small(int cls)
{
	AllocShared *as = alloc_shared;
	ClassState *cl = &as->classes[cls];
	uint32_t	bsize = class_sizes[cls];
	int64_t		chunk,
				block = -1;
	char	   *addr;

	nvm_spin_lock(&cl->lock);
	for (;;)
	{
		chunk = cl->current;
		if (chunk >= 0)
		{
			ChunkState *cs = &as->chunks[chunk];

			if (cs->free_count > 0 && (block = find_free_block(cs)) >= 0)
			{
				cs->bitmap[block / 64] |= UINT64_C(1) << (block % 64);
				cs->free_count--;
				break;
			}
			cs->on_list = 0;
			cl->current = -1;
		}
		if (cl->partial >= 0)
		{
			chunk = cl->partial;
			cl->partial = as->chunks[chunk].next_partial;
			as->chunks[chunk].next_partial = -1;
			cl->current = chunk;
			continue;
		}
		if (cl->unscanned >= 0)
		{
			/* read a chunk of this class left from before the start */
			chunk = cl->unscanned;
			cl->unscanned = as->chunks[chunk].next_unscanned;
			if (!as->chunks[chunk].scanned)
				scan_chunk(chunk);
			continue;
		}
		{
			uint64_t	seen = atomic_load(&as->nchunks);

			chunk = take_free_chunks(1, cls);
			if (chunk < 0)
			{
				/* no free chunk: grow the pool (without our lock) and retry */
				nvm_spin_unlock(&cl->lock);
				if (!nvm_pool_grow(1, seen))
					return 0;
				nvm_spin_lock(&cl->lock);
				continue;
			}
		}
		{
			ChunkState *cs = &as->chunks[chunk];

			memset(cs->bitmap, 0, sizeof(cs->bitmap));
			cs->cls = (int16_t) cls;
			cs->nblocks = nvm_pool_header->chunk_size / bsize;
			cs->free_count = cs->nblocks;
			cs->hint = 0;
			cs->on_list = 1;
			cs->scanned = 1;
			cs->next_partial = -1;
		}
		cl->current = chunk;
	}
	nvm_spin_unlock(&cl->lock);

	addr = chunk_addr((uint64_t) chunk) + (uint64_t) block * bsize;
	*(uint64_t *) addr = NVM_BLOCK_ALLOCATED | NVM_BLOCK_MAGIC | bsize;
	nvm_flush(addr, NVM_BLOCK_HEADER_SIZE);
	atomic_fetch_add(&as->bytes_allocated, bsize);
	atomic_fetch_add(&as->blocks_allocated, 1);
	return nvm_off_of(addr) + NVM_BLOCK_HEADER_SIZE;
}

/*
 * nvm_alloc returns the payload offset of a new block of at least size
 * bytes, or 0 if the pool is full.
 */
nvm_off
nvm_alloc(size_t size)
{
	uint64_t	total = (uint64_t) size + NVM_BLOCK_HEADER_SIZE;
	int			cls = class_for_size(total);
	uint32_t	chunk_size = nvm_pool_header->chunk_size;
	uint64_t	n;
	int64_t		first;
	char	   *addr;
	nvm_off		off = 0;

	nvm_alloc_change_begin();
	if (cls >= 0)
		off = alloc_small(cls);
	else
	{
		n = (total + chunk_size - 1) / chunk_size;
		for (;;)
		{
			uint64_t	seen = atomic_load(&alloc_shared->nchunks);

			first = take_free_chunks(n, -1);
			if (first >= 0 || !nvm_pool_grow(n, seen))
				break;
		}
		if (first >= 0)
		{
			addr = chunk_addr((uint64_t) first);
			*(uint64_t *) addr = NVM_BLOCK_ALLOCATED | NVM_BLOCK_MAGIC | (n * chunk_size);
			nvm_flush(addr, NVM_BLOCK_HEADER_SIZE);
			atomic_fetch_add(&alloc_shared->bytes_allocated, n * chunk_size);
			atomic_fetch_add(&alloc_shared->blocks_allocated, 1);
			off = nvm_off_of(addr) + NVM_BLOCK_HEADER_SIZE;
		}
	}
	nvm_alloc_change_end();
	return off;
}

nvm_off
nvm_alloc_zeroed(size_t size)
{
	nvm_off		off = nvm_alloc(size);

	if (off)
	{
		memset(nvm_ptr(off), 0, size);
		nvm_flush(nvm_ptr(off), size);
	}
	return off;
}

size_t
nvm_alloc_usable_size(nvm_off off)
{
	uint64_t	hdr = *(uint64_t *) (nvm_pool_base + off - NVM_BLOCK_HEADER_SIZE);

	return (size_t) (hdr & NVM_BLOCK_SIZE_MASK) - NVM_BLOCK_HEADER_SIZE;
}

/*
 * nvm_free gives the block at payload offset off back to the allocator.
 */
void
nvm_free(nvm_off off)
{
	AllocShared *as = alloc_shared;
	uint64_t	block_off = off - NVM_BLOCK_HEADER_SIZE;
	uint64_t   *hdrp = (uint64_t *) (nvm_pool_base + block_off);
	uint64_t	bsize = *hdrp & NVM_BLOCK_SIZE_MASK;
	uint64_t	chunk = (block_off - nvm_pool_header->chunks_off) / nvm_pool_header->chunk_size;
	ChunkState *cs = &as->chunks[chunk];
	ClassState *cl;
	uint64_t	b;

	nvm_alloc_change_begin();
	if (cs->kind == 2)
	{
		*hdrp = 0;
		nvm_flush(hdrp, NVM_BLOCK_HEADER_SIZE);
		atomic_fetch_sub(&as->bytes_allocated, bsize);
		atomic_fetch_sub(&as->blocks_allocated, 1);
		give_back_chunks(chunk, bsize / nvm_pool_header->chunk_size);
		nvm_alloc_change_end();
		return;
	}

	cl = &as->classes[cs->cls];
	b = (block_off - (uint64_t) (chunk_addr(chunk) - nvm_pool_base)) / class_sizes[cs->cls];
	nvm_spin_lock(&cl->lock);
	if (!cs->scanned)
		scan_chunk((int64_t) chunk);	/* counts this block as allocated */
	*hdrp = 0;
	nvm_flush(hdrp, NVM_BLOCK_HEADER_SIZE);
	atomic_fetch_sub(&as->bytes_allocated, bsize);
	atomic_fetch_sub(&as->blocks_allocated, 1);
	cs->bitmap[b / 64] &= ~(UINT64_C(1) << (b % 64));
	cs->free_count++;
	if (cs->free_count == cs->nblocks && cl->current != (int64_t) chunk)
	{
		/*
		 * The chunk is empty: give it back to the free chunks, so that
		 * other size classes can have it.  Its block headers are all clear
		 * (each free flushed its own).
		 */
		if (cs->on_list)
		{
			for (int64_t *link = &cl->partial; *link >= 0; link = &as->chunks[*link].next_partial)
			{
				if (*link == (int64_t) chunk)
				{
					*link = cs->next_partial;
					break;
				}
			}
		}
		cs->on_list = 0;
		cs->next_partial = -1;
		give_back_chunks(chunk, 1);
	}
	else if (!cs->on_list)
	{
		cs->on_list = 1;
		cs->next_partial = cl->partial;
		cl->partial = (int64_t) chunk;
	}
	nvm_spin_unlock(&cl->lock);
	nvm_alloc_change_end();
}

/*
 * nvm_alloc_scan_all reads every chunk not read since start-up, so that the
 * statistics are exact.
 */
void
nvm_alloc_scan_all(void)
{
	AllocShared *as = alloc_shared;

	for (int c = 0; c < NCLASSES; c++)
	{
		ClassState *cl = &as->classes[c];

		nvm_spin_lock(&cl->lock);
		while (cl->unscanned >= 0)
		{
			int64_t		chunk = cl->unscanned;

			cl->unscanned = as->chunks[chunk].next_unscanned;
			if (!as->chunks[chunk].scanned)
				scan_chunk(chunk);
		}
		nvm_spin_unlock(&cl->lock);
	}
}

void
nvm_alloc_get_stats(NvmAllocStats *stats)
{
	AllocShared *as = alloc_shared;

	if (atomic_load(&as->unscanned_chunks) > 0)
		nvm_alloc_scan_all();

	nvm_spin_lock(&as->chunk_lock);
	stats->chunks_total = atomic_load(&as->nchunks) - as->segments;
	stats->chunks_free = as->chunks_free;
	stats->segments = as->segments;
	stats->pool_size = nvm_pool_end();
	nvm_spin_unlock(&as->chunk_lock);
	stats->pool_bytes = stats->chunks_total * nvm_pool_header->chunk_size;
	stats->bytes_allocated = atomic_load(&as->bytes_allocated);
	stats->blocks_allocated = atomic_load(&as->blocks_allocated);
}

/* ---------------------------------------------------------------------
 * Checking blocks (for the integrity checker)
 * ---------------------------------------------------------------------
 */

/*
 * A block's id is the number of the 64-byte unit its header starts in: no
 * block is smaller than 64 bytes, so no two blocks share one.
 */
#define BLOCK_ID_UNIT	64

/* grid_chunks returns the chunks on the grid, published growth segments included */
static inline uint64_t
grid_chunks(void)
{
	return atomic_load_explicit(&alloc_shared->nchunks, memory_order_acquire);
}

uint64_t
nvm_alloc_block_id_limit(void)
{
	return grid_chunks() * (nvm_pool_header->chunk_size / BLOCK_ID_UNIT);
}

/*
 * check_header says whether the header of the block that starts at block
 * (an offset) of the given total size says it is allocated and sane.
 */
static NvmBlockState
check_header(uint64_t block, uint64_t total)
{
	uint64_t	hdr = *(volatile uint64_t *) (nvm_pool_base + block);

	if (!(hdr & NVM_BLOCK_ALLOCATED))
		return NVM_BLOCK_FREED;
	if ((hdr & ~NVM_BLOCK_SIZE_MASK) != (NVM_BLOCK_ALLOCATED | NVM_BLOCK_MAGIC) ||
		(hdr & NVM_BLOCK_SIZE_MASK) != total)
		return NVM_BLOCK_BAD_HEADER;
	return NVM_BLOCK_OK;
}

NvmBlockState
nvm_alloc_check_block(nvm_off payload, NvmBlockInfo *info)
{
	uint64_t	start = nvm_pool_header->chunks_off;
	uint64_t	chunk_size = nvm_pool_header->chunk_size;
	uint64_t	nchunks = grid_chunks();
	uint64_t	rel,
				chunk,
				entry,
				block,
				total;
	NvmBlockState st;

	memset(info, 0, sizeof(*info));
	if (payload < start + NVM_BLOCK_HEADER_SIZE ||
		payload - start - NVM_BLOCK_HEADER_SIZE >= nchunks * chunk_size)
		return NVM_BLOCK_OUTSIDE;
	rel = payload - start - NVM_BLOCK_HEADER_SIZE;
	chunk = rel / chunk_size;
	entry = atomic_load_explicit(chunk_entry(chunk), memory_order_acquire);
	switch (NVM_CHUNK_KIND(entry))
	{
		case 0:
			return entry == NVM_CHUNK_FREE ? NVM_BLOCK_FREE_CHUNK : NVM_BLOCK_BAD_CHUNK;
		case 1:
			{
				uint64_t	cls = NVM_CHUNK_ARG(entry);
				uint64_t	in_chunk = rel % chunk_size;

				if (cls >= (uint64_t) NCLASSES)
					return NVM_BLOCK_BAD_CHUNK;
				total = class_sizes[cls];
				if (in_chunk % total != 0 || in_chunk / total >= chunk_size / total)
					return NVM_BLOCK_NOT_START;
				break;
			}
		case 2:
			{
				uint64_t	n = NVM_CHUNK_ARG(entry);

				if (n == 0 || n > nchunks - chunk)
					return NVM_BLOCK_BAD_CHUNK;
				if (rel % chunk_size != 0)
					return NVM_BLOCK_NOT_START;
				total = n * chunk_size;
				break;
			}
		default:				/* inside a large run */
			return NVM_BLOCK_NOT_START;
	}
	block = start + rel;
	info->payload = payload;
	info->size = total - NVM_BLOCK_HEADER_SIZE;
	info->id = rel / BLOCK_ID_UNIT;
	st = check_header(block, total);
	if (st != NVM_BLOCK_OK)
		return st;

	/*
	 * The shared state of a chunk read since start-up must count the block
	 * as allocated, or the allocator would hand it out again.
	 */
	if (alloc_shared != NULL && chunk < alloc_shared->nchunks)
	{
		ChunkState *cs = &alloc_shared->chunks[chunk];

		if (NVM_CHUNK_KIND(entry) == 2)
		{
			if (cs->kind != 2)
				return NVM_BLOCK_SHARED_FREE;
		}
		else if (cs->scanned && cs->kind == 1 && cs->cls == (int16_t) NVM_CHUNK_ARG(entry))
		{
			uint64_t	b = (rel % chunk_size) / total;
			uint64_t	word = ((volatile uint64_t *) cs->bitmap)[b / 64];

			if (!(word & (UINT64_C(1) << (b % 64))))
				return NVM_BLOCK_SHARED_FREE;
		}
	}
	return NVM_BLOCK_OK;
}

const char *
nvm_alloc_block_state_name(NvmBlockState state)
{
	switch (state)
	{
		case NVM_BLOCK_OK:
			return "an allocated block";
		case NVM_BLOCK_OUTSIDE:
			return "outside the pool's blocks";
		case NVM_BLOCK_NOT_START:
			return "not the start of a block";
		case NVM_BLOCK_FREE_CHUNK:
			return "in a free chunk";
		case NVM_BLOCK_BAD_CHUNK:
			return "in a chunk with an invalid chunk-table entry";
		case NVM_BLOCK_FREED:
			return "a block that is not allocated";
		case NVM_BLOCK_BAD_HEADER:
			return "a block with a damaged header";
		case NVM_BLOCK_SHARED_FREE:
			return "a block the allocator's shared state counts as free";
	}
	return "?";
}

uint64_t
nvm_alloc_check_chunk_table(NvmChunkReportFn report, void *arg)
{
	uint64_t	nchunks = grid_chunks();
	uint64_t	bad = 0;
	uint64_t	run_end = 0;	/* chunks below this belong to the last large run */

	for (uint64_t i = 0; i < nchunks; i++)
	{
		uint64_t	entry = atomic_load_explicit(chunk_entry(i), memory_order_acquire);
		uint64_t	arg_ = NVM_CHUNK_ARG(entry);
		const char *what = NULL;

		if (i < run_end)
		{
			if (entry != NVM_CHUNK_CONT)
				what = "a chunk inside a large run is not marked as its continuation";
		}
		else
		{
			switch (NVM_CHUNK_KIND(entry))
			{
				case 0:
					if (entry != NVM_CHUNK_FREE)
						what = "a free chunk's entry has other bits set";
					break;
				case 1:
					if (arg_ >= (uint64_t) NCLASSES)
						what = "a small chunk names a size class that does not exist";
					break;
				case 2:
					if (arg_ == 0 || arg_ > nchunks - i)
						what = "a large run does not fit in the pool";
					else
						run_end = i + arg_;
					break;
				case 4:
					if (alloc_shared->chunks[i].kind != KIND_META)
						what = "a chunk is marked as a growth segment's header but starts none";
					break;
				default:
					what = "a continuation chunk belongs to no large run";
					break;
			}
		}
		if (what != NULL)
		{
			bad++;
			if (report)
				report(i, nvm_off_of((const void *) chunk_entry(i)), what, arg);
		}
	}
	return bad;
}

/*
 * nvm_alloc_next_block: the cursor is the offset, from the start of the
 * chunk area, where the search goes on.
 */
bool
nvm_alloc_next_block(uint64_t *cursor, NvmBlockInfo *info)
{
	uint64_t	start = nvm_pool_header->chunks_off;
	uint64_t	chunk_size = nvm_pool_header->chunk_size;
	uint64_t	nchunks = grid_chunks();

	while (*cursor < nchunks * chunk_size)
	{
		uint64_t	chunk = *cursor / chunk_size;
		uint64_t	in_chunk = *cursor % chunk_size;
		uint64_t	entry = atomic_load_explicit(chunk_entry(chunk), memory_order_acquire);
		uint64_t	arg = NVM_CHUNK_ARG(entry);
		uint64_t	block = *cursor;
		uint64_t	total;

		if (NVM_CHUNK_KIND(entry) == 1 && arg < (uint64_t) NCLASSES &&
			in_chunk / class_sizes[arg] < chunk_size / class_sizes[arg])
			total = class_sizes[arg];	/* the next block of a small chunk */
		else if (NVM_CHUNK_KIND(entry) == 2 && in_chunk == 0 &&
				 arg > 0 && arg <= nchunks - chunk)
			total = arg * chunk_size;	/* a large run */
		else
		{
			/* a free chunk, the tail of a small one, or a bad entry */
			*cursor = (chunk + 1) * chunk_size;
			continue;
		}
		*cursor += total;
		if (check_header(start + block, total) == NVM_BLOCK_OK)
		{
			info->payload = start + block + NVM_BLOCK_HEADER_SIZE;
			info->size = total - NVM_BLOCK_HEADER_SIZE;
			info->id = block / BLOCK_ID_UNIT;
			return true;
		}
	}
	return false;
}

/*
 * Changes in progress (see alloc.h): a change counts as begun before it
 * stores anything, and as ended after its last store.
 */
void
nvm_alloc_change_begin(void)
{
	if (alloc_shared == NULL)
		return;
	atomic_fetch_add(&alloc_shared->changes_begun, 1);
	/* the count is visible to whoever sees any store that follows */
	atomic_thread_fence(memory_order_release);
}

void
nvm_alloc_change_end(void)
{
	if (alloc_shared == NULL)
		return;
	atomic_fetch_add_explicit(&alloc_shared->changes_ended, 1, memory_order_release);
}

/*
 * nvm_alloc_quiet_mark reads the counts, the ended one first: if they are
 * equal, no change was under way when the begun one was read.
 */
bool
nvm_alloc_quiet_mark(uint64_t *mark)
{
	uint64_t	ended,
				begun;

	if (alloc_shared == NULL)
	{
		*mark = 0;
		return true;
	}
	ended = atomic_load_explicit(&alloc_shared->changes_ended, memory_order_acquire);
	begun = atomic_load(&alloc_shared->changes_begun);
	*mark = begun;
	return begun == ended;
}

bool
nvm_alloc_changed_since(uint64_t mark)
{
	if (alloc_shared == NULL)
		return false;
	/* every read of the pool before this one comes first */
	atomic_thread_fence(memory_order_acquire);
	return atomic_load(&alloc_shared->changes_begun) != mark;
}

uint64_t
nvm_alloc_chunk_count(void)
{
	return atomic_load_explicit(&alloc_shared->nchunks, memory_order_acquire);
}

uint64_t
nvm_alloc_chunk_entry(uint64_t chunk)
{
	return atomic_load(chunk_entry(chunk));
}

nvm_off
nvm_alloc_chunk_offset(uint64_t chunk)
{
	return nvm_pool_chunk_offset(chunk);
}

bool
nvm_alloc_contains(nvm_off off, size_t len)
{
	uint64_t	start = nvm_pool_header->chunks_off;
	uint64_t	nchunks = nvm_alloc_chunk_count();
	uint64_t	first,
				last;

	if (off < start || len == 0 ||
		off + len > start + nchunks * nvm_pool_header->chunk_size)
		return false;
	first = (off - start) / nvm_pool_header->chunk_size;
	last = (off + len - 1 - start) / nvm_pool_header->chunk_size;
	return alloc_shared->chunks[first].kind != KIND_META &&
		alloc_shared->chunks[last].kind != KIND_META;
}

uint64_t
nvm_alloc_segment_count(void)
{
	uint64_t	n;

	nvm_spin_lock(&alloc_shared->chunk_lock);
	n = alloc_shared->segments;
	nvm_spin_unlock(&alloc_shared->chunk_lock);
	return n;
}

void *
nvm_alloc_shmem_end(uint64_t nchunks)
{
	return (char *) alloc_shared + nvm_alloc_shmem_size(nchunks);
}

/*
 * nvm_alloc_format_segment writes the chunk table of the segment of nchunks
 * chunks that starts at chunk first: its first entry marks the segment's
 * own chunk (header and table), the others are free.  The table is
 * flushed, not drained: growth drains it with the segment's header.
 */
void
nvm_alloc_format_segment(uint64_t first, uint64_t nchunks)
{
	char	   *base = nvm_pool_base + nvm_pool_chunk_offset(first);
	_Atomic uint64_t *table = (_Atomic uint64_t *) (base + NVM_SEGMENT_TABLE_OFF);

	memset((void *) (table + 1), 0, (nchunks - 1) * sizeof(uint64_t));
	atomic_store(&table[0], NVM_CHUNK_META);
	nvm_flush((const void *) table, nchunks * sizeof(uint64_t));
}

/*
 * nvm_alloc_publish_segment: see alloc.h.  The chunk count is raised last,
 * under the chunk lock, after every new chunk's state is set.
 */
void
nvm_alloc_publish_segment(uint64_t first, uint64_t nchunks)
{
	AllocShared *as = alloc_shared;
	uint64_t	table_off = nvm_pool_chunk_offset(first) + NVM_SEGMENT_TABLE_OFF;

	nvm_spin_lock(&as->chunk_lock);
	for (uint64_t i = first; i < first + nchunks; i++)
	{
		ChunkState *cs = &as->chunks[i];

		memset(cs, 0, offsetof(ChunkState, bitmap));
		cs->entry_off = table_off + (i - first) * sizeof(uint64_t);
		cs->cls = -1;
		cs->next_partial = -1;
		cs->next_unscanned = -1;
		cs->kind = (i == first) ? KIND_META : 0;
	}
	as->chunks_free += nchunks - 1;
	as->segments++;
	atomic_store_explicit(&as->nchunks, first + nchunks, memory_order_release);
	nvm_spin_unlock(&as->chunk_lock);
}
