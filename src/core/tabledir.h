/*
 * tabledir.h
 *	  The table directory's entries in the pool: a table's key and the
 *	  offset of its descriptor.
 *
 * The directory is an array of NvmTableDirEntry in the pool (pool.h draws
 * where); store.c finds, creates and drops tables through it (store.h).
 * This header holds only the format, and depends on nothing but
 * nvm_types.h, so that the pool's layout can size the directory without
 * the store.
 */
#ifndef NVM_TABLEDIR_H
#define NVM_TABLEDIR_H

#include "nvm_types.h"

/*
 * Key of a table: PostgreSQL's RelFileNode, and in pad the table's kind
 * (persistence) and, for a temporary table, the backend that owns it
 * (temporary relfilenodes are unique only within their backend).  pad is 0
 * for a permanent table, so pools written before kinds existed read as
 * holding permanent tables only.
 */
typedef struct NvmTableKey
{
	uint32_t	spc;
	uint32_t	db;
	uint32_t	rel;
	uint32_t	pad;			/* NVM_KEY_PAD(kind, backend) */
} NvmTableKey;

#define NVM_KIND_PERMANENT		0
#define NVM_KIND_UNLOGGED		1	/* emptied at start-up after a crash */
#define NVM_KIND_TEMP			2	/* dropped at every start-up */
#define NVM_KEY_BACKEND_MASK	UINT32_C(0x00ffffff)
#define NVM_KEY_PAD(kind, backend) \
	(((uint32_t) (kind) << 24) | ((uint32_t) (backend) & NVM_KEY_BACKEND_MASK))
#define NVM_KEY_KIND(key)		((key)->pad >> 24)

/* Table directory entry (in the pool): one cache line. */
typedef struct NvmTableDirEntry
{
	_Alignas(NVM_CACHELINE) _Atomic nvm_off desc;	/* 0 = free entry */
	NvmTableKey key;
	uint64_t	create_txid;
} NvmTableDirEntry;

#endif							/* NVM_TABLEDIR_H */
