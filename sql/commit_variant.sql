--
-- commit_variant: with nvm.commit_variant = dbxn the rows of new versions
-- are written by non-temporal stores, padded (DBX-N's technique).  Rows of
-- every size read back exactly as heap's, through a sequential scan and
-- through the index, after inserts, a multi-row COPY, updates and deletes;
-- and a row's bytes are no longer written back line by line (the bytes
-- flushed per inserted row drop by about the row's size).
--
SHOW nvm.commit_variant;
CREATE FUNCTION cv_row(g int) RETURNS text LANGUAGE sql IMMUTABLE AS
  $$ SELECT coalesce(string_agg(md5(g::text || ':' || i::text), ''), '')
       FROM generate_series(1, g % 57) i $$;
CREATE TABLE cv (id int PRIMARY KEY, s text) USING nvm;
CREATE TABLE cv_heap (id int PRIMARY KEY, s text) USING heap;
SET nvm.commit_variant = dbxn;
SHOW nvm.commit_variant;
INSERT INTO cv SELECT g, cv_row(g) FROM generate_series(1, 300) g;
COPY cv (id) FROM PROGRAM 'seq 301 400';
UPDATE cv SET s = cv_row(id) WHERE id > 300;
UPDATE cv SET s = s || 'x' WHERE id % 3 = 0;
DELETE FROM cv WHERE id % 7 = 0;
INSERT INTO cv_heap SELECT g, cv_row(g) FROM generate_series(1, 400) g;
UPDATE cv_heap SET s = s || 'x' WHERE id % 3 = 0;
DELETE FROM cv_heap WHERE id % 7 = 0;
SELECT count(*), sum(length(s)), max(length(s)) FROM cv;
SELECT (SELECT md5(string_agg(id || '=' || s, ',' ORDER BY id)) FROM cv) =
       (SELECT md5(string_agg(id || '=' || s, ',' ORDER BY id)) FROM cv_heap) AS same_rows_as_heap;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FILTER (WHERE cv.s = h.s) AS same, count(*) AS looked_up
  FROM cv_heap h, LATERAL (SELECT s FROM cv WHERE cv.id = h.id) cv;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- bytes flushed for 100 rows of about 1,800 bytes each: standard, then dbxn
SET nvm.commit_variant = standard;
SELECT bytes_flushed AS b0 FROM nvm_backend_stats() \gset
INSERT INTO cv SELECT g, cv_row(56) FROM generate_series(1001, 1100) g;
SELECT bytes_flushed - :b0 AS standard_bytes FROM nvm_backend_stats() \gset
SET nvm.commit_variant = dbxn;
SELECT bytes_flushed AS b0 FROM nvm_backend_stats() \gset
INSERT INTO cv SELECT g, cv_row(56) FROM generate_series(2001, 2100) g;
SELECT :standard_bytes - (bytes_flushed - :b0) >= 100 * 1700 AS row_bytes_not_flushed
  FROM nvm_backend_stats();
SELECT count(*) FILTER (WHERE s = cv_row(56)) AS exact, count(*) FROM cv WHERE id > 1000;
RESET nvm.commit_variant;
DROP TABLE cv, cv_heap;
DROP FUNCTION cv_row(int);
