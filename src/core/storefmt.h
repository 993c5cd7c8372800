/*
 * storefmt.h
 *	  The store's format in the pool: table descriptors, the values of
 *	  record heads and version slots, versions and their info word; and
 *	  the backend-local handle on a table.
 *
 * store.h says how these are written (the persist order of a write, the
 * reuse of numbers) and declares the functions that write them.  This
 * header holds only the format, for the store and for the code below it
 * that reads versions or finishes them: visibility.c walks chains, txn.c
 * inlines final statuses into a transaction's versions and, at recovery,
 * unlinks an aborted transaction's versions from their chains.
 */
#ifndef NVM_STOREFMT_H
#define NVM_STOREFMT_H

#include "nvm_types.h"
#include "segarray.h"
#include "tabledir.h"

#define NVM_TABLE_MAGIC			UINT64_C(0x3142544d564e)	/* "NVMTB1" */

/* Table descriptor (in the pool). */
typedef struct NvmTableDesc
{
	uint64_t	magic;
	NvmTableKey key;
	NvmSegArray records;
	NvmSegArray versions;
	_Alignas(NVM_CACHELINE) _Atomic uint64_t next_record;	/* numbers start at 1 */
	_Atomic nvm_off lock_words; /* row-lock words (see below), 0 = none yet */
	_Alignas(NVM_CACHELINE) _Atomic uint64_t next_version;	/* numbers start at 1 */
	_Atomic nvm_off number_floor_of;	/* clone: the table it was cloned from, 0 = none */
	_Atomic uint64_t redo_reserved; /* version numbers below it are in the WAL (replica.h) */
	_Atomic uint64_t redo_lsn;	/* end of the last redo record of a commit in it (replica.h) */
	_Atomic nvm_off ckpt_marks[2];	/* change marks per epoch parity (ckptmark.h), 0 = none */
	_Atomic uint64_t ckpt_whole;	/* 1 + the epoch a whole capture was asked in, 0 = none */
	/* free lists of numbers (see "Reuse of numbers" in store.h): tag << 40 | first */
	_Alignas(NVM_CACHELINE) _Atomic uint64_t free_records;
	_Atomic uint64_t token_mark;	/* opaque to the core: the PG layer's xmin tokens */
	_Alignas(NVM_CACHELINE) _Atomic uint64_t free_versions;
} NvmTableDesc;

/*
 * lock_words, redo_reserved, ckpt_marks, ckpt_whole and token_mark live in cache lines that descriptors written
 * before they existed have zeroed (descriptors are allocated zeroed and the
 * struct's size is unchanged), so older pools read as having neither: no
 * format change.
 */
_Static_assert(sizeof(NvmTableDesc) == 960, "NvmTableDesc must keep its size");

/* A backend-local handle on a table. */
typedef struct NvmTable
{
	NvmTableDesc *desc;
} NvmTable;

/*
 * Values of record heads and version slots.  Offsets are 8-aligned, so the
 * low three bits tag the other values:
 *	 0					unused;
 *	 offset				a version (for a head: the newest one);
 *	 next << 3 | 1		on the free list, next = the next free number (0 = end);
 *	 rec << 3 | 2		version slot of a collected index root: redirect to record rec;
 *	 tomb | 3			record head of a retired record (tomb = its tombstone).
 */
#define NVM_TAG_MASK			UINT64_C(7)
#define NVM_TAG_FREE			UINT64_C(1)
#define NVM_TAG_REDIRECT		UINT64_C(2)
#define NVM_TAG_RETIRED			UINT64_C(3)
#define NVM_FREE_NUMBER_BITS	40
#define NVM_FREE_NUMBER_MASK	((UINT64_C(1) << NVM_FREE_NUMBER_BITS) - 1)

/* Bits of NvmVersion.info */
#define NVM_VINFO_STATUS_MASK	UINT64_C(0x3)	/* inlined final status, 0 = not yet */
#define NVM_VINFO_TOMBSTONE		UINT64_C(0x4)
#define NVM_VINFO_INSERTED		UINT64_C(0x8)	/* first version of its record */
#define NVM_VINFO_MOVED			UINT64_C(0x10)	/* tombstone of a row moved to another table */
#define NVM_VINFO_CID_SHIFT		32

/* A version (in the pool, inside an allocator block). */
typedef struct NvmVersion
{
	uint64_t	txid;			/* creator */
	_Atomic uint64_t info;		/* inlined status, tombstone bit, command id */
	nvm_off		prev;			/* older version, 0 = none */
	uint64_t	record_no;
	uint64_t	version_no;		/* this version's own number (TID) */
	uint64_t	index_root;		/* version number index entries use */
	uint32_t	data_len;
	uint32_t	external_id;	/* creator's external (PostgreSQL) xid, 0 if none */
	char		data[];			/* opaque to the core (a heap tuple image) */
} NvmVersion;

static inline bool
nvm_version_is_tombstone(const NvmVersion *v)
{
	return (atomic_load_explicit(&((NvmVersion *) v)->info, memory_order_relaxed) & NVM_VINFO_TOMBSTONE) != 0;
}

/*
 * nvm_version_is_moved says whether v is the tombstone of a row that moved
 * to another table (a partition-key update), not of a deleted one.
 */
static inline bool
nvm_version_is_moved(const NvmVersion *v)
{
	return (atomic_load_explicit(&((NvmVersion *) v)->info, memory_order_relaxed) & NVM_VINFO_MOVED) != 0;
}

/*
 * nvm_version_inlined_aborted says whether v carries the inlined status
 * ABORTED: its creator rolled back, or v alone was rolled back (a
 * subtransaction, a killed write) while its creator runs on.
 */
static inline bool
nvm_version_inlined_aborted(const NvmVersion *v)
{
	return (atomic_load_explicit(&((NvmVersion *) v)->info, memory_order_acquire) & NVM_VINFO_STATUS_MASK) == NVM_STATUS_ABORTED;
}

static inline uint32_t
nvm_version_cid(const NvmVersion *v)
{
	return (uint32_t) (atomic_load_explicit(&((NvmVersion *) v)->info, memory_order_relaxed) >> NVM_VINFO_CID_SHIFT);
}

#endif							/* NVM_STOREFMT_H */
