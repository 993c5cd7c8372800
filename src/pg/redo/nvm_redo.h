/*-------------------------------------------------------------------------
 *
 * nvm_redo.h
 *	  The primary's calls that write the nvm redo records of physical
 *	  standbys (nvm_redo.c; the formats are nvm_redofmt.h's), and the end
 *	  of the WAL inserted so far as a position to flush to.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_REDO_H
#define NVM_REDO_H

#include "access/xlogdefs.h"

#include "store.h"

extern void nvm_redo_init(int (*session_sync_fn) (void));

/*
 * nvm_inserted_wal_end: the end of the WAL inserted so far, as XLogFlush
 * accepts it (not past a page header that is not written yet).
 */
extern XLogRecPtr nvm_inserted_wal_end(void);
extern bool nvm_redo_needed(void);
extern void nvm_redo_shmem_request(void);
extern void nvm_redo_shmem_startup(void);
extern void nvm_redo_group_begin(void);
extern void nvm_redo_group_end(void);
extern void nvm_redo_storage_begin(void);
extern void nvm_redo_storage_end(void);
extern void nvm_redo_log_storage(uint8 op, const NvmTableKey *key, const NvmTableKey *src);
extern void nvm_redo_note_version(NvmTable *table, const NvmTableKey *key, uint64 version_no);
struct NvmTxn;
extern void nvm_redo_log_prepared(const struct NvmTxn *txn, uint32 xid);
extern void nvm_redo_log_tied(const struct NvmTxn *txn, uint32 xid);
extern void nvm_redo_log_indoubt(uint32_t slot, uint64_t txid, uint32 xid);
extern void nvm_redo_log_lock_words(const NvmTableKey *key, const uint64 *record_words, uint32 n);
extern void nvm_redo_log_conflict(const NvmTableKey *key, const uint64 *roots, uint64 n);
extern void nvm_redo_start(bool after_crash, XLogRecPtr durable_end);
extern void nvm_redo_note_tables_logged(const nvm_off *descs, int n, XLogRecPtr end);

/* A checkpoint's cut (../checkpoint/nvm_checkpoint.c); returns the epoch that ended. */
extern uint64 nvm_redo_capture_cut(uint64 *bounds, XLogRecPtr *lsn);

/* A commit whose rows the checkpoint files hold counts at the next cut (a rebuild's load). */
extern void nvm_redo_note_final(uint32 slot, uint64 txid);

/* Records logged between begin and end go to out instead of the WAL (in-doubt files). */
struct StringInfoData;
extern void nvm_redo_sink_begin(struct StringInfoData *out);
extern void nvm_redo_sink_end(void);

/* Whether nvm writes may start (durability through the WAL: the checkpoint worker runs). */
typedef enum NvmRedoWritable
{
	NVM_REDO_WRITES_WAIT = 0,	/* after a start, until the worker runs */
	NVM_REDO_WRITES_OPEN = 1,
	NVM_REDO_WRITES_CLOSED = 2	/* a clean stop's last capture */
} NvmRedoWritable;
extern void nvm_redo_set_writable(NvmRedoWritable state);
extern void nvm_redo_wait_writable(void);

#endif							/* NVM_REDO_H */
