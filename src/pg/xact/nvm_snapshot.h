/*-------------------------------------------------------------------------
 *
 * nvm_snapshot.h
 *	  The vector a statement or a transaction reads nvm rows with: taken at
 *	  statement boundaries or once per transaction, copied by scans,
 *	  adopted from an exporter, forgotten at the transaction's end
 *	  (nvm_snapshot.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_SNAPSHOT_H
#define NVM_SNAPSHOT_H

#include "txn.h"

/* Snapshot counters of this backend (nvm_backend_stats()). */
typedef struct NvmSnapshotStats
{
	uint64		snapshots;		/* nvm snapshots taken */
	uint64		snapshot_ns;	/* time spent taking them */
} NvmSnapshotStats;

extern NvmSnapshotStats nvm_xact_snapshot_stats;

extern void nvm_xact_statement_boundary(void);
extern void nvm_xact_statement_sees_latest(void);
struct QueryDesc;
extern void nvm_xact_query_start(struct QueryDesc *queryDesc);

extern const NvmSnapshot *nvm_xact_statement_snapshot(void);
extern const NvmSnapshot *nvm_xact_transaction_snapshot(void);
extern NvmSnapshot *nvm_xact_copy_snapshot(const NvmSnapshot *snap);
extern NvmSnapshot *nvm_xact_fresh_snapshot(void);
extern void nvm_xact_adopt_snapshot(int from_pgprocno, bool (*still_runs) (void *),
									void *arg, const char *refused);
extern void nvm_xact_forget_snapshot(void);

#endif							/* NVM_SNAPSHOT_H */
