/*-------------------------------------------------------------------------
 *
 * nvm_wal.h
 *	  The nvm WAL resource manager: its record formats, and the calls that
 *	  write row changes for logical decoding.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_WAL_H
#define NVM_WAL_H

#include "access/htup.h"
#include "access/xlogdefs.h"

#include "utils/rel.h"

#include "nvm_compat.h"
#include "redo/nvm_redofmt.h"	/* the id, the redo records' types, XLOG_NVM_OPMASK */

/*
 * Record types: the high four bits of xl_info.  Row changes exist only for
 * logical decoding, so redo does nothing for them; the redo records
 * (nvm_redofmt.h) carry what a physical standby
 * replays into its own pool, and decoding skips them.  New record types take the next free value;
 * nvm_redo, nvm_identify and nvm_decode dispatch on the type.
 */
#define XLOG_NVM_XID			0x00	/* an xid, nothing else (no longer written) */
#define XLOG_NVM_INSERT			0x10	/* new row */
#define XLOG_NVM_UPDATE			0x20	/* new row, and the old key if needed */
#define XLOG_NVM_DELETE			0x30	/* old key, if the table has one */
#define XLOG_NVM_SPEC_CONFIRM	0x40	/* a speculative insertion succeeded */
#define XLOG_NVM_SPEC_ABORT		0x50	/* ... or was killed */
#define XLOG_NVM_TOAST_DISCARD	0x60	/* out-of-line values saved for a failed write */

/* xl_nvm_change.flags */
#define XLNVM_HAS_NEW_TUPLE		0x01
#define XLNVM_HAS_OLD_TUPLE		0x02	/* replica identity key, or the whole old row */
#define XLNVM_IS_SPECULATIVE	0x04	/* INSERT of INSERT ... ON CONFLICT */

/*
 * A row change.  The table is named by its relfilenode, as heap's records
 * name it (logical decoding maps it to the table through pg_class).  The
 * new tuple, then the old one, follow as flagged, each an xl_nvm_tuple
 * header and the tuple's bytes after its fixed header (null bitmap,
 * padding and data: heap's WAL format of a tuple).  Nothing is aligned.
 */
typedef struct xl_nvm_change
{
	RelFileLocator node;
	uint8		flags;
} xl_nvm_change;

#define SizeOfNvmChange		(offsetof(xl_nvm_change, flags) + sizeof(uint8))

typedef struct xl_nvm_tuple
{
	uint32		datalen;		/* bytes following this header */
	uint16		t_infomask2;
	uint16		t_infomask;
	uint8		t_hoff;
} xl_nvm_tuple;

#define SizeOfNvmTuple		(offsetof(xl_nvm_tuple, t_hoff) + sizeof(uint8))

/* nvm_wal.c */
extern void nvm_wal_init(void);
extern bool nvm_wal_logs_changes(Relation rel);
extern void nvm_wal_log_insert(Relation rel, HeapTuple tuple, int options);
extern void nvm_wal_log_update(Relation rel, HeapTuple oldtup, HeapTuple newtup);
extern void nvm_wal_log_delete(Relation rel, HeapTuple oldtup);
extern void nvm_wal_log_speculative_end(Relation rel, bool succeeded);
extern void nvm_wal_log_toast_discard(Relation rel, HeapTuple tuple);
extern bool nvm_logical_must_flush(void);

/* nvm_decode.c */
struct LogicalDecodingContext;
struct XLogRecordBuffer;
extern void nvm_decode(struct LogicalDecodingContext *ctx,
					   struct XLogRecordBuffer *buf);

#endif							/* NVM_WAL_H */
