/*
 * verify.h
 *	  The integrity checker: walks the pool read-only and reports damage, as
 *	  amcheck's verify_heapam does for heap.
 *
 * nvm_verify_check_table checks one table, nvm_verify_check_pool the whole
 * pool.  A table check walks:
 *	 - its directory entry and descriptor (magic, key, counters, the link
 *	   of a clone to its original);
 *	 - the segments of its record and version arrays (allocated blocks of
 *	   the right size), and of its row-lock words if it has any (their
 *	   values belong to the PG layer and are not checked);
 *	 - the free lists of record and version numbers (every number below
 *	   the counter, in an array segment, tagged free, no cycle);
 *	 - every record head and every chain from the head to the oldest
 *	   version: each link names an allocated block big enough for a
 *	   version, reached nowhere else (no cycle, no version of two chains);
 *	   each version names the record whose chain it is in and its own
 *	   version number, whose slot names it back, whose number is on no free
 *	   list, and which no other version has; its data fits its block; its
 *	   info word has only known bits, a tombstone has no data, the first
 *	   version of a record has nothing older, and of two versions of one
 *	   transaction the newer has the later command;
 *	 - statuses: the creator's txid was handed out (its clock id names a
 *	   slot, its value is below the reservation); an inlined COMMITTED
 *	   agrees with the status store wherever the store's entry is still the
 *	   transaction's (txn.h, nvm_status_entry); a version without a final
 *	   status belongs to a transaction that is running or in doubt;
 *	   "running" is never inlined;
 *	 - index roots and redirects: a version's index root names a version
 *	   of the same record or a redirect to it (tombstones are not checked:
 *	   VACUUM gives their roots back before it retires them); a redirect
 *	   names a record below the counter; a retired record's head is a
 *	   tombstone with nothing older, or the head of a rolled-back chain;
 *	 - every version slot: it names a version with that number (or a
 *	   redirect, a free-list entry, nothing).
 * Every block reached is checked with the allocator (alloc.h): allocated
 * in the pool's chunk table and block header, and, for chunks the
 * allocator has read since start-up, in its shared state too.
 * A pool check does this for every table in the directory, and also checks
 * the directory (valid descriptors, no key twice), the clock slots (status
 * rings where the layout puts them, write logs made of allocated blocks,
 * in-doubt markers of their own slot), the allocator's chunk table (known
 * kinds and classes, large runs whole) and that no block is reached twice
 * across the whole pool.
 *
 * Leaks are not damage: a crash may leave blocks that nothing reaches, and
 * a version slot that names a version no chain reaches (a prune cut the
 * chain, then the crash came before it rewrote the slot; store.h, gc.h).
 * They are counted, and reported (as NVM_VERIFY_LEAK) only on request; a
 * pool check with leaks also lists every allocated block nothing reaches.
 *
 * Concurrency.  The checker takes no lock and writes nothing to the pool.
 *	 - A table check is exact while nobody changes the table's structure:
 *	   nobody writes, prunes or vacuums it (the PG layer holds a ShareLock).
 *	   Statuses may still change (commits finishing, in-doubt transactions
 *	   resolved): a version found without a final status is read again
 *	   after its transaction was found not running.
 *	 - A pool check locks nothing: it is exact if no change of blocks began
 *	   or was under way while it ran (alloc.h, nvm_alloc_quiet_mark), and
 *	   says so in result->exact.  A caller that gets exact = false must
 *	   discard what was reported and try again (or give up): a change in
 *	   flight may look like damage.  Leaks are exact only while nobody
 *	   writes nor changes a table's storage: a write in flight (its version
 *	   allocated and its slot written, the head not switched yet), or the
 *	   storage a running TRUNCATE detached, is reached by nothing for a
 *	   while without any change of blocks under way.
 *
 * It never crashes on a damaged pool: every offset is checked with the
 * allocator before anything behind it is read, every array index against
 * the segments found valid, and every walk is bounded (a block is visited
 * once; a free list stops at a number it has seen).
 */
#ifndef NVM_VERIFY_H
#define NVM_VERIFY_H

#include "nvm_types.h"
#include "store.h"

typedef enum NvmVerifyKind
{
	NVM_VERIFY_DIRECTORY,		/* the table directory */
	NVM_VERIFY_DESCRIPTOR,		/* a table descriptor */
	NVM_VERIFY_ARRAY,			/* a segment of a record or version array */
	NVM_VERIFY_RECORD,			/* a record head */
	NVM_VERIFY_CHAIN,			/* a link of a version chain */
	NVM_VERIFY_VERSION,			/* a version header */
	NVM_VERIFY_STATUS,			/* a version's status against the status store */
	NVM_VERIFY_VERSION_SLOT,	/* a version slot */
	NVM_VERIFY_INDEX_ROOT,		/* a version's index root */
	NVM_VERIFY_REDIRECT,		/* a redirect left by a collected index root */
	NVM_VERIFY_FREE_LIST,		/* a free list of record or version numbers */
	NVM_VERIFY_OWNERSHIP,		/* a block reached twice */
	NVM_VERIFY_SLOT,			/* a clock slot: status ring, write log, in-doubt marker */
	NVM_VERIFY_ALLOCATOR,		/* an entry of the allocator's chunk table */
	NVM_VERIFY_LEAK				/* not damage: reported only on request */
} NvmVerifyKind;

typedef struct NvmVerifyProblem
{
	NvmVerifyKind kind;
	bool		in_table;		/* table names the table it was found in */
	NvmTableKey table;
	uint64_t	record_no;		/* 0 = none */
	uint64_t	version_no;		/* 0 = none */
	nvm_off		offset;			/* where in the pool, 0 = none */
	const char *message;
} NvmVerifyProblem;

typedef void (*NvmVerifyReportFn) (const NvmVerifyProblem *problem, void *arg);

typedef struct NvmVerifyOptions
{
	NvmVerifyReportFn report;	/* called for every problem (may be NULL) */
	void	   *arg;			/* passed to every callback */
	bool		leaks;			/* also report leaks */
	/* called now and then during long walks (may leave with a longjmp) */
	void		(*progress) (void *arg);
	/*
	 * Memory of the walk (NULL: malloc and free).  A caller whose callbacks
	 * may leave with a longjmp gives memory that goes away by itself.
	 */
	void	   *(*alloc) (size_t size, void *arg);
	void		(*free) (void *ptr, void *arg);
} NvmVerifyOptions;

typedef struct NvmVerifyResult
{
	uint64_t	problems;		/* damage found */
	uint64_t	leaks;			/* leaked versions and blocks found */
	uint64_t	leaked_bytes;
	uint64_t	tables;			/* tables walked */
	uint64_t	records;		/* records with a head */
	uint64_t	versions;		/* versions reached in chains */
	bool		exact;			/* nothing changed while the check ran */
	bool		out_of_memory;	/* the walk stopped early: no memory */
} NvmVerifyResult;

/* Check the table with key (found in the directory). */
extern void nvm_verify_check_table(const NvmTableKey *key, const NvmVerifyOptions *opts,
							 NvmVerifyResult *result);

/* Check the whole pool; result->exact = false means: discard and retry. */
extern void nvm_verify_check_pool(const NvmVerifyOptions *opts, NvmVerifyResult *result);

/* A short name of a kind ("chain", "free list", ...). */
extern const char *nvm_verify_kind_name(NvmVerifyKind kind);

#endif							/* NVM_VERIFY_H */
