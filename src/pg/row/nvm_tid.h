/*-------------------------------------------------------------------------
 *
 * nvm_tid.h
 *	  The mapping between nvm version numbers and PostgreSQL TIDs.
 *
 * Every version of an nvm row has its own version number n (n >= 1), and
 * PostgreSQL sees it as the TID ((n - 1) / 291, (n - 1) % 291 + 1), so the
 * first row of a table is (0,1), as on heap, and a table that only ever
 * had rows inserted has heap's TIDs for them (TID scans, TABLESAMPLE and
 * tests that show ctid give heap's answers).  The offsets stay in
 * 1..MaxHeapTuplesPerPage because tidbitmap.c (tbm_add_tuples) rejects
 * larger ones and GIN packs offsets into 11 bits; the "blocks" are virtual
 * and only group version numbers, which is also how relation_size,
 * ANALYZE's block sampling and bitmap scans count them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_TID_H
#define NVM_TID_H

#include "access/htup_details.h"
#include "pgstat.h"
#include "storage/itemptr.h"
#include "utils/rel.h"

#include "store.h"

StaticAssertDecl(NVM_TUPLES_PER_BLOCK == MaxHeapTuplesPerPage,
				 "nvm TIDs must use heap's offset range");

/* nvm_version_to_tid stores the TID of version number n in *tid. */
static inline void
nvm_version_to_tid(uint64 n, ItemPointer tid)
{
	Assert(n >= 1);
	ItemPointerSet(tid,
				   (BlockNumber) ((n - 1) / NVM_TUPLES_PER_BLOCK),
				   (OffsetNumber) ((n - 1) % NVM_TUPLES_PER_BLOCK + 1));
}

/*
 * nvm_tid_to_version returns the version number a TID names, or 0 (never a
 * version number) if the TID cannot name one.
 */
static inline uint64
nvm_tid_to_version(ItemPointer tid)
{
	BlockNumber blkno = ItemPointerGetBlockNumberNoCheck(tid);
	OffsetNumber offnum = ItemPointerGetOffsetNumberNoCheck(tid);

	if (offnum < 1 || offnum > NVM_TUPLES_PER_BLOCK || blkno == InvalidBlockNumber)
		return 0;
	return (uint64) blkno * NVM_TUPLES_PER_BLOCK + offnum;
}

/* nvm_versions_to_blocks returns how many virtual blocks cover versions below limit. */
static inline BlockNumber
nvm_versions_to_blocks(uint64 version_limit)
{
	if (version_limit <= 1)
		return 0;
	return (BlockNumber) ((version_limit - 2) / NVM_TUPLES_PER_BLOCK + 1);
}

/*
 * nvm_count_block_visit counts a visit to one virtual block of rel in the
 * statistics (pg_statio_*_tables.heap_blks_hit, pg_stat_*_tables through
 * blocks fetched), where heap counts reading a buffer.  nvm tables have no
 * buffers: rows are read in place in the pool, so every visit is a hit and
 * heap_blks_read stays 0.
 */
static inline void
nvm_count_block_visit(Relation rel)
{
	pgstat_count_buffer_read(rel);
	pgstat_count_buffer_hit(rel);
}

#endif							/* NVM_TID_H */
