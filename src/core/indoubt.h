/*
 * indoubt.h
 *	  Transactions in doubt: a transaction whose outcome is an external
 *	  log's (PostgreSQL's commit record of its xid), because it also
 *	  commits through that log (a tied commit) or was prepared for
 *	  two-phase commit, or because recovery found its marker.  The persist
 *	  orders ("In doubt", "Prepared") are in txn.h; indoubt.c implements
 *	  them.
 */
#ifndef NVM_INDOUBT_H
#define NVM_INDOUBT_H

#include "txn.h"

/*
 * nvm_txn_mark_indoubt ties the running transaction's outcome to an
 * external xid, before the external log's commit (or prepare) record is
 * written; nvm_txn_hand_over_indoubt hands a prepared transaction, whose
 * marker is persisted, over to the in-doubt machinery, as if recovery had
 * found it.
 */
extern void nvm_txn_mark_indoubt(NvmTxn *txn, uint64_t external_xid);
extern void nvm_txn_hand_over_indoubt(NvmTxn *txn);

/*
 * Resolving recovered in-doubt transactions: the resolver returns 1 if the
 * external xid committed, 0 if it did not, -1 if it cannot tell yet (the
 * external log is still being replayed).  nvm_indoubt_resolve_all finalises
 * every transaction it can and returns how many remain.
 */
typedef int (*NvmIndoubtResolver) (uint64_t external_xid);
extern uint32_t nvm_indoubt_resolve_all(NvmIndoubtResolver resolver);
extern uint32_t nvm_indoubt_abort_external(const uint64_t *xids, size_t n);
extern uint64_t nvm_indoubt_xid_of(uint64_t txid);

/*
 * nvm_indoubt_each visits every transaction in doubt (slot, txid,
 * external xid) under the lock its resolution takes (see indoubt.c).
 */
typedef void (*NvmIndoubtVisitor) (uint32_t slot, uint64_t txid, uint64_t external_xid,
								   void *arg);
extern uint32_t nvm_indoubt_each(NvmIndoubtVisitor fn, void *arg);

/* nvm_indoubt_pending says whether any transaction is in doubt now. */
static inline bool
nvm_indoubt_pending(void)
{
	return atomic_load_explicit(&nvm_cc->indoubt_count, memory_order_acquire) != 0;
}

/*
 * nvm_indoubt_names_table says whether the write log of a recovered,
 * unresolved in-doubt transaction names a version of the table whose
 * descriptor is at table (its resolution will write into those versions).
 */
extern bool nvm_indoubt_names_table(nvm_off table);

#endif							/* NVM_INDOUBT_H */
