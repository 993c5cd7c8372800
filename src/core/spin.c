/*
 * spin.c
 *	  The slow path of the core's shared-memory spinlock.
 */
#include "nvm_types.h"

#include <sched.h>

/*
 * nvm_spin_lock_slow spins with a pause instruction and yields the CPU now
 * and then, until the lock is free.  Critical sections guarded by these
 * locks are a few hundred instructions long and never block.
 */
void
nvm_spin_lock_slow(NvmSpinLock *lock)
{
	unsigned	spins = 0;

	for (;;)
	{
		while (atomic_load_explicit(&lock->locked, memory_order_relaxed) != 0)
		{
			if (++spins % 64 == 0)
				sched_yield();
			else
			{
#if defined(__x86_64__) || defined(__i386__)
				__builtin_ia32_pause();
#endif
			}
		}
		if (nvm_spin_trylock(lock))
			return;
	}
}
