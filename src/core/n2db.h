/*
 * n2db.h
 *	  The N2DB baseline (n2db.c), one of the two designs behind the
 *	  transaction interface (txn.h), called by txn.c (and by the unit
 *	  tests): one global counter, a global active-transaction
 *	  list behind one lock, a shared commit log.  Its sibling mcsi.h is
 *	  multi-clock snapshot isolation.  The persist orders are in n2db.c.
 */
#ifndef NVM_N2DB_H
#define NVM_N2DB_H

#include "ccstate.h"

extern void nvm_n2db_recover(NvmN2dbShared *ns);
extern void nvm_n2db_recover_indoubt(NvmN2dbShared *ns, uint64_t value);
extern uint64_t nvm_n2db_handed_out_limit(const NvmN2dbShared *ns);
extern uint64_t nvm_n2db_assign(NvmN2dbShared *ns);
extern void nvm_n2db_set_status(uint64_t value, NvmTxnStatus status, bool durable);
extern NvmTxnStatus nvm_n2db_get_status(uint64_t value);
extern void nvm_n2db_complete(NvmN2dbShared *ns, uint64_t value);
extern void nvm_n2db_snapshot(NvmN2dbShared *ns, NvmSnapshot *snap);
extern bool nvm_n2db_snapshot_contains(const NvmSnapshot *snap, uint64_t value);
extern bool nvm_n2db_status_entry(uint64_t txid, NvmTxnStatus *status);
extern uint64_t nvm_n2db_ring_size(void);

/* The collection horizon's xmin (gc.h; called through txn.c). */
extern bool nvm_n2db_horizon_start(NvmN2dbShared *ns, NvmHorizon *h);
extern void nvm_n2db_horizon_lower(NvmHorizon *h, uint64_t xmin);
extern bool nvm_n2db_horizon_contains(const NvmHorizon *h, uint64_t value);

#endif							/* NVM_N2DB_H */
