/*-------------------------------------------------------------------------
 *
 * nvm_ckptfile.c
 *	  The checkpoint files of the pool and their manifest: names, the
 *	  streaming writer, the streaming reader (usable from threads), the
 *	  merge of a table's files, and removal (nvm_ckptfile.h has the format
 *	  and the persist order).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/stringinfo.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "redo/nvm_ckptfile.h"

/* ---------------------------------------------------------------------
 * Names
 * ---------------------------------------------------------------------
 */

static const char *
kind_suffix(uint8 kind)
{
	return kind == NVM_CKPT_BASE ? "base" : "delta";
}

char *
nvm_ckptfile_table_name(const NvmTableKey *key, uint64 seq, uint8 kind)
{
	return psprintf("%s/%u_%u_%u_%u.%llu.%s", NVM_CHECKPOINT_DIR, key->spc, key->db, key->rel,
					key->pad, (unsigned long long) seq, kind_suffix(kind));
}

char *
nvm_ckptfile_indoubt_name(uint64 seq)
{
	return psprintf("%s/indoubt.%llu", NVM_CHECKPOINT_DIR, (unsigned long long) seq);
}

/* file_path builds "dir/name" of a table's file into buf (the reader's threads). */
static void
file_path(char *buf, size_t len, const char *dir, const NvmTableKey *key, const NvmCkptFileRef *f)
{
	snprintf(buf, len, "%s/%u_%u_%u_%u.%llu.%s", dir, key->spc, key->db, key->rel, key->pad,
			 (unsigned long long) f->seq, kind_suffix(f->kind));
}

/*
 * of_other_version says whether magic is the file magic of another version
 * of the format: its prefix, then another digit.
 */
static bool
of_other_version(const char *magic, const char *ours)
{
	size_t		prefix = strlen(ours) - 1;

	return memcmp(magic, ours, prefix) == 0 && magic[prefix] >= '0' && magic[prefix] <= '9' &&
		magic[prefix] != ours[prefix] && magic[prefix + 1] == '\0';
}

/* The detail and the hint of an error about a file of another version. */
static int
errdetail_other_version(const char *magic, const char *ours)
{
	return errdetail("It was written by another version of nvmam, in version \"%.8s\" of nvmam's checkpoint format; this version reads \"%s\" only.",
					 magic, ours);
}

static int
errhint_other_version(void)
{
	return errhint("Start the cluster with the version of nvmam that wrote it, or restore the cluster from a base backup.");
}

/* ---------------------------------------------------------------------
 * The manifest
 * ---------------------------------------------------------------------
 */

typedef struct ManifestHeader
{
	char		magic[8];
	uint64		seq;
	uint64		lsn;
	uint64		redo;
	uint64		next_seq;
	uint64		indoubt_seq;
	uint64		bytes;			/* of the whole file */
	uint32		ntables;
	uint32		crc;			/* of the whole file, this field 0 */
} ManifestHeader;

/* the fixed part of a table's entry; its files follow */
typedef struct ManifestTable
{
	NvmTableKey key;
	uint64		lsn;
	uint64		next_record;
	uint64		next_version;
	uint64		reserved;
	uint32		nfiles;
	uint32		pad;
} ManifestTable;

static void
manifest_damaged(const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("nvm checkpoint manifest \"%s\" is damaged: %s", NVM_CKPT_MANIFEST, why),
			 errhint("The nvm pool cannot be rebuilt without it: restore the cluster from a base backup.")));
}

/*
 * next_seq_past_files returns a sequence number above that of every file of
 * the directory.
 */
static uint64
next_seq_past_files(void)
{
	DIR		   *d = AllocateDir(NVM_CHECKPOINT_DIR);
	struct dirent *de;
	uint64		next = 1;

	if (d == NULL)
		return next;
	while ((de = ReadDir(d, NVM_CHECKPOINT_DIR)) != NULL)
	{
		const char *dot = strchr(de->d_name, '.');
		unsigned long long seq;

		if (dot != NULL && sscanf(dot + 1, "%llu", &seq) == 1 && seq >= next)
			next = seq + 1;
	}
	FreeDir(d);
	return next;
}

bool
nvm_ckptfile_manifest_read(NvmCkptManifest *m)
{
	return nvm_ckptfile_manifest_read_ours(m, NULL);
}

bool
nvm_ckptfile_manifest_read_ours(NvmCkptManifest *m, bool *other_version)
{
	int			fd;
	struct stat st;
	char	   *buf;
	char	   *p;
	char	   *end;
	ManifestHeader h;
	uint32		want;
	pg_crc32c	crc;

	memset(m, 0, sizeof(*m));
	if (other_version != NULL)
		*other_version = false;
	fd = OpenTransientFile(NVM_CKPT_MANIFEST, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
			return false;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", NVM_CKPT_MANIFEST)));
	}
	if (fstat(fd, &st) != 0 || st.st_size < (off_t) sizeof(h))
		manifest_damaged("it is too short");
	buf = palloc_extended(st.st_size, MCXT_ALLOC_HUGE);
	if (pg_pread(fd, buf, st.st_size, 0) != st.st_size)
		manifest_damaged("it could not be read whole");
	CloseTransientFile(fd);
	memcpy(&h, buf, sizeof(h));
	if (of_other_version(h.magic, NVM_CKPT_MANIFEST_MAGIC))
	{
		if (other_version == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("nvm checkpoint manifest \"%s\" is of another version of the format",
							NVM_CKPT_MANIFEST),
					 errdetail_other_version(h.magic, NVM_CKPT_MANIFEST_MAGIC),
					 errhint_other_version()));
		pfree(buf);
		*other_version = true;
		m->next_seq = next_seq_past_files();
		return false;
	}
	if (memcmp(h.magic, NVM_CKPT_MANIFEST_MAGIC, sizeof(h.magic)) != 0 ||
		h.bytes != (uint64) st.st_size)
		manifest_damaged("its header is not a manifest's");
	want = h.crc;
	((ManifestHeader *) buf)->crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, buf, st.st_size);
	FIN_CRC32C(crc);
	if (crc != want)
		manifest_damaged("its checksum does not match");

	m->seq = h.seq;
	m->lsn = h.lsn;
	m->redo = h.redo;
	m->next_seq = h.next_seq;
	m->indoubt_seq = h.indoubt_seq;
	m->ntables = 0;
	m->cap = Max(h.ntables, 16);
	m->tables = palloc0(sizeof(NvmCkptTable) * m->cap);
	p = buf + sizeof(h);
	end = buf + st.st_size;
	for (uint32 i = 0; i < h.ntables; i++)
	{
		ManifestTable mt;
		NvmCkptTable *t;

		if (p + sizeof(mt) > end)
			manifest_damaged("a table's entry is cut short");
		memcpy(&mt, p, sizeof(mt));
		p += sizeof(mt);
		if (p + (size_t) mt.nfiles * sizeof(NvmCkptFileRef) > end)
			manifest_damaged("a table's files are cut short");
		t = &m->tables[m->ntables++];
		t->key = mt.key;
		t->lsn = mt.lsn;
		t->next_record = mt.next_record;
		t->next_version = mt.next_version;
		t->reserved = mt.reserved;
		t->nfiles = mt.nfiles;
		t->files = palloc(sizeof(NvmCkptFileRef) * Max(mt.nfiles, 1));
		memcpy(t->files, p, sizeof(NvmCkptFileRef) * mt.nfiles);
		p += sizeof(NvmCkptFileRef) * mt.nfiles;
	}
	pfree(buf);
	return true;
}

void
nvm_ckptfile_manifest_write(const NvmCkptManifest *m)
{
	const char *tmp = NVM_CKPT_MANIFEST ".tmp";
	StringInfoData buf;
	ManifestHeader h;
	pg_crc32c	crc;
	int			fd;

	initStringInfo(&buf);
	memset(&h, 0, sizeof(h));
	appendBinaryStringInfo(&buf, (char *) &h, sizeof(h));
	for (uint32 i = 0; i < m->ntables; i++)
	{
		const NvmCkptTable *t = &m->tables[i];
		ManifestTable mt;

		memset(&mt, 0, sizeof(mt));
		mt.key = t->key;
		mt.lsn = t->lsn;
		mt.next_record = t->next_record;
		mt.next_version = t->next_version;
		mt.reserved = t->reserved;
		mt.nfiles = t->nfiles;
		appendBinaryStringInfo(&buf, (char *) &mt, sizeof(mt));
		appendBinaryStringInfo(&buf, (char *) t->files, sizeof(NvmCkptFileRef) * t->nfiles);
	}
	memcpy(h.magic, NVM_CKPT_MANIFEST_MAGIC, sizeof(h.magic));
	h.seq = m->seq;
	h.lsn = m->lsn;
	h.redo = m->redo;
	h.next_seq = m->next_seq;
	h.indoubt_seq = m->indoubt_seq;
	h.bytes = buf.len;
	h.ntables = m->ntables;
	h.crc = 0;
	memcpy(buf.data, &h, sizeof(h));
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, buf.data, buf.len);
	FIN_CRC32C(crc);
	h.crc = crc;
	memcpy(buf.data, &h, sizeof(h));

	if (MakePGDirectory(NVM_CHECKPOINT_DIR) == 0)
		fsync_fname("pg_nvm", true);
	fd = OpenTransientFile(tmp, O_RDWR | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
	if (pg_pwrite(fd, buf.data, buf.len, 0) != buf.len || pg_fsync(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
	CloseTransientFile(fd);
	(void) durable_rename(tmp, NVM_CKPT_MANIFEST, ERROR);
	pfree(buf.data);
}

NvmCkptTable *
nvm_ckptfile_manifest_find(const NvmCkptManifest *m, const NvmTableKey *key)
{
	for (uint32 i = 0; i < m->ntables; i++)
		if (memcmp(&m->tables[i].key, key, sizeof(*key)) == 0)
			return &m->tables[i];
	return NULL;
}

NvmCkptTable *
nvm_ckptfile_manifest_add(NvmCkptManifest *m, const NvmTableKey *key)
{
	NvmCkptTable *t;

	if (m->ntables == m->cap)
	{
		m->cap = Max(m->cap * 2, 16);
		m->tables = m->tables == NULL ? palloc0(sizeof(NvmCkptTable) * m->cap) :
			repalloc(m->tables, sizeof(NvmCkptTable) * m->cap);
	}
	t = &m->tables[m->ntables++];
	memset(t, 0, sizeof(*t));
	t->key = *key;
	return t;
}

void
nvm_ckptfile_manifest_free(NvmCkptManifest *m)
{
	for (uint32 i = 0; i < m->ntables; i++)
		if (m->tables[i].files != NULL)
			pfree(m->tables[i].files);
	if (m->tables != NULL)
		pfree(m->tables);
	memset(m, 0, sizeof(*m));
}

/* named_by says whether file name (in the directory) is one m names. */
static bool
named_by(const NvmCkptManifest *m, const char *name)
{
	NvmTableKey key;
	unsigned long long seq;
	char		kind[8];
	int			len = 0;

	if (strcmp(name, "manifest") == 0)
		return true;
	if (sscanf(name, "indoubt.%llu%n", &seq, &len) == 1 && name[len] == '\0')
		return m->indoubt_seq != 0 && seq == m->indoubt_seq;
	memset(&key, 0, sizeof(key));
	if (sscanf(name, "%u_%u_%u_%u.%llu.%7[a-z]%n", &key.spc, &key.db, &key.rel, &key.pad,
			   &seq, kind, &len) == 6 && name[len] == '\0')
	{
		NvmCkptTable *t = nvm_ckptfile_manifest_find(m, &key);

		if (t == NULL)
			return false;
		for (uint32 i = 0; i < t->nfiles; i++)
			if (t->files[i].seq == seq && strcmp(kind_suffix(t->files[i].kind), kind) == 0)
				return true;
	}
	return false;
}

uint64
nvm_ckptfile_remove_unnamed(const NvmCkptManifest *m)
{
	DIR		   *d = AllocateDir(NVM_CHECKPOINT_DIR);
	struct dirent *de;
	uint64		removed = 0;

	if (d == NULL)
		return 0;
	while ((de = ReadDir(d, NVM_CHECKPOINT_DIR)) != NULL)
	{
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
			named_by(m, de->d_name))
			continue;
		if (unlink(psprintf("%s/%s", NVM_CHECKPOINT_DIR, de->d_name)) == 0)
			removed++;
	}
	FreeDir(d);
	if (removed > 0)
		fsync_fname(NVM_CHECKPOINT_DIR, true);
	return removed;
}

void
nvm_ckptfile_remove_all(void)
{
	DIR		   *d = AllocateDir(NVM_CHECKPOINT_DIR);
	struct dirent *de;

	if (d == NULL)
		return;
	while ((de = ReadDir(d, NVM_CHECKPOINT_DIR)) != NULL)
	{
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		(void) unlink(psprintf("%s/%s", NVM_CHECKPOINT_DIR, de->d_name));
	}
	FreeDir(d);
	fsync_fname(NVM_CHECKPOINT_DIR, true);
}

/* ---------------------------------------------------------------------
 * The writer
 * ---------------------------------------------------------------------
 */

struct NvmCkptWriter
{
	char	   *path;
	char	   *tmp;
	int			fd;
	off_t		off;			/* where the next block goes */
	NvmCkptFileHeader h;
	StringInfoData rows;		/* the block being gathered */
	NvmCkptBlockHeader bh;
	NvmCkptBlockRef *index;
	uint32		index_cap;
};

static void
writer_write(NvmCkptWriter *w, const void *data, size_t len, off_t off)
{
	if (pg_pwrite(w->fd, data, len, off) != (ssize_t) len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", w->tmp)));
}

NvmCkptWriter *
nvm_ckptfile_begin(const NvmTableKey *key, uint8 kind, uint64 seq, uint64 lsn)
{
	NvmCkptWriter *w = palloc0(sizeof(NvmCkptWriter));

	if (MakePGDirectory(NVM_CHECKPOINT_DIR) == 0)
		fsync_fname("pg_nvm", true);
	w->path = kind == NVM_CKPT_INDOUBT ? nvm_ckptfile_indoubt_name(seq) :
		nvm_ckptfile_table_name(key, seq, kind);
	w->tmp = psprintf("%s.tmp", w->path);
	w->fd = OpenTransientFile(w->tmp, O_RDWR | O_CREAT | O_TRUNC | PG_BINARY);
	if (w->fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", w->tmp)));
	memcpy(w->h.magic, NVM_CKPT_FILE_MAGIC, sizeof(w->h.magic));
	if (key != NULL)
		w->h.key = *key;
	w->h.seq = seq;
	w->h.lsn = lsn;
	w->h.kind = kind;
	w->off = sizeof(NvmCkptFileHeader);
	initStringInfo(&w->rows);
	return w;
}

/* flush_block writes the gathered rows as one block. */
static void
flush_block(NvmCkptWriter *w)
{
	pg_crc32c	crc;

	if (w->bh.nrows == 0 && w->rows.len == 0)
		return;
	w->bh.len = w->rows.len;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, w->rows.data, w->rows.len);
	FIN_CRC32C(crc);
	w->bh.crc = crc;
	if (w->h.nblocks == w->index_cap)
	{
		w->index_cap = Max(w->index_cap * 2, 64);
		w->index = w->index == NULL ? palloc(sizeof(NvmCkptBlockRef) * w->index_cap) :
			repalloc(w->index, sizeof(NvmCkptBlockRef) * w->index_cap);
	}
	w->index[w->h.nblocks].off = w->off;
	w->index[w->h.nblocks].first_record = w->bh.first_record;
	w->index[w->h.nblocks].last_record = w->bh.last_record;
	w->h.nblocks++;
	writer_write(w, &w->bh, sizeof(w->bh), w->off);
	writer_write(w, w->rows.data, w->rows.len, w->off + sizeof(w->bh));
	w->off += sizeof(w->bh) + w->rows.len;
	w->h.bytes += sizeof(w->bh) + w->rows.len;
	resetStringInfo(&w->rows);
	memset(&w->bh, 0, sizeof(w->bh));
}

void
nvm_ckptfile_add_row(NvmCkptWriter *w, const xl_nvm_version *xv, const void *data)
{
	if (w->rows.len > 0 && w->rows.len + sizeof(*xv) + xv->data_len > NVM_CKPT_BLOCK_BYTES)
		flush_block(w);
	if (w->bh.nrows == 0)
		w->bh.first_record = xv->record_no;
	w->bh.last_record = xv->record_no;
	w->bh.nrows++;
	w->h.nrows++;
	appendBinaryStringInfo(&w->rows, (const char *) xv, sizeof(*xv));
	if (xv->data_len > 0)
		appendBinaryStringInfo(&w->rows, data, xv->data_len);
}

void
nvm_ckptfile_add_blob(NvmCkptWriter *w, const void *data, size_t len)
{
	appendBinaryStringInfo(&w->rows, data, len);
	w->bh.nrows++;
	w->h.nrows++;
	if (w->rows.len >= NVM_CKPT_BLOCK_BYTES)
		flush_block(w);
}

uint64
nvm_ckptfile_finish(NvmCkptWriter *w, uint64 *nrows)
{
	pg_crc32c	crc;
	uint64		size;

	flush_block(w);
	w->h.index_off = w->off;
	w->h.crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &w->h, sizeof(w->h));
	if (w->h.nblocks > 0)
		COMP_CRC32C(crc, w->index, sizeof(NvmCkptBlockRef) * w->h.nblocks);
	FIN_CRC32C(crc);
	w->h.crc = crc;
	if (w->h.nblocks > 0)
		writer_write(w, w->index, sizeof(NvmCkptBlockRef) * w->h.nblocks, w->off);
	writer_write(w, &w->h, sizeof(w->h), 0);
	if (pg_fsync(w->fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m", w->tmp)));
	CloseTransientFile(w->fd);
	w->fd = -1;
	(void) durable_rename(w->tmp, w->path, ERROR);
	size = w->off + sizeof(NvmCkptBlockRef) * w->h.nblocks;
	if (nrows != NULL)
		*nrows = w->h.nrows;
	pfree(w->rows.data);
	if (w->index != NULL)
		pfree(w->index);
	pfree(w->tmp);
	pfree(w->path);
	pfree(w);
	return size;
}

void
nvm_ckptfile_abandon(NvmCkptWriter *w)
{
	if (w->fd >= 0)
		CloseTransientFile(w->fd);
	(void) unlink(w->tmp);
}

/* ---------------------------------------------------------------------
 * The reader (no palloc, no ereport: threads use it)
 * ---------------------------------------------------------------------
 */

struct NvmCkptReader
{
	char		path[MAXPGPATH];
	int			fd;
	NvmCkptFileHeader h;
	NvmCkptBlockRef *index;
	uint32		next_block;		/* the block to read after this one */
	char	   *rows;			/* the block read */
	size_t		rows_cap;
	const char *p;				/* the next row in it */
	const char *end;
	uint64		bytes_read;		/* of the file, so far */
	uint32		advised_to;		/* blocks below this one are asked for ahead */
};

/*
 * Blocks the reader asks the kernel for ahead of the one it reads
 * (posix_fadvise WILLNEED): the disk reads them while the caller works
 * through the block it has, as a cold file is read at a rebuild.
 */
#define READ_AHEAD_BLOCKS	8

static bool
fail(NvmCkptError *err, const char *path, const char *why)
{
	snprintf(err->msg, sizeof(err->msg), "nvm checkpoint file \"%s\" is damaged: %s", path, why);
	err->other_version = false;
	return false;
}

static void
clear_error(NvmCkptError *err)
{
	err->msg[0] = '\0';
	err->other_version = false;
}

static bool
read_at(NvmCkptReader *r, void *buf, size_t len, off_t off, NvmCkptError *err)
{
	size_t		done = 0;

	while (done < len)
	{
		ssize_t		n = pread(r->fd, (char *) buf + done, len - done, off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
		{
			if (n < 0)
				snprintf(err->msg, sizeof(err->msg), "could not read file \"%s\": %s",
						 r->path, strerror(errno));
			else
				fail(err, r->path, "it is cut short");
			return false;
		}
		done += n;
	}
	r->bytes_read += len;
	return true;
}

NvmCkptReader *
nvm_ckptreader_open(const char *path, NvmCkptError *err)
{
	NvmCkptReader *r = calloc(1, sizeof(NvmCkptReader));
	uint32		want;
	pg_crc32c	crc;

	clear_error(err);
	if (r == NULL)
	{
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return NULL;
	}
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->fd = open(path, O_RDONLY | PG_BINARY, 0);
	if (r->fd < 0)
	{
		snprintf(err->msg, sizeof(err->msg), "could not open file \"%s\": %s", path,
				 strerror(errno));
		free(r);
		return NULL;
	}
	if (!read_at(r, &r->h, sizeof(r->h), 0, err))
		goto bad;
	if (memcmp(r->h.magic, NVM_CKPT_FILE_MAGIC, sizeof(r->h.magic)) != 0)
	{
		if (of_other_version(r->h.magic, NVM_CKPT_FILE_MAGIC))
		{
			snprintf(err->msg, sizeof(err->msg),
					 "nvm checkpoint file \"%s\" is of another version of the format", path);
			memcpy(err->magic, r->h.magic, sizeof(err->magic));
			err->other_version = true;
		}
		else
			fail(err, path, "it is not a checkpoint file");
		goto bad;
	}
	if (r->h.nblocks > 0)
	{
		r->index = malloc(sizeof(NvmCkptBlockRef) * r->h.nblocks);
		if (r->index == NULL)
		{
			snprintf(err->msg, sizeof(err->msg), "out of memory");
			goto bad;
		}
		if (!read_at(r, r->index, sizeof(NvmCkptBlockRef) * r->h.nblocks, r->h.index_off, err))
			goto bad;
	}
	want = r->h.crc;
	r->h.crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &r->h, sizeof(r->h));
	if (r->h.nblocks > 0)
		COMP_CRC32C(crc, r->index, sizeof(NvmCkptBlockRef) * r->h.nblocks);
	FIN_CRC32C(crc);
	r->h.crc = want;
	if (crc != want)
	{
		fail(err, path, "the checksum of its header does not match");
		goto bad;
	}
	return r;

bad:
	nvm_ckptreader_close(r);
	return NULL;
}

void
nvm_ckptfile_report(int elevel, const char *what, const NvmCkptError *err, const char *hint)
{
	Assert(elevel >= ERROR);
	if (err->other_version)
		ereport(elevel,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 what ? errmsg("%s: %s", what, err->msg) : errmsg("%s", err->msg),
				 errdetail_other_version(err->magic, NVM_CKPT_FILE_MAGIC),
				 errhint_other_version()));
	ereport(elevel,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 what ? errmsg("%s: %s", what, err->msg) : errmsg("%s", err->msg),
			 hint ? errhint("%s", hint) : 0));
	pg_unreachable();
}

const NvmCkptFileHeader *
nvm_ckptreader_header(const NvmCkptReader *r)
{
	return &r->h;
}

/*
 * advise_ahead asks the kernel to read the blocks after b, up to
 * READ_AHEAD_BLOCKS of them, that were not asked for yet.  Blocks lie in
 * order from the header to the block index.
 */
static void
advise_ahead(NvmCkptReader *r, uint32 b)
{
	uint32		from = Max(r->advised_to, b + 1);
	uint32		to = Min(b + 1 + READ_AHEAD_BLOCKS, r->h.nblocks);
	off_t		start,
				end;

	if (from >= to)
		return;
	start = (off_t) r->index[from].off;
	end = to < r->h.nblocks ? (off_t) r->index[to].off : (off_t) r->h.index_off;
	if (end > start)
		(void) posix_fadvise(r->fd, start, end - start, POSIX_FADV_WILLNEED);
	r->advised_to = to;
}

/* read_block reads block b into r->rows, checked. */
static bool
read_block(NvmCkptReader *r, uint32 b, NvmCkptError *err)
{
	NvmCkptBlockHeader bh;
	pg_crc32c	crc;

	advise_ahead(r, b);
	if (!read_at(r, &bh, sizeof(bh), r->index[b].off, err))
		return false;
	if (bh.first_record != r->index[b].first_record || bh.last_record != r->index[b].last_record)
		return fail(err, r->path, "a block differs from its index entry");
	if (bh.len > r->rows_cap)
	{
		char	   *n = realloc(r->rows, bh.len);

		if (n == NULL)
		{
			snprintf(err->msg, sizeof(err->msg), "out of memory");
			return false;
		}
		r->rows = n;
		r->rows_cap = bh.len;
	}
	if (bh.len > 0 && !read_at(r, r->rows, bh.len, r->index[b].off + sizeof(bh), err))
		return false;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, r->rows, bh.len);
	FIN_CRC32C(crc);
	if (crc != bh.crc)
		return fail(err, r->path, "the checksum of a block does not match");
	r->p = r->rows;
	r->end = r->rows + bh.len;
	r->next_block = b + 1;
	return true;
}

bool
nvm_ckptreader_seek(NvmCkptReader *r, uint64 from_record, NvmCkptError *err)
{
	uint32		lo = 0,
				hi = r->h.nblocks;

	/* the first block whose last record reaches from_record */
	while (lo < hi)
	{
		uint32		mid = (lo + hi) / 2;

		if (r->index[mid].last_record < from_record)
			lo = mid + 1;
		else
			hi = mid;
	}
	r->p = r->end = NULL;
	r->next_block = lo;
	if (lo >= r->h.nblocks)
		return true;
	if (!read_block(r, lo, err))
		return false;
	/* skip the rows before from_record */
	while (r->p < r->end)
	{
		xl_nvm_version xv;

		memcpy(&xv, r->p, sizeof(xv));
		if (xv.record_no >= from_record)
			break;
		r->p += sizeof(xv) + xv.data_len;
	}
	return true;
}

bool
nvm_ckptreader_next(NvmCkptReader *r, xl_nvm_version *xv, const char **data, NvmCkptError *err)
{
	clear_error(err);
	while (r->p == NULL || r->p >= r->end)
	{
		if (r->next_block >= r->h.nblocks)
			return false;
		if (!read_block(r, r->next_block, err))
			return false;
	}
	if (r->p + sizeof(*xv) > r->end)
		return fail(err, r->path, "a row is cut short");
	memcpy(xv, r->p, sizeof(*xv));
	r->p += sizeof(*xv);
	if (r->p + xv->data_len > r->end)
		return fail(err, r->path, "a row's data is cut short");
	*data = r->p;
	r->p += xv->data_len;
	return true;
}

bool
nvm_ckptreader_blob(NvmCkptReader *r, char **data, size_t *len, NvmCkptError *err)
{
	size_t		total = 0;
	char	   *out = NULL;

	clear_error(err);
	for (uint32 b = 0; b < r->h.nblocks; b++)
	{
		char	   *n;

		if (!read_block(r, b, err))
		{
			free(out);
			return false;
		}
		n = realloc(out, total + (r->end - r->p) + 1);
		if (n == NULL)
		{
			free(out);
			snprintf(err->msg, sizeof(err->msg), "out of memory");
			return false;
		}
		out = n;
		memcpy(out + total, r->p, r->end - r->p);
		total += r->end - r->p;
	}
	*data = out;
	*len = total;
	return true;
}

void
nvm_ckptreader_close(NvmCkptReader *r)
{
	if (r == NULL)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->index);
	free(r->rows);
	free(r);
}

/* ---------------------------------------------------------------------
 * The cursor over a table's files
 * ---------------------------------------------------------------------
 */

typedef struct CursorInput
{
	NvmCkptReader *r;
	bool		has;			/* row holds the input's next row */
	xl_nvm_version xv;
	const char *data;
} CursorInput;

struct NvmCkptCursor
{
	int			n;
	int			pending;		/* the input whose row was returned last, -1 = none */
	uint64		hi;
	CursorInput *in;			/* ascending sequence numbers */
};

/* advance reads input i's next row below the cursor's end. */
static bool
advance(NvmCkptCursor *c, int i, NvmCkptError *err)
{
	CursorInput *in = &c->in[i];

	in->has = nvm_ckptreader_next(in->r, &in->xv, &in->data, err);
	if (!in->has && err->msg[0] != '\0')
		return false;
	if (in->has && in->xv.record_no >= c->hi)
		in->has = false;
	return true;
}

NvmCkptCursor *
nvm_ckptcursor_open(const char *dir, const NvmCkptTable *t, uint64 lo, uint64 hi,
					NvmCkptError *err)
{
	NvmCkptCursor *c = calloc(1, sizeof(NvmCkptCursor));

	clear_error(err);
	if (c == NULL || (c->in = calloc(Max(t->nfiles, 1), sizeof(CursorInput))) == NULL)
	{
		free(c);
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return NULL;
	}
	c->hi = hi;
	c->pending = -1;
	for (uint32 i = 0; i < t->nfiles; i++)
	{
		char		path[MAXPGPATH];

		file_path(path, sizeof(path), dir, &t->key, &t->files[i]);
		c->in[i].r = nvm_ckptreader_open(path, err);
		c->n = i + 1;
		if (c->in[i].r == NULL || !nvm_ckptreader_seek(c->in[i].r, lo, err) || !advance(c, i, err))
		{
			nvm_ckptcursor_close(c);
			return NULL;
		}
	}
	return c;
}

bool
nvm_ckptcursor_next(NvmCkptCursor *c, xl_nvm_version *xv, const char **data, NvmCkptError *err)
{
	int			win = -1;
	uint64		rec = PG_UINT64_MAX;

	clear_error(err);
	/* the row returned last stayed in its reader's block until now */
	if (c->pending >= 0)
	{
		int			i = c->pending;

		c->pending = -1;
		if (!advance(c, i, err))
			return false;
	}
	/* the lowest record number; of equal ones, the newest file */
	for (int i = 0; i < c->n; i++)
		if (c->in[i].has && c->in[i].xv.record_no <= rec)
		{
			rec = c->in[i].xv.record_no;
			win = i;
		}
	if (win < 0)
		return false;
	*xv = c->in[win].xv;
	*data = c->in[win].data;
	/* the older files' rows of the same record are passed over */
	for (int i = 0; i < c->n; i++)
		if (i != win && c->in[i].has && c->in[i].xv.record_no == rec && !advance(c, i, err))
			return false;
	c->pending = win;
	return true;
}

uint64
nvm_ckptcursor_bytes_read(const NvmCkptCursor *c)
{
	uint64		n = 0;

	for (int i = 0; i < c->n; i++)
		n += c->in[i].r->bytes_read;
	return n;
}

void
nvm_ckptcursor_close(NvmCkptCursor *c)
{
	if (c == NULL)
		return;
	for (int i = 0; i < c->n; i++)
		nvm_ckptreader_close(c->in[i].r);
	free(c->in);
	free(c);
}

int
nvm_ckptfile_split(const char *dir, const NvmCkptTable *t, uint64 *cuts, int max,
				   NvmCkptError *err)
{
	char		path[MAXPGPATH];
	NvmCkptReader *r;
	const NvmCkptFileHeader *h;
	int			n = 0;

	clear_error(err);
	if (t->nfiles == 0 || t->files[0].kind != NVM_CKPT_BASE || max < 1)
		return 0;
	file_path(path, sizeof(path), dir, &t->key, &t->files[0]);
	if ((r = nvm_ckptreader_open(path, err)) == NULL)
		return -1;
	h = nvm_ckptreader_header(r);
	for (int k = 1; k <= max && h->nblocks > 1; k++)
	{
		uint32		b = (uint32) ((uint64) h->nblocks * k / (max + 1));

		if (b == 0 || b >= h->nblocks)
			continue;
		if (n > 0 && cuts[n - 1] >= r->index[b].first_record)
			continue;
		cuts[n++] = r->index[b].first_record;
	}
	nvm_ckptreader_close(r);
	return n;
}
