/*-------------------------------------------------------------------------
 *
 * nvm_indoubt.h
 *	  In-doubt and prepared transactions on the PostgreSQL side: their
 *	  resolution from PostgreSQL's commit log, and the hand-over of a
 *	  prepared transaction to the core (nvm_indoubt.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_PG_INDOUBT_H
#define NVM_PG_INDOUBT_H

#include "txn.h"

extern void nvm_xact_resolve_indoubt(void);
extern TransactionId nvm_xact_settle_indoubt(uint64 txid);
extern void nvm_xact_resolve_prepared(void);
extern void nvm_xact_hand_over_prepared(NvmTxn *txn, int slot);

#endif							/* NVM_PG_INDOUBT_H */
