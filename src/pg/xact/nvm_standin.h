/*-------------------------------------------------------------------------
 *
 * nvm_standin.h
 *	  The xid stand-in: what btree's uniqueness check, ON CONFLICT and
 *	  exclusion constraints wait on when the nvm writer they meet has no
 *	  PostgreSQL xid.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_STANDIN_H
#define NVM_STANDIN_H

#include "access/transam.h"
#include "utils/snapshot.h"

/*
 * The xid a stand-in is reported under (SnapshotDirty's xmin, with the
 * stand-in as its speculativeToken): BootstrapTransactionId, which no
 * running transaction has, so no speculative-insertion lock PostgreSQL
 * takes itself has the same tag.
 */
#define NVM_STANDIN_XID		BootstrapTransactionId

extern uint32 nvm_standin_for_txid(uint64 txid);
extern bool nvm_standin_take(uint32 standin);
extern void nvm_standin_report(Snapshot dirty, bool creator, TransactionId xid,
							   uint32 standin);

#endif							/* NVM_STANDIN_H */
