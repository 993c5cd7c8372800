/*-------------------------------------------------------------------------
 *
 * nvm_feedback.c
 *	  hot_standby_feedback for nvm tables: the primary's collection of
 *	  versions is held back for the queries of physical standbys that send
 *	  feedback, as heap's VACUUM is.
 *
 * A standby with hot_standby_feedback sends the oldest xmin of its queries
 * to the primary, whose walsender holds it (as its own xmin, or as its
 * replication slot's); heap's pruning and VACUUM keep every tuple a
 * snapshot with that xmin may see, so replay never has to cancel standby
 * queries for them.  nvm's collection judges versions by the pool's clocks,
 * not by xids: its horizon (gc.h) is what every snapshot of the pool
 * contains.  So the primary keeps samples of that horizon, each with the
 * next xid to be assigned, read right after it, and lowers every horizon
 * it computes to the newest sample whose next xid precedes the standbys'
 * xmin (feedback_floor, installed as the core's horizon floor).  Without
 * feedback the floor does nothing; the standby's CONFLICT replay
 * (nvm_replay.c) still waits for or cancels the queries that need what
 * the primary removes, as it does when feedback comes too late.
 *
 * Why such a sample is safe.  Let X be the xmin the standby sends and N a
 * sample's next xid, N preceding X.  For a standby query whose xmin is X or
 * later, every xid below X has ended.  A standby learns that an xid at or
 * above N ended (or that such xids exist at all) only from WAL written
 * after that xid was assigned, so after the sample was read; every
 * transaction that the sample counts as completed published its
 * completion before that, and wrote its COMMIT record before publishing
 * it (nvm_redo.c).  The standby had therefore replayed all of their
 * COMMIT records before the query's PostgreSQL snapshot, and the query's
 * nvm snapshot, taken after it, contains them: below the newest version
 * inside the sample nothing is visible to it, and the index runs dead
 * under the sample are dead for it too.
 *
 * Samples.  A sample is taken by whatever process computes a horizon at
 * least NVM_FEEDBACK_SAMPLE_MS after the last one, into a ring of
 * NVM_FEEDBACK_SAMPLES in shared memory, oldest first.  Samples older than
 * the one the standbys' xmin selects are dropped; when the ring is full,
 * the newest is replaced (the floor then only errs towards keeping more).
 * The standbys' xmin is read from the physical walsenders' xmins and the
 * replication slots' xmin, at most every NVM_FEEDBACK_SAMPLE_MS per
 * process (an older xmin is a lower, safe floor).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "gc.h"
#include "txn.h"

#include "nvm_settings.h"
#include "redo/nvm_feedback.h"

#define NVM_FEEDBACK_SAMPLES	64
#define NVM_FEEDBACK_SAMPLE_MS	100

typedef struct FeedbackSample
{
	TransactionId next_xid;		/* read after the horizon */
	NvmHorizon	horizon;		/* what every later snapshot contains */
} FeedbackSample;

typedef struct FeedbackShared
{
	LWLock	   *lock;
	TimestampTz last_sample;
	int			first;			/* where the oldest sample is */
	int			nsamples;
	FeedbackSample samples[NVM_FEEDBACK_SAMPLES];	/* a ring, from first on */
} FeedbackShared;

static FeedbackShared *feedback = NULL;

/* This process's last reading of the standbys' xmin, and when it was read. */
static TransactionId cached_xmin = InvalidTransactionId;
static TimestampTz cached_at = 0;

static void feedback_floor(NvmHorizon *h);

/* nvm_feedback_init installs the core's horizon floor; called from _PG_init. */
void
nvm_feedback_init(void)
{
	nvm_gc_set_horizon_floor(feedback_floor);
}

Size
nvm_feedback_shmem_size(void)
{
	return MAXALIGN(sizeof(FeedbackShared));
}

/* nvm_feedback_shmem_request asks for the lock of the samples. */
void
nvm_feedback_shmem_request(void)
{
	RequestAddinShmemSpace(nvm_feedback_shmem_size());
	RequestNamedLWLockTranche("nvm_feedback", 1);
}

/* nvm_feedback_shmem_startup finds or creates the ring of samples (empty). */
void
nvm_feedback_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	feedback = ShmemInitStruct("nvmam standby feedback", nvm_feedback_shmem_size(), &found);
	if (!found)
	{
		feedback->lock = &(GetNamedLWLockTranche("nvm_feedback"))->lock;
		feedback->last_sample = 0;
		feedback->first = 0;
		feedback->nsamples = 0;
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * standby_xmin returns the oldest xmin that physical standbys sent with
 * hot_standby_feedback (held by their walsenders, or by their replication
 * slots: a slot's xmin also counts a logical slot still building its
 * snapshot, which only errs towards keeping more), or an invalid xid.
 */
static TransactionId
standby_xmin(void)
{
	TransactionId xmin = InvalidTransactionId;
	TransactionId slot_xmin;

	for (int i = 0; i < max_wal_senders; i++)
	{
		WalSnd	   *w = &WalSndCtl->walsnds[i];
		pid_t		pid;
		PGPROC	   *proc;

		SpinLockAcquire(&w->mutex);
		pid = w->pid;
		SpinLockRelease(&w->mutex);
		if (pid == 0 || (proc = BackendPidGetProc(pid)) == NULL)
			continue;
		/* a logical walsender is connected to a database; its xmin is its own */
		if (OidIsValid(proc->databaseId))
			continue;
		xmin = TransactionIdOlder(xmin, *(volatile TransactionId *) &proc->xmin);
	}
	ProcArrayGetReplicationSlotXmin(&slot_xmin, NULL);
	return TransactionIdOlder(xmin, slot_xmin);
}

/*
 * sample_at returns the i-th sample, 0 being the oldest.  Called under the
 * lock.
 */
static FeedbackSample *
sample_at(int i)
{
	return &feedback->samples[(feedback->first + i) % NVM_FEEDBACK_SAMPLES];
}

/*
 * selected_sample returns the index of the newest sample whose next xid
 * precedes xmin, or 0 (the oldest) if none does.  Called under the lock.
 */
static int
selected_sample(TransactionId xmin)
{
	for (int i = feedback->nsamples - 1; i > 0; i--)
		if (TransactionIdPrecedes(sample_at(i)->next_xid, xmin))
			return i;
	return 0;
}

/*
 * take_sample adds h (what every future snapshot contains, just read) to
 * the ring with the next xid, read now, dropping the samples older than
 * the one xmin (the standbys' xmin, or invalid) selects.  Called under the
 * lock held exclusively.
 */
static void
take_sample(const NvmHorizon *h, TransactionId xmin, TimestampTz now)
{
	FeedbackSample *sample;

	if (TransactionIdIsNormal(xmin) && feedback->nsamples > 0)
	{
		int			keep_from = selected_sample(xmin);

		feedback->first = (feedback->first + keep_from) % NVM_FEEDBACK_SAMPLES;
		feedback->nsamples -= keep_from;
	}
	if (feedback->nsamples < NVM_FEEDBACK_SAMPLES)
		feedback->nsamples++;
	else if (!TransactionIdIsNormal(xmin))
		feedback->first = (feedback->first + 1) % NVM_FEEDBACK_SAMPLES; /* the oldest goes */
	/* else the newest is replaced */
	sample = sample_at(feedback->nsamples - 1);
	/* the slots above h's nslots are never read (ccstate.h) */
	memcpy(&sample->horizon, h, offsetof(NvmHorizon, ts) + h->nslots * sizeof(uint64));
	/* read after the horizon: see the file header */
	pg_memory_barrier();
	sample->next_xid = ReadNextTransactionId();
	feedback->last_sample = now;
}

/*
 * feedback_floor is the core's horizon floor (gc.h): given h, what every
 * future snapshot contains, it takes a sample when one is due and lowers h
 * to the sample the standbys' xmin selects.  Only on a primary that writes
 * nvm redo for standbys.
 */
static void
feedback_floor(NvmHorizon *h)
{
	TimestampTz now;
	TransactionId xmin;

	if (feedback == NULL || !IsUnderPostmaster || max_wal_senders == 0 ||
		!nvm_wal_redo || !XLogIsNeeded() || RecoveryInProgress())
		return;
	now = GetCurrentTimestamp();
	if (now - cached_at >= NVM_FEEDBACK_SAMPLE_MS * 1000)
	{
		cached_xmin = standby_xmin();
		cached_at = now;
	}
	xmin = cached_xmin;

	if (now - feedback->last_sample >= NVM_FEEDBACK_SAMPLE_MS * 1000 &&
		LWLockConditionalAcquire(feedback->lock, LW_EXCLUSIVE))
	{
		if (now - feedback->last_sample >= NVM_FEEDBACK_SAMPLE_MS * 1000)
			take_sample(h, xmin, now);
		LWLockRelease(feedback->lock);
	}
	if (!TransactionIdIsNormal(xmin))
		return;
	LWLockAcquire(feedback->lock, LW_SHARED);
	if (feedback->nsamples > 0)
		nvm_horizon_lower_to(h, &sample_at(selected_sample(xmin))->horizon);
	LWLockRelease(feedback->lock);
}
