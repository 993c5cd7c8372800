/*-------------------------------------------------------------------------
 *
 * nvm_redo.h
 *	  The nvm redo records a physical standby replays: their formats, the
 *	  primary's calls that write them (nvm_redo.c) and the standby's
 *	  replay (nvm_replay.c).
 *
 * The record types are nvm_wal.h's (XLOG_NVM_COMMIT, XLOG_NVM_STORAGE,
 * XLOG_NVM_RESERVE).  Every record names tables by their pool key
 * (NvmTableKey: tablespace, database, relfilenode, kind); only permanent
 * tables are logged.  Nothing in a record is aligned: the replay copies
 * each header out before it reads it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_REDO_H
#define NVM_REDO_H

#include "access/xlogreader.h"

#include "tabledir.h"
#include "store.h"

/*
 * XLOG_NVM_COMMIT: the versions a committed transaction wrote (not those
 * its rolled-back subtransactions wrote), with their numbers, index roots
 * and row images, and the counters of each table at the commit.  A large
 * transaction takes several records ("parts"), each but the last flagged
 * XLNVM_COMMIT_MORE; the standby applies them in one transaction of its
 * own and commits it at the last part.
 *
 * Layout: xl_nvm_commit, then ntables xl_nvm_table_ref, then nversions
 * times an xl_nvm_version followed by its data_len bytes.
 */
#define XLNVM_COMMIT_MORE		0x01	/* more parts of this commit follow */
#define XLNVM_COMMIT_CONTINUED	0x02	/* continues the parts before */

typedef struct xl_nvm_commit
{
	uint64		txid;			/* the primary's txid (for rm_desc) */
	uint32		xid;			/* its PostgreSQL xid, if it had one */
	uint32		nversions;
	uint16		ntables;
	uint8		flags;
} xl_nvm_commit;

typedef struct xl_nvm_table_ref
{
	NvmTableKey key;
	uint64		next_record;	/* the table's counters at the commit */
	uint64		next_version;
} xl_nvm_table_ref;

typedef struct xl_nvm_version
{
	uint64		record_no;
	uint64		version_no;
	uint64		index_root;
	uint32		data_len;
	uint16		table;			/* index into the table references */
	uint8		kind;			/* NVM_VINFO_TOMBSTONE, _MOVED, _INSERTED */
} xl_nvm_version;

/* XLOG_NVM_STORAGE: a table's storage was created, dropped, emptied or cloned. */
#define XLNVM_STORAGE_CREATE	1
#define XLNVM_STORAGE_DROP		2
#define XLNVM_STORAGE_RESET		3	/* emptied: a new, empty descriptor */
#define XLNVM_STORAGE_CLONE		4	/* key is a copy of src (SET TABLESPACE) */

typedef struct xl_nvm_storage
{
	NvmTableKey key;
	NvmTableKey src;			/* XLNVM_STORAGE_CLONE */
	uint8		op;
} xl_nvm_storage;

/* XLOG_NVM_RESERVE: version numbers below limit may be in use (replica.h). */
typedef struct xl_nvm_reserve
{
	NvmTableKey key;
	uint64		limit;
} xl_nvm_reserve;

/*
 * XLOG_NVM_CONFLICT: the primary is about to remove the index entries of
 * these index runs (their rows are dead for every snapshot of the
 * primary).  Followed by nroots version numbers (uint64).  A standby whose
 * queries may still see a version of one of the runs waits for them, and
 * cancels them after max_standby_streaming_delay, as heap's pruning
 * conflicts do.
 */
typedef struct xl_nvm_conflict
{
	NvmTableKey key;
	uint32		nroots;
} xl_nvm_conflict;

/* nvm_redo.c: the primary */
extern void nvm_redo_init(void);
extern bool nvm_redo_needed(void);
extern void nvm_redo_log_storage(uint8 op, const NvmTableKey *key, const NvmTableKey *src);
extern void nvm_redo_note_version(NvmTable *table, const NvmTableKey *key, uint64 version_no);
extern void nvm_redo_start(void);
extern void nvm_redo_log_conflict(const NvmTableKey *key, const uint64 *roots, uint64 n);

/* nvm_replay.c: the standby */
extern void nvm_replay(XLogReaderState *record);
extern void nvm_replay_end(void);
extern void nvm_replay_desc(StringInfo buf, XLogReaderState *record);

#endif							/* NVM_REDO_H */
