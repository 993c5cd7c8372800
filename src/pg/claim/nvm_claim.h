/*-------------------------------------------------------------------------
 *
 * nvm_claim.h
 *	  Which pool a data directory may use, decided at start: the binding
 *	  file, the checks before and after the pool is opened, and the claim
 *	  (nvm_claim.c).  When nvm rows may be served after that is the
 *	  binding's states' (nvm_binding.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_CLAIM_H
#define NVM_CLAIM_H

#include "access/xlogdefs.h"

/*
 * nvm_claim_detached_at_start decides, in the postmaster before the pool
 * is opened, whether this data directory must not open its pool at all (a
 * restored base backup, a standby, archive recovery, or a data directory
 * detached before); if so it records why, and the caller maps a scratch
 * pool instead.
 */
extern bool nvm_claim_detached_at_start(void);

/*
 * nvm_claim_check_pool checks, right after the pool is opened (created
 * says it was created now), that it belongs to this data directory at this
 * point of its history; it stops the server with FATAL when it does not.
 */
extern void nvm_claim_check_pool(bool created);

/* For the binding's states (nvm_binding.c); nothing else uses these. */
/* Why a data directory is detached from its pool. */
typedef enum NvmDetachCause
{
	NVM_DETACH_NONE = 0,
	NVM_DETACH_BACKUP,			/* backup_label: restored backup or pg_rewind */
	NVM_DETACH_STANDBY,			/* standby.signal */
	NVM_DETACH_RECOVERY,		/* recovery.signal: archive recovery */
	NVM_DETACH_BEHIND,			/* WAL replay ended before the pool's changes */
	NVM_DETACH_REWIND,			/* backup_label of pg_rewind */
	NVM_DETACH_NO_IMAGE,		/* a restored backup whose WAL has no image */
	NVM_DETACH_LOST				/* a lost pool whose WAL has no image to rebuild from */
} NvmDetachCause;

/*
 * A data directory restored from a base backup rebuilds its pool from the
 * WAL (checkpoint/nvm_backup.c): the image of the pool is awaited, then replay
 * goes on until recovery ends.
 */
typedef enum NvmRestoreState
{
	NVM_RESTORE_NONE = 0,
	NVM_RESTORE_IMAGE,			/* the image has not been replayed yet */
	NVM_RESTORE_REPLAY			/* it has; recovery goes on */
} NvmRestoreState;

/*
 * What the postmaster decided at start, before shared memory existed
 * (inherited by every process it forks): why the data directory is
 * detached, whether to claim the pool when shared memory starts (a clean
 * pair) rather than after WAL replay, whether this server replays into its
 * own pool (a standby made from a cold copy, or a restore), and whether a
 * restore rebuilds a lost pool rather than a base backup's.
 */
typedef struct NvmClaimStart
{
	NvmDetachCause cause;
	bool		claim_now;
	bool		replica;
	NvmRestoreState restore;
	bool		rebuild;
} NvmClaimStart;

extern NvmClaimStart nvm_claim_start;

/*
 * nvm_claim_pool makes this data directory the pool's owner at a new
 * generation, its binding file saying restore; nvm_claim_file_detach
 * records cause in the binding file; nvm_claim_file_end_restore records the
 * end of a restore's recovery (image says whether the image of the pool was
 * replayed); nvm_claim_file_image_replayed records that it was.  Failures
 * to write the file are reported at elevel (false).
 */
extern bool nvm_claim_pool(int elevel, NvmRestoreState restore);
extern bool nvm_claim_file_detach(NvmDetachCause cause, int elevel);
extern void nvm_claim_file_end_restore(bool image, int elevel);
extern void nvm_claim_file_image_replayed(void);

/* Why the data directory is detached, in a sentence, and how to get the rows back. */
extern char *nvm_claim_detail(NvmDetachCause cause, uint64 required, uint64 replay);
extern const char *nvm_claim_hint(NvmDetachCause cause);

#endif							/* NVM_CLAIM_H */
