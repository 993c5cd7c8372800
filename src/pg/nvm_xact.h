/*-------------------------------------------------------------------------
 *
 * nvm_xact.h
 *	  Transaction glue between PostgreSQL and the MCSI core: clock slots,
 *	  per-statement snapshots, views, and the write life cycle.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_XACT_H
#define NVM_XACT_H

#include "utils/rel.h"
#include "utils/snapshot.h"

#include "mcsi.h"
#include "store.h"

extern void nvm_xact_init(void);
extern void nvm_xact_statement_boundary(void);
extern void nvm_xact_check_access(Relation rel);

extern uint64 nvm_xact_my_txid(void);
extern const NvmSnapshot *nvm_xact_statement_snapshot(void);
extern NvmSnapshot *nvm_xact_copy_snapshot(const NvmSnapshot *snap);
extern NvmSnapshot *nvm_xact_fresh_snapshot(void);
extern void nvm_view_init(NvmView *view, Snapshot snapshot, const NvmSnapshot *snap);

extern NvmTxn *nvm_xact_begin_write(bool needs_pg_xid);
extern int	nvm_xact_level(void);
extern TransactionId nvm_xact_published_xid(uint64 txid);

#endif							/* NVM_XACT_H */
