/*
 * nvm_engine_bench.c
 *	  Engine-level benchmark of the storage core, without SQL, the way the
 *	  MCSI paper measured: worker threads run transactions directly against
 *	  the core, in MCSI and N2DB mode side by side.
 *
 * Workloads:
 *	 micro	 one snapshot + one single-row update + commit per transaction;
 *			 reports the cost of taking a snapshot and of completing a
 *			 transaction (the commit-status write) as workers grow, and the
 *			 flushes, fences and bytes persisted per committed transaction.
 *	 ycsb-a/b/c  1-5 uniformly random rows per transaction, each read or
 *			 updated (50/50, 95/5, 100/0) under snapshot isolation;
 *			 write-write conflicts abort and retry.
 *
 * Prints a Markdown table (both modes side by side) and, with --csv, a CSV
 * line per run.  Threads beyond the machine's cores oversubscribe it: the
 * numbers then show lock convoys, not parallel speed-up; say so when you
 * quote them.
 */
#include "alloc.h"
#include "core.h"
#include "persist.h"
#include "pool.h"
#include "store.h"
#include "txn.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROW_BYTES 1000

typedef struct Options
{
	const char *pool_path;
	uint64_t	pool_mb;
	double		seconds;
	double		warmup;			/* seconds run before counting starts */
	int			threads[16];
	int			nthreads;
	int			modes[NVM_CC_END];
	int			nmodes;
	const char *workloads[8];
	int			nworkloads;
	uint64_t	rows;
	uint64_t	drain_delay_ns;
	bool		nt_versions;	/* --variant dbxn: rows by non-temporal stores */
	uint32_t	huge_pages;		/* NvmHugePages for the pool mapping */
	const char *csv;
} Options;

typedef struct Result
{
	uint64_t	commits;
	uint64_t	aborts;
	double		latency_ns;		/* sum over commits, retries included */
	double		snapshot_ns;
	uint64_t	snapshots;
	double		complete_ns;
	uint64_t	completes;
	uint64_t	flushes;
	uint64_t	drains;
	uint64_t	bytes;
} Result;

typedef struct Worker
{
	pthread_t	thread;
	int			id;
	const char *workload;
	NvmTable   *table;
	uint64_t   *root_vno;		/* rows: version number of the row's first version */
	uint64_t	rows;
	volatile int *stop;
	volatile int *measuring;
	pthread_barrier_t *barrier;
	Result		r;
} Worker;

static inline double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int
update_percent(const char *workload)
{
	if (strcmp(workload, "ycsb-a") == 0)
		return 50;
	if (strcmp(workload, "ycsb-b") == 0)
		return 5;
	if (strcmp(workload, "ycsb-c") == 0)
		return 0;
	return 100;					/* micro */
}

static void *
worker_main(void *arg)
{
	Worker	   *w = arg;
	NvmTxn		txn;
	NvmSnapshot *snap = malloc(sizeof(NvmSnapshot));
	char		row[ROW_BYTES];
	uint64_t	rng = 0x9e3779b97f4a7c15ULL * (uint64_t) (w->id + 1);
	int			upd = update_percent(w->workload);
	bool		micro = strcmp(w->workload, "micro") == 0;
	NvmPersistStats before;
	int			slot = nvm_slot_acquire((uint32_t) (1000 + w->id));

	if (slot < 0)
	{
		fprintf(stderr, "no free clock slot\n");
		exit(1);
	}
	nvm_txn_init(&txn, slot);
	memset(row, 'x', sizeof(row));
	bool		counting = false;

	pthread_barrier_wait(w->barrier);
	before = nvm_persist_stats;

	while (!*w->stop)
	{
		double		t0;

		if (!counting && *w->measuring)
		{
			/* the warm-up period is over: count from here */
			memset(&w->r, 0, sizeof(w->r));
			before = nvm_persist_stats;
			counting = true;
		}
		t0 = now_ns();
		bool		done = false;

		while (!done && !*w->stop)
		{
			double		s0 = now_ns(),
						c0;
			NvmView		view;
			int			nops = micro ? 1 : 1 + (int) (xorshift(&rng) % 5);
			bool		conflict = false;

			nvm_snapshot_take(snap);
			w->r.snapshot_ns += now_ns() - s0;
			w->r.snapshots++;
			view.kind = NVM_VIEW_SNAPSHOT;
			view.snap = snap;
			view.curcid = 0;
			view.external_visible = NULL;
			for (int op = 0; op < nops && !conflict; op++)
			{
				uint64_t	r = 1 + xorshift(&rng) % w->rows;
				NvmVersion *v;

				view.my_txid = txn.txid;
				view.curcid = (uint32_t) op;
				v = nvm_chain_visible(w->table, r, &view);
				if (v == NULL)
					continue;
				if ((int) (xorshift(&rng) % 100) < upd)
				{
					uint64_t	n;
					NvmConflict cf;
					NvmWriteResult res;

					memcpy(row, v->data, 8);
					row[8] = (char) op;
					res = nvm_record_update(w->table, &txn, 1, (uint32_t) op, v->version_no,
											row, sizeof(row), false, &n, &cf);
					if (res == NVM_WRITE_NO_SPACE)
					{
						fprintf(stderr, "pool full: use a larger --pool-size or fewer seconds\n");
						exit(1);
					}
					if (res != NVM_WRITE_OK)
						conflict = true;
				}
				else
				{
					volatile char sink = v->data[(op * 97) % ROW_BYTES];

					(void) sink;
				}
			}
			c0 = now_ns();
			if (conflict)
			{
				nvm_txn_abort(&txn);
				w->r.aborts++;
			}
			else
			{
				bool		wrote = txn.txid != NVM_INVALID_TXID;

				nvm_txn_commit(&txn);
				if (wrote)
				{
					w->r.complete_ns += now_ns() - c0;
					w->r.completes++;
				}
				done = true;
			}
		}
		if (done)
		{
			w->r.commits++;
			w->r.latency_ns += now_ns() - t0;
		}
	}
	w->r.flushes = nvm_persist_stats.flushes - before.flushes;
	w->r.drains = nvm_persist_stats.drains - before.drains;
	w->r.bytes = nvm_persist_stats.bytes - before.bytes;
	nvm_slot_release(slot);
	free(snap);
	return NULL;
}

static void
parse_list(const char *s, int *out, int *n, int max)
{
	char	   *copy = strdup(s),
			   *tok,
			   *save = NULL;

	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok && *n < max; tok = strtok_r(NULL, ",", &save))
		out[(*n)++] = atoi(tok);
	free(copy);
}

/*
 * run_point creates a fresh pool in the given mode, loads the rows and runs
 * nt workers for the configured time, adding their results into agg.
 */
static void
run_point(const Options *o, int mode, const char *workload, int nt, Result *agg)
{
	NvmPoolOptions po = {0};
	char		err[256];
	void	   *shmem;
	NvmTable	table;
	NvmTableKey key = {1, 1, 1, 0};
	NvmTxn		loader;
	char		row[ROW_BYTES];
	Worker	   *ws = calloc((size_t) nt, sizeof(Worker));
	pthread_barrier_t barrier;
	volatile int stop = 0;
	volatile int measuring = 0;

	unlink(o->pool_path);
	po.path = o->pool_path;
	po.create_size = o->pool_mb << 20;
	po.system_identifier = 1;
	po.cc_mode = (uint32_t) mode;
	po.max_slots = 128;
	po.prefault = true;
	po.huge_pages = o->huge_pages;
	if (nvm_pool_open(&po, err, sizeof(err)) != NVM_POOL_CREATED)
	{
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	shmem = calloc(1, nvm_core_shmem_size());
	nvm_core_startup(shmem);
	nvm_table_create(&key, 0, &table);
	nvm_txn_init(&loader, nvm_slot_acquire(1));
	memset(row, 'r', sizeof(row));
	for (uint64_t r = 0; r < o->rows; r++)
	{
		uint64_t	n;

		memcpy(row, &r, sizeof(r));
		if (nvm_record_insert(&table, &loader, 1, 0, row, sizeof(row), &n) != NVM_WRITE_OK)
		{
			fprintf(stderr, "pool too small for %llu rows\n", (unsigned long long) o->rows);
			exit(1);
		}
		if (r % 1000 == 999)
			nvm_txn_commit(&loader);
	}
	nvm_txn_commit(&loader);
	nvm_slot_release(loader.slot);

	fprintf(stderr, "# %s %s %d thread(s)...\n", nvm_cc_mode_name(mode), workload, nt);
	pthread_barrier_init(&barrier, NULL, (unsigned) nt + 1);
	for (int i = 0; i < nt; i++)
	{
		ws[i].id = i;
		ws[i].workload = workload;
		ws[i].table = &table;
		ws[i].rows = o->rows;
		ws[i].stop = &stop;
		ws[i].measuring = &measuring;
		ws[i].barrier = &barrier;
		pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]);
	}
	pthread_barrier_wait(&barrier);
	usleep((useconds_t) (o->warmup * 1e6));	/* warm-up, not measured */
	measuring = 1;
	usleep((useconds_t) (o->seconds * 1e6));
	stop = 1;
	memset(agg, 0, sizeof(*agg));
	for (int i = 0; i < nt; i++)
	{
		pthread_join(ws[i].thread, NULL);
		agg->commits += ws[i].r.commits;
		agg->aborts += ws[i].r.aborts;
		agg->latency_ns += ws[i].r.latency_ns;
		agg->snapshot_ns += ws[i].r.snapshot_ns;
		agg->snapshots += ws[i].r.snapshots;
		agg->complete_ns += ws[i].r.complete_ns;
		agg->completes += ws[i].r.completes;
		agg->flushes += ws[i].r.flushes;
		agg->drains += ws[i].r.drains;
		agg->bytes += ws[i].r.bytes;
	}
	pthread_barrier_destroy(&barrier);
	free(ws);
	{
		NvmAllocStats st;

		/* what the point used of the pool: how bench/run.sh sizes it */
		nvm_alloc_get_stats(&st);
		fprintf(stderr, "# pool: %.0f MB of %.0f MB in allocated chunks after the point (%llu commits measured)\n",
				(double) (st.chunks_total - st.chunks_free) * (double) st.pool_bytes / (double) st.chunks_total / 1048576.0,
				(double) o->pool_mb, (unsigned long long) agg->commits);
	}
	nvm_pool_close();
	unlink(o->pool_path);
	free(shmem);
}

static void
usage(void)
{
	fprintf(stderr,
			"usage: nvm_engine_bench [--pool PATH] [--pool-size MB] [--seconds S] [--warmup S]\n"
			"                        [--threads 1,2,4,...] [--modes mcsi,n2db,pisces,pomvcc (default mcsi,n2db)]\n"
			"                        [--workloads micro,ycsb-a,ycsb-b,ycsb-c] [--rows N]\n"
			"                        [--drain-delay-ns NS] [--variant standard|dbxn]\n"
			"                        [--huge-pages try|off|on] [--csv FILE]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	Options		o = {0};
	static Result results[NVM_CC_END][8][16];
	FILE	   *csv = NULL;
	char		default_path[128];

	snprintf(default_path, sizeof(default_path), "/dev/shm/nvm_engine_bench_%d", (int) getpid());
	o.pool_path = default_path;
	o.pool_mb = 4096;
	o.seconds = 2;
	o.warmup = 0.2;
	parse_list("1,2,4,8,16,32,64", o.threads, &o.nthreads, 16);
	o.modes[0] = NVM_CC_MCSI;
	o.modes[1] = NVM_CC_N2DB;
	o.nmodes = 2;
	o.workloads[0] = "micro";
	o.nworkloads = 1;
	o.rows = 100000;

	for (int i = 1; i < argc; i++)
	{
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (strcmp(a, "--pool") == 0)
			o.pool_path = v;
		else if (strcmp(a, "--pool-size") == 0)
			o.pool_mb = strtoull(v, NULL, 10);
		else if (strcmp(a, "--seconds") == 0)
			o.seconds = atof(v);
		else if (strcmp(a, "--warmup") == 0)
			o.warmup = atof(v);
		else if (strcmp(a, "--threads") == 0)
			parse_list(v, o.threads, &o.nthreads, 16);
		else if (strcmp(a, "--rows") == 0)
			o.rows = strtoull(v, NULL, 10);
		else if (strcmp(a, "--drain-delay-ns") == 0)
			o.drain_delay_ns = strtoull(v, NULL, 10);
		else if (strcmp(a, "--variant") == 0)
		{
			if (strcmp(v, "standard") != 0 && strcmp(v, "dbxn") != 0)
				usage();
			o.nt_versions = strcmp(v, "dbxn") == 0;
		}
		else if (strcmp(a, "--csv") == 0)
			o.csv = v;
		else if (strcmp(a, "--huge-pages") == 0)
			o.huge_pages = strcmp(v, "off") == 0 ? NVM_HUGE_PAGES_OFF :
				strcmp(v, "on") == 0 ? NVM_HUGE_PAGES_ON : NVM_HUGE_PAGES_TRY;
		else if (strcmp(a, "--modes") == 0)
		{
			o.nmodes = 0;
			for (uint32_t m = NVM_CC_FIRST; m < NVM_CC_END && o.nmodes < NVM_CC_END; m++)
				if (strstr(v, nvm_cc_mode_name(m)))
					o.modes[o.nmodes++] = m;
		}
		else if (strcmp(a, "--workloads") == 0)
		{
			char	   *copy = strdup(v),
					   *save = NULL;

			o.nworkloads = 0;
			for (char *tok = strtok_r(copy, ",", &save); tok && o.nworkloads < 8; tok = strtok_r(NULL, ",", &save))
				o.workloads[o.nworkloads++] = strdup(tok);
		}
		else
			usage();
		i++;
	}
	if (o.csv)
	{
		csv = fopen(o.csv, "a");
		if (!csv)
		{
			perror(o.csv);
			return 1;
		}
	}
	nvm_persist_set_drain_delay_ns(o.drain_delay_ns);
	nvm_persist_set_version_writes(o.nt_versions ? NVM_WRITES_NONTEMPORAL : NVM_WRITES_CACHED);

	/* every point gets a fresh pool (no garbage collection yet); modes alternate per point */
	for (int wl = 0; wl < o.nworkloads; wl++)
	{
		for (int ti = 0; ti < o.nthreads; ti++)
		{
			for (int m = 0; m < o.nmodes; m++)
			{
				int			nt = o.threads[ti];
				Result	   *agg = &results[m][wl][ti];

				run_point(&o, o.modes[m], o.workloads[wl], nt, agg);
				if (csv)
					fprintf(csv, "%s,%s,%d,%.1f,%.1f,%llu,%llu,%.1f,%.1f,%.1f,%.2f,%.2f,%.1f\n",
							nvm_cc_mode_name(o.modes[m]), o.workloads[wl], nt, o.seconds,
							agg->commits / o.seconds,
							(unsigned long long) agg->commits, (unsigned long long) agg->aborts,
							agg->commits ? agg->latency_ns / agg->commits / 1000.0 : 0,
							agg->snapshots ? agg->snapshot_ns / agg->snapshots : 0,
							agg->completes ? agg->complete_ns / agg->completes : 0,
							agg->commits ? (double) agg->flushes / agg->commits : 0,
							agg->commits ? (double) agg->drains / agg->commits : 0,
							agg->commits ? (double) agg->bytes / agg->commits : 0);
			}
		}
	}

	printf("\nEngine-level benchmark: %ld CPU core(s) online, %.1f s per point, %llu rows of %d bytes, pool %s, "
		   "drain delay %llu ns, %s version writes.\nThread counts above the core count oversubscribe the machine.\n\n",
		   sysconf(_SC_NPROCESSORS_ONLN), o.seconds, (unsigned long long) o.rows, ROW_BYTES, o.pool_path,
		   (unsigned long long) o.drain_delay_ns, o.nt_versions ? "non-temporal (dbxn)" : "cached");
	for (int wl = 0; wl < o.nworkloads; wl++)
	{
		printf("### %s\n\n", o.workloads[wl]);
		printf("| threads | mode | tps | vs first mode | abort %% | lat µs | snapshot ns | complete ns | flushes/txn | fences/txn | bytes/txn |\n");
		printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
		for (int ti = 0; ti < o.nthreads; ti++)
		{
			double		first = results[0][wl][ti].commits / o.seconds;

			for (int m = 0; m < o.nmodes; m++)
			{
				Result	   *r = &results[m][wl][ti];
				double		tps = r->commits / o.seconds;
				double		n = r->commits + 1e-9;

				printf("| %d | %s | %.0f | %.2f | %.1f | %.1f | %.0f | %.0f | %.1f | %.1f | %.0f |\n",
					   o.threads[ti], nvm_cc_mode_name(o.modes[m]), tps, first > 0 ? tps / first : 0,
					   100.0 * r->aborts / (r->commits + r->aborts + 1e-9),
					   r->latency_ns / n / 1000.0,
					   r->snapshot_ns / (r->snapshots + 1e-9),
					   r->complete_ns / (r->completes + 1e-9),
					   (double) r->flushes / n, (double) r->drains / n, (double) r->bytes / n);
			}
		}
		printf("\n");
	}
	if (csv)
		fclose(csv);
	return 0;
}
