/*
 * core.c
 *	  Start-up of the storage core: one shared-memory area holding the
 *	  allocator's, MCSI's and the store's volatile state, built from the
 *	  pool at every (re)initialisation, followed by recovery.
 *
 * The allocator's state comes last in the area and grows with the pool (a
 * few KiB per chunk): the area is sized for the largest pool and, when
 * nvm_core_shmem_create made it, backed by memory only as far as the pool
 * has grown (nvm_core_shmem_extend).  Growth reaches the allocator and
 * this backing only through the NvmGrowOps handed to it here (grow.h).
 */
#define _GNU_SOURCE				/* memfd_create */
#include "core.h"

#include "alloc.h"
#include "gc.h"
#include "grow.h"
#include "indoubt.h"
#include "persist.h"
#include "pool.h"
#include "recover.h"
#include "store.h"
#include "tables.h"
#include "txn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SHMEM_ALIGN 128

typedef struct CoreLayout
{
	size_t		store_off;
	size_t		cc_off;
	size_t		gc_off;
	size_t		grow_off;
	size_t		alloc_off;		/* last: grows with the pool */
	size_t		total;
} CoreLayout;

/* the area nvm_core_shmem_create made (a memfd, mapped for the largest pool) */
static int	region_fd = -1;
static char *region_base = NULL;
static size_t region_size = 0;

/* Processes that may pin snapshots (see gc.h); set before sizing. */
static uint32_t core_max_pins = 256;

static bool back_alloc_chunks(uint64_t nchunks);

/* What growth reaches of the allocator and of this area (grow.h). */
static const NvmGrowOps grow_ops = {
	.chunk_count = nvm_alloc_chunk_count,
	.segment_count = nvm_alloc_segment_count,
	.back_chunks = back_alloc_chunks,
	.format_segment = nvm_alloc_format_segment,
	.publish_segment = nvm_alloc_publish_segment,
};

void
nvm_core_set_max_pins(uint32_t max_pins)
{
	core_max_pins = max_pins;
}

static void
core_layout(CoreLayout *l)
{
	size_t		off = 0;

	l->store_off = off;
	off = NVM_ALIGN_UP(off + nvm_tables_shmem_size(), SHMEM_ALIGN);
	l->cc_off = off;
	off = NVM_ALIGN_UP(off + nvm_cc_shmem_size(nvm_pool_header->max_slots), SHMEM_ALIGN);
	l->gc_off = off;
	off = NVM_ALIGN_UP(off + nvm_gc_shmem_size(core_max_pins, nvm_pool_header->max_slots), SHMEM_ALIGN);
	l->grow_off = off;
	off = NVM_ALIGN_UP(off + nvm_grow_shmem_size(), SHMEM_ALIGN);
	l->alloc_off = off;
	off = NVM_ALIGN_UP(off + nvm_alloc_shmem_size(nvm_pool_max_chunks()), SHMEM_ALIGN);
	l->total = off + SHMEM_ALIGN;	/* room to align the base */
}

static char *
aligned_base(void *shmem)
{
	return (char *) NVM_ALIGN_UP((uintptr_t) shmem, SHMEM_ALIGN);
}

/*
 * nvm_core_shmem_size returns the bytes of shared memory the core needs for
 * the mapped pool, grown to its largest size.
 */
size_t
nvm_core_shmem_size(void)
{
	CoreLayout	l;

	core_layout(&l);
	return l.total;
}

/*
 * nvm_core_startup builds the volatile state and recovers: the allocator's
 * free space from the chunk table and block headers, then MCSI recovery
 * (transactions that were running become aborted, clocks resume), and
 * the conversion to the other concurrency-control mode if the pool was
 * opened for it.  The
 * pool is marked as not cleanly shut down until nvm_core_shutdown.
 */
bool
nvm_core_startup(void *shmem)
{
	CoreLayout	l;
	char	   *base = aligned_base(shmem);
	NvmPoolRoot *root = nvm_pool_root();

	core_layout(&l);
	if (!nvm_core_shmem_extend(base + l.alloc_off +
							   nvm_alloc_shmem_size(nvm_alloc_chunks_in_pool())))
		return false;
	memset(base, 0, l.alloc_off);
	nvm_tables_startup(base + l.store_off);
	nvm_grow_startup(base + l.grow_off, &grow_ops);
	nvm_alloc_rebuild(base + l.alloc_off);
	nvm_cc_recover(base + l.cc_off, nvm_pool_header->max_slots);
	nvm_gc_startup(base + l.gc_off, core_max_pins, nvm_pool_header->max_slots,
				   root->start_count + 1);
	/*
	 * An unresolved in-doubt transaction (a prepared one) keeps its status
	 * in the old mode's store: the conversion waits for a start without
	 * one (nvm_pool_pending_mode stays set for the caller to report).
	 */
	if (nvm_pool_pending_mode != 0 && !nvm_indoubt_pending())
	{
		nvm_cc_convert(nvm_pool_pending_mode);
		nvm_pool_pending_mode = 0;
	}

	root->clean_shutdown = 0;
	root->start_count++;
	nvm_persist(root, sizeof(*root));
	return true;
}

void
nvm_core_attach(void *shmem)
{
	CoreLayout	l;
	char	   *base = aligned_base(shmem);

	core_layout(&l);
	nvm_tables_attach(base + l.store_off);
	nvm_grow_attach(base + l.grow_off, &grow_ops);
	nvm_alloc_attach(base + l.alloc_off);
	nvm_cc_attach(base + l.cc_off);
	nvm_gc_attach(base + l.gc_off);
}

/*
 * nvm_core_shmem_create maps an area of nvm_core_shmem_size() bytes backed
 * by an anonymous memory file, of which no page is backed yet; the core
 * backs it as far as it uses it (nvm_core_shmem_extend).  Processes forked
 * afterwards share it at the same address.
 */
void *
nvm_core_shmem_create(char *errbuf, size_t errbuf_size)
{
	size_t		size = nvm_core_shmem_size();
	int			fd = memfd_create("nvmam core", 0);
	void	   *p;

	if (fd < 0)
	{
		snprintf(errbuf, errbuf_size, "could not create shared memory for the nvm core: %s", strerror(errno));
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (p == MAP_FAILED)
	{
		snprintf(errbuf, errbuf_size, "could not map %zu bytes of shared memory for the nvm core: %s",
				 size, strerror(errno));
		close(fd);
		return NULL;
	}
	region_fd = fd;
	region_base = p;
	region_size = size;
	return p;
}

/*
 * nvm_core_shmem_extend backs the area nvm_core_shmem_create made up to
 * end (the memory is allocated now, so that running out of it is an error
 * here, not SIGBUS at the first touch); true without doing anything for an
 * area that did not come from there (a test's calloc).
 */
bool
nvm_core_shmem_extend(const void *end)
{
	const char *e = end;
	int			rc;

	if (region_fd < 0 || e <= region_base || e > region_base + region_size)
		return true;
	rc = posix_fallocate(region_fd, 0, (off_t) NVM_ALIGN_UP((uint64_t) (e - region_base), 4096));
	if (rc != 0)
	{
		errno = rc;
		return false;
	}
	return true;
}

/*
 * back_alloc_chunks backs the allocator's shared state of the first nchunks
 * chunks, for a growth about to publish them; false (errno set) if the
 * memory cannot be had.
 */
static bool
back_alloc_chunks(uint64_t nchunks)
{
	return nvm_core_shmem_extend(nvm_alloc_shmem_end(nchunks));
}

void
nvm_core_shutdown(void)
{
	NvmPoolRoot *root = nvm_pool_root();

	root->clean_shutdown = 1;
	nvm_persist(&root->clean_shutdown, sizeof(uint64_t));
	/* the last write of a clean stop: on page-cache storage, its page too */
	(void) nvm_pool_sync_range(&root->clean_shutdown, sizeof(uint64_t));
}
