/*
 * pomvcc.h
 *	  POMVCC's partial-order timestamps (Isoda et al., Figs. 15-19) on the
 *	  Pisces mode, one of the modes behind the transaction interface
 *	  (txn.h), reached through its NvmCcOps (ccmode.h) from txn.c only (and
 *	  the unit tests): many committers share one commit timestamp, and
 *	  readers start at a begin timestamp that trails it.
 *
 * On this store.  As Pisces (pisces.h): MCSI's txids, clocks and status
 * store, the per-slot commit-timestamp rings, and a snapshot that is one
 * start timestamp against which a creator's endTS is compared.  What
 * changes is where the timestamps come from:
 *	 - CTs, the commit timestamp, is shared: a commit takes the current CTs
 *	   as its endTS without raising it, counting itself in the pre-commit
 *	   counter PC[CTs] first (and again if CTs moved meanwhile) and in the
 *	   commit counter CC[CTs] after its endTS is recorded.
 *	 - BTs, the begin timestamp, is a snapshot's start: it advances to b+1
 *	   only when b+1 < CTs and PC[b+1] = CC[b+1] (every commit at b+1 is
 *	   recorded), so a snapshot never sees part of a timestamp.
 *	 - CTs advances when an abort happens (a conflict), when a snapshot is
 *	   taken at least a session's interval (nvm_pomvcc_set_tick, by
 *	   default NVM_POMVCC_TICK_NS; 0: at every snapshot) after its last
 *	   move (the paper's periodic update), and when a session's rule asks for it (below).
 *	 - The session rule (the paper's request-based method): a session passes
 *	   the CTs of its own last commit to its next snapshot, which raises CTs
 *	   above it and waits until BTs reaches it.  A session therefore always
 *	   sees its own commits.  Another session may not: a snapshot taken
 *	   after a commit of someone else was acknowledged can still miss it,
 *	   the paper's HISTORICAL READ.  This is weaker than PostgreSQL's
 *	   snapshots, so the mode refuses SERIALIZABLE (serializable = false).
 *
 * The counters are a ring of NVM_POMVCC_COUNTS entries, never reset: an
 * entry serves CTs values one ring apart, and CTs is not raised a ring
 * ahead of BTs, so when BTs compares an entry's two counters every commit
 * counted in them is of a timestamp at most the one it asks about.
 *
 * Persist orders: those of MCSI's clocks and status words (mcsi.h); the
 * timestamps, counters and rings are volatile.
 */
#ifndef NVM_POMVCC_H
#define NVM_POMVCC_H

#include "pisces.h"

#define NVM_POMVCC_COUNTS		4096	/* PC/CC pairs (a power of two) */
#define NVM_POMVCC_TICK_NS		1000000 /* periodic CTs update by default: 1 ms */

typedef struct NvmPomvccCount
{
	_Atomic uint64_t pc;		/* pre-commits counted at this timestamp */
	_Atomic uint64_t cc;		/* commits recorded at this timestamp */
} NvmPomvccCount;

/*
 * POMVCC's shared state (nvm_cc_mode_state): CTs and BTs on cache lines of
 * their own, the time of the last CTs update, the counters, and then the
 * commit-timestamp rings (an NvmPiscesShared, whose global timestamp is
 * unused), at pomvcc_rings().
 */
typedef struct NvmPomvccShared
{
	_Alignas(NVM_CACHELINE) _Atomic uint64_t cts;
	_Alignas(NVM_CACHELINE) _Atomic uint64_t bts;
	_Alignas(NVM_CACHELINE) _Atomic uint64_t cts_raised_ns;
	NvmPomvccCount counts[NVM_POMVCC_COUNTS];
} NvmPomvccShared;

extern const NvmCcOps nvm_pomvcc_ops;

/*
 * nvm_pomvcc_set_tick sets how long after CTs's last move a snapshot of this
 * process moves it: nvm.pomvcc_update_interval, a session's own.  With
 * NVM_POMVCC_TICK_NEVER its snapshots never move it on time; with 0 every
 * snapshot moves it and waits for the commits at the timestamp it moved
 * from, so every commit acknowledged before the snapshot is in it (no
 * HISTORICAL READ, at Pisces's cost of one shared move per snapshot).
 */
#define NVM_POMVCC_TICK_NEVER	(-1)
extern void nvm_pomvcc_set_tick(int64_t ns);

#endif							/* NVM_POMVCC_H */
