/*-------------------------------------------------------------------------
 *
 * nvm_settings.h
 *	  The module-wide nvm.* settings (nvm_settings.c): those module start
 *	  reads, those handed to the core, and those more than one file reads,
 *	  with the pool path resolved from them.
 *
 * A setting that one module alone reads is defined by that module, in its
 * own nvm_X_define_settings (nvm.write_conflict in nvm_wait.c,
 * nvm.pool_grow_step and nvm.pool_max_size in nvm_growth.c,
 * nvm.debug_boot_id and nvm.durability in nvm_durability.c, which others
 * read through nvm_durability_through_wal); nvmam.c's _PG_init defines them
 * all.  Including this header ties a file to nothing but the settings.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_SETTINGS_H
#define NVM_SETTINGS_H

/* nvm.pool_path ("" for pg_nvm/pool in the data directory) */
extern char *nvm_pool_path;

/* nvm.pool_size, in MB: the size of a newly created pool */
extern int	nvm_pool_size_mb;

/* nvm.huge_pages: an NvmHugePages (pool.h) for the pool's mapping */
extern int	nvm_huge_pages;

/* nvm.concurrency_control: an NvmCcMode (ccmode.h) */
extern int	nvm_concurrency_control;

/* nvm.snapshot_buffering: an NvmSnapshotPolicy (ccstate.h) */
extern int	nvm_snapshot_buffering;

/* nvm.debug_crash_point: where a test makes the commit protocol or replay crash. */
typedef enum NvmCrashPoint
{
	NVM_CRASH_NONE = 0,
	NVM_CRASH_AFTER_INDOUBT,
	NVM_CRASH_BEFORE_NVM_COMMIT,
	NVM_CRASH_AFTER_NVM_COMMIT,
	NVM_CRASH_REPLAY_BEFORE_NOTE,
	NVM_CRASH_CAPTURE_AFTER_CUT,	/* a checkpoint's capture: after its cut */
	NVM_CRASH_CAPTURE_AFTER_FILES,	/* ... after its files, before the manifest */
	NVM_CRASH_CAPTURE_AFTER_MANIFEST,	/* ... after the manifest, before old files go */
	NVM_CRASH_STOP_BEFORE_CAPTURE,	/* a clean stop: writes closed, before the last capture */
	NVM_CRASH_STOP_AFTER_CAPTURE,	/* ... after it, before the shutdown checkpoint */
	NVM_CRASH_RECOVERY_END_AFTER_CAPTURE,	/* the end of recovery's capture, before its checkpoint */
	NVM_CRASH_REBUILD_MID_LOAD,	/* a rebuild: half its checkpoint files loaded */
	NVM_CRASH_MERGE_AFTER_FILES,	/* a merge of checkpoint files: after its files, before the manifest */
	NVM_CRASH_MERGE_AFTER_MANIFEST	/* ... after the manifest, before the merged files go */
} NvmCrashPoint;

/* nvm_crash_here stops the server (PANIC) if the test set crash point cp. */
extern void nvm_crash_here(NvmCrashPoint cp, const char *where);

extern int	nvm_debug_crash_point;

/*
 * nvm.wal_redo: with wal_level replica or logical, every change of the
 * pool that a copy needs is written to the WAL as an nvm redo record, and
 * a standby made from a cold copy replays it (nvm_redo.c, nvm_replay.c).
 */
extern bool nvm_wal_redo;

/*
 * The pool file in use (nvm.pool_path, or its default), set once by
 * nvmam.c's _PG_init when it opens the pool.
 */
extern char *nvm_pool_path_resolved;

/*
 * nvm_define_settings defines the module-wide settings; nvmam.c's _PG_init
 * calls it before the modules define their own.
 */
extern void nvm_define_settings(void);

/* The name of the nvm.concurrency_control setting in force. */
extern const char *nvm_concurrency_control_name(void);

#endif							/* NVM_SETTINGS_H */
