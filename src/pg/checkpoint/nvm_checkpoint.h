/*-------------------------------------------------------------------------
 *
 * nvm_checkpoint.h
 *	  The checkpoint of the pool in files, where commits of nvm rows are
 *	  durable through the WAL: at every checkpoint, the records that changed
 *	  since the last one, written as delta files; merges of a table's files
 *	  in the background (nvm_checkpoint.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_CHECKPOINT_H
#define NVM_CHECKPOINT_H

#include "access/xlogdefs.h"
#include "port/atomics.h"

/* How a capture runs. */
typedef enum NvmCaptureMode
{
	/*
	 * Writers run: the cut is taken under the redo group lock
	 * (redo/nvm_redo.c, nvm_redo_capture_cut), the WAL flushed to it.
	 */
	NVM_CAPTURE_ONLINE,

	/*
	 * No writer can run (the end of recovery in the startup process, a
	 * clean stop once every writer is gone): everything committed counts.
	 */
	NVM_CAPTURE_QUIET
} NvmCaptureMode;

/* What a capture wrote. */
typedef struct NvmCheckpointCounts
{
	uint64		bases;			/* tables read whole (new, emptied, no files) */
	uint64		deltas;			/* tables whose changed records were written */
	uint64		kept;			/* tables unchanged since their files */
	uint64		dropped;		/* tables gone since the last capture */
	uint64		rows;			/* rows and tombstones written */
	uint64		bytes;			/* bytes written (files and manifest) */
	uint64		removed;		/* files removed */
	uint32		indoubt;		/* records of the in-doubt file */
	XLogRecPtr	lsn;			/* the cut */
	double		secs;
} NvmCheckpointCounts;

/*
 * nvm_checkpoint_capture writes the checkpoint files of every permanent
 * table that changed since the last capture, the in-doubt file and a new
 * manifest (see nvm_checkpoint.c's header); redo is the redo point of the
 * checkpoint it is for (informational, kept in the manifest); after_cut,
 * if given, runs right after the cut (the worker lets the checkpoint go on
 * with its buffers then).
 */
extern void nvm_checkpoint_capture(NvmCaptureMode mode, XLogRecPtr lsn_quiet, XLogRecPtr redo,
								   void (*after_cut) (void), NvmCheckpointCounts *counts);

/*
 * nvm_checkpoint_manifest_lsn returns the position of the current
 * manifest's cut (InvalidXLogRecPtr: no manifest, or one of another
 * version of the format).
 */
extern XLogRecPtr nvm_checkpoint_manifest_lsn(void);

/* What merges did. */
typedef struct NvmMergeCounts
{
	uint64		tables;
	uint64		files;			/* files merged away */
	uint64		rows;			/* rows written */
	uint64		bytes;
} NvmMergeCounts;

/*
 * nvm_checkpoint_merge merges the files of every table whose deltas have
 * grown: into a new base once they hold more bytes than half its base,
 * else its deltas into one delta once there are more than NVM_MERGE_DELTAS
 * of them; and writes a new manifest; called between
 * checkpoints by the worker that captures them, which stops after a table
 * once stop says so.  A large merge spreads its writes over half of what
 * checkpoint_completion_target gives a checkpoint, as a capture does, and
 * goes on at full speed once stop says so or a process waits for a
 * checkpoint.
 */
extern void nvm_checkpoint_merge(NvmMergeCounts *counts, bool (*stop) (void));

/*
 * What the captures and merges of this server did since it started, for
 * nvm_checkpoint_stats() (shared memory).
 */
typedef struct NvmCheckpointTotals
{
	pg_atomic_uint64 captures;
	pg_atomic_uint64 bytes;
	pg_atomic_uint64 rows;
	pg_atomic_uint64 tables_written;	/* bases and deltas */
	pg_atomic_uint64 bases;
	pg_atomic_uint64 merges;		/* tables merged */
	pg_atomic_uint64 merged_bytes;
	pg_atomic_uint64 usecs;		/* spent capturing */
	pg_atomic_uint64 last_lsn;
	pg_atomic_uint64 last_bytes;
	pg_atomic_uint64 last_usecs;
} NvmCheckpointTotals;

extern Size nvm_checkpoint_shmem_size(void);
extern void nvm_checkpoint_shmem_startup(void);
extern NvmCheckpointTotals *nvm_checkpoint_totals(void);

/* nvm_checkpoint_at_recovery_end captures the pool at the end of WAL replay (rm_cleanup). */
extern void nvm_checkpoint_at_recovery_end(void);

struct NvmTable;
extern void nvm_checkpoint_set_prepared_locks_logger(void (*logger) (const struct NvmTable *t));

/* nvm_checkpoint_log_capture reports a capture in the server log. */
extern void nvm_checkpoint_log_capture(const char *why, const NvmCheckpointCounts *c);

#endif							/* NVM_CHECKPOINT_H */
