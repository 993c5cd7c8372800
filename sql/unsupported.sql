--
-- unsupported: features an nvm table does not support fail with a clean
-- error (FEATURE_NOT_SUPPORTED, with a hint), and the table is intact after
-- each of them
--
\set VERBOSITY default
CREATE TABLE un (id int PRIMARY KEY, v text) USING nvm;
INSERT INTO un SELECT g, 'v' || g FROM generate_series(1, 100) g;
-- the SQLSTATE of a failure, without its text
CREATE FUNCTION un_sqlstate(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;

-- a plain CREATE INDEX works
CREATE INDEX un_v ON un (v);

-- tablespaces (an in-place tablespace needs no directory; moving tables
-- between tablespaces is in persistence)
SET allow_in_place_tablespaces = true;
CREATE TABLESPACE regress_nvm_space LOCATION '';
RESET allow_in_place_tablespaces;
-- (a new nvm table may name a tablespace: its rows live in the pool anyway)
CREATE TABLE un_ts (id int) USING nvm TABLESPACE regress_nvm_space;
INSERT INTO un_ts VALUES (1), (2);
SELECT sum(id) FROM un_ts;
-- the index of an nvm table is an ordinary relation and can move
ALTER INDEX un_v SET TABLESPACE regress_nvm_space;
ALTER INDEX un_v SET TABLESPACE pg_default;

-- SERIALIZABLE transactions are supported (specs/serializable.spec shows
-- their conflicts); here they just read and write
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT count(*) > 0 AS rows_read FROM un;
INSERT INTO un VALUES (1000, 'x');
SELECT count(*) FROM un WHERE id = 1000;
ROLLBACK;
SET default_transaction_isolation = serializable;
SELECT count(*) FROM un WHERE id = 1000;
RESET default_transaction_isolation;

-- after all of the above, the table is intact and usable
SELECT count(*), sum(id) FROM un;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM un WHERE id IN (1, 50, 100, 1000, 1001) ORDER BY id;
RESET ALL;
INSERT INTO un VALUES (101, 'v101');
UPDATE un SET v = 'changed' WHERE id = 1;
DELETE FROM un WHERE id = 2;
SELECT count(*), sum(id) FROM un;

DROP TABLE un, un_ts;
DROP TABLESPACE regress_nvm_space;
DROP FUNCTION un_sqlstate(text);
