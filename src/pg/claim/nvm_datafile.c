/*-------------------------------------------------------------------------
 *
 * nvm_datafile.c
 *	  Small files of nvmam in the data directory, under pg_nvm/ (the
 *	  binding file of nvm_claim.c, the storage file of nvm_durability.c):
 *	  read whole, and replaced durably, so that a crash leaves the old file
 *	  or the new one.
 *
 * Persist order of a replacement: the new contents go to NAME.tmp, which
 * is fsynced; durable_rename then fsyncs it again, renames it over NAME and
 * fsyncs pg_nvm.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "common/file_perm.h"
#include "miscadmin.h"
#include "storage/fd.h"

#include "claim/nvm_datafile.h"

/*
 * nvm_datafile_write: see nvm_datafile.h.
 */
bool
nvm_datafile_write(const char *name, const char *what, const char *buf, int len,
				   int elevel)
{
	char		path[MAXPGPATH];
	char		tmp[MAXPGPATH];
	char		dir[MAXPGPATH];
	int			fd;

	snprintf(dir, sizeof(dir), "%s/pg_nvm", DataDir);
	if (MakePGDirectory(dir) < 0 && errno != EEXIST)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", dir)));
		return false;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, name);

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY, pg_file_create_mode);
	if (fd < 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not create %s \"%s\": %m", what, tmp)));
		return false;
	}
	errno = 0;
	if (write(fd, buf, len) != len || pg_fsync(fd) != 0)
	{
		int			save_errno = errno ? errno : ENOSPC;

		close(fd);
		errno = save_errno;
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not write %s \"%s\": %m", what, tmp)));
		return false;
	}
	if (close(fd) != 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not close %s \"%s\": %m", what, tmp)));
		return false;
	}
	return durable_rename(tmp, path, elevel) == 0;
}

/*
 * nvm_datafile_read: see nvm_datafile.h.
 */
int
nvm_datafile_read(const char *name, const char *what, char *buf, int size, int elevel)
{
	char		path[MAXPGPATH];
	int			fd;
	ssize_t		n;

	snprintf(path, sizeof(path), "%s/pg_nvm/%s", DataDir, name);
	fd = open(path, O_RDONLY | PG_BINARY, 0);
	if (fd < 0)
	{
		if (errno != ENOENT)
			ereport(elevel,
					(errcode_for_file_access(),
					 errmsg("could not open %s \"%s\": %m", what, path)));
		return -1;
	}
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not read %s \"%s\": %m", what, path)));
		return -1;
	}
	buf[n] = '\0';
	return (int) n;
}
