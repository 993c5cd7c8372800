--
-- pg_features: PostgreSQL features that nvm tables support the way heap
-- does, found missing by PostgreSQL's own regression suites
-- (regress/pg-suites): temporary and unlogged tables under
-- default_table_access_method = nvm, CREATE INDEX CONCURRENTLY and REINDEX
-- CONCURRENTLY, CLUSTER and VACUUM FULL, TABLESAMPLE, TIDs and scan order,
-- parallel scans, ON CONFLICT on a row the same command changed, deferred
-- exclusion constraints
--
CREATE TABLE pf (id int PRIMARY KEY, v text) USING nvm;
INSERT INTO pf SELECT g, 'v' || g FROM generate_series(1, 1000) g;

-- temporary and unlogged tables created without USING are heap tables
SET default_table_access_method = nvm;
CREATE TEMP TABLE pf_temp (id int);
CREATE UNLOGGED TABLE pf_unlogged (id int);
CREATE TEMP TABLE pf_temp_as AS SELECT id FROM pf WHERE id <= 3;
SELECT id INTO TEMP pf_temp_into FROM pf WHERE id <= 3;
CREATE TABLE pg_temp.pf_temp_schema (id int);
CREATE TABLE pf_default (id int);
SELECT c.relname, c.relpersistence, a.amname
  FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname LIKE 'pf\_%' AND c.relkind = 'r'
 ORDER BY c.relname;
DROP TABLE pf_temp, pf_unlogged, pf_temp_as, pf_temp_into, pf_temp_schema, pf_default;
RESET default_table_access_method;

-- TIDs: the first row is (0,1), as on heap; an update moves the row to the
-- end, and a sequential scan returns rows in TID order
CREATE TABLE pf_order (id int, v text) USING nvm;
INSERT INTO pf_order VALUES (1, 'a'), (2, 'b'), (3, 'c');
UPDATE pf_order SET v = 'a2' WHERE id = 1;
SELECT ctid, * FROM pf_order;
SELECT * FROM pf_order WHERE ctid = '(0,2)';
DECLARE c SCROLL CURSOR WITH HOLD FOR SELECT id FROM pf_order;
FETCH LAST FROM c;
FETCH BACKWARD 2 FROM c;
CLOSE c;
DROP TABLE pf_order;

-- CREATE INDEX CONCURRENTLY and REINDEX CONCURRENTLY
CREATE INDEX CONCURRENTLY pf_v ON pf (v);
REINDEX INDEX CONCURRENTLY pf_v;
REINDEX TABLE CONCURRENTLY pf;
SELECT indexrelid::regclass, indisvalid, indisready FROM pg_index
 WHERE indrelid = 'pf'::regclass ORDER BY 1;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id FROM pf WHERE v = 'v500';
RESET enable_seqscan;
RESET enable_bitmapscan;

-- CLUSTER and VACUUM FULL rewrite the table, in index order for CLUSTER
UPDATE pf SET v = 'u' || id WHERE id % 10 = 0;
DELETE FROM pf WHERE id % 7 = 0;
CLUSTER pf USING pf_pkey;
SELECT count(*), sum(id), min(ctid), max(ctid) FROM pf;
SELECT id FROM pf LIMIT 3;
VACUUM FULL pf;
SELECT count(*), sum(id), count(*) FILTER (WHERE v LIKE 'u%') AS updated FROM pf;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'pf';

-- TABLESAMPLE: BERNOULLI with a seed is repeatable, SYSTEM samples blocks
SELECT count(*) FROM pf TABLESAMPLE BERNOULLI (100);
SELECT count(*) FROM pf TABLESAMPLE SYSTEM (0);
SELECT (SELECT count(*) FROM pf TABLESAMPLE BERNOULLI (30) REPEATABLE (7)) =
       (SELECT count(*) FROM pf TABLESAMPLE BERNOULLI (30) REPEATABLE (7)) AS repeatable;

-- parallel sequential scans read with the leader's view, own uncommitted
-- rows included
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM pf;
SELECT count(*), sum(id) FROM pf;
BEGIN;
INSERT INTO pf VALUES (5000, 'new');
DELETE FROM pf WHERE id = 1;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM pf;
SELECT count(*), sum(id) FROM pf;
ROLLBACK;
SELECT count(*), sum(id) FROM pf;
RESET ALL;

-- rows larger than a page (this one compresses to fit; see the toast test
-- for rows stored in the TOAST table)
INSERT INTO pf VALUES (9999, repeat('large', 40000));
UPDATE pf SET v = v || repeat('!', 10000) WHERE id = 9999;
SELECT id, length(v), md5(v) = md5(repeat('large', 40000) || repeat('!', 10000)) AS same
  FROM pf WHERE id = 9999;
DELETE FROM pf WHERE id = 9999;

-- ON CONFLICT DO UPDATE meets a row the same command changed
INSERT INTO pf VALUES (2, 'a'), (3, 'b'), (3, 'c')
  ON CONFLICT (id) DO UPDATE SET v = 'twice';  -- should fail
SELECT * FROM pf WHERE id IN (2, 3) ORDER BY id;

-- a deferred exclusion constraint checks the version an update left
CREATE TABLE pf_excl (f1 int, f2 int,
  CONSTRAINT pf_excl_con EXCLUDE (f1 WITH =) INITIALLY DEFERRED) USING nvm;
INSERT INTO pf_excl VALUES (1), (2);
BEGIN;
INSERT INTO pf_excl VALUES (2, 1);
DELETE FROM pf_excl WHERE f1 = 2 AND f2 IS NULL;
UPDATE pf_excl SET f2 = 2 WHERE f1 = 2;
COMMIT;
SELECT * FROM pf_excl ORDER BY f1;
BEGIN;
INSERT INTO pf_excl VALUES (1, 5);
COMMIT;  -- should fail
DROP TABLE pf_excl;

DROP TABLE pf;

-- pg_relation_size() of an nvm table counts its virtual blocks of 291
-- version numbers, as relation_size (and so relpages) does
CREATE TABLE rs (id int) USING nvm;
SELECT pg_relation_size('rs') AS empty_size;
INSERT INTO rs SELECT generate_series(1, 291);
SELECT pg_relation_size('rs') / 8192 AS blocks_after_291_versions;
INSERT INTO rs VALUES (292);
SELECT pg_relation_size('rs') / 8192 AS blocks_after_292_versions;
DELETE FROM rs WHERE id <= 290;
SELECT pg_relation_size('rs') / 8192 AS blocks_after_582_versions;
VACUUM rs;
SELECT relpages = pg_relation_size('rs') / 8192 AS relpages_agree FROM pg_class WHERE oid = 'rs'::regclass;
TRUNCATE rs;
SELECT pg_relation_size('rs') AS truncated_size;
DROP TABLE rs;
