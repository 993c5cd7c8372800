/*-------------------------------------------------------------------------
 *
 * nvm_replay.c
 *	  The standby's side of physical replication of nvm tables: the startup
 *	  process replays the primary's nvm redo records into the standby's own
 *	  pool.
 *
 * A standby made from a cold copy of the primary (its data directory and
 * its pool, copied while the primary was stopped) has a pool of its own
 * (nvm_binding.c: the "standby" state).  The startup process replays:
 *
 *	 - COMMIT: one transaction of the startup process's own (a clock slot
 *	   it holds until it exits) installs the versions with the primary's
 *	   numbers (core replica.h) and commits; the parts of a large commit go
 *	   into one such transaction, committed at the last part.  A PREPARE's
 *	   versions are kept in doubt under its xid instead, as the primary
 *	   keeps them, and resolved from the commit log.  Queries on
 *	   the standby take snapshots of the standby's own clocks, so each sees
 *	   a prefix of the replayed commits, whole; and they find rows through
 *	   the records' chains, not by version number, as the order replay
 *	   writes in requires (core replica.h, "Reads while replay runs";
 *	   am/nvm_scan.c): under a transfer load on the primary, every read on
 *	   the standby sees every row once and conserves the total.
 *	 - STORAGE: the table's storage is created (if missing), dropped,
 *	   emptied or cloned, as on the primary.
 *	 - RESERVE: the table's version counter is raised to the limit.
 *	 - RESYNC: after a crash of the primary, the rows of a table that may
 *	   have lost COMMIT records, logged again (nvm_resync.c); the table
 *	   comes to hold exactly them (replay_resync).
 *	 - LOCKS: the row-lock words of a prepared transaction are stored in
 *	   the table's lock words, as the primary persisted them, so that a
 *	   promoted standby holds the locks of transactions still prepared.
 *	 - CONFLICT: the primary is about to remove index entries of index runs
 *	   dead for its own snapshots; replay waits until no query of the
 *	   standby can see a version of those runs any more, and after
 *	   max_standby_streaming_delay cancels the queries holding nvm
 *	   snapshots (replay_conflict), so a standby query never misses a row
 *	   whose index entry the primary removed.
 *
 * Restarts.  After a restart the standby replays again from its restart
 * point.  The pool keeps the end of the last record applied
 * (nvm_pool_note_replayed, persisted after the record's effects: after the
 * replayed commit, after the storage operation), and records up to it are
 * skipped, so a record is never applied over the effects of later ones
 * (a later commit may have given one of its numbers to another row).  A
 * crash between a record's effects and the note makes replay apply that
 * one record again, and that is idempotent: an installed version is
 * recognised by its number, record and contents, a table that exists is
 * not created again, a reset or a drop done is done again harmlessly.  A
 * crash in the middle of a replayed commit leaves a transaction of the
 * startup process that recovery aborts; replay installs it again.  While
 * the parts of a large commit are open, nothing is noted (they are not
 * committed: a restart must replay them again).
 *
 * Pruning on a standby.  The primary's pruning and VACUUM are not
 * replayed.  Replay prunes the chain of each row it updates as the
 * primary's updates do (gc.h), under the standby's own collection horizon,
 * which the snapshots of its queries hold back, so it never removes a
 * version a standby query may still read; numbers it frees stay unused
 * (nvm_gc_set_number_reuse), as they are the primary's to give.  A later
 * version with a number the primary reused takes the number over.  What
 * can take a row from a standby query is the removal of index entries,
 * which PostgreSQL replays: CONFLICT above.  The cost is memory: the standby's pool grows
 * with the versions written, until the standby is promoted and VACUUM
 * runs on it (doc/limitations.md).
 *
 * During crash recovery of a primary (its pool is not a standby's), the
 * records are skipped: the pool holds what they say.  The rebuild of a
 * pool a crash of the operating system tore or lost replays as a restored
 * backup does, after loading the pool's checkpoint files
 * (nvm_replay_files.c): a table's records before its file's position are
 * skipped (nvm_replay_before_file).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlogreader.h"
#include "access/xlogrecovery.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "postmaster/startup.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/standby.h"
#include "utils/timestamp.h"

#include "ckptmark.h"
#include "gc.h"
#include "indoubt.h"
#include "persist.h"
#include "pool.h"
#include "replica.h"
#include "store.h"
#include "txn.h"

#include "claim/nvm_binding.h"
#include "nvm_compat.h"
#include "nvm_settings.h"
#include "redo/nvm_rebuild.h"
#include "redo/nvm_redoenc.h"
#include "redo/nvm_redofmt.h"
#include "redo/nvm_replay.h"
#include "redo/nvm_replay_files.h"

static NvmTable open_table(const NvmTableKey *key);
static void replay_commit_data(const char *p, size_t len, XLogRecPtr read, XLogRecPtr end_rec);
static void replay_locks_data(const char *p, XLogRecPtr read);
static void resync_begin(const NvmTableKey *key, uint64 next_record, uint64 next_version);
static void resync_rows(XLogRecPtr where, const char *p, const char *end, uint64 nrows);
static void resync_end(void);

/* The startup process's own transaction, and the commit whose parts it holds. */
static int	replay_slot = -1;
static NvmTxn replay_txn;
static uint64 open_txid = 0;
static bool registered_exit = false;

/* A resync being replayed (open_txid is RESYNC_OPEN then). */
#define RESYNC_OPEN		PG_UINT64_MAX
static NvmTable resync_table;
static bool *resync_listed = NULL;	/* record numbers the primary listed */
static bool resync_partial = false; /* only lost rows: the others stay */
static uint64 resync_limit = 0;		/* entries of resync_listed */

/* replay_exit aborts an unfinished replayed commit and gives the slot back. */
static void
replay_exit(int code, Datum arg)
{
	if (replay_slot < 0)
		return;
	if (replay_txn.txid != NVM_INVALID_TXID)
		nvm_txn_abort(&replay_txn);
	nvm_slot_release(replay_slot);
	replay_slot = -1;
}

/* replay_begin gives the startup process a clock slot, once. */
static void
replay_begin(void)
{
	int			slot;

	if (replay_slot >= 0)
		return;
	slot = nvm_slot_acquire((uint32) MyProcPid);
	if (slot < 0)
		ereport(FATAL,
				(errcode(ERRCODE_TOO_MANY_CONNECTIONS),
				 errmsg("could not replay nvm redo: all clock slots of nvm pool \"%s\" are in use",
						nvm_pool_path_resolved)));
	replay_slot = slot;
	nvm_txn_init(&replay_txn, slot);
	/* replay prunes as updates do, but never hands a number out */
	nvm_gc_set_number_reuse(false);
	if (!registered_exit)
	{
		on_shmem_exit(replay_exit, (Datum) 0);
		registered_exit = true;
	}
}

/* report_full stops replay: the standby's pool has no room. */
static void
report_full(const NvmTableKey *key)
{
	ereport(FATAL,
			(errcode(ERRCODE_DISK_FULL),
			 errmsg("could not replay nvm redo for relfilenode %u/%u/%u: nvm pool \"%s\" is full",
					key->spc, key->db, key->rel, nvm_pool_path_resolved),
			 errhint("Give the standby a larger pool (nvm.pool_max_size), or make it again from a new copy of the primary.")));
}

static bool image_replayed = false;	/* by this process */

/*
 * replay_begin_for_files begins the replay transaction for a load of the
 * checkpoint files (nvm_replay_files.c) and returns it, its slot in *slot.
 */
static NvmTxn *
replay_begin_for_files(int *slot)
{
	replay_begin();
	*slot = replay_slot;
	return &replay_txn;
}

/* What a load of the checkpoint files needs of replay. */
static const NvmReplayFilesReplay files_replay = {
	.begin = replay_begin_for_files,
	.commit_data = replay_commit_data,
	.locks_data = replay_locks_data,
	.exit = replay_exit,
};

/*
 * nvm_replay_load_files_now loads a rebuilt pool from its checkpoint files
 * when recovery replayed no nvm record: the binding calls it at the first
 * access (claim/nvm_binding.c; nvm_replay_files_load_now).  Returns false
 * if there are no files.
 */
bool
nvm_replay_load_files_now(void)
{
	return nvm_replay_files_load_now(&files_replay);
}

/*
 * known_table opens key's table into *t; a data directory restored from a
 * base backup knows only the tables its replay has brought (the image's,
 * and those created after it), and skips what names another: the image
 * brings its rows later (nvm_backup.c).  A standby's pool has every table.
 */
static bool
known_table(const NvmTableKey *key, NvmTable *t)
{
	if (nvm_table_open(key, t))
		return true;
	if (nvm_binding_is_restore())
		return false;
	*t = open_table(key);
	return true;
}

/* open_table opens key's table in the standby's pool, creating it if missing. */
static NvmTable
open_table(const NvmTableKey *key)
{
	NvmTable	t;

	if (!nvm_table_open(key, &t) && !nvm_table_create(key, 0, &t))
		report_full(key);
	return t;
}

/* abort_open_commit drops the parts of a commit whose last part never came. */
static void
abort_open_commit(void)
{
	if (replay_slot >= 0 && replay_txn.txid != NVM_INVALID_TXID)
		nvm_txn_abort(&replay_txn);
	open_txid = 0;
	if (resync_listed != NULL)
		pfree(resync_listed);
	resync_listed = NULL;
}

/*
 * next_version reads the version at *p (an xl_nvm_version and its data, as
 * RESYNC ROWS records hold them; they must end by end) into rv, moves *p
 * past it, and returns its table reference (below ntables).  A record (at where) that does not hold it is
 * damaged.
 */
static uint16
next_version(XLogRecPtr where, const char **p, const char *end, uint16 ntables,
			 NvmReplicaVersion *rv)
{
	xl_nvm_version xv;

	if (*p + sizeof(xv) > end)
		elog(PANIC, "nvm redo record at %X/%X is truncated",
			 LSN_FORMAT_ARGS(where));
	memcpy(&xv, *p, sizeof(xv));
	*p += sizeof(xv);
	if (xv.table >= ntables || *p + xv.data_len > end)
		elog(PANIC, "nvm redo record at %X/%X is damaged",
			 LSN_FORMAT_ARGS(where));
	rv->record_no = xv.record_no;
	rv->version_no = xv.version_no;
	rv->index_root = xv.index_root;
	rv->kind = xv.kind;
	rv->data = *p;
	rv->len = xv.data_len;
	*p += xv.data_len;
	return xv.table;
}

/*
 * diff_image makes the image of a version the record logs as a diff
 * against the version it replaced (nvm_redoenc.c), from that version as
 * this pool holds it under its number: the primary logs a diff only
 * against a version the replaying side is certain to hold (the argument
 * is at nvm_redo.c's diff_base).  Where it is gone, the record is being
 * applied again (after a crash of this process before the note of its
 * end, and replay's pruning collected the version since), or the image of
 * a restored backup brought this very version: then the version itself is
 * here, and its own image is taken, which nvm_replica_install finds
 * present.  Anything else means this pool does not hold what the primary
 * wrote: replay stops.
 */
static void
diff_image(NvmRedoDecoder *dec, NvmRedoVersion *ver, NvmTable *t)
{
	NvmVersion *pred = nvm_version_by_no(t, ver->pred_version_no);
	NvmVersion *self;

	if (pred != NULL && pred->record_no == ver->rv.record_no && !nvm_version_is_tombstone(pred) &&
		nvm_redodec_apply_diff(dec, ver, pred->data, pred->data_len))
		return;
	self = nvm_version_by_no(t, ver->rv.version_no);
	if (self != NULL && self->record_no == ver->rv.record_no && !nvm_version_is_tombstone(self) &&
		!nvm_version_inlined_aborted(self))
	{
		ver->rv.data = self->data;
		ver->rv.len = self->data_len;
		return;
	}
	ereport(FATAL,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("could not replay nvm redo at %X/%X: version %llu of record %llu of relfilenode %u/%u/%u is logged as a change of version %llu, which this pool does not hold",
					LSN_FORMAT_ARGS(dec->where),
					(unsigned long long) ver->rv.version_no,
					(unsigned long long) ver->rv.record_no,
					t->desc->key.spc, t->desc->key.db, t->desc->key.rel,
					(unsigned long long) ver->pred_version_no),
			 errdetail("The primary logs an update as a change of the version before it, which every copy that replays its WAL in order holds."),
			 errhint("Make the standby again from a new copy of the primary.")));
}

/*
 * past_target_time says whether a commit lies beyond recovery_target_time,
 * and if so stops recovery right after its record, which is not applied.
 * PostgreSQL stops replay at the first commit record of its own past the
 * target; a log-free nvm commit has none (no xid), so replay does the same
 * at the first such nvm commit: it turns the target into the position of
 * the next record (recovery_target_lsn, not inclusive), so that nothing
 * after it (index entries, heap commits) is replayed either, and the nvm
 * rows and the rest of the cluster stop at the same point of the WAL.  A
 * commit with an xid has its PostgreSQL commit record before this one:
 * replay reaches it only if PostgreSQL replayed that, and applies it.
 */
static bool target_time_passed = false;

static bool
past_target_time(XLogRecPtr read, XLogRecPtr end_rec, const xl_nvm_commit *hdr)
{
	if (target_time_passed)
		return true;
	if (recoveryTarget != RECOVERY_TARGET_TIME || hdr->xid != InvalidTransactionId)
		return false;
	if (hdr->time > recoveryTargetTime ||
		(!recoveryTargetInclusive && hdr->time == recoveryTargetTime))
	{
		target_time_passed = true;
		recoveryTarget = RECOVERY_TARGET_LSN;
		recoveryTargetLSN = end_rec;
		recoveryTargetInclusive = false;
		ereport(LOG,
				(errmsg("nvm: recovery stops before an nvm commit of %s, past recovery_target_time",
						timestamptz_to_str(hdr->time)),
				 errdetail("The nvm commit at %X/%X has no PostgreSQL commit record; recovery stops at the next record.",
						   LSN_FORMAT_ARGS(read))));
	}
	return target_time_passed;
}

/*
 * replay_commit_data replays the body of a COMMIT record (from the WAL at
 * read .. end_rec, or from a checkpoint's in-doubt file: both invalid).
 */
static void
replay_commit_data(const char *p, size_t len, XLogRecPtr read, XLogRecPtr end_rec)
{
	const char *end = p + len;
	xl_nvm_commit hdr;
	NvmTable   *tables;
	NvmRedoDecoder dec;

	replay_begin();
	nvm_redodec_begin(&dec, read, p, end, &hdr);
	if ((hdr.flags & XLNVM_COMMIT_CONTINUED) == 0 && open_txid == 0 && read != InvalidXLogRecPtr &&
		past_target_time(read, end_rec, &hdr))
	{
		nvm_redodec_end(&dec);
		return;
	}
	if (hdr.flags & XLNVM_COMMIT_CONTINUED)
	{
		/* a restore starts within the WAL: the image holds the commit */
		if (open_txid != hdr.txid && (nvm_binding_is_restore() || target_time_passed))
		{
			nvm_redodec_end(&dec);
			return;
		}
		if (open_txid != hdr.txid)
			ereport(FATAL,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("could not replay nvm redo at %X/%X: a later part of the commit of nvm transaction %llu without its first parts",
							LSN_FORMAT_ARGS(read),
							(unsigned long long) hdr.txid),
					 errdetail("The primary writes the parts of a commit as one group of records; this WAL holds a part without the ones before it."),
					 errhint("Make the standby again from a new copy of the primary.")));
	}
	else if (open_txid != 0)
		abort_open_commit();

	tables = palloc(sizeof(NvmTable) * Max(hdr.ntables, 1));
	for (int i = 0; i < hdr.ntables; i++)
	{
		xl_nvm_table_ref ref;

		nvm_redodec_ref(&dec, &ref);
		if (!nvm_replay_before_file_at(&ref.key, read) && known_table(&ref.key, &tables[i]))
			nvm_replica_raise_counters(&tables[i], ref.next_record, ref.next_version);
		else
			tables[i].desc = NULL;
	}
	for (uint32 i = 0; i < hdr.nversions; i++)
	{
		NvmRedoVersion ver;
		NvmReplicaVersion rv;
		uint16		ti;

		nvm_redodec_next(&dec, &ver);
		ti = ver.table;
		if (tables[ti].desc == NULL)
			continue;
		if (ver.diff)
			diff_image(&dec, &ver, &tables[ti]);
		rv = ver.rv;
		switch (nvm_replica_install(&tables[ti], &replay_txn, &rv))
		{
			case NVM_REPLICA_NO_SPACE:
				report_full(&tables[ti].desc->key);
				break;
			case NVM_REPLICA_INSTALLED:
				/* the next checkpoint of this pool captures it */
				(void) nvm_ckpt_mark(&tables[ti], rv.record_no);
				/* what no query of the standby can see any more goes */
				if ((rv.kind & NVM_VINFO_INSERTED) == 0)
					nvm_gc_after_update(&tables[ti], rv.record_no);
				break;
			case NVM_REPLICA_PRESENT:
				break;
		}
	}
	nvm_redodec_end(&dec);
	pfree(tables);

	if (hdr.flags & XLNVM_COMMIT_MORE)
		open_txid = hdr.txid;
	else if (hdr.flags & XLNVM_COMMIT_PREPARED)
	{
		/*
		 * A prepared transaction stays in doubt under its xid, as on the
		 * primary: its slot is handed over (the startup process claims
		 * another for the next record), and the first snapshot after
		 * COMMIT or ROLLBACK PREPARED is replayed (or run after a
		 * promotion) resolves it from the commit log.  A tied commit's
		 * versions are replayed so too, and are usually its only record
		 * (redo/nvm_redo.c, tied_records_of); a later COMMIT record of
		 * the same transaction finds its versions already there.
		 */
		if (replay_txn.txid != NVM_INVALID_TXID)
		{
			nvm_txn_mark_indoubt(&replay_txn, (uint64) hdr.xid);
			nvm_txn_hand_over_indoubt(&replay_txn);
			replay_slot = -1;
		}
		open_txid = 0;
	}
	else
	{
		nvm_txn_commit(&replay_txn);
		open_txid = 0;
	}
}

static void
replay_commit(XLogReaderState *record)
{
	replay_commit_data(XLogRecGetData(record), XLogRecGetDataLen(record),
					   record->ReadRecPtr, record->EndRecPtr);
}

/*
 * note_applied records in the pool that every record up to end is applied,
 * unless the parts of a commit are open (they are not committed yet, so a
 * restart must replay them again).
 */
static void
note_applied(XLogRecPtr end)
{
	if (open_txid == 0)
		nvm_pool_note_replayed((uint64) end);
}

static void
replay_storage(XLogReaderState *record)
{
	xl_nvm_storage rec;
	NvmTable	t;
	nvm_off		detached = 0;

	memcpy(&rec, XLogRecGetData(record), sizeof(rec));
	if (nvm_replay_before_file(&rec.key, record))
		return;
	switch (rec.op)
	{
		case XLNVM_STORAGE_CREATE:
			/* a stale table of a relfilenode used again is replaced, as on the primary */
			if (!nvm_table_create(&rec.key, 0, &t))
				report_full(&rec.key);
			break;
		case XLNVM_STORAGE_DROP:
			(void) nvm_table_drop(&rec.key);
			break;
		case XLNVM_STORAGE_RESET:
			/* only a table its own transaction created: no query reads it */
			if (!nvm_table_open(&rec.key, &t))
			{
				/* a restore that has not seen the table: it is empty now */
				if (!nvm_table_create(&rec.key, 0, &t))
					report_full(&rec.key);
			}
			else if (!nvm_table_reset(&rec.key, 0, &t, &detached))
				report_full(&rec.key);
			if (detached != 0)
				nvm_table_free_detached(detached);
			break;
		case XLNVM_STORAGE_CLONE:
			if (!nvm_table_open(&rec.key, &t))
			{
				NvmTable	src;

				/* a restore brings the copy with the image if it lacks the source */
				if (!known_table(&rec.src, &src))
					break;
				if (!nvm_table_clone(&src, &rec.key, 0, NULL, 0, &t))
					report_full(&rec.key);
			}
			break;
		default:
			elog(PANIC, "nvm redo: unknown storage operation %u", rec.op);
	}
	/* a table created, emptied or cloned is captured whole next time */
	if (rec.op != XLNVM_STORAGE_DROP && nvm_table_open(&rec.key, &t))
		nvm_ckpt_mark_whole(&t);
}

static void
replay_reserve(XLogReaderState *record)
{
	xl_nvm_reserve rec;
	NvmTable	t;

	memcpy(&rec, XLogRecGetData(record), sizeof(rec));
	if (nvm_replay_before_file(&rec.key, record) || !known_table(&rec.key, &t))
		return;
	nvm_replica_raise_counters(&t, 0, rec.limit);
	nvm_table_raise_redo_reserved(&t, rec.limit);
	(void) nvm_ckpt_mark(&t, 0);
}

/*
 * resync_begin opens the rebuild of key's table as exactly the rows listed
 * next (a RESYNC group, or a checkpoint file): a transaction of the startup
 * process, the table's counters raised.
 */
static void
resync_begin(const NvmTableKey *key, uint64 next_record, uint64 next_version)
{
	replay_begin();
	if (open_txid != 0)
		abort_open_commit();
	resync_table = open_table(key);
	nvm_replica_raise_counters(&resync_table, next_record, next_version);
	resync_limit = nvm_table_record_limit(&resync_table);
	resync_listed = MemoryContextAllocZero(TopMemoryContext,
										   sizeof(bool) * Max(resync_limit, 1));
	open_txid = RESYNC_OPEN;
	resync_partial = false;
}

/*
 * resync_rows installs each of the nrows rows at p (ending by end; from
 * the record or file at where) that the table does not have as its
 * record's newest version, and makes its index root lead to the record.
 */
static void
resync_rows(XLogRecPtr where, const char *p, const char *end, uint64 nrows)
{
	for (uint64 i = 0; i < nrows; i++)
	{
		NvmReplicaVersion rv;

		(void) next_version(where, &p, end, 1, &rv);
		/* a partial resync lists deletions too; a whole one live rows */
		rv.kind = resync_partial ? (rv.kind & (NVM_VINFO_TOMBSTONE | NVM_VINFO_MOVED)) : 0;
		if (rv.record_no < resync_limit)
			resync_listed[rv.record_no] = true;
		switch (nvm_replica_install(&resync_table, &replay_txn, &rv))
		{
			case NVM_REPLICA_NO_SPACE:
				report_full(&resync_table.desc->key);
				break;
			case NVM_REPLICA_INSTALLED:
				(void) nvm_ckpt_mark(&resync_table, rv.record_no);
				break;
			case NVM_REPLICA_PRESENT:
				break;
		}
		if (rv.index_root != rv.version_no)
			nvm_replica_redirect(&resync_table, rv.index_root, rv.record_no);
	}
}

/*
 * resync_end deletes every record that was not listed (unless the resync
 * is partial), and commits.
 */
static void
resync_end(void)
{
	for (uint64 r = 1; !resync_partial && r < nvm_table_record_limit(&resync_table); r++)
	{
		NvmVersion *v;

		if (r < resync_limit && resync_listed[r])
			continue;
		v = nvm_replica_newest_committed(&resync_table, r);
		if (v == NULL || nvm_version_is_tombstone(v))
			continue;
		if (nvm_replica_delete(&resync_table, &replay_txn, r) == NVM_REPLICA_NO_SPACE)
			report_full(&resync_table.desc->key);
		(void) nvm_ckpt_mark(&resync_table, r);
	}
	nvm_txn_commit(&replay_txn);
	open_txid = 0;
	pfree(resync_listed);
	resync_listed = NULL;
}

/*
 * replay_resync makes a table hold exactly the rows the primary logs again
 * after a crash (nvm_resync.c) or in an image of the pool: BEGIN opens a
 * transaction of the startup process, ROWS installs each listed row that
 * the standby does not have as the record's newest version (and makes its
 * index root lead to the record), END deletes every record the primary
 * did not list and commits.  Queries see the table before or after, never
 * in between.  A rebuild skips the group of a table whose checkpoint file
 * is newer.
 */
static void
replay_resync(XLogReaderState *record)
{
	const char *p = XLogRecGetData(record);
	const char *end = p + XLogRecGetDataLen(record);
	xl_nvm_resync rec;
	static bool skipping = false;

	memcpy(&rec, p, sizeof(rec));
	p += sizeof(rec);
	if (rec.phase == XLNVM_RESYNC_BEGIN)
	{
		skipping = nvm_replay_before_file(&rec.key, record);
		if (!skipping)
		{
			resync_begin(&rec.key, rec.next_record, rec.next_version);
			resync_partial = rec.partial != 0;
		}
		return;
	}
	if (skipping)
	{
		if (rec.phase == XLNVM_RESYNC_END)
			skipping = false;
		return;
	}
	if (open_txid != RESYNC_OPEN ||
		memcmp(&rec.key, &resync_table.desc->key, sizeof(NvmTableKey)) != 0)
		ereport(FATAL,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("could not replay nvm redo at %X/%X: a resync of relfilenode %u/%u/%u without its beginning",
						LSN_FORMAT_ARGS(record->ReadRecPtr),
						rec.key.spc, rec.key.db, rec.key.rel),
				 errhint("Make the standby again from a new copy of the primary.")));
	if (rec.phase == XLNVM_RESYNC_ROWS)
		resync_rows(record->ReadRecPtr, p, end, rec.nrows);
	else
		resync_end();
}

/*
 * replay_image follows the image of the pool that the primary logs at the
 * start of a base backup (nvm_backup.c): its tables' RESYNC groups and
 * in-doubt transactions are replayed as such; an END whose BEGIN was
 * replayed too completes the image of a restored data directory
 * (nvm_binding_restore_image_replayed).  A restore starts replay at the
 * backup's start, so an image cut by it shows an END alone.
 */
static void
replay_image(XLogReaderState *record)
{
	static bool image_begun = false;
	xl_nvm_image rec;

	memcpy(&rec, XLogRecGetData(record), sizeof(rec));
	/* rows in checkpoint files: only a rebuild has loaded them */
	if (rec.rows_in_files && !nvm_binding_is_rebuild())
		return;
	if (rec.phase == XLNVM_IMAGE_BEGIN)
		image_begun = true;
	else if (rec.phase == XLNVM_IMAGE_END && image_begun)
	{
		image_begun = false;
		image_replayed = true;
		if (nvm_binding_is_restore())
			nvm_binding_restore_image_replayed();
	}
}

/*
 * runs_still_seen says whether a query of this standby may still see a
 * version of one of the index runs (under the collection horizon of the
 * standby's pinned snapshots; unsure counts as seen).
 */
static bool
runs_still_seen(NvmTable *t, const uint64 *roots, uint32 n, NvmHorizon *h)
{
	if (!nvm_gc_horizon(h))
		return true;
	for (uint32 i = 0; i < n; i++)
	{
		_Atomic uint64_t *slot = nvm_version_slot(t, roots[i]);

		/* a number this standby never had a version for is seen by nobody */
		if (slot == NULL || atomic_load(slot) == 0)
			continue;
		if (!nvm_gc_index_root_is_dead(t, roots[i], h))
			return true;
	}
	return false;
}

/* any_pinned says whether a query of this standby holds an nvm snapshot. */
static bool
any_pinned(void)
{
	for (int i = 0; i < (int) ProcGlobal->allProcCount; i++)
	{
		if (&ProcGlobal->allProcs[i] != MyProc && nvm_gc_is_pinned(i))
			return true;
	}
	return false;
}

/*
 * cancel_pinned cancels every query that holds an nvm snapshot, with the
 * error of a recovery conflict; the caller looks again afterwards.
 */
static void
cancel_pinned(void)
{
	for (int i = 0; i < (int) ProcGlobal->allProcCount; i++)
	{
		PGPROC	   *proc = &ProcGlobal->allProcs[i];
		VirtualTransactionId vxid;

		if (proc == MyProc || !nvm_gc_is_pinned(i))
			continue;
		GET_VXID_FROM_PGPROC(vxid, *proc);
		if (VirtualTransactionIdIsValid(vxid))
			(void) CancelVirtualTransaction(vxid, PROCSIG_RECOVERY_CONFLICT_SNAPSHOT);
	}
}

/*
 * replay_conflict lets the primary's removal of index entries (logged next)
 * be replayed only once no query of this standby can still see a version
 * of their index runs: it waits for such queries, and after
 * max_standby_streaming_delay cancels them, as heap's pruning conflicts
 * do (-1 waits for ever).
 */
static void
replay_conflict(XLogReaderState *record)
{
	const char *p = XLogRecGetData(record);
	xl_nvm_table_items rec;
	uint64	   *roots;
	NvmTable	t;
	NvmHorizon *h;
	TimestampTz start = GetCurrentTimestamp();

	memcpy(&rec, p, sizeof(rec));
	if (!nvm_table_open(&rec.key, &t))
		return;
	roots = palloc(sizeof(uint64) * Max(rec.nitems, 1));
	memcpy(roots, p + sizeof(rec), sizeof(uint64) * rec.nitems);
	h = palloc(sizeof(NvmHorizon));
	/* only a snapshot held now can still see them: none, no conflict */
	while (any_pinned() && runs_still_seen(&t, roots, rec.nitems, h))
	{
		if (max_standby_streaming_delay >= 0 &&
			TimestampDifferenceExceeds(start, GetCurrentTimestamp(), max_standby_streaming_delay))
			cancel_pinned();
		ProcessStartupProcInterrupts();
		pg_usleep(5000L);
	}
	pfree(h);
	pfree(roots);
}

/*
 * replay_locks stores the lock words of a prepared transaction (marked
 * PREPARED, so read whatever server start wrote them) in the standby's
 * table, each flushed, and drained before the record is noted as applied.
 * Nobody on a standby takes row locks, so the words are the primary's.
 */
static void
replay_locks_data(const char *p, XLogRecPtr read)
{
	xl_nvm_table_items rec;
	NvmTable	t;

	memcpy(&rec, p, sizeof(rec));
	p += sizeof(rec);
	if (nvm_replay_before_file_at(&rec.key, read) || !known_table(&rec.key, &t))
		return;
	for (uint32 i = 0; i < rec.nitems; i++)
	{
		uint64		pair[2];
		_Atomic uint64_t *w;

		memcpy(pair, p + i * sizeof(pair), sizeof(pair));
		w = nvm_record_lock_word(&t, pair[0], true);
		if (w == NULL)
			report_full(&rec.key);
		atomic_store(w, pair[1]);
		nvm_flush((void *) w, sizeof(uint64));
	}
	nvm_flush(&t.desc->lock_words, sizeof(nvm_off));
	nvm_drain();
}

static void
replay_locks(XLogReaderState *record)
{
	replay_locks_data(XLogRecGetData(record), record->ReadRecPtr);
}

/*
 * nvm_replay_resolve_indoubt answers for a transaction in doubt on this
 * standby (a prepared or tied transaction of the primary, replayed in
 * doubt under its xid) from the commit log as far as replay has brought
 * it: 1 committed, 0 aborted, -1 not known yet (still running, or
 * prepared).  Replay resolves with it before each record, and so do the
 * snapshots of standby queries (xact/nvm_xact.c).
 */
int
nvm_replay_resolve_indoubt(uint64 xid64)
{
	TransactionId xid = (TransactionId) xid64;

	if (TransactionIdIsInProgress(xid))
		return -1;
	if (TransactionIdDidCommit(xid))
		return 1;
	return TransactionIdDidAbort(xid) ? 0 : -1;
}

/*
 * nvm_replay replays one nvm redo record (nvm_wal.c's rm_redo calls it for
 * every record type of nvm_redofmt.h): into the pool of a standby, nothing during
 * a primary's crash recovery.
 */
void
nvm_replay(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & XLOG_NVM_OPMASK;

	if (!nvm_binding_is_replica())
		return;
	if (nvm_replay_files_prepare(&files_replay))
		image_replayed = true;
	/*
	 * Transactions in doubt whose PostgreSQL commit or abort record was
	 * replayed since are resolved first: a tied commit's versions are
	 * replayed before its commit record, and their clock slot stays taken
	 * until they are resolved.
	 */
	if (nvm_indoubt_pending())
		(void) nvm_indoubt_resolve_all(nvm_replay_resolve_indoubt);
	/* applied before a restart of the standby (see the file header) */
	if (record->EndRecPtr <= (XLogRecPtr) nvm_pool_replayed_lsn())
		return;
	switch (info)
	{
		case XLOG_NVM_COMMIT:
			replay_commit(record);
			break;
		case XLOG_NVM_STORAGE:
			replay_storage(record);
			break;
		case XLOG_NVM_RESERVE:
			replay_reserve(record);
			break;
		case XLOG_NVM_CONFLICT:
			replay_conflict(record);
			break;
		case XLOG_NVM_RESYNC:
			replay_resync(record);
			break;
		case XLOG_NVM_LOCKS:
			replay_locks(record);
			break;
		case XLOG_NVM_IMAGE:
			replay_image(record);
			break;
	}
	/* a test's crash between a record's effects and its note */
	if (nvm_debug_crash_point == NVM_CRASH_REPLAY_BEFORE_NOTE &&
		info == XLOG_NVM_COMMIT && open_txid == 0 && image_replayed)
		ereport(FATAL,
				(errmsg("nvm: debug crash point replay_before_note: the startup process stops after replaying the nvm commit at %X/%X, before noting it",
						LSN_FORMAT_ARGS(record->ReadRecPtr))));
	note_applied(record->EndRecPtr);
}

/*
 * nvm_replay_end runs at the end of WAL replay (rm_cleanup): a commit whose
 * last part the WAL does not hold never committed on this server.
 */
void
nvm_replay_end(void)
{
	if (open_txid != 0)
		abort_open_commit();

	/*
	 * A rebuild whose checkpoint files are as of a position the WAL does
	 * not reach would serve rows whose redo is gone: the WAL after the
	 * files was removed or lost.  Files not loaded yet (no nvm record was
	 * replayed: the first access loads them) are checked here too, so that
	 * the start stops.
	 */
	nvm_replay_files_check_end();
	nvm_rebuild_replay_done();
}

static void
desc_key(StringInfo buf, const NvmTableKey *key)
{
	appendStringInfo(buf, "rel %u/%u/%u", key->spc, key->db, key->rel);
}

/* nvm_replay_desc describes a redo record for pg_waldump. */
void
nvm_replay_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & XLOG_NVM_OPMASK;
	const char *p = XLogRecGetData(record);

	switch (info)
	{
		case XLOG_NVM_COMMIT:
			{
				xl_nvm_commit hdr;
				NvmRedoDecoder dec;

				nvm_redodec_begin(&dec, record->ReadRecPtr, p, p + XLogRecGetDataLen(record), &hdr);
				nvm_redodec_end(&dec);
				appendStringInfo(buf, "txid %llu xid %u: %u versions in %u tables%s%s",
								 (unsigned long long) hdr.txid, hdr.xid, hdr.nversions,
								 (unsigned) hdr.ntables,
								 (hdr.flags & XLNVM_COMMIT_CONTINUED) ? ", continued" : "",
								 (hdr.flags & XLNVM_COMMIT_MORE) ? ", more follow" : "");
				break;
			}
		case XLOG_NVM_STORAGE:
			{
				static const char *const ops[] = {"?", "create", "drop", "reset", "clone"};
				xl_nvm_storage rec;

				memcpy(&rec, p, sizeof(rec));
				appendStringInfo(buf, "%s ", ops[rec.op <= 4 ? rec.op : 0]);
				desc_key(buf, &rec.key);
				if (rec.op == XLNVM_STORAGE_CLONE)
				{
					appendStringInfoString(buf, " from ");
					desc_key(buf, &rec.src);
				}
				break;
			}
		case XLOG_NVM_RESERVE:
			{
				xl_nvm_reserve rec;

				memcpy(&rec, p, sizeof(rec));
				desc_key(buf, &rec.key);
				appendStringInfo(buf, " versions below %llu", (unsigned long long) rec.limit);
				break;
			}
		case XLOG_NVM_CONFLICT:
		case XLOG_NVM_LOCKS:
			{
				xl_nvm_table_items rec;

				memcpy(&rec, p, sizeof(rec));
				desc_key(buf, &rec.key);
				appendStringInfo(buf, info == XLOG_NVM_CONFLICT ? " %u index runs" :
								 " %u lock words of a prepared transaction", rec.nitems);
				break;
			}
		case XLOG_NVM_RESYNC:
			{
				static const char *const phases[] = {"?", "begin", "rows", "end"};
				xl_nvm_resync rec;

				memcpy(&rec, p, sizeof(rec));
				appendStringInfo(buf, "%s ", phases[rec.phase <= 3 ? rec.phase : 0]);
				desc_key(buf, &rec.key);
				if (rec.phase == XLNVM_RESYNC_ROWS)
					appendStringInfo(buf, ": %u rows", rec.nrows);
				break;
			}
		case XLOG_NVM_IMAGE:
			{
				xl_nvm_image rec;

				memcpy(&rec, p, sizeof(rec));
				if (rec.phase == XLNVM_IMAGE_BEGIN)
					appendStringInfoString(buf, "begin");
				else
					appendStringInfo(buf, "end: %llu tables, %llu rows, %u in doubt",
									 (unsigned long long) rec.tables,
									 (unsigned long long) rec.rows, rec.indoubt);
				break;
			}
	}
}
