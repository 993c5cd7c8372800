/*-------------------------------------------------------------------------
 *
 * nvm_checkpoint.c
 *	  The checkpoint of the pool in files, where commits of nvm rows are
 *	  durable through the WAL (claim/nvm_durability.c): a file per
 *	  permanent table in pg_nvm/checkpoint, rewritten at a checkpoint only
 *	  when the table changed since, from which a pool torn or lost by a
 *	  crash of the operating system is rebuilt with the WAL after them.
 *
 * A table's file holds its committed rows (the newest committed version of
 * every live record, as a RESYNC group logs them: nvm_resync.c), its
 * counters and the version numbers reserved in the WAL, all as of one
 * position of the WAL, P (the header's lsn).  The rows are read under the
 * exclusive group lock (nvm_redo.c), which keeps out every COMMIT,
 * STORAGE and RESERVE record of the pool, and P is the WAL's insert
 * position then: every record before P is in the file, none after it.  A
 * rebuild (redo/nvm_replay.c) loads the files into the new pool and, for
 * each table, skips the records before its P.
 *
 * When a file is written (nvm_checkpoint_write, by the "nvm backup watch"
 * worker at every checkpoint, after the checkpoint chose its redo point R
 * and before its record; checkpoint/nvm_backup.c): for every permanent table whose
 * last redo record (the pool's per-table redo position, noted after every
 * COMMIT, RESERVE and content-changing STORAGE record: nvm_redo.c) lies
 * beyond its file's P, or whose file is older than this run's first image
 * of the pool (fresh_since: the redo positions of a rebuilt or restored
 * pool say nothing of the WAL before it).  The files of tables gone are
 * removed.  The worker then logs the rest of the image in the WAL (the row
 * locks of prepared transactions and the transactions in doubt, whose
 * versions no file holds), and only then the checkpoint writes its record.
 * So when a checkpoint is complete, every table's file holds it at some P,
 * and the WAL from P to R held no record of it, or the file is at P >= R;
 * the WAL from R on is kept.  A table unchanged since its last file is not
 * written again: a checkpoint writes what changed.
 *
 * One leak: a table dropped after the last checkpoint the worker took part
 * in keeps its file through a checkpoint it does not take part in (the
 * end-of-recovery or shutdown checkpoint); a rebuild from that checkpoint
 * loads the table, whose drop it does not replay, and the pool keeps its
 * storage (no relation names it; a new one with its relfilenode replaces
 * it).
 *
 * Persist order of a file: the WAL is flushed to P (no row in a file is
 * ahead of the WAL: a tied commit's heap part is durable first), the file
 * is written under a temporary name and fsynced, then renamed durably
 * (durable_rename).  A crash leaves the old file or the new one, whole; a
 * damaged file (its CRC) stops a rebuild with an error.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "pool.h"
#include "replica.h"
#include "store.h"

#include "checkpoint/nvm_checkpoint.h"
#include "redo/nvm_ckptfile.h"
#include "redo/nvm_redo.h"
#include "redo/nvm_redofmt.h"
#include "redo/nvm_resync.h"

/* Bytes of rows gathered before they are written to the file. */
#define CHECKPOINT_WRITE_BYTES	(4 * 1024 * 1024)

/* The file being written: where its rows go, and what they add up to. */
typedef struct FileWriter
{
	const char *path;
	int			fd;
	off_t		off;
	pg_crc32c	crc;
	StringInfoData buf;
	uint64		nrows;
} FileWriter;

/* flush_rows writes the gathered rows to the file. */
static void
flush_rows(FileWriter *w)
{
	if (w->buf.len == 0)
		return;
	COMP_CRC32C(w->crc, w->buf.data, w->buf.len);
	if (pg_pwrite(w->fd, w->buf.data, w->buf.len, w->off) != w->buf.len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", w->path)));
	w->off += w->buf.len;
	resetStringInfo(&w->buf);
}

/* write_row gathers a row (nvm_resync_each_row's visitor). */
static void
write_row(uint64 record_no, const NvmVersion *v, void *arg)
{
	FileWriter *w = (FileWriter *) arg;

	nvm_resync_append_row(&w->buf, record_no, v);
	w->nrows++;
	if (w->buf.len >= CHECKPOINT_WRITE_BYTES)
		flush_rows(w);
}

/*
 * write_table_file writes key's file (see the file header); a table gone
 * meanwhile writes nothing (false).
 */
static bool
write_table_file(const NvmTableKey *key, NvmCheckpointCounts *counts)
{
	char	   *path = nvm_ckptfile_name(key);
	char	   *tmp = psprintf("%s.tmp", path);
	NvmCheckpointHeader h;
	FileWriter	w;
	volatile bool found = false;

	memset(&h, 0, sizeof(h));
	memset(&w, 0, sizeof(w));
	w.path = tmp;
	w.off = sizeof(h);
	INIT_CRC32C(w.crc);
	initStringInfo(&w.buf);
	w.fd = OpenTransientFile(tmp, O_RDWR | O_CREAT | O_TRUNC | PG_BINARY);
	if (w.fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
	nvm_redo_group_begin();
	PG_TRY();
	{
		NvmTable	t;

		if (nvm_table_open(key, &t))
		{
			found = true;
			h.lsn = nvm_inserted_wal_end();
			nvm_table_counters(&t, &h.next_record, &h.next_version);
			h.reserved = nvm_table_redo_reserved(&t);
			(void) nvm_resync_each_row(&t, write_row, &w);
			flush_rows(&w);
		}
	}
	PG_FINALLY();
	{
		nvm_redo_group_end();
	}
	PG_END_TRY();
	if (!found)
	{
		CloseTransientFile(w.fd);
		(void) unlink(tmp);
		return false;
	}
	/* no row of the file is ahead of the WAL */
	XLogFlush(h.lsn);
	memcpy(h.magic, NVM_CHECKPOINT_MAGIC, sizeof(h.magic));
	h.key = *key;
	h.nrows = w.nrows;
	h.bytes = w.off - sizeof(h);
	h.crc = 0;
	COMP_CRC32C(w.crc, &h, sizeof(h));
	FIN_CRC32C(w.crc);
	h.crc = w.crc;
	if (pg_pwrite(w.fd, &h, sizeof(h), 0) != sizeof(h) || pg_fsync(w.fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
	CloseTransientFile(w.fd);
	(void) durable_rename(tmp, path, ERROR);
	counts->written++;
	counts->rows += w.nrows;
	counts->bytes += w.off;
	pfree(w.buf.data);
	return true;
}

/*
 * file_is_current says whether key's file still holds table t: written in
 * this run (at or after fresh_since) and after the table's last redo.
 */
static bool
file_is_current(const NvmTableKey *key, NvmTable *t, XLogRecPtr fresh_since)
{
	NvmCheckpointHeader h;
	uint64		redo = atomic_load(&t->desc->redo_lsn);

	if (!nvm_ckptfile_read_header(key, &h))
		return false;
	return h.lsn >= fresh_since && redo != NVM_REDO_RESYNC && redo <= h.lsn;
}

/*
 * nvm_checkpoint_write: see nvm_checkpoint.h and the file header.  The
 * caller delays the checkpoint (DELAY_CHKPT_START) until it is done, and
 * pins the collection horizon (no version read is collected meanwhile).
 */
void
nvm_checkpoint_write(XLogRecPtr fresh_since, NvmCheckpointCounts *counts)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();
	DIR		   *d;
	struct dirent *de;

	memset(counts, 0, sizeof(*counts));
	if (MakePGDirectory(NVM_CHECKPOINT_DIR) == 0)
		fsync_fname("pg_nvm", true);
	for (size_t i = 0; i < n; i++)
	{
		NvmTableKey key;
		NvmTable	t;

		if (atomic_load(&dir[i].desc) == 0)
			continue;
		memcpy(&key, &dir[i].key, sizeof(key));
		if (NVM_KEY_KIND(&key) != NVM_KIND_PERMANENT || !nvm_table_open(&key, &t))
			continue;
		if (file_is_current(&key, &t, fresh_since))
			counts->kept++;
		else
			(void) write_table_file(&key, counts);
		CHECK_FOR_INTERRUPTS();
	}

	/* the files of tables gone */
	d = AllocateDir(NVM_CHECKPOINT_DIR);
	while ((de = ReadDir(d, NVM_CHECKPOINT_DIR)) != NULL)
	{
		NvmTableKey key;
		NvmTable	t;

		if (!nvm_ckptfile_key(de->d_name, &key) || nvm_table_open(&key, &t))
			continue;
		if (unlink(psprintf("%s/%s", NVM_CHECKPOINT_DIR, de->d_name)) == 0)
			counts->removed++;
	}
	FreeDir(d);
	if (counts->removed > 0)
		fsync_fname(NVM_CHECKPOINT_DIR, true);
}
