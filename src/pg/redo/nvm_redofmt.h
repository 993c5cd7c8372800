/*-------------------------------------------------------------------------
 *
 * nvm_redofmt.h
 *	  The formats of the nvm redo records a physical standby replays: the
 *	  id of nvm's resource manager, the record types, and what each record
 *	  holds.  The primary writes them (nvm_redo.c, nvm_resync.c,
 *	  ../checkpoint/nvm_backup.c); a standby replays them (nvm_replay.c).
 *	  The resource manager itself, and the records of logical decoding,
 *	  are ../logical/nvm_wal.c's.
 *
 * Every record names tables by their pool key (NvmTableKey: tablespace,
 * database, relfilenode, kind); only permanent tables are logged.  Nothing
 * in a record is aligned: the replay copies each header out before it
 * reads it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_REDOFMT_H
#define NVM_REDOFMT_H

#include "tabledir.h"

/*
 * The resource manager id.  128 is PostgreSQL's id for extensions in
 * development; the PostgreSQL wiki page CustomWALResourceManagers keeps
 * the ids that extensions have taken (among them 129 OrioleDB, 130 and 131
 * EnterpriseDB, 140 pg_tde, 151 ProvSQL, 241 Citus columnar); 197 is not
 * among them.  WAL written with this id can be read only by a
 * server that loads nvmam (it must be in shared_preload_libraries anyway).
 */
#define RM_NVM_ID			197
#define RM_NVM_NAME			"nvmam"

/*
 * Record types: the high four bits of xl_info (nvm_wal.h has the types of
 * logical decoding's row changes, below these).
 */
#define XLOG_NVM_OPMASK			0xF0
#define XLOG_NVM_COMMIT			0x70	/* a committed transaction's versions */
#define XLOG_NVM_STORAGE		0x80	/* a table's storage created, dropped, ... */
#define XLOG_NVM_RESERVE		0x90	/* version numbers reserved */
#define XLOG_NVM_CONFLICT		0xA0	/* index entries of these runs go */
#define XLOG_NVM_RESYNC			0xB0	/* a table's rows logged again after a crash */
#define XLOG_NVM_LOCKS			0xC0	/* row-lock words of a prepared transaction */
#define XLOG_NVM_IMAGE			0xD0	/* every table's rows, for a base backup */

/* Is info (masked) one of the redo records of this header? */
#define XLOG_NVM_IS_REDO(info)	((info) >= XLOG_NVM_COMMIT && (info) <= XLOG_NVM_IMAGE)

/*
 * XLOG_NVM_COMMIT: the versions a committed transaction wrote (not those
 * its rolled-back subtransactions wrote), with their numbers, index roots
 * and row images, and the counters of each table at the commit.  A large
 * transaction takes several records ("parts"), each but the last flagged
 * XLNVM_COMMIT_MORE; the standby applies them in one transaction of its
 * own and commits it at the last part.
 *
 * Layout, in the compact encoding that nvm_redoenc.c writes and reads
 * (xl_nvm_commit and xl_nvm_table_ref are what it decodes into): numbers
 * are LEB128 varints (7 bits a byte, least significant first); a "delta"
 * is the signed difference to a base, zigzag-coded (0, -1, 1, -2, ... as
 * 0, 1, 2, 3, ...), so that small differences take one byte.
 *
 *	 the header		flags (one byte), txid and time (8 bytes each, as in
 *					memory), xid, nversions and ntables (varints)
 *	 ntables table references
 *					the key's spc, db, rel and pad, the table's next_record
 *					and next_version (varints)
 *	 nversions versions
 *
 * Each version is coded against the previous version of the same record
 * (the first against table 0, record 0, version 0), so every record (and
 * every part) decodes on its own:
 *
 *	 flags			one byte (XLNVM_V_*)
 *	 table			varint, unless XLNVM_V_TABLE_SAME (the previous one's)
 *	 record_no		delta to the previous one's, unless XLNVM_V_RECORD_NEXT
 *					(the previous one's + 1)
 *	 version_no		delta to the previous one's, unless XLNVM_V_VERSION_NEXT
 *	 index_root		delta to its own record_no, unless XLNVM_V_ROOT_RECORD
 *					(equal to it: an inserted row)
 *	 the row:
 *	   without XLNVM_V_TUPLE: varint length, then the image's bytes (a
 *	   tombstone: length 0);
 *	   with XLNVM_V_TUPLE: the image is a heap tuple whose header holds
 *	   xmax and t_ctid invalid, as every stored image does
 *	   (../row/nvm_tuple.c), and those are not logged: a byte of XLNVM_T_*
 *	   flags, xmin (4 bytes) unless XLNVM_T_XMIN_SAME (the previous
 *	   tuple's in the record), cid (varint) unless XLNVM_T_CID_SAME,
 *	   t_infomask2, t_infomask and t_hoff (5 bytes) unless
 *	   XLNVM_T_MASKS_SAME; then the rest of the image (from the null
 *	   bitmap on, the "body"): its varint length and its bytes, or, with
 *	   XLNVM_T_DIFF, a diff against the body of the version this one
 *	   replaces (an UPDATE's), as heap's XLOG_HEAP_PREFIX_FROM_OLD and
 *	   SUFFIX_FROM_OLD do: that version's number (a delta to this one's),
 *	   the lengths of the prefix and of the suffix kept from its body, the
 *	   length of the new bytes between them (varints) and those bytes.
 *	   The replay rebuilds the header byte for byte, and a diff's body from
 *	   the version it holds under the number named.  The primary logs a
 *	   diff only against a version every replaying side is certain to hold
 *	   (the argument is at nvm_redo.c's diff_base), and only where it is
 *	   smaller than the body.
 *
 * The format is that of this version of nvmam only: nvmam does not read
 * WAL written by another version (a standby or a restored backup runs the
 * primary's version of nvmam).  The in-doubt checkpoint file holds COMMIT
 * and LOCKS records in this coding: a change of it changes the checkpoint
 * files' magic too (nvm_ckptfile.h).
 */
#define XLNVM_COMMIT_MORE		0x01	/* more parts of this commit follow */
#define XLNVM_COMMIT_CONTINUED	0x02	/* continues the parts before */
#define XLNVM_COMMIT_PREPARED	0x04	/* last part of a PREPARE: kept in doubt under xid */

typedef struct xl_nvm_commit
{
	uint64		txid;			/* the primary's txid (for rm_desc) */
	int64		time;			/* when it was written (recovery_target_time) */
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

/* The flags byte of a version of a COMMIT record. */
#define XLNVM_V_KIND_MASK		0x07	/* its NVM_VINFO_TOMBSTONE, _INSERTED, _MOVED >> 2 */
#define XLNVM_V_TABLE_SAME		0x08
#define XLNVM_V_RECORD_NEXT		0x10
#define XLNVM_V_VERSION_NEXT	0x20
#define XLNVM_V_ROOT_RECORD		0x40
#define XLNVM_V_TUPLE			0x80

/* The flags byte of a row logged as a tuple (XLNVM_V_TUPLE). */
#define XLNVM_T_XMIN_SAME		0x01
#define XLNVM_T_CID_SAME		0x02
#define XLNVM_T_MASKS_SAME		0x04
#define XLNVM_T_DIFF			0x08	/* the rest is a diff against the version before */
#define XLNVM_T_ALL				0x0F

/*
 * A version as RESYNC records and the checkpoint files hold it (fixed
 * fields, then data_len bytes of its image).
 */
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
 * primary): an xl_nvm_table_items followed by nitems version numbers
 * (uint64).  A standby whose queries may still see a version of one of
 * the runs waits for them, and cancels them after
 * max_standby_streaming_delay, as heap's pruning conflicts do.
 */
typedef struct xl_nvm_table_items
{
	NvmTableKey key;
	uint32		nitems;			/* CONFLICT: roots; LOCKS: pairs */
} xl_nvm_table_items;

/*
 * XLOG_NVM_RESYNC: after a crash that may have lost COMMIT records, the
 * primary logs again the committed rows of every table that may have lost
 * some (nvm_resync.c): BEGIN with the table's counters, ROWS (nrows times
 * an xl_nvm_version and its data: the record's newest committed version),
 * END.  The standby makes the table hold exactly those rows, in one
 * transaction of its own committed at END (nvm_replay.c).
 */
#define XLNVM_RESYNC_BEGIN		1
#define XLNVM_RESYNC_ROWS		2
#define XLNVM_RESYNC_END		3

typedef struct xl_nvm_resync
{
	NvmTableKey key;
	uint64		next_record;
	uint64		next_version;
	uint32		nrows;
	uint8		phase;
	uint8		partial;		/* only rows a crash may have lost: keep the others */
} xl_nvm_resync;

/*
 * XLOG_NVM_LOCKS: row-lock words of one table that name a transaction
 * being prepared, as PREPARE TRANSACTION marked them (PREPARED, durable;
 * nvm_rowlock.c), written before PostgreSQL's prepare record: an
 * xl_nvm_table_items followed by nitems pairs of uint64, a record number
 * and its word.  The standby stores each word in its own table's lock
 * words, so that a standby promoted while the transaction is prepared
 * still holds its row locks, as the primary does across a restart.  A
 * MultiXactId in a word was logged by PostgreSQL before it.
 */

/*
 * XLOG_NVM_IMAGE: the image of the pool a base backup needs
 * (nvm_backup.c): BEGIN, then a RESYNC group of every permanent table and
 * a COMMIT record flagged prepared of every transaction in doubt, then END.
 * A data directory restored from the backup replays WAL from the backup's
 * start into a new, empty pool (nvm_replay.c): a table has rows there only
 * from its RESYNC group on (or from its creation, if that is later), and
 * nvm rows are served only once an END whose BEGIN was replayed too.  The
 * checkpoint of the pool where commits are durable through the WAL logs
 * an image whose rows are in its checkpoint files instead (rows_in_files:
 * no RESYNC group, only the row locks and the transactions in doubt);
 * only the rebuild of a lost pool, which loads those files, counts it.
 */
#define XLNVM_IMAGE_BEGIN		1
#define XLNVM_IMAGE_END			2

typedef struct xl_nvm_image
{
	uint64		tables;			/* END: tables and rows logged */
	uint64		rows;
	uint32		indoubt;		/* END: transactions in doubt logged */
	uint8		phase;
	uint8		rows_in_files;	/* the rows are in checkpoint files */
} xl_nvm_image;

#endif							/* NVM_REDOFMT_H */
