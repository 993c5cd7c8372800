/*
 * n2db.h
 *	  The N2DB baseline (n2db.c), one of the modes behind the transaction
 *	  interface (txn.h), reached through its NvmCcOps (ccmode.h) from txn.c
 *	  (and the unit tests): one global counter, a global active-transaction
 *	  list behind one lock, a shared commit log.  Its sibling mcsi.h is
 *	  multi-clock snapshot isolation.  The persist orders are in n2db.c.
 */
#ifndef NVM_N2DB_H
#define NVM_N2DB_H

#include "ccmode.h"

/*
 * N2DB's shared state (nvm_cc_mode_state): PostgreSQL-style.  One lock
 * serialises assigning a txid (which adds it to the active list), taking a
 * snapshot (reading the counter and scanning the list) and completing
 * (removing it): a snapshot being taken blocks transactions from starting
 * and ending.
 */
typedef struct NvmN2dbShared
{
	NvmSpinLock lock;
	uint64_t	next;			/* next txid value to hand out */
	uint64_t	reserved;		/* persisted reservation (root->n2db_reserved) */
	uint32_t	nactive;
	uint64_t	active[NVM_MAX_SLOTS];	/* txid values of running transactions */
} NvmN2dbShared;

extern const NvmCcOps nvm_n2db_ops;

extern bool nvm_n2db_snapshot_contains(const NvmSnapshot *snap, uint64_t value);

#endif							/* NVM_N2DB_H */
