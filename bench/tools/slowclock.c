/*
 * bench/tools/slowclock.c
 *	  An LD_PRELOAD shim that slows two clocks of a process down by
 *	  SLOWCLOCK_FACTOR: CLOCK_MONOTONIC_COARSE (the core's pruning clock:
 *	  deferred pruning's age, the cached horizon's refresh) and
 *	  gettimeofday() (PostgreSQL's GetCurrentTimestamp: the standby
 *	  feedback samples).  From the first reading in the process on, the
 *	  clock advances 1/SLOWCLOCK_FACTOR as fast as real time.  With
 *	  SLOWCLOCK_TICK_NS instead, neither clock follows real time at all:
 *	  each reading is SLOWCLOCK_TICK_NS later than the one before (each
 *	  clock counts its own readings, from the first real one), so the
 *	  time-driven work is the same in every run, however busy the machine
 *	  is.
 *
 * Under callgrind a backend runs many times slower than natively, so work
 * that is driven by elapsed time (done every 10 ms, or on entries older
 * than 20 ms) happens many times more often per query than in a native
 * run, and lists that hold the last 20 ms of work hold far fewer entries.
 * bench/pointread_callgrind.sh --clock-factor F runs the server with this
 * shim, F being the ratio of the native query rate to the rate under
 * callgrind, so that time-driven work has its native frequency per query;
 * --clock-tick NS makes it deterministic (the core reads the clock about
 * four times per row written, so NS is about a quarter of the native time
 * per row).
 *
 * Build: cc -O2 -shared -fPIC -o slowclock.so slowclock.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static int (*real_cg) (clockid_t, struct timespec *);
static int (*real_gtod) (struct timeval *, void *);
static double factor = 1.0;
static uint64_t tick_ns = 0;
static uint64_t ticks = 0;
static uint64_t ticks_real = 0;
static uint64_t base_mono, base_real;

static void
init(void)
{
	const char *f = getenv("SLOWCLOCK_FACTOR");
	const char *t = getenv("SLOWCLOCK_TICK_NS");

	real_cg = dlsym(RTLD_NEXT, "clock_gettime");
	real_gtod = dlsym(RTLD_NEXT, "gettimeofday");
	if (f)
		factor = atof(f);
	if (t)
		tick_ns = strtoull(t, NULL, 10);
}

static uint64_t
slow(uint64_t now, uint64_t *base)
{
	if (*base == 0)
		*base = now;
	return *base + (uint64_t) ((now - *base) / factor);
}

int
clock_gettime(clockid_t id, struct timespec *ts)
{
	int			r;
	uint64_t	ns;

	if (!real_cg)
		init();
	r = real_cg(id, ts);
	if (r != 0 || id != CLOCK_MONOTONIC_COARSE)
		return r;
	ns = (uint64_t) ts->tv_sec * 1000000000u + ts->tv_nsec;
	if (tick_ns != 0)
	{
		if (base_mono == 0)
			base_mono = ns;
		ns = base_mono + ++ticks * tick_ns;
	}
	else
		ns = slow(ns, &base_mono);
	ts->tv_sec = ns / 1000000000u;
	ts->tv_nsec = ns % 1000000000u;
	return 0;
}

int
gettimeofday(struct timeval *tv, void *tz)
{
	int			r;
	uint64_t	us;

	if (!real_gtod)
		init();
	r = real_gtod(tv, tz);
	if (r != 0)
		return r;
	us = (uint64_t) tv->tv_sec * 1000000u + tv->tv_usec;
	if (tick_ns != 0)
	{
		if (base_real == 0)
			base_real = us;
		us = base_real + ++ticks_real * tick_ns / 1000;
	}
	else
		us = slow(us, &base_real);
	tv->tv_sec = us / 1000000u;
	tv->tv_usec = us % 1000000u;
	return 0;
}
