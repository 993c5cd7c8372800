/*
 * indexlog.h
 *	  The index log: which index entries transactions committed without a
 *	  flush of the external log (PostgreSQL's WAL) have inserted, kept in
 *	  the pool so that entries whose external records a crash loses can be
 *	  inserted again.
 *
 * A row lives in the pool; its index entries live in WAL-logged indexes.  A
 * transaction that wrote only rows and index entries commits on its status
 * word in the pool, without waiting for the WAL that holds its index
 * entries (the log-free commit of the PG layer, nvm_commit.c).  Before its
 * status becomes committed it appends one entry per index root it created
 * (a version whose index entries name it: an insert, or an update that
 * changed an indexed column) to its clock slot's ring:
 *
 *	 (table descriptor, version number of the root, log position)
 *
 * where the log position is the end of the transaction's last record in the
 * external log: once the external log is durable up to there, every index
 * entry of the transaction is.
 *
 * The ring (one per slot, allocated from the pool at its first use and
 * hanging off NvmSlotPersist.indexlog_off) holds the entries
 * [tail, head) of an unbounded sequence, entry i at i % capacity.  The
 * slot's owner is its only writer.  Before appending, it moves the tail
 * past every entry whose position the external log has made durable; when
 * the ring has no room for the new entries even then, it reports so and
 * the caller flushes the external log (which frees the whole ring) or does
 * without the ring.  So the ring is bounded, and what it holds after a
 * crash is roughly the tail of the external log that may be lost.
 *
 * Persist order (append): the new entries and the header's head and tail
 * are written and flushed, not drained; the drain that precedes the
 * transaction's commit status (txn.h) makes them durable before the status
 * says committed.  A crash before that drain may leave any subset of these
 * lines durable: a head that names entries that did not reach the media
 * names entries of an earlier lap (or zeroes), and a tail moved too far
 * only drops entries whose records were durable.  Both are harmless,
 * because repairing an entry means "make sure the index entries of this
 * root exist", which is right for any root of a live table at any time,
 * and a stale entry is validated (live table, version number in range)
 * before it is used.
 *
 * Recovery (nvm_indexlog_recover, at start-up after MCSI recovery and the
 * table sweep): after a clean shutdown the external log is complete and the
 * rings are emptied.  After a crash, every entry in [tail, head) of every
 * ring whose table is still in the directory is copied, with the entries a
 * previous start left unrepaired, into one repair list (a new block hanging
 * off NvmPoolRoot.index_repair_off); then the rings are emptied.  Persist
 * order: the new list is durable (drain) before the root points at it
 * (persisted), and the root points at it before the rings are emptied
 * (persisted) and the old list is freed.  A crash in between copies entries
 * twice (harmless) or leaks the old list.  The positions are not kept: they
 * belong to the log before the crash, which recovery may or may not have
 * replayed, and new records reuse positions past its end; whether an index
 * entry survived is checked in the index itself when it is repaired.  So
 * recovery costs a pass over the rings (bounded), never over the data.
 *
 * Repair (the PG layer, before any snapshot can see the table):
 * nvm_repair_versions_for lists the entries of one table, the caller makes
 * sure their index entries exist, makes what it inserted durable in the
 * external log, and then nvm_repair_done clears the entries (persisted).
 * When every entry is done the list stays in place (readers may still be
 * walking it) and is freed by the next start.
 *
 * External entries.  The ring also carries entries of the external layer's
 * own that must outlive a crash that loses the external log (the PG layer
 * logs the sequences a log-free commit used this way, nvm_seqlog.c): an
 * entry whose table word has NVM_INDEXLOG_EXTERNAL set is not an index root
 * but two opaque words (table and version_no; the layer may use several
 * consecutive entries for one item, appended in one call with one
 * position).  They are appended, dropped and made durable exactly as index
 * roots, and recovery after a crash copies those in [tail, head), in ring
 * order, with the entries a previous start left uncleared, into the
 * external list (NvmPoolRoot.external_off), with the same persist order as
 * the repair list's (the new list durable before the root names it, the
 * root before the rings are emptied, then the old list freed).  After a
 * clean stop the external list stays as it is.  The external layer clears
 * its entries (nvm_external_clear, persisted) once it has made what they
 * stand for durable in the external log; a torn append may leave entries of
 * an earlier lap, which the layer must recognise (it checksums its items).
 */
#ifndef NVM_INDEXLOG_H
#define NVM_INDEXLOG_H

#include "nvm_types.h"

/* Entries of a new ring (a ring keeps the capacity it was created with). */
#define NVM_INDEXLOG_DEFAULT_CAPACITY	1024

/* One index root of a committed transaction. */
typedef struct NvmIndexLogEntry
{
	nvm_off		table;			/* the table's descriptor */
	uint64_t	version_no;		/* the root: index entries name this number */
	uint64_t	lsn;			/* end of the transaction's records in the external log */
} NvmIndexLogEntry;

/*
 * A slot's ring (in the pool): a header of one cache line's size, then the
 * entries.  (Pool blocks are 8-aligned only, so no alignment is declared.)
 */
typedef struct NvmIndexLogRing
{
	uint64_t	capacity;
	uint64_t	head;			/* entries ever appended */
	uint64_t	tail;			/* entries before this one need no repair */
	uint64_t	pad[5];
	NvmIndexLogEntry entries[];
} NvmIndexLogRing;

/* Marks an external entry (table word): see "External entries" above. */
#define NVM_INDEXLOG_EXTERNAL	(UINT64_C(1) << 63)

/* An entry of the external list: both words 0 once cleared. */
typedef struct NvmExternalEntry
{
	_Atomic uint64_t word0;		/* the ring entry's table, flag included */
	uint64_t	word1;			/* the ring entry's version_no */
} NvmExternalEntry;

/* The external list (in the pool, NvmPoolRoot.external_off). */
typedef struct NvmExternalList
{
	uint64_t	count;
	_Atomic uint64_t remaining; /* entries not cleared yet */
	uint64_t	pad[6];
	NvmExternalEntry entries[];
} NvmExternalList;

/* An entry of the repair list: table 0 once repaired. */
typedef struct NvmIndexRepairEntry
{
	_Atomic nvm_off table;
	uint64_t	version_no;
} NvmIndexRepairEntry;

/* The repair list (in the pool, NvmPoolRoot.index_repair_off). */
typedef struct NvmIndexRepairList
{
	uint64_t	count;
	_Atomic uint64_t remaining; /* entries not repaired yet */
	uint64_t	pad[6];
	NvmIndexRepairEntry entries[];
} NvmIndexRepairList;

/*
 * Capacity of the rings created from now on in this process (tests make it
 * small to exercise a full ring); 0 restores the default.
 */
extern void nvm_indexlog_set_capacity(uint32_t capacity);

/*
 * nvm_indexlog_room returns how many entries slot's ring can take at most
 * (its capacity; the default capacity if it has no ring yet).
 */
extern uint64_t nvm_indexlog_room(uint32_t slot);

/*
 * nvm_indexlog_append appends n entries to slot's ring (created if the slot
 * has none), after dropping the entries at or below durable_lsn, the
 * position up to which the external log is known durable.  Returns false,
 * appending nothing, if the ring has no room for them (or no ring could be
 * allocated): the caller must then make its records durable otherwise.
 * Only the slot's owner calls it.  Flushed, not drained (see above).
 */
extern bool nvm_indexlog_append(uint32_t slot, const NvmIndexLogEntry *entries,
								size_t n, uint64_t durable_lsn);

/*
 * nvm_indexlog_pending returns the number of entries of slot's ring that
 * are not known durable in the external log (for tests and statistics).
 */
extern uint64_t nvm_indexlog_pending(uint32_t slot);

/*
 * nvm_indexlog_recover runs once at start-up, alone, after MCSI recovery
 * and the table sweep.  wal_complete says the external log holds every
 * record written before the stop (a clean shutdown).  Returns the number
 * of entries waiting for repair, or -1 if the pool had no room for the
 * repair list or the external list (the rings stay as they are).
 */
extern int64_t nvm_indexlog_recover(bool wal_complete);

/*
 * nvm_external_list returns the external list if it holds entries not
 * cleared yet, else NULL (a cheap test for the fast path).
 */
extern NvmExternalList *nvm_external_list(void);

/*
 * nvm_external_clear clears the entries [from, from + n) of the external
 * list (persisted) and returns how many of them it cleared (entries
 * cleared already do not count).
 */
extern uint64_t nvm_external_clear(uint64_t from, uint64_t n);

/*
 * nvm_repair_list returns the repair list if entries wait for repair,
 * else NULL; a cheap test for the fast path.
 */
extern NvmIndexRepairList *nvm_repair_list(void);

/*
 * nvm_repair_count_for returns how many entries of the repair list name
 * table desc and wait for repair; nvm_repair_versions_for copies the
 * version numbers of at most max of them into out and returns how many it
 * copied.
 */
extern uint64_t nvm_repair_count_for(nvm_off desc);
extern uint64_t nvm_repair_versions_for(nvm_off desc, uint64_t *out, uint64_t max);

/* nvm_repair_names says whether the repair list names root version_no of table desc. */
extern bool nvm_repair_names(nvm_off desc, uint64_t version_no);

/*
 * nvm_repair_done clears the entries of the repair list that name table
 * desc (persisted), once the caller has made its repairs durable.
 * Returns how many it cleared.
 */
extern uint64_t nvm_repair_done(nvm_off desc);

#endif							/* NVM_INDEXLOG_H */
