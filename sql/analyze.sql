--
-- analyze: ANALYZE gives sane statistics and row estimates; VACUUM,
-- VACUUM ANALYZE and CHECKPOINT succeed on nvm tables
--
CREATE TABLE an (id int PRIMARY KEY, grp int, v text) USING nvm
  WITH (autovacuum_enabled = false);  -- statistics only from the ANALYZEs below
INSERT INTO an SELECT g, g % 10, repeat('x', g % 50) FROM generate_series(1, 10000) g;
ANALYZE an;
SELECT reltuples BETWEEN 9000 AND 11000 AS reltuples_sane,
       relpages > 0 AS has_pages
  FROM pg_class WHERE relname = 'an';
-- column statistics exist and describe the data
SELECT attname, null_frac, n_distinct FROM pg_stats
  WHERE tablename = 'an' AND attname IN ('grp') ORDER BY attname;
SELECT n_distinct BETWEEN -1.01 AND -0.99 AS id_unique FROM pg_stats
  WHERE tablename = 'an' AND attname = 'id';
-- the planner's estimates follow
CREATE FUNCTION an_estimate(q text) RETURNS float8 LANGUAGE plpgsql AS
$$ DECLARE j json; BEGIN
     EXECUTE 'EXPLAIN (FORMAT json) ' || q INTO j;
     RETURN (j -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
   END $$;
SELECT an_estimate('SELECT * FROM an') BETWEEN 9000 AND 11000 AS whole_table,
       an_estimate('SELECT * FROM an WHERE grp = 3') BETWEEN 800 AND 1200 AS one_group,
       an_estimate('SELECT * FROM an WHERE id < 100') BETWEEN 50 AND 200 AS range;

-- after most rows are deleted, a new ANALYZE sees it
DELETE FROM an WHERE id > 1000;
ANALYZE an;
SELECT reltuples BETWEEN 900 AND 1100 AS reltuples_after_delete FROM pg_class WHERE relname = 'an';
SELECT an_estimate('SELECT * FROM an') BETWEEN 900 AND 1100 AS estimate_after_delete;
-- and after updates, every row counts once
UPDATE an SET v = v || 'y';
UPDATE an SET v = v || 'z';
ANALYZE an;
SELECT reltuples BETWEEN 900 AND 1100 AS reltuples_after_updates FROM pg_class WHERE relname = 'an';

-- ANALYZE of one column, of an empty table, and of a table with a single row
ANALYZE an (grp);
CREATE TABLE an_empty (id int) USING nvm WITH (autovacuum_enabled = false);
ANALYZE an_empty;
SELECT reltuples <= 0 AS empty_estimate FROM pg_class WHERE relname = 'an_empty';
INSERT INTO an_empty VALUES (1);
ANALYZE an_empty;
SELECT reltuples AS one_row FROM pg_class WHERE relname = 'an_empty';

-- VACUUM and VACUUM ANALYZE succeed and keep every live row
VACUUM an;
VACUUM ANALYZE an;
VACUUM (VERBOSE false, ANALYZE true) an;
VACUUM (FREEZE) an;
VACUUM;
SELECT count(*), sum(id) FROM an;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, grp FROM an WHERE id IN (1, 500, 1000, 1001) ORDER BY id;
RESET ALL;
-- VACUUM cannot run inside a transaction block (as for heap)
BEGIN;
VACUUM an;  -- should fail
ROLLBACK;

-- CHECKPOINT
CHECKPOINT;
SELECT count(*) FROM an;

-- autovacuum can be configured per table as for heap
ALTER TABLE an SET (autovacuum_enabled = false);
SELECT reloptions FROM pg_class WHERE relname = 'an';

-- the planner's row width follows the column statistics: after an ANALYZE
-- that finds wider values (and leaves the row count as it was), plans show
-- the new width (nvm keeps the widths until the statistics change)
CREATE TABLE an_width (id int, t text) USING nvm;
INSERT INTO an_width SELECT g, repeat('x', 10) FROM generate_series(1, 100) g;
ANALYZE an_width;
EXPLAIN (COSTS true) SELECT * FROM an_width;
UPDATE an_width SET t = repeat('y', 400);
ANALYZE an_width;
EXPLAIN (COSTS true) SELECT * FROM an_width;

DROP TABLE an, an_empty, an_width;
DROP FUNCTION an_estimate(text);
