--
-- xmin of nvm rows is a row-version token (src/pg/xact/nvm_token.c): the same
-- for every row one (sub)transaction writes, different for every other
-- writer, and safe wherever PostgreSQL expects an xid.
--
CREATE TABLE xt (id int PRIMARY KEY, v int NOT NULL) USING nvm;
CREATE TABLE xt_seen (what text, x xid);
INSERT INTO xt VALUES (1, 0), (2, 0), (3, 0);

-- one transaction's rows share their xmin
SELECT count(DISTINCT xmin::text) FROM xt;
INSERT INTO xt_seen SELECT 'insert', xmin FROM xt WHERE id = 1;

-- an update by another transaction gives the row a new xmin ...
UPDATE xt SET v = v + 1 WHERE id = 1;
SELECT xmin <> (SELECT x FROM xt_seen WHERE what = 'insert') AS changed FROM xt WHERE id = 1;
-- ... the rows it did not touch keep theirs
SELECT count(*) FROM xt WHERE xmin = (SELECT x FROM xt_seen WHERE what = 'insert');
-- an update that writes the same values changes it too
INSERT INTO xt_seen SELECT 'update', xmin FROM xt WHERE id = 1;
UPDATE xt SET v = v WHERE id = 1;
SELECT xmin <> (SELECT x FROM xt_seen WHERE what = 'update') AS changed FROM xt WHERE id = 1;

-- optimistic concurrency: an update guarded by the xmin read earlier
-- affects no row once the row has changed (here by a later transaction)
INSERT INTO xt_seen SELECT 'token', xmin FROM xt WHERE id = 2;
UPDATE xt SET v = 10 WHERE id = 2 AND xmin = (SELECT x FROM xt_seen WHERE what = 'token');
UPDATE xt SET v = 20 WHERE id = 2 AND xmin = (SELECT x FROM xt_seen WHERE what = 'token');
SELECT v FROM xt WHERE id = 2;
-- the value RETURNING gives is the one the row keeps after commit
WITH u AS (UPDATE xt SET v = 30 WHERE id = 3 RETURNING xmin AS x)
INSERT INTO xt_seen SELECT 'returned', x FROM u;
SELECT xmin = (SELECT x FROM xt_seen WHERE what = 'returned') AS same FROM xt WHERE id = 3;

-- savepoints: as on heap, rows of a subtransaction have their own xmin,
-- rows written before and after a released savepoint share the parent's
BEGIN;
INSERT INTO xt VALUES (6, 0);
SAVEPOINT one;
INSERT INTO xt VALUES (7, 0);
RELEASE SAVEPOINT one;
INSERT INTO xt VALUES (8, 0);
SAVEPOINT two;
INSERT INTO xt VALUES (9, 0);
ROLLBACK TO SAVEPOINT two;
INSERT INTO xt VALUES (10, 0);
COMMIT;
SELECT a.id, b.id, a.xmin = b.xmin AS same
  FROM xt a, xt b WHERE a.id < b.id AND a.id >= 6 ORDER BY 1, 2;
-- two transactions never share one
SELECT count(*) FROM xt a, xt b WHERE a.id IN (1, 2, 3) AND b.id >= 6 AND a.xmin = b.xmin;

-- functions that take an xid: age() is positive; the commit timestamp is
-- not known (here its error, as for heap's rows: track_commit_timestamp is
-- off); the status is unknown: NULL, or (while the cluster is in its first
-- xid epoch) the error of an xid in the future; never a transaction's
SELECT bool_and(age(xmin) > 0) FROM xt;
SELECT pg_xact_commit_timestamp(xmin) FROM xt WHERE id = 1;
CREATE FUNCTION xt_status(x xid, old_api bool) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  IF old_api THEN
    RETURN coalesce(txid_status(x::text::bigint), 'unknown');
  END IF;
  RETURN coalesce(pg_xact_status(x::text::xid8), 'unknown');
EXCEPTION WHEN invalid_parameter_value THEN
  IF SQLERRM LIKE 'transaction ID % is in the future' THEN
    RETURN 'unknown';
  END IF;
  RAISE;
END $$;
SELECT DISTINCT xt_status(xmin, false) AS pg_xact_status, xt_status(xmin, true) AS txid_status FROM xt;

DROP FUNCTION xt_status(xid, bool);
DROP TABLE xt, xt_seen;
