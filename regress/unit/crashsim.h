/*
 * crashsim.h
 *	  A crash simulator for the storage core.
 *
 * Every flush and drain of the core goes through persist.h; in hook mode
 * they come here.  The simulator keeps a second, "durable" image of the
 * pool: a flush remembers the contents of the flushed cache lines, a drain
 * copies the remembered lines into the durable image.  At a crash point
 * (just before a drain) it builds crash images: the durable image plus a
 * random subset of the cache lines whose live contents differ from it (any
 * dirty line may have been evicted by the cache at any time), and hands
 * each image to a checker that runs recovery on it and checks invariants.
 */
#ifndef CRASHSIM_H
#define CRASHSIM_H

#include <stddef.h>
#include <stdint.h>

/* Called with the recovered image mapped as the pool; returns an error text or NULL. */
typedef const char *(*CrashCheckFn) (void *arg);

typedef struct CrashSimOptions
{
	uint64_t	seed;
	int			images_per_point;	/* crash images built at each crash point */
	int			point_stride;	/* check every n-th drain (1 = all) */
	CrashCheckFn check;
	void	   *check_arg;
} CrashSimOptions;

typedef struct CrashSimStats
{
	uint64_t	drains;
	uint64_t	crash_points;
	uint64_t	images;
	uint64_t	bad_images;
	const char *first_error;
	uint64_t	first_error_point;
} CrashSimStats;

/*
 * crashsim_start takes the current pool contents as durable and routes the
 * core's persists to the simulator.  core_shmem is the live shared state,
 * restored after each check.
 */
extern void crashsim_start(const CrashSimOptions *opts, void *core_shmem);
extern void crashsim_stop(void);
extern void crashsim_pause(int paused);	/* no crash points while paused */
extern const CrashSimStats *crashsim_stats(void);

#endif							/* CRASHSIM_H */
