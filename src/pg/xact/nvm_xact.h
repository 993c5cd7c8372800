/*-------------------------------------------------------------------------
 *
 * nvm_xact.h
 *	  Transaction glue between PostgreSQL and the core's concurrency
 *	  control (MCSI or N2DB): clock slots and the write life cycle (the
 *	  snapshots are nvm_snapshot.h's, in-doubt transactions nvm_indoubt.h's).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_XACT_H
#define NVM_XACT_H

#include "access/xact.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "persist.h"
#include "store.h"
#include "txn.h"

/* Counters of this backend (nvm_backend_stats()). */
typedef struct NvmBackendStats
{
	uint64		snapshots;		/* nvm snapshots taken */
	uint64		snapshot_ns;	/* time spent taking them */
	uint64		commits;		/* nvm write transactions committed */
	uint64		aborts;			/* ... and aborted */
	uint64		complete_ns;	/* time spent completing them */
	uint64		flushes;		/* persist calls of the core */
	uint64		lines;			/* cache lines flushed */
	uint64		bytes;			/* bytes asked to be flushed */
	uint64		drains;			/* fences */
	uint64		log_free_commits;	/* commits on the pool alone (nvm_commit.c) */
	uint64		tied_commits;	/* commits tied to PostgreSQL's commit record */
	uint64		index_log_entries;	/* index roots logged in the pool */
	uint64		commit_wal_flushes; /* WAL flushes log-free commits needed */
	uint64		sequence_positions; /* sequence positions kept in the pool */
} NvmBackendStats;

/*
 * What a write needs so that others can wait for it (nvm_xact_begin_write):
 * nvm's own writers and lockers wait on the virtual transaction id, which
 * every writer publishes; SnapshotDirty's callers (btree's uniqueness
 * check, ON CONFLICT, exclusion constraints) on an xid or its stand-in;
 * logical decoding files a change under the xid itself.
 */
typedef enum NvmWriteWaiters
{
	NVM_WAITERS_NVM,			/* a change of non-indexed columns */
	NVM_WAITERS_DIRTY,			/* index entries, or a delete from an indexed table */
	NVM_WAITERS_XID				/* a change logical decoding reads */
} NvmWriteWaiters;

extern void nvm_xact_get_stats(NvmBackendStats *out);
extern void nvm_xact_check_access(Relation rel);

extern uint64 nvm_xact_my_txid(void);

extern NvmTxn *nvm_xact_begin_write(NvmWriteWaiters waiters);
extern NvmTxn *nvm_xact_running_txn(void);
extern int	nvm_xact_level(void);
extern TransactionId nvm_xact_published_xid(uint64 txid);
extern TransactionId nvm_xact_wait_target(uint64 txid, uint32 *standin);

/* Transaction end (nvm_xact_end.c) */
extern void nvm_xact_at_xact_end(XactEvent event);
extern void nvm_xact_at_subxact_end(SubXactEvent event);

#endif							/* NVM_XACT_H */
