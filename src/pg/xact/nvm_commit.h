/*-------------------------------------------------------------------------
 *
 * nvm_commit.h
 *	  How a transaction that wrote nvm rows commits: on the pool alone
 *	  (log-free), or tied to PostgreSQL's commit record.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_COMMIT_H
#define NVM_COMMIT_H

#include "access/xact.h"
#include "executor/execdesc.h"
#include "nodes/plannodes.h"
#include "utils/rel.h"

#include "store.h"
#include "txn.h"

/* The two ways an nvm transaction commits (nvm_commit_decide). */
typedef enum NvmCommitPath
{
	NVM_COMMIT_LOG_FREE,		/* the nvm status is the commit point */
	NVM_COMMIT_TIED				/* PostgreSQL's commit record is (in-doubt marker) */
} NvmCommitPath;

/* Counters of this backend (nvm_backend_stats()). */
typedef struct NvmCommitStats
{
	uint64		log_free;		/* commits on the pool alone */
	uint64		tied;			/* commits tied to PostgreSQL's commit record */
	uint64		index_log_entries;	/* index roots logged in the pool */
	uint64		sequence_positions; /* sequence positions kept in the pool */
	uint64		wal_flushes;	/* WAL flushes a log-free commit needed */
} NvmCommitStats;

extern NvmCommitStats nvm_commit_stats;

extern void nvm_commit_init(void);

/* What the statements of the transaction do (hooks of nvmam.c). */
extern void nvm_commit_note_query(QueryDesc *queryDesc);
extern void nvm_commit_note_utility(PlannedStmt *pstmt);

/* What the nvm writes of the transaction do (nvm_modify.c). */
extern void nvm_commit_note_write(Relation rel);
extern void nvm_commit_note_index_root(Relation rel, const NvmTable *table,
									   uint64 version_no);

/* The commit itself, one call per transaction event (nvm_xact.c). */
extern NvmCommitPath nvm_commit_at_xact_end(XactEvent event, NvmTxn *txn);
extern int	nvm_commit_session_sync(void);

#endif							/* NVM_COMMIT_H */
