--
-- gc: garbage collection of old versions, VACUUM of nvm tables, and the
-- statistics views nvm_tables and nvm_pool
--
CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE EXTENSION IF NOT EXISTS amcheck;

-- VACUUM's own work first: updates do not prune in this part
SET nvm.prune_on_update = off;
CREATE TABLE g (id int PRIMARY KEY, v text) USING nvm;
INSERT INTO g SELECT i, 'v0' FROM generate_series(1, 100) i;
UPDATE g SET v = 'v1';
UPDATE g SET v = 'v2';
UPDATE g SET v = 'v3';
SELECT live_rows, records, versions, longest_chain, avg_chain,
       reclaimable_versions, dead_rows, version_numbers
  FROM nvm_table_stats('g');
SELECT reclaimable_bytes >= 300 * 30 AS reclaimable_bytes_counted FROM nvm_table_stats('g');
SELECT versions_collected AS collected0 FROM nvm_pool \gset
VACUUM g;
SELECT live_rows, versions, longest_chain, reclaimable_versions, index_redirects,
       free_version_numbers
  FROM nvm_table_stats('g');
SELECT versions_collected - :collected0 AS collected FROM nvm_pool;

-- an index scan still finds every row: the index roots were collected and
-- now redirect to their records
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM g WHERE id BETWEEN 1 AND 100;
SELECT v FROM g WHERE id = 42;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT bt_index_check('g_pkey', true);

-- new versions take the numbers collection gave back
SELECT version_numbers AS vn0 FROM nvm_table_stats('g') \gset
UPDATE g SET v = 'v4';
SELECT version_numbers - :vn0 AS new_numbers, free_version_numbers FROM nvm_table_stats('g');

-- a key update starts new index runs; VACUUM removes the old index entries
UPDATE g SET id = id + 1000;
SELECT count(*) AS index_entries_before FROM bt_page_items('g_pkey', 1);
VACUUM g;
SELECT count(*) AS index_entries_after FROM bt_page_items('g_pkey', 1);
SELECT live_rows, versions, longest_chain, index_redirects FROM nvm_table_stats('g');
SELECT bt_index_check('g_pkey', true);

-- deleted rows: VACUUM removes their index entries and their records, and
-- inserts reuse the record and version numbers
DELETE FROM g WHERE id > 1050;
SELECT live_rows, dead_rows FROM nvm_table_stats('g');
VACUUM g;
SELECT live_rows, records, dead_rows, removed_rows_waiting, versions FROM nvm_table_stats('g');
SELECT count(*) AS index_entries FROM bt_page_items('g_pkey', 1);
SELECT version_numbers AS vn1 FROM nvm_table_stats('g') \gset
INSERT INTO g SELECT i, 'new' FROM generate_series(1, 50) i;
SELECT live_rows, records, version_numbers - :vn1 AS new_numbers FROM nvm_table_stats('g');
SELECT count(*), count(*) FILTER (WHERE v = 'new') AS new_rows FROM g;
SELECT bt_index_check('g_pkey', true);

-- rolled-back inserts: VACUUM removes their index entries and their
-- records and gives their space and numbers back, as for deleted rows (an
-- own update of a new row rolls back with it)
SELECT used_bytes AS used_rb0 FROM nvm_pool \gset
SELECT version_numbers - free_version_numbers AS in_use_rb0 FROM nvm_table_stats('g') \gset
BEGIN;
INSERT INTO g SELECT i, repeat('r', 500) FROM generate_series(5001, 9000) i;
UPDATE g SET v = 'rolled back' WHERE id BETWEEN 5001 AND 5100;
ROLLBACK;
-- every version of the rolled-back rows is reclaimable (4,000 inserts, 100 own updates)
SELECT live_rows, records, dead_rows, reclaimable_versions FROM nvm_table_stats('g');
SELECT used_bytes - :used_rb0 >= 4000 * 500 AS space_taken FROM nvm_pool;
VACUUM g;
SELECT live_rows, records, versions, version_numbers - free_version_numbers - :in_use_rb0 AS numbers_kept
  FROM nvm_table_stats('g');
SELECT used_bytes - :used_rb0 < 4000 * 50 AS space_given_back FROM nvm_pool;
-- the index entries left, as VACUUM counted them
SELECT reltuples AS index_entries FROM pg_class WHERE relname = 'g_pkey';
SELECT bt_index_check('g_pkey', true);
-- the keys are free again, and new rows take the numbers given back
SELECT version_numbers AS vn_rb1 FROM nvm_table_stats('g') \gset
INSERT INTO g SELECT i, 'again' FROM generate_series(5001, 5010) i;
SELECT version_numbers - :vn_rb1 AS new_numbers FROM nvm_table_stats('g');
SET enable_seqscan = off;
SELECT count(*) FROM g WHERE id BETWEEN 5001 AND 9000;
RESET enable_seqscan;
DELETE FROM g WHERE id > 5000;

-- updates prune their own rows (the horizon they use is at most 10 ms old)
SET nvm.prune_on_update = on;
UPDATE g SET v = 'p1';
SELECT pg_sleep(0.05);
UPDATE g SET v = 'p2';
SELECT longest_chain FROM nvm_table_stats('g');

-- an update prunes its own row's chain at once, also the versions that
-- earlier updates (made with pruning off) left behind
SET nvm.prune_on_update = off;
CREATE TABLE gp (id int PRIMARY KEY, v text) USING nvm;
INSERT INTO gp VALUES (1, 'a');
UPDATE gp SET v = 'b';
UPDATE gp SET v = 'c';
UPDATE gp SET v = 'd';
SELECT longest_chain FROM nvm_table_stats('gp');
SET nvm.prune_on_update = on;
SELECT pg_sleep(0.05);
UPDATE gp SET v = 'e';
SELECT longest_chain FROM nvm_table_stats('gp');
DROP TABLE gp;

-- VACUUM VERBOSE reports what it did
CREATE TABLE gv (id int, v text) USING nvm;
INSERT INTO gv SELECT i, 'a' FROM generate_series(1, 10) i;
SET nvm.prune_on_update = off;
UPDATE gv SET v = 'b';
DELETE FROM gv WHERE id > 5;
VACUUM (VERBOSE, PROCESS_TOAST false) gv;
SELECT live_rows, versions FROM nvm_table_stats('gv');
RESET nvm.prune_on_update;

-- TRUNCATE gives the space back when it commits; a rollback keeps the rows
SELECT used_bytes AS used0 FROM nvm_pool \gset
BEGIN;
TRUNCATE g;
ROLLBACK;
SELECT count(*) FROM g;
INSERT INTO gv SELECT i, repeat('x', 1000) FROM generate_series(1, 2000) i;
SELECT used_bytes AS used1 FROM nvm_pool \gset
TRUNCATE gv;
SELECT :used1 - used_bytes >= 2000 * 1000 AS truncate_gave_space_back FROM nvm_pool;

-- the views
SELECT relation, live_rows FROM nvm_tables WHERE relation::text IN ('g', 'gv') ORDER BY 1;
SELECT records >= 100 AS records_counted, versions >= 100 AS versions_counted,
       reclaimable_bytes >= 0 AS reclaimable_counted
  FROM nvm_pool;

-- statistics of a heap table are refused
CREATE TABLE gh (id int) USING heap;
SELECT * FROM nvm_table_stats('gh');

DROP TABLE g, gv, gh;
