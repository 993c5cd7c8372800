/*-------------------------------------------------------------------------
 *
 * nvm_durability.h
 *	  What the pool's storage guarantees, said and enforced at start
 *	  (nvm_durability.c): the storage class in the server log, the boot of
 *	  the operating system a pool was last claimed in, and the refusal of a
 *	  pool that a crash of the operating system may have torn.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_DURABILITY_H
#define NVM_DURABILITY_H

#include "pool.h"

/* Defines nvm.debug_boot_id (nvmam.c's define_settings calls it). */
extern void nvm_durability_define_settings(void);

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
 * nvm_durability_check_pool stops the server with FATAL when the pool just
 * opened was in use (not marked clean) in an earlier boot of the operating
 * system and is not on persistent memory: a crash of the operating system
 * or a power loss may have torn it.
 */
extern void nvm_durability_check_pool(const NvmPoolBinding *pb);

/*
 * nvm_durability_note_claim records the storage class and the boot of a
 * claim in pg_nvm/storage, durably (false, reported at elevel, on failure).
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
