/*
 * grow.c
 *	  Growing the pool by a segment when the allocator runs out of chunks.
 *
 * See grow.h for the design and the persist order, pool.h for the segment
 * format.  The shared state is one lock, held while a segment is added
 * (which takes as long as the file system takes to allocate it), so that
 * two processes that run out of chunks at once add one segment, not two.
 * The allocator and the shared-memory area are reached only through the
 * NvmGrowOps given at start-up.
 */
#include "grow.h"

#include "persist.h"
#include "pool.h"

#include <errno.h>
#include <string.h>
#include <time.h>

typedef struct GrowShared
{
	NvmSpinLock lock;
} GrowShared;

static GrowShared *grow_shared = NULL;
static const NvmGrowOps *grow_ops = NULL;
static NvmGrowHook grow_hook = NULL;

/* why this process's (thread's) last growth failed */
static _Thread_local NvmGrowFailure last_failure = NVM_GROW_NONE;
static _Thread_local int last_errno = 0;

size_t
nvm_grow_shmem_size(void)
{
	return sizeof(GrowShared);
}

void
nvm_grow_startup(void *shmem, const NvmGrowOps *ops)
{
	grow_shared = shmem;
	grow_ops = ops;
	nvm_spin_init(&grow_shared->lock);
}

void
nvm_grow_attach(void *shmem, const NvmGrowOps *ops)
{
	grow_shared = shmem;
	grow_ops = ops;
}

void
nvm_pool_set_grow_hook(NvmGrowHook hook)
{
	grow_hook = hook;
}

NvmGrowHook
nvm_pool_grow_hook(void)
{
	return grow_hook;
}

NvmGrowFailure
nvm_pool_grow_failure(int *err)
{
	if (err)
		*err = last_errno;
	return last_failure;
}

/*
 * lock_growth waits for the growth lock, sleeping between tries: its holder
 * may be waiting for the file system for milliseconds.
 */
static void
lock_growth(void)
{
	while (!nvm_spin_trylock(&grow_shared->lock))
	{
		struct timespec ts = {0, 100 * 1000};

		nanosleep(&ts, NULL);
	}
}

static bool
failed(NvmGrowFailure why, int err)
{
	last_failure = why;
	last_errno = err;
	nvm_spin_unlock(&grow_shared->lock);
	return false;
}

/*
 * segment_chunks returns how many chunks the next segment gets: the growth
 * step, or more when one allocation needs more (plus the segment's own
 * first chunk), at most what a segment's chunk table can describe and what
 * the reserved address space holds; 0 if that is less than needed.
 */
static uint64_t
segment_chunks(uint64_t first, uint64_t min_chunks)
{
	uint64_t	chunk_size = nvm_pool_header->chunk_size;
	uint64_t	need = min_chunks + 1;
	uint64_t	n = nvm_pool_grow_step / chunk_size;
	uint64_t	table_max = (chunk_size - NVM_SEGMENT_TABLE_OFF) / sizeof(uint64_t);
	uint64_t	space = nvm_pool_max_chunks();

	if (n < need)
		n = need;
	if (n > table_max)
		n = table_max;
	space = space > first ? space - first : 0;
	if (n > space)
		n = space;
	return n >= need ? n : 0;
}

/*
 * nvm_pool_grow: see grow.h for what it does and its persist order, which
 * the numbered steps below follow.
 */
bool
nvm_pool_grow(uint64_t min_chunks, uint64_t seen_chunks)
{
	NvmPoolRoot *root = nvm_pool_root();
	uint64_t	first;
	uint64_t	n;
	uint64_t	start;
	uint64_t	end;
	NvmGrowEvent event;
	NvmSegmentHeader seg;
	char	   *base;
	int			err;

	lock_growth();
	first = grow_ops->chunk_count();
	if (first != seen_chunks)
	{
		/* grown by another process since the caller looked */
		nvm_spin_unlock(&grow_shared->lock);
		return true;
	}
	n = segment_chunks(first, min_chunks);
	if (n == 0)
		return failed(NVM_GROW_AT_MAX, 0);
	start = nvm_pool_chunk_offset(first);
	end = nvm_pool_chunk_offset(first + n);
	event.old_size = nvm_pool_end();

	/* 1. shared state for the new chunks */
	if (!grow_ops->back_chunks(first + n))
		return failed(NVM_GROW_NO_MEMORY, errno);

	/* 2. the file, allocated for real, its size durable */
	err = nvm_pool_extend_file(start, end);
	if (err != 0)
		return failed(NVM_GROW_NO_SPACE, err);

	/*
	 * 3. chunk table and header (over whatever a growth that a crash
	 * interrupted left here)
	 */
	base = nvm_pool_base + start;
	grow_ops->format_segment(first, n);
	memset(&seg, 0, sizeof(seg));
	seg.magic = NVM_SEGMENT_MAGIC;
	seg.seq = grow_ops->segment_count() + 1;
	seg.offset = start;
	seg.first_chunk = first;
	seg.nchunks = n;
	seg.checksum = nvm_pool_segment_checksum(&seg);
	memcpy(base, &seg, sizeof(seg));
	nvm_flush(base, sizeof(seg));
	nvm_drain();

	/* 4. the commit */
	root->pool_end = end;
	nvm_persist(&root->pool_end, sizeof(uint64_t));

	/* 5. publication */
	grow_ops->publish_segment(first, n);
	event.new_size = end;
	event.segments = seg.seq;
	nvm_spin_unlock(&grow_shared->lock);

	if (grow_hook)
		grow_hook(&event);
	return true;
}
