/*-------------------------------------------------------------------------
 *
 * nvm_replay_files.c
 *	  The checkpoint files of a rebuilt pool at the start of its replay:
 *	  their load into the new pool, and the position of each table's file,
 *	  before which replay skips that table's records.
 *
 * A start that rebuilds a pool a crash of the operating system tore or
 * lost (claim/nvm_binding.c, the "restore" states with "rebuild") replays
 * the WAL after the pool's checkpoint files (nvm_ckptfile.h).  The first nvm record replayed loads them
 * (nvm_replay_files_prepare: the tables of the manifest by nvm_rebuild.c,
 * then the in-doubt file's records), or, when recovery replays none, the
 * first access does (nvm_replay_files_load_now).  Files as of a position
 * beyond the end of the WAL are refused.  A data directory restored from a
 * base backup has its original's files removed instead.
 *
 * The replay of records is nvm_replay.c's, which calls this file; what a
 * load needs of it (the transaction of its clock slot, the replay of the
 * in-doubt file's COMMIT and LOCKS records, giving the slot back) it
 * passes in (NvmReplayFilesReplay), so this file calls nothing of it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlogrecovery.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "pool.h"
#include "store.h"
#include "txn.h"

#include "claim/nvm_binding.h"
#include "nvm_settings.h"
#include "redo/nvm_ckptfile.h"
#include "redo/nvm_rebuild.h"
#include "redo/nvm_redo.h"
#include "redo/nvm_redofmt.h"
#include "redo/nvm_replay_files.h"

/*
 * The checkpoint files of a rebuild (redo/nvm_ckptfile.h): the manifest
 * names each table's files and the WAL position they are as of, and replay
 * skips the records of that table before it.  The first record replayed
 * loads the files into the new pool (nvm_rebuild.c), unless an earlier
 * start of this rebuild did (the pool then notes a record applied): a
 * start cut short while loading loads again, keeping what it loaded.
 */
typedef struct FilePosition
{
	NvmTableKey key;
	XLogRecPtr	lsn;
} FilePosition;

static HTAB *file_positions = NULL;
static bool files_ready = false;
static XLogRecPtr files_lsn = InvalidXLogRecPtr;	/* the manifest's cut */

/*
 * load_indoubt replays the records of the in-doubt file seq (transactions
 * in doubt, prepared row locks), as their records would be, through r.
 */
static void
load_indoubt(const NvmReplayFilesReplay *r, uint64 seq)
{
	char	   *path = nvm_ckptfile_indoubt_name(seq);
	NvmCkptError err;
	NvmCkptReader *reader = nvm_ckptreader_open(path, &err);
	char	   *blob;
	size_t		len;
	size_t		off = 0;

	if (reader == NULL || !nvm_ckptreader_blob(reader, &blob, &len, &err))
		nvm_ckptfile_report(FATAL, "could not rebuild the nvm pool", &err,
							"The nvm pool cannot be rebuilt without it: restore the cluster from a base backup.");
	nvm_ckptreader_close(reader);
	while (off + sizeof(NvmCkptRecordHeader) <= len)
	{
		NvmCkptRecordHeader rh;

		memcpy(&rh, blob + off, sizeof(rh));
		off += sizeof(rh);
		if (off + rh.len > len)
			break;
		if (rh.info == XLOG_NVM_COMMIT)
			r->commit_data(blob + off, rh.len, InvalidXLogRecPtr, InvalidXLogRecPtr);
		else if (rh.info == XLOG_NVM_LOCKS)
			r->locks_data(blob + off, InvalidXLogRecPtr);
		off += rh.len;
	}
	free(blob);
}

/*
 * drop_partial_load drops every table of the pool before a load: a rebuilt
 * pool holds nothing before its files are loaded but what a load cut short
 * by a crash wrote (a crash-restart of the server goes on with the pool it
 * has), whose transaction the crash aborted.
 */
static void
drop_partial_load(void)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();
	uint32		dropped = 0;

	for (size_t i = 0; i < n; i++)
	{
		NvmTableKey key;

		if (atomic_load(&dir[i].desc) == 0)
			continue;
		memcpy(&key, &dir[i].key, sizeof(key));
		if (nvm_table_drop(&key))
			dropped++;
	}
	if (dropped > 0)
		ereport(LOG,
				(errmsg("nvm: dropped %u nvm tables that a load of the checkpoint files cut short had begun; they are loaded again",
						dropped)));
}

/*
 * load_files loads the tables of m and its in-doubt file into the new pool,
 * in a transaction of this process's replay slot (r->begin), and logs what
 * it did.
 */
static void
load_files(const NvmReplayFilesReplay *r, const NvmCkptManifest *m)
{
	NvmRebuildProgress *p = nvm_rebuild_progress();
	NvmTxn	   *txn;
	int			slot;
	uint64		txid;

	drop_partial_load();
	txn = r->begin(&slot);
	nvm_rebuild_load(m, txn, slot);
	txid = txn->txid;
	nvm_txn_commit(txn);
	/* after recovery its commit logs nothing: the next cut counts it still */
	nvm_redo_note_final((uint32) slot, txid);
	if (m->indoubt_seq != 0)
		load_indoubt(r, m->indoubt_seq);
	ereport(LOG,
			(errmsg("nvm: loaded the checkpoint files of %u nvm tables (%llu rows, %llu MB) into the rebuilt pool in %.1f s with %d workers",
					m->ntables, (unsigned long long) pg_atomic_read_u64(&p->rows),
					(unsigned long long) (pg_atomic_read_u64(&p->bytes) >> 20),
					(double) (pg_atomic_read_u64(&p->loaded) - pg_atomic_read_u64(&p->started)) / 1e6,
					(int) pg_atomic_read_u32(&p->workers)),
			 errdetail("The files are as of %X/%X.", LSN_FORMAT_ARGS((XLogRecPtr) m->lsn))));
}

/*
 * check_files_within_wal refuses checkpoint files as of a position (files)
 * beyond the end of the WAL this start has (wal_end): they hold rows whose
 * redo is gone (pg_wal restored from an earlier moment, or removed), and
 * a rebuild from them would serve rows the rest of the cluster never saw.
 * Reported at elevel: FATAL in the startup process, which stops the
 * start; ERROR at a first access after recovery, which leaves the pool
 * unused.
 */
static void
check_files_within_wal(XLogRecPtr files, XLogRecPtr wal_end, int elevel)
{
	if (files == InvalidXLogRecPtr || wal_end == InvalidXLogRecPtr || files <= wal_end)
		return;
	ereport(elevel,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("could not rebuild nvm pool \"%s\": its checkpoint files are as of WAL position %X/%X, but the WAL ends at %X/%X",
					nvm_pool_path_resolved, LSN_FORMAT_ARGS(files), LSN_FORMAT_ARGS(wal_end)),
			 errdetail("The WAL that the checkpoint files follow is missing."),
			 errhint("Put back the WAL of the data directory (pg_wal), or restore the cluster from a base backup.")));
}

/*
 * wal_end_at_start returns where the WAL this start found ends: where
 * recovery's replay ended, or, after a clean stop (no recovery), the last
 * checkpoint's record (a later checkpoint only moves it on).
 */
static XLogRecPtr
wal_end_at_start(void)
{
	XLogRecPtr	end = GetXLogReplayRecPtr(NULL);

	if (end == InvalidXLogRecPtr)
	{
		bool		crc_ok = false;
		ControlFileData *cf = get_controlfile(DataDir, &crc_ok);

		if (crc_ok)
			end = cf->checkPoint;
		pfree(cf);
	}
	return end;
}

/*
 * nvm_replay_files_load_now loads a rebuilt pool from its checkpoint files
 * when recovery replayed no nvm record (or there was no recovery: the
 * server had stopped cleanly, and its last capture holds every commit):
 * the binding calls nvm_replay_load_files_now at the first access
 * (claim/nvm_binding.c), which calls this.  Files beyond the WAL are
 * refused (ERROR).  The replay slot is given back after the load
 * (r->exit).  Returns false if there are no files.
 */
bool
nvm_replay_files_load_now(const NvmReplayFilesReplay *r)
{
	NvmCkptManifest m;

	if (!nvm_ckptfile_manifest_read(&m))
		return false;
	check_files_within_wal((XLogRecPtr) m.lsn, wal_end_at_start(), ERROR);
	load_files(r, &m);
	nvm_rebuild_replay_done();
	r->exit(0, (Datum) 0);
	nvm_ckptfile_manifest_free(&m);
	return true;
}

/*
 * nvm_replay_files_prepare loads the checkpoint files of a rebuild, once
 * (the first nvm record replayed calls it), through r.  Returns true when
 * the files were loaded as the image of the pool (this call or an earlier
 * start of this rebuild loaded them), false otherwise (not a rebuild, no
 * files, or prepared already).
 */
bool
nvm_replay_files_prepare(const NvmReplayFilesReplay *r)
{
	HASHCTL		ctl;
	NvmCkptManifest m;

	if (files_ready)
		return false;
	files_ready = true;
	if (!nvm_binding_is_restore())
		return false;
	if (!nvm_binding_is_rebuild())
	{
		/* a restored backup: the original's files say nothing of its WAL */
		nvm_ckptfile_remove_all();
		return false;
	}
	if (!nvm_ckptfile_manifest_read(&m))
		return false;
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(NvmTableKey);
	ctl.entrysize = sizeof(FilePosition);
	ctl.hcxt = TopMemoryContext;
	file_positions = hash_create("nvm checkpoint files", 256, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (uint32 i = 0; i < m.ntables; i++)
	{
		FilePosition *fp = hash_search(file_positions, &m.tables[i].key, HASH_ENTER, NULL);

		fp->lsn = (XLogRecPtr) m.tables[i].lsn;
	}
	files_lsn = (XLogRecPtr) m.lsn;
	nvm_rebuild_note_wal_end();
	if (nvm_pool_replayed_lsn() == 0)
		load_files(r, &m);
	/* the files are the image of the pool: it serves once replay is consistent */
	nvm_binding_restore_image_replayed();
	nvm_ckptfile_manifest_free(&m);
	return true;
}

/*
 * nvm_replay_before_file_at says whether a record of a rebuild (read at
 * read) about key's table lies before that table's checkpoint file, which
 * holds its effects; nvm_replay_before_file says it of the record being
 * replayed.
 */
bool
nvm_replay_before_file_at(const NvmTableKey *key, XLogRecPtr read)
{
	FilePosition *fp;

	if (file_positions == NULL || read == InvalidXLogRecPtr)
		return false;
	fp = hash_search(file_positions, key, HASH_FIND, NULL);
	return fp != NULL && read < fp->lsn;
}

bool
nvm_replay_before_file(const NvmTableKey *key, XLogReaderState *record)
{
	return nvm_replay_before_file_at(key, record->ReadRecPtr);
}

/*
 * nvm_replay_files_check_end checks, at the end of WAL replay, that the
 * checkpoint files of a rebuild are as of a position the WAL reaches, and
 * stops the start (FATAL) if not.  Files not loaded yet (no nvm record was
 * replayed: the first access loads them) have their manifest read for it.
 */
void
nvm_replay_files_check_end(void)
{
	if (files_lsn == InvalidXLogRecPtr && nvm_binding_is_rebuild())
	{
		NvmCkptManifest m;

		if (nvm_ckptfile_manifest_read(&m))
		{
			files_lsn = (XLogRecPtr) m.lsn;
			nvm_ckptfile_manifest_free(&m);
		}
	}
	check_files_within_wal(files_lsn, GetXLogReplayRecPtr(NULL), FATAL);
}
