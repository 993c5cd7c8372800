/*-------------------------------------------------------------------------
 *
 * nvm_redoenc.h
 *	  The compact encoding of the versions of a COMMIT record (the format is
 *	  described in nvm_redofmt.h): the primary's encoder (nvm_redo.c) and
 *	  the replay's decoder (nvm_replay.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_REDOENC_H
#define NVM_REDOENC_H

#include "access/xlogdefs.h"
#include "lib/stringinfo.h"

#include "replica.h"
#include "storefmt.h"

#include "redo/nvm_redofmt.h"

/*
 * What the next version of a record is coded against: the previous
 * version's table reference and numbers, and the fields of the last tuple
 * header (if a tuple came before).  The encoder and the decoder keep it
 * alike, version by version.
 */
typedef struct NvmRedoPrev
{
	uint16		table;
	uint64		record_no;
	uint64		version_no;
	bool		have_tuple;		/* xmin, cid and masks are a tuple's */
	uint32		xmin;
	uint32		cid;
	char		masks[5];		/* t_infomask2, t_infomask, t_hoff */
} NvmRedoPrev;

/*
 * The encoder's state for one record.  The buffer is malloc'd and grown
 * with realloc (the commit hook must not fail: out of memory is a PANIC
 * there, as for the rest of the record being built).
 */
typedef struct NvmRedoEncoder
{
	char	   *buf;
	size_t		len;
	size_t		cap;
	NvmRedoPrev prev;
} NvmRedoEncoder;

/* The most bytes a version's encoding adds besides its row bytes. */
#define NVM_REDOENC_MAX_OVERHEAD	80

extern void nvm_redoenc_head(NvmRedoEncoder *h, const xl_nvm_commit *hdr,
							 const xl_nvm_table_ref *refs);
extern void nvm_redoenc_reset(NvmRedoEncoder *e);
extern void nvm_redoenc_add(NvmRedoEncoder *e, uint16 table, const NvmVersion *v,
							const NvmVersion *pred);

/*
 * The decoder's state for one record (or one COMMIT record of a
 * checkpoint's in-doubt file: where is invalid then).  img holds the image
 * of the version last decoded (palloc'd in the caller's context).
 */
typedef struct NvmRedoDecoder
{
	XLogRecPtr	where;
	const char *p;
	const char *end;
	uint16		ntables;
	NvmRedoPrev prev;
	StringInfoData img;
} NvmRedoDecoder;

/*
 * One decoded version: what nvm_replica_install takes, its table, and for
 * a row logged as a diff (rv.data not set yet) what
 * nvm_redodec_apply_diff needs.
 */
typedef struct NvmRedoVersion
{
	NvmReplicaVersion rv;
	uint16		table;
	bool		diff;
	uint64		pred_version_no;	/* the version it is a diff against */
	uint32		prefix;			/* bytes of that version's body in front */
	uint32		suffix;			/* ... and at the end */
	const char *mid;			/* the new bytes in between */
	uint32		mid_len;
} NvmRedoVersion;

extern void nvm_redodec_begin(NvmRedoDecoder *d, XLogRecPtr where, const char *p,
							  const char *end, xl_nvm_commit *hdr);
extern void nvm_redodec_ref(NvmRedoDecoder *d, xl_nvm_table_ref *ref);
extern void nvm_redodec_next(NvmRedoDecoder *d, NvmRedoVersion *out);
extern bool nvm_redodec_apply_diff(NvmRedoDecoder *d, NvmRedoVersion *out,
								   const char *pred, uint32 pred_len);
extern void nvm_redodec_end(NvmRedoDecoder *d);

#endif							/* NVM_REDOENC_H */
