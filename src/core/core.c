/*
 * core.c
 *	  Start-up of the storage core: one shared-memory area holding the
 *	  allocator's, MCSI's and the store's volatile state, built from the
 *	  pool at every (re)initialisation, followed by recovery.
 */
#include "core.h"

#include "alloc.h"
#include "gc.h"
#include "mcsi.h"
#include "persist.h"
#include "pool.h"
#include "store.h"

#define SHMEM_ALIGN 128

typedef struct CoreLayout
{
	size_t		store_off;
	size_t		mcsi_off;
	size_t		alloc_off;
	size_t		gc_off;
	size_t		total;
} CoreLayout;

/* Processes that may pin snapshots (see gc.h); set before sizing. */
static uint32_t core_max_pins = 256;

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
	off = NVM_ALIGN_UP(off + nvm_store_shmem_size(), SHMEM_ALIGN);
	l->mcsi_off = off;
	off = NVM_ALIGN_UP(off + nvm_mcsi_shmem_size(nvm_pool_header->max_slots), SHMEM_ALIGN);
	l->alloc_off = off;
	off = NVM_ALIGN_UP(off + nvm_alloc_shmem_size(nvm_pool_header->nchunks), SHMEM_ALIGN);
	l->gc_off = off;
	off = NVM_ALIGN_UP(off + nvm_gc_shmem_size(core_max_pins, nvm_pool_header->max_slots), SHMEM_ALIGN);
	l->total = off + SHMEM_ALIGN;	/* room to align the base */
}

static char *
aligned_base(void *shmem)
{
	return (char *) NVM_ALIGN_UP((uintptr_t) shmem, SHMEM_ALIGN);
}

/*
 * nvm_core_shmem_size returns the bytes of shared memory the core needs for
 * the mapped pool.
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
void
nvm_core_startup(void *shmem)
{
	CoreLayout	l;
	char	   *base = aligned_base(shmem);
	NvmPoolRoot *root = nvm_pool_root();

	core_layout(&l);
	nvm_store_startup(base + l.store_off);
	nvm_alloc_rebuild(base + l.alloc_off);
	nvm_mcsi_recover(base + l.mcsi_off, nvm_pool_header->max_slots);
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
}

void
nvm_core_attach(void *shmem)
{
	CoreLayout	l;
	char	   *base = aligned_base(shmem);

	core_layout(&l);
	nvm_store_attach(base + l.store_off);
	nvm_alloc_attach(base + l.alloc_off);
	nvm_mcsi_attach(base + l.mcsi_off);
	nvm_gc_attach(base + l.gc_off);
}

void
nvm_core_shutdown(void)
{
	NvmPoolRoot *root = nvm_pool_root();

	root->clean_shutdown = 1;
	nvm_persist(&root->clean_shutdown, sizeof(uint64_t));
}
