--
-- toast: wide values of nvm tables are compressed and moved out of line
-- into a heap TOAST table, as on heap
--
CREATE TABLE tt (id int PRIMARY KEY, note text, big text) USING nvm;
CREATE TABLE tt_heap (id int PRIMARY KEY, note text, big text) USING heap;
SELECT c.reltoastrelid <> 0 AS has_toast_table, a.amname AS toast_table_am
  FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid JOIN pg_am a ON a.oid = t.relam
 WHERE c.oid = 'tt'::regclass;
-- a table of fixed-width columns needs none, as on heap
CREATE TABLE tt_narrow (a int, b bigint) USING nvm;
SELECT reltoastrelid = 0 AS no_toast_table FROM pg_class WHERE oid = 'tt_narrow'::regclass;
SELECT reltoastrelid::regclass AS toastrel FROM pg_class WHERE oid = 'tt'::regclass \gset

-- compressible values are compressed inline, incompressible ones go out of line
INSERT INTO tt VALUES (1, 'compressible', repeat('0123456789', 1000));
INSERT INTO tt SELECT 2, 'incompressible', string_agg(md5(g::text), '') FROM generate_series(1, 500) g;
INSERT INTO tt VALUES (3, 'narrow', 'short');
SELECT id, note, length(big), pg_column_compression(big), pg_column_size(big) < length(big) AS smaller
  FROM tt ORDER BY id;
SELECT count(DISTINCT chunk_id) AS toasted_values FROM :toastrel;
SELECT md5(big) = md5((SELECT string_agg(md5(g::text), '') FROM generate_series(1, 500) g)) AS same
  FROM tt WHERE id = 2;

-- the column's compression method is honoured
ALTER TABLE tt ALTER COLUMN big SET COMPRESSION lz4;
INSERT INTO tt VALUES (4, 'lz4', repeat('abcdefghij', 1000));
SELECT id, pg_column_compression(big) FROM tt WHERE id IN (1, 4) ORDER BY id;
ALTER TABLE tt ALTER COLUMN big SET COMPRESSION pglz;

-- an update that leaves the wide column alone keeps its TOAST pointer:
-- nothing is copied, and the value stays readable
UPDATE tt SET note = 'renamed' WHERE id = 2;
SELECT count(DISTINCT chunk_id) AS toasted_values FROM :toastrel;
SELECT note, length(big), md5(big) = md5((SELECT string_agg(md5(g::text), '') FROM generate_series(1, 500) g)) AS same
  FROM tt WHERE id = 2;

-- an update of the wide column replaces the value; the old one is deleted
-- by the updating transaction (older snapshots still read it: see the
-- isolation spec toast-snapshot) and goes with VACUUM
BEGIN;
UPDATE tt SET big = string_agg_md5 FROM
  (SELECT string_agg(md5((g + 1)::text), '') AS string_agg_md5 FROM generate_series(1, 500) g) s
 WHERE id = 2;
SELECT n_tup_ins AS chunks_saved, n_tup_del AS chunks_deleted
  FROM pg_stat_xact_all_tables WHERE relid = :'toastrel'::regclass;
COMMIT;
VACUUM tt;
SELECT count(DISTINCT chunk_id) AS toasted_values FROM :toastrel;
SELECT md5(big) = md5((SELECT string_agg(md5((g + 1)::text), '') FROM generate_series(1, 500) g)) AS new_value
  FROM tt WHERE id = 2;

-- rolled back: the insert's values are gone, the delete's are kept
BEGIN;
INSERT INTO tt SELECT 5, 'rolled back', string_agg(md5((g + 7)::text), '') FROM generate_series(1, 500) g;
DELETE FROM tt WHERE id = 2;
ROLLBACK;
VACUUM tt;
SELECT count(DISTINCT chunk_id) AS toasted_values FROM :toastrel;
SELECT id, length(big) FROM tt ORDER BY id;

-- a savepoint rolled back takes its values with it
BEGIN;
SAVEPOINT a;
UPDATE tt SET big = big || 'x' WHERE id = 2;
ROLLBACK TO a;
UPDATE tt SET note = 'kept' WHERE id = 2;
COMMIT;
SELECT note, length(big) FROM tt WHERE id = 2;

-- ON CONFLICT DO UPDATE with wide values
INSERT INTO tt SELECT 2, 'upserted', string_agg(md5((g + 3)::text), '') FROM generate_series(1, 500) g
    ON CONFLICT (id) DO UPDATE SET big = excluded.big, note = excluded.note;
SELECT note, md5(big) = md5((SELECT string_agg(md5((g + 3)::text), '') FROM generate_series(1, 500) g)) AS upserted
  FROM tt WHERE id = 2;

-- values brought along from a heap table's TOAST table are copied, not shared
INSERT INTO tt_heap SELECT 10, 'from heap', string_agg(md5((g + 5)::text), '') FROM generate_series(1, 500) g;
INSERT INTO tt SELECT * FROM tt_heap;
DELETE FROM tt_heap;
VACUUM tt_heap;
SELECT length(big), md5(big) = md5((SELECT string_agg(md5((g + 5)::text), '') FROM generate_series(1, 500) g)) AS same
  FROM tt WHERE id = 10;

-- deleting a row deletes its values
DELETE FROM tt WHERE id = 10;
VACUUM tt;
SELECT count(DISTINCT chunk_id) AS toasted_values FROM :toastrel;

-- toast_tuple_target is honoured as on heap: with the default target one
-- of two 1,600-byte incompressible values moves out of line, with 256 both
CREATE TABLE tt_target (id int, a text, b text) USING nvm WITH (toast_tuple_target = 256);
CREATE TABLE tt_default (id int, a text, b text) USING nvm;
INSERT INTO tt_target SELECT 1, s, s FROM (SELECT string_agg(md5(g::text), '') AS s FROM generate_series(1, 50) g) v;
INSERT INTO tt_default SELECT * FROM tt_target;
SELECT (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = 'tt_target'::regclass) AS target_toastrel,
       (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = 'tt_default'::regclass) AS default_toastrel \gset
SELECT (SELECT count(DISTINCT chunk_id) FROM :target_toastrel) AS out_of_line_target_256,
       (SELECT count(DISTINCT chunk_id) FROM :default_toastrel) AS out_of_line_default_target;

-- rewrites (CLUSTER, VACUUM FULL, ALTER TABLE ... TYPE) keep every value
CLUSTER tt USING tt_pkey;
VACUUM FULL tt;
ALTER TABLE tt ALTER COLUMN note TYPE varchar(100);
SELECT id, note, length(big), md5(big) FROM tt ORDER BY id;
SELECT reltoastrelid::regclass AS toastrel FROM pg_class WHERE oid = 'tt'::regclass \gset
SELECT count(DISTINCT chunk_id) AS toasted_values FROM :toastrel;
-- the rewritten TOAST table has a recent relfrozenxid, so its VACUUM is an
-- ordinary one (no wraparound failsafe warning), and VACUUM of the nvm
-- table keeps the table's own relfrozenxid recent too
VACUUM tt;
SELECT age(c.relfrozenxid) < 100 AS table_frozenxid_recent,
       age(t.relfrozenxid) < 100 AS toast_frozenxid_recent
  FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid
 WHERE c.oid = 'tt'::regclass;

-- an index on a toasted column works, and TRUNCATE empties the TOAST table
CREATE INDEX tt_big_md5 ON tt (md5(big));
SET enable_seqscan = off;
SELECT id FROM tt WHERE md5(big) = (SELECT md5(big) FROM tt WHERE id = 2);
RESET enable_seqscan;
TRUNCATE tt;
SELECT reltoastrelid::regclass AS toastrel FROM pg_class WHERE oid = 'tt'::regclass \gset
SELECT pg_relation_size(:'toastrel') AS toast_size_after_truncate;

DROP TABLE tt, tt_heap, tt_narrow, tt_target, tt_default;
