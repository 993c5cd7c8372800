/*
 * core.h
 *	  Start-up of the storage core: shared-memory sizing, rebuilding the
 *	  volatile state from the pool, and recovery.
 *
 * Life cycle, as driven by the PostgreSQL layer (or a test program):
 *	 1. nvm_pool_open() in the postmaster, before forking (pool.h);
 *	 2. nvm_core_shmem_size() to size one shared-memory area, for the pool
 *		grown to its largest size, or nvm_core_shmem_create() to map one
 *		that is backed by memory only as far as the pool has grown;
 *	 3. nvm_core_startup() once per (re)initialisation of shared memory: it
 *		rebuilds the allocator's free space and runs MCSI recovery;
 *	 4. every process then uses the core; a backend claims a clock slot
 *		with nvm_slot_acquire() before its first transaction.
 */
#ifndef NVM_CORE_H
#define NVM_CORE_H

#include "nvm_types.h"

typedef struct NvmCoreShared NvmCoreShared;

/*
 * How many processes may pin snapshots for garbage collection (gc.h); pins
 * are numbered from 0.  Set before nvm_core_shmem_size (default 256).
 */
extern void nvm_core_set_max_pins(uint32_t max_pins);

extern size_t nvm_core_shmem_size(void);

/*
 * Map an area of nvm_core_shmem_size() bytes, backed as the pool grows,
 * before forking; NULL and a message on failure.
 */
extern void *nvm_core_shmem_create(char *errbuf, size_t errbuf_size);

/*
 * Back the area nvm_core_shmem_create made up to end; false (errno set) if
 * the memory cannot be had.  Areas from elsewhere count as backed.
 */
extern bool nvm_core_shmem_extend(const void *end);

/*
 * Build the volatile state in shmem (size nvm_core_shmem_size()) and
 * recover; false (errno set) if the shared memory could not be backed.
 */
extern bool nvm_core_startup(void *shmem);

/* Point this process at an already-initialised shmem area (EXEC_BACKEND only). */
extern void nvm_core_attach(void *shmem);

/* Mark the pool cleanly shut down (persisted). */
extern void nvm_core_shutdown(void);

#endif							/* NVM_CORE_H */
