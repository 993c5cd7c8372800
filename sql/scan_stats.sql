--
-- scan_stats: the statistics of scans of nvm tables are counted where heap
-- counts them (pg_stat_*_tables, pg_statio_*_tables); a virtual block of
-- 291 version numbers stands for a page, and every visit is a buffer hit
--
CREATE TABLE sst (id int PRIMARY KEY, v int) USING nvm;
INSERT INTO sst SELECT i, i FROM generate_series(1, 1000) i;	-- 4 blocks
SET max_parallel_workers_per_gather = 0;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
SET enable_tidscan = off;

CREATE FUNCTION sst_counts(OUT seq_scan bigint, OUT seq_tup_read bigint,
                           OUT idx_scan bigint, OUT idx_tup_fetch bigint,
                           OUT tuples_fetched bigint,
                           OUT blks_read bigint, OUT blks_hit bigint)
LANGUAGE sql AS $$
  SELECT pg_stat_get_numscans('sst'::regclass), pg_stat_get_tuples_returned('sst'::regclass),
         pg_stat_get_numscans('sst_pkey'::regclass), pg_stat_get_tuples_fetched('sst_pkey'::regclass),
         pg_stat_get_tuples_fetched('sst'::regclass),
         pg_stat_get_blocks_fetched('sst'::regclass) - pg_stat_get_blocks_hit('sst'::regclass),
         pg_stat_get_blocks_hit('sst'::regclass)
$$;

SELECT pg_stat_force_next_flush();
SELECT * FROM sst_counts() \gset b_

-- a sequential scan: one scan, every row, every block
SELECT count(*) FROM sst;
SELECT pg_stat_force_next_flush();
SELECT seq_scan - :b_seq_scan AS seq_scan, seq_tup_read - :b_seq_tup_read AS seq_tup_read,
       blks_read - :b_blks_read AS blks_read, blks_hit - :b_blks_hit AS blks_hit
  FROM sst_counts();
SELECT * FROM sst_counts() \gset b_

-- an index scan: the index counts the scan and the row fetched; the table
-- one block
RESET enable_indexscan;
SELECT v FROM sst WHERE id = 500;
SELECT pg_stat_force_next_flush();
SELECT seq_scan - :b_seq_scan AS seq_scan, idx_scan - :b_idx_scan AS idx_scan,
       idx_tup_fetch - :b_idx_tup_fetch AS idx_tup_fetch,
       tuples_fetched - :b_tuples_fetched AS table_tuples_fetched,
       blks_hit - :b_blks_hit AS blks_hit
  FROM sst_counts();
SELECT t.idx_tup_fetch - :b_idx_tup_fetch - :b_tuples_fetched AS view_idx_tup_fetch
  FROM pg_stat_user_tables t WHERE relname = 'sst';
SELECT * FROM sst_counts() \gset b_
SET enable_indexscan = off;

-- a bitmap scan: the table counts every row fetched and the blocks of the
-- bitmap (versions 1..291 and 292..300)
RESET enable_bitmapscan;
SELECT count(*) FROM sst WHERE id <= 300;
SELECT pg_stat_force_next_flush();
SELECT seq_scan - :b_seq_scan AS seq_scan, tuples_fetched - :b_tuples_fetched AS tuples_fetched,
       blks_hit - :b_blks_hit AS blks_hit
  FROM sst_counts();
SELECT * FROM sst_counts() \gset b_
SET enable_bitmapscan = off;

-- a TID scan reads one block
RESET enable_tidscan;
SELECT id FROM sst WHERE ctid = '(1,1)';
SELECT pg_stat_force_next_flush();
SELECT seq_scan - :b_seq_scan AS seq_scan, blks_hit - :b_blks_hit AS blks_hit FROM sst_counts();
SELECT * FROM sst_counts() \gset b_

-- a parallel sequential scan: every row and every block once, whatever the
-- number of participants (each of which counts a scan)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT count(*) FROM sst;
SELECT pg_stat_force_next_flush();
SELECT seq_scan - :b_seq_scan >= 1 AS counted_scans, seq_tup_read - :b_seq_tup_read AS seq_tup_read,
       blks_hit - :b_blks_hit AS blks_hit
  FROM sst_counts();
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- the views agree: nothing is read from disk
SELECT heap_blks_read, heap_blks_hit > 0 AS heap_blks_hit FROM pg_statio_user_tables WHERE relname = 'sst';
SELECT seq_scan > 0 AS seq_scan, seq_tup_read >= 2000 AS seq_tup_read, idx_scan > 0 AS idx_scan
  FROM pg_stat_user_tables WHERE relname = 'sst';

RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;
RESET enable_tidscan;
DROP FUNCTION sst_counts();
DROP TABLE sst;
