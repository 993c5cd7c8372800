/*-------------------------------------------------------------------------
 *
 * nvm_durability.c
 *	  What the pool's storage guarantees, said and enforced at start: the
 *	  storage class in the server log, the boot of the operating system a
 *	  pool was last claimed in, and the refusal of a pool that a crash of
 *	  the operating system or a power loss may have torn.
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
 *	   torn pool, which no recovery can mend, since nothing recorded the
 *	   order in which the pages reached the disk.
 *
 * The two are told apart by the boot of the operating system.  Every claim
 * of the pool (nvm_binding.c) records the boot it is made in, a hash of
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
 * Limits: a pool whose server was killed and whose operating system was
 * then shut down cleanly (which writes the page cache back) is whole, but
 * cannot be told from a torn one, and is refused too.  A claim made by a
 * version of nvmam that did not record the boot cannot be checked (a
 * WARNING says so).  Checkpoints do not sync the pool: a checkpoint makes
 * PostgreSQL's own files durable, but the pool changes again at the next
 * commit, and a sync followed by changes gives the same torn file after a
 * power loss, so only a clean stop makes a page-cache pool durable.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "miscadmin.h"
#include "utils/guc.h"

#include "nvm_settings.h"
#include "recovery/nvm_datafile.h"
#include "recovery/nvm_durability.h"

#define BOOT_ID_FILE	"/proc/sys/kernel/random/boot_id"

/*
 * pg_nvm/storage: the storage class and the boot of the last claim, for the
 * message of a pool that is missing (a restart emptied tmpfs).  A file of
 * its own: the binding file's readers in earlier versions refuse keys they
 * do not know.
 */
#define STORAGE_NAME		"storage"
#define STORAGE_MAGIC_LINE	"nvmam pool storage 1"

/* nvm.debug_boot_id: replaces the boot identity in tests ("" = the OS's). */
static char *nvm_debug_boot_id = NULL;

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

#define STORAGE_HINT "Put nvm.pool_path on a DAX file system of persistent memory for commits that survive any crash, and keep backups: see \"What your storage guarantees\" in the nvmam README."

/*
 * nvm_durability_report_storage: see nvm_durability.h.
 */
void
nvm_durability_report_storage(void)
{
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
					 errdetail("Writes to the pool reach only the kernel's page cache. "
							   "They survive a crash of the server, and a clean stop makes them durable; "
							   "after a crash of the operating system the server refuses the pool, which may be torn."),
					 errhint(STORAGE_HINT)));
			break;
		case NVM_STORAGE_VOLATILE:
			ereport(WARNING,
					(errmsg("nvm pool \"%s\" is %s: a restart of the operating system or a power loss loses every nvm row",
							nvm_pool_path_resolved, storage_phrase()),
					 errdetail("The pool survives a crash or a restart of the server, but not of the operating system, even after a clean stop."),
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
					 "see \"What your storage guarantees\" in the nvmam README.")));
}

static const char *const storage_keywords[] = {
	[NVM_STORAGE_UNKNOWN] = "unknown",
	[NVM_STORAGE_PMEM] = "pmem",
	[NVM_STORAGE_PAGE_CACHE] = "page-cache",
	[NVM_STORAGE_VOLATILE] = "volatile",
};

/*
 * nvm_durability_note_claim records in pg_nvm/storage the storage class of
 * the pool and the boot of the operating system, durably, before a claim
 * changes the pool (nvm_binding.c); a failure is reported at elevel.
 */
bool
nvm_durability_note_claim(int elevel)
{
	char		buf[256];
	int			len;

	len = snprintf(buf, sizeof(buf), "%s\nstorage %s\nboot %016" INT64_MODIFIER "x\n",
				   STORAGE_MAGIC_LINE, storage_keywords[nvm_pool_storage],
				   nvm_boot_current());
	return nvm_datafile_write(STORAGE_NAME, "nvm storage file", buf, len, elevel);
}

/*
 * nvm_durability_missing_detail: see nvm_durability.h.  An unreadable or
 * unknown storage file adds nothing.
 */
char *
nvm_durability_missing_detail(void)
{
	char		buf[256];
	char		keyword[32] = "";
	uint64		boot = 0;
	uint64		now = nvm_boot_current();
	char	   *line;
	char	   *save;

	if (nvm_datafile_read(STORAGE_NAME, "nvm storage file", buf, sizeof(buf), LOG) < 0)
		return pstrdup("");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
	{
		char		value[64];

		if (sscanf(line, "storage %31s", keyword) == 1)
			continue;
		if (sscanf(line, "boot %63s", value) == 1)
			boot = strtou64(value, NULL, 16);
	}
	if (strcmp(keyword, storage_keywords[NVM_STORAGE_VOLATILE]) != 0)
		return pstrdup("");
	if (boot != 0 && now != 0 && boot != now)
		return pstrdup(" It was on volatile storage (such as tmpfs), which a restart of the operating system empties, and the operating system has restarted since: the rows of every nvm table are lost.");
	return pstrdup(" It was on volatile storage (such as tmpfs), which a restart of the operating system empties.");
}
