/*
 * txn.h
 *	  The transaction and snapshot interface of the core, the same in every
 *	  concurrency-control mode: clock slots, the transaction life cycle
 *	  with write logs and subtransactions, snapshots, transaction status.
 *	  Transactions in doubt (in-doubt and prepared) are indoubt.h's,
 *	  recovery and mode conversion recover.h's; their persist orders are
 *	  written below with the others.  The mode is the pool's
 *	  (NvmPoolHeader.cc_mode); txn.c reaches its design through the mode's
 *	  operations (ccmode.h):
 *	  multi-clock snapshot isolation (MCSI paper §4: per-slot clocks,
 *	  persistent per-slot status rings, the last-completed array, vector
 *	  snapshots; mcsi.h) and the N2DB baseline (one global counter, a global
 *	  active-transaction list behind one lock, a shared commit log; n2db.h).
 *	  Everything above this interface is the same for every mode.
 *
 * Every backend that touches nvm tables owns a clock slot.  A transaction
 * gets a txid (clock id, clock value) at its first write only: a read-only
 * transaction writes nothing to the pool.  Its status lives in the status
 * store of the pool's mode: MCSI, its slot's status ring (2 bits a
 * transaction, 31 per 64-bit word, the top bit a dirty bit: Algorithm 1);
 * N2DB, the shared commit log.  When it completes, its status becomes
 * final, is inlined into the versions it wrote, and its completion is
 * published: MCSI, its clock value as the slot's last completed value in
 * shared memory; N2DB, off the active list.  A snapshot is the vector of
 * last completed values (N2DB: xmin, xmax and the in-progress list).
 *
 * Persist orders (the clock's is in mcsi.h, the N2DB counter's and commit
 * log's in n2db.h):
 *	 - Start of the first write: a drain makes the previous transaction's
 *	   inlined statuses durable; then the slot's write log is taken over
 *	   (log_txid) and status RUNNING stored in the ring, both flushed and
 *	   made durable by the drain that publishes the first version.
 *	 - Every version's offset is appended to the slot's write log and
 *	   flushed before the drain that publishes the version.  So after a
 *	   crash, recovery finds every version of the slot's last transaction
 *	   and inlines its final status (ABORTED if it was running; such versions
 *	   are then unlinked from the head of their chains and freed), and every
 *	   older transaction's versions already carry theirs durably: no
 *	   version depends on its status-ring entry any more, which may then be
 *	   reused (clocks jump forward after a crash).
 *	 - Commit: every version and head written by the transaction has been
 *	   flushed; one drain makes them durable; then the status word is set to
 *	   COMMITTED|dirty, flushed, drained, and the dirty bit cleared.  Only
 *	   then is the final status inlined into the versions (flushed, drained
 *	   by the next commit) and the clock value published as last completed.
 *	   A crash before the status drain: the transaction is aborted; after it:
 *	   committed, and every version is durable.
 *	 - Abort: status ABORTED the same way (its durability is not required:
 *	   recovery turns every non-final entry into ABORTED).
 *	 - In doubt (a transaction that also commits through an external log,
 *	   PostgreSQL's WAL, whose commit record comes before the nvm status):
 *	   before the external commit record is written, the versions are
 *	   drained and the slot's in-doubt marker (txid, external xid) is
 *	   persisted.  Recovery leaves such a transaction RUNNING instead of
 *	   aborting it; it is resolved by asking the external log
 *	   (nvm_indoubt_resolve_all) before any snapshot is used.  The
 *	   external log may hand the xid out again if a crash lost every record
 *	   carrying it (the transaction then never committed): before it
 *	   commits the xid's new owner, it resolves the marker as aborted
 *	   (nvm_indoubt_abort_external), so an answer "committed" for a marker
 *	   still unresolved is always its own transaction's.
 *	 - Prepared (two-phase commit): the marker is persisted the same way
 *	   before the external prepare record; then the running transaction is
 *	   handed over (nvm_txn_hand_over_indoubt) and is in doubt exactly as
 *	   after a crash, while snapshots go on being taken.  So an in-doubt
 *	   transaction never counts as completed until it is resolved: its slot
 *	   is reserved and its last completed value stays below the
 *	   transaction's clock value (recovery sets it so too), or, in N2DB, it
 *	   stays on the active list; resolution makes the status final,
 *	   inlines it, clears the marker, and only then publishes the
 *	   completion.  A snapshot taken before that leaves the transaction
 *	   out whatever its outcome; one taken after includes it.
 */
#ifndef NVM_TXN_H
#define NVM_TXN_H

#include "ccmode.h"

/* An entry of a transaction's write log: a version it created. */
typedef struct NvmWriteLogEntry
{
	nvm_off		version;
	nvm_off		table;			/* the descriptor of the version's table */
	int			level;			/* subtransaction nesting level that wrote it */
} NvmWriteLogEntry;

/*
 * Backend-local state of the transaction running on this backend's slot.
 */
typedef struct NvmTxn
{
	int			slot;			/* clock slot, -1 if none attached */
	uint64_t	txid;			/* 0 until the first write */
	NvmWriteLogEntry *log;		/* versions created, in order */
	size_t		nlog;
	size_t		log_capacity;
	nvm_off		plog_block;		/* current block of the persistent write log */
	size_t		plog_count;		/* entries in the persistent write log */
	uint32_t	external_id;	/* stored in the versions it writes (PG: its xid), 0 = none */
	bool		nt_versions;	/* rows written by non-temporal stores (persist.h) */
} NvmTxn;

/*
 * The size of the shared state of concurrency control for max_slots slots
 * (recover.h's nvm_cc_recover sets it up at start-up).
 */
extern size_t nvm_cc_shmem_size(uint32_t max_slots);

/* Attach a process to the shared state (after fork: no-op). */
extern void nvm_cc_attach(void *shmem);

/* Claim a free clock slot for this process (-1 if none is free); release it. */
extern int	nvm_slot_acquire(uint32_t owner_pid);
extern void nvm_slot_release(int slot);

/* Why nvm_txn_begin_write last failed in this thread. */
typedef enum NvmBeginFailure
{
	NVM_BEGIN_OK = 0,
	NVM_BEGIN_NO_SPACE,			/* the pool has no room for the slot's status ring */
	NVM_BEGIN_STORE_FULL		/* the mode's store has no room (nvm_txn_begin_failure_detail) */
} NvmBeginFailure;

/* Transaction life cycle. */
extern void nvm_txn_init(NvmTxn *txn, int slot);
extern uint64_t nvm_txn_begin_write(NvmTxn *txn);	/* assigns txid if not yet */
extern NvmBeginFailure nvm_txn_begin_failure(void);
extern bool nvm_cc_serializable(void);
extern const char *nvm_txn_begin_failure_detail(void);
extern bool nvm_txn_log_version(NvmTxn *txn, nvm_off table, nvm_off version, int level);
extern void nvm_txn_unlog_last(NvmTxn *txn);
extern void nvm_txn_commit(NvmTxn *txn);
extern void nvm_txn_abort(NvmTxn *txn);
extern void nvm_txn_subxact_commit(NvmTxn *txn, int level);
extern void nvm_txn_subxact_abort(NvmTxn *txn, int level);

/*
 * The commit hook (one per process, NULL by default) runs when a
 * transaction that wrote commits: at nvm_txn_commit and when an in-doubt
 * transaction is resolved as committed.  It runs after the COMMITTED
 * status is durable and before the completion is published, so whatever
 * it logs about the commit is logged before any snapshot can contain the
 * transaction, and before any transaction that saw it can commit (the PG
 * layer writes the commit's redo record for standbys there).  txn is the
 * committing process's transaction, or NULL for an in-doubt one (its
 * write log is then read from the pool).  The hook must not fail.
 */
typedef void (*NvmTxnCommitHook) (uint32_t slot, uint64_t txid, const NvmTxn *txn);
extern void nvm_txn_set_commit_hook(NvmTxnCommitHook hook);

/*
 * nvm_txn_write_log_each calls fn for every version the transaction txid
 * of slot wrote that is not aborted by itself (a rolled-back
 * subtransaction's, a killed write), in the order written, with its
 * table's descriptor: from txn's write log if txn is given, else from the
 * slot's write log in the pool.  Returns the number of calls.
 */
typedef void (*NvmWriteLogVisitor) (nvm_off table, nvm_off version, void *arg);
extern size_t nvm_txn_write_log_each(uint32_t slot, uint64_t txid, const NvmTxn *txn,
									 NvmWriteLogVisitor fn, void *arg);

/* Snapshots. */
extern void nvm_snapshot_set_policy(NvmSnapshotPolicy policy);
extern void nvm_snapshot_take(NvmSnapshot *snap);
extern void nvm_snapshot_take_fresh(NvmSnapshot *snap);	/* never an older buffered one */
extern size_t nvm_snapshot_size(const NvmSnapshot *snap);	/* bytes to copy */
extern bool nvm_snapshot_contains(const NvmSnapshot *snap, uint64_t txid);

/*
 * The mode's part of the collection horizon (gc.h): nvm_horizon_start sets
 * h to what every future snapshot contains (false if out of memory),
 * nvm_horizon_lower lowers it to a pinned snapshot's (MCSI: its vector vec
 * of nvec entries; N2DB: its xmin), nvm_horizon_lower_to lowers it to
 * another horizon of the same server start (the component-wise minimum),
 * and nvm_horizon_contains says whether every snapshot h stands for counts
 * txid as completed.
 */
extern bool nvm_horizon_start(NvmHorizon *h);
extern void nvm_horizon_lower(NvmHorizon *h, _Atomic uint64_t *vec, uint32_t nvec,
							  uint64_t xmin);
extern void nvm_horizon_lower_to(NvmHorizon *h, const NvmHorizon *to);
extern bool nvm_horizon_contains(const NvmHorizon *h, uint64_t txid);

/* Status of a transaction, read with the helping protocol (never dirty). */
extern NvmTxnStatus nvm_status_get(uint64_t txid);

/* Is txid running right now (not yet completed)? */
extern bool nvm_txid_is_running(uint64_t txid);

/*
 * For the integrity checker (verify.h), which must not act on entries that
 * are not a transaction's own:
 *	 - nvm_txid_handed_out says whether txid can have been handed out: its
 *	   clock id names a slot of the pool and its value is below what that
 *	   slot's clock (MCSI) or the counter (N2DB) has reserved;
 *	 - nvm_status_entry reads the status store's entry for txid as it is
 *	   (no helping) into *status, and says whether the entry is still
 *	   txid's: false if txid is from before the pool last changed modes (the
 *	   store of the old mode is gone) or a later transaction may have reused
 *	   the entry (the stores are rings);
 *	 - nvm_txid_unfinished says whether txid is still running on its slot,
 *	   or is in doubt: its status may be final in the store while its
 *	   versions wait for it to be inlined.
 */
extern bool nvm_txid_handed_out(uint64_t txid);
extern bool nvm_status_entry(uint64_t txid, NvmTxnStatus *status);
extern bool nvm_txid_unfinished(uint64_t txid);

/*
 * For the files that share the transaction state with txn.c (indoubt.c,
 * recover.c; nothing else calls these):
 *	 - nvm_cc_ops is the pool's mode's operations;
 *	 - nvm_cc_layout makes shmem (nvm_cc_shmem_size bytes) the shared state
 *	   of concurrency control, zeroed, in the pool's mode, and makes this
 *	   process run that mode; nvm_cc_set_mode switches the shared state and
 *	   this process to mode;
 *	 - nvm_txn_run_commit_hook runs the commit hook, if one is set;
 *	 - nvm_txn_final_status is the status inlined into txid's versions once
 *	   its entry is final: COMMITTED if the entry says so, else ABORTED.
 */
extern const NvmCcOps *nvm_cc_ops(void);
extern void nvm_cc_layout(NvmCcShared *shmem, uint32_t max_slots);
extern void nvm_cc_set_mode(uint32_t mode);
extern void nvm_txn_run_commit_hook(uint32_t slot, uint64_t txid, const NvmTxn *txn);
extern NvmTxnStatus nvm_txn_final_status(uint64_t txid);

#endif							/* NVM_TXN_H */
