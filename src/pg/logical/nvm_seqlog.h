/*-------------------------------------------------------------------------
 *
 * nvm_seqlog.h
 *	  Sequence advances kept in the pool for log-free commits.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_SEQLOG_H
#define NVM_SEQLOG_H

#include "access/xlogdefs.h"
#include "nodes/pg_list.h"

#include "indexlog.h"

/* Ring entries per sequence position kept in the pool (nvm_seqlog.c). */
#define NVM_SEQLOG_ITEM_ENTRIES 2

extern Size nvm_seqlog_shmem_size(void);
extern void nvm_seqlog_shmem_startup(void);
extern XLogRecPtr nvm_seqlog_collect(List *seqs, XLogRecPtr durable,
									 NvmIndexLogEntry *out, int *n, bool *flushed);
extern void nvm_seqlog_redo_cleanup(void);
extern void nvm_seqlog_finish(void);

#endif							/* NVM_SEQLOG_H */
