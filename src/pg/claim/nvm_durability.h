/*-------------------------------------------------------------------------
 *
 * nvm_durability.h
 *	  What the pool's storage guarantees, said and enforced at start
 *	  (nvm_durability.c): the storage class in the server log, how commits
 *	  are made durable (nvm.durability), the boot of the operating system a
 *	  pool was last claimed in, the rebuild or refusal of a pool that a
 *	  crash of the operating system may have torn, and the copy on disk of
 *	  a volatile pool.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_DURABILITY_H
#define NVM_DURABILITY_H

#include "pool.h"

/* Defines nvm.debug_boot_id and nvm.durability (nvmam.c's define_settings calls it). */
extern void nvm_durability_define_settings(void);

/*
 * nvm_durability_through_wal says whether commits of nvm rows are made
 * durable through the WAL: a flush of their redo at commit, an image of the
 * pool after every checkpoint and every start, a rebuild from the WAL after
 * a crash of the operating system.
 */
extern bool nvm_durability_through_wal(void);

/*
 * nvm_durability_rebuild_needed says, before the pool is opened, whether
 * this start rebuilds it from the WAL: the last claim made commits durable
 * through the WAL, the server did not stop cleanly, and the pool is gone
 * (pool_missing) or was claimed in another boot of the operating system.
 */
extern bool nvm_durability_rebuild_needed(bool pool_missing);

/*
 * nvm_durability_save_volatile_pool copies a volatile pool protected
 * through the WAL to pg_nvm/pool.saved at a clean stop, after its mark.
 */
extern void nvm_durability_save_volatile_pool(void);

/*
 * nvm_durability_bring_back_volatile_pool copies a volatile pool that is
 * gone after a clean stop back from pg_nvm/pool.saved; true if it did.
 */
extern bool nvm_durability_bring_back_volatile_pool(void);

/*
 * nvm_durability_forget_saved_pool removes pg_nvm/pool.saved before a claim
 * changes the pool (the copy is stale from then on).
 */
extern void nvm_durability_forget_saved_pool(void);

/*
 * nvm_boot_current returns the identity of this boot of the operating
 * system, hashed (never 0), or 0 when it cannot be read.
 */
extern uint64 nvm_boot_current(void);

/*
 * nvm_durability_report_storage says in the server log which storage class
 * holds the pool just opened, and what is at risk on it (a WARNING on a
 * page-cache file and on volatile storage).
 */
extern void nvm_durability_report_storage(void);

/*
 * nvm_durability_choose_flushes tells the core, for this process and those
 * it starts, whether to write back cache lines at its persist points: not
 * where commits are durable through the WAL off persistent memory.
 */
extern void nvm_durability_choose_flushes(void);

/*
 * nvm_durability_check_pool stops the server with FATAL when the pool just
 * opened was in use (not marked clean) in an earlier boot of the operating
 * system and is not on persistent memory: a crash of the operating system
 * or a power loss may have torn it, and it was not rebuilt from the WAL.
 */
extern void nvm_durability_check_pool(const NvmPoolBinding *pb);

/*
 * nvm_durability_note_claim records the storage class, the boot and the
 * durability of a claim in pg_nvm/storage, durably (false, reported at elevel, on failure).
 */
extern bool nvm_durability_note_claim(int elevel);

/*
 * nvm_durability_missing_detail returns a sentence to add to the refusal
 * of a missing pool, from the storage class and boot of its last claim
 * (pg_nvm/storage): a volatile pool is emptied by a restart of the
 * operating system.  Empty when there is nothing to add.
 */
extern char *nvm_durability_missing_detail(void);

#endif							/* NVM_DURABILITY_H */
