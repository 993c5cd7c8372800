--
-- types: many data types, NULLs in every position, large values (a 100 kB
-- text round-trips), wide rows, dropped columns
--
CREATE TABLE ty (
  id int8 PRIMARY KEY,
  i2 int2, i4 int4, f4 float4, f8 float8,
  num numeric(30, 10), b bool, c char(5), vc varchar(10), t text,
  js jsonb, j json, arr int[], tarr text[],
  ts timestamp, tstz timestamptz, d date, tm time, iv interval,
  ba bytea, u uuid, inet_ inet, r numrange, pt point, bits bit varying(16),
  m money
) USING nvm;

SET timezone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET lc_monetary = 'C';
INSERT INTO ty VALUES (
  9223372036854775807, -32768, 2147483647, 1.5, 2.25e300,
  '12345678901234567890.0123456789', true, 'ab', 'varchar', 'text value',
  '{"a": [1, 2, {"b": null}], "c": "d"}', '{"keep":  "spacing"}', '{1,2,NULL,4}', '{"x","y z",NULL}',
  '2024-02-29 12:34:56.789', '2024-02-29 12:34:56.789+05', '2024-02-29', '23:59:59.999999',
  '1 year 2 mons 3 days 04:05:06',
  '\x00ff00de', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '192.168.0.1/24', '[1.5,2.5)', '(1,2)',
  B'1011', 12.34);
INSERT INTO ty (id) VALUES (-9223372036854775808);
INSERT INTO ty (id, num, f8, arr, js) VALUES (0, 'NaN', 'Infinity', '{}', 'null');
\x on
SELECT * FROM ty ORDER BY id;
\x off
-- values compare equal to their literals after the round trip
SELECT id, num = '12345678901234567890.0123456789' AS num_ok,
       js @> '{"c": "d"}' AS js_ok, arr[4] AS arr4, tarr[2] AS tarr2,
       tstz = '2024-02-29 07:34:56.789+00' AS tstz_ok,
       ba = '\x00ff00de'::bytea AS ba_ok, length(ba) AS ba_len
  FROM ty WHERE id > 0;
-- NULLs in every column of a row, and counted per column
SELECT count(*) AS all_null_rows FROM ty t
  WHERE num_nulls(i2, i4, f4, num, b, c, vc, t, j, tarr, ts, tstz, d, tm, iv, ba, u, inet_, r,
                  pt, bits, m) = 22;
SELECT count(i2), count(num), count(arr), count(js), count(ba) FROM ty;
-- updates of values of different sizes, to NULL and back
UPDATE ty SET t = NULL, ba = NULL WHERE id > 0;
SELECT t IS NULL AS t_null, ba IS NULL AS ba_null, vc FROM ty WHERE id > 0;
UPDATE ty SET t = repeat('long ', 100), ba = '\x01' WHERE id > 0;
SELECT length(t), ba FROM ty WHERE id > 0;
-- every type through an index
CREATE INDEX ty_tstz ON ty (tstz);
CREATE INDEX ty_num ON ty (num);
CREATE INDEX ty_u ON ty (u);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id FROM ty WHERE tstz = '2024-02-29 07:34:56.789+00';
SELECT id FROM ty WHERE num = 'NaN';
SELECT id FROM ty WHERE u = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
RESET enable_seqscan;
RESET enable_bitmapscan;

-- large values: a 100 kB text, a 1 MB text and a 200 kB bytea round-trip
CREATE TABLE ty_big (id int PRIMARY KEY, t text, b bytea) USING nvm;
INSERT INTO ty_big
  SELECT 1, string_agg(md5(g::text), '' ORDER BY g), NULL FROM generate_series(1, 3200) g;
INSERT INTO ty_big VALUES (2, repeat('abcdefghij', 100000), NULL);
INSERT INTO ty_big SELECT 3, NULL, decode(string_agg(md5(g::text), '' ORDER BY g), 'hex')
  FROM generate_series(1, 12800) g;
SELECT id, length(t) AS t_len, length(b) AS b_len FROM ty_big ORDER BY id;
SELECT t = (SELECT string_agg(md5(g::text), '' ORDER BY g) FROM generate_series(1, 3200) g)
  AS text_100k_ok FROM ty_big WHERE id = 1;
SELECT t = repeat('abcdefghij', 100000) AS text_1m_ok FROM ty_big WHERE id = 2;
SELECT b = (SELECT decode(string_agg(md5(g::text), '' ORDER BY g), 'hex')
  FROM generate_series(1, 12800) g) AS bytea_200k_ok FROM ty_big WHERE id = 3;
-- incompressible large value (random-looking), stored as is
INSERT INTO ty_big SELECT 4, string_agg(md5((g * 7919)::text) || md5(g::text), '' ORDER BY g), NULL
  FROM generate_series(1, 2000) g;
SELECT md5(t) = (SELECT md5(string_agg(md5((g * 7919)::text) || md5(g::text), '' ORDER BY g))
  FROM generate_series(1, 2000) g) AS incompressible_ok, length(t) FROM ty_big WHERE id = 4;
-- a large value updated to another large value and to a small one
UPDATE ty_big SET t = repeat('z', 150000) WHERE id = 1;
UPDATE ty_big SET t = 'small' WHERE id = 2;
SELECT id, length(t), left(t, 5) FROM ty_big ORDER BY id;
-- a large value kept across an update of another column
UPDATE ty_big SET b = '\x00' WHERE id = 1;
SELECT length(t), t = repeat('z', 150000) AS same FROM ty_big WHERE id = 1;
-- a rolled-back large update keeps the old value
BEGIN;
UPDATE ty_big SET t = repeat('y', 120000) WHERE id = 1;
ROLLBACK;
SELECT t = repeat('z', 150000) AS still_z FROM ty_big WHERE id = 1;
-- large values in a sort
SELECT id, length(t) FROM ty_big ORDER BY t NULLS FIRST, id;
-- storage settings: EXTERNAL (no compression) and PLAIN
ALTER TABLE ty_big ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO ty_big VALUES (5, repeat('e', 100000), NULL);
SELECT length(t), t = repeat('e', 100000) AS ext_ok FROM ty_big WHERE id = 5;

-- a wide row: 100 columns, some NULL
SELECT 'CREATE TABLE ty_wide (' ||
       string_agg('c' || g || ' int', ', ' ORDER BY g) || ') USING nvm' AS ddl
  FROM generate_series(1, 100) g \gset
:ddl;
SELECT 'INSERT INTO ty_wide VALUES (' ||
       string_agg(CASE WHEN g % 3 = 0 THEN 'NULL' ELSE g::text END, ', ' ORDER BY g) || ')' AS dml
  FROM generate_series(1, 100) g \gset
:dml;
SELECT c1, c2, c3, c99, c100 FROM ty_wide;
SELECT num_nulls(VARIADIC ARRAY(SELECT x FROM json_each_text(row_to_json(w)) AS e(k, x)))
  AS nulls FROM ty_wide w;

-- dropped and added columns: old rows read the new column as NULL or its default
CREATE TABLE ty_alter (a int, b text, c int) USING nvm;
INSERT INTO ty_alter VALUES (1, 'one', 10);
ALTER TABLE ty_alter DROP COLUMN b;
ALTER TABLE ty_alter ADD COLUMN d text DEFAULT 'fast default';
ALTER TABLE ty_alter ADD COLUMN e int;
INSERT INTO ty_alter (a, c, e) VALUES (2, 20, 200);
SELECT * FROM ty_alter ORDER BY a;
UPDATE ty_alter SET c = c + 1;
SELECT * FROM ty_alter ORDER BY a;

-- composite and domain types, enums
CREATE TYPE ty_pair AS (x int, y text);
CREATE DOMAIN ty_pos AS int CHECK (VALUE > 0);
CREATE TYPE ty_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE ty_comp (id int, p ty_pair, q ty_pos, m ty_mood) USING nvm;
INSERT INTO ty_comp VALUES (1, ROW(1, 'a'), 5, 'happy'), (2, NULL, NULL, 'sad');
INSERT INTO ty_comp VALUES (3, ROW(3, 'c'), 0, 'ok');  -- should fail
SELECT id, p, (p).y, q, m FROM ty_comp ORDER BY m, id;

DROP TABLE ty, ty_big, ty_wide, ty_alter, ty_comp;
DROP TYPE ty_pair, ty_mood;
DROP DOMAIN ty_pos;
