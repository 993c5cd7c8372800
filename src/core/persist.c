/*
 * persist.c
 *	  The persist interface: flush, drain and persist through libpmem, with
 *	  counters, an optional emulated write latency and a hook mode for the
 *	  crash simulator.
 */
#include "persist.h"

#include <libpmem.h>
#include <string.h>
#include <time.h>

_Thread_local NvmPersistStats nvm_persist_stats;

static NvmPersistMode persist_mode = NVM_PERSIST_PMEM;
static NvmPersistHooks persist_hooks;
static uint64_t drain_delay_ns = 0;
static NvmVersionWrites version_writes = NVM_WRITES_CACHED;

/*
 * nvm_persist_set_mode selects how flushes and drains are carried out in
 * this process.
 */
void
nvm_persist_set_mode(NvmPersistMode mode, const NvmPersistHooks *hooks)
{
	persist_mode = mode;
	if (hooks)
		persist_hooks = *hooks;
}

/*
 * nvm_persist_set_drain_delay_ns sets an emulated NVM write latency: a busy
 * wait of ns nanoseconds after every drain (0 = none).
 */
void
nvm_persist_set_drain_delay_ns(uint64_t ns)
{
	drain_delay_ns = ns;
}

void
nvm_flush(const void *addr, size_t len)
{
	uintptr_t	first = (uintptr_t) addr & ~(uintptr_t) (NVM_CACHELINE - 1);
	uintptr_t	last = ((uintptr_t) addr + len + NVM_CACHELINE - 1) & ~(uintptr_t) (NVM_CACHELINE - 1);

	if (len == 0)
		return;
	nvm_persist_stats.flushes++;
	nvm_persist_stats.lines += (last - first) / NVM_CACHELINE;
	nvm_persist_stats.bytes += len;

	switch (persist_mode)
	{
		case NVM_PERSIST_PMEM:
			pmem_flush(addr, len);
			break;
		case NVM_PERSIST_NONE:
			break;
		case NVM_PERSIST_HOOK:
			persist_hooks.flush(addr, len, persist_hooks.arg);
			break;
	}
}

static void
busy_wait_ns(uint64_t ns)
{
	struct timespec start,
				now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do
	{
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((uint64_t) (now.tv_sec - start.tv_sec) * 1000000000u +
			 (uint64_t) (now.tv_nsec - start.tv_nsec) < ns);
}

void
nvm_drain(void)
{
	nvm_persist_stats.drains++;
	switch (persist_mode)
	{
		case NVM_PERSIST_PMEM:
			pmem_drain();
			break;
		case NVM_PERSIST_NONE:
			atomic_thread_fence(memory_order_seq_cst);
			break;
		case NVM_PERSIST_HOOK:
			persist_hooks.drain(persist_hooks.arg);
			break;
	}
	if (drain_delay_ns)
		busy_wait_ns(drain_delay_ns);
}

void
nvm_persist(const void *addr, size_t len)
{
	nvm_flush(addr, len);
	nvm_drain();
}

/*
 * nvm_persist_set_version_writes selects how this process writes the rows
 * of new versions (NvmVersionWrites); a transaction keeps the choice in
 * force at its first write.
 */
void
nvm_persist_set_version_writes(NvmVersionWrites w)
{
	version_writes = w;
}

NvmVersionWrites
nvm_persist_version_writes(void)
{
	return version_writes;
}

void
nvm_write_nt(void *dst, const void *src, size_t len, size_t padded)
{
	size_t		whole = len & ~(size_t) (NVM_CACHELINE - 1);
	char	   *d = dst;

	nvm_persist_stats.nt_lines += padded / NVM_CACHELINE;
	if (persist_mode != NVM_PERSIST_PMEM)
	{
		memcpy(d, src, len);
		memset(d + len, 0, padded - len);
		if (persist_mode == NVM_PERSIST_HOOK)
			persist_hooks.flush(d, padded, persist_hooks.arg);
		return;
	}
	if (whole > 0)
		pmem_memcpy(d, src, whole, PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_NODRAIN);
	if (len > whole)
	{
		/* the last line of the row, padded with zeros in a line of its own */
		_Alignas(NVM_CACHELINE) char line[NVM_CACHELINE];

		memcpy(line, (const char *) src + whole, len - whole);
		memset(line + (len - whole), 0, NVM_CACHELINE - (len - whole));
		pmem_memcpy(d + whole, line, NVM_CACHELINE, PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_NODRAIN);
		whole += NVM_CACHELINE;
	}
	if (padded > whole)
		pmem_memset(d + whole, 0, padded - whole, PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_NODRAIN);
}
