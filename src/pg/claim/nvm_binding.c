/*-------------------------------------------------------------------------
 *
 * nvm_binding.c
 *	  The binding's states in shared memory: when nvm rows may be served
 *	  after a start, and the steps between.  Which pool a data directory
 *	  may use is decided at start by nvm_claim.c (whose header gives the
 *	  argument); what follows from that decision runs here:
 *
 *	 state		meaning							leaves for
 *	 ATTACHED	claimed: nvm rows may be used	(a clean stop marks the pool)
 *	 PENDING	after a crash: the WAL check	ATTACHED (or RESYNC) once WAL
 *				waits for the end of replay		replay covers every position
 *												the pool depends on, else
 *												DETACHED for good
 *	 REPLICA	a standby's own pool, or a		ATTACHED (or RESYNC) at
 *				restore: replay writes it,		promotion, or when a restore's
 *				queries read it					recovery ends with the image
 *												replayed (else DETACHED)
 *	 RESYNC		claimed, but tables must be		ATTACHED, once the first
 *				logged again for standbys		access has logged them
 *				first (../redo/nvm_resync.c)	(the others wait)
 *	 DETACHED	the pool is not, or no longer,	nothing: every access raises
 *				used							the cause, with a hint
 *
 * A state moves under the binding's lock, in the first backend that needs
 * nvm rows (nvm_binding_usable, nvm_binding_settle); the clean stop runs in
 * the postmaster's exit (binding_at_exit).  The WAL notes that the check
 * after a crash compares with the end of replay are written here too
 * (nvm_binding_note_flushed).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/rel.h"


#include "pool.h"

#include "claim/nvm_binding.h"
#include "claim/nvm_claim.h"
#include "claim/nvm_durability.h"
#include "nvm_compat.h"
#include "nvm_settings.h"

/* State of the binding in shared memory. */
typedef enum NvmBindingState
{
	NVM_BINDING_ATTACHED = 0,	/* claimed: nvm rows may be used */
	NVM_BINDING_PENDING,		/* after a crash: WAL check not done yet */
	NVM_BINDING_DETACHED,		/* the pool is not (or no longer) used */
	NVM_BINDING_REPLICA,		/* a standby's own pool: replay writes it, queries read it */
	NVM_BINDING_RESYNC			/* claimed, but tables must be logged again first */
} NvmBindingState;

typedef struct NvmBindingShared
{
	LWLock	   *lock;			/* serialises settling */
	pg_atomic_uint32 state;		/* NvmBindingState */
	uint32		cause;			/* NvmDetachCause when detached */
	uint64		required_lsn;	/* NVM_DETACH_BEHIND: what the pool needed */
	uint64		replay_lsn;		/* ... and where replay ended */
	bool		resync_pending; /* nvm_binding_require_resync was called */
	uint32		restore;		/* NvmRestoreState */
} NvmBindingShared;

/* Logs again the rows a crash may have lost the redo of (nvm_resync.c). */
static void (*resync_hook) (void) = NULL;

/* Loads a rebuilt pool from its checkpoint files (redo/nvm_replay_files.c). */
static bool (*rebuild_loader) (void) = NULL;

/* This process works for the resync in progress (nvm_binding_help_resync). */
static bool helping_resync = false;

static NvmBindingShared *binding_shared = NULL;

static void binding_at_exit(int code, Datum arg);

/* ---------------------------------------------------------------------
 * Shared memory and settling
 * ---------------------------------------------------------------------
 */

Size
nvm_binding_shmem_size(void)
{
	return MAXALIGN(sizeof(NvmBindingShared));
}

/* nvm_binding_shmem_request asks for the lock that serialises settling. */
void
nvm_binding_shmem_request(void)
{
	RequestAddinShmemSpace(nvm_binding_shmem_size());
	RequestNamedLWLockTranche("nvm_binding", 1);
}

/*
 * nvm_binding_shmem_startup sets up the shared state at every start of
 * shared memory (also after a crash-restart, which leaves the pool in use:
 * the WAL check then runs again), claiming the pool at once after a clean
 * stop; it runs before the core's start-up touches the pool.
 */
void
nvm_binding_shmem_startup(void)
{
	bool		found;

	binding_shared = ShmemInitStruct("nvmam binding", nvm_binding_shmem_size(), &found);
	if (found)
		return;
	binding_shared->lock = &(GetNamedLWLockTranche("nvm_binding"))->lock;
	binding_shared->cause = (uint32) nvm_claim_start.cause;
	binding_shared->required_lsn = 0;
	binding_shared->replay_lsn = 0;
	binding_shared->resync_pending = false;
	binding_shared->restore = (uint32) nvm_claim_start.restore;
	if (nvm_claim_start.cause != NVM_DETACH_NONE)
		pg_atomic_init_u32(&binding_shared->state, NVM_BINDING_DETACHED);
	else if (nvm_claim_start.claim_now)
	{
		(void) nvm_claim_pool(FATAL, (NvmRestoreState) binding_shared->restore);
		nvm_claim_start.claim_now = false;
		pg_atomic_init_u32(&binding_shared->state,
						   nvm_claim_start.replica ? NVM_BINDING_REPLICA : NVM_BINDING_ATTACHED);
	}
	else
		pg_atomic_init_u32(&binding_shared->state, NVM_BINDING_PENDING);

	/*
	 * Registered at every start of shared memory: a crash-restart runs and
	 * forgets the callbacks (shmem_exit) before shared memory is made again.
	 */
	before_shmem_exit(binding_at_exit, (Datum) 0);
}

/*
 * check_wal_and_claim runs the WAL check of a pool that was in use, once
 * replay is over, with the lock held (or alone, at exit): the pool is
 * claimed if every WAL position it depends on was replayed, else the data
 * directory is detached for good.  Failures to write the binding file are
 * reported at elevel and leave the check to be done again.
 */
static void
check_wal_and_claim(int elevel)
{
	uint64		required = nvm_pool_required_wal();
	XLogRecPtr	replay = GetXLogReplayRecPtr(NULL);

	/*
	 * The positions the pool records are flush positions, which end either
	 * at a record or at the end of a whole page written (XLogWrite): the
	 * rest of that page can hold no complete record beyond the one replay
	 * ended at, so replay covers up to the end of its last page.
	 */
	if (required <= replay + (XLOG_BLCKSZ - replay % XLOG_BLCKSZ) % XLOG_BLCKSZ)
	{
		if (nvm_claim_pool(elevel, (NvmRestoreState) binding_shared->restore))
			pg_atomic_write_u32(&binding_shared->state,
								binding_shared->resync_pending ? NVM_BINDING_RESYNC :
								NVM_BINDING_ATTACHED);
		return;
	}
	if (!nvm_claim_file_detach(NVM_DETACH_BEHIND, elevel))
		return;
	binding_shared->cause = NVM_DETACH_BEHIND;
	binding_shared->required_lsn = required;
	binding_shared->replay_lsn = replay;
	pg_atomic_write_u32(&binding_shared->state, NVM_BINDING_DETACHED);
	ereport(LOG,
			(errmsg("nvm tables are not available: this data directory is detached from nvm pool \"%s\"",
					nvm_pool_path_resolved),
			 errdetail_internal("%s", nvm_claim_detail(NVM_DETACH_BEHIND, required, replay))));
}

/*
 * nvm_binding_capturable_at_recovery_end says, at the end of WAL replay
 * (the startup process), whether this data directory will use the pool as
 * it is: a standby's own pool, a restore whose image was replayed, or a
 * pool in use whose WAL positions replay reached (the WAL check that the
 * first access makes, check_wal_and_claim).  The checkpoint of the pool
 * at the end of recovery captures only such a pool.
 */
bool
nvm_binding_capturable_at_recovery_end(void)
{
	uint32		state = pg_atomic_read_u32(&binding_shared->state);
	XLogRecPtr	replay = GetXLogReplayRecPtr(NULL);

	switch (state)
	{
		case NVM_BINDING_ATTACHED:
		case NVM_BINDING_RESYNC:
			return true;
		case NVM_BINDING_REPLICA:
			return binding_shared->restore == NVM_RESTORE_NONE ||
				binding_shared->restore == NVM_RESTORE_REPLAY;
		case NVM_BINDING_PENDING:
			return nvm_pool_required_wal() <=
				replay + (XLOG_BLCKSZ - replay % XLOG_BLCKSZ) % XLOG_BLCKSZ;
		default:
			return false;
	}
}

/*
 * run_resync runs the resync hook in the first backend that finds the
 * "resync" state; the others wait for the lock.  An error leaves the state
 * as it was, for the next access to try again.
 */
static void
run_resync(void)
{
	LWLockAcquire(binding_shared->lock, LW_EXCLUSIVE);
	PG_TRY();
	{
		if (pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_RESYNC)
		{
			if (resync_hook != NULL)
				resync_hook();
			binding_shared->resync_pending = false;
			pg_atomic_write_u32(&binding_shared->state, NVM_BINDING_ATTACHED);
		}
	}
	PG_FINALLY();
	{
		LWLockRelease(binding_shared->lock);
	}
	PG_END_TRY();
}

/*
 * restore_usable says whether the pool of a data directory restored from a
 * base backup may be used now: during recovery once the image is replayed;
 * when recovery has ended, the pool becomes an ordinary one if the image
 * was replayed, else the data directory is detached for good.
 */
static bool
restore_usable(void)
{
	if (RecoveryInProgress())
		return binding_shared->restore == NVM_RESTORE_REPLAY;
	LWLockAcquire(binding_shared->lock, LW_EXCLUSIVE);
	PG_TRY();
	{
		if (pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_REPLICA &&
			binding_shared->restore != NVM_RESTORE_NONE)
		{
			bool		image = binding_shared->restore == NVM_RESTORE_REPLAY;

			/*
			 * A rebuild that replayed no record (the server had stopped
			 * cleanly: its last capture holds every commit) loads the
			 * checkpoint files now.
			 */
			if (!image && nvm_claim_start.rebuild && rebuild_loader != NULL &&
				rebuild_loader())
				image = true;

			nvm_claim_file_end_restore(image, ERROR);
			binding_shared->restore = NVM_RESTORE_NONE;
			if (!image)
				binding_shared->cause = nvm_claim_start.rebuild ? NVM_DETACH_LOST : NVM_DETACH_NO_IMAGE;
			pg_atomic_write_u32(&binding_shared->state,
								!image ? NVM_BINDING_DETACHED :
								binding_shared->resync_pending ? NVM_BINDING_RESYNC :
								NVM_BINDING_ATTACHED);
		}
	}
	PG_FINALLY();
	{
		LWLockRelease(binding_shared->lock);
	}
	PG_END_TRY();
	return pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_ATTACHED;
}

/*
 * nvm_binding_restore_image_replayed says that replay of a data directory
 * restored from a base backup has applied the image of the pool (the
 * startup process, at IMAGE END), or that a rebuild has loaded the pool's
 * checkpoint files, which are its image: nvm rows may be served from now
 * on, and after restarts too.
 */
void
nvm_binding_restore_image_replayed(void)
{
	if (binding_shared->restore != NVM_RESTORE_IMAGE)
		return;
	nvm_claim_file_image_replayed();
	binding_shared->restore = NVM_RESTORE_REPLAY;
	if (nvm_claim_start.rebuild)
		ereport(LOG,
				(errmsg("nvm: the checkpoint files of the nvm pool are loaded: the rebuilt pool holds every nvm table as of the files, and the WAL after them is replayed on top"),
				 errdetail("nvm tables can be read once the data directory is consistent.")));
	else
		ereport(LOG,
				(errmsg("nvm: the image of the nvm pool in the WAL is replayed: the rebuilt pool holds every nvm table"),
				 errdetail("nvm tables can be read once the data directory is consistent.")));
}

/*
 * nvm_binding_is_restore says whether this server rebuilds its pool from
 * the WAL of a base backup (until recovery ends): replay skips what names
 * a table the image has not brought yet.
 */
bool
nvm_binding_is_restore(void)
{
	return binding_shared != NULL && binding_shared->restore != NVM_RESTORE_NONE;
}

/*
 * nvm_binding_is_rebuild says whether this server rebuilds a pool that a
 * crash of the operating system tore or lost (a restore that loads the
 * pool's checkpoint files; not a restored base backup).
 */
bool
nvm_binding_is_rebuild(void)
{
	return nvm_binding_is_restore() && nvm_claim_start.rebuild;
}

/*
 * nvm_binding_usable says whether nvm rows may be used now: a pool that was
 * in use is checked against the end of WAL replay the first time
 * (check_wal_and_claim).  Never during recovery.
 */
bool
nvm_binding_usable(void)
{
	uint32		state = pg_atomic_read_u32(&binding_shared->state);

	if (likely(state == NVM_BINDING_ATTACHED))
		return true;
	if (state == NVM_BINDING_REPLICA)
	{
		if (binding_shared->restore != NVM_RESTORE_NONE)
		{
			if (restore_usable())
				return true;
			if (pg_atomic_read_u32(&binding_shared->state) != NVM_BINDING_RESYNC)
				return false;
			run_resync();
			return true;
		}
		if (RecoveryInProgress())
			return true;
		/* a promoted standby owns its pool as any primary does */
		pg_atomic_write_u32(&binding_shared->state,
							binding_shared->resync_pending ? NVM_BINDING_RESYNC :
							NVM_BINDING_ATTACHED);
		if (pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_RESYNC)
			run_resync();
		return true;
	}
	if (state == NVM_BINDING_RESYNC && helping_resync)
		return true;
	if (state == NVM_BINDING_RESYNC && !RecoveryInProgress())
	{
		run_resync();
		return true;
	}
	if (state == NVM_BINDING_DETACHED || RecoveryInProgress())
		return false;
	LWLockAcquire(binding_shared->lock, LW_EXCLUSIVE);
	PG_TRY();
	{
		if (pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_PENDING)
			check_wal_and_claim(ERROR);
	}
	PG_FINALLY();
	{
		LWLockRelease(binding_shared->lock);
	}
	PG_END_TRY();
	if (pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_RESYNC)
		run_resync();
	return pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_ATTACHED;
}

/*
 * nvm_binding_settle lets an access to nvm rows go on only when the pool is
 * this data directory's (nvm_binding_usable); otherwise it raises an error
 * that names rel (if given), the pool and the cause, with a hint.
 */
void
nvm_binding_settle(Relation rel)
{
	NvmDetachCause cause;
	char	   *detail;

	if (likely(nvm_binding_usable()))
		return;
	if (pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_PENDING)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("nvm tables cannot be used during recovery")));

	if (pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_REPLICA &&
		binding_shared->restore == NVM_RESTORE_IMAGE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 rel ? errmsg("nvm table \"%s\" is not available yet", RelationGetRelationName(rel)) :
				 errmsg("nvm tables are not available yet"),
				 errdetail("This data directory is restored from a base backup, and WAL replay has not yet reached the image of the nvm pool logged at the backup's start."),
				 errhint("Wait until replay passes the image; if the backup's WAL holds none, take a new base backup of the primary (see \"Backups and copies\" (doc/backups.md) in nvmam's documentation).")));
	cause = (NvmDetachCause) binding_shared->cause;
	detail = nvm_claim_detail(cause, binding_shared->required_lsn, binding_shared->replay_lsn);
	if (cause == NVM_DETACH_STANDBY && RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 rel ? errmsg("nvm table \"%s\" cannot be read on a physical standby",
							  RelationGetRelationName(rel)) :
				 errmsg("nvm tables cannot be read on a physical standby"),
				 errdetail_internal("%s", detail),
				 errhint("%s", nvm_claim_hint(cause))));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 rel ? errmsg("nvm table \"%s\" is not available: this data directory is detached from its nvm pool",
						  RelationGetRelationName(rel)) :
			 errmsg("nvm tables are not available: this data directory is detached from its nvm pool"),
			 errdetail_internal("%s", detail),
			 errhint("%s", nvm_claim_hint(cause))));
}

/*
 * nvm_binding_require_resync says, at shared-memory start-up, that nvm
 * tables must be logged again for standbys before nvm rows are used
 * (nvm_redo.c): the claim, now or after the WAL check, leads to the
 * "resync" state, whose first access in a backend runs hook (which must
 * have been set with nvm_binding_set_resync_hook).
 */
void
nvm_binding_require_resync(void)
{
	binding_shared->resync_pending = true;
	if (pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_ATTACHED)
		pg_atomic_write_u32(&binding_shared->state, NVM_BINDING_RESYNC);
}

/*
 * nvm_binding_help_resync says that this process works for the resync in
 * progress, which another process runs and waits for it in (the index
 * repair at start, claim/nvm_repair.c): it uses nvm rows while the
 * state is "resync", where any other process would wait for the resync.
 */
void
nvm_binding_help_resync(void)
{
	helping_resync = true;
}

/*
 * nvm_binding_set_rebuild_loader sets what loads a rebuilt pool from its
 * checkpoint files when no record was replayed (_PG_init); it returns
 * whether there were files to load.
 */
void
nvm_binding_set_rebuild_loader(bool (*loader) (void))
{
	rebuild_loader = loader;
}

/* nvm_binding_set_resync_hook sets what the "resync" state runs (_PG_init). */
void
nvm_binding_set_resync_hook(void (*hook) (void))
{
	resync_hook = hook;
}

/*
 * nvm_binding_is_replica says whether this server is a standby replaying
 * the primary's nvm redo into its own pool (until it is promoted).
 */
bool
nvm_binding_is_replica(void)
{
	return binding_shared != NULL &&
		pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_REPLICA;
}

/* nvm_binding_is_detached says whether nvm rows are unavailable for good. */
bool
nvm_binding_is_detached(void)
{
	return pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_DETACHED;
}

/*
 * nvm_binding_state_detail returns "attached", "pending" (WAL check not
 * done yet) or the cause of the detachment, for nvm_pool_stats().
 */
const char *
nvm_binding_state_detail(void)
{
	switch ((NvmBindingState) pg_atomic_read_u32(&binding_shared->state))
	{
		case NVM_BINDING_ATTACHED:
			return "attached";
		case NVM_BINDING_PENDING:
			return "pending";
		case NVM_BINDING_REPLICA:
			return binding_shared->restore == NVM_RESTORE_IMAGE ? "restoring" : "standby";
		case NVM_BINDING_RESYNC:
			return "attached";
		case NVM_BINDING_DETACHED:
			break;
	}
	return nvm_claim_detail((NvmDetachCause) binding_shared->cause,
					 binding_shared->required_lsn, binding_shared->replay_lsn);
}

/*
 * nvm_binding_note_flushed raises the pool-wide WAL position to the WAL
 * flushed now, before a change that depends on it.
 */
void
nvm_binding_note_flushed(void)
{
	nvm_pool_note_wal((uint64) GetFlushRecPtr(NULL));
}

/*
 * binding_at_exit runs when the server (postmaster, or a single-user
 * backend) exits after its shutdown checkpoint: if it owns the pool (or
 * the WAL check of a crashed pair passes now) and pg_control says the
 * cluster was shut down cleanly, the pool is synced (page-cache storage)
 * and records that checkpoint, which the next start must find again.  An
 * immediate shutdown, a failed start, a failed sync or a crash leaves the
 * pool in use.
 */
static void
binding_at_exit(int code, Datum arg)
{
	ControlFileData *cf;
	bool		crc_ok = false;

	if (code != 0 || binding_shared == NULL || nvm_pool_base == NULL)
		return;
	if (pg_atomic_read_u32(&binding_shared->state) == NVM_BINDING_PENDING &&
		!RecoveryInProgress())
		check_wal_and_claim(LOG);
	if (pg_atomic_read_u32(&binding_shared->state) != NVM_BINDING_ATTACHED &&
		pg_atomic_read_u32(&binding_shared->state) != NVM_BINDING_REPLICA &&
		pg_atomic_read_u32(&binding_shared->state) != NVM_BINDING_RESYNC)
		return;
	cf = get_controlfile(DataDir, &crc_ok);
	if (crc_ok && (cf->state == DB_SHUTDOWNED ||
				   (nvm_claim_start.replica && cf->state == DB_SHUTDOWNED_IN_RECOVERY)))
	{
		int			rc = nvm_pool_binding_mark_clean((uint64) cf->checkPoint);

		if (rc != 0)
		{
			errno = rc;
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not sync nvm pool \"%s\": %m", nvm_pool_path_resolved),
					 errdetail("The pool stays marked in use: a restart of the operating system before the next start of the server makes the server refuse it.")));
		}
		else if (pg_atomic_read_u32(&binding_shared->state) != NVM_BINDING_REPLICA)
			nvm_durability_save_volatile_pool();
	}
	pfree(cf);
}
