/*
 * replica.h
 *	  A standby's replay of the primary's committed versions into its own
 *	  pool: versions installed with the numbers the primary gave them.
 *
 * A physical standby replays the primary's WAL.  PostgreSQL replays the
 * btree records, whose index entries hold TIDs, that is version numbers
 * (store.h); so the standby's pool must give every version the number the
 * primary gave it, and every record the primary's record number.  Where the
 * bytes go is the standby's own business: it allocates for itself.
 *
 * The replaying process runs one transaction of its own per replayed
 * commit (txn.h), so a standby's snapshots see replayed commits whole and
 * in the order of the WAL: a commit record is written on the primary before
 * the transaction's completion is published (the PG layer's redo), so a
 * transaction that saw another one's rows comes later in the WAL.
 *
 * nvm_replica_install puts one version of a replayed commit into the table:
 *	 - its version slot is set to the new version, whatever the slot held:
 *	   the primary gives a number again only after it collected the
 *	   version that had it (the old version, if the standby still keeps
 *	   it, stays reachable from its own chain, never through the number);
 *	 - the record's head is set to the new version, which chains onto
 *	   the versions the standby holds for that record number (for an
 *	   insert into a number the primary reused, the deleted record's
 *	   versions, so that older snapshots of standby queries still find
 *	   what they saw);
 *	 - the table's counters are raised above both numbers, so that a
 *	   promoted standby never hands them out again; and a free list of the
 *	   standby's (copied with the pool) that holds either number is
 *	   dropped (its numbers are left unused), so that a promoted standby
 *	   never pops a number in use.
 * An insert whose record number still holds versions here (the primary
 * collected a deleted record and reused its number; the standby keeps the
 * old chain for its queries) continues that chain: the new version is not
 * marked inserted, and older snapshots still find what they saw.  A
 * version the standby keeps while its number was given to a new version
 * no longer owns the number (the integrity check knows it: verify.c).
 * It is idempotent: a version whose number already names a version of the
 * same record with the same contents that is committed (or in doubt, a
 * prepared transaction's) is left alone (replay starts again from a
 * restart point after a restart of the standby).
 *
 * Persist order: the version, the counters and the write-log entry are
 * flushed, then drained; then the version slot and the head are switched
 * (plain stores: the replaying process is the only writer) and flushed;
 * the replay transaction's commit makes them durable before its status.
 * Unlike a primary's write (store.h), the slot is written after the drain:
 * the number may name an older version the standby still keeps, and a
 * crash must never leave it naming a version whose bytes are not durable.
 * A crash in between leaves a version of a transaction that recovery
 * aborts (and unlinks, if it is the head); replay installs it again.
 *
 * Reads while replay runs.  Queries of a hot standby read the pool while
 * replay writes it, and every snapshot must see each row in exactly one
 * version.  Replay writes each version of a replayed commit in this order
 * (nvm_replica_install; R1..R3 are marked in replica.c):
 *	 R1. the version (prev = the record's head), the table's record and
 *		 version counters raised above its numbers, the write-log entry:
 *		 flushed and drained;
 *	 R2. the version slot of its number, a release store: the number names
 *		 the new version from now on, whatever it named before;
 *	 R3. the record's head, a release store: a chain grows at its head
 *		 only, and nothing a pinned snapshot may see is ever unlinked from
 *		 below it (replay prunes under the standby's own collection
 *		 horizon, which the queries' snapshots hold back: gc.h);
 *	 R4. at the commit's last part, the replay transaction's status, then
 *		 its completion (txn.h): snapshots taken from then on see all of
 *		 the commit, earlier ones none of it.
 * A standby reader, whose snapshot was taken before it reads anything:
 *	 S1. reads the table's record limit: every version its snapshot sees
 *		 belongs to a record below it (R1 raised the counter before R4,
 *		 which came before the snapshot);
 *	 S2. for each record number below the limit, reads the head (acquire)
 *		 and walks the chain to the first version its snapshot sees
 *		 (nvm_chain_visible), a row unless that is a tombstone.
 * Each version the snapshot sees is on its record's chain from R3 on and
 * stays there while the snapshot is pinned, and a chain holds at most one
 * version a snapshot sees; so S2 returns each row exactly once, in the
 * version the snapshot sees, however replay interleaves with it.  A
 * reader must not find rows by version number as a primary's sequential
 * scan does (store.h): R2 takes a number that the primary gave again away
 * from the version it named, which a standby snapshot may still see (the
 * primary collected it under its own snapshots' horizon, not the
 * standby's), and a scan by number would miss that row
 * (nvm_store_note_numbers_moved says it happened, before R2).  Index
 * fetches go by number too, but only by an index root's, which the
 * primary gives again only after the index entries naming it are removed,
 * and replay of that removal waits until no standby snapshot can see a
 * version of the run (the PG layer's CONFLICT record).
 */
#ifndef NVM_REPLICA_H
#define NVM_REPLICA_H

#include "nvm_types.h"
#include "storefmt.h"
#include "txn.h"

/* One version of a replayed commit. */
typedef struct NvmReplicaVersion
{
	uint64_t	record_no;
	uint64_t	version_no;
	uint64_t	index_root;
	uint64_t	kind;			/* NVM_VINFO_TOMBSTONE, _MOVED, _INSERTED */
	const void *data;
	uint32_t	len;
} NvmReplicaVersion;

typedef enum NvmReplicaResult
{
	NVM_REPLICA_INSTALLED = 0,
	NVM_REPLICA_PRESENT,		/* already there (replayed before) */
	NVM_REPLICA_NO_SPACE		/* the pool is full */
} NvmReplicaResult;

extern NvmReplicaResult nvm_replica_install(NvmTable *t, NvmTxn *txn,
											const NvmReplicaVersion *rv);

/*
 * Loading a rebuilt pool from checkpoint files (the PG layer's rebuild,
 * which loads tables in several threads at once, each its own records).
 * A row is loaded in two steps, so that the caller drains once per batch
 * of rows instead of once per row:
 *	 - nvm_replica_load_write writes the row's version (the only one of its
 *	   record: inserted, committed, inlined, its creator txid, which the
 *	   caller commits once every row is loaded) and flushes it; it returns
 *	   its offset, or 0 with *present set if the record already has this
 *	   version (a load cut short by a crash and done again), or 0 with
 *	   *present clear if the pool has no room;
 *	 - after a drain, nvm_replica_load_link makes the version reachable:
 *	   its version slot, the record's head, and the index root's slot
 *	   redirected to the record if the root is another number; flushed, and
 *	   the table's counters raised above both numbers.
 * Persist order: every version of a batch is flushed and drained before
 * any of them is linked; the caller drains the links before it says the
 * load is done.  Nothing else writes the table meanwhile, and no two
 * threads load the same record.
 */
extern nvm_off nvm_replica_load_write(NvmTable *t, uint64_t txid, const NvmReplicaVersion *rv,
									  bool *present);
extern void nvm_replica_load_link(NvmTable *t, nvm_off version);

/*
 * nvm_replica_raise_counters raises the table's record and version
 * counters to at least next_record and next_version (flushed and drained):
 * numbers the primary handed out (an aborted write's among them, which
 * index entries may name) are never handed out by a promoted standby.
 */
extern void nvm_replica_raise_counters(NvmTable *t, uint64_t next_record,
									   uint64_t next_version);

/*
 * nvm_table_counters reads the table's record and version counters (the
 * primary logs them with its commits).
 */
extern void nvm_table_counters(const NvmTable *t, uint64_t *next_record,
							   uint64_t *next_version);

/*
 * Reserved version numbers.  Index entries name version numbers, and
 * PostgreSQL logs them (the btree records) before the transaction that
 * wrote the version ends, committed or not.  So that a promoted standby
 * never gives such a number to another row, the primary logs, before it
 * uses a version number at or above the table's redo_reserved, a record
 * that reserves the numbers up to a higher limit, and raises redo_reserved
 * to that limit once the record is in the WAL; a standby raises its
 * counter to every limit it replays.  redo_reserved means "logged in this
 * run of the server": nvm_replica_forget_reservations zeroes it in every
 * table at start-up, as a crash may have lost the records.
 */
static inline uint64_t
nvm_table_redo_reserved(const NvmTable *t)
{
	return atomic_load_explicit(&t->desc->redo_reserved, memory_order_acquire);
}
extern void nvm_table_raise_redo_reserved(NvmTable *t, uint64_t limit);
extern void nvm_replica_forget_reservations(void);

/*
 * Redo positions.  The primary notes in each table the end of the last
 * redo record of a commit that wrote it (nvm_table_note_redo: raised and
 * flushed after the record is inserted; the process's next drain makes it
 * durable).  After a crash, a table whose position lies beyond what the
 * WAL surely kept (durable_end: its last checkpoint) may have lost redo its
 * standbys need, and so may the tables of each slot's last committed
 * transaction (a crash between its status and its record):
 * nvm_replica_mark_resync marks both, persisted, with NVM_REDO_RESYNC as
 * their position, and returns the number of tables so marked (those marked
 * before included).  The PG layer logs a marked table's rows again
 * (nvm_resync.c) and then notes the position of that redo, which clears
 * the mark; a mark survives restarts until then.
 */
#define NVM_REDO_RESYNC			UINT64_MAX
extern void nvm_table_note_redo(NvmTable *t, uint64_t lsn);
extern void nvm_table_set_redo(NvmTable *t, uint64_t lsn);
static inline bool
nvm_table_needs_resync(const NvmTable *t)
{
	return atomic_load(&t->desc->redo_lsn) == NVM_REDO_RESYNC;
}
extern uint32_t nvm_replica_mark_resync(bool after_crash, uint64_t durable_end);

/*
 * nvm_replica_newest_committed returns the newest committed version of the
 * record (a tombstone if it was deleted), NULL if it has none.
 */
extern NvmVersion *nvm_replica_newest_committed(const NvmTable *t, uint64_t record_no);

/*
 * A standby's side of a resync (the primary logs a table's committed rows
 * again): nvm_replica_delete ends the record with a tombstone of its own
 * number (above every number handed out, raising the counter), and
 * nvm_replica_redirect makes version number root lead to record_no if it
 * does not already (a redirect, as collection leaves for an index root).
 */
extern NvmReplicaResult nvm_replica_delete(NvmTable *t, NvmTxn *txn, uint64_t record_no);
extern void nvm_replica_redirect(NvmTable *t, uint64_t root, uint64_t record_no);

#endif							/* NVM_REPLICA_H */
