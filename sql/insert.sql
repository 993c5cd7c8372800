--
-- insert: single and multi-row INSERT, INSERT ... SELECT (also from the same
-- table), COPY FROM STDIN, RETURNING, defaults and NULLs
--
CREATE TABLE ins (id int, v text, n numeric) USING nvm;

-- single rows
INSERT INTO ins VALUES (1, 'a', 1.5);
INSERT INTO ins (id, v) VALUES (2, 'b');
INSERT INTO ins (v, id) VALUES ('c', 3);
-- multi-row
INSERT INTO ins VALUES (4, 'd', 4), (5, 'e', 5), (6, NULL, NULL);
SELECT * FROM ins ORDER BY id;

-- RETURNING
INSERT INTO ins VALUES (7, 'g', 7) RETURNING *;
INSERT INTO ins VALUES (8, 'h', 8), (9, 'i', 9) RETURNING id, upper(v) AS up, n * 2 AS n2;
-- the system column ctid is readable in RETURNING (not printed: it varies)
INSERT INTO ins VALUES (10, 'j', 10) RETURNING ctid IS NOT NULL AS has_ctid;
-- every version has its own, distinct TID
SELECT count(*) = count(DISTINCT ctid) AS distinct_ctids FROM ins;
-- and a row can be fetched back by its TID (a TID scan)
SELECT id, v FROM ins WHERE ctid = (SELECT ctid FROM ins WHERE id = 5);
-- tableoid is the table's
SELECT DISTINCT tableoid::regclass FROM ins;

-- INSERT ... SELECT from another table
CREATE TABLE ins_src (id int, v text) USING nvm;
INSERT INTO ins_src SELECT g, 'src' || g FROM generate_series(100, 104) g;
INSERT INTO ins (id, v) SELECT id, v FROM ins_src WHERE id % 2 = 0;
SELECT * FROM ins WHERE id >= 100 ORDER BY id;

-- INSERT ... SELECT from the same table: reads only the rows that existed
-- when the statement started, so the row count doubles exactly once
SELECT count(*) FROM ins;
INSERT INTO ins SELECT id + 1000, v, n FROM ins;
SELECT count(*), count(*) FILTER (WHERE id > 1000) AS copies FROM ins;
INSERT INTO ins SELECT * FROM ins;
SELECT count(*), count(DISTINCT id) FROM ins;
-- each id now appears exactly twice
SELECT count(*) AS cnt, count(*) FILTER (WHERE c <> 2) AS not_twice
  FROM (SELECT id, count(*) AS c FROM ins GROUP BY id) s;

-- the same through a CTE that inserts and reads in one statement
TRUNCATE ins;
INSERT INTO ins VALUES (1, 'x', 1);
WITH w AS (INSERT INTO ins VALUES (2, 'y', 2) RETURNING *)
  SELECT (SELECT count(*) FROM ins) AS seen_by_statement, (SELECT count(*) FROM w) AS inserted;
SELECT count(*) FROM ins;

-- defaults, sequences, identity
CREATE TABLE ins_def (
  id int GENERATED ALWAYS AS IDENTITY,
  s serial,
  t text DEFAULT 'dflt',
  c timestamptz DEFAULT '2000-01-01 00:00:00+00',
  g int GENERATED ALWAYS AS (id * 100) STORED
) USING nvm;
INSERT INTO ins_def DEFAULT VALUES;
INSERT INTO ins_def (t) VALUES ('given'), (NULL);
INSERT INTO ins_def (id) VALUES (99);  -- should fail
SELECT id, s, t, c AT TIME ZONE 'UTC' AS c, g FROM ins_def ORDER BY id;

-- NOT NULL and CHECK constraints
CREATE TABLE ins_chk (id int NOT NULL, v int CHECK (v > 0)) USING nvm;
INSERT INTO ins_chk VALUES (NULL, 1);  -- should fail
INSERT INTO ins_chk VALUES (1, 0);  -- should fail
INSERT INTO ins_chk VALUES (1, 1);
-- a failed multi-row insert leaves nothing behind
INSERT INTO ins_chk VALUES (2, 2), (3, -3);  -- should fail
SELECT * FROM ins_chk ORDER BY id;

-- COPY FROM STDIN (text and csv), then COPY TO STDOUT
CREATE TABLE ins_copy (id int, v text, n numeric, d date) USING nvm;
COPY ins_copy FROM STDIN;
1	one	1.1	2020-01-01
2	two	\N	2020-01-02
3	\N	3.3	\N
4	tab\there	4	2020-01-04
\.
COPY ins_copy FROM STDIN WITH (FORMAT csv, HEADER true);
id,v,n,d
5,"five, with comma",5.5,2020-01-05
6,,6,2020-01-06
\.
SELECT * FROM ins_copy ORDER BY id;
COPY (SELECT * FROM ins_copy ORDER BY id) TO STDOUT;
COPY ins_copy TO STDOUT WITH (FORMAT csv);
-- a bad line aborts the whole COPY: nothing from it is left
COPY ins_copy FROM STDIN;  -- should fail
7	seven	7	2020-01-07
eight	8	8	2020-01-08
\.
SELECT count(*) FROM ins_copy;
-- a larger COPY: more rows than one batch of COPY's bulk insert (1000)
CREATE TABLE ins_copy_big (id int, v text) USING nvm;
COPY ins_copy_big (id) FROM PROGRAM 'seq 1 5000';
UPDATE ins_copy_big SET v = md5(id::text);
SELECT count(*), count(DISTINCT id), sum(id), min(id), max(id) FROM ins_copy_big;
SELECT md5(string_agg(v, ',' ORDER BY id)) = (
  SELECT md5(string_agg(md5(g::text), ',' ORDER BY g)) FROM generate_series(1, 5000) g)
  AS same_content FROM ins_copy_big;

-- INSERT inside a rolled-back transaction leaves nothing
BEGIN;
INSERT INTO ins_chk VALUES (10, 10), (11, 11);
SELECT count(*) FROM ins_chk;
ROLLBACK;
SELECT * FROM ins_chk ORDER BY id;

-- INSERT ... ON CONFLICT needs a unique index
CREATE TABLE ins_upsert (k int PRIMARY KEY, v int) USING nvm;
INSERT INTO ins_upsert VALUES (1, 1), (2, 2);
INSERT INTO ins_upsert VALUES (1, 10) ON CONFLICT DO NOTHING;
INSERT INTO ins_upsert VALUES (2, 20), (3, 30) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v
  RETURNING *;
INSERT INTO ins_upsert VALUES (3, 300) ON CONFLICT (k) DO UPDATE SET v = ins_upsert.v + EXCLUDED.v
  WHERE ins_upsert.v < 0;
SELECT * FROM ins_upsert ORDER BY k;
-- the same key twice in one command
INSERT INTO ins_upsert VALUES (4, 1), (4, 2) ON CONFLICT (k) DO UPDATE SET v = 0;  -- should fail

DROP TABLE ins, ins_src, ins_def, ins_chk, ins_copy, ins_copy_big, ins_upsert;
