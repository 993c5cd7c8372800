/*-------------------------------------------------------------------------
 *
 * nvm_ckptfile.h
 *	  The checkpoint files of the pool (pg_nvm/checkpoint): their format,
 *	  names, reading and removal (nvm_ckptfile.c); nvm_checkpoint.c writes
 *	  them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_CKPTFILE_H
#define NVM_CKPTFILE_H

#include "tabledir.h"

#define NVM_CHECKPOINT_DIR		"pg_nvm/checkpoint"
#define NVM_CHECKPOINT_MAGIC	"NVMCKPT1"

/* The head of a table's checkpoint file; its rows follow. */
typedef struct NvmCheckpointHeader
{
	char		magic[8];		/* NVM_CHECKPOINT_MAGIC */
	NvmTableKey key;
	uint64		lsn;			/* the rows are the table's at this WAL position */
	uint64		next_record;	/* the table's counters then */
	uint64		next_version;
	uint64		reserved;		/* version numbers reserved in the WAL then */
	uint64		nrows;
	uint64		bytes;			/* of the rows that follow */
	uint32		crc;			/* CRC-32C of the rows and the header (crc 0) */
	uint32		pad;
} NvmCheckpointHeader;

/* nvm_ckptfile_name returns the path of key's file, from the data directory. */
extern char *nvm_ckptfile_name(const NvmTableKey *key);

/* nvm_ckptfile_key parses a file name back into its key (false: another file). */
extern bool nvm_ckptfile_key(const char *name, NvmTableKey *key);

/* nvm_ckptfile_read_header reads the header of key's file (false: none). */
extern bool nvm_ckptfile_read_header(const NvmTableKey *key, NvmCheckpointHeader *h);

/*
 * nvm_ckptfile_each calls load with every checkpoint file, checked, and its
 * rows (in the format of RESYNC ROWS records); returns how many.
 */
extern uint64 nvm_ckptfile_each(void (*load) (const NvmCheckpointHeader *h,
											  const char *rows, void *arg),
								void *arg);

/* nvm_ckptfile_remove_all removes every checkpoint file (a restored backup). */
extern void nvm_ckptfile_remove_all(void);

#endif							/* NVM_CKPTFILE_H */
