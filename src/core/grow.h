/*
 * grow.h
 *	  Growing the pool online: a new segment of chunks at the end of the
 *	  file, while every backend goes on working.
 *
 * The pool's file is mapped with the length of the largest size it may
 * reach (pool.h), so growing never remaps: the growing process extends the
 * file, writes the new segment's header and chunk table, commits it in the
 * pool and publishes its chunks to the allocator; from then on any process
 * may be handed a block there, and its mapping already covers it.  Growth
 * is asked for by the allocator when it finds no free chunk, by one process
 * at a time (a lock in shared memory); a process that finds the pool grown
 * by another while it waited for the lock just tries the allocation again.
 *
 * Growth calls neither the allocator nor the shared-memory setup: what it
 * needs of them (the chunk count, the segment count, backing the
 * allocator's shared state, the new chunk table, the publication) comes in
 * at start-up as an NvmGrowOps, which core.c fills in.  So the arrows run
 * one way: the allocator calls growth (nvm_pool_grow), core.c starts it.
 *
 * Persist order of a growth (segment S of n chunks, from chunk c on):
 *	 1. the allocator's shared state for chunks c .. c+n-1 is backed (no
 *		persistence involved);
 *	 2. the file is extended over S with posix_fallocate (space allocated
 *		for real: ENOSPC here, never SIGBUS later) and fsync'ed, so its
 *		new size is durable before anything in S is;
 *	 3. S's chunk table (first entry NVM_CHUNK_META, the others free;
 *		written by the allocator, format_segment) and its header (magic, sequence number, offset, first chunk, length,
 *		checksum) are written and flushed → drain;
 *	 4. NvmPoolRoot.pool_end is set to S's end and persisted: the commit;
 *	 5. S's chunks are published to the allocator (shared memory).
 * A crash before 4 leaves the pool as it was (the file may be longer: the
 * next growth writes S again over the same bytes); after 4 the pool has S,
 * with every chunk free.  No offset in S exists anywhere before 5.
 */
#ifndef NVM_GROW_H
#define NVM_GROW_H

#include "nvm_types.h"

/* Why the pool could not grow; the PG layer words its errors after it. */
typedef enum NvmGrowFailure
{
	NVM_GROW_NONE = 0,			/* no growth has failed in this process */
	NVM_GROW_AT_MAX,			/* the pool has reached its maximum size */
	NVM_GROW_NO_SPACE,			/* the file system did not extend the file */
	NVM_GROW_NO_MEMORY			/* no memory for the allocator's shared state */
} NvmGrowFailure;

/* What a growth did, for the server log. */
typedef struct NvmGrowEvent
{
	uint64_t	old_size;		/* bytes of the pool before */
	uint64_t	new_size;		/* and after */
	uint64_t	segments;		/* growth segments now */
} NvmGrowEvent;

typedef void (*NvmGrowHook) (const NvmGrowEvent *event);

/*
 * What growth needs from the allocator and the shared-memory setup, handed
 * in at start-up (core.c fills it in from alloc.h and its own area).
 */
typedef struct NvmGrowOps
{
	/* chunks on the grid, published growth segments included */
	uint64_t	(*chunk_count) (void);
	/* growth segments published */
	uint64_t	(*segment_count) (void);

	/*
	 * back the allocator's shared state of the first nchunks chunks; false
	 * (errno set) if the memory cannot be had
	 */
	bool		(*back_chunks) (uint64_t nchunks);

	/*
	 * write the chunk table of a segment of nchunks chunks from chunk first
	 * and flush it (no drain)
	 */
	void		(*format_segment) (uint64_t first, uint64_t nchunks);
	/* hand a durable segment's chunks to the allocator */
	void		(*publish_segment) (uint64_t first, uint64_t nchunks);
} NvmGrowOps;

extern size_t nvm_grow_shmem_size(void);

/*
 * nvm_grow_startup sets up growth's shared state in shmem; nvm_grow_attach
 * points this process at it.  Both keep ops (which must outlive them) for
 * this process's growths.
 */
extern void nvm_grow_startup(void *shmem, const NvmGrowOps *ops);
extern void nvm_grow_attach(void *shmem, const NvmGrowOps *ops);

/*
 * nvm_pool_grow adds a segment with at least min_chunks free chunks in a
 * row, unless the pool already has more than seen_chunks chunks (another
 * process grew it).  True if the allocation that needed it may be tried
 * again; false if the pool cannot grow (nvm_pool_grow_failure says why).
 */
extern bool nvm_pool_grow(uint64_t min_chunks, uint64_t seen_chunks);

/* Why the last failed growth of this process failed; *err gets its errno. */
extern NvmGrowFailure nvm_pool_grow_failure(int *err);

/* A function to call after each growth, in the process that grew the pool. */
extern void nvm_pool_set_grow_hook(NvmGrowHook hook);

/* The function set with nvm_pool_set_grow_hook (a caller that runs threads swaps it). */
extern NvmGrowHook nvm_pool_grow_hook(void);

#endif							/* NVM_GROW_H */
