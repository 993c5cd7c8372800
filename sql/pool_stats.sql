--
-- pool_stats: nvm_pool_stats() reports on the pool; only booleans and
-- differences are printed, since sizes vary between runs
--
-- the result columns, in order
SELECT n, name FROM pg_proc p,
  unnest(p.proargnames, p.proargmodes::text[]) WITH ORDINALITY AS a(name, mode, n)
  WHERE p.proname = 'nvm_pool_stats' ORDER BY n;
-- one row
SELECT count(*) FROM nvm_pool_stats();
SELECT pool_path = current_setting('nvm.pool_path') AS path_is_the_setting,
       pool_size >= 32 * 1024 * 1024 AS size_at_least_minimum,
       free_bytes > 0 AS some_free,
       used_bytes + free_bytes <= pool_size AS used_plus_free_fit,
       tables >= 0 AS tables_counted,
       concurrency_control = current_setting('nvm.concurrency_control') AS mode_is_the_setting,
       state, state_detail
  FROM nvm_pool_stats();
-- the pool may grow up to max_size; segments counts its growths
SELECT max_size >= pool_size AS max_at_least_size, segments >= 0 AS segments_counted
  FROM nvm_pool_stats();
-- the suite's pool is in /dev/shm: volatile storage, found on tmpfs
SELECT storage, storage_detail FROM nvm_pool_stats();

-- a new table is counted, and its rows take space
SELECT used_bytes AS used0, free_bytes AS free0, tables AS tables0 FROM nvm_pool_stats() \gset
CREATE TABLE ps (id int, v text) USING nvm;
SELECT tables - :tables0 AS new_tables FROM nvm_pool_stats();
INSERT INTO ps SELECT g, repeat('x', 1000) FROM generate_series(1, 5000) g;
SELECT used_bytes > 0 AS some_used,
       used_bytes - :used0 >= 5000 * 1000 AS used_grew_by_the_rows,
       :free0 - free_bytes >= 5000 * 1000 AS free_shrank_by_the_rows
  FROM nvm_pool_stats();
-- a heap table takes no pool space
SELECT used_bytes AS used1 FROM nvm_pool_stats() \gset
CREATE TABLE ps_heap (id int, v text) USING heap;
INSERT INTO ps_heap SELECT g, repeat('x', 1000) FROM generate_series(1, 5000) g;
SELECT used_bytes = :used1 AS heap_uses_no_pool_space,
       tables - :tables0 AS new_tables
  FROM nvm_pool_stats();

-- a rolled-back CREATE TABLE leaves the count as it was
BEGIN;
CREATE TABLE ps_gone (id int) USING nvm;
INSERT INTO ps_gone SELECT generate_series(1, 1000);
ROLLBACK;
SELECT tables - :tables0 AS new_tables FROM nvm_pool_stats();
-- a rolled-back DROP keeps the table, a committed one gives its space back
BEGIN;
DROP TABLE ps;
ROLLBACK;
SELECT tables - :tables0 AS new_tables, count(*) AS rows FROM nvm_pool_stats(), ps GROUP BY tables;
SELECT used_bytes AS used2 FROM nvm_pool_stats() \gset
DROP TABLE ps;
SELECT tables - :tables0 AS new_tables,
       :used2 - used_bytes >= 5000 * 1000 AS space_given_back
  FROM nvm_pool_stats();

DROP TABLE ps_heap;
