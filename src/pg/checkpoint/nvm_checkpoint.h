/*-------------------------------------------------------------------------
 *
 * nvm_checkpoint.h
 *	  The checkpoint of the pool in files, where commits of nvm rows are
 *	  durable through the WAL: a file per table, rewritten at a checkpoint
 *	  only when the table changed (nvm_checkpoint.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_CHECKPOINT_H
#define NVM_CHECKPOINT_H

#include "access/xlogdefs.h"

/* What a checkpoint of the pool wrote. */
typedef struct NvmCheckpointCounts
{
	uint64		written;		/* tables whose file was written */
	uint64		kept;			/* tables whose file was current */
	uint64		removed;		/* files of tables gone */
	uint64		rows;			/* rows written */
	uint64		bytes;			/* bytes written */
} NvmCheckpointCounts;

/*
 * nvm_checkpoint_write writes the file of every permanent table that
 * changed since its file was written, or whose file is older than
 * fresh_since, and removes the files of tables gone.
 */
extern void nvm_checkpoint_write(XLogRecPtr fresh_since, NvmCheckpointCounts *counts);

#endif							/* NVM_CHECKPOINT_H */
