/*
 * crashsim.c
 *	  The crash simulator (see crashsim.h).
 */
#include "crashsim.h"

#include "core.h"
#include "persist.h"
#include "pool.h"

#include <stdlib.h>
#include <string.h>

#define LINE 64

typedef struct PendingLine
{
	size_t		line;
	unsigned char data[LINE];
} PendingLine;

static struct
{
	CrashSimOptions opts;
	char	   *live;
	size_t		size;			/* the pool's reserved address space */
	unsigned char *durable;
	char	   *image;			/* scratch buffer for crash images */
	PendingLine *pending;
	size_t		npending;
	size_t		cap;
	void	   *core_shmem;
	int			paused;
	int			checking;
	uint64_t	rng;
	CrashSimStats stats;
} sim;

static uint64_t
next_random(void)
{
	/* xorshift64* */
	sim.rng ^= sim.rng >> 12;
	sim.rng ^= sim.rng << 25;
	sim.rng ^= sim.rng >> 27;
	return sim.rng * UINT64_C(2685821657736338717);
}

static void
sim_flush(const void *addr, size_t len, void *arg)
{
	size_t		first = ((const char *) addr - sim.live) / LINE;
	size_t		last = ((const char *) addr + len - 1 - sim.live) / LINE;

	(void) arg;
	if ((const char *) addr < sim.live || (const char *) addr + len > sim.live + sim.size)
		return;					/* not pool memory */
	for (size_t l = first; l <= last; l++)
	{
		if (sim.npending == sim.cap)
		{
			sim.cap = sim.cap ? sim.cap * 2 : 1024;
			sim.pending = realloc(sim.pending, sim.cap * sizeof(PendingLine));
		}
		sim.pending[sim.npending].line = l;
		memcpy(sim.pending[sim.npending].data, sim.live + l * LINE, LINE);
		sim.npending++;
	}
}

/*
 * crash_here builds the configured number of crash images from the
 * current state and checks each: the image must open (its growth segments
 * are whole) and pass the checker.  The file's size at the crash is its
 * size now (growth makes a new size durable before any later drain).
 */
static void
crash_here(void)
{
	char	   *saved_base = nvm_pool_base;
	NvmPoolHeader *saved_header = nvm_pool_header;
	NvmPersistStats saved_stats = nvm_persist_stats;
	char	   *image = sim.image;
	size_t		file_size = nvm_pool_file_size();

	sim.stats.crash_points++;
	for (int i = 0; i < sim.opts.images_per_point; i++)
	{
		void	   *shmem;
		const char *err;
		static char open_err[256];

		memcpy(image, sim.durable, file_size);
		/* dirty lines: each may or may not have reached the media */
		for (size_t page = 0; page < file_size; page += 4096)
		{
			if (memcmp(sim.live + page, sim.durable + page, 4096) == 0)
				continue;
			for (size_t off = page; off < page + 4096; off += LINE)
			{
				if (memcmp(sim.live + off, sim.durable + off, LINE) != 0 && (next_random() & 1))
					memcpy(image + off, sim.live + off, LINE);
			}
		}

		sim.checking = 1;
		nvm_persist_set_mode(NVM_PERSIST_NONE, NULL);
		nvm_pool_base = image;
		nvm_pool_header = (NvmPoolHeader *) image;
		shmem = calloc(1, nvm_core_shmem_size());
		if (nvm_pool_check_segments(file_size, open_err, sizeof(open_err)) != NVM_POOL_OK)
			err = open_err;
		else
		{
			nvm_core_startup(shmem);
			err = sim.opts.check(sim.opts.check_arg);
		}
		free(shmem);
		nvm_pool_base = saved_base;
		nvm_pool_header = saved_header;
		nvm_core_attach(sim.core_shmem);
		sim.checking = 0;

		sim.stats.images++;
		if (err)
		{
			sim.stats.bad_images++;
			if (!sim.stats.first_error)
			{
				sim.stats.first_error = err;
				sim.stats.first_error_point = sim.stats.crash_points;
			}
		}
	}
	nvm_persist_stats = saved_stats;
}

static void sim_drain(void *arg);

static void
route_to_sim(void)
{
	NvmPersistHooks hooks;

	hooks.flush = sim_flush;
	hooks.drain = sim_drain;
	hooks.arg = NULL;
	nvm_persist_set_mode(NVM_PERSIST_HOOK, &hooks);
}

static void
sim_drain(void *arg)
{
	(void) arg;
	sim.stats.drains++;
	if (!sim.paused && !sim.checking && sim.opts.check &&
		sim.stats.drains % (uint64_t) sim.opts.point_stride == 0)
	{
		crash_here();
		route_to_sim();
	}
	for (size_t i = 0; i < sim.npending; i++)
		memcpy(sim.durable + sim.pending[i].line * LINE, sim.pending[i].data, LINE);
	sim.npending = 0;
}

void
crashsim_start(const CrashSimOptions *opts, void *core_shmem)
{
	memset(&sim, 0, sizeof(sim));
	sim.opts = *opts;
	if (sim.opts.images_per_point < 1)
		sim.opts.images_per_point = 1;
	if (sim.opts.point_stride < 1)
		sim.opts.point_stride = 1;
	sim.rng = opts->seed ? opts->seed : 1;
	sim.live = nvm_pool_base;
	sim.size = nvm_pool_reserved_size;
	sim.durable = calloc(1, sim.size);
	memcpy(sim.durable, sim.live, nvm_pool_file_size());
	sim.image = malloc(sim.size);
	sim.core_shmem = core_shmem;
	route_to_sim();
}

void
crashsim_stop(void)
{
	nvm_persist_set_mode(NVM_PERSIST_PMEM, NULL);
	free(sim.durable);
	free(sim.image);
	free(sim.pending);
	sim.durable = NULL;
	sim.pending = NULL;
}

void
crashsim_pause(int paused)
{
	sim.paused = paused;
}

const CrashSimStats *
crashsim_stats(void)
{
	return &sim.stats;
}
