/*-------------------------------------------------------------------------
 *
 * nvm_wait.c
 *	  Waiting for the transaction that is writing a row of an nvm table.
 *
 * An update, delete or row lock that meets a newer version of another
 * running transaction X waits for X to end, like heap, and then looks at
 * the row again: if X rolled back, it goes on with the version it had; if
 * X committed, the executor either follows the row to its newest version
 * (READ COMMITTED's EvalPlanQual) or raises a serialization failure
 * (REPEATABLE READ).
 *
 * The wait goes through PostgreSQL's lock manager, so the deadlock detector
 * sees it, lock_timeout and statement_timeout apply, and pg_locks and
 * pg_stat_activity show it.  Most nvm transactions have no PostgreSQL xid
 * (nvm_xact.c assigns one only for index entries, SERIALIZABLE and
 * logical decoding), so the waiter cannot use XactLockTableWait; it waits
 * for X's virtual transaction id, which X publishes in its clock slot when
 * it first writes (as OrioleDB does): VirtualXactLock(vxid, true).  (The
 * slot's vxid and xid words are this layer's, nvm_published.c; nvm_xact.c
 * writes them.)  X's nvm status is final before that lock
 * goes: the transaction callback that commits or aborts the nvm transaction
 * (nvm_xact_end.c) runs before PostgreSQL releases a transaction's locks.  The slot's running
 * txid is read before and after the vxid, so a vxid of a later transaction
 * on the same slot is never used; if the slot no longer runs X, X is ending
 * and the caller just looks again.
 *
 * Before that, the waiter checks X's decision word (nvm_decision.c): a
 * writer that found row lockers after installing its version may be about
 * to kill it, and must not be waited for as a whole.
 *
 * Subtransactions.  Heap waits for the subtransaction that wrote a row, so
 * a rollback to a savepoint wakes its waiters.  A virtual transaction id
 * lasts until the top-level transaction ends.  So a backend that writes an
 * nvm row inside a subtransaction first takes a "wait token": a lock of
 * its own (LOCKTAG_USERLOCK: backend id, local transaction id, generation)
 * held at the top level, published in shared memory by backend id.
 * Waiters wait on the token of the backend they wait for if it has one
 * for that transaction, else on its vxid.  When a subtransaction aborts,
 * after its versions are marked aborted, the backend takes a token of the
 * next generation, publishes it and lets the old one go: its waiters wake
 * up, look again, and wait on the new token if what they waited for is
 * still there.  The token is published before the version it covers can
 * be seen, so a waiter that sees the version also sees the token.  (Row
 * locks need no token: they name the subtransaction's own xid, whose end
 * wakes their waiters; nvm_rowlock.c.)
 *
 * Prepared transactions.  A transaction prepared with PREPARE TRANSACTION
 * is run by no backend; it keeps its xid lock until COMMIT or ROLLBACK
 * PREPARED, so the waiter waits on its xid, and then resolves it from
 * PostgreSQL's commit log itself (nvm_xact_settle_indoubt), since the
 * backend that ended it may not have done so yet.
 *
 * nvm.write_conflict = abort replaces the wait by an immediate
 * serialization failure (the MCSI paper's no-wait policy, for reproducing
 * its measurements).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/resowner.h"

#include "txn.h"

#include "nvm_compat.h"
#include "wait/nvm_decision.h"
#include "wait/nvm_wait.h"
#include "xact/nvm_indoubt.h"
#include "xact/nvm_published.h"

int			nvm_write_conflict = NVM_WRITE_CONFLICT_WAIT;

/* Wait tokens by backend id: (local transaction id << 32) | generation. */
static pg_atomic_uint64 *wait_tokens = NULL;

/* This backend's token: its generation, 0 if none in this transaction. */
static uint32 token_gen = 0;
static bool token_swap_pending = false;
static bool token_release_registered = false;

static const struct config_enum_entry nvm_write_conflict_options[] = {
	{"wait", NVM_WRITE_CONFLICT_WAIT, false},
	{"abort", NVM_WRITE_CONFLICT_ABORT, false},
	{NULL, 0, false}
};

/*
 * nvm_wait_define_settings defines nvm.write_conflict; called from the
 * module's settings function.
 */
void
nvm_wait_define_settings(void)
{
	DefineCustomEnumVariable("nvm.write_conflict",
							 "What a write does when another running transaction has a newer version of the row.",
							 "wait: wait for that transaction to end, as heap does; "
							 "abort: fail at once with a serialization failure (the MCSI paper's no-wait policy).",
							 &nvm_write_conflict,
							 NVM_WRITE_CONFLICT_WAIT,
							 nvm_write_conflict_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}

/*
 * nvm_report_write_conflict raises the serialization failure of
 * nvm.write_conflict = abort.
 */
void
nvm_report_write_conflict(Relation rel)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not serialize access due to concurrent update"),
			 errdetail("Another transaction is writing the same row of nvm table \"%s\", and nvm.write_conflict is \"abort\".",
					   RelationGetRelationName(rel)),
			 errhint("Retry the transaction.")));
}

/*
 * nvm_wait_shmem_size says how much shared memory the wait tokens take;
 * nvm_wait_shmem_startup finds or creates them (both from nvmam.c's
 * shared-memory hooks).
 */
Size
nvm_wait_shmem_size(void)
{
	return mul_size(MaxBackends + 1, sizeof(pg_atomic_uint64));
}

void
nvm_wait_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	wait_tokens = ShmemInitStruct("nvmam wait tokens", nvm_wait_shmem_size(), &found);
	if (!found)
	{
		for (int i = 0; i <= MaxBackends; i++)
			pg_atomic_init_u64(&wait_tokens[i], 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

static void
token_locktag(LOCKTAG *tag, NvmBackendNumber backend, LocalTransactionId lxid, uint32 gen)
{
	tag->locktag_field1 = (uint32) backend;
	tag->locktag_field2 = lxid;
	tag->locktag_field3 = gen;
	tag->locktag_field4 = 0x4e56;	/* "NV" */
	tag->locktag_type = LOCKTAG_USERLOCK;
	tag->locktag_lockmethodid = DEFAULT_LOCKMETHOD;
}

/*
 * take_token takes this backend's wait token of generation gen, at the
 * top level of the transaction, and publishes it.
 */
static void
take_token(uint32 gen)
{
	ResourceOwner saved = CurrentResourceOwner;
	LOCKTAG		tag;

	token_locktag(&tag, NVM_MY_BACKEND_NUMBER, NVM_PROC_LXID(MyProc), gen);
	CurrentResourceOwner = TopTransactionResourceOwner;
	PG_TRY();
	{
		(void) LockAcquire(&tag, ExclusiveLock, false, false);
	}
	PG_FINALLY();
	{
		CurrentResourceOwner = saved;
	}
	PG_END_TRY();
	token_gen = gen;
	pg_atomic_write_u64(&wait_tokens[NVM_MY_BACKEND_NUMBER],
						((uint64) NVM_PROC_LXID(MyProc) << 32) | gen);
	pg_memory_barrier();
}

/*
 * swap_token replaces the wait token by one of the next generation, which
 * wakes everybody waiting on the old one.
 */
static void
swap_token(void)
{
	ResourceOwner saved = CurrentResourceOwner;
	uint32		old = token_gen;
	LOCKTAG		tag;

	take_token(old + 1 == 0 ? 1 : old + 1);
	token_locktag(&tag, NVM_MY_BACKEND_NUMBER, NVM_PROC_LXID(MyProc), old);
	CurrentResourceOwner = TopTransactionResourceOwner;
	LockRelease(&tag, ExclusiveLock, false);
	CurrentResourceOwner = saved;
}

/*
 * nvm_wait_at_subxact_abort notes that an aborted subtransaction's
 * waiters are to be woken: token_release_callback swaps the token, later
 * in the abort (nvm_xact_end.c says why there).
 */
void
nvm_wait_at_subxact_abort(void)
{
	if (token_gen != 0)
		token_swap_pending = true;
}

/*
 * token_release_callback swaps the token once an aborted subtransaction
 * has let go of its locks (and its versions are marked aborted: that
 * happens in the subtransaction callback of nvm_xact_end.c, which runs
 * before).  Registered at the backend's first wait token.
 */
static void
token_release_callback(ResourceReleasePhase phase, bool isCommit,
					   bool isTopLevel, void *arg)
{
	if (phase == RESOURCE_RELEASE_AFTER_LOCKS && !isTopLevel && !isCommit &&
		token_swap_pending)
	{
		token_swap_pending = false;
		swap_token();
	}
}

/*
 * nvm_wait_at_xact_end forgets the wait token when the transaction ends
 * (commit, abort, prepare; a parallel worker's); the token lock goes with
 * the transaction's other locks.
 */
void
nvm_wait_at_xact_end(void)
{
	if (token_gen != 0)
		pg_atomic_write_u64(&wait_tokens[NVM_MY_BACKEND_NUMBER], 0);
	token_gen = 0;
	token_swap_pending = false;
}

/*
 * nvm_wait_before_subxact_change makes sure that, inside a subtransaction,
 * the backend has a wait token before it writes an nvm row or takes a row
 * lock, so that a rollback of the subtransaction wakes whoever comes to
 * wait for it.  Nothing to do at the top level.
 */
void
nvm_wait_before_subxact_change(void)
{
	if (GetCurrentTransactionNestLevel() <= 1 || token_gen != 0)
		return;
	if (!token_release_registered)
	{
		RegisterResourceReleaseCallback(token_release_callback, NULL);
		token_release_registered = true;
	}
	take_token(1);
}

/*
 * nvm_wait_for_vxid waits until the transaction vxid ends, or, if it has a
 * wait token, until that token goes (its transaction ended or one of its
 * subtransactions rolled back): the caller looks again in either case.
 */
void
nvm_wait_for_vxid(VirtualTransactionId vxid)
{
	if (NVM_VXID_BACKEND(vxid) >= NVM_FIRST_BACKEND_NUMBER &&
		NVM_VXID_BACKEND(vxid) <= NVM_LAST_BACKEND_NUMBER)
	{
		uint64		word;

		pg_memory_barrier();
		word = pg_atomic_read_u64(&wait_tokens[NVM_VXID_BACKEND(vxid)]);
		if (word != 0 && (LocalTransactionId) (word >> 32) == vxid.localTransactionId)
		{
			LOCKTAG		tag;

			token_locktag(&tag, NVM_VXID_BACKEND(vxid), vxid.localTransactionId, (uint32) word);
			(void) LockAcquire(&tag, ShareLock, false, false);
			LockRelease(&tag, ShareLock, false);
			return;
		}
	}
	VirtualXactLock(vxid, true);
}

/*
 * nvm_wait_for_writer waits until the running version v of another
 * transaction is settled: until its transaction ends, or, if that
 * transaction is deciding whether to keep v, until it has decided.  It
 * may return early (the caller always rereads the chain and calls again if
 * need be).  The caller holds no lock that it took for this row in the
 * current call.
 */
void
nvm_wait_for_writer(Relation rel, NvmVersion *v)
{
	uint64		txid = v->txid;
	NvmSlotShared *ss = &nvm_cc->slots[nvm_txid_clock_id(txid)];
	VirtualTransactionId vxid;
	TransactionId xid;
	NvmTxnStatus status;

	if (nvm_decision_wait(txid, rel, v->record_no))
		return;

	/*
	 * A commit whose status is final but whose completion is not published
	 * yet is still logging its redo (txn.h's commit hook), and where
	 * commits are durable through the WAL, waiting for that record's
	 * flush.  A write on its row waits for it as for a running writer
	 * (core store.c, check_newer), so it is waited for here in the same
	 * way, on its vxid: returning at once would make the caller retry in a
	 * busy loop for as long as the flush takes.
	 */
	status = nvm_version_status(v);
	if (status == NVM_STATUS_ABORTED ||
		(status == NVM_STATUS_COMMITTED && !nvm_txid_unfinished(txid)))
		return;					/* killed or finished meanwhile */
	if (status == NVM_STATUS_RUNNING &&
		nvm_write_conflict == NVM_WRITE_CONFLICT_ABORT)
		nvm_report_write_conflict(rel);

	/*
	 * A prepared transaction (in doubt, no backend runs it) holds its xid
	 * lock until COMMIT or ROLLBACK PREPARED; once the xid has ended, the
	 * waiter resolves it itself rather than wait for the backend that
	 * ended it to get there.
	 */
	xid = nvm_xact_settle_indoubt(txid);
	if (TransactionIdIsValid(xid))
	{
		XactLockTableWait(xid, NULL, NULL, XLTW_None);
		(void) nvm_xact_settle_indoubt(txid);
		return;
	}

	if (atomic_load(&ss->running_txid) == txid)
	{
		vxid = nvm_published_vxid((int) nvm_txid_clock_id(txid));
		if (atomic_load(&ss->running_txid) == txid &&
			VirtualTransactionIdIsValid(vxid))
		{
			nvm_wait_for_vxid(vxid);
			return;
		}
	}

	/*
	 * No backend runs txid: it is just ending, or it was cut short by a
	 * crash and waits to be resolved.  Look again in a moment.  (A commit
	 * still completing with no vxid published: the same.)
	 */
	CHECK_FOR_INTERRUPTS();
	if (nvm_txid_is_running(txid) || nvm_txid_unfinished(txid))
		pg_usleep(1000L);
}
