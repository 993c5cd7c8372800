/*
 * store.h
 *	  Tables, record heads and version chains (MCSI paper §3).  The table
 *	  directory and a table's life cycle are declared in tables.h (which
 *	  this header includes), its rows here.
 *
 * A table is a descriptor in the pool, found through the table directory by
 * its key (tablespace, database, relfilenode, kind; the directory's entries
 * are in tabledir.h, the formats below in storefmt.h).  It owns two
 * persistent arrays (segarray.h):
 *	 - records:  record number -> record head, an 8-byte word holding the
 *				 offset of the record's newest version (0 = unused number);
 *	 - versions: version number -> offset of that version.
 * Version numbers (n >= 1) are what PostgreSQL sees as TIDs (block =
 * (n - 1) / 291, offset = (n - 1) % 291 + 1, so version 1 is (0,1) as on
 * heap; done by the PG layer, src/pg/row/nvm_tid.h): every version has its own
 * TID, because triggers, foreign keys and EvalPlanQual re-fetch old and new
 * rows by TID.
 *
 * A version chain runs from the head, newest to oldest, through prev.  A
 * delete pushes a tombstone.  An update pushes a new version; if it changes
 * no indexed column the new version inherits index_root (the version number
 * of the first version of its "index run") and gets no index entries; index
 * entries always hold an index_root.  An index fetch of TID t walks the
 * chain to the version its snapshot sees and returns it only if that
 * version's index_root is t: so an index entry never leads to a version
 * whose key differs from the entry's (btree does not recheck).
 *
 * Persist order for a write (insert, update, delete):
 *	 1. version numbers (and a record number for an insert) are taken with
 *		fetch-and-add on the table's counters;
 *	 2. the version (header + data, prev = the head value read) and its
 *		version slot are written and flushed, together with the counter
 *		lines, and drained: the version is durable before anybody can reach
 *		it, and a durable counter never hands its numbers out again;
 *	 3. the head is switched with a compare-and-swap from the value read in
 *		step 2 to the new version (a failed CAS means a concurrent writer:
 *		conflict), and flushed; the drain at commit makes it durable before
 *		the commit status.
 *	 A clone also raises its original's counter in step 2 (see "Reuse of
 *	 numbers" below).
 *	 A crash after 3 but before commit leaves the new version at the head of
 *	 the chain with a txid whose status is not final: recovery makes it
 *	 ABORTED and readers skip it.
 *
 * Reuse of numbers.  Garbage collection (gc.h) gives record and version
 * numbers back to per-table free lists, kept in the arrays themselves
 * (a free entry holds the next free number) with the list head in the
 * descriptor, tagged against ABA.
 *
 * Numbers of a clone (nvm_table_clone, for SET TABLESPACE, which keeps the
 * table's indexes) must never be handed out again by the table it was
 * cloned from, which is in use again if the move rolls back or the server
 * crashes before it commits, while the indexes keep the entries made for
 * the clone's new versions.  So the original's version free list is
 * emptied before the clone is installed, and a clone raises the version
 * counter of its original (number_floor_of, and that one's, transitively)
 * above every number it takes from its own counter, flushed with the new
 * version and drained before the version is published.  The link is
 * cleared, persisted, before the original's storage is freed.  (The
 * field shares the counter's cache line, which older descriptors have
 * zeroed: no format change.)  Persist orders:
 *	 - push: the entries are written and flushed, drained, then the head is
 *	   switched with a compare-and-swap and flushed;
 *	 - pop: the head is switched to the next entry, flushed and drained
 *	   before the number is used, so a crash never leaves a head naming an
 *	   entry that is in use (a crash in between leaks the popped number).
 *	   A pop that finds a head naming an entry that is not free (a crash
 *	   at the wrong moment of an older pop) drops the rest of the list.
 */
#ifndef NVM_STORE_H
#define NVM_STORE_H

#include "nvm_types.h"
#include "segarray.h"
#include "storefmt.h"
#include "tables.h"		/* the tables whose rows these are */
#include "visibility.h"		/* the write rule asks nvm_version_status */

#define NVM_TUPLES_PER_BLOCK	291 /* MaxHeapTuplesPerPage: tidbitmap.c rejects more */

/* The transaction writing (txn.h); the store takes it by pointer only. */
typedef struct NvmTxn NvmTxn;

/* Result of a write attempt. */
typedef enum NvmWriteResult
{
	NVM_WRITE_OK = 0,
	NVM_WRITE_INVISIBLE,		/* the version is not visible to the view at all */
	NVM_WRITE_SELF_MODIFIED,	/* already changed by this transaction, this or a later command */
	NVM_WRITE_UPDATED,			/* a committed newer version exists (not in the snapshot) */
	NVM_WRITE_DELETED,			/* ... and it is a tombstone */
	NVM_WRITE_BEING_MODIFIED,	/* another running transaction has a newer version */
	NVM_WRITE_NO_SPACE			/* the pool is full */
} NvmWriteResult;

/* Details of a conflict, for TM_FailureData. */
typedef struct NvmConflict
{
	uint64_t	newer_version_no;	/* the newer version (its TID) */
	uint64_t	newer_txid;
	uint32_t	newer_cid;		/* for SELF_MODIFIED */
	bool		newer_is_tombstone;
	bool		newer_is_moved;	/* a tombstone of nvm_record_move_out */
} NvmConflict;

/*
 * Moved numbers.  On a primary a version number names one version for as
 * long as any snapshot may see it: a number is given again only after its
 * version was collected.  A standby's replay gives each version the
 * primary's number (replica.h), and the version that number named on the
 * standby may still be seen by a standby query's snapshot: the number has
 * moved away from it, and that version is found through its record's chain
 * alone.  nvm_store_note_numbers_moved records in shared memory that this
 * happened since the server started (replay calls it before it moves a
 * number); nvm_store_numbers_moved says whether it did, so that readers
 * that find rows by version number find them by record instead (also after
 * a promotion, for the snapshots taken before it), until the next start.
 * The flag lives in the tables' shared memory (tables.c).
 */
extern void nvm_store_note_numbers_moved(void);
extern bool nvm_store_numbers_moved(void);

/* The tables: the directory and a table's life cycle (tables.h, included above). */

/*
 * Version and record access (a record's head, where readers start, is
 * nvm_record_head in visibility.h)
 */
extern NvmVersion *nvm_version_by_no(const NvmTable *t, uint64_t version_no);
/* the same, the slot found through c (segarray.h; t's version slots', or zeroed) */
extern NvmVersion *nvm_version_by_no_cached(const NvmTable *t, uint64_t version_no,
											NvmSegCache *c);
extern uint64_t nvm_table_record_limit(const NvmTable *t);	/* record numbers are < this */
extern uint64_t nvm_table_version_limit(const NvmTable *t); /* version numbers are < this */

/*
 * nvm_version_record_no returns the record that version number n belongs
 * to: the version's, or a redirect's; 0 if n names neither.
 */
extern uint64_t nvm_version_record_no(const NvmTable *t, uint64_t version_no);

/* Raw access to a record head or version slot (for garbage collection). */
extern _Atomic uint64_t *nvm_record_head_slot(const NvmTable *t, uint64_t record_no);
extern _Atomic uint64_t *nvm_version_slot(const NvmTable *t, uint64_t version_no);

/*
 * Free lists.  nvm_numbers_push gives back the n numbers in nums (their
 * entries are overwritten); nvm_numbers_count walks the list.
 */
extern void nvm_numbers_push(NvmSegArray *arr, _Atomic uint64_t *list, const uint64_t *nums, size_t n);
extern uint64_t nvm_numbers_count(NvmSegArray *arr, _Atomic uint64_t *list);

/* Writes (see the persist order above). */
extern NvmWriteResult nvm_record_insert(NvmTable *t, NvmTxn *txn, int level, uint32_t cid,
										const void *data, uint32_t len,
										uint64_t *version_no_out);

/*
 * nvm_record_insert_many creates n new records (COPY: PostgreSQL's
 * multi_insert), the i-th with one version holding data[i] (len[i] bytes),
 * whose number goes to version_nos[i], with one drain for all of them.
 * Persist order (the single insert's, steps taken for the whole batch):
 *	 1. the record and version numbers of every row are taken (off the free
 *		lists, else reserved from the counters with one fetch-and-add);
 *	 2. every version (prev 0), its version slot and its write-log entry
 *		are written and flushed, then the counter lines: one drain makes
 *		them all durable;
 *	 3. only then is each record head stored (the numbers are ours alone)
 *		and flushed; the drain at commit makes them durable before the
 *		commit status.
 *	 So no head, durable or not, names a version that is not durable: a
 *	 crash before the drain leaves no row reachable, one during step 3 some
 *	 rows reachable, all of a transaction that is not committed, which
 *	 recovery makes ABORTED from the durable write log.  *done is the
 *	 number of rows inserted (the first *done of data): all n and
 *	 NVM_WRITE_OK, or fewer and NVM_WRITE_NO_SPACE when the pool filled up
 *	 (those rows are published; numbers reserved and not used stay unused).
 */
extern NvmWriteResult nvm_record_insert_many(NvmTable *t, NvmTxn *txn, int level,
											 uint32_t cid, int n,
											 const void *const *data,
											 const uint32_t *len,
											 uint64_t *version_nos, int *done);

/*
 * nvm_record_update pushes a new version (or a tombstone when data is NULL)
 * onto the chain of the version numbered old_version_no, provided that this
 * version is still the newest one the transaction may overwrite (MCSI paper
 * Fig. 8): no committed or running newer version by anybody else, none by
 * this transaction in this or a later command.
 */
extern NvmWriteResult nvm_record_update(NvmTable *t, NvmTxn *txn, int level, uint32_t cid,
										uint64_t old_version_no,
										const void *data, uint32_t len,
										bool new_index_run,
										uint64_t *version_no_out,
										NvmConflict *conflict);

/*
 * nvm_record_move_out is nvm_record_update's delete for a row that moves to
 * another table (an update of a partition key): the tombstone it pushes is
 * marked NVM_VINFO_MOVED, so that a writer that meets it learns the row
 * moved rather than vanished (conflict->newer_is_moved).  The mark is part
 * of the tombstone's first write, so it persists in step 2 like the rest.
 */
extern NvmWriteResult nvm_record_move_out(NvmTable *t, NvmTxn *txn, int level, uint32_t cid,
										  uint64_t old_version_no,
										  uint64_t *version_no_out,
										  NvmConflict *conflict);

/*
 * nvm_record_kill marks a version written by txn as aborted at once (for
 * a speculative insertion that lost its race, and for a writer that gives
 * way to a row locker, step W4 of the PG layer's nvm_rowlock.c); readers
 * skip it from now on.
 * Returns false if the version is not txn's.
 */
extern bool nvm_record_kill(NvmTable *t, NvmTxn *txn, uint64_t version_no);

/*
 * Row-lock words.  A table gets, at the first row lock taken in it, a third
 * persistent array: one 8-byte word per record number, zero until written.
 * What a word means belongs to the PG layer (row locks, nvm_rowlock.c);
 * the core creates the array and frees it with the table, and never reads
 * a word.  Words need not be durable: the PG layer persists the few that
 * must outlive a restart.  Creation order: the array's directory block is
 * allocated zeroed and drained before its offset is installed (compare-
 * and-swap) in the descriptor, flushed and drained; segments grow as in
 * segarray.h.  A crash in between leaks the block.  A clone (SET
 * TABLESPACE) starts without lock words.
 *
 * nvm_record_lock_word returns the word of record_no, creating the array
 * and its segment if create is true (NULL if they are missing and create
 * is false, or if the pool is full).
 */
extern _Atomic uint64_t *nvm_record_lock_word(const NvmTable *t, uint64_t record_no,
											  bool create);

#endif							/* NVM_STORE_H */
