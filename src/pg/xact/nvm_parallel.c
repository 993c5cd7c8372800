/*-------------------------------------------------------------------------
 *
 * nvm_parallel.c
 *	  What parallel workers need to read nvm tables: the leader's view.
 *
 * A parallel worker reads nvm tables with the view of its leader: the
 * leader's statement vector (MCSI or N2DB snapshot) and the leader's nvm
 * txid, so that it sees exactly what the leader sees, the leader's own
 * uncommitted writes included (judged by the command id in the snapshot
 * PostgreSQL ships to the worker, as heap judges them).  PostgreSQL gives
 * extensions no place in a parallel query's dynamic shared memory other
 * than a parallel-aware scan's descriptor, and workers read nvm tables
 * through index scans, bitmap scans and whole-table scans under a Gather
 * too; so the leader publishes its view in a slot of its own in shared
 * memory when the executor starts a query that may use parallel workers
 * (before any worker is launched), and workers read their leader's slot
 * (MyProc->lockGroupLeader).  A query run inside a parallel query (by a
 * function, in the leader) does not publish again, so the slot stays the
 * outer query's until its workers are gone.  Workers never write: parallel
 * mode forbids it.
 *
 * Parallel sequential scans split the version numbers of the table into
 * chunks that the participants claim from a shared counter in the scan's
 * descriptor (nvm_scan.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "nvm_compat.h"
#include "xact/nvm_parallel.h"

/* One leader's published view. */
typedef struct NvmLeaderView
{
	bool		valid;			/* published at least once */
	uint64		txid;			/* the leader's nvm txid, 0 if none */
	bool		imported;		/* the leader reads with a snapshot taken elsewhere */
	NvmSnapshot snap;			/* the leader's statement vector */
} NvmLeaderView;

/* One slot per PGPROC that can lead a parallel query (pgprocno < MaxBackends). */
static NvmLeaderView *nvm_leader_views = NULL;

/*
 * nvm_parallel_shmem_size returns the shared memory of the slots; called
 * from the shmem_request hook (MaxBackends is known by then).
 */
Size
nvm_parallel_shmem_size(void)
{
	return mul_size(MaxBackends, sizeof(NvmLeaderView));
}

/*
 * nvm_parallel_shmem_startup finds (or creates) the slots.
 */
void
nvm_parallel_shmem_startup(void)
{
	bool		found;

	nvm_leader_views = ShmemInitStruct("nvmam parallel leaders",
									   nvm_parallel_shmem_size(), &found);
	if (!found)
		memset(nvm_leader_views, 0, nvm_parallel_shmem_size());
}

/*
 * nvm_parallel_may_publish says whether this backend can publish a view
 * for parallel workers now: it is not a worker, not inside a parallel
 * query already, and has a slot.
 */
bool
nvm_parallel_may_publish(void)
{
	return !IsParallelWorker() && !IsInParallelMode() && nvm_leader_views != NULL &&
		MyProc != NULL && NVM_PROC_NUMBER(MyProc) < MaxBackends;
}

/*
 * nvm_parallel_publish publishes this backend's current view in its slot:
 * its statement vector snap, its nvm txid (0 if none) and whether it reads
 * with a snapshot taken elsewhere, for the workers of a query that may run
 * in parallel; called, if nvm_parallel_may_publish, when the executor
 * starts such a query, before its workers exist.
 */
void
nvm_parallel_publish(const NvmSnapshot *snap, uint64 txid, bool imported)
{
	NvmLeaderView *slot;

	Assert(nvm_parallel_may_publish());
	slot = &nvm_leader_views[NVM_PROC_NUMBER(MyProc)];
	slot->txid = txid;
	slot->imported = imported;
	memcpy(&slot->snap, snap, nvm_snapshot_size(snap));
	pg_write_barrier();
	slot->valid = true;
}

/*
 * nvm_parallel_leader_view returns the view the leader of this parallel
 * worker published, or NULL if there is none.
 */
static const NvmLeaderView *
nvm_parallel_leader_view(void)
{
	PGPROC	   *leader;
	const NvmLeaderView *slot;

	if (!IsParallelWorker() || nvm_leader_views == NULL || MyProc == NULL)
		return NULL;
	leader = MyProc->lockGroupLeader;
	if (leader == NULL || NVM_PROC_NUMBER(leader) >= MaxBackends)
		return NULL;
	slot = &nvm_leader_views[NVM_PROC_NUMBER(leader)];
	if (!slot->valid)
		return NULL;
	pg_read_barrier();
	return slot;
}

/*
 * nvm_parallel_worker_ready says whether this is a parallel worker whose
 * leader published a view.
 */
bool
nvm_parallel_worker_ready(void)
{
	return nvm_parallel_leader_view() != NULL;
}

/*
 * nvm_parallel_leader_snapshot returns the leader's statement vector (in
 * shared memory; callers copy what they keep).  Only for parallel workers.
 */
const NvmSnapshot *
nvm_parallel_leader_snapshot(void)
{
	const NvmLeaderView *slot = nvm_parallel_leader_view();

	if (slot == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nvm tables cannot be read by this parallel worker"),
				 errdetail("The worker's leader published no nvm snapshot."),
				 errhint("Mark functions that read nvm tables PARALLEL UNSAFE.")));
	return &slot->snap;
}

/*
 * nvm_parallel_leader_imported says whether the leader reads with a
 * PostgreSQL snapshot taken elsewhere (nvm_imported_snapshot.c), which the
 * worker then follows too.  Only for parallel workers.
 */
bool
nvm_parallel_leader_imported(void)
{
	const NvmLeaderView *slot = nvm_parallel_leader_view();

	return slot != NULL && slot->imported;
}

/*
 * nvm_parallel_leader_txid returns the leader's nvm txid (0 if it had not
 * written when the query started).  Only for parallel workers.
 */
uint64
nvm_parallel_leader_txid(void)
{
	const NvmLeaderView *slot = nvm_parallel_leader_view();

	return slot != NULL ? slot->txid : 0;
}
