/*-------------------------------------------------------------------------
 *
 * nvm_binding.h
 *	  When the nvm rows of the pool a data directory claimed may be served:
 *	  the binding's states in shared memory (nvm_binding.c).  Which pool a
 *	  data directory may use is decided at start by nvm_claim.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_BINDING_H
#define NVM_BINDING_H

#include "access/xlogdefs.h"

/* Shared memory and the claim at the start of the server (nvmam.c). */
extern Size nvm_binding_shmem_size(void);
extern void nvm_binding_shmem_request(void);
extern void nvm_binding_shmem_startup(void);

/*
 * nvm_binding_usable says whether nvm rows may be used now (running the
 * WAL check after a crash the first time); never raises the detachment.
 */
extern bool nvm_binding_usable(void);

/*
 * nvm_binding_settle makes sure the pool may be used before anything reads
 * or changes nvm rows: after a crash it compares the WAL the pool depends
 * on with the end of WAL replay, once.  It raises an error naming rel (or
 * none, if rel is NULL) when the data directory is detached from its pool.
 */
struct RelationData;
extern void nvm_binding_settle(struct RelationData *rel);

/* Whether the data directory is detached (for nvm_pool_stats). */
extern bool nvm_binding_is_detached(void);
extern bool nvm_binding_is_replica(void);
extern bool nvm_binding_is_restore(void);

/* A restore that rebuilds a pool a crash of the operating system tore or lost. */
extern bool nvm_binding_is_rebuild(void);
extern bool nvm_binding_capturable_at_recovery_end(void);
extern void nvm_binding_restore_image_replayed(void);
extern void nvm_binding_require_resync(void);
extern void nvm_binding_set_resync_hook(void (*hook) (void));
extern void nvm_binding_help_resync(void);
extern void nvm_binding_set_rebuild_loader(bool (*loader) (void));
extern const char *nvm_binding_state_detail(void);

/*
 * nvm_binding_note_flushed records, before a change to the pool that
 * depends on WAL (a table dropped at commit, numbers freed after their
 * index entries were removed), that WAL up to the flushed position is
 * needed to use the pool.
 */
extern void nvm_binding_note_flushed(void);

#endif							/* NVM_BINDING_H */
