/*-------------------------------------------------------------------------
 *
 * nvm_durability.c
 *	  What the pool's storage guarantees, said and enforced at start: the
 *	  storage class in the server log, how commits are made durable
 *	  (nvm.durability), the boot of the operating system a pool was last
 *	  claimed in, the rebuild of a pool that a crash of the operating
 *	  system or a power loss may have torn, and the copy on disk of a pool
 *	  on volatile storage.
 *
 * The core finds the storage class when it maps the pool (pool.h,
 * NvmStorageClass).  On persistent memory a drained flush is durable, so
 * the pool is whole after any crash.  On a page-cache file, and on tmpfs
 * until a restart of the operating system empties it, flushes reach only
 * the kernel's page cache:
 *	 - a crash of the server's processes (kill -9, a PANIC, the OOM killer)
 *	   leaves the page cache as it was, so the pool is exactly as the
 *	   processes left it and crash recovery works as on persistent memory;
 *	 - a crash of the operating system or a power loss keeps whichever pages
 *	   the kernel had written back, each as of some moment, in any order: a
 *	   torn pool, which nothing in it can mend.
 *
 * Durability through the WAL (nvm.durability = wal; auto, the default,
 * chooses it everywhere but on persistent memory).  Each commit of nvm rows
 * flushes its COMMIT record (nvm_redo.c) before its completion is
 * published, as a heap commit flushes its commit record, with PostgreSQL's
 * group commit; synchronous_commit = off skips the flush, as for heap.  The
 * pool is checkpointed, so that the checkpoint files and the WAL after the
 * last checkpoint's redo point always hold it:
 *	 - every checkpoint waits, after choosing its redo point, until the
 *	   "nvm backup watch" worker has written the checkpoint files of the
 *	   records that changed since the last ones (checkpoint/
 *	   nvm_checkpoint.c: pg_nvm/checkpoint, base and delta files per table
 *	   and an in-doubt file, named by a manifest at a position of the WAL);
 *	 - the end of every recovery, and a clean stop before its shutdown
 *	   checkpoint, capture the pool the same way; no start writes an image
 *	   of the pool.
 * A start that finds the pool torn (not stopped cleanly, claimed in
 * another boot) or gone (after a clean stop too) rebuilds it as a data
 * directory restored from a base backup does (nvm_binding.c, the
 * "restore" states): a new, empty pool, into which the first nvm record
 * replayed loads the checkpoint files (or the first access, if recovery
 * replays none), and WAL replay from the last checkpoint (each table's
 * records from its files' position on).  Every acknowledged commit is
 * there, since its record was flushed.  A rebuild stopped before its files
 * were loaded starts again; files beyond the end of the WAL are refused.
 *
 * Durability in the pool (nvm.durability = pool; auto on persistent
 * memory).  Commits wait for no WAL flush.  The two kinds of crash are told
 * apart by the boot of the operating system.  Every claim of the pool
 * (nvm_claim.c) records the boot it is made in, a hash of
 * /proc/sys/kernel/random/boot_id (of nvm.debug_boot_id when a test sets
 * it), and makes that word durable before anything else in the pool
 * changes (pool.c, nvm_pool_binding_claim).  A clean stop syncs the whole
 * pool before it marks the pool clean (nvm_pool_binding_mark_clean).  So
 * the file on disk is always either
 *	 - marked clean, and whole: nothing changed after its last sync; or
 *	 - marked in use by a claim made in some boot B, holding changes made
 *	   since in boot B only (a later boot's claim would have replaced the
 *	   mark first).
 * At start, a pool marked in use whose boot is not this one, on storage
 * other than persistent memory, was in use when the operating system
 * stopped, and is refused with FATAL before anything in it is read or
 * changed (nvm_durability_check_pool).  A pool marked in use in this boot
 * is a process crash: served after crash recovery, as before.
 *
 * A pool on volatile storage that durability through the WAL protects is
 * also copied to pg_nvm/pool.saved at a clean stop (after its sync and
 * mark), since the WAL after a shutdown checkpoint holds no image; a start
 * that finds the pool gone after a clean stop copies it back, and the next
 * claim of the pool removes the copy before it changes the pool (a stale
 * copy is never used).
 *
 * Limits: a pool whose server was killed and whose operating system was
 * then shut down cleanly (which writes the page cache back) is whole, but
 * cannot be told from a torn one: it is refused, or rebuilt from the WAL.
 * A claim made by a version of nvmam that did not record the boot cannot
 * be checked (a WARNING says so).  A rebuild without checkpoint files (a
 * user removed them, or a version of nvmam that wrote none) ends
 * detached, with a hint.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/guc.h"

#include "persist.h"

#include "claim/nvm_datafile.h"
#include "claim/nvm_durability.h"
#include "nvm_compat.h"
#include "nvm_settings.h"

#define BOOT_ID_FILE	"/proc/sys/kernel/random/boot_id"

/*
 * pg_nvm/storage: the storage class and the boot of the last claim, for the
 * message of a pool that is missing (a restart emptied tmpfs).  A file of
 * its own: the binding file's readers in earlier versions refuse keys they
 * do not know.
 */
#define STORAGE_NAME		"storage"
#define STORAGE_MAGIC_LINE	"nvmam pool storage 1"

/* The copy on disk of a pool on volatile storage, inside pg_nvm. */
#define SAVED_POOL_NAME		"pool.saved"

/* nvm.debug_boot_id: replaces the boot identity in tests ("" = the OS's). */
static char *nvm_debug_boot_id = NULL;

/* nvm.durability: how commits of nvm rows are made durable. */
typedef enum NvmDurabilityMode
{
	NVM_DURABILITY_AUTO,		/* pool on persistent memory, wal elsewhere */
	NVM_DURABILITY_POOL,		/* the pool's own: commits write no log */
	NVM_DURABILITY_WAL			/* the WAL's: commits flush their redo */
}			NvmDurabilityMode;

static const struct config_enum_entry durability_options[] = {
	{"auto", NVM_DURABILITY_AUTO, false},
	{"pool", NVM_DURABILITY_POOL, false},
	{"wal", NVM_DURABILITY_WAL, false},
	{NULL, 0, false}
};

static int	nvm_durability_mode = NVM_DURABILITY_AUTO;

/* What pg_nvm/storage says of the last claim. */
typedef struct StorageNote
{
	char		storage[32];	/* a storage keyword, "" if unknown */
	uint64		boot;			/* 0 if unknown */
	bool		through_wal;	/* its commits were durable through the WAL */
} StorageNote;

/*
 * nvm_durability_define_settings defines nvm.debug_boot_id, read once at
 * the start of the server.
 */
void
nvm_durability_define_settings(void)
{
	DefineCustomStringVariable("nvm.debug_boot_id",
							   "Replaces the operating system's boot identity (for tests).",
							   "A test sets a new value to simulate a restart of the operating system "
							   "(a pool on a page-cache file that was in use in another boot is refused). "
							   "Empty (the default) uses " BOOT_ID_FILE ".  Never set it on a server that matters.",
							   &nvm_debug_boot_id,
							   "",
							   PGC_POSTMASTER,
							   GUC_SUPERUSER_ONLY | GUC_NOT_IN_SAMPLE,
							   NULL, NULL, NULL);
	DefineCustomEnumVariable("nvm.durability",
							 "How commits of nvm rows are made durable: in the pool, or through the WAL.",
							 "pool: a commit is durable once its status is in the pool and waits for no "
							 "WAL flush; only persistent memory keeps it across a crash of the operating "
							 "system or a power loss.  wal: a commit also flushes its nvm redo record, as "
							 "a heap commit flushes its commit record; every checkpoint writes the "
							 "checkpoint files of the tables that changed, and a pool torn or lost by a crash "
							 "of the operating system, a power loss or a reboot is rebuilt from them and the "
							 "WAL at start (needs "
							 "nvm.wal_redo on and wal_level replica or logical).  auto (the default) is "
							 "pool on persistent memory and wal on any other storage.",
							 &nvm_durability_mode,
							 NVM_DURABILITY_AUTO,
							 durability_options,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);
}

/*
 * nvm_durability_through_wal says whether commits of nvm rows are made
 * durable through the WAL (see the file header): the setting, or auto on a
 * pool that is not on persistent memory; never without nvm redo in the WAL
 * (nvm.wal_redo off, or wal_level minimal).
 */
bool
nvm_durability_through_wal(void)
{
	if (!nvm_wal_redo || !XLogIsNeeded())
		return false;
	switch (nvm_durability_mode)
	{
		case NVM_DURABILITY_WAL:
			return true;
		case NVM_DURABILITY_POOL:
			return false;
		default:
			return nvm_pool_storage == NVM_STORAGE_PAGE_CACHE ||
				nvm_pool_storage == NVM_STORAGE_VOLATILE;
	}
}

/*
 * nvm_durability_choose_flushes: see nvm_durability.h.  Where commits are
 * durable through the WAL and the pool is not on persistent memory (a
 * page-cache file, tmpfs), no durable state depends on the core's cache-line
 * write-backs: a crash of the server's processes keeps every store they
 * made, written back or not (the caches are coherent with the page cache
 * that holds the pool), and a crash of the operating system or a power
 * loss may tear the pool whatever was written back, which is why it is
 * then rebuilt from the checkpoint files and the WAL.  So the core writes
 * back nothing there; its drains stay full fences, so each process's
 * stores reach memory in the order the persist orders state, which is what
 * recovery after a crash of the processes reads.  The counters of
 * nvm_backend_stats() still count the flushes asked for.  A pool standing
 * for persistent memory (nvm.durability = pool) keeps its write-backs, as
 * persistent memory needs them.
 */
void
nvm_durability_choose_flushes(void)
{
	if (nvm_durability_through_wal() && nvm_pool_storage != NVM_STORAGE_PMEM &&
		nvm_pool_storage != NVM_STORAGE_UNKNOWN)
		nvm_persist_set_mode(NVM_PERSIST_NONE, NULL);
	else
		nvm_persist_set_mode(NVM_PERSIST_PMEM, NULL);
}

/* hash_boot hashes a boot identity with FNV-1a; never 0. */
static uint64
hash_boot(const char *id)
{
	uint64		h = UINT64CONST(0xcbf29ce484222325);

	for (const unsigned char *p = (const unsigned char *) id; *p; p++)
	{
		h ^= *p;
		h *= UINT64CONST(0x100000001b3);
	}
	return h != 0 ? h : 1;
}

/*
 * nvm_boot_current reads the boot identity once per process (the
 * postmaster's is inherited) and returns its hash, or 0 if it cannot be
 * read.
 */
uint64
nvm_boot_current(void)
{
	static uint64 boot = 0;
	static bool known = false;
	char		buf[128];
	int			fd;
	ssize_t		n;

	if (known)
		return boot;
	known = true;
	if (nvm_debug_boot_id != NULL && nvm_debug_boot_id[0] != '\0')
	{
		boot = hash_boot(nvm_debug_boot_id);
		return boot;
	}
	fd = open(BOOT_ID_FILE, O_RDONLY, 0);
	if (fd < 0)
		return boot;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return boot;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	boot = hash_boot(buf);
	return boot;
}

/* storage_phrase names where the pool is, with how it was found. */
static char *
storage_phrase(void)
{
	switch (nvm_pool_storage)
	{
		case NVM_STORAGE_PMEM:
			return psprintf("on persistent memory (%s)", nvm_pool_storage_how);
		case NVM_STORAGE_PAGE_CACHE:
			return psprintf("a page-cache file (%s)", nvm_pool_storage_how);
		case NVM_STORAGE_VOLATILE:
			return psprintf("in volatile memory (%s)", nvm_pool_storage_how);
		case NVM_STORAGE_UNKNOWN:
			break;
	}
	return pstrdup("on storage of an unknown class");
}

#define STORAGE_HINT "Put nvm.pool_path on a DAX file system of persistent memory, or set nvm.durability to wal (or auto) with nvm.wal_redo on and wal_level replica: see \"What your storage guarantees\" (doc/storage.md) in nvmam's documentation."

/*
 * nvm_durability_report_storage: see nvm_durability.h.
 */
void
nvm_durability_report_storage(void)
{
	if (nvm_pool_storage == NVM_STORAGE_UNKNOWN)
		return;
	if (nvm_durability_through_wal())
	{
		ereport(LOG,
				(errmsg("nvm pool \"%s\" is %s: commits of nvm rows are made durable through the WAL",
						nvm_pool_path_resolved, storage_phrase()),
				 errdetail("Each commit flushes its nvm redo record, and every checkpoint writes the checkpoint files of the tables that changed (pg_nvm/checkpoint): "
						   "a pool torn or lost by a crash of the operating system, a power loss or a reboot is rebuilt from them and the WAL at start.")));
		return;
	}
	if (nvm_durability_mode == NVM_DURABILITY_WAL)
		ereport(WARNING,
				(errmsg("nvm.durability cannot make commits of nvm rows durable through the WAL"),
				 errdetail("That needs nvm.wal_redo on and wal_level replica or logical."),
				 errhint("Set nvm.wal_redo to on and wal_level to replica, or set nvm.durability to pool to say that the pool's own durability is meant.")));
	switch (nvm_pool_storage)
	{
		case NVM_STORAGE_PMEM:
			ereport(LOG,
					(errmsg("nvm pool \"%s\" is %s: committed nvm rows survive a crash of the server or of the operating system and a power loss",
							nvm_pool_path_resolved, storage_phrase())));
			break;
		case NVM_STORAGE_PAGE_CACHE:
			ereport(WARNING,
					(errmsg("nvm pool \"%s\" is %s: a crash of the operating system or a power loss while the server runs loses every nvm row",
							nvm_pool_path_resolved, storage_phrase()),
					 errdetail("Writes to the pool reach only the kernel's page cache, and nvm.durability is pool. "
							   "They survive a crash of the server, and a clean stop makes them durable; "
							   "after a crash of the operating system the server refuses the pool, which may be torn."),
					 errhint(STORAGE_HINT)));
			break;
		case NVM_STORAGE_VOLATILE:
			ereport(WARNING,
					(errmsg("nvm pool \"%s\" is %s: a restart of the operating system or a power loss loses every nvm row",
							nvm_pool_path_resolved, storage_phrase()),
					 errdetail("The pool survives a crash or a restart of the server, but not of the operating system, even after a clean stop, and nvm.durability is pool."),
					 errhint(STORAGE_HINT)));
			break;
		case NVM_STORAGE_UNKNOWN:
			break;
	}
}

/*
 * nvm_durability_check_pool: see nvm_durability.h and the file header.
 */
void
nvm_durability_check_pool(const NvmPoolBinding *pb)
{
	uint64		now = nvm_boot_current();

	if (pb->clean_lsn != 0 || nvm_pool_storage == NVM_STORAGE_PMEM)
		return;
	if (pb->boot == 0 || now == 0)
	{
		ereport(WARNING,
				(errmsg("cannot tell whether nvm pool \"%s\" was torn by a crash of the operating system",
						nvm_pool_path_resolved),
				 errdetail(pb->boot == 0 ?
						   "The pool was in use by a server that did not stop cleanly, and that server's version of nvmam did not record the boot of the operating system." :
						   "The boot identity of the operating system (" BOOT_ID_FILE ") cannot be read."),
				 errhint("If the operating system crashed or the power failed since the pool was last used, restore the data directory and the pool from a backup.")));
		return;
	}
	if (pb->boot == now)
		return;
	ereport(FATAL,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("nvm pool \"%s\" may have been torn by a crash of the operating system or a power loss",
					nvm_pool_path_resolved),
			 errdetail("The pool is %s. The server that used it did not stop cleanly, and the operating system has restarted since: "
					   "writes that had reached only the kernel's page cache were kept or lost page by page, so the pool cannot be trusted.",
					   storage_phrase()),
			 errhint("Restore the data directory and the pool together from a backup, "
					 "or give this data directory a new, empty pool and reload the nvm tables from a dump: "
					 "see \"What your storage guarantees\" (doc/storage.md) in nvmam's documentation.")));
}

static const char *const storage_keywords[] = {
	[NVM_STORAGE_UNKNOWN] = "unknown",
	[NVM_STORAGE_PMEM] = "pmem",
	[NVM_STORAGE_PAGE_CACHE] = "page-cache",
	[NVM_STORAGE_VOLATILE] = "volatile",
};

/*
 * nvm_durability_note_claim records in pg_nvm/storage the storage class of
 * the pool, the boot of the operating system and whether commits are made
 * durable through the WAL, durably, before a claim changes the pool
 * (nvm_claim.c); a failure is reported at elevel.
 */
bool
nvm_durability_note_claim(int elevel)
{
	char		buf[256];
	int			len;

	len = snprintf(buf, sizeof(buf), "%s\nstorage %s\nboot %016" PRIx64 "\ndurability %s\n",
				   STORAGE_MAGIC_LINE, storage_keywords[nvm_pool_storage],
				   nvm_boot_current(), nvm_durability_through_wal() ? "wal" : "pool");
	return nvm_datafile_write(STORAGE_NAME, "nvm storage file", buf, len, elevel);
}

/*
 * read_storage_note reads pg_nvm/storage into *note; a file missing or
 * unreadable leaves it unknown (false).
 */
static bool
read_storage_note(StorageNote *note)
{
	char		buf[256];
	char	   *line;
	char	   *save;

	memset(note, 0, sizeof(*note));
	if (nvm_datafile_read(STORAGE_NAME, "nvm storage file", buf, sizeof(buf), LOG) < 0)
		return false;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
	{
		char		value[64];

		if (sscanf(line, "storage %31s", note->storage) == 1)
			continue;
		if (sscanf(line, "boot %63s", value) == 1)
			note->boot = strtou64(value, NULL, 16);
		else if (sscanf(line, "durability %63s", value) == 1)
			note->through_wal = strcmp(value, "wal") == 0;
	}
	return true;
}

/* note_is_volatile says whether the last claim's pool was on volatile storage. */
static bool
note_is_volatile(const StorageNote *note)
{
	return strcmp(note->storage, storage_keywords[NVM_STORAGE_VOLATILE]) == 0;
}

/*
 * nvm_durability_missing_detail: see nvm_durability.h.  An unreadable or
 * unknown storage file adds nothing.
 */
char *
nvm_durability_missing_detail(void)
{
	StorageNote note;
	uint64		now = nvm_boot_current();

	if (!read_storage_note(&note) || !note_is_volatile(&note))
		return pstrdup("");
	if (note.boot != 0 && now != 0 && note.boot != now)
		return pstrdup(" It was on volatile storage (such as tmpfs), which a restart of the operating system empties, and the operating system has restarted since: the rows of every nvm table are lost.");
	return pstrdup(" It was on volatile storage (such as tmpfs), which a restart of the operating system empties.");
}

/* stopped_cleanly says whether pg_control says the server was shut down. */
static bool
stopped_cleanly(void)
{
	bool		crc_ok = false;
	ControlFileData *cf = get_controlfile(DataDir, &crc_ok);
	bool		clean = crc_ok && cf->state == DB_SHUTDOWNED;

	pfree(cf);
	return clean;
}

/*
 * nvm_durability_rebuild_needed says whether this start rebuilds the pool
 * from the WAL (see the file header): the last claim made commits durable
 * through the WAL on storage other than persistent memory, and the pool is
 * gone (pool_missing: after a clean stop too, whose last capture holds
 * every row), or the server did not stop cleanly and the pool was claimed
 * in another boot of the operating system (so may be torn).  Read before
 * the pool is opened.
 */
bool
nvm_durability_rebuild_needed(bool pool_missing)
{
	StorageNote note;
	uint64		now = nvm_boot_current();

	if (!read_storage_note(&note) || !note.through_wal ||
		strcmp(note.storage, storage_keywords[NVM_STORAGE_PMEM]) == 0)
		return false;
	if (pool_missing)
		return true;
	if (stopped_cleanly())
		return false;
	return note.boot != 0 && now != 0 && note.boot != now;
}

/*
 * saved_pool_path returns the path of the copy on disk of a volatile pool.
 */
static char *
saved_pool_path(void)
{
	return psprintf("%s/pg_nvm/%s", DataDir, SAVED_POOL_NAME);
}

/* Bytes copied at a time by copy_sparse. */
#define COPY_CHUNK	(1024 * 1024)

/*
 * copy_sparse copies file from to a new file to, of the same size, writing
 * only the chunks that are not all zero (a pool is mostly free space,
 * which stays a hole); errors are raised at ERROR.
 */
static void
copy_sparse(const char *from, const char *to)
{
	char	   *buf = palloc(COPY_CHUNK);
	char	   *zero = palloc0(COPY_CHUNK);
	int			in = OpenTransientFile(from, O_RDONLY | PG_BINARY);
	int			out;
	off_t		off = 0;

	if (in < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", from)));
	out = OpenTransientFile(to, O_RDWR | O_CREAT | O_TRUNC | PG_BINARY);
	if (out < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", to)));
	for (;;)
	{
		ssize_t		n = read(in, buf, COPY_CHUNK);

		if (n < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", from)));
		if (n == 0)
			break;
		if (memcmp(buf, zero, n) != 0 && pwrite(out, buf, n, off) != n)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not write file \"%s\": %m", to)));
		off += n;
	}
	if (ftruncate(out, off) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", to)));
	CloseTransientFile(in);
	CloseTransientFile(out);
	pfree(buf);
	pfree(zero);
}

/*
 * nvm_durability_save_volatile_pool copies a pool on volatile storage that
 * durability through the WAL protects to pg_nvm/pool.saved, durably, at a
 * clean stop, after the pool is marked clean (see the file header).  A
 * failure is logged: the pool is then lost at the next restart of the
 * operating system, and the server says so at start.
 */
void
nvm_durability_save_volatile_pool(void)
{
	char	   *saved;
	char	   *tmp;

	if (nvm_pool_storage != NVM_STORAGE_VOLATILE || !nvm_durability_through_wal())
		return;
	saved = saved_pool_path();
	tmp = psprintf("%s.tmp", saved);
	PG_TRY();
	{
		copy_sparse(nvm_pool_path_resolved, tmp);
		fsync_fname(tmp, false);
		if (durable_rename(tmp, saved, LOG) != 0)
			(void) unlink(tmp);
	}
	PG_CATCH();
	{
		EmitErrorReport();
		FlushErrorState();
		(void) unlink(tmp);
	}
	PG_END_TRY();
}

/*
 * nvm_durability_bring_back_volatile_pool runs at start, before the pool
 * is opened: a pool on volatile storage that is gone after a clean stop is
 * copied back from pg_nvm/pool.saved (to a temporary name, then renamed:
 * a copy cut short is never taken for the pool).  The copy stays until the
 * pool is claimed (nvm_durability_forget_saved_pool).  It says whether the
 * pool was brought back.
 */
bool
nvm_durability_bring_back_volatile_pool(void)
{
	char	   *saved = saved_pool_path();
	char	   *tmp;
	struct stat st;
	StorageNote note;

	if (stat(saved, &st) != 0 ||
		stat(nvm_pool_path_resolved, &st) == 0 || errno != ENOENT ||
		!read_storage_note(&note) || !note_is_volatile(&note) || !stopped_cleanly())
		return false;
	tmp = psprintf("%s.copying", nvm_pool_path_resolved);
	copy_sparse(saved, tmp);
	if (rename(tmp, nvm_pool_path_resolved) != 0)
		ereport(FATAL,
				(errcode_for_file_access(),
				 errmsg("could not rename file \"%s\" to \"%s\": %m", tmp, nvm_pool_path_resolved)));
	ereport(LOG,
			(errmsg("nvm: volatile nvm pool \"%s\" was gone after a clean stop; it is copied back from pg_nvm/%s",
					nvm_pool_path_resolved, SAVED_POOL_NAME)));
	return true;
}

/*
 * nvm_durability_forget_saved_pool removes pg_nvm/pool.saved once a claim
 * is about to change the pool (nvm_claim.c): from then on the copy is
 * stale, and a later start must never take it.
 */
void
nvm_durability_forget_saved_pool(void)
{
	char	   *saved = saved_pool_path();

	if (unlink(saved) == 0)
		fsync_fname(psprintf("%s/pg_nvm", DataDir), true);
	else if (errno != ENOENT)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not remove file \"%s\": %m", saved)));
	pfree(saved);
}
