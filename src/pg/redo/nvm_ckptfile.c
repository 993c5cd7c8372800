/*-------------------------------------------------------------------------
 *
 * nvm_ckptfile.c
 *	  The checkpoint files of the pool (pg_nvm/checkpoint; nvm_checkpoint.c
 *	  writes them and says what they hold): their names, the reading of a
 *	  file, checked, for the rebuild of a lost pool (nvm_replay.c), and the
 *	  removal of the files a restored base backup came with.
 *
 * A file is "<spc>_<db>_<rel>_<pad>" of its table's key: a header
 * (NvmCheckpointHeader), then its rows, each an xl_nvm_version and its
 * data, as in RESYNC ROWS records.  The CRC-32C covers the rows, then the
 * header with its crc field zero.  Files being written have a ".tmp"
 * suffix and are not read.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "redo/nvm_ckptfile.h"

/* nvm_ckptfile_name returns the path of key's file (relative to the data directory). */
char *
nvm_ckptfile_name(const NvmTableKey *key)
{
	return psprintf("%s/%u_%u_%u_%u", NVM_CHECKPOINT_DIR, key->spc, key->db, key->rel, key->pad);
}

/* nvm_ckptfile_key parses a file name back into its key; false for other names. */
bool
nvm_ckptfile_key(const char *name, NvmTableKey *key)
{
	char		tail;

	memset(key, 0, sizeof(*key));
	return sscanf(name, "%u_%u_%u_%u%c", &key->spc, &key->db, &key->rel, &key->pad, &tail) == 4;
}

/*
 * nvm_ckptfile_read_header reads the header of key's file into h; false if
 * the file is missing or not key's checkpoint file.
 */
bool
nvm_ckptfile_read_header(const NvmTableKey *key, NvmCheckpointHeader *h)
{
	int			fd = OpenTransientFile(nvm_ckptfile_name(key), O_RDONLY | PG_BINARY);
	bool		ok;

	if (fd < 0)
		return false;
	ok = read(fd, h, sizeof(*h)) == sizeof(*h) &&
		memcmp(h->magic, NVM_CHECKPOINT_MAGIC, sizeof(h->magic)) == 0 &&
		memcmp(&h->key, key, sizeof(*key)) == 0;
	CloseTransientFile(fd);
	return ok;
}

/*
 * nvm_ckptfile_each: see nvm_ckptfile.h.  A file that is damaged
 * (short, or its CRC does not match) stops with an error: the pool cannot
 * be rebuilt without it.  Temporary files of a checkpoint cut short are
 * left out.
 */
uint64
nvm_ckptfile_each(void (*load) (const NvmCheckpointHeader *h, const char *rows, void *arg),
				  void *arg)
{
	DIR		   *d = AllocateDir(NVM_CHECKPOINT_DIR);
	struct dirent *de;
	uint64		files = 0;

	if (d == NULL)
		return 0;
	while ((de = ReadDir(d, NVM_CHECKPOINT_DIR)) != NULL)
	{
		NvmTableKey key;
		char	   *path;
		NvmCheckpointHeader h;
		char	   *rows;
		int			fd;
		pg_crc32c	crc;
		uint32		want;

		if (!nvm_ckptfile_key(de->d_name, &key))
			continue;
		path = psprintf("%s/%s", NVM_CHECKPOINT_DIR, de->d_name);
		fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
		if (fd < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", path)));
		if (read(fd, &h, sizeof(h)) != sizeof(h) ||
			memcmp(h.magic, NVM_CHECKPOINT_MAGIC, sizeof(h.magic)) != 0 ||
			memcmp(&h.key, &key, sizeof(key)) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("nvm checkpoint file \"%s\" is damaged", path),
					 errhint("The nvm pool cannot be rebuilt without it: restore the cluster from a base backup.")));
		rows = palloc_extended(Max(h.bytes, 1), MCXT_ALLOC_HUGE);
		if (read(fd, rows, h.bytes) != (ssize_t) h.bytes)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("nvm checkpoint file \"%s\" is damaged", path),
					 errhint("The nvm pool cannot be rebuilt without it: restore the cluster from a base backup.")));
		CloseTransientFile(fd);
		want = h.crc;
		h.crc = 0;
		INIT_CRC32C(crc);
		COMP_CRC32C(crc, rows, h.bytes);
		COMP_CRC32C(crc, &h, sizeof(h));
		FIN_CRC32C(crc);
		if (crc != want)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("nvm checkpoint file \"%s\" is damaged: its checksum does not match", path),
					 errhint("The nvm pool cannot be rebuilt without it: restore the cluster from a base backup.")));
		h.crc = want;
		load(&h, rows, arg);
		pfree(rows);
		files++;
	}
	FreeDir(d);
	return files;
}

/* nvm_ckptfile_remove_all: see nvm_ckptfile.h. */
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
