/*
 * persist.h
 *	  The one interface through which the core makes pool contents durable.
 *
 * Every persistent write path flushes cache lines with nvm_flush() and
 * orders them with nvm_drain() (a store fence).  nvm_persist() is flush +
 * drain.  Routing every persist through here lets us count flushes, fences
 * and bytes, add an emulated NVM write latency, and later swap in a crash
 * simulator that tracks which lines are durable.
 *
 * The default backend is PMDK's libpmem (pmem_flush / pmem_drain, i.e.
 * CLWB + SFENCE on these machines).
 */
#ifndef NVM_PERSIST_H
#define NVM_PERSIST_H

#include "nvm_types.h"

typedef enum NvmPersistMode
{
	NVM_PERSIST_PMEM = 0,		/* libpmem: CLWB/CLFLUSHOPT + SFENCE */
	NVM_PERSIST_NONE,			/* no flushes, drains are fences: a pool whose
								 * durability is not the cache lines' (the PG
								 * layer: commits durable through the WAL off
								 * persistent memory), unit tests of pure logic */
	NVM_PERSIST_HOOK			/* callbacks (crash simulator) */
} NvmPersistMode;

/* Per-thread (per-backend) counters; the PG layer exposes them through SQL. */
typedef struct NvmPersistStats
{
	uint64_t	flushes;		/* nvm_flush calls */
	uint64_t	lines;			/* cache lines flushed */
	uint64_t	bytes;			/* bytes asked to be flushed */
	uint64_t	drains;			/* fences */
	uint64_t	nt_lines;		/* cache lines written by non-temporal stores */
} NvmPersistStats;

/*
 * How the store writes the rows of new versions (nvm.commit_variant):
 * stored through the cache and written back line by line (CLWB), or, as
 * DBX-N writes its log records, with non-temporal stores of whole lines
 * padded to 64 bytes (256 above 256), which bypass the cache and need no
 * write-back, only the fence that orders them.
 */
typedef enum NvmVersionWrites
{
	NVM_WRITES_CACHED = 0,
	NVM_WRITES_NONTEMPORAL
} NvmVersionWrites;

/* Callbacks used by NVM_PERSIST_HOOK. */
typedef struct NvmPersistHooks
{
	void		(*flush) (const void *addr, size_t len, void *arg);
	void		(*drain) (void *arg);
	void	   *arg;
} NvmPersistHooks;

extern _Thread_local NvmPersistStats nvm_persist_stats;

extern void nvm_persist_set_mode(NvmPersistMode mode, const NvmPersistHooks *hooks);
extern void nvm_persist_set_drain_delay_ns(uint64_t ns);

/* Write back the cache lines covering [addr, addr+len); not yet ordered. */
extern void nvm_flush(const void *addr, size_t len);

/* Wait until every earlier flush is durable (store fence). */
extern void nvm_drain(void);

/* nvm_flush + nvm_drain. */
extern void nvm_persist(const void *addr, size_t len);

extern void nvm_persist_set_version_writes(NvmVersionWrites w);
extern NvmVersionWrites nvm_persist_version_writes(void);

/*
 * nvm_write_nt writes len bytes of src at dst followed by zeros up to
 * padded bytes, with non-temporal stores of whole cache lines (dst is
 * line-aligned, padded a multiple of the line); like a flush, they are
 * durable at the next nvm_drain (the crash simulator sees them as stored
 * and flushed).
 */
extern void nvm_write_nt(void *dst, const void *src, size_t len, size_t padded);

#endif							/* NVM_PERSIST_H */
