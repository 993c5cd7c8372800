/*-------------------------------------------------------------------------
 *
 * nvm_growth.c
 *	  The pool's growth as the server sees it.
 *
 * The pool starts at nvm.pool_size and grows online, by nvm.pool_grow_step
 * at a time, up to nvm.pool_max_size (by default the size of the file
 * system that holds it): the core (src/core/grow.h) does the growing when
 * its allocator runs out of chunks, in whatever backend needs the space.
 * This file gives the core its settings when the pool is opened, creates
 * the core's shared memory (backed as the pool grows: a few KiB a MiB),
 * writes a log line for each growth, and words the detail and hint of the
 * errors of a write that finds the pool full and unable to grow.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/statvfs.h>

#include "miscadmin.h"
#include "utils/guc.h"

#include "core.h"
#include "grow.h"

#include "nvm_settings.h"
#include "space/nvm_growth.h"

/* Settings, in MB */
static int	nvm_pool_grow_step_mb = (int) (NVM_POOL_DEFAULT_GROW_STEP >> 20);
static int	nvm_pool_max_size_mb = 0;

/* The address space reserved by default is at most this (the file system's size below). */
#define NVM_DEFAULT_MAX_LIMIT	(UINT64_C(16) << 40)	/* 16 TB */

static void nvm_assign_grow_step(int newval, void *extra);
static void nvm_growth_log(const NvmGrowEvent *event);

/*
 * nvm_growth_define_settings defines nvm.pool_grow_step and
 * nvm.pool_max_size; called from the module's settings function.
 */
void
nvm_growth_define_settings(void)
{
	DefineCustomIntVariable("nvm.pool_grow_step",
							"Size by which the persistent-memory pool grows when it is full.",
							"A write that finds no free space extends the pool file by this much "
							"(more if one row needs more), up to nvm.pool_max_size.",
							&nvm_pool_grow_step_mb,
							(int) (NVM_POOL_DEFAULT_GROW_STEP >> 20),
							8,
							64 * 1024,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, nvm_assign_grow_step, NULL);

	DefineCustomIntVariable("nvm.pool_max_size",
							"Largest size the persistent-memory pool may grow to.",
							"0 (the default) means the size of the file system that holds the pool "
							"(at most 16TB).  The server reserves this much address space at start.",
							&nvm_pool_max_size_mb,
							0,
							0,
							64 * 1024 * 1024,	/* 64TB */
							PGC_POSTMASTER,
							GUC_UNIT_MB,
							NULL, NULL, NULL);
}

/*
 * nvm_assign_grow_step hands nvm.pool_grow_step to the core in this
 * process (the next growth uses it).
 */
static void
nvm_assign_grow_step(int newval, void *extra)
{
	nvm_pool_grow_step = (uint64_t) newval << 20;
}

/*
 * default_max_size returns the size of the file system that holds path
 * (the file, or the directory it is to be created in), at most
 * NVM_DEFAULT_MAX_LIMIT; 0 if it cannot be found out.
 */
static uint64
default_max_size(const char *path)
{
	struct statvfs fs;
	char	   *dir = pstrdup(path);
	char	   *slash = strrchr(dir, '/');
	uint64		size;

	if (slash == dir)
		dir[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	else
		strcpy(dir, ".");
	if (statvfs(dir, &fs) != 0)
	{
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not find the size of the file system holding \"%s\": %m", dir),
				 errdetail("The nvm pool does not grow beyond its present size."),
				 errhint("Set nvm.pool_max_size.")));
		pfree(dir);
		return 0;
	}
	pfree(dir);
	size = (uint64) fs.f_blocks * (uint64) fs.f_frsize;
	return Min(size, NVM_DEFAULT_MAX_LIMIT);
}

/*
 * nvm_growth_pool_options fills in the growth step and the largest size
 * of the pool to open (the address space to reserve), and installs the
 * log line of each growth.
 */
void
nvm_growth_pool_options(NvmPoolOptions *opts)
{
	opts->grow_step = (uint64) nvm_pool_grow_step_mb << 20;
	if (nvm_pool_max_size_mb > 0)
		opts->max_size = (uint64) nvm_pool_max_size_mb << 20;
	else
		opts->max_size = default_max_size(opts->path);
	nvm_pool_set_grow_hook(nvm_growth_log);
}

/*
 * nvm_growth_opened logs what opening the pool changed about its growth:
 * an upgrade from an earlier format, and a maximum below the pool's size.
 */
void
nvm_growth_opened(void)
{
	uint64		end = nvm_pool_end();

	if (nvm_pool_upgraded_from != 0)
		ereport(LOG,
				(errmsg("upgraded nvm pool \"%s\" from format %u to format %u",
						nvm_pool_path_resolved, nvm_pool_upgraded_from, NVM_POOL_FORMAT_VERSION),
				 errdetail("The pool can now grow; earlier versions of nvmam no longer open it.")));
	if (nvm_pool_reserved_size <= end)
		ereport(LOG,
				(errmsg("nvm pool \"%s\" of %llu MB is at its maximum size",
						nvm_pool_path_resolved, (unsigned long long) (end >> 20)),
				 errdetail("It grows only when nvm.pool_max_size is larger than its size.")));
}

/*
 * nvm_growth_core_area returns the core's shared memory, creating it in the
 * postmaster the first time (it survives crash-restarts, as the pool's
 * mapping does, and is rebuilt by each).
 */
void *
nvm_growth_core_area(void)
{
	static void *area = NULL;
	char		errbuf[256];

	if (area == NULL)
	{
		area = nvm_core_shmem_create(errbuf, sizeof(errbuf));
		if (area == NULL)
			ereport(FATAL,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("%s", errbuf),
					 errhint("Lower nvm.pool_max_size: the server reserves address space for the largest pool.")));
	}
	return area;
}

/*
 * nvm_growth_log writes the log line of a growth; the core calls it in the
 * backend that grew the pool, after the growth.
 */
static void
nvm_growth_log(const NvmGrowEvent *event)
{
	ereport(LOG,
			(errmsg("nvm pool \"%s\" grew from %llu MB to %llu MB",
					nvm_pool_path_resolved,
					(unsigned long long) (event->old_size >> 20),
					(unsigned long long) (event->new_size >> 20)),
			 errdetail("The pool has grown %llu times; it may grow up to %llu MB (nvm.pool_max_size).",
					   (unsigned long long) event->segments,
					   (unsigned long long) (nvm_pool_reserved_size >> 20))));
}

/*
 * nvm_growth_errdetail adds the detail and hint of an error raised because
 * the pool is full: what found no space (a sentence), and why the pool did
 * not grow, with what to do about it.  For use inside ereport().
 */
int
nvm_growth_errdetail(const char *what)
{
	int			err = 0;
	uint64		max_mb = nvm_pool_reserved_size >> 20;

	switch (nvm_pool_grow_failure(&err))
	{
		case NVM_GROW_NO_SPACE:
			errdetail("%s The file system holding the pool has no room to extend it: %s.",
					  what, strerror(err));
			errhint("Free space on that file system, or drop or truncate nvm tables that are no longer needed.");
			break;
		case NVM_GROW_NO_MEMORY:
			errdetail("%s There is no memory for the shared state of a larger pool: %s.",
					  what, strerror(err));
			errhint("Free memory on the server, or drop or truncate nvm tables that are no longer needed.");
			break;
		case NVM_GROW_AT_MAX:
		case NVM_GROW_NONE:
		default:
			errdetail("%s The pool has reached its maximum size of %llu MB.",
					  what, (unsigned long long) max_mb);
			errhint("Raise nvm.pool_max_size and restart the server, or drop or truncate nvm tables that are no longer needed.");
			break;
	}
	return 0;
}
