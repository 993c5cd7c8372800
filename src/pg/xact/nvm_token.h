/*-------------------------------------------------------------------------
 *
 * nvm_token.h
 *	  xmin of nvm rows: a row-version token handed out to every
 *	  (sub)transaction that writes nvm rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_TOKEN_H
#define NVM_TOKEN_H

#include "store.h"

extern Size nvm_token_shmem_size(void);
extern void nvm_token_shmem_startup(void);
extern TransactionId nvm_token_for_write(NvmTableDesc *desc);
extern void nvm_token_at_xact_end(void);

#endif							/* NVM_TOKEN_H */
