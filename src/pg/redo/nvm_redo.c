/*-------------------------------------------------------------------------
 *
 * nvm_redo.c
 *	  The primary's side of physical replication of nvm tables: the redo
 *	  records that tell a standby what changed in the pool.
 *
 * With wal_level replica or logical (and nvm.wal_redo on, the default),
 * the primary writes these nvm redo records (nvm_redofmt.h has their
 * formats; nvm_replay.c replays them into the standby's own pool):
 *
 *	 - COMMIT, at every commit of a transaction that wrote permanent nvm
 *	   tables: its versions with their numbers, index roots and row images,
 *	   and the counters of its tables, coded compactly (nvm_redoenc.c; an
 *	   UPDATE's row as a diff against the version it replaced where every
 *	   replaying side is certain to hold that one: diff_base).  Written from the core's commit hook
 *	   (txn.h), after the commit's status is durable in the pool and before
 *	   its completion is published.  So:
 *		 - a record is never written for a transaction the pool may still
 *		   lose (a crash before the status leaves it aborted);
 *		 - a transaction that saw another one's rows took its snapshot
 *		   after that one's completion was published, so after its record,
 *		   and its own record comes later in the WAL: replaying commits in
 *		   WAL order gives the standby's snapshots only states the primary
 *		   had.
 *	   Where commits are durable through the WAL (nvm.durability,
 *	   claim/nvm_durability.c: auto off persistent memory), the commit
 *	   flushes its record here, before its completion is published, as a
 *	   heap commit flushes its commit record (XLogFlush gathers concurrent
 *	   commits into one flush: group commit); synchronous_commit = off
 *	   skips the flush, and a commit with an xid (heap and nvm rows) has
 *	   its versions logged in doubt before PostgreSQL's commit record,
 *	   whose flush makes them durable (xact/nvm_commit.c); those records
 *	   are its only ones, unless a checkpoint's cut came between them and
 *	   its status (tied_records_of).  Otherwise
 *	   the commit does not wait for the record to be flushed: on persistent
 *	   memory it is durable in the pool.  While walsenders run, the redo
 *	   flusher (nvm_redo_flusher.c) flushes it at once, in the background,
 *	   so that standbys get it as soon as a heap commit's; otherwise it
 *	   reaches the disk as an asynchronous commit's does (the WAL writer is
 *	   woken, as XLogSetAsyncXactLSN wakes it for asynchronous commits, at
 *	   most every 10 ms per backend).  With a
 *	   synchronous standby (synchronous_standby_names, and
 *	   synchronous_commit on, remote_write or remote_apply) the commit
 *	   flushes its record and waits for the standby, as heap's commits do,
 *	   before its rows become visible on the primary.
 *	 - STORAGE, after a permanent table's storage is created, emptied,
 *	   cloned (SET TABLESPACE) or dropped in the pool.
 *	 - CONFLICT, before the primary removes index entries of dead index
 *	   runs (btree's deletion, VACUUM): a standby whose queries may still
 *	   see those runs' versions waits for them or cancels them
 *	   (nvm_replay.c), as heap's pruning records make it do.
 *	 - LOCKS, at PREPARE TRANSACTION: the row-lock words that name the
 *	   transaction (nvm_rowlock.c), so that a promoted standby holds the
 *	   row locks of transactions still prepared.
 *	 - RESERVE, before the first use of a version number at or above the
 *	   table's reserved limit (replica.h): PostgreSQL logs index entries,
 *	   which hold version numbers, before the writer's transaction ends,
 *	   committed or not; the standby raises its counter to every limit, so
 *	   a promoted standby never gives a number an index entry may name to
 *	   another row.  A record reserves NVM_REDO_RESERVE_STEP numbers ahead.
 *
 * Not logged: versions of aborted transactions (the standby never sees
 * them; their numbers are reserved), pruning, VACUUM and number reuse (the
 * standby keeps its own chains: the primary reuses a number only after it
 * collected its version, and the standby then simply gives the number to
 * the new version), temporary and unlogged tables.
 *
 * Groups.  A standby applies the parts of a large commit, and the records
 * of a resync (nvm_resync.c), as one transaction of its own, opened at the
 * group's first record and committed at its last, so nothing may come
 * between them that it must apply on its own: the writer of a group holds
 * the group lock exclusively while it writes the group, and every other
 * COMMIT record is written under that lock in shared mode (the other
 * records touch no open transaction of the standby).  The writer also
 * delays checkpoints (DELAY_CHKPT_START, as a commit record's writer does):
 * a checkpoint whose redo pointer falls inside the group writes its record
 * after the group.  A standby creates restart points only at checkpoint
 * records it replayed, by which time it has applied, and noted in its
 * pool, the whole group; so a restarted standby that begins replay inside
 * a group skips it as already applied, and never meets a later part
 * without the first ones (nvm_replay.c).
 *
 * A crash of the primary may lose COMMIT records of transactions committed
 * in its pool (their WAL was not flushed yet): nvm_redo_start marks the
 * tables concerned, and nvm_resync.c logs their rows again before any new
 * work.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/xlog_internal.h"
#include "access/xact.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "ckptmark.h"
#include "indexlog.h"
#include "indoubt.h"
#include "pool.h"
#include "replica.h"
#include "txn.h"

#include "claim/nvm_binding.h"
#include "claim/nvm_durability.h"
#include "nvm_settings.h"
#include "redo/nvm_ckptfile.h"
#include "redo/nvm_redo.h"
#include "redo/nvm_redo_flusher.h"
#include "redo/nvm_redoenc.h"
#include "redo/nvm_redofmt.h"

/* Row images of one COMMIT record, at most (a larger commit takes parts). */
#define NVM_REDO_PART_BYTES		(4 * 1024 * 1024)

/* Version numbers one RESERVE record reserves ahead. */
#define NVM_REDO_RESERVE_STEP	4096

/* A version a COMMIT record logs: what the checkpoint's marks need of it. */
typedef struct RedoMark
{
	uint64		record_no;
	int			table;
} RedoMark;

/* A COMMIT record being built (malloc'd: the commit hook must not fail). */
typedef struct RedoBuild
{
	uint64		txid;
	uint32		slot;
	uint32		xid;
	uint8		flags;			/* XLNVM_COMMIT_CONTINUED after a part */
	uint8		last_flags;		/* XLNVM_COMMIT_PREPARED for a PREPARE */
	nvm_off    *descs;			/* the tables' descriptors, in ref order */
	xl_nvm_table_ref *refs;
	int			ntables;
	int			cap_tables;
	NvmRedoEncoder enc;			/* the versions, encoded (nvm_redoenc.c) */
	struct RedoMark *marks;		/* each version's table and record number */
	size_t		cap_marks;
	uint32		nversions;
	XLogRecPtr	end;			/* end of the last part written */
	uint64		epoch;			/* the checkpoint epoch it was marked in */
} RedoBuild;

static void redo_commit_hook(uint32_t slot, uint64_t txid, const NvmTxn *txn);

/* The group lock (see the file header), and this backend's group. */
static LWLock *group_lock = NULL;

/*
 * What a checkpoint's cut needs (nvm_redo_capture_cut): per clock slot, the
 * txid of the last commit whose redo is in the WAL, raised under the group
 * lock together with the insertion of the commit's last record.
 */
typedef struct RedoShared
{
	pg_atomic_uint64 last_logged[NVM_MAX_SLOTS];
	pg_atomic_uint32 writable;	/* NvmRedoWritable */
	ConditionVariable writable_cv;
} RedoShared;

static RedoShared *redo_shared = NULL;

/*
 * The tied commit of this backend whose versions nvm_redo_log_tied wrote
 * before PostgreSQL's commit record, and the checkpoint epoch its record
 * marked them in; its commit hook writes no second record while no
 * checkpoint cut came between (redo_commit_hook).
 */
static struct
{
	uint64		txid;
	uint32		slot;
	uint64		epoch;
}			tied_logged = {NVM_INVALID_TXID, 0, 0};

/*
 * The sink: while a checkpoint gathers the transactions in doubt and the
 * row locks of prepared transactions for its in-doubt file
 * (nvm_redo_sink_begin), the records that would log them go there instead
 * of the WAL.
 */
static StringInfo redo_sink = NULL;
static bool group_open = false;
static int	group_saved_chkpt_flags = 0;

/* The session's own synchronous_commit (see nvm_redo_init). */
static int	(*session_sync) (void) = NULL;

/*
 * nvm_redo_init installs the commit hook; called from _PG_init with the
 * function that returns the session's synchronous_commit, which the commit
 * path changes for its own commit (nvm_commit.c, nvm_commit_session_sync).
 */
void
nvm_redo_init(int (*session_sync_fn) (void))
{
	session_sync = session_sync_fn;
	nvm_txn_set_commit_hook(redo_commit_hook);
}

/* nvm_redo_shmem_request asks for the group lock; nvm_redo_shmem_startup finds it. */
void
nvm_redo_shmem_request(void)
{
	RequestNamedLWLockTranche("nvm_redo_group", 1);
	RequestAddinShmemSpace(sizeof(RedoShared));
}

void
nvm_redo_shmem_startup(void)
{
	bool		found;

	group_lock = &(GetNamedLWLockTranche("nvm_redo_group"))->lock;
	redo_shared = ShmemInitStruct("nvm redo", sizeof(RedoShared), &found);
	if (!found)
	{
		/* every transaction of an earlier start is final and counts at a cut */
		for (int i = 0; i < NVM_MAX_SLOTS; i++)
			pg_atomic_init_u64(&redo_shared->last_logged[i],
							   nvm_pool_base != NULL ?
							   nvm_make_txid(i, nvm_ckpt_boot_bound(i)) : 0);
		pg_atomic_init_u32(&redo_shared->writable, NVM_REDO_WRITES_WAIT);
		ConditionVariableInit(&redo_shared->writable_cv);
	}
}

/*
 * nvm_redo_set_writable opens nvm writes (the checkpoint worker takes part
 * in every checkpoint from now on), or closes them for good (a clean stop:
 * the last capture is being written); see nvm_redo_wait_writable.
 */
void
nvm_redo_set_writable(NvmRedoWritable state)
{
	pg_atomic_write_u32(&redo_shared->writable, (uint32) state);
	ConditionVariableBroadcast(&redo_shared->writable_cv);
}

/*
 * nvm_redo_wait_writable is called before a transaction's first nvm write.
 * Where commits are durable through the WAL, the checkpoint files and the
 * WAL after them must always hold every commit, so a write waits after a
 * start until the worker that captures the pool at checkpoints runs
 * (../checkpoint/nvm_checkpoint.c), and fails once a clean stop has closed
 * nvm writes.  Elsewhere it returns at once.
 */
void
nvm_redo_wait_writable(void)
{
	uint32		state;

	if (redo_shared == NULL || !nvm_durability_through_wal() || RecoveryInProgress())
		return;
	state = pg_atomic_read_u32(&redo_shared->writable);
	if (likely(state == NVM_REDO_WRITES_OPEN))
		return;
	if (state == NVM_REDO_WRITES_WAIT)
	{
		ConditionVariablePrepareToSleep(&redo_shared->writable_cv);
		while ((state = pg_atomic_read_u32(&redo_shared->writable)) == NVM_REDO_WRITES_WAIT)
			(void) ConditionVariableTimedSleep(&redo_shared->writable_cv, 100, PG_WAIT_EXTENSION);
		ConditionVariableCancelSleep();
	}
	if (state == NVM_REDO_WRITES_CLOSED)
		ereport(ERROR,
				(errcode(ERRCODE_ADMIN_SHUTDOWN),
				 errmsg("cannot write nvm tables while the server shuts down"),
				 errdetail("The last checkpoint of the nvm pool before the stop is being written.")));
}

/*
 * sink_append adds one record (type info, its parts) to the sink, as the
 * in-doubt file of a checkpoint holds them (redo/nvm_ckptfile.h).
 */
static void
sink_append(uint8 info, const char *a, size_t alen, const char *b, size_t blen,
			const char *c, size_t clen)
{
	NvmCkptRecordHeader rh;

	memset(&rh, 0, sizeof(rh));
	rh.info = info;
	rh.len = (uint32) (alen + blen + clen);
	appendBinaryStringInfo(redo_sink, (char *) &rh, sizeof(rh));
	appendBinaryStringInfo(redo_sink, a, alen);
	if (blen > 0)
		appendBinaryStringInfo(redo_sink, b, blen);
	if (clen > 0)
		appendBinaryStringInfo(redo_sink, c, clen);
}

/* nvm_redo_sink_begin sends the records logged from now on to out (see redo_sink). */
void
nvm_redo_sink_begin(StringInfo out)
{
	redo_sink = out;
}

void
nvm_redo_sink_end(void)
{
	redo_sink = NULL;
}

/*
 * mark_changed marks, in the current checkpoint epoch, every record a
 * COMMIT record just logged (core ckptmark.h): the next checkpoint
 * captures them.  Called under the group lock, with the record's tables.
 */
static void
mark_changed(const RedoBuild *b)
{
	for (uint32 i = 0; i < b->nversions; i++)
	{
		NvmTable	t;

		t.desc = nvm_ptr(b->descs[b->marks[i].table]);
		(void) nvm_ckpt_mark(&t, b->marks[i].record_no);
	}
}

/*
 * nvm_redo_capture_cut is a checkpoint's cut (../checkpoint/
 * nvm_checkpoint.c): under the group lock, exclusively, so that no COMMIT
 * record is being inserted, it reads the end of the WAL inserted (*lsn),
 * each clock slot's last logged commit (bounds: the clock values a capture
 * counts, NvmView's NVM_VIEW_BOUNDS) and advances the checkpoint epoch.
 * A commit counted has its records before *lsn; a commit not counted has
 * them after, and marks its records in the new epoch.  Returns the epoch
 * that ended.
 */
uint64
nvm_redo_capture_cut(uint64 *bounds, XLogRecPtr *lsn)
{
	uint64		ended;

	LWLockAcquire(group_lock, LW_EXCLUSIVE);
	*lsn = nvm_inserted_wal_end();
	for (int i = 0; i < NVM_MAX_SLOTS; i++)
		bounds[i] = nvm_txid_clock_ts(pg_atomic_read_u64(&redo_shared->last_logged[i]));
	ended = nvm_ckpt_epoch_advance();
	LWLockRelease(group_lock);
	return ended;
}

/*
 * note_logged raises slot's last logged commit to txid (the caller holds
 * the group lock while it inserts the commit's last record, or is the only
 * writer: replay).
 */
static void
note_logged(uint32 slot, uint64 txid)
{
	if (redo_shared == NULL || slot >= NVM_MAX_SLOTS)
		return;
	if (nvm_txid_clock_ts(txid) > nvm_txid_clock_ts(pg_atomic_read_u64(&redo_shared->last_logged[slot])))
		pg_atomic_write_u64(&redo_shared->last_logged[slot], txid);
}

/*
 * nvm_redo_note_final counts transaction txid of slot, committed, at every
 * later cut although it logged no COMMIT record: the load of a rebuilt pool
 * at the first access after recovery (nvm_replay_files.c), whose rows are the
 * checkpoint files'.  A capture of a record it wrote, marked since (the
 * in-doubt versions loaded on top, say), must find its row, not a
 * tombstone.
 */
void
nvm_redo_note_final(uint32 slot, uint64 txid)
{
	LWLockAcquire(group_lock, LW_EXCLUSIVE);
	note_logged(slot, txid);
	LWLockRelease(group_lock);
}

/*
 * nvm_redo_group_begin starts a group of records that a standby applies as
 * one (see the file header): no other COMMIT record until
 * nvm_redo_group_end, and checkpoints wait for the group.
 */
void
nvm_redo_group_begin(void)
{
	Assert(!group_open);
	LWLockAcquire(group_lock, LW_EXCLUSIVE);
	group_saved_chkpt_flags = MyProc->delayChkptFlags;
	MyProc->delayChkptFlags |= DELAY_CHKPT_START;
	group_open = true;
}

/*
 * nvm_redo_group_end ends this backend's group, if one is open (also after
 * an error, whose abort may have released the lock already).
 */
void
nvm_redo_group_end(void)
{
	if (!group_open)
		return;
	MyProc->delayChkptFlags = group_saved_chkpt_flags;
	if (LWLockHeldByMe(group_lock))
		LWLockRelease(group_lock);
	group_open = false;
}

/*
 * nvm_redo_storage_begin keeps groups of records out while this backend
 * drops, empties or frees a table's storage and logs it, until
 * nvm_redo_storage_end: the image of a base backup (nvm_backup.c) reads a
 * table's rows inside its group, and never from storage freed under it
 * or replaced after it looked the table up.
 */
void
nvm_redo_storage_begin(void)
{
	if (nvm_redo_needed() && !group_open)
		LWLockAcquire(group_lock, LW_SHARED);
}

void
nvm_redo_storage_end(void)
{
	if (!group_open && LWLockHeldByMe(group_lock))
		LWLockRelease(group_lock);
}

/*
 * nvm_redo_needed says whether this process writes nvm redo now: the
 * setting is on, wal_level is replica or higher, and WAL can be written
 * (not during recovery: the startup process's replay commits are not
 * logged again; not in the postmaster).
 */
bool
nvm_redo_needed(void)
{
	return nvm_wal_redo && XLogIsNeeded() &&
		(IsUnderPostmaster || !IsPostmasterEnvironment) && XLogInsertAllowed();
}

/* grow_or_die makes room in a malloc'd buffer, or stops the server. */
static void *
grow_or_die(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t		n = *cap ? *cap : 16;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	p = realloc(p, n * elem);
	if (p == NULL)
		elog(PANIC, "out of memory while writing the nvm redo of a commit");
	*cap = n;
	return p;
}

/*
 * emit_part writes the versions gathered so far as one COMMIT record, with
 * the counters of every table they belong to read now, and starts the next
 * part.  A failure to write WAL after a commit is durable in the pool is
 * a PANIC, as a failure to write a commit record is.
 */
static void
emit_part(RedoBuild *b, bool more)
{
	xl_nvm_commit hdr;
	NvmRedoEncoder head;
	XLogRecPtr	save_last = XactLastRecEnd;

	for (int i = 0; i < b->ntables; i++)
	{
		NvmTable	t = {.desc = nvm_ptr(b->descs[i])};

		nvm_table_counters(&t, &b->refs[i].next_record, &b->refs[i].next_version);
	}
	memset(&hdr, 0, sizeof(hdr));
	hdr.txid = b->txid;
	hdr.time = (int64) GetCurrentTimestamp();
	hdr.xid = b->xid;
	hdr.nversions = b->nversions;
	hdr.ntables = (uint16) b->ntables;
	hdr.flags = b->flags | (more ? XLNVM_COMMIT_MORE : b->last_flags);
	memset(&head, 0, sizeof(head));
	nvm_redoenc_head(&head, &hdr, b->refs);

	if (redo_sink != NULL)
	{
		sink_append(XLOG_NVM_COMMIT, head.buf, head.len, b->enc.buf, b->enc.len, NULL, 0);
		free(head.buf);
		b->flags = XLNVM_COMMIT_CONTINUED;
		b->ntables = 0;
		nvm_redoenc_reset(&b->enc);
		b->nversions = 0;
		return;
	}

	/* a first part opens a group; a lone record keeps out of others' groups */
	if (more && !group_open)
		nvm_redo_group_begin();
	if (!group_open)
		LWLockAcquire(group_lock, LW_SHARED);
	START_CRIT_SECTION();
	XLogBeginInsert();
	XLogRegisterData(head.buf, head.len);
	if (b->enc.len > 0)
		XLogRegisterData(b->enc.buf, b->enc.len);
	b->end = XLogInsert(RM_NVM_ID, XLOG_NVM_COMMIT);
	END_CRIT_SECTION();
	free(head.buf);
	/* under the lock, as the cut of a checkpoint expects */
	mark_changed(b);
	b->epoch = nvm_ckpt_epoch();
	if (!more && (b->last_flags & XLNVM_COMMIT_PREPARED) == 0)
		note_logged(b->slot, b->txid);
	if (!group_open)
		LWLockRelease(group_lock);
	else if (!more)
		nvm_redo_group_end();
	/* PostgreSQL's own decisions about this transaction's WAL stay its own */
	XactLastRecEnd = save_last;
	nvm_redo_note_tables_logged(b->descs, b->ntables, b->end);

	b->flags = XLNVM_COMMIT_CONTINUED;
	b->ntables = 0;
	nvm_redoenc_reset(&b->enc);
	b->nversions = 0;
}

/*
 * diff_base returns the version v replaces if the record may log v's row
 * as a diff against it (nvm_redofmt.h, XLNVM_T_DIFF), else NULL.  The
 * replay rebuilds the row from the version it holds under that number, so
 * the primary uses one only where every replaying side is certain to hold
 * it, byte for byte, when it replays this record:
 *
 *	 - it is the committed version of the same record that v replaced
 *	   (v is an update, not an insert or a tombstone; the version before
 *	   is no tombstone, not aborted, and another transaction's: a version
 *	   of this transaction's own may have been written by a subtransaction
 *	   rolled back since, which is not logged);
 *	 - its COMMIT record is in the WAL before this one: its txid is at or
 *	   below its clock slot's last logged commit (note_logged, raised when
 *	   that record is inserted; a slot runs one transaction at a time), read
 *	   now, before this record is inserted.  Versions of an earlier start of
 *	   the server count as logged: after a crash that may have lost their
 *	   records, the resync logs their rows again before any transaction can
 *	   write (nvm_resync.c), so the replaying side holds them;
 *	 - a replaying side that replays the WAL in order from a consistent
 *	   base holds every version whose COMMIT record came before, under its
 *	   primary's number: a standby made from a cold copy holds the pool
 *	   and replays every record; a restored base backup and a pool rebuilt
 *	   from its checkpoint files start a table from its image (a RESYNC
 *	   group, written in a group that no COMMIT record enters) or its file
 *	   (as of a cut that COMMIT records are wholly before or after), and
 *	   replay its records after it; the standby's own pruning never takes
 *	   the newest version of a record, which the one it replaces is until
 *	   this record is replayed; and the primary gives the number again only
 *	   once the version is collected, after this commit;
 *	 - the version is still here to be read: the primary collects it only
 *	   once no snapshot needs it, and every snapshot that does not see this
 *	   commit does, until this commit's completion is published, after
 *	   this hook.
 * Where a side does not hold it after all (a restored backup whose image
 * holds this very version already: its commit was durable, not yet
 * logged, when the image read the table), the replay finds the version
 * itself installed, and keeps it (nvm_replay.c, version_image).  Records
 * written to a checkpoint's in-doubt file (the sink) never carry a diff:
 * their replay follows the load of the files, not the WAL's order.
 */
static const NvmVersion *
diff_base(const RedoBuild *b, const NvmVersion *v)
{
	uint64		info = atomic_load(&((NvmVersion *) v)->info);
	const NvmVersion *pred;
	uint32		slot;

	if (redo_sink != NULL || redo_shared == NULL || v->prev == 0 ||
		(info & (NVM_VINFO_TOMBSTONE | NVM_VINFO_INSERTED | NVM_VINFO_MOVED)) != 0)
		return NULL;
	pred = nvm_ptr(v->prev);
	if (pred->record_no != v->record_no || pred->txid == b->txid ||
		nvm_version_is_tombstone(pred) || nvm_version_inlined_aborted(pred))
		return NULL;
	slot = nvm_txid_clock_id(pred->txid);
	if (slot >= NVM_MAX_SLOTS ||
		nvm_txid_clock_ts(pred->txid) >
		nvm_txid_clock_ts(pg_atomic_read_u64(&redo_shared->last_logged[slot])))
		return NULL;
	return pred;
}

/* add_version is the write-log visitor: it adds one version to the record. */
static void
add_version(nvm_off table, nvm_off version, void *arg)
{
	RedoBuild  *b = arg;
	NvmTableDesc *desc = nvm_ptr(table);
	NvmVersion *v = nvm_ptr(version);
	bool		tomb = nvm_version_is_tombstone(v);
	uint32		len = tomb ? 0 : v->data_len;
	int			ti;

	if (NVM_KEY_KIND(&desc->key) != NVM_KIND_PERMANENT)
		return;
	if (b->enc.len > 0 && b->enc.len + NVM_REDOENC_MAX_OVERHEAD + len > NVM_REDO_PART_BYTES)
		emit_part(b, true);
	for (ti = 0; ti < b->ntables; ti++)
		if (b->descs[ti] == table)
			break;
	if (ti == b->ntables)
	{
		size_t		cap = b->cap_tables;
		NvmTable	current;

		/*
		 * A descriptor the transaction detached (a truncate in the
		 * transaction that created the table) is no longer the table's:
		 * its versions are gone with it.
		 */
		if (!nvm_table_open(&desc->key, &current) || current.desc != desc)
			return;

		if (b->ntables == PG_UINT16_MAX)
			emit_part(b, true);
		ti = b->ntables;
		b->descs = grow_or_die(b->descs, &cap, ti + 1, sizeof(nvm_off));
		cap = b->cap_tables;
		b->refs = grow_or_die(b->refs, &cap, ti + 1, sizeof(xl_nvm_table_ref));
		b->cap_tables = (int) cap;
		b->descs[ti] = table;
		memset(&b->refs[ti], 0, sizeof(xl_nvm_table_ref));
		b->refs[ti].key = desc->key;
		b->ntables++;
	}

	b->marks = grow_or_die(b->marks, &b->cap_marks, b->nversions + 1, sizeof(RedoMark));
	b->marks[b->nversions].record_no = v->record_no;
	b->marks[b->nversions].table = ti;
	nvm_redoenc_add(&b->enc, (uint16) ti, v, diff_base(b, v));
	b->nversions++;
}

/*
 * log_versions writes the COMMIT record(s) of transaction txid of slot
 * (see redo_commit_hook), the last one with last_flags; returns the end of
 * the last one (InvalidXLogRecPtr if it wrote none: no permanent table).
 */
static XLogRecPtr
log_versions(uint32_t slot, uint64_t txid, const NvmTxn *txn, uint32 xid, uint8 last_flags,
			 uint64 *epoch)
{
	RedoBuild	b;

	memset(&b, 0, sizeof(b));
	b.txid = txid;
	b.slot = slot;
	b.xid = xid;
	b.last_flags = last_flags;
	(void) nvm_txn_write_log_each(slot, txid, txn, add_version, &b);
	if (b.nversions > 0 || (b.flags & XLNVM_COMMIT_CONTINUED))
		emit_part(&b, false);
	free(b.descs);
	free(b.refs);
	free(b.marks);
	free(b.enc.buf);
	if (epoch != NULL)
		*epoch = b.epoch;
	return b.end;
}

/*
 * nvm_redo_log_prepared writes the versions of txn, which PREPARE
 * TRANSACTION has just tied to its xid (the in-doubt marker is persisted),
 * as COMMIT records flagged prepared, before PostgreSQL's prepare record,
 * whose flush makes them durable too.  A standby keeps them in doubt under
 * the xid, as the primary does, and resolves them from its commit log once
 * COMMIT or ROLLBACK PREPARED is replayed, or after a promotion.  A crash
 * before the prepare record leaves an xid that never prepared: both sides
 * resolve it as aborted.
 */
void
nvm_redo_log_prepared(const NvmTxn *txn, uint32 xid)
{
	if (txn == NULL || txn->txid == NVM_INVALID_TXID || !nvm_redo_needed())
		return;
	(void) log_versions((uint32_t) txn->slot, txn->txid, txn, xid, XLNVM_COMMIT_PREPARED, NULL);
}

/*
 * nvm_redo_log_tied writes the versions of txn, a tied commit whose
 * outcome was just tied to its xid (the in-doubt marker is persisted), as
 * COMMIT records flagged prepared, before PostgreSQL's commit record, whose
 * flush makes them durable: a copy of the cluster whose replay stops
 * between the two records decides them from its commit log, as it decides
 * the heap part (xact/nvm_commit.c, prepare_tied).  These are the
 * commit's only records unless a checkpoint's cut comes before its commit
 * hook (redo_commit_hook).
 */
void
nvm_redo_log_tied(const NvmTxn *txn, uint32 xid)
{
	XLogRecPtr	end;
	uint64		epoch;

	tied_logged.txid = NVM_INVALID_TXID;
	if (txn == NULL || txn->txid == NVM_INVALID_TXID || !nvm_redo_needed())
		return;
	end = log_versions((uint32_t) txn->slot, txn->txid, txn, xid, XLNVM_COMMIT_PREPARED, &epoch);
	if (end == InvalidXLogRecPtr)
		return;
	tied_logged.txid = txn->txid;
	tied_logged.slot = (uint32) txn->slot;
	tied_logged.epoch = epoch;
}

/*
 * nvm_redo_log_indoubt writes the versions of transaction txid of slot,
 * in doubt under external xid xid (prepared, or a tied commit a crash left
 * undecided), as COMMIT records flagged prepared: the image of a base
 * backup (nvm_backup.c) carries them so, and the restored cluster resolves
 * them from its commit log as a standby does.  The caller holds the core's
 * in-doubt lock (nvm_indoubt_each).
 */
void
nvm_redo_log_indoubt(uint32_t slot, uint64_t txid, uint32 xid)
{
	(void) log_versions(slot, txid, NULL, xid, XLNVM_COMMIT_PREPARED, NULL);
}

/*
 * wake_wal_writer makes the WAL writer write the record at end out soon,
 * as an asynchronous commit does (XLogSetAsyncXactLSN), so that standbys
 * do not lag behind a primary that commits now and then (the WAL writer
 * hibernates when idle).  A backend does it at most every
 * NVM_REDO_WAKE_MS: under a steady load the WAL writer's own rounds and
 * full WAL buffers write the WAL out, and a wake per commit would cost the
 * log-free commits a sixth of their speed on two cores (measured in
 * bench/results/standby-cost-*).
 */
#define NVM_REDO_WAKE_MS	10

static void
wake_wal_writer(XLogRecPtr end)
{
	static TimestampTz last_wake = 0;
	TimestampTz now = GetCurrentTimestamp();

	if (now - last_wake < NVM_REDO_WAKE_MS * 1000)
		return;
	last_wake = now;
	XLogSetAsyncXactLSN(end);
}

/*
 * Durable watermarks (core ckptmark.h).  A commit whose redo this backend
 * did not flush waits here until a flush covers it; the next commits of
 * the backend look (note_durable_flushed).  An entry that does not fit is
 * dropped: its slot's watermark lags, and a resync after a crash logs a
 * little more than it needs to.
 */
#define PENDING_DURABLE		64

typedef struct PendingDurable
{
	uint32		slot;
	uint64		txid;
	XLogRecPtr	end;
} PendingDurable;

static PendingDurable pending_durable[PENDING_DURABLE];
static int	pending_first = 0;
static int	pending_count = 0;

/* note_durable_flushed raises the watermarks the flushed WAL now covers. */
static void
note_durable_flushed(void)
{
	XLogRecPtr	flushed;

	if (pending_count == 0)
		return;
	flushed = GetFlushRecPtr(NULL);
	while (pending_count > 0 && pending_durable[pending_first].end <= flushed)
	{
		PendingDurable *p = &pending_durable[pending_first];

		nvm_slot_note_durable(p->slot, p->txid);
		pending_first = (pending_first + 1) % PENDING_DURABLE;
		pending_count--;
	}
}

/* note_durable_later keeps txid of slot until a flush covers end. */
static void
note_durable_later(uint32 slot, uint64 txid, XLogRecPtr end)
{
	PendingDurable *p;

	if (pending_count == PENDING_DURABLE)
	{
		pending_first = (pending_first + 1) % PENDING_DURABLE;
		pending_count--;
	}
	p = &pending_durable[(pending_first + pending_count) % PENDING_DURABLE];
	p->slot = slot;
	p->txid = txid;
	p->end = end;
	pending_count++;
}

/* What redo_commit_hook finds of a tied commit's records (tied_records_of). */
typedef enum TiedRecords
{
	TIED_NONE,					/* not a tied commit of this backend */
	TIED_STAND,					/* its records stand as its COMMIT records */
	TIED_CUT_BETWEEN			/* a checkpoint's cut came after them */
} TiedRecords;

/*
 * tied_records_of says whether transaction txid of slot is a tied commit
 * whose versions nvm_redo_log_tied wrote, before PostgreSQL's commit
 * record, and whether those records stand as its COMMIT records; if they
 * do, it counts the commit as logged (note_logged) and durable, and the
 * commit hook writes no record.  They stand if no checkpoint cut came
 * between their insertion and now: read under the group lock, which the
 * cut holds exclusively, with the epoch unchanged.
 *	 - A later cut counts this commit (its status is durable, it is noted)
 *	   and its capture reads its versions as committed; a rebuild from an
 *	   earlier cut replays the records, which lie after that cut, and
 *	   PostgreSQL's commit record after them resolves them (nvm_replay.c).
 *	 - A cut between the two (the epoch moved) counted neither the
 *	   transaction nor, if its status was written before the checkpoint
 *	   gathered the transactions in doubt, its in-doubt marker: a rebuild
 *	   from that cut would find its versions nowhere after it.  The commit
 *	   then writes its COMMIT record as any other does, after the cut (it
 *	   marks its records in the new epoch), and flushes it
 *	   (redo_commit_hook).
 * PostgreSQL flushed its commit record, after these records, before the
 * nvm status (prepare_tied raised synchronous_commit), and waited there for
 * a synchronous standby, which has the versions: the commit is durable,
 * and has no standby to wait for.
 */
static TiedRecords
tied_records_of(uint32_t slot, uint64_t txid)
{
	bool		stand;

	if (tied_logged.txid != txid || tied_logged.slot != slot)
		return TIED_NONE;
	tied_logged.txid = NVM_INVALID_TXID;
	LWLockAcquire(group_lock, LW_SHARED);
	stand = nvm_ckpt_epoch() == tied_logged.epoch;
	if (stand)
		note_logged(slot, txid);
	LWLockRelease(group_lock);
	if (!stand)
		return TIED_CUT_BETWEEN;
	note_durable_flushed();
	nvm_slot_note_durable(slot, txid);
	return TIED_STAND;
}

/*
 * redo_commit_hook writes the COMMIT record(s) of transaction txid, whose
 * status is durable and whose completion is not published yet (txn.h);
 * then, with a synchronous standby, flushes them and waits for it.  An
 * in-doubt transaction resolved by another process (txn NULL: COMMIT
 * PREPARED, or a tied commit after a crash) is logged, but that process
 * does not wait: it resolves under a lock of the core.
 */
static void
redo_commit_hook(uint32_t slot, uint64_t txid, const NvmTxn *txn)
{
	XLogRecPtr	end;
	TiedRecords tied;

	if (!nvm_redo_needed())
	{
		/* replay (the only writer) commits what the WAL holds already */
		note_logged(slot, txid);
		return;
	}
	tied = txn != NULL ? tied_records_of(slot, txid) : TIED_NONE;
	if (tied == TIED_STAND)
		return;
	end = log_versions(slot, txid, txn,
					   (uint32) (txn != NULL ? txn->external_id : nvm_indoubt_xid_of(txid)), 0, NULL);
	if (end == InvalidXLogRecPtr)
		return;
	note_durable_flushed();
	if (tied == TIED_CUT_BETWEEN)
	{
		/* the only record after the cut: durable before the commit returns */
		XLogFlush(end);
		nvm_slot_note_durable(slot, txid);
	}
	else if (txn != NULL && max_wal_senders > 0 &&
		SyncRepStandbyNames != NULL && SyncRepStandbyNames[0] != '\0' &&
		session_sync() > SYNCHRONOUS_COMMIT_LOCAL_FLUSH)
	{
		XLogFlush(end);
		nvm_slot_note_durable(slot, txid);
		SyncRepWaitForLSN(end, true);
	}
	else if (txn != NULL && txn->external_id == 0 &&
			 session_sync() >= SYNCHRONOUS_COMMIT_LOCAL_FLUSH &&
			 nvm_durability_through_wal())
	{
		XLogFlush(end);
		nvm_slot_note_durable(slot, txid);
	}
	else
	{
		note_durable_later(slot, txid, end);
		if (!nvm_redo_flusher_request(end))
			wake_wal_writer(end);
	}
}

/*
 * nvm_redo_log_storage writes a STORAGE record: op was just done to key's
 * storage in the pool (src: the table a clone copies).  Only permanent
 * tables are logged.
 */
void
nvm_redo_log_storage(uint8 op, const NvmTableKey *key, const NvmTableKey *src)
{
	xl_nvm_storage rec;
	XLogRecPtr	end;
	NvmTable	t;

	if (NVM_KEY_KIND(key) != NVM_KIND_PERMANENT || !nvm_redo_needed())
		return;
	nvm_redo_wait_writable();
	memset(&rec, 0, sizeof(rec));
	rec.key = *key;
	if (src != NULL)
		rec.src = *src;
	rec.op = op;
	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	end = XLogInsert(RM_NVM_ID, XLOG_NVM_STORAGE);
	/* the table's checkpoint files are stale: the next capture reads it whole */
	if (op != XLNVM_STORAGE_DROP && nvm_table_open(key, &t))
	{
		nvm_table_note_redo(&t, (uint64) end);
		nvm_ckpt_mark_whole(&t);
	}
}

/*
 * nvm_redo_note_version is called after every write of a version of table
 * (whose pool key is key) with the version's number, before the caller
 * makes any index entry for it: a number at or above the table's reserved
 * limit is reserved in the WAL first (RESERVE), then the limit is raised.
 */
void
nvm_redo_note_version(NvmTable *table, const NvmTableKey *key, uint64 version_no)
{
	xl_nvm_reserve rec;
	XLogRecPtr	end;

	if (likely(version_no < nvm_table_redo_reserved(table)))
		return;
	if (NVM_KEY_KIND(key) != NVM_KIND_PERMANENT || !nvm_redo_needed())
		return;
	memset(&rec, 0, sizeof(rec));
	rec.key = *key;
	rec.limit = version_no + NVM_REDO_RESERVE_STEP;
	/*
	 * Under the group lock, shared: a checkpoint file (nvm_checkpoint.c)
	 * reads the limit on one side of the record, never between the record
	 * and the raise.
	 */
	nvm_redo_storage_begin();
	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	end = XLogInsert(RM_NVM_ID, XLOG_NVM_RESERVE);
	/* the record is in the WAL before any writer relies on the limit */
	nvm_table_raise_redo_reserved(table, rec.limit);
	/* the next checkpoint captures the limit (record 0: no row, the table) */
	(void) nvm_ckpt_mark(table, 0);
	nvm_redo_storage_end();
	nvm_table_note_redo(table, (uint64) end);
}

/*
 * log_table_items writes n items of item_size bytes about key's table as
 * records of type info (an xl_nvm_table_items and the items), 65,536 items
 * a record at most.  Only permanent tables are logged.
 */
static void
log_table_items(uint8 info, const NvmTableKey *key, const char *items, size_t item_size,
				uint64 n)
{
	const uint64 per_record = 65536;

	if (n == 0 || NVM_KEY_KIND(key) != NVM_KIND_PERMANENT ||
		(redo_sink == NULL && !nvm_redo_needed()))
		return;
	for (uint64 done = 0; done < n; done += per_record)
	{
		xl_nvm_table_items rec;

		memset(&rec, 0, sizeof(rec));
		rec.key = *key;
		rec.nitems = (uint32) Min(per_record, n - done);
		if (redo_sink != NULL)
		{
			sink_append(info, (char *) &rec, sizeof(rec), items + done * item_size,
						rec.nitems * item_size, NULL, 0);
			continue;
		}
		XLogBeginInsert();
		XLogRegisterData((char *) &rec, sizeof(rec));
		XLogRegisterData((char *) (items + done * item_size), rec.nitems * item_size);
		(void) XLogInsert(RM_NVM_ID, info);
	}
}

/*
 * nvm_redo_log_conflict writes CONFLICT records for the n index roots
 * whose index entries the caller is about to remove (btree's deletion of
 * dead entries, VACUUM's bulk delete), before their removal is logged.
 */
void
nvm_redo_log_conflict(const NvmTableKey *key, const uint64 *roots, uint64 n)
{
	log_table_items(XLOG_NVM_CONFLICT, key, (const char *) roots, sizeof(uint64), n);
}

/*
 * nvm_redo_log_lock_words writes LOCKS records for n lock words of key's
 * table (record_words: n pairs of record number and word) that PREPARE
 * TRANSACTION has marked PREPARED and persisted, before the prepare record.
 */
void
nvm_redo_log_lock_words(const NvmTableKey *key, const uint64 *record_words, uint32 n)
{
	log_table_items(XLOG_NVM_LOCKS, key, (const char *) record_words, 2 * sizeof(uint64), n);
}

/*
 * nvm_redo_note_tables_logged notes in each of the n tables that redo of
 * its rows ends at end (replica.h, "Redo positions").
 */
void
nvm_redo_note_tables_logged(const nvm_off *descs, int n, XLogRecPtr end)
{
	for (int i = 0; i < n; i++)
	{
		NvmTable	t = {.desc = nvm_ptr(descs[i])};

		nvm_table_note_redo(&t, (uint64) end);
	}
}

/*
 * nvm_redo_start runs at every start of shared memory, in the postmaster,
 * after the core's recovery.  Limits reserved in an earlier run may have
 * lost their records in a crash, so every table reserves again at its next
 * write.  After a crash, the tables that may have lost COMMIT records (the
 * WAL beyond its last checkpoint, durable_end, may be gone) are marked for
 * a resync; marked tables, now or by an earlier start, make the first
 * access to nvm rows log their rows again first (nvm_resync.c, through the
 * binding's "resync" state).
 */
void
nvm_redo_start(bool after_crash, XLogRecPtr durable_end)
{
	uint32		marked;

	nvm_replica_forget_reservations();
	if (!nvm_wal_redo || !XLogIsNeeded())
		return;
	marked = nvm_replica_mark_resync(after_crash, (uint64) durable_end);
	if (marked > 0)
		ereport(LOG,
				(errmsg("nvm: the rows of %u nvm tables are logged again for physical standbys at the first access to nvm tables",
						marked),
				 errdetail("A crash may have lost the WAL records of commits in them.")));
	/*
	 * Marked tables are logged again at the first access: only their rows
	 * a crash may have lost the redo of (nvm_resync.c).  Index entries a
	 * crash lost are put back before anything else (claim/nvm_repair.c),
	 * so that standbys get them before the rows.  A start writes no image
	 * of the pool: where commits are durable through the WAL, the
	 * checkpoint files and the WAL after them rebuild the pool
	 * (../checkpoint/nvm_checkpoint.c).
	 */
	if (marked > 0 || nvm_repair_list() != NULL)
		nvm_binding_require_resync();
}

/*
 * nvm_inserted_wal_end returns the end of the WAL inserted so far, a position
 * XLogFlush accepts: GetXLogInsertRecPtr names the first byte of data of
 * the next record, which is past a page header that does not exist yet
 * when the insert position is at a page boundary.
 */
XLogRecPtr
nvm_inserted_wal_end(void)
{
	XLogRecPtr	pos = GetXLogInsertRecPtr();
	uint64		offset = XLogSegmentOffset(pos, wal_segment_size);

	if (offset == SizeOfXLogLongPHD)
		return pos - SizeOfXLogLongPHD;
	if (pos % XLOG_BLCKSZ == SizeOfXLogShortPHD && offset > XLOG_BLCKSZ)
		return pos - SizeOfXLogShortPHD;
	return pos;
}
