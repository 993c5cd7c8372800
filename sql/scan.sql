--
-- scan: the same rows through a sequential scan, an index scan and an
-- index-only scan; plans are forced with the enable_* settings and shown
-- with EXPLAIN (COSTS OFF)
--
CREATE TABLE sc (id int PRIMARY KEY, grp int NOT NULL, val text) USING nvm
  WITH (autovacuum_enabled = false);  -- statistics only from the ANALYZE below
CREATE INDEX sc_grp ON sc (grp, id);
INSERT INTO sc SELECT g, g % 10, 'v' || g FROM generate_series(1, 1000) g;
-- some churn so that there are dead and updated versions to skip
DELETE FROM sc WHERE id % 7 = 0;
UPDATE sc SET val = val || '+' WHERE id % 5 = 0;
ANALYZE sc;

-- sequential scan
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM sc WHERE id BETWEEN 10 AND 20 ORDER BY id;
SELECT * FROM sc WHERE id BETWEEN 10 AND 20 ORDER BY id;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM sc;
SELECT count(*), sum(id), count(*) FILTER (WHERE val LIKE '%+') AS updated FROM sc;
SELECT md5(string_agg(id || ':' || grp || ':' || val, ',' ORDER BY id)) AS seq_digest
  FROM sc \gset
RESET ALL;

-- index scan
SET enable_seqscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM sc WHERE id BETWEEN 10 AND 20 ORDER BY id;
SELECT * FROM sc WHERE id BETWEEN 10 AND 20 ORDER BY id;
-- a key that was deleted is not found, an updated one shows its new value
SELECT * FROM sc WHERE id = 14;
SELECT * FROM sc WHERE id = 15;
-- backwards through the index
EXPLAIN (COSTS OFF) SELECT id FROM sc WHERE id > 990 ORDER BY id DESC;
SELECT id, val FROM sc WHERE id > 990 ORDER BY id DESC;
-- through the secondary index
EXPLAIN (COSTS OFF) SELECT * FROM sc WHERE grp = 3 ORDER BY grp, id LIMIT 6;
SELECT * FROM sc WHERE grp = 3 ORDER BY grp, id LIMIT 6;
-- the whole table through the index agrees with the sequential scan
EXPLAIN (COSTS OFF)
SELECT md5(string_agg(id || ':' || grp || ':' || val, ',' ORDER BY id)) FROM sc WHERE id > 0;
SELECT md5(string_agg(id || ':' || grp || ':' || val, ',' ORDER BY id)) = :'seq_digest'
  AS index_agrees_with_seq FROM sc WHERE id > 0;
-- LIMIT stops the scan early
SELECT id FROM sc WHERE id > 500 ORDER BY id LIMIT 3;
-- a nested-loop join driving index scans
EXPLAIN (COSTS OFF)
SELECT a.id, b.id FROM sc a JOIN sc b ON b.id = a.id + 1 WHERE a.id BETWEEN 1 AND 5 ORDER BY a.id;
SELECT a.id, b.id FROM sc a JOIN sc b ON b.id = a.id + 1 WHERE a.id BETWEEN 1 AND 5 ORDER BY a.id;
RESET ALL;

-- index-only scan (the table has no visibility map: every row is checked
-- in the table, and the answer must still be right)
-- (enable_indexscan stays on: where an index-only scan is possible it is the
-- index path the planner builds, and from 18 on enable_indexscan = off
-- disables it too)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM sc WHERE id BETWEEN 10 AND 20 ORDER BY id;
SELECT id FROM sc WHERE id BETWEEN 10 AND 20 ORDER BY id;
EXPLAIN (COSTS OFF) SELECT grp, count(*) FROM sc WHERE grp < 3 GROUP BY grp ORDER BY grp;
SELECT grp, count(*) FROM sc WHERE grp < 3 GROUP BY grp ORDER BY grp;
SELECT count(*), sum(id) FROM sc WHERE id > 0;
RESET ALL;

-- bitmap scans, where the planner offers them, give the same answer
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SELECT count(*), sum(id) FROM sc WHERE id > 0;
SELECT id, val FROM sc WHERE grp = 3 AND id < 60 ORDER BY id;
RESET ALL;

-- a parallel sequential scan, where the planner offers one, sees every row once
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT count(*), sum(id), count(DISTINCT id) FROM sc;
-- ... and a parallel worker sees the leader's own changes not yet committed,
-- as the leader does (the leader leaves the scan to the workers)
BEGIN;
INSERT INTO sc VALUES (5001, 1, 'new');
DELETE FROM sc WHERE id = 1;
SET LOCAL parallel_leader_participation = off;
SELECT count(*), sum(id), count(DISTINCT id) FROM sc;
ROLLBACK;
RESET ALL;

-- cursors: forward fetches in steps, and a scan that is read only in part
BEGIN;
DECLARE c CURSOR FOR SELECT id FROM sc WHERE id < 30 ORDER BY id;
FETCH 3 FROM c;
FETCH 3 FROM c;
MOVE FORWARD 2 IN c;
FETCH 1 FROM c;
CLOSE c;
-- a scroll cursor over an ordered result can go back
DECLARE s SCROLL CURSOR FOR SELECT id FROM sc WHERE id < 10 ORDER BY id;
FETCH ALL FROM s;
FETCH BACKWARD 2 FROM s;
FETCH FIRST FROM s;
COMMIT;

-- scroll cursors over a sequential scan go backwards too: every row once in
-- each direction, in opposite orders, whatever the physical order is
CREATE FUNCTION sc_scroll_check() RETURNS TABLE (forward_rows int, backward_is_reverse bool,
  last_is_last bool, absolute_ok bool, relative_ok bool, refetch_after_end bool)
LANGUAGE plpgsql AS $$
DECLARE
  c refcursor := 'sc_scroll';
  fwd int[] := '{}';
  bwd int[] := '{}';
  r int;
BEGIN
  OPEN c SCROLL FOR SELECT id FROM sc;
  LOOP FETCH NEXT FROM c INTO r; EXIT WHEN NOT FOUND; fwd := fwd || r; END LOOP;
  LOOP FETCH PRIOR FROM c INTO r; EXIT WHEN NOT FOUND; bwd := bwd || r; END LOOP;
  forward_rows := cardinality(fwd);
  backward_is_reverse := bwd = ARRAY(SELECT fwd[i] FROM generate_subscripts(fwd, 1) i
                                     ORDER BY i DESC);
  FETCH LAST FROM c INTO r;
  last_is_last := r = fwd[cardinality(fwd)];
  FETCH ABSOLUTE 10 FROM c INTO r;
  absolute_ok := r = fwd[10];
  FETCH RELATIVE -3 FROM c INTO r;
  relative_ok := r = fwd[7];
  MOVE LAST FROM c;
  FETCH NEXT FROM c INTO r;
  refetch_after_end := NOT FOUND;
  FETCH PRIOR FROM c INTO r;
  refetch_after_end := refetch_after_end AND r = fwd[cardinality(fwd)];
  CLOSE c;
  RETURN NEXT;
END $$;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM sc;
SELECT * FROM sc_scroll_check();
RESET ALL;
DROP FUNCTION sc_scroll_check();

-- WITH HOLD cursors survive their transaction
BEGIN;
DECLARE h CURSOR WITH HOLD FOR SELECT id, val FROM sc WHERE id < 5 ORDER BY id;
COMMIT;
FETCH ALL FROM h;
CLOSE h;

-- TID range scans: rows whose visible version's TID lies in the range, the
-- same rows a filtered sequential scan returns (sc's 1000 inserts and 200
-- updates span five virtual blocks of 291 versions), forwards and backwards
EXPLAIN (COSTS OFF) SELECT count(*) FROM sc WHERE ctid >= '(1,0)' AND ctid < '(3,1)';
CREATE TEMP TABLE sc_ranges (lo tid, hi tid);
INSERT INTO sc_ranges VALUES ('(0,0)', '(0,65535)'), ('(0,291)', '(1,1)'),
  ('(1,0)', '(2,0)'), ('(2,150)', '(2,150)'), ('(3,200)', '(9,1)'),
  ('(4,0)', '(100,0)'), ('(2,5)', '(1,5)'), ('(0,0)', '(0,0)');
CREATE FUNCTION sc_range_rows(lo tid, hi tid, tidrange bool) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  result text;
BEGIN
  EXECUTE format('SET LOCAL enable_tidscan = %s', tidrange);
  EXECUTE format('SET LOCAL enable_seqscan = %s', NOT tidrange);
  -- EXECUTE plans each time, with the settings above
  EXECUTE 'SELECT count(*) || '' rows, '' || coalesce(md5(string_agg(ctid || '':'' || id, '','' ORDER BY ctid)), ''-'')
             FROM sc WHERE ctid >= $1 AND ctid <= $2'
    INTO result USING lo, hi;
  RETURN result;
END $$;
SELECT lo, hi, sc_range_rows(lo, hi, true) = sc_range_rows(lo, hi, false) AS same,
       split_part(sc_range_rows(lo, hi, true), ',', 1) AS found
  FROM sc_ranges;
SET enable_seqscan = off;
BEGIN;
DECLARE r SCROLL CURSOR FOR SELECT ctid, id FROM sc WHERE ctid > '(1,285)' AND ctid < '(2,4)';
FETCH ALL FROM r;
FETCH BACKWARD ALL FROM r;
COMMIT;
RESET ALL;
DROP FUNCTION sc_range_rows;

-- an empty table scans to nothing through every path
CREATE TABLE sc_empty (id int PRIMARY KEY) USING nvm;
SELECT count(*) FROM sc_empty;
SET enable_seqscan = off;
SELECT id FROM sc_empty WHERE id = 1;
RESET ALL;

DROP TABLE sc, sc_empty;
