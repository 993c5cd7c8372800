--
-- update: non-key and key columns, agreement of index and sequential scans
-- after key updates (also back to an old key), Halloween protection, seeing
-- one's own changes, RETURNING
--
CREATE TABLE up (id int PRIMARY KEY, k int NOT NULL, v text, n int) USING nvm;
CREATE INDEX up_k ON up (k);
INSERT INTO up SELECT g, g * 10, 'v' || g, 0 FROM generate_series(1, 100) g;

-- a non-key column
UPDATE up SET v = 'changed' WHERE id = 5;
SELECT * FROM up WHERE id = 5;
UPDATE up SET n = n + 1 WHERE id <= 10;
SELECT id, n FROM up WHERE id <= 12 ORDER BY id;
-- the same row many times in a row
UPDATE up SET n = n + 1 WHERE id = 1;
UPDATE up SET n = n + 1 WHERE id = 1;
UPDATE up SET n = n + 1 WHERE id = 1;
SELECT id, n FROM up WHERE id = 1;
-- an UPDATE that matches nothing
UPDATE up SET n = -1 WHERE id = 1000;
-- RETURNING shows the new row; old values are reachable through a self-join
UPDATE up SET v = v || '!' WHERE id IN (2, 3) RETURNING id, v;
UPDATE up u SET n = u.n + 100 FROM up o WHERE o.id = u.id AND u.id = 4
  RETURNING u.id, o.n AS old_n, u.n AS new_n;

-- Halloween: every row is updated exactly once
UPDATE up SET n = n + 1;
SELECT sum(n), count(*) FROM up;
-- also when the update moves rows forward in the key order
UPDATE up SET k = k + 5;
SELECT min(k), max(k), count(DISTINCT k), count(*) FROM up;

-- key columns: the primary key and a secondary key
UPDATE up SET id = id + 1000 WHERE id BETWEEN 1 AND 5;
UPDATE up SET k = -k WHERE id BETWEEN 6 AND 10;
-- a key moved back to the value it had before
UPDATE up SET id = 1 WHERE id = 1001;
-- and a key moved away and back to its old value, in one transaction and across two
UPDATE up SET id = 2000 WHERE id = 20;
UPDATE up SET id = 20 WHERE id = 2000;
BEGIN;
UPDATE up SET id = 3000 WHERE id = 30;
UPDATE up SET id = 30 WHERE id = 3000;
UPDATE up SET k = 1 WHERE id = 30;
UPDATE up SET k = 305 WHERE id = 30;
COMMIT;
-- a chain of key swaps through a temporary value
BEGIN;
UPDATE up SET id = -40 WHERE id = 40;
UPDATE up SET id = 40 WHERE id = 41;
UPDATE up SET id = 41 WHERE id = -40;
COMMIT;
SELECT id, k, v FROM up WHERE id IN (40, 41) ORDER BY id;

-- every row by sequential scan
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT id, k, v, n FROM up WHERE id < 12 OR id > 999 OR id IN (20, 30, 40, 41) ORDER BY id;
SELECT md5(string_agg(id || ':' || k || ':' || v || ':' || n, ',' ORDER BY id)) AS seq_md5,
       count(*) AS seq_count FROM up \gset
SELECT :seq_count AS rows;
RESET ALL;
-- the same through the primary key, through the secondary index, and by
-- looking up each key found by the sequential scan
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM up WHERE id > -100000;
SELECT md5(string_agg(id || ':' || k || ':' || v || ':' || n, ',' ORDER BY id)) = :'seq_md5'
  AS pk_scan_agrees, count(*) FROM up WHERE id > -100000;
EXPLAIN (COSTS OFF) SELECT * FROM up WHERE k > -100000;
SELECT md5(string_agg(id || ':' || k || ':' || v || ':' || n, ',' ORDER BY id)) = :'seq_md5'
  AS k_scan_agrees, count(*) FROM up WHERE k > -100000;
-- old keys are gone from the indexes, new ones are found
SELECT * FROM up WHERE id IN (2, 3, 4, 5, 2000, 3000, 1001) ORDER BY id;
SELECT id, k FROM up WHERE k IN (15, 25, 35, 45, 55) ORDER BY id;
SELECT id, k FROM up WHERE k IN (-65, -75, 65, 75) ORDER BY id;
SELECT id, k FROM up WHERE k IN (1, 305) ORDER BY id;
SELECT * FROM up WHERE id IN (1, 20, 30) ORDER BY id;
-- index-only scan over the primary key
SET enable_indexscan = off;
SELECT count(*), sum(id) FROM up WHERE id > -100000;
RESET ALL;

-- seeing one's own changes inside a transaction
BEGIN;
INSERT INTO up VALUES (500, 5000, 'mine', 0);
SELECT * FROM up WHERE id = 500;
UPDATE up SET v = 'mine, updated' WHERE id = 500;
SELECT * FROM up WHERE id = 500;
UPDATE up SET id = 501 WHERE id = 500;
SELECT id, v FROM up WHERE id IN (500, 501) ORDER BY id;
DELETE FROM up WHERE id = 501;
SELECT count(*) FROM up WHERE id IN (500, 501);
-- the same through a sequential scan
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = off;
INSERT INTO up VALUES (502, 5020, 'again', 0);
UPDATE up SET n = 7 WHERE id = 502;
SELECT id, k, v, n FROM up WHERE v IN ('mine', 'mine, updated', 'again') ORDER BY id;
COMMIT;
SELECT id, n FROM up WHERE id >= 500 AND id < 600 ORDER BY id;

-- a rolled-back update restores the old values, keys included
BEGIN;
UPDATE up SET v = 'lost', id = id + 10000 WHERE id BETWEEN 50 AND 52;
SELECT id, v FROM up WHERE id BETWEEN 50 AND 52 OR id > 10000 ORDER BY id;
ROLLBACK;
SELECT id, v FROM up WHERE id BETWEEN 50 AND 52 OR id > 10000 ORDER BY id;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, v FROM up WHERE id BETWEEN 50 AND 52 OR id > 10000 ORDER BY id;
RESET ALL;

-- an update in a function called per row
CREATE FUNCTION up_bump(int) RETURNS int LANGUAGE sql AS
$$ UPDATE up SET n = n + 1 WHERE id = $1 RETURNING n $$;
SELECT up_bump(id) FROM up WHERE id IN (60, 61) ORDER BY id;
SELECT up_bump(60);
DROP FUNCTION up_bump(int);

-- UPDATE with a subquery reading the same table
UPDATE up SET n = (SELECT max(n) FROM up) + 1 WHERE id = 62;
SELECT n = (SELECT max(n) FROM up) AS is_max FROM up WHERE id = 62;

DROP TABLE up;
