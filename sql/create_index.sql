--
-- create_index: indexes built over a table that already holds rows (and
-- dead versions): btree, hash, expression, partial, unique; REINDEX
--
CREATE TABLE ix (id int, k text, n int, j jsonb) USING nvm
  WITH (autovacuum_enabled = false);  -- plans from this test's statistics only
INSERT INTO ix SELECT g, 'key' || g, g % 100, jsonb_build_object('g', g)
  FROM generate_series(1, 5000) g;
-- dead versions must not be indexed
UPDATE ix SET n = n + 1000 WHERE id % 3 = 0;
DELETE FROM ix WHERE id % 11 = 0;

CREATE INDEX ix_id ON ix (id);
CREATE INDEX ix_k_hash ON ix USING hash (k);
CREATE INDEX ix_lower ON ix (lower(k));
CREATE INDEX ix_partial ON ix (n) WHERE n >= 1000;
CREATE INDEX ix_json ON ix ((j ->> 'g'));
CREATE UNIQUE INDEX ix_id_unique ON ix (id);

SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM ix WHERE id = 42;
SELECT id, k, n FROM ix WHERE id IN (42, 44, 45) ORDER BY id;
EXPLAIN (COSTS OFF) SELECT * FROM ix WHERE k = 'key42';
SELECT id, k, n FROM ix WHERE k = 'key42';
SELECT count(*) FROM ix WHERE k = 'key44';
EXPLAIN (COSTS OFF) SELECT * FROM ix WHERE lower(k) = 'key4999';
SELECT id FROM ix WHERE lower(k) = 'key4999';
EXPLAIN (COSTS OFF) SELECT id FROM ix WHERE n >= 1000 AND n < 1003;
SELECT id, n FROM ix WHERE n >= 1000 AND n < 1003 ORDER BY id LIMIT 5;
SELECT count(*) FROM ix WHERE n >= 1000;
EXPLAIN (COSTS OFF) SELECT id FROM ix WHERE j ->> 'g' = '4321';
SELECT id FROM ix WHERE j ->> 'g' = '4321';
RESET ALL;

-- every index finds exactly the live rows: compare with a sequential scan
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS live, count(*) FILTER (WHERE n >= 1000) AS partial_rows FROM ix;
RESET ALL;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM ix WHERE id > 0;
SELECT count(*) FROM (SELECT id FROM ix WHERE n >= 1000) s;
RESET ALL;

-- indexes built earlier are maintained by later writes
INSERT INTO ix VALUES (6000, 'Key6000', 1500, '{"g": 6000}');
UPDATE ix SET k = 'KEY42' WHERE id = 42;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id FROM ix WHERE lower(k) IN ('key6000', 'key42') ORDER BY id;
SELECT id FROM ix WHERE k = 'key42';
SELECT id FROM ix WHERE k = 'KEY42';
SELECT id FROM ix WHERE n = 1500;
RESET ALL;

-- a unique index cannot be built over duplicates, and the failed build leaves nothing
-- (the existing one refuses the duplicate first)
INSERT INTO ix VALUES (1, 'dup', 0, '{}');  -- should fail
DROP INDEX ix_id_unique;
INSERT INTO ix VALUES (1, 'dup', 0, '{}');
CREATE UNIQUE INDEX ix_id_unique ON ix (id);  -- should fail
SELECT count(*) FROM pg_class WHERE relname = 'ix_id_unique';
-- one that is unique over the live rows builds, although dead versions share keys
CREATE UNIQUE INDEX ix_id_k_unique ON ix (id, k);
DELETE FROM ix WHERE k = 'dup';
CREATE UNIQUE INDEX ix_id_unique ON ix (id);
INSERT INTO ix VALUES (1, 'dup', 0, '{}');  -- should fail

-- multi-column and INCLUDE indexes, and an index on a table created and filled in one transaction
BEGIN;
CREATE TABLE ix2 (a int, b int, c text) USING nvm;
INSERT INTO ix2 SELECT g / 10, g % 10, 'c' || g FROM generate_series(0, 999) g;
CREATE INDEX ix2_ab ON ix2 (a, b) INCLUDE (c);
COMMIT;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT c FROM ix2 WHERE a = 42 AND b = 7;
SELECT c FROM ix2 WHERE a = 42 AND b = 7;
RESET ALL;

-- REINDEX rebuilds from the table's live rows
REINDEX TABLE ix;
REINDEX INDEX ix_k_hash;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k FROM ix WHERE k = 'key43';
SELECT count(*) FROM ix WHERE id > 0;
RESET ALL;

-- GIN and GiST indexes, where row TIDs are packed differently
CREATE TABLE ix_gin (id int, tags text[], r int4range) USING nvm;
INSERT INTO ix_gin SELECT g, ARRAY['t' || (g % 7), 't' || (g % 13)], int4range(g, g + 10)
  FROM generate_series(1, 3000) g;
CREATE INDEX ix_gin_tags ON ix_gin USING gin (tags);
CREATE INDEX ix_gin_r ON ix_gin USING gist (r);
SET enable_seqscan = off;
SELECT count(*) FROM ix_gin WHERE tags @> ARRAY['t3', 't5'];
SELECT count(*) FROM ix_gin WHERE r @> 1500;
RESET ALL;
SELECT count(*) FROM ix_gin WHERE tags @> ARRAY['t3', 't5'];
SELECT count(*) FROM ix_gin WHERE r @> 1500;

DROP TABLE ix, ix2, ix_gin;
