/*
 * alloc.h
 *	  The pool allocator, safe for concurrent backends.
 *
 * The chunk area of the pool is cut into chunks (NvmPoolHeader.chunk_size,
 * 1 MiB), numbered on one grid from the first (pool.h): the pool's first
 * nchunks chunks, then those of every growth segment.  A chunk is free,
 * serves one small size class (blocks of one size), is part of a large
 * allocation (a run of whole chunks), or is the first chunk of a growth
 * segment (its header and chunk table; never allocated).  The persistent
 * state is:
 *	 - the chunk tables: one uint64 per chunk saying which of these it is,
 *	   for the first chunks in the pool's chunk table, for a segment's in
 *	   the segment's own;
 *	 - an 8-byte header in front of every block: NVM_BLOCK_ALLOCATED | size.
 * The volatile state (which blocks and chunks are free, per-class current
 * chunks) lives in shared memory and is rebuilt from the chunk tables at
 * start-up; a chunk's block headers are read when it is first needed.  No
 * lock is ever kept in the pool.  When no chunk is free, the allocator
 * grows the pool by a segment (grow.h) and tries again; it returns 0 only
 * when the pool cannot grow.
 *
 * Persist order:
 *	 - nvm_alloc writes the block header and flushes it but does not drain:
 *	   the caller's next drain (which it needs anyway before publishing the
 *	   block) makes the allocation durable together with the contents.  A
 *	   crash before the block is published leaks it (recovered by garbage
 *	   collection, not by the allocator).
 *	 - Assigning a free chunk to a size class clears the words where its
 *	   blocks' headers will be (the whole chunk for classes under 128
 *	   bytes), drains, then persists the chunk-table entry (flush + drain)
 *	   before any block of it is handed out.  The rest of a block keeps
 *	   whatever it held: the payload nvm_alloc returns is not zeroed.
 *	 - nvm_free clears the header and flushes it without draining: if the
 *	   clear is lost in a crash the block merely stays allocated (a leak,
 *	   never a double use).  A small chunk whose last block is freed goes
 *	   back to the free chunks (its chunk-table entry is flushed; a lost
 *	   entry leaves an empty small chunk, which is harmless).
 *	 - A thread's cache (nvm_alloc_cache_bind) holds only blocks whose
 *	   header is clear, as a free block's: a block enters it after its
 *	   header was cleared and flushed, and leaves it when nvm_alloc writes
 *	   and flushes its header.  The cache itself is volatile, so a crash
 *	   or a restart finds its blocks free in the pool; they are taken only
 *	   in the shared state, which start-up rebuilds from the headers.
 */
#ifndef NVM_ALLOC_H
#define NVM_ALLOC_H

#include "nvm_types.h"

#define NVM_BLOCK_HEADER_SIZE	8
#define NVM_BLOCK_ALLOCATED		(UINT64_C(1) << 63)
#define NVM_BLOCK_MAGIC			(UINT64_C(0x4e56) << 47)	/* sanity bits */
#define NVM_BLOCK_SIZE_MASK		((UINT64_C(1) << 40) - 1)

/* Chunk-table entries. */
#define NVM_CHUNK_FREE			UINT64_C(0)
#define NVM_CHUNK_SMALL(cls)	((UINT64_C(1) << 60) | (uint64_t) (cls))
#define NVM_CHUNK_LARGE(n)		((UINT64_C(2) << 60) | (uint64_t) (n))	/* first of n chunks */
#define NVM_CHUNK_CONT			(UINT64_C(3) << 60)	/* continuation of a large run */
#define NVM_CHUNK_META			(UINT64_C(4) << 60)	/* a growth segment's first chunk */
#define NVM_CHUNK_KIND(e)		((e) >> 60)
#define NVM_CHUNK_ARG(e)		((e) & ((UINT64_C(1) << 60) - 1))

/* Space accounting, for statistics views. */
typedef struct NvmAllocStats
{
	uint64_t	pool_bytes;		/* bytes of the chunks blocks can be allocated in */
	uint64_t	chunks_total;	/* those chunks */
	uint64_t	chunks_free;
	uint64_t	bytes_allocated;	/* payload + header bytes of allocated blocks */
	uint64_t	blocks_allocated;
	uint64_t	pool_size;		/* bytes of the pool in use, growth segments included */
	uint64_t	segments;		/* growth segments */
} NvmAllocStats;

/*
 * Shared-memory size of the allocator's volatile state for nchunks chunks
 * on the grid.  The state of each chunk follows the fixed part, so the
 * area for the largest pool can be reserved and backed as the pool grows.
 */
extern size_t nvm_alloc_shmem_size(uint64_t nchunks);

/* Number of chunks on the grid of the pool as it is in the file (growth segments included). */
extern uint64_t nvm_alloc_chunks_in_pool(void);

/*
 * nvm_alloc_rebuild builds the volatile state in shmem from the pool's
 * chunk table (block headers are read later, chunk by chunk).  Called once
 * at start-up (and after a crash-restart), before any backend allocates.
 */
extern void nvm_alloc_rebuild(void *shmem);

/* Attach a process to already-built allocator shmem (after fork: no-op). */
extern void nvm_alloc_attach(void *shmem);

/*
 * nvm_alloc returns the offset of a block of at least size bytes (payload;
 * the 8-byte header precedes it), or 0 when the pool is full.  The payload
 * is not zeroed.
 */
extern nvm_off nvm_alloc(size_t size);

/* Like nvm_alloc, but the payload is zeroed and flushed (not drained). */
extern nvm_off nvm_alloc_zeroed(size_t size);

/* Give a block back. */
extern void nvm_free(nvm_off off);

/*
 * Per-thread caches of blocks of the small classes (alloc.c, "Caches"):
 * nvm_alloc_cache_bind gives the calling thread a cache for the clock slot
 * it has just claimed (nvm_slot_acquire calls it), so that its allocations
 * and frees of small blocks take no lock and write no shared cache line
 * but its own; nvm_alloc_cache_unbind, called with the same slot by the
 * same thread (nvm_slot_release calls it), gives the cached blocks back to
 * the shared state.  nvm_alloc_cache_flush gives the calling thread's
 * cached blocks back and keeps the cache.  None of them may run inside a
 * change (nvm_alloc_change_begin .. _end).  Cached blocks count as free in
 * the statistics' bytes and blocks; a chunk with cached blocks is not free.
 */
extern void nvm_alloc_cache_bind(int slot);
extern void nvm_alloc_cache_unbind(int slot);
extern void nvm_alloc_cache_flush(void);

/* Payload size of an allocated block. */
extern size_t nvm_alloc_usable_size(nvm_off off);

/*
 * Statistics (reads any chunk not read since start-up first): the sums of
 * the shared counts and every cache's, exact when no allocation or free
 * runs meanwhile.
 */
extern void nvm_alloc_get_stats(NvmAllocStats *stats);
extern void nvm_alloc_scan_all(void);

/*
 * Checking blocks (for the integrity checker, verify.h).  These read the
 * chunk table and block headers only (and, for chunks read since start-up,
 * the shared state), never change anything, and never read outside the
 * chunk area, whatever offset they are given.
 */
typedef enum NvmBlockState
{
	NVM_BLOCK_OK = 0,
	NVM_BLOCK_OUTSIDE,			/* not inside the chunk area */
	NVM_BLOCK_NOT_START,		/* inside, but not where a block's payload starts */
	NVM_BLOCK_FREE_CHUNK,		/* in a chunk the chunk table says is free */
	NVM_BLOCK_BAD_CHUNK,		/* in a chunk whose chunk-table entry is invalid */
	NVM_BLOCK_FREED,			/* its header says it is not allocated */
	NVM_BLOCK_BAD_HEADER,		/* allocated, but its size or sanity bits are wrong */
	NVM_BLOCK_SHARED_FREE		/* allocated in the pool, free in the shared state */
} NvmBlockState;

typedef struct NvmBlockInfo
{
	nvm_off		payload;		/* offset of the payload (what nvm_alloc returned) */
	uint64_t	size;			/* usable payload bytes */
	uint64_t	id;				/* a number of its own, < nvm_alloc_block_id_limit() */
} NvmBlockInfo;

/*
 * nvm_alloc_check_block says whether payload is the payload offset of an
 * allocated block, and fills *info (also for NVM_BLOCK_FREED,
 * NVM_BLOCK_BAD_HEADER and NVM_BLOCK_SHARED_FREE, whose place is a block's).
 */
extern NvmBlockState nvm_alloc_check_block(nvm_off payload, NvmBlockInfo *info);
extern const char *nvm_alloc_block_state_name(NvmBlockState state);
extern uint64_t nvm_alloc_block_id_limit(void);

/*
 * nvm_alloc_check_chunk_table checks every entry of the chunk table: a
 * known kind and size class, large runs inside the pool and made of their
 * head and continuation entries, no continuation outside a run.  It calls
 * report for each bad entry (where: the entry's offset) and returns how
 * many there were.
 */
typedef void (*NvmChunkReportFn) (uint64_t chunk, nvm_off where, const char *what, void *arg);
extern uint64_t nvm_alloc_check_chunk_table(NvmChunkReportFn report, void *arg);

/*
 * nvm_alloc_next_block returns, one call at a time, every block whose
 * header says it is allocated, in offset order (*cursor starts at 0);
 * false at the end.
 */
extern bool nvm_alloc_next_block(uint64_t *cursor, NvmBlockInfo *info);

/*
 * Changes of the pool's blocks, for a reader that reads the pool without
 * locks (the pool-wide check) and must know whether anything changed
 * meanwhile.  nvm_alloc and nvm_free count themselves as a change; code
 * that changes what reaches blocks before it frees them (a prune cuts a
 * chain, then frees its versions) calls nvm_alloc_change_begin before its
 * first store and nvm_alloc_change_end after its last one.  The reader
 * takes a mark with nvm_alloc_quiet_mark, which is false when a change is
 * under way (try again later), reads the pool, and asks
 * nvm_alloc_changed_since(mark): false means that no change began or was
 * under way while it read, so that everything it read is as one instant
 * left it (apart from status words, which change on their own).
 */
extern void nvm_alloc_change_begin(void);
extern void nvm_alloc_change_end(void);
extern bool nvm_alloc_quiet_mark(uint64_t *mark);
extern bool nvm_alloc_changed_since(uint64_t mark);

/*
 * The chunk tables, for readers that walk them (statistics, checks):
 * chunks are numbered 0 .. nvm_alloc_chunk_count() - 1 on the grid, growth
 * segments included.
 */
extern uint64_t nvm_alloc_chunk_count(void);
extern uint64_t nvm_alloc_chunk_entry(uint64_t chunk);
extern nvm_off nvm_alloc_chunk_offset(uint64_t chunk);

/*
 * nvm_alloc_contains says whether [off, off + len) lies in chunks blocks
 * can be allocated in (not in a segment's first chunk, not beyond the
 * published end): what a stale offset read from the pool must pass before
 * it is dereferenced.
 */
extern bool nvm_alloc_contains(nvm_off off, size_t len);

/*
 * For the growth path (grow.c, which core.c hands these through
 * NvmGrowOps): the number of growth segments, the address just after the
 * shared state of the first nchunks chunks (what must be backed before they
 * are published), the chunk table of a new segment of nchunks chunks
 * starting at chunk first (its first chunk is its header's, the others
 * free; written and flushed, not drained), and the publication of that
 * segment once it is durable: from then on its chunks are handed out.
 */
extern uint64_t nvm_alloc_segment_count(void);
extern void *nvm_alloc_shmem_end(uint64_t nchunks);
extern void nvm_alloc_format_segment(uint64_t first, uint64_t nchunks);
extern void nvm_alloc_publish_segment(uint64_t first, uint64_t nchunks);

#endif							/* NVM_ALLOC_H */
