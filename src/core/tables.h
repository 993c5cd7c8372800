/*
 * tables.h
 *	  The store's tables: the table directory (its entries' format is in
 *	  tabledir.h) and a table's life cycle (tables.c).  A table is a
 *	  descriptor in the pool (storefmt.h), found through the directory by
 *	  its key (tablespace, database, relfilenode, kind); its rows are
 *	  store.h's, which includes this header.
 */
#ifndef NVM_TABLES_H
#define NVM_TABLES_H

#include "nvm_types.h"
#include "storefmt.h"

/* The transaction writing (txn.h); a clone takes it by pointer only. */
typedef struct NvmTxn NvmTxn;

/*
 * Shared memory of the tables (a lock over the table directory, and the
 * flag of moved version numbers: store.h).
 */
extern size_t nvm_tables_shmem_size(void);
extern void nvm_tables_startup(void *shmem);
extern void nvm_tables_attach(void *shmem);

/*
 * Tables.  The table directory has a fixed number of entries
 * (nvm_table_dir_count, 16,384 in a pool the server creates): one per
 * table's storage.
 */
extern size_t nvm_table_dir_count(void);
extern size_t nvm_table_dir_used(void);
extern NvmTableDirEntry *nvm_table_dir(void);
extern bool nvm_table_create(const NvmTableKey *key, uint64_t create_txid, NvmTable *out);
extern bool nvm_table_open(const NvmTableKey *key, NvmTable *out);
extern bool nvm_table_drop(const NvmTableKey *key);

/*
 * nvm_table_reset gives key's table a new, empty descriptor (creating the
 * table if there is none) and detaches the old one, whose offset goes to
 * *detached (0 if there was none): its versions stay valid until
 * nvm_table_free_detached frees them, which the caller does once nobody
 * can use them any more (PostgreSQL: at the end of the transaction, after
 * its own versions in it got their final status).  A crash in between
 * leaks the detached storage.  Returns false if the pool or the directory
 * is full.
 */
extern bool nvm_table_reset(const NvmTableKey *key, uint64_t create_txid,
							NvmTable *out, nvm_off *detached);
extern void nvm_table_free_detached(nvm_off desc);

/*
 * nvm_table_clone copies the whole of table src under a new key: every
 * record head, version (creator txid, info word with its inlined status and
 * command id, index root, data), version slot, redirect, retired record,
 * free list and counter, so that every record and version number (every
 * TID) means in the copy what it means in src.  Versions of txn (the
 * caller's transaction, may be NULL) whose status is not final yet are
 * added to txn's write log at nesting level `level`, so its commit or
 * abort, or recovery, gives them their final status as it gives the
 * originals.  Nobody may write src meanwhile (PostgreSQL: ACCESS EXCLUSIVE
 * lock).  The persist order is stated at the code.  Returns false, with
 * nothing allocated, if the pool or the directory is full.
 */
extern bool nvm_table_clone(const NvmTable *src, const NvmTableKey *new_key,
							uint64_t create_txid, NvmTxn *txn, int level,
							NvmTable *out);

/*
 * nvm_table_sweep runs at start-up, after recovery and before any process
 * uses the store: it drops every table of kind NVM_KIND_TEMP and, with
 * empty_unlogged, empties every table of kind NVM_KIND_UNLOGGED (gives it
 * a new, empty descriptor).  Storage that a recovered in-doubt
 * transaction's write log still names is detached but not freed (a leak),
 * because resolving that transaction writes into its versions.
 */
typedef struct NvmSweepResult
{
	uint32_t	temp_dropped;
	uint32_t	unlogged_emptied;
} NvmSweepResult;

extern void nvm_table_sweep(bool empty_unlogged, NvmSweepResult *result);

#endif							/* NVM_TABLES_H */
