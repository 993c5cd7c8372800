--
-- persistence: temporary and unlogged nvm tables, ALTER TABLE ... SET
-- LOGGED / UNLOGGED and SET TABLESPACE (rows and TIDs kept, indexes
-- unchanged), and REFRESH MATERIALIZED VIEW CONCURRENTLY of an nvm
-- materialized view (its work table is a temporary nvm table).  What a
-- crash does to temporary and unlogged tables is in regress/t/014_persistence.pl.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;
-- waits until the pool holds n tables: a session's temporary tables are
-- dropped when its backend exits, shortly after its client disconnected
CREATE FUNCTION pe_wait_pool_tables(n int) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. 1200 LOOP
    IF (SELECT tables FROM nvm_pool) = n THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.05);
  END LOOP;
  RETURN false;
END $$;
-- access method and persistence of a relation
CREATE FUNCTION pe_rel(r regclass) RETURNS text LANGUAGE sql AS $$
  SELECT a.amname || ' ' || c.relpersistence::text
    FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = r $$;
-- does the relation have an init fork, and how big is it
CREATE FUNCTION pe_init_fork(r regclass) RETURNS bigint LANGUAGE sql AS $$
  SELECT (pg_stat_file(pg_relation_filepath(r) || '_init', true)).size $$;
SELECT tables AS tables0 FROM nvm_pool \gset

--
-- temporary nvm tables
--
CREATE TEMP TABLE pe_temp (id int PRIMARY KEY, v text) USING nvm;
SELECT pe_rel('pe_temp');
SELECT tables - :tables0 AS new_pool_tables FROM nvm_pool;
INSERT INTO pe_temp SELECT g, 'v' || g FROM generate_series(1, 1000) g;
UPDATE pe_temp SET v = v || '+' WHERE id % 10 = 0;
UPDATE pe_temp SET id = id + 10000 WHERE id % 100 = 1;
DELETE FROM pe_temp WHERE id % 7 = 0;
SELECT count(*), sum(id), count(*) FILTER (WHERE v LIKE '%+') AS updated FROM pe_temp;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM pe_temp WHERE id = 10;
SELECT * FROM pe_temp WHERE id IN (1, 7, 10, 101, 1000, 10101) ORDER BY id;
SELECT count(*), sum(id) FROM pe_temp WHERE id > 0;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT bt_index_check('pe_temp_pkey', true);
SELECT live_rows FROM nvm_tables WHERE relation = 'pe_temp'::regclass;
-- rolled back: a transaction, and a subtransaction
BEGIN;
INSERT INTO pe_temp VALUES (5000, 'rolled back');
SAVEPOINT s;
DELETE FROM pe_temp;
ROLLBACK TO s;
SELECT count(*) FROM pe_temp;
ROLLBACK;
SELECT count(*) FROM pe_temp WHERE id = 5000;
-- TRUNCATE
TRUNCATE pe_temp;
INSERT INTO pe_temp VALUES (1, 'after truncate');
SELECT * FROM pe_temp;
-- ON COMMIT DELETE ROWS and ON COMMIT DROP
CREATE TEMP TABLE pe_temp_rows (id int PRIMARY KEY) USING nvm ON COMMIT DELETE ROWS;
BEGIN;
INSERT INTO pe_temp_rows SELECT generate_series(1, 100);
SELECT count(*) FROM pe_temp_rows;
COMMIT;
SELECT count(*) FROM pe_temp_rows;
INSERT INTO pe_temp_rows VALUES (1);  -- its own transaction, emptied at commit
SELECT count(*) FROM pe_temp_rows;
BEGIN;
CREATE TEMP TABLE pe_temp_drop (id int) USING nvm ON COMMIT DROP;
INSERT INTO pe_temp_drop VALUES (1);
SELECT pe_rel('pe_temp_drop');
COMMIT;
SELECT count(*) FROM pg_class WHERE relname = 'pe_temp_drop';
-- with nvm as the default, a temporary table created without USING is heap
SET default_table_access_method = nvm;
CREATE TEMP TABLE pe_temp_heap (id int);
SELECT pe_rel('pe_temp_heap');
CREATE TEMP TABLE pe_temp_as USING nvm AS SELECT g AS id FROM generate_series(1, 10) g;
SELECT pe_rel('pe_temp_as'), count(*) FROM pe_temp_as;
RESET default_table_access_method;
-- pe_temp, pe_temp_rows and pe_temp_as are in the pool ...
SELECT tables - :tables0 AS new_pool_tables FROM nvm_pool;
SELECT relation::text, live_rows FROM nvm_tables
  WHERE relation::text LIKE 'pe_temp%' ORDER BY 1;
-- ... until the session ends
\c -
SELECT pe_wait_pool_tables(:tables0) AS temp_tables_dropped_at_session_end;
SELECT count(*) FROM pg_class WHERE relname LIKE 'pe_temp%';

--
-- unlogged nvm tables
--
CREATE UNLOGGED TABLE pe_unlogged (id int PRIMARY KEY, v text) USING nvm;
SELECT pe_rel('pe_unlogged');
-- an empty init fork, as heap's: PostgreSQL resets the table from it after a crash
SELECT pe_init_fork('pe_unlogged') AS init_fork_size;
INSERT INTO pe_unlogged SELECT g, 'u' || g FROM generate_series(1, 500) g;
UPDATE pe_unlogged SET v = v || '+' WHERE id % 5 = 0;
DELETE FROM pe_unlogged WHERE id % 11 = 0;
SELECT count(*), sum(id) FROM pe_unlogged;
SELECT count(*), sum(id) AS sum_u FROM pe_unlogged \gset
-- SET LOGGED and SET UNLOGGED rewrite the table and keep its rows
ALTER TABLE pe_unlogged SET LOGGED;
SELECT pe_rel('pe_unlogged'), pe_init_fork('pe_unlogged') AS init_fork_size;
SELECT count(*), sum(id) = :sum_u AS same_rows FROM pe_unlogged;
ALTER TABLE pe_unlogged SET UNLOGGED;
SELECT pe_rel('pe_unlogged'), pe_init_fork('pe_unlogged') AS init_fork_size;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(id) = :sum_u AS same_rows FROM pe_unlogged WHERE id > 0;
SELECT * FROM pe_unlogged WHERE id IN (1, 5, 11, 500) ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT bt_index_check('pe_unlogged_pkey', true);
-- a permanent table made unlogged, and a rolled-back SET LOGGED
CREATE TABLE pe_perm (id int PRIMARY KEY) USING nvm;
INSERT INTO pe_perm SELECT generate_series(1, 100);
ALTER TABLE pe_perm SET UNLOGGED;
SELECT pe_rel('pe_perm'), count(*), sum(id) FROM pe_perm;
BEGIN;
ALTER TABLE pe_perm SET LOGGED;
INSERT INTO pe_perm VALUES (101);
ROLLBACK;
SELECT pe_rel('pe_perm'), count(*), sum(id) FROM pe_perm;
-- with nvm as the default, an unlogged table created without USING is heap
SET default_table_access_method = nvm;
CREATE UNLOGGED TABLE pe_unlogged_heap (id int);
SELECT pe_rel('pe_unlogged_heap');
RESET default_table_access_method;
DROP TABLE pe_unlogged_heap, pe_perm;
-- the old storage of every rewrite is gone: pe_unlogged only
SELECT tables - :tables0 AS new_pool_tables FROM nvm_pool;

--
-- ALTER TABLE ... SET TABLESPACE
--
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE regress_nvm_ts LOCATION '';
RESET allow_in_place_tablespaces;
CREATE TABLE pe_ts (id int PRIMARY KEY, v int NOT NULL, s text) USING nvm;
CREATE INDEX pe_ts_v ON pe_ts (v);
INSERT INTO pe_ts SELECT g, g, md5(g::text) FROM generate_series(1, 3000) g;
-- chains, index runs, deleted rows, and numbers reused after VACUUM
UPDATE pe_ts SET s = s || '+' WHERE id % 3 = 0;
UPDATE pe_ts SET v = v + 100000 WHERE id % 5 = 0;
DELETE FROM pe_ts WHERE id % 13 = 0;
VACUUM pe_ts;
INSERT INTO pe_ts SELECT g, g, 'reused' FROM generate_series(5001, 5100) g;
UPDATE pe_ts SET s = s || '#' WHERE id % 17 = 0;
-- the rows with their TIDs, by a sequential scan
CREATE FUNCTION pe_ts_digest() RETURNS text LANGUAGE sql AS $$
  SELECT count(*) || ':' || md5(string_agg(ctid::text || ':' || id || ':' || v || ':' || s,
                                           ',' ORDER BY id)) FROM pe_ts $$;
-- and through each index
CREATE FUNCTION pe_ts_index_digests() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  a text;
  b text;
BEGIN
  SET LOCAL enable_seqscan = off;
  SET LOCAL enable_bitmapscan = off;
  SELECT count(*) || ':' || md5(string_agg(ctid::text || ':' || id || ':' || v || ':' || s,
                                           ',' ORDER BY id))
    INTO a FROM pe_ts WHERE id > 0;
  SELECT count(*) || ':' || md5(string_agg(ctid::text || ':' || id || ':' || v || ':' || s,
                                           ',' ORDER BY id))
    INTO b FROM pe_ts WHERE v > 0;
  RETURN a || ' ' || b;
END $$;
SELECT pe_ts_digest() AS digest0 \gset
SELECT pe_ts_index_digests() = :'digest0' || ' ' || :'digest0' AS indexes_agree;
SELECT tables AS tables1 FROM nvm_pool \gset
SELECT pg_relation_filenode('pe_ts') AS filenode0 \gset
SELECT pg_relation_size('pe_ts') AS size0 \gset
ALTER TABLE pe_ts SET TABLESPACE regress_nvm_ts;
SELECT pg_relation_size('pe_ts') = :size0 AS same_size;
SELECT coalesce(t.spcname, 'pg_default') AS spcname
  FROM pg_class c LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace
  WHERE c.relname = 'pe_ts';
SELECT pg_relation_filenode('pe_ts') <> :filenode0 AS new_filenode;
-- every row keeps its TID: the indexes (not rebuilt) still find every row
SELECT pe_ts_digest() = :'digest0' AS same_rows_and_tids;
SELECT pe_ts_index_digests() = :'digest0' || ' ' || :'digest0' AS indexes_agree;
SELECT bt_index_check('pe_ts_pkey', true), bt_index_check('pe_ts_v', true);
SELECT tables - :tables1 AS new_pool_tables FROM nvm_pool;
-- writes after the move; deleted and updated rows go away with VACUUM
INSERT INTO pe_ts SELECT g, g, 'moved' FROM generate_series(6001, 6100) g;
UPDATE pe_ts SET v = v + 1 WHERE id % 10 = 1;
DELETE FROM pe_ts WHERE id % 19 = 0;
VACUUM pe_ts;
SELECT pe_ts_digest() AS digest1 \gset
SELECT pe_ts_index_digests() = :'digest1' || ' ' || :'digest1' AS indexes_agree;
SELECT bt_index_check('pe_ts_pkey', true), bt_index_check('pe_ts_v', true);
-- a rolled-back SET TABLESPACE leaves table and pool as they were
BEGIN;
ALTER TABLE pe_ts SET TABLESPACE pg_default;
INSERT INTO pe_ts VALUES (9000, 9000, 'rolled back');
SELECT count(*) FROM pe_ts WHERE id = 9000;
ROLLBACK;
SELECT coalesce(t.spcname, 'pg_default') AS spcname
  FROM pg_class c LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace
  WHERE c.relname = 'pe_ts';
SELECT pe_ts_digest() = :'digest1' AS same_rows_and_tids;
SELECT pe_ts_index_digests() = :'digest1' || ' ' || :'digest1' AS indexes_agree;
SELECT tables - :tables1 AS new_pool_tables FROM nvm_pool;
-- moved by a transaction that wrote the table before and after the move
BEGIN;
INSERT INTO pe_ts VALUES (9001, 9001, 'before the move');
UPDATE pe_ts SET s = 'updated before the move' WHERE id = 2;
DELETE FROM pe_ts WHERE id = 4;
ALTER TABLE pe_ts SET TABLESPACE pg_default;
UPDATE pe_ts SET s = 'updated after the move' WHERE id = 9001;
SELECT id, s FROM pe_ts WHERE id IN (2, 4, 9001) ORDER BY id;
COMMIT;
SELECT id, s FROM pe_ts WHERE id IN (2, 4, 9001) ORDER BY id;
-- ... and one whose move is rolled back to a savepoint
BEGIN;
INSERT INTO pe_ts VALUES (9002, 9002, 'kept');
SAVEPOINT a;
ALTER TABLE pe_ts SET TABLESPACE regress_nvm_ts;
INSERT INTO pe_ts VALUES (9003, 9003, 'rolled back');
ROLLBACK TO a;
INSERT INTO pe_ts VALUES (9004, 9004, 'kept');
COMMIT;
SELECT coalesce(t.spcname, 'pg_default') AS spcname
  FROM pg_class c LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace
  WHERE c.relname = 'pe_ts';
SELECT id, s FROM pe_ts WHERE id >= 9000 ORDER BY id;
SELECT pe_ts_digest() AS digest2 \gset
SELECT pe_ts_index_digests() = :'digest2' || ' ' || :'digest2' AS indexes_agree;
SELECT bt_index_check('pe_ts_pkey', true), bt_index_check('pe_ts_v', true);
SELECT tables - :tables1 AS new_pool_tables FROM nvm_pool;
-- ALTER TABLE ALL IN TABLESPACE, an unlogged and a temporary table
ALTER TABLE pe_ts SET TABLESPACE regress_nvm_ts;
ALTER TABLE pe_unlogged SET TABLESPACE regress_nvm_ts;
SELECT pe_rel('pe_unlogged'), pe_init_fork('pe_unlogged') AS init_fork_size;
SELECT count(*), sum(id) = :sum_u AS same_rows FROM pe_unlogged;
ALTER TABLE ALL IN TABLESPACE regress_nvm_ts SET TABLESPACE pg_default;
SELECT c.relname, c.reltablespace = 0 AS in_default FROM pg_class c
  WHERE c.relname IN ('pe_ts', 'pe_unlogged') ORDER BY 1;
SELECT pe_ts_digest() = :'digest2' AS same_rows_and_tids;
SELECT count(*), sum(id) = :sum_u AS same_rows FROM pe_unlogged;
CREATE TEMP TABLE pe_temp_ts (id int PRIMARY KEY) USING nvm;
INSERT INTO pe_temp_ts SELECT generate_series(1, 100);
ALTER TABLE pe_temp_ts SET TABLESPACE regress_nvm_ts;
SET enable_seqscan = off;
SELECT count(*), sum(id) FROM pe_temp_ts WHERE id > 0;
RESET enable_seqscan;
DROP TABLE pe_temp_ts;

--
-- REFRESH MATERIALIZED VIEW CONCURRENTLY of an nvm materialized view
--
CREATE TABLE pe_base (id int PRIMARY KEY, v int) USING nvm;
INSERT INTO pe_base SELECT g, g FROM generate_series(1, 1000) g;
CREATE MATERIALIZED VIEW pe_mv USING nvm AS
  SELECT id, v, v * 2 AS w FROM pe_base WHERE v % 2 = 0;
CREATE UNIQUE INDEX pe_mv_id ON pe_mv (id);
SELECT pe_rel('pe_mv'), count(*) FROM pe_mv;
UPDATE pe_base SET v = v + 1 WHERE id % 3 = 0;
DELETE FROM pe_base WHERE id % 5 = 0;
INSERT INTO pe_base SELECT g, g FROM generate_series(2001, 2100) g;
SELECT tables AS tables2 FROM nvm_pool \gset
REFRESH MATERIALIZED VIEW CONCURRENTLY pe_mv;
SELECT (SELECT count(*) || ':' || md5(string_agg(id || ':' || v || ':' || w, ',' ORDER BY id)) FROM pe_mv) =
       (SELECT count(*) || ':' || md5(string_agg(id || ':' || v || ':' || v * 2, ',' ORDER BY id))
          FROM pe_base WHERE v % 2 = 0) AS same_contents;
SELECT count(*) FROM pe_mv;
-- its temporary work table is gone again
SELECT tables - :tables2 AS new_pool_tables FROM nvm_pool;
-- nothing changed: a concurrent refresh changes nothing
REFRESH MATERIALIZED VIEW CONCURRENTLY pe_mv;
SELECT count(*) FROM pe_mv;
-- also with nvm as the default access method
SET default_table_access_method = nvm;
UPDATE pe_base SET v = v + 1 WHERE id % 7 = 0;
REFRESH MATERIALIZED VIEW CONCURRENTLY pe_mv;
RESET default_table_access_method;
SELECT (SELECT count(*) || ':' || md5(string_agg(id || ':' || v || ':' || w, ',' ORDER BY id)) FROM pe_mv) =
       (SELECT count(*) || ':' || md5(string_agg(id || ':' || v || ':' || v * 2, ',' ORDER BY id))
          FROM pe_base WHERE v % 2 = 0) AS same_contents;
SELECT bt_index_check('pe_mv_id', true);
-- ALTER MATERIALIZED VIEW ... SET TABLESPACE
ALTER MATERIALIZED VIEW pe_mv SET TABLESPACE regress_nvm_ts;
SET enable_seqscan = off;
SELECT count(*) FROM pe_mv WHERE id > 0;
RESET enable_seqscan;
ALTER MATERIALIZED VIEW pe_mv SET TABLESPACE pg_default;
SELECT tables - :tables2 AS new_pool_tables FROM nvm_pool;

DROP MATERIALIZED VIEW pe_mv;
DROP TABLE pe_base, pe_ts, pe_unlogged;
DROP TABLESPACE regress_nvm_ts;
DROP FUNCTION pe_wait_pool_tables(int), pe_rel(regclass), pe_init_fork(regclass),
  pe_ts_digest(), pe_ts_index_digests();
SELECT tables - :tables0 AS new_pool_tables FROM nvm_pool;
