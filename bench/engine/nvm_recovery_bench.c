/*
 * nvm_recovery_bench.c
 *	  Measures how long the core takes to recover a pool after a crash, as a
 *	  function of the pool's size and fill and of the work in flight.
 *
 * For each pool size: create the pool, fill it to the requested fraction
 * with 1 KB rows in committed transactions, leave a number of transactions
 * in flight (one per clock slot, each with some uncommitted rows), then
 * "crash" (drop all process state without a clean shutdown), reopen the
 * pool and time the open and the start-up (allocator rebuild + MCSI
 * recovery).  It also times what start-up defers: reading every chunk's
 * block headers (done lazily, chunk by chunk, as the allocator needs them).
 * Every run checks that the committed rows are all visible afterwards and
 * the in-flight ones are not.
 *
 * Usage: nvm_recovery_bench [sizes-MB [fill [in-flight [initial-MB]]]],
 * e.g. `nvm_recovery_bench 1024,8192 0.8 16`.  With initial-MB, each pool is
 * created at that size and grows (by 128 MB segments) to its size while it
 * is filled, so start-up also walks its growth segments.
 */
#include "alloc.h"
#include "core.h"
#include "persist.h"
#include "pool.h"
#include "store.h"
#include "txn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int
main(int argc, char **argv)
{
	const char *sizes = argc > 1 ? argv[1] : "1024,8192";
	double		fill = argc > 2 ? atof(argv[2]) : 0.8;
	int			inflight = argc > 3 ? atoi(argv[3]) : 16;
	uint64_t	initial_mb = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
	char		path[128];
	char	   *copy = strdup(sizes),
			   *save = NULL;

	snprintf(path, sizeof(path), "/dev/shm/nvm_recovery_bench_%d", (int) getpid());
	printf("| pool | growth segments | data rows | rows in flight | open ms | start-up ms (rebuild + recovery) | deferred header reading ms | check |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
	{
		uint64_t	mb = strtoull(tok, NULL, 10);
		NvmPoolOptions o = {0};
		char		err[256];
		void	   *shmem;
		NvmTable	t;
		NvmTableKey key = {1, 1, 1, 0};
		NvmTxn		txn;
		char		row[1000];
		uint64_t	rows = 0,
					n,
					target;
		NvmAllocStats st;
		double		t0,
					t1,
					t2,
					t3;
		uint64_t	visible = 0,
					inflight_rows = 0;

		unlink(path);
		o.path = path;
		o.create_size = mb << 20;
		if (initial_mb > 0 && initial_mb < mb)
		{
			o.create_size = initial_mb << 20;
			o.max_size = mb << 20;
			o.grow_step = UINT64_C(128) << 20;
		}
		o.system_identifier = 1;
		o.cc_mode = NVM_CC_MCSI;
		o.max_slots = NVM_MAX_SLOTS;
		if (nvm_pool_open(&o, err, sizeof(err)) != NVM_POOL_CREATED)
		{
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		shmem = calloc(1, nvm_core_shmem_size());
		nvm_core_startup(shmem);
		nvm_table_create(&key, 0, &t);
		nvm_txn_init(&txn, nvm_slot_acquire(1));
		memset(row, 'f', sizeof(row));
		nvm_alloc_get_stats(&st);
		/* a pool that grows: the fill of the size it grows to */
		target = (uint64_t) (fill * (double) st.pool_bytes * (double) (mb << 20) / (double) o.create_size);
		fprintf(stderr, "# filling %llu MB to %.0f%%...\n", (unsigned long long) mb, fill * 100);
		for (;;)
		{
			if (nvm_record_insert(&t, &txn, 1, 0, row, sizeof(row), &n) != NVM_WRITE_OK)
				break;
			rows++;
			if (rows % 1000 == 0)
			{
				nvm_txn_commit(&txn);
				nvm_alloc_get_stats(&st);
				if (st.bytes_allocated >= target)
					break;
			}
		}
		nvm_txn_commit(&txn);
		/* transactions in flight at the crash, one per slot */
		for (int i = 0; i < inflight; i++)
		{
			NvmTxn		x;

			nvm_txn_init(&x, nvm_slot_acquire((uint32_t) (100 + i)));
			for (int k = 0; k < 100; k++)
			{
				memset(row, 'i', 8);
				nvm_record_insert(&t, &x, 1, 0, row, sizeof(row), &n);
				inflight_rows++;
			}
		}

		/* crash: no clean shutdown, all process state gone */
		nvm_pool_close();
		free(shmem);
		t0 = now_ms();
		if (nvm_pool_open(&o, err, sizeof(err)) != NVM_POOL_OK)
		{
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		t1 = now_ms();
		shmem = calloc(1, nvm_core_shmem_size());
		nvm_core_startup(shmem);
		t2 = now_ms();
		nvm_alloc_scan_all();
		t3 = now_ms();

		nvm_table_open(&key, &t);
		{
			static NvmSnapshot snap;
			NvmView		v = {NVM_VIEW_SNAPSHOT, &snap, 0, 0, NULL, NULL, NULL};

			nvm_snapshot_take(&snap);
			for (uint64_t r = 1; r < nvm_table_record_limit(&t); r++)
				if (nvm_chain_visible(&t, r, &v))
					visible++;
		}
		nvm_alloc_get_stats(&st);
		printf("| %llu MB | %llu | %llu | %llu (%d transactions) | %.1f | %.1f | %.1f | %s |\n",
			   (unsigned long long) mb, (unsigned long long) st.segments,
			   (unsigned long long) rows, (unsigned long long) inflight_rows,
			   inflight, t1 - t0, t2 - t1, t3 - t2,
			   visible == rows ? "committed rows all there, in-flight rows gone" : "MISMATCH");
		fflush(stdout);
		nvm_pool_close();
		free(shmem);
		unlink(path);
		if (visible != rows)
			return 1;
	}
	free(copy);
	return 0;
}
