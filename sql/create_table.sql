--
-- create_table: creating nvm tables, explicitly and through
-- default_table_access_method (CREATE TABLE, CREATE TABLE AS, SELECT INTO,
-- the pgbench schema)
--
-- relam_of() names the access method of a relation, so that every check
-- below prints "nvm" or "heap" and nothing that varies between runs.
-- (The same file run with USING heap and default_table_access_method = heap
-- differs from this one only there: it prints heap where this prints nvm,
-- and "nvm" does not exist for SET ACCESS METHOD.)
CREATE FUNCTION relam_of(regclass) RETURNS name
LANGUAGE sql STABLE AS
$$ SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
   WHERE c.oid = $1 $$;

-- the access method is registered as a table access method
SELECT amname, amtype FROM pg_am WHERE amname = 'nvm';

-- explicit USING nvm
CREATE TABLE ct_explicit (id int PRIMARY KEY, v text) USING nvm;
SELECT relam_of('ct_explicit');
-- the primary key's index is an ordinary btree
SELECT a.amname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'ct_explicit'::regclass;
INSERT INTO ct_explicit VALUES (1, 'one'), (2, 'two');
SELECT * FROM ct_explicit ORDER BY id;

-- an unknown access method is refused
CREATE TABLE ct_bad (id int) USING no_such_am;  -- should fail

-- default_table_access_method
SET default_table_access_method = nvm;
SHOW default_table_access_method;
CREATE TABLE ct_default (id int, v text);
SELECT relam_of('ct_default');
-- USING heap still overrides the default
CREATE TABLE ct_heap (id int) USING heap;
SELECT relam_of('ct_heap');

-- CREATE TABLE AS and SELECT INTO follow the default too
INSERT INTO ct_default SELECT g, 'row ' || g FROM generate_series(1, 10) g;
CREATE TABLE ct_as AS SELECT id, v FROM ct_default WHERE id % 2 = 0;
SELECT relam_of('ct_as');
SELECT * FROM ct_as ORDER BY id;
SELECT id * 10 AS id10, upper(v) AS v INTO ct_into FROM ct_default WHERE id <= 3;
SELECT relam_of('ct_into');
SELECT * FROM ct_into ORDER BY id10;
-- CREATE TABLE AS ... WITH NO DATA, then filled
CREATE TABLE ct_nodata AS SELECT * FROM ct_default WITH NO DATA;
SELECT relam_of('ct_nodata'), count(*) FROM ct_nodata;
INSERT INTO ct_nodata SELECT * FROM ct_default;
SELECT count(*), sum(id) FROM ct_nodata;
-- CREATE TABLE AS with an explicit USING
RESET default_table_access_method;
CREATE TABLE ct_as_using USING nvm AS SELECT g AS n FROM generate_series(1, 5) g;
SELECT relam_of('ct_as_using'), sum(n) FROM ct_as_using;
-- CREATE TABLE (LIKE ...) does not copy the access method: it takes the default
SET default_table_access_method = heap;
CREATE TABLE ct_like (LIKE ct_explicit INCLUDING ALL);
SELECT relam_of('ct_like');
RESET default_table_access_method;

-- a table with no columns
CREATE TABLE ct_nocols () USING nvm;
INSERT INTO ct_nocols DEFAULT VALUES;
INSERT INTO ct_nocols DEFAULT VALUES;
SELECT count(*) FROM ct_nocols;

-- the pgbench schema, created as pgbench -i does after the default is set
SET default_table_access_method = nvm;
CREATE TABLE pgbench_branches (bid int NOT NULL, bbalance int, filler char(88))
  WITH (fillfactor = 100);
CREATE TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler char(84))
  WITH (fillfactor = 100);
CREATE TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler char(84))
  WITH (fillfactor = 100);
CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp,
  filler char(22));
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
  WHERE c.relname LIKE 'pgbench\_%' ORDER BY c.relname;
INSERT INTO pgbench_branches (bid, bbalance) SELECT g, 0 FROM generate_series(1, 2) g;
INSERT INTO pgbench_tellers (tid, bid, tbalance) SELECT g, (g - 1) / 10 + 1, 0
  FROM generate_series(1, 20) g;
INSERT INTO pgbench_accounts (aid, bid, abalance) SELECT g, (g - 1) / 1000 + 1, 0
  FROM generate_series(1, 2000) g;
ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid);
ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid);
ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid);
-- one TPC-B-like transaction
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + 17 WHERE aid = 1234;
SELECT abalance FROM pgbench_accounts WHERE aid = 1234;
UPDATE pgbench_tellers SET tbalance = tbalance + 17 WHERE tid = 13;
UPDATE pgbench_branches SET bbalance = bbalance + 17 WHERE bid = 2;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
  VALUES (13, 2, 1234, 17, '2024-01-01 00:00:00');
COMMIT;
SELECT (SELECT sum(abalance) FROM pgbench_accounts) AS accounts,
       (SELECT sum(tbalance) FROM pgbench_tellers) AS tellers,
       (SELECT sum(bbalance) FROM pgbench_branches) AS branches,
       (SELECT sum(delta) FROM pgbench_history) AS history;
-- pgbench's own consistency check: every branch total equals its tellers' and accounts'
SELECT b.bid, b.bbalance,
       (SELECT sum(tbalance) FROM pgbench_tellers t WHERE t.bid = b.bid) AS tellers,
       (SELECT sum(abalance) FROM pgbench_accounts a WHERE a.bid = b.bid) AS accounts
  FROM pgbench_branches b ORDER BY b.bid;
RESET default_table_access_method;

-- ALTER TABLE ... SET ACCESS METHOD converts a filled table, both ways
INSERT INTO ct_heap SELECT generate_series(1, 100);
CREATE INDEX ct_heap_id ON ct_heap (id);
ALTER TABLE ct_heap SET ACCESS METHOD nvm;
SELECT relam_of('ct_heap'), count(*), sum(id) FROM ct_heap;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id FROM ct_heap WHERE id IN (1, 50, 100) ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;
UPDATE ct_heap SET id = -id WHERE id <= 10;
ALTER TABLE ct_heap SET ACCESS METHOD heap;
SELECT relam_of('ct_heap'), count(*), sum(id) FROM ct_heap;

-- ALTER TABLE ADD COLUMN (with and without a default) on a filled nvm table
ALTER TABLE ct_explicit ADD COLUMN w int;
ALTER TABLE ct_explicit ADD COLUMN d text DEFAULT 'dflt';
INSERT INTO ct_explicit VALUES (3, 'three', 33);
SELECT * FROM ct_explicit ORDER BY id;
ALTER TABLE ct_explicit DROP COLUMN w;
SELECT * FROM ct_explicit ORDER BY id;
-- a column type change rewrites the table into new storage
ALTER TABLE ct_explicit ALTER COLUMN id TYPE bigint;
SELECT relam_of('ct_explicit');
SELECT * FROM ct_explicit ORDER BY id;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM ct_explicit WHERE id = 2;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- and so does a volatile default
ALTER TABLE ct_explicit ADD COLUMN r float8 DEFAULT random();
SELECT count(*), count(r), bool_and(r >= 0 AND r < 1) FROM ct_explicit;

DROP TABLE ct_explicit, ct_default, ct_heap, ct_as, ct_into, ct_nodata, ct_as_using,
  ct_like, ct_nocols;
DROP TABLE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history;
DROP FUNCTION relam_of(regclass);
