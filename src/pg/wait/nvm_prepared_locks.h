/*-------------------------------------------------------------------------
 *
 * nvm_prepared_locks.h
 *	  The row locks of a prepared transaction, which PostgreSQL keeps across
 *	  restarts: the rows a transaction locked, remembered; their lock words
 *	  marked PREPARED and made durable before the prepare record; the LOCKS
 *	  records that give them to standbys and to the image of a base backup
 *	  (nvm_prepared_locks.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_PREPARED_LOCKS_H
#define NVM_PREPARED_LOCKS_H

#include "store.h"

/* A word installed (nvm_rowlock_take); the lists forgotten at transaction end */
extern void nvm_prepared_locks_remember(const NvmTable *table, uint64 record_no);
extern void nvm_prepared_locks_forget(void);

/* PREPARE TRANSACTION (nvm_xact_end.c), and the image of a base backup */
extern void nvm_prepared_locks_before_prepare(void);
extern void nvm_prepared_locks_log_table(const NvmTable *t);

#endif							/* NVM_PREPARED_LOCKS_H */
