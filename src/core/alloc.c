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
 *	 - a spinlock over chunk-level changes (taking free chunks);
 *	 - per cache (see "Caches" below): its change counts and its share of
 *	   the byte and block counts, in a cache line of its own.
 * Lock order: a class lock may be held while taking the chunk lock, never
 * the other way round.  A class takes a new chunk from the free chunks
 * without its own lock held (take_blocks): clearing the chunk's block
 * headers touches each of its pages, which on a new pool the kernel fills
 * on first touch, and the class's other threads are not held meanwhile.
 *
 * Caches.  A thread that owns a clock slot (nvm_slot_acquire binds a cache
 * to it, nvm_slot_release returns it: in the PG layer a backend, from its
 * first write until it exits) allocates blocks of the small classes up to
 * CACHED_MAX_SIZE from a cache of its own, and frees them into it.  The
 * cache's lists live in the thread's own memory; its counters live in
 * shared memory in a cache line only that thread writes, so an allocation
 * or a free served by the cache takes no lock and writes no line another
 * thread writes.  Blocks move between the class state and a cache in
 * batches under the class lock (take_blocks, return_blocks).  A block in
 * a cache is:
 *	 - free in the pool: its header is clear (a chunk's blocks start clear,
 *	   nvm_free clears and flushes the header before the block enters a
 *	   cache), so a crash or a restart, which rebuilds the volatile state
 *	   from the headers, finds it free and loses nothing;
 *	 - taken in the shared state: its bit in its chunk's bitmap is set and
 *	   it is not counted in free_count, so nobody else hands it out, and its
 *	   chunk cannot go back to the free chunks while it is cached;
 *	 - free in the statistics: the byte and block counts count what
 *	   nvm_alloc handed out and nvm_free took back, wherever it went.
 * Only blocks of chunks read since start-up (scanned) enter a cache: a
 * later scan_chunk of an unscanned chunk would find a cached block's
 * header clear and hand it out again.  A cache goes back to the class
 * state when its thread releases its slot (the PG layer: at backend exit,
 * nvm_xact.c) or calls nvm_alloc_cache_flush; a thread that ends without
 * it (a test's thread, a killed process before a restart) leaves its
 * blocks taken until the next start-up, which loses nothing persistent.
 * A forked child starts without a cache (its parent keeps the blocks), and
 * a rebuild of the shared state drops every cache of the process unread.
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

#include <pthread.h>
#include <string.h>
#include <unistd.h>

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

/*
 * Caches: the classes up to CACHED_MAX_SIZE bytes (header included) are
 * cached, at most CACHE_MAX blocks or CACHE_BYTES bytes (but 4 blocks) a
 * class, moved to and from the class state half a cache at a time.
 */
#define CACHED_MAX_SIZE		4096
#define CACHED_CLASSES		25	/* class_sizes[24] == CACHED_MAX_SIZE */
#define CACHE_MAX			32
#define CACHE_BYTES			16384
#define NCACHES				NVM_MAX_SLOTS

/*
 * The shared part of a cache: what its thread counts, in a line no other
 * thread writes.  The counts are never reset (a cache passed to another
 * thread keeps counting on from them), so each of them only grows, or, the
 * byte and block counts, changes by what this cache's thread did; readers
 * sum them over every cache and the shared counts (modulo 2^64: a cache
 * may free more than it allocated).
 */
typedef struct CacheShared
{
	_Atomic uint32_t in_use;	/* claimed by a thread (cache_bind) */
	uint32_t	pad_;
	_Atomic uint64_t changes_begun;
	_Atomic uint64_t changes_ended;
	_Atomic uint64_t bytes_allocated;
	_Atomic uint64_t blocks_allocated;
} __attribute__((aligned(64))) CacheShared;

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
	uint64_t	incarnation;	/* set by each rebuild, unique in the process */
	_Atomic uint64_t nchunks;	/* chunks on the grid, published segments included */
	uint64_t	segments;		/* growth segments among them */
	uint64_t	chunks_free;
	uint64_t	free_hint;		/* lowest chunk that may be free */
	_Atomic uint64_t unscanned_chunks;	/* small chunks whose headers are unread */
	_Atomic uint64_t bytes_allocated;	/* of threads without a cache */
	_Atomic uint64_t blocks_allocated;
	_Atomic uint64_t changes_begun;	/* see nvm_alloc_change_begin */
	_Atomic uint64_t changes_ended;
	_Atomic uint32_t caches_high_water;	/* caches[] at or above it were never used */
	ClassState	classes[NCLASSES];
	CacheShared caches[NCACHES];
	ChunkState	chunks[];
} AllocShared;

static AllocShared *alloc_shared = NULL;

/*
 * The calling thread's cache: its lists, and its shared part (NULL: no
 * cache).  It belongs to the shared state it was bound in (as, and that
 * state's incarnation): while the process is attached to another state (a
 * test checking a crash image) it is left alone, and once its own state is
 * rebuilt it is dropped unread (its blocks belong to a state that is gone).
 */
typedef struct LocalCache
{
	CacheShared *shared;
	AllocShared *as;
	uint64_t	gen;
	int			slot;			/* the clock slot it was bound for */
	bool		busy;			/* moving blocks to or from the class state */
	uint16_t	count[CACHED_CLASSES];
	nvm_off		blocks[CACHED_CLASSES][CACHE_MAX];	/* payload offsets */
} LocalCache;

static _Thread_local LocalCache local_cache;
static uint64_t alloc_gen = 0;		/* the attached state's incarnation */
static uint64_t alloc_incarnations = 0;	/* rebuilds in this process */

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

/*
 * Lookup tables of the cached classes, filled by init_tables before the
 * first allocation: the class of a total size up to CACHED_MAX_SIZE by
 * its 16-byte units (every cached class is a multiple of 16 bytes), and
 * how many blocks of a class a cache holds at most.
 */
static uint8_t class_by_units[CACHED_MAX_SIZE / 16 + 1];
static uint8_t cache_caps[CACHED_CLASSES];

static void
init_tables(void)
{
	for (uint32_t u = 0; u <= CACHED_MAX_SIZE / 16; u++)
		class_by_units[u] = (uint8_t) class_for_size(u == 0 ? 1 : u * 16);
	for (int c = 0; c < CACHED_CLASSES; c++)
	{
		int			n = CACHE_BYTES / (int) class_sizes[c];

		cache_caps[c] = (uint8_t) (n > CACHE_MAX ? CACHE_MAX : (n < 4 ? 4 : n));
	}
}

/* cache_cap returns how many blocks of class cls a cache holds at most */
static inline int
cache_cap(int cls)
{
	return cache_caps[cls];
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
	alloc_gen = alloc_shared->incarnation;
	init_tables();
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
	init_tables();
	memset(as, 0, nvm_alloc_shmem_size(nchunks));
	/* a cache bound in an earlier state here is dropped (my_cache) */
	as->incarnation = ++alloc_incarnations + ((uint64_t) getpid() << 32);
	alloc_gen = as->incarnation;
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
		 * block headers at the next rebuild, so clear the words where its
		 * blocks' headers will be (nothing else of a free block is ever
		 * read: scan_chunk, the checker and nvm_alloc_next_block read
		 * headers alone, and a block's payload is the caller's to
		 * initialise) and make that durable before the chunk-table entry
		 * says it is a small chunk.  Classes of 128 bytes and more clear
		 * and flush their header words one by one (at most half the
		 * chunk's cache lines); smaller ones the whole chunk.
		 */
		char	   *addr = chunk_addr((uint64_t) found);
		uint32_t	bsize = class_sizes[cls];

		if (bsize >= 128)
		{
			uint32_t	nblocks = nvm_pool_header->chunk_size / bsize;

			for (uint32_t b = 0; b < nblocks; b++)
			{
				uint64_t   *hdrp = (uint64_t *) (addr + (uint64_t) b * bsize);

				*hdrp = 0;
				nvm_flush(hdrp, NVM_BLOCK_HEADER_SIZE);
			}
		}
		else
		{
			memset(addr, 0, nvm_pool_header->chunk_size);
			nvm_flush(addr, nvm_pool_header->chunk_size);
		}
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
	__atomic_store_n(&cs->scanned, 1, __ATOMIC_RELAXED);
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

/*
 * take_blocks takes up to want free blocks of class cls from the class
 * state (setting their bits) and stores their payload offsets in out; it
 * returns how many it took, at least one unless the pool is full and
 * cannot grow.  It takes a new chunk (or grows the pool) only when it has
 * taken nothing yet.  Their headers are clear: the caller writes them when
 * it hands a block out.
 */
static int
take_blocks(int cls, int want, nvm_off *out)
{
	AllocShared *as = alloc_shared;
	ClassState *cl = &as->classes[cls];
	uint32_t	bsize = class_sizes[cls];
	int64_t		chunk,
				block;
	int			got = 0;

	nvm_spin_lock(&cl->lock);
	for (;;)
	{
		chunk = cl->current;
		if (chunk >= 0)
		{
			ChunkState *cs = &as->chunks[chunk];
			nvm_off		base = nvm_off_of(chunk_addr((uint64_t) chunk)) + NVM_BLOCK_HEADER_SIZE;

			while (got < want && cs->free_count > 0 && (block = find_free_block(cs)) >= 0)
			{
				cs->bitmap[block / 64] |= UINT64_C(1) << (block % 64);
				cs->free_count--;
				out[got++] = base + (uint64_t) block * bsize;
			}
			if (got == want)
				break;
			cs->on_list = 0;
			cl->current = -1;
			if (got > 0)
				break;
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
			ChunkState *cs;

			/*
			 * A free chunk is taken and its block headers cleared without
			 * our lock: the clearing touches every page of the chunk (the
			 * first touch of a new pool's page makes the kernel fill it),
			 * and other threads of this class go on meanwhile.  No block of
			 * the chunk is handed out before it is on our lists.
			 */
			nvm_spin_unlock(&cl->lock);
			chunk = take_free_chunks(1, cls);
			if (chunk < 0)
			{
				/* no free chunk: grow the pool and retry */
				if (!nvm_pool_grow(1, seen))
					return 0;
				nvm_spin_lock(&cl->lock);
				continue;
			}
			cs = &as->chunks[chunk];
			memset(cs->bitmap, 0, sizeof(cs->bitmap));
			cs->cls = (int16_t) cls;
			cs->nblocks = nvm_pool_header->chunk_size / bsize;
			cs->free_count = cs->nblocks;
			cs->hint = 0;
			cs->on_list = 1;
			cs->next_partial = -1;
			__atomic_store_n(&cs->scanned, 1, __ATOMIC_RELAXED);
			nvm_spin_lock(&cl->lock);
			if (cl->current >= 0)
			{
				/* another thread put a chunk in meanwhile: ours waits on the partial list */
				cs->next_partial = cl->partial;
				cl->partial = chunk;
				continue;
			}
		}
		cl->current = chunk;
	}
	nvm_spin_unlock(&cl->lock);
	return got;
}

/*
 * release_block_locked gives block b of small chunk chunk back to the class
 * state; the caller holds the class lock, the block's header is clear.  An
 * empty chunk goes back to the free chunks, so that other size classes can
 * have it (its block headers are all clear: each free flushed its own).
 */
static void
release_block_locked(ClassState *cl, uint64_t chunk, uint64_t b)
{
	AllocShared *as = alloc_shared;
	ChunkState *cs = &as->chunks[chunk];

	cs->bitmap[b / 64] &= ~(UINT64_C(1) << (b % 64));
	cs->free_count++;
	if (cs->free_count == cs->nblocks && cl->current != (int64_t) chunk)
	{
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
}

/* block_of returns the chunk and the block number in it of a payload offset */
static inline uint64_t
block_of(nvm_off off, uint64_t *b)
{
	uint64_t	rel = off - NVM_BLOCK_HEADER_SIZE - nvm_pool_header->chunks_off;
	uint64_t	chunk = rel / nvm_pool_header->chunk_size;

	*b = (rel % nvm_pool_header->chunk_size) / class_sizes[alloc_shared->chunks[chunk].cls];
	return chunk;
}

/*
 * return_blocks gives n cached blocks of class cls (payload offsets, headers
 * clear) back to the class state under one lock.
 */
static void
return_blocks(int cls, int n, const nvm_off *offs)
{
	ClassState *cl = &alloc_shared->classes[cls];

	nvm_spin_lock(&cl->lock);
	for (int i = 0; i < n; i++)
	{
		uint64_t	b;
		uint64_t	chunk = block_of(offs[i], &b);

		release_block_locked(cl, chunk, b);
	}
	nvm_spin_unlock(&cl->lock);
}

/* ---------------------------------------------------------------------
 * The calling thread's cache
 * ---------------------------------------------------------------------
 */

/* my_cache returns the calling thread's cache, or NULL if it has none */
static inline LocalCache *
my_cache(void)
{
	LocalCache *lc = &local_cache;

	if (lc->shared == NULL || __builtin_expect(lc->as != alloc_shared, 0))
		return NULL;
	if (__builtin_expect(lc->gen != alloc_gen, 0))
	{
		/* its shared state was rebuilt since: drop it */
		memset(lc, 0, sizeof(*lc));
		return NULL;
	}
	return lc;
}

/* forget_cache_in_child: a forked child must not hand out its parent's blocks */
static void
forget_cache_in_child(void)
{
	memset(&local_cache, 0, sizeof(local_cache));
}

/*
 * nvm_alloc_cache_bind gives the calling thread a cache for the clock slot
 * it claimed, unless it has one already or every cache is taken (then it
 * allocates from the class state, as a thread without a slot does).
 */
void
nvm_alloc_cache_bind(int slot)
{
	static bool atfork_registered = false;
	AllocShared *as = alloc_shared;
	LocalCache *lc = &local_cache;

	if (as == NULL || my_cache() != NULL)
		return;

	/*
	 * A cache of another shared state is replaced (its blocks stay taken
	 * there), unless it is moving blocks: a test checks crash images, in
	 * other shared state, from inside the drains of the state it runs in.
	 */
	if (lc->shared != NULL && lc->as != as && lc->busy)
		return;
	if (!atfork_registered)
	{
		atfork_registered = true;
		pthread_atfork(NULL, NULL, forget_cache_in_child);
	}
	for (uint32_t i = 0; i < NCACHES; i++)
	{
		uint32_t	expected = 0;

		if (atomic_load_explicit(&as->caches[i].in_use, memory_order_relaxed) == 0 &&
			atomic_compare_exchange_strong(&as->caches[i].in_use, &expected, 1))
		{
			uint32_t	hw = atomic_load(&as->caches_high_water);

			while (hw <= i && !atomic_compare_exchange_weak(&as->caches_high_water, &hw, i + 1))
				;
			memset(&local_cache, 0, sizeof(local_cache));
			local_cache.slot = slot;
			local_cache.as = as;
			local_cache.gen = alloc_gen;
			local_cache.shared = &as->caches[i];
			return;
		}
	}
}

/*
 * nvm_alloc_cache_flush gives every block of the calling thread's cache
 * back to the class state (the cache stays bound).
 */
void
nvm_alloc_cache_flush(void)
{
	LocalCache *lc = my_cache();

	if (lc == NULL)
		return;
	lc->busy = true;
	for (int c = 0; c < CACHED_CLASSES; c++)
	{
		if (lc->count[c] > 0)
			return_blocks(c, lc->count[c], lc->blocks[c]);
		lc->count[c] = 0;
	}
	lc->busy = false;
}

/*
 * nvm_alloc_cache_unbind returns the calling thread's cache, if it was
 * bound for this clock slot: its blocks go back to the class state and its
 * shared part (with its counts, which stay summed) to the unused caches.
 */
void
nvm_alloc_cache_unbind(int slot)
{
	LocalCache *lc = my_cache();

	if (lc == NULL || lc->slot != slot)
		return;
	nvm_alloc_cache_flush();
	atomic_store_explicit(&lc->shared->in_use, 0, memory_order_release);
	memset(lc, 0, sizeof(*lc));
}

/*
 * One thread writes a cache's counts: an increment is a load and a store,
 * no read-modify-write.
 */
static inline void
count_add(_Atomic uint64_t *counter, uint64_t delta)
{
	atomic_store_explicit(counter,
						  atomic_load_explicit(counter, memory_order_relaxed) + delta,
						  memory_order_relaxed);
}

static inline void
cache_change_begin(CacheShared *cs)
{
	count_add(&cs->changes_begun, 1);
	/* the count is visible to whoever sees any store that follows */
	atomic_thread_fence(memory_order_release);
}

static inline void
cache_change_end(CacheShared *cs)
{
	atomic_store_explicit(&cs->changes_ended,
						  atomic_load_explicit(&cs->changes_ended, memory_order_relaxed) + 1,
						  memory_order_release);
}

/* write_header marks the block at payload offset off allocated (flushed, not drained) */
static inline void
write_header(nvm_off off, uint64_t total)
{
	uint64_t   *hdrp = (uint64_t *) (nvm_pool_base + off - NVM_BLOCK_HEADER_SIZE);

	*hdrp = NVM_BLOCK_ALLOCATED | NVM_BLOCK_MAGIC | total;
	nvm_flush(hdrp, NVM_BLOCK_HEADER_SIZE);
}

/*
 * cache_alloc hands out a block of class cls from the cache, refilling it
 * with half a cache from the class state when it is empty; 0 if the pool
 * is full.
 */
static nvm_off
cache_alloc(LocalCache *lc, int cls)
{
	uint32_t	bsize = class_sizes[cls];
	nvm_off		off;

	cache_change_begin(lc->shared);
	if (lc->count[cls] == 0)
	{
		lc->busy = true;
		lc->count[cls] = (uint16_t) take_blocks(cls, cache_cap(cls) / 2, lc->blocks[cls]);
		if (lc->count[cls] == 0)
		{
			/*
			 * The pool is full and cannot grow: give back what this cache
			 * holds of other classes (it may empty a chunk) and try again.
			 * Other threads' caches are out of reach.
			 */
			nvm_alloc_cache_flush();
			lc->busy = true;
			lc->count[cls] = (uint16_t) take_blocks(cls, 1, lc->blocks[cls]);
		}
		lc->busy = false;
	}
	if (lc->count[cls] == 0)
	{
		cache_change_end(lc->shared);
		return 0;
	}
	off = lc->blocks[cls][--lc->count[cls]];
	write_header(off, bsize);
	count_add(&lc->shared->bytes_allocated, bsize);
	count_add(&lc->shared->blocks_allocated, 1);
	cache_change_end(lc->shared);
	return off;
}

/*
 * cache_free takes back a block of class cls into the cache: its header is
 * cleared and flushed first (so that the cached block is free in the pool);
 * a full cache gives its older half back to the class state first.
 */
static void
cache_free(LocalCache *lc, int cls, uint64_t *hdrp, nvm_off off)
{
	uint32_t	bsize = class_sizes[cls];
	int			cap = cache_cap(cls);

	cache_change_begin(lc->shared);
	*hdrp = 0;
	nvm_flush(hdrp, NVM_BLOCK_HEADER_SIZE);
	count_add(&lc->shared->bytes_allocated, -(uint64_t) bsize);
	count_add(&lc->shared->blocks_allocated, -(uint64_t) 1);
	if (lc->count[cls] >= cap)
	{
		int			half = cap / 2;

		lc->busy = true;
		return_blocks(cls, half, lc->blocks[cls]);
		lc->busy = false;
		memmove(lc->blocks[cls], lc->blocks[cls] + half,
				(size_t) (lc->count[cls] - half) * sizeof(nvm_off));
		lc->count[cls] -= half;
	}
	lc->blocks[cls][lc->count[cls]++] = off;
	cache_change_end(lc->shared);
}

/* ---------------------------------------------------------------------
 * Allocating and freeing
 * ---------------------------------------------------------------------
 */

/*
 * nvm_alloc returns the payload offset of a new block of at least size
 * bytes, or 0 if the pool is full.
 */
nvm_off
nvm_alloc(size_t size)
{
	uint64_t	total = (uint64_t) size + NVM_BLOCK_HEADER_SIZE;
	int			cls;
	uint32_t	chunk_size = nvm_pool_header->chunk_size;
	uint64_t	n;
	int64_t		first;
	char	   *addr;
	nvm_off		off = 0;
	LocalCache *lc;

	if (total <= CACHED_MAX_SIZE && (lc = my_cache()) != NULL)
		return cache_alloc(lc, class_by_units[(total + 15) / 16]);

	cls = class_for_size(total);

	nvm_alloc_change_begin();
	if (cls >= 0)
	{
		if (take_blocks(cls, 1, &off) == 1)
		{
			write_header(off, class_sizes[cls]);
			atomic_fetch_add(&alloc_shared->bytes_allocated, class_sizes[cls]);
			atomic_fetch_add(&alloc_shared->blocks_allocated, 1);
		}
		else
			off = 0;
	}
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
 * nvm_free gives the block at payload offset off back to the allocator:
 * into the calling thread's cache if it has one, the block is of a cached
 * class and its chunk has been read since start-up; else to the class
 * state.
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
	LocalCache *lc;
	uint64_t	b;

	/*
	 * The chunk's kind and class cannot change while one of its blocks is
	 * allocated; scanned, once set, stays set until the next start-up.
	 */
	if (cs->kind == 1 && cs->cls < CACHED_CLASSES &&
		__atomic_load_n(&cs->scanned, __ATOMIC_RELAXED) &&
		(lc = my_cache()) != NULL)
	{
		cache_free(lc, cs->cls, hdrp, off);
		return;
	}

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
	release_block_locked(cl, chunk, b);
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
	for (uint32_t i = 0; i < atomic_load(&as->caches_high_water); i++)
	{
		stats->bytes_allocated += atomic_load_explicit(&as->caches[i].bytes_allocated, memory_order_relaxed);
		stats->blocks_allocated += atomic_load_explicit(&as->caches[i].blocks_allocated, memory_order_relaxed);
	}
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
 * stores anything, and as ended after its last store.  A thread with a
 * cache counts in its cache's line, others in the shared counts.  Every
 * count only grows (a cache's counts are never reset, a cache passed to
 * another thread counts on from them), and every change counts its end
 * after its beginning, so at any instant the sum of the ended counts is at
 * most the sum of the begun ones, and equal when no change is under way
 * (whichever counts a change's two ends went to).
 */
void
nvm_alloc_change_begin(void)
{
	LocalCache *lc;

	if (alloc_shared == NULL)
		return;
	if ((lc = my_cache()) != NULL)
	{
		cache_change_begin(lc->shared);
		return;
	}
	atomic_fetch_add(&alloc_shared->changes_begun, 1);
	/* the count is visible to whoever sees any store that follows */
	atomic_thread_fence(memory_order_release);
}

void
nvm_alloc_change_end(void)
{
	LocalCache *lc;

	if (alloc_shared == NULL)
		return;
	if ((lc = my_cache()) != NULL)
	{
		cache_change_end(lc->shared);
		return;
	}
	atomic_fetch_add_explicit(&alloc_shared->changes_ended, 1, memory_order_release);
}

/* sum_begun returns the sum of every pair's begun count */
static uint64_t
sum_begun(void)
{
	AllocShared *as = alloc_shared;
	uint32_t	hw = atomic_load(&as->caches_high_water);
	uint64_t	sum = atomic_load(&as->changes_begun);

	for (uint32_t i = 0; i < hw; i++)
		sum += atomic_load_explicit(&as->caches[i].changes_begun, memory_order_acquire);
	return sum;
}

/*
 * nvm_alloc_quiet_mark reads every ended count, then every begun count.
 * Let T be an instant between the last ended read and the first begun
 * read.  As every count only grows, the ended sum read is at most the
 * ended sum at T, which is at most the begun sum at T, which is at most the
 * begun sum read; so the two sums read are equal only if no change was
 * under way at T and no change began between T and the begun reads.  The
 * mark (the begun sum read) is then the begun sum at T, and a later sum
 * equals it only if no change began since T.  A cache first bound after
 * the high-water mark was read is in neither sum; it began at zero, so
 * anything it counted, before T or after, raises the sum that
 * nvm_alloc_changed_since takes (it reads the high-water mark again) above
 * the mark: such a change makes the check inexact, never unseen.
 */
bool
nvm_alloc_quiet_mark(uint64_t *mark)
{
	AllocShared *as = alloc_shared;
	uint64_t	ended,
				begun;
	uint32_t	hw;

	if (as == NULL)
	{
		*mark = 0;
		return true;
	}
	hw = atomic_load(&as->caches_high_water);
	ended = atomic_load_explicit(&as->changes_ended, memory_order_acquire);
	for (uint32_t i = 0; i < hw; i++)
		ended += atomic_load_explicit(&as->caches[i].changes_ended, memory_order_acquire);
	begun = atomic_load(&as->changes_begun);
	for (uint32_t i = 0; i < hw; i++)
		begun += atomic_load_explicit(&as->caches[i].changes_begun, memory_order_acquire);
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
	return sum_begun() != mark;
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
