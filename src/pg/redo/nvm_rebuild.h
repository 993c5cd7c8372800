/*-------------------------------------------------------------------------
 *
 * nvm_rebuild.h
 *	  The load of a rebuilt pool from the checkpoint files, in parallel
 *	  (nvm_rebuild.c), and the progress of a rebuild for the log and the
 *	  nvm_rebuild view.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_REBUILD_H
#define NVM_REBUILD_H

#include "access/xlogdefs.h"
#include "port/atomics.h"

#include "txn.h"

#include "redo/nvm_ckptfile.h"

/* Workers that load checkpoint files at once (threads of the startup process). */
#define NVM_REBUILD_WORKERS		2

/* What a rebuild did, and where it is (shared memory: the nvm_rebuild view). */
typedef struct NvmRebuildProgress
{
	pg_atomic_uint32 state;		/* NvmRebuildState */
	pg_atomic_uint32 workers;
	pg_atomic_uint64 tables;	/* tables in the manifest */
	pg_atomic_uint64 parts;		/* parts to load (a table, or a range of a large one) */
	pg_atomic_uint64 parts_done;
	pg_atomic_uint64 rows;		/* rows loaded */
	pg_atomic_uint64 bytes;		/* bytes of files read */
	pg_atomic_uint64 files_lsn;	/* the position the files are as of */
	pg_atomic_uint64 replay_end; /* where replay is to end (the WAL found), 0 = unknown */
	pg_atomic_uint64 started;	/* TimestampTz */
	pg_atomic_uint64 loaded;	/* TimestampTz: files loaded */
	pg_atomic_uint64 finished;	/* TimestampTz: replay ended */
} NvmRebuildProgress;

typedef enum NvmRebuildState
{
	NVM_REBUILD_NONE = 0,		/* no rebuild since the server started */
	NVM_REBUILD_LOADING,
	NVM_REBUILD_REPLAYING,
	NVM_REBUILD_DONE
} NvmRebuildState;

extern Size nvm_rebuild_shmem_size(void);
extern void nvm_rebuild_shmem_startup(void);
extern NvmRebuildProgress *nvm_rebuild_progress(void);

/*
 * nvm_rebuild_load loads the tables of m into the pool, with every row
 * created by txn's transaction (the caller commits it once this returns),
 * in NVM_REBUILD_WORKERS threads; FATAL if a file is damaged or the pool
 * has no room.  The counters, reserved numbers and the in-doubt file are
 * the caller's.
 */
extern void nvm_rebuild_load(const NvmCkptManifest *m, NvmTxn *txn, int slot);

/* nvm_rebuild_note_wal_end notes where the WAL to replay ends (pg_wal's last segment). */
extern void nvm_rebuild_note_wal_end(void);

/* nvm_rebuild_replay_done notes the end of a rebuild's replay. */
extern void nvm_rebuild_replay_done(void);

#endif							/* NVM_REBUILD_H */
