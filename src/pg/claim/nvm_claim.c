/*-------------------------------------------------------------------------
 *
 * nvm_claim.c
 *	  Which pool a data directory may use: the binding of a pool to a data
 *	  directory, decided at start (the binding file, the checks before and
 *	  after the pool is opened, the claim), and the detached state of
 *	  copies.  When nvm rows may then be served, the binding's states in
 *	  shared memory, is nvm_binding.c's.
 *
 * nvm rows are not in WAL: the pool is the only copy of them, and it is
 * consistent with the rest of the cluster (catalog, indexes, heap rows)
 * only as the pair that ran together.  A file-level copy of a running
 * cluster (pg_basebackup, pg_backup_start/pg_backup_stop and a copy,
 * pg_rewind, a standby) replays WAL to some point, but a pool copied byte
 * by byte while backends wrote it is torn, and the live pool is ahead of
 * that point.  So the question "does this pool belong to this data
 * directory at this point of its history?" is answered here, and a pool
 * that does not is never served.
 *
 * What identifies the pair:
 *	 - the pool's binding words (pool.h, NvmPoolBinding): a random id chosen
 *	   when a data directory first binds the pool, a generation advanced
 *	   at every claim, the WAL position of the shutdown checkpoint at the
 *	   claimer's last clean stop (0 while a server uses the pool), and the
 *	   WAL positions its changes depend on (NvmSlotPersist.wal_lsn per
 *	   clock slot, NvmPoolBinding.wal_lsn for pool-wide changes);
 *	 - the data directory's binding file, pg_nvm/binding: the same id and
 *	   generation (and, while a claim is under way, the one before), or
 *	   "detached" with the cause;
 *	 - pg_control: the cluster's state and its last checkpoint;
 *	 - the files PostgreSQL leaves in a copy that replays WAL from a backup
 *	   or another server: backup_label (pg_basebackup, the backup API,
 *	   pg_rewind), standby.signal, recovery.signal.
 *
 * The argument, case by case:
 *	 - A restored backup, a standby, archive recovery or a rewound data
 *	   directory starts with one of those files.  In PostgreSQL 15 a live
 *	   data directory never has backup_label (exclusive backups are gone),
 *	   so its presence means WAL replay from a copy.  Such a data directory
 *	   is detached at its first start, and the binding file says so from
 *	   then on (the files are gone after recovery or promotion): its pool
 *	   is never opened, whether it is a torn copy inside the data directory
 *	   or the original's pool at a path outside it.  The server runs with
 *	   an empty scratch pool; every nvm table raises an error that names
 *	   the pool and the cause, with a hint; heap tables work.
 *	 - Two data directories (an original and a cold copy) cannot both own
 *	   one pool: each start that claims the pool advances the generation in
 *	   the pool and in the claimer's binding file; the other one's
 *	   generation no longer matches, and it is refused.  A stale copy of a
 *	   pool has an older generation, or an older clean-stop position.
 *	 - A pool that was stopped cleanly goes only with a data directory that
 *	   was shut down cleanly too: a data directory copied while its server
 *	   ran (its pg_control says "in production") is refused, and so is a
 *	   pool copied while its server ran (it says "in use") under a data
 *	   directory that was stopped cleanly.  (The clean stop's checkpoint is
 *	   kept for the messages; it need not equal the data directory's, which
 *	   moves on while the server runs without nvmam loaded, when no nvm row
 *	   can change.)
 *	 - A pool in use (its server crashed, or it is a copy made while a
 *	   server ran) goes only with a data directory that was not shut down
 *	   cleanly either.  Then, once WAL replay is over and before anything
 *	   reads or changes nvm rows, the WAL positions the pool depends on
 *	   must lie within the WAL that replay found: every nvm commit records
 *	   the WAL position flushed at that moment, and drops and VACUUM record
 *	   the WAL they depend on.  A data directory older than the pool (a
 *	   copy made before the pool's last changes, or one that lost WAL) is
 *	   refused then, and detached.  The claim waits for this check, so a
 *	   refused copy never takes the pool from its owner.
 *	 - A pool created by an earlier version (never bound) is bound by the
 *	   first data directory without a binding file that opens it.
 *	 - A pool file that is missing while the data directory is bound to one
 *	   is not silently replaced by a new, empty pool: the server refuses to
 *	   start until the pool is back, or the binding file is removed.
 *	 - A pool that was in use when the operating system stopped (a crash of
 *	   the OS or a power loss) may be torn unless it is on persistent
 *	   memory: each claim records the boot it is made in, and such a pool
 *	   is refused before anything in it is read or changed
 *	   (nvm_durability.c).
 * Not covered: a copy of the pool file alone, made by hand while a server
 * runs, put back under a data directory of the same run that crashed after
 * the copy; like copying a heap file by hand, that is not a backup.
 *
 * Persist order of a claim: the binding file is written with the new
 * generation and the old one, and pg_nvm/storage with the storage class,
 * the durability and the boot (durable renames, nvm_datafile.c), then the
 * copy of a volatile pool, pg_nvm/pool.saved, is removed (durably), then
 * the pool's words are persisted (and synced on page-cache storage), then
 * the file is rewritten with the new generation only.  A crash in between
 * leaves a file that accepts either generation, and never a saved copy
 * older than the pool.  Persist order of a clean stop: the whole pool is
 * synced, then its clean mark is persisted and synced (pool.c), then a
 * volatile pool protected through the WAL is copied to pg_nvm/pool.saved
 * (written, fsynced, renamed durably: nvm_durability.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "storage/fd.h"


#include "pool.h"

#include "claim/nvm_claim.h"
#include "claim/nvm_datafile.h"
#include "claim/nvm_durability.h"
#include "nvm_compat.h"
#include "nvm_settings.h"

#define BINDING_NAME		"binding"
#define BINDING_FILE		"pg_nvm/" BINDING_NAME
#define BINDING_MAGIC_LINE	"nvmam pool binding 1"
#define HEX64				"%016" PRIx64

static const char *const detach_keywords[] = {
	"", "backup", "standby", "archive-recovery", "behind-pool", "rewind", "no-image", "lost-pool"
};

static const char *const restore_keywords[] = {"", "image", "replay"};

/* What the data directory's binding file says. */
typedef struct BindingFile
{
	bool		exists;
	uint64		id;
	uint64		gen;
	uint64		prev_gen;		/* 0 unless a claim was under way */
	NvmDetachCause detached;
	NvmRestoreState restore;
	bool		rebuild;		/* the restore rebuilds a lost pool (not a backup) */
} BindingFile;

/*
 * What the postmaster decided before shared memory existed; inherited by
 * every process it forks.
 */
NvmClaimStart nvm_claim_start = {NVM_DETACH_NONE, false, false, NVM_RESTORE_NONE, false};
static uint64 start_id = 0;		/* the id to claim with */
static uint64 start_gen = 0;	/* the highest generation seen */
static uint64 start_prev_gen = 0;	/* the pool's generation before the claim */

/* ---------------------------------------------------------------------
 * The binding file
 * ---------------------------------------------------------------------
 */

/*
 * read_binding_file reads pg_nvm/binding of the data directory; a file
 * that cannot be parsed stops the server (it is never guessed at).
 */
static void
read_binding_file(BindingFile *bf)
{
	char		path[MAXPGPATH];
	char		buf[1024];
	char	   *line;
	char	   *save;
	bool		magic_seen = false;

	memset(bf, 0, sizeof(*bf));
	snprintf(path, sizeof(path), "%s/%s", DataDir, BINDING_FILE);
	if (nvm_datafile_read(BINDING_NAME, "nvm binding file", buf, sizeof(buf), FATAL) < 0)
		return;					/* no such file */
	bf->exists = true;

	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
	{
		char		key[32];
		char		value[64];

		if (strcmp(line, BINDING_MAGIC_LINE) == 0)
		{
			magic_seen = true;
			continue;
		}
		if (sscanf(line, "%31s %63s", key, value) != 2)
			goto corrupt;
		if (strcmp(key, "pool_id") == 0)
			bf->id = strtou64(value, NULL, 16);
		else if (strcmp(key, "gen") == 0)
			bf->gen = strtou64(value, NULL, 10);
		else if (strcmp(key, "prev_gen") == 0)
			bf->prev_gen = strtou64(value, NULL, 10);
		else if (strcmp(key, "detached") == 0)
		{
			for (int i = 1; i < lengthof(detach_keywords); i++)
			{
				if (strcmp(value, detach_keywords[i]) == 0)
					bf->detached = (NvmDetachCause) i;
			}
			if (bf->detached == NVM_DETACH_NONE)
				goto corrupt;
		}
		else if (strcmp(key, "rebuild") == 0 && strcmp(value, "lost-pool") == 0)
			bf->rebuild = true;
		else if (strcmp(key, "restore") == 0)
		{
			for (int i = 1; i < lengthof(restore_keywords); i++)
			{
				if (strcmp(value, restore_keywords[i]) == 0)
					bf->restore = (NvmRestoreState) i;
			}
			if (bf->restore == NVM_RESTORE_NONE)
				goto corrupt;
		}
		else
			goto corrupt;
	}
	if (magic_seen)
		return;

corrupt:
	ereport(FATAL,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("nvm binding file \"%s\" is corrupt", path),
			 errhint("The file says which nvm pool this data directory uses. "
					 "Restore it from a copy of this data directory, or remove it only if this data directory's nvm pool is lost.")));
}

/*
 * write_binding_file replaces pg_nvm/binding durably (a temporary file,
 * fsynced, then renamed and the directory fsynced).  It reports a failure
 * at elevel and returns false (FATAL at start, ERROR in a backend, LOG
 * while exiting).
 */
static bool
write_binding_file(const BindingFile *bf, int elevel)
{
	char		buf[512];
	int			len;

	len = snprintf(buf, sizeof(buf),
				   "%s\npool_id " HEX64 "\ngen " UINT64_FORMAT "\n",
				   BINDING_MAGIC_LINE, bf->id, bf->gen);
	if (bf->prev_gen != 0)
		len += snprintf(buf + len, sizeof(buf) - len, "prev_gen " UINT64_FORMAT "\n",
						bf->prev_gen);
	if (bf->detached != NVM_DETACH_NONE)
		len += snprintf(buf + len, sizeof(buf) - len, "detached %s\n",
						detach_keywords[bf->detached]);
	if (bf->restore != NVM_RESTORE_NONE)
		len += snprintf(buf + len, sizeof(buf) - len, "restore %s\n",
						restore_keywords[bf->restore]);
	if (bf->restore != NVM_RESTORE_NONE && bf->rebuild)
		len += snprintf(buf + len, sizeof(buf) - len, "rebuild lost-pool\n");
	return nvm_datafile_write(BINDING_NAME, "nvm binding file", buf, len, elevel);
}

/* ---------------------------------------------------------------------
 * Messages
 * ---------------------------------------------------------------------
 */

/* nvm_claim_detail says, in a sentence, why the data directory is detached. */
char *
nvm_claim_detail(NvmDetachCause cause, uint64 required, uint64 replay)
{
	switch (cause)
	{
		case NVM_DETACH_BACKUP:
			return psprintf("This data directory was restored from a file-level backup or rewound with pg_rewind (it started with a backup_label file), so the copy of nvm pool \"%s\" it came with, if any, is not consistent with it.",
							nvm_pool_path_resolved);
		case NVM_DETACH_STANDBY:
			return psprintf("This data directory is (or was) a physical standby without a pool of its own (it started with standby.signal, from a copy that had no nvm pool of its own, or with nvm.wal_redo off), so nvm pool \"%s\" is not consistent with it.",
							nvm_pool_path_resolved);
		case NVM_DETACH_RECOVERY:
			return psprintf("This data directory ran archive recovery (it started with a recovery.signal file), which replays WAL that carries no nvm rows, so nvm pool \"%s\" is not consistent with it.",
							nvm_pool_path_resolved);
		case NVM_DETACH_BEHIND:
			return psprintf("nvm pool \"%s\" holds changes that depend on WAL up to %X/%X, but WAL replay of this data directory ended at %X/%X: the data directory is older than the pool.",
							nvm_pool_path_resolved,
							LSN_FORMAT_ARGS(required), LSN_FORMAT_ARGS(replay));
		case NVM_DETACH_REWIND:
			return psprintf("This data directory was rewound with pg_rewind, which copies no nvm rows: nvm pool \"%s\" is not consistent with it.",
							nvm_pool_path_resolved);
		case NVM_DETACH_NO_IMAGE:
			return psprintf("This data directory was restored from a base backup whose WAL holds no image of the nvm pool (the backup was taken from a standby, or while the primary had nvm.wal_redo off or wal_level minimal, or recovery ended before the image), so its new nvm pool \"%s\" has no rows of the tables made before the backup.",
							nvm_pool_path_resolved);
		case NVM_DETACH_LOST:
			return psprintf("nvm pool \"%s\" was lost or perhaps torn by a crash of the operating system, a power loss or a reboot, and the WAL from the last checkpoint holds no image of the pool to rebuild it from (the operating system stopped in the moment between the end of a start's recovery and its first image, or between a clean stop's shutdown checkpoint and the sync or copy of the pool), so the new pool has no rows of the tables made before.",
							nvm_pool_path_resolved);
		case NVM_DETACH_NONE:
			break;
	}
	return pstrdup("");
}

/* nvm_claim_hint says how to get the nvm rows back. */
const char *
nvm_claim_hint(NvmDetachCause cause)
{
	switch (cause)
	{
		case NVM_DETACH_STANDBY:
			return "Make the standby again from a base backup of the primary (pg_basebackup -R) with nvm.wal_redo on, or from a copy of the primary's data directory and pool taken while the primary was stopped (see \"Replication\" (doc/replication.md) in nvmam's documentation), or replicate nvm tables with logical replication. "
				"To give a promoted standby its own empty pool, see \"Backups and copies\" (doc/backups.md) in nvmam's documentation.";
		case NVM_DETACH_BEHIND:
			return "Start the data directory that last used this pool, or restore the data directory and the pool together from one atomic snapshot or one copy made while the server was stopped.";
		case NVM_DETACH_REWIND:
			return "Make the former primary again from a new base backup of the new primary (pg_basebackup), which carries the nvm rows.";
		case NVM_DETACH_NO_IMAGE:
			return "Take a new base backup of the primary, with nvm.wal_redo on and wal_level replica or logical (see \"Backups and copies\" (doc/backups.md) in nvmam's documentation).";
		case NVM_DETACH_LOST:
			return "Restore the cluster from a base backup, or give this data directory a new, empty pool and reload the nvm tables from a dump (see \"What your storage guarantees\" (doc/storage.md) in nvmam's documentation).";
		default:
			return "Copy nvm tables from the original cluster with pg_dump, or restore the data directory and the pool together from one atomic snapshot or one copy made while the server was stopped. "
				"To give this data directory a new, empty pool, see \"Backups and copies\" (doc/backups.md) in nvmam's documentation.";
	}
}

/* report_refusal stops the server: the pool does not match the data directory. */
static void
report_refusal(const char *what, char *detail, const char *hint)
{
	ereport(FATAL,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("nvm pool \"%s\" %s", nvm_pool_path_resolved, what),
			 errdetail_internal("%s", detail),
			 errhint("%s", hint)));
}

/* ---------------------------------------------------------------------
 * Before and after the pool is opened (postmaster)
 * ---------------------------------------------------------------------
 */

/* file_exists_in_datadir says whether DataDir/name exists. */
static bool
file_exists_in_datadir(const char *name)
{
	char		path[MAXPGPATH];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", DataDir, name);
	return stat(path, &st) == 0;
}

/* backup_label_is_rewind says whether backup_label was written by pg_rewind. */
static bool
backup_label_is_rewind(void)
{
	char		path[MAXPGPATH];
	char		line[256];
	bool		rewind = false;
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", DataDir, BACKUP_LABEL_FILE);
	f = AllocateFile(path, "r");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
	{
		if (strncmp(line, "BACKUP METHOD: pg_rewind", 24) == 0)
			rewind = true;
	}
	FreeFile(f);
	return rewind;
}

/*
 * prepare_restore_pool makes way for the new pool of a data directory
 * restored from a base backup: a copy of the pool inside the data
 * directory (torn: copied while the server ran) is removed; a pool file at
 * a path outside it may be the original cluster's, and stops the server.
 */
static void
prepare_restore_pool(void)
{
	const char *path = nvm_pool_path_resolved;
	size_t		dlen = strlen(DataDir);
	struct stat st;

	if (!is_absolute_path(path) ||
		(strncmp(path, DataDir, dlen) == 0 && path[dlen] == '/'))
	{
		if (unlink(path) != 0 && errno != ENOENT)
			ereport(FATAL,
					(errcode_for_file_access(),
					 errmsg("could not remove the copy of nvm pool \"%s\" that came with the base backup: %m",
							path)));
		return;
	}
	if (stat(path, &st) == 0)
		ereport(FATAL,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("nvm pool \"%s\" exists, but this data directory is restored from a base backup",
						path),
				 errdetail("A data directory restored from a base backup builds a new nvm pool from the WAL; the file at that path may be the pool of the cluster the backup was taken from."),
				 errhint("Set nvm.pool_path to a file that does not exist yet (or leave it empty for pg_nvm/pool inside the data directory), or remove that file if no cluster uses it.")));
}

/*
 * begin_restore starts the rebuild of the pool from the WAL, into a new
 * pool: the binding file bf says so durably (and whether a lost pool is
 * rebuilt, rather than a backup restored), and this start replays into
 * the pool as a standby does.
 */
static void
begin_restore(BindingFile *bf, bool rebuild)
{
	memset(bf, 0, sizeof(*bf));
	bf->restore = NVM_RESTORE_IMAGE;
	bf->rebuild = rebuild;
	(void) write_binding_file(bf, FATAL);
	nvm_claim_start.replica = true;
	nvm_claim_start.restore = NVM_RESTORE_IMAGE;
	nvm_claim_start.rebuild = rebuild;
}

/*
 * end_restore records in bf that recovery of a data directory restored
 * from a base backup has ended: the pool is an ordinary one from now on if
 * the image was replayed (image_replayed), else the data directory is
 * detached for good.
 */
static void
end_restore(BindingFile *bf, bool image_replayed)
{
	bf->restore = NVM_RESTORE_NONE;
	if (!image_replayed)
		bf->detached = bf->rebuild ? NVM_DETACH_LOST : NVM_DETACH_NO_IMAGE;
	bf->rebuild = false;
}

/*
 * restore_continues says whether this start of a data directory restored
 * from a base backup goes on with recovery (pg_control says so), as
 * opposed to a start after recovery ended.
 */
static bool
restore_continues(void)
{
	bool		crc_ok = false;
	ControlFileData *cf = get_controlfile(DataDir, &crc_ok);
	bool		in_recovery;

	in_recovery = crc_ok && (cf->state == DB_IN_ARCHIVE_RECOVERY ||
							 cf->state == DB_IN_CRASH_RECOVERY ||
							 cf->state == DB_SHUTDOWNED_IN_RECOVERY);
	pfree(cf);
	return in_recovery;
}

/*
 * nvm_claim_detached_at_start reads the data directory's binding file and
 * the files that mark a copy replaying WAL (see the file header).  A data
 * directory that is a copy is detached, and the binding file records it
 * before the server goes on.  It stops the server if the data directory is
 * bound to a pool whose file is missing.
 */
bool
nvm_claim_detached_at_start(void)
{
	BindingFile bf;
	NvmDetachCause cause = NVM_DETACH_NONE;
	struct stat st;
	bool		label = file_exists_in_datadir(BACKUP_LABEL_FILE);
	bool		rewind = label && backup_label_is_rewind();

	read_binding_file(&bf);

	/*
	 * A data directory restored from a base backup (backup_label, not
	 * pg_rewind's) rebuilds its pool from the WAL, into a new pool
	 * (checkpoint/nvm_backup.c): a standby made from a base backup, archive
	 * recovery and point-in-time recovery alike.  The binding file keeps
	 * the state across restarts until recovery ends.
	 */
	if (nvm_wal_redo && label && !rewind)
	{
		prepare_restore_pool();
		begin_restore(&bf, false);
		ereport(LOG,
				(errmsg("nvm: this data directory is restored from a base backup: nvm pool \"%s\" is rebuilt from the WAL",
						nvm_pool_path_resolved)));
		return false;
	}

	/*
	 * A pool whose commits were made durable through the WAL, gone or
	 * perhaps torn by a crash of the operating system, a power loss or a
	 * reboot, is rebuilt from the WAL in the same way, by crash recovery
	 * (nvm_durability.c); a volatile pool gone after a clean stop is
	 * copied back from its copy on disk first.
	 */
	if (!label && bf.exists && bf.id != 0 && bf.detached == NVM_DETACH_NONE &&
		!file_exists_in_datadir(STANDBY_SIGNAL_FILE) &&
		!file_exists_in_datadir(RECOVERY_SIGNAL_FILE))
	{
		bool		missing;

		(void) nvm_durability_bring_back_volatile_pool();
		missing = stat(nvm_pool_path_resolved, &st) != 0 && errno == ENOENT;
		if (nvm_durability_rebuild_needed(missing))
		{
			if (!missing && unlink(nvm_pool_path_resolved) != 0)
				ereport(FATAL,
						(errcode_for_file_access(),
						 errmsg("could not remove nvm pool \"%s\" to rebuild it from the WAL: %m",
								nvm_pool_path_resolved)));
			begin_restore(&bf, true);
			ereport(LOG,
					(errmsg("nvm: nvm pool \"%s\" is %s after a crash of the operating system, a power loss or a reboot: it is rebuilt from the WAL",
							nvm_pool_path_resolved, missing ? "gone" : "perhaps torn"),
					 errdetail("Its commits were made durable through the WAL (nvm.durability); crash recovery loads the checkpoint files of the pool (pg_nvm/checkpoint) into a new pool and replays the commits after them.")));
			return false;
		}
	}
	/*
	 * A rebuild cut short before its checkpoint files were loaded (the
	 * binding still awaits the image: a crash during the load, or after a
	 * recovery that replayed no nvm record and before the first access
	 * loaded them) starts again, into a new pool: the rows a load wrote
	 * are its transaction's, which the crash aborted.
	 */
	if (!label && bf.restore == NVM_RESTORE_IMAGE && bf.rebuild &&
		bf.detached == NVM_DETACH_NONE)
	{
		if (unlink(nvm_pool_path_resolved) != 0 && errno != ENOENT)
			ereport(FATAL,
					(errcode_for_file_access(),
					 errmsg("could not remove nvm pool \"%s\" to rebuild it from the WAL: %m",
							nvm_pool_path_resolved)));
		begin_restore(&bf, true);
		ereport(LOG,
				(errmsg("nvm: the rebuild of nvm pool \"%s\" stopped before its checkpoint files were loaded: it starts again from them",
						nvm_pool_path_resolved)));
		return false;
	}
	if (bf.restore != NVM_RESTORE_NONE && bf.detached == NVM_DETACH_NONE && !label)
	{
		if (restore_continues())
		{
			nvm_claim_start.replica = true;
			nvm_claim_start.restore = bf.restore;
			nvm_claim_start.rebuild = bf.rebuild;
			return false;
		}
		/* recovery ended before a first access to nvm rows could record it */
		end_restore(&bf, bf.restore == NVM_RESTORE_REPLAY);
		(void) write_binding_file(&bf, FATAL);
	}

	/*
	 * What this start replays says more than what an earlier one recorded
	 * (pg_rewind copies the source's binding file), and a standby or
	 * archive recovery more than its backup_label.
	 */
	if (file_exists_in_datadir(STANDBY_SIGNAL_FILE) &&
		!file_exists_in_datadir(BACKUP_LABEL_FILE) &&
		bf.exists && bf.id != 0 && bf.detached == NVM_DETACH_NONE && nvm_wal_redo)
	{
		/*
		 * A standby made from a cold copy of the primary (data directory
		 * and pool, taken while the primary was stopped): its pool is its
		 * own, and replay of the primary's nvm redo keeps it current
		 * (nvm_replay.c).  nvm_claim_check_pool checks that the pair was
		 * copied cleanly, or is this standby's own after a crash.
		 */
		nvm_claim_start.replica = true;
		cause = NVM_DETACH_NONE;
	}
	else if (file_exists_in_datadir(STANDBY_SIGNAL_FILE))
		cause = NVM_DETACH_STANDBY;
	else if (file_exists_in_datadir(RECOVERY_SIGNAL_FILE))
		cause = NVM_DETACH_RECOVERY;
	else if (label)
		cause = rewind ? NVM_DETACH_REWIND : NVM_DETACH_BACKUP;
	else
		cause = bf.detached;

	if (cause != NVM_DETACH_NONE)
	{
		if (bf.detached != cause)
		{
			bf.detached = cause;
			bf.prev_gen = 0;
			(void) write_binding_file(&bf, FATAL);
		}
		nvm_claim_start.cause = cause;
		ereport(LOG,
				(errmsg("nvm tables are not available: this data directory is detached from nvm pool \"%s\"",
						nvm_pool_path_resolved),
				 errdetail_internal("%s", nvm_claim_detail(cause, 0, 0))));
		return true;
	}

	if (bf.exists && bf.id != 0 && stat(nvm_pool_path_resolved, &st) != 0 && errno == ENOENT)
		report_refusal("is missing",
					   psprintf("This data directory last used the pool with id " HEX64 " at that path (pg_nvm/binding).%s",
								bf.id, nvm_durability_missing_detail()),
					   "Point nvm.pool_path at that pool. If it is lost, remove pg_nvm/binding to start with a new, empty pool: the rows of the nvm tables made before are then lost (drop those tables, or TRUNCATE them to give them new, empty storage).");
	return false;
}

/*
 * nvm_claim_check_pool checks the pool just opened against the data
 * directory (see the file header) and decides the claim: now, at the start
 * of shared memory, after a clean stop; after replay, when the pool was in
 * use.  Any mismatch stops the server before the pool is changed.
 */
void
nvm_claim_check_pool(bool created)
{
	BindingFile bf;
	NvmPoolBinding pb;
	ControlFileData *cf;
	bool		crc_ok = false;
	bool		clean;
	const char *hint_copy = "The pool and this data directory come from different copies or moments. "
		"Start the data directory that last used the pool with it, or restore the data directory and the pool together from one atomic snapshot or one copy made while the server was stopped.";

	read_binding_file(&bf);
	nvm_pool_binding_read(&pb);

	if (created || pb.id == 0)
	{
		/* a new pool, or one an earlier version of nvmam made: bind it */
		if (bf.exists && bf.id != 0)
			report_refusal("was never used by this data directory",
						   psprintf("This data directory last used the pool with id " HEX64 " (pg_nvm/binding), and this pool has never been bound to a data directory.",
									bf.id),
						   "Point nvm.pool_path at this data directory's pool. If it is lost, remove pg_nvm/binding to use this pool.");
		if (!pg_strong_random(&start_id, sizeof(start_id)) || start_id == 0)
			start_id = (uint64) MyStartTime ^ ((uint64) MyProcPid << 32) ^ 1;
		start_gen = pb.gen;
		start_prev_gen = pb.gen;
		nvm_claim_start.claim_now = true;
		return;
	}

	if (!bf.exists || bf.id != pb.id)
		report_refusal("belongs to another data directory",
					   bf.exists ?
					   psprintf("The pool has id " HEX64 ", but this data directory last used the pool with id " HEX64 " (pg_nvm/binding).",
								pb.id, bf.id) :
					   psprintf("The pool has id " HEX64 " and was used by a data directory, but this data directory has no record of a pool (pg_nvm/binding is missing).",
								pb.id),
					   "Point nvm.pool_path at this data directory's own pool, or at a file that does not exist yet to start with a new, empty pool.");

	if (pb.gen != bf.gen && (bf.prev_gen == 0 || pb.gen != bf.prev_gen))
	{
		if (pb.gen > bf.gen)
			report_refusal("was used by another copy of this data directory",
						   psprintf("The pool is at generation " UINT64_FORMAT ", this data directory at " UINT64_FORMAT ": a copy of this data directory started with the pool since this one last did.",
									pb.gen, bf.gen),
						   hint_copy);
		else
			report_refusal("is older than this data directory",
						   psprintf("The pool is at generation " UINT64_FORMAT ", this data directory at " UINT64_FORMAT ": the pool file was replaced by an older copy of it.",
									pb.gen, bf.gen),
						   hint_copy);
	}

	/* a pool in use when the operating system stopped may be torn */
	nvm_durability_check_pool(&pb);

	cf = get_controlfile(DataDir, &crc_ok);
	clean = crc_ok && (cf->state == DB_SHUTDOWNED ||
					   (nvm_claim_start.replica && cf->state == DB_SHUTDOWNED_IN_RECOVERY));
	if (nvm_claim_start.replica && pb.clean_lsn == 0 && crc_ok &&
		(cf->state == DB_IN_ARCHIVE_RECOVERY ||
		 (nvm_claim_start.restore != NVM_RESTORE_NONE && cf->state == DB_IN_CRASH_RECOVERY)))
	{
		/*
		 * A standby that crashed (or was stopped at once) while it replayed
		 * into its own pool: replay starts again from the restart point and
		 * installs what it finds missing (replica.h: installs are
		 * idempotent).  A copy of a running primary says "in production".
		 */
		pfree(cf);
		start_id = pb.id;
		start_gen = Max(pb.gen, bf.gen);
		start_prev_gen = pb.gen;
		nvm_claim_start.claim_now = true;
		return;
	}
	if (pb.clean_lsn != 0 && !clean)
		report_refusal("was stopped cleanly, but this data directory was not",
					   psprintf("The pool was last stopped cleanly with its data directory at checkpoint %X/%X, while this data directory's last checkpoint is %X/%X and it was not shut down cleanly: it is a copy made while its server ran, or it ran on without the pool.",
								LSN_FORMAT_ARGS(pb.clean_lsn), LSN_FORMAT_ARGS(cf->checkPoint)),
					   hint_copy);
	if (pb.clean_lsn == 0 && clean)
		report_refusal("was not stopped cleanly, but this data directory was",
					   psprintf("The pool was in use by a server that did not stop cleanly, while this data directory was shut down cleanly at checkpoint %X/%X: the pool is a copy made while a server ran, or the data directory went on without it.",
								LSN_FORMAT_ARGS(cf->checkPoint)),
					   hint_copy);
	pfree(cf);

	start_id = pb.id;
	start_gen = Max(pb.gen, bf.gen);
	start_prev_gen = pb.gen;
	/* a clean pair is claimed at once; a crashed one after WAL replay */
	nvm_claim_start.claim_now = (pb.clean_lsn != 0);
}

/* ---------------------------------------------------------------------
 * The claim, and the binding file for the binding's states
 * ---------------------------------------------------------------------
 */

/*
 * nvm_claim_pool makes this data directory the pool's owner at a new
 * generation, in the persist order of the file header, the binding file
 * saying restore (the restore state in shared memory); a failure to write
 * the binding file is reported at elevel, and the pool is then left as it
 * was (false).
 */
bool
nvm_claim_pool(int elevel, NvmRestoreState restore)
{
	BindingFile bf;
	uint64		gen = start_gen + 1;

	memset(&bf, 0, sizeof(bf));
	bf.id = start_id;
	bf.gen = gen;
	bf.prev_gen = start_prev_gen;
	bf.restore = restore;
	bf.rebuild = nvm_claim_start.rebuild;
	if (!write_binding_file(&bf, elevel) || !nvm_durability_note_claim(elevel))
		return false;
	nvm_durability_forget_saved_pool();
	nvm_pool_binding_claim(start_id, gen, nvm_boot_current());
	bf.prev_gen = 0;
	(void) write_binding_file(&bf, elevel);
	start_gen = gen;
	start_prev_gen = gen;
	return true;
}

/* nvm_claim_file_detach records in the binding file that cause detaches it. */
bool
nvm_claim_file_detach(NvmDetachCause cause, int elevel)
{
	BindingFile bf;

	read_binding_file(&bf);
	bf.detached = cause;
	bf.prev_gen = 0;
	return write_binding_file(&bf, elevel);
}

/*
 * nvm_claim_file_end_restore records in the binding file that recovery of
 * a data directory restored from a base backup has ended (end_restore).
 */
void
nvm_claim_file_end_restore(bool image, int elevel)
{
	BindingFile bf;

	read_binding_file(&bf);
	end_restore(&bf, image);
	(void) write_binding_file(&bf, elevel);
}

/*
 * nvm_claim_file_image_replayed records in the binding file that replay of
 * a restored data directory has applied the image of the pool: the rows
 * may be served from now on, after restarts too.
 */
void
nvm_claim_file_image_replayed(void)
{
	BindingFile bf;

	read_binding_file(&bf);
	bf.restore = NVM_RESTORE_REPLAY;
	(void) write_binding_file(&bf, FATAL);
}
