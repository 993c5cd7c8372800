/*-------------------------------------------------------------------------
 *
 * nvm_ckptfile.h
 *	  The checkpoint files of the pool (pg_nvm/checkpoint): their format,
 *	  the manifest that says which files hold each table, a streaming
 *	  writer and a streaming reader.  ../checkpoint/nvm_checkpoint.c
 *	  decides what they hold and when they are written; nvm_rebuild.c loads
 *	  them into a rebuilt pool.
 *
 * A table's rows as of a position of the WAL are its base file, with the
 * delta files written after it on top, in the order of their sequence
 * numbers: a delta holds, for each record that changed since the file
 * before it, the record's newest committed version then, or a tombstone
 * where the record was deleted.  Reading a table merges its files by
 * record number, the newest file winning (NvmCkptCursor).
 *
 * A table file, "<spc>_<db>_<rel>_<pad>.<seq>.base" or ".delta":
 *	 - a header (NvmCkptFileHeader): its table, kind, sequence number, the
 *	   WAL position its rows are as of, its counts, where its block index
 *	   is, and a CRC-32C of the header and the index;
 *	 - blocks of at most NVM_CKPT_BLOCK_BYTES of rows, each a block header
 *	   (NvmCkptBlockHeader: its first and last record number, its rows and
 *	   bytes, a CRC-32C of the rows) and rows in ascending record order,
 *	   each an xl_nvm_version and its data (the layout of RESYNC ROWS
 *	   records, nvm_redofmt.h);
 *	 - the block index (NvmCkptBlockRef per block), so that a reader can
 *	   start at any record number.
 * The in-doubt file, "indoubt.<seq>", holds the transactions in doubt
 * (prepared ones, and tied commits a crash left undecided) and the row
 * locks of prepared transactions, as the bodies of the COMMIT (flagged
 * prepared) and LOCKS records that would log them: records of
 * NvmCkptRecordHeader and data.
 *
 * The manifest, "manifest", is the one file that says what is current: the
 * sequence number of the checkpoint that wrote it, the WAL position of its
 * cut, and for every permanent table the position its files are as of,
 * its counters and reserved version numbers, and its files.  A file not
 * named by the manifest is not used (a checkpoint cut short, or one
 * replaced by a merge) and is removed by the next checkpoint.
 *
 * Persist order of every file: written under a ".tmp" name, fsynced,
 * renamed durably (durable_rename: the rename and the directory fsynced);
 * table and in-doubt files before the manifest that names them, the
 * manifest before any file it no longer names is removed.  A crash leaves
 * the old manifest with its files, or the new one with its files.
 *
 * The reader uses neither palloc nor ereport: the rebuild runs it in
 * threads.  It returns false with a message (NvmCkptError) instead.  It
 * holds one block in memory, and asks the kernel for the next few ahead
 * (posix_fadvise), so that a cold file is read from the disk while the
 * caller works through the block it has.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_CKPTFILE_H
#define NVM_CKPTFILE_H

#include "tabledir.h"

#include "nvm_compat.h"
#include "redo/nvm_redofmt.h"

#define NVM_CHECKPOINT_DIR			"pg_nvm/checkpoint"
#define NVM_CKPT_MANIFEST			NVM_CHECKPOINT_DIR "/manifest"
/*
 * The magics say the version of the format: a prefix, then a digit.  The
 * file magic must change whenever the coding of anything a checkpoint file
 * holds changes: its headers, the rows (xl_nvm_version and the stored
 * images), or the redo coding of the in-doubt file's COMMIT and LOCKS
 * records (nvm_redofmt.h, nvm_redoenc.c; version 3: the compact coding).
 * The manifest's changes with it (and with the manifest's own layout): a
 * manifest names files of its own version only.  A rebuild refuses a file
 * or a manifest of another version (the prefix, another digit) with an
 * error of its own, not as damage; a capture that finds another version's
 * manifest writes every table anew (nvm_ckptfile_manifest_read_ours).
 */
#define NVM_CKPT_FILE_MAGIC			"NVMCKF3"
#define NVM_CKPT_MANIFEST_MAGIC		"NVMMAN3"

/* Rows of one block, at most (a row larger than that has a block of its own). */
#define NVM_CKPT_BLOCK_BYTES		(1024 * 1024)

typedef enum NvmCkptFileKind
{
	NVM_CKPT_BASE = 1,			/* every live row of the table */
	NVM_CKPT_DELTA = 2,			/* the records changed since the file before */
	NVM_CKPT_INDOUBT = 3		/* transactions in doubt, prepared row locks */
} NvmCkptFileKind;

typedef struct NvmCkptFileHeader
{
	char		magic[8];		/* NVM_CKPT_FILE_MAGIC */
	NvmTableKey key;			/* zero for the in-doubt file */
	uint64		seq;			/* its sequence number */
	uint64		lsn;			/* the rows are as of this WAL position */
	uint64		nrows;
	uint64		bytes;			/* of the blocks */
	uint64		index_off;		/* where the block index is */
	uint32		nblocks;
	uint8		kind;			/* NvmCkptFileKind */
	uint8		pad[3];
	uint32		crc;			/* of this header (crc 0) and the block index */
	uint32		pad2;
} NvmCkptFileHeader;

typedef struct NvmCkptBlockHeader
{
	uint64		first_record;
	uint64		last_record;
	uint32		nrows;
	uint32		len;			/* bytes of rows that follow */
	uint32		crc;			/* of the rows */
	uint32		pad;
} NvmCkptBlockHeader;

typedef struct NvmCkptBlockRef
{
	uint64		off;
	uint64		first_record;
	uint64		last_record;
} NvmCkptBlockRef;

/* A record of the in-doubt file: info is the redo record type it stands for. */
typedef struct NvmCkptRecordHeader
{
	uint8		info;			/* XLOG_NVM_COMMIT or XLOG_NVM_LOCKS */
	uint8		pad[3];
	uint32		len;
} NvmCkptRecordHeader;

/* The manifest in memory (nvm_ckptfile_manifest_read, _write). */
typedef struct NvmCkptFileRef
{
	uint64		seq;
	uint64		nrows;
	uint64		bytes;			/* of the whole file */
	uint8		kind;
	uint8		pad[7];
} NvmCkptFileRef;

typedef struct NvmCkptTable
{
	NvmTableKey key;
	uint64		lsn;			/* its files are as of this position */
	uint64		next_record;	/* its counters then */
	uint64		next_version;
	uint64		reserved;		/* version numbers reserved in the WAL then */
	uint32		nfiles;
	uint32		pad;
	NvmCkptFileRef *files;		/* nfiles, ascending seq, a base first */
} NvmCkptTable;

typedef struct NvmCkptManifest
{
	uint64		seq;			/* sequence number of the checkpoint that wrote it */
	uint64		lsn;			/* the WAL position of its cut */
	uint64		redo;			/* the redo point of the checkpoint it was for */
	uint64		next_seq;		/* the next file sequence number to use */
	uint64		indoubt_seq;	/* its in-doubt file, 0 = none */
	uint32		ntables;
	uint32		cap;
	NvmCkptTable *tables;
} NvmCkptManifest;

/* Names (relative to the data directory), palloc'd. */
extern char *nvm_ckptfile_table_name(const NvmTableKey *key, uint64 seq, uint8 kind);
extern char *nvm_ckptfile_indoubt_name(uint64 seq);

/* The manifest. */
/*
 * nvm_ckptfile_manifest_read reads the manifest (false: none); a manifest
 * of another version of the format is an ERROR.  _read_ours takes such a
 * manifest for none instead, says so in *other_version, and sets
 * m->next_seq above the sequence number of every file of the directory
 * (the next capture writes every table anew, under new names).
 */
extern bool nvm_ckptfile_manifest_read(NvmCkptManifest *m);
extern bool nvm_ckptfile_manifest_read_ours(NvmCkptManifest *m, bool *other_version);
extern void nvm_ckptfile_manifest_write(const NvmCkptManifest *m);
extern NvmCkptTable *nvm_ckptfile_manifest_find(const NvmCkptManifest *m, const NvmTableKey *key);
extern NvmCkptTable *nvm_ckptfile_manifest_add(NvmCkptManifest *m, const NvmTableKey *key);
extern void nvm_ckptfile_manifest_free(NvmCkptManifest *m);

/* nvm_ckptfile_remove_unnamed removes every file of the directory that m does not name. */
extern uint64 nvm_ckptfile_remove_unnamed(const NvmCkptManifest *m);

/* nvm_ckptfile_remove_all removes every checkpoint file (a restored backup). */
extern void nvm_ckptfile_remove_all(void);

/*
 * The writer: nvm_ckptfile_begin opens a new file (its ".tmp"),
 * nvm_ckptfile_add_row appends a row (ascending record numbers),
 * nvm_ckptfile_finish writes the index and the header, fsyncs and renames
 * it durably, and returns its size.  nvm_ckptfile_add_blob writes the
 * in-doubt file's records instead of rows.  Errors are ERRORs.
 */
typedef struct NvmCkptWriter NvmCkptWriter;
extern NvmCkptWriter *nvm_ckptfile_begin(const NvmTableKey *key, uint8 kind, uint64 seq,
										 uint64 lsn);
extern void nvm_ckptfile_add_row(NvmCkptWriter *w, const xl_nvm_version *xv, const void *data);
extern void nvm_ckptfile_add_blob(NvmCkptWriter *w, const void *data, size_t len);
extern uint64 nvm_ckptfile_finish(NvmCkptWriter *w, uint64 *nrows);
extern void nvm_ckptfile_abandon(NvmCkptWriter *w);

/* What went wrong in the reader. */
typedef struct NvmCkptError
{
	char		msg[256];
	bool		other_version;	/* a file of another version of the format */
	char		magic[8];		/* its magic, then */
} NvmCkptError;

/*
 * nvm_ckptfile_report reports err at elevel (ERROR or above): its message
 * after what (if not NULL), with hint if the file is damaged; a file of
 * another version of the format has an error of its own.
 */
pg_noreturn extern void nvm_ckptfile_report(int elevel, const char *what, const NvmCkptError *err,
											const char *hint);

/*
 * The reader of one file: open (checks the header and the index), then
 * rows from the first block whose records reach from_record on, each
 * block checked; nvm_ckptreader_next gives one row (false at the end or on
 * an error: err->msg[0] says which).
 */
typedef struct NvmCkptReader NvmCkptReader;
extern NvmCkptReader *nvm_ckptreader_open(const char *path, NvmCkptError *err);
extern const NvmCkptFileHeader *nvm_ckptreader_header(const NvmCkptReader *r);
extern bool nvm_ckptreader_seek(NvmCkptReader *r, uint64 from_record, NvmCkptError *err);
extern bool nvm_ckptreader_next(NvmCkptReader *r, xl_nvm_version *xv, const char **data,
								NvmCkptError *err);
extern bool nvm_ckptreader_blob(NvmCkptReader *r, char **data, size_t *len, NvmCkptError *err);
extern void nvm_ckptreader_close(NvmCkptReader *r);

/*
 * The cursor over one table's files in a record range [lo, hi): their rows
 * merged by record number, the file with the highest sequence number
 * winning; tombstones are passed on (the caller skips them, or keeps them
 * when it writes a delta of its own).  dir is the checkpoint directory's
 * path (absolute or relative to the working directory).
 */
typedef struct NvmCkptCursor NvmCkptCursor;
extern NvmCkptCursor *nvm_ckptcursor_open(const char *dir, const NvmCkptTable *t,
										  uint64 lo, uint64 hi, NvmCkptError *err);
extern bool nvm_ckptcursor_next(NvmCkptCursor *c, xl_nvm_version *xv, const char **data,
								NvmCkptError *err);
extern void nvm_ckptcursor_close(NvmCkptCursor *c);

/* The bytes of its files the cursor has read so far (blocks, headers, indexes). */
extern uint64 nvm_ckptcursor_bytes_read(const NvmCkptCursor *c);

/*
 * nvm_ckptfile_split returns up to max ascending record numbers that cut
 * t's rows into parts of about the same size (from its base file's block
 * index), in *cuts; how many.
 */
extern int	nvm_ckptfile_split(const char *dir, const NvmCkptTable *t, uint64 *cuts, int max,
							   NvmCkptError *err);

#endif							/* NVM_CKPTFILE_H */
