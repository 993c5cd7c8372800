--
-- transactions: savepoints (ROLLBACK TO, RELEASE, nesting), subtransactions
-- in PL/pgSQL, prepared statements, cursors seeing a stable snapshot
--
CREATE TABLE sp (id int PRIMARY KEY, v int) USING nvm;
INSERT INTO sp SELECT g, g FROM generate_series(1, 10) g;

-- rows inserted, updated and deleted in a rolled-back savepoint are gone / restored
BEGIN;
INSERT INTO sp VALUES (11, 11);
SAVEPOINT a;
INSERT INTO sp VALUES (12, 12);
UPDATE sp SET v = -1 WHERE id IN (1, 11);
DELETE FROM sp WHERE id IN (2, 3);
SELECT id, v FROM sp WHERE id IN (1, 2, 3, 11, 12) ORDER BY id;
ROLLBACK TO a;
SELECT id, v FROM sp WHERE id IN (1, 2, 3, 11, 12) ORDER BY id;
-- work after ROLLBACK TO is kept
UPDATE sp SET v = 100 WHERE id = 1;
COMMIT;
SELECT * FROM sp ORDER BY id;
-- the same through an index scan
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM sp WHERE id IN (1, 2, 3, 11, 12) ORDER BY id;
RESET ALL;

-- RELEASE keeps the savepoint's work
BEGIN;
SAVEPOINT a;
INSERT INTO sp VALUES (13, 13);
RELEASE a;
SAVEPOINT b;
DELETE FROM sp WHERE id = 13;
ROLLBACK TO b;
COMMIT;
SELECT * FROM sp WHERE id = 13;

-- the same row updated in nested savepoints
BEGIN;
UPDATE sp SET v = 1000 WHERE id = 4;
SAVEPOINT s1;
UPDATE sp SET v = 1001 WHERE id = 4;
SAVEPOINT s2;
UPDATE sp SET v = 1002 WHERE id = 4;
SAVEPOINT s3;
UPDATE sp SET v = 1003 WHERE id = 4;
SELECT v FROM sp WHERE id = 4;
ROLLBACK TO s3;
SELECT v FROM sp WHERE id = 4;
ROLLBACK TO s2;
SELECT v FROM sp WHERE id = 4;
UPDATE sp SET v = 1004 WHERE id = 4;
RELEASE s2;
SELECT v FROM sp WHERE id = 4;
ROLLBACK TO s1;
SELECT v FROM sp WHERE id = 4;
COMMIT;
SELECT v FROM sp WHERE id = 4;

-- a key moved in a savepoint that is rolled back: the old key is back in every index
BEGIN;
SAVEPOINT k;
UPDATE sp SET id = 500 WHERE id = 5;
INSERT INTO sp VALUES (5, -5);
ROLLBACK TO k;
COMMIT;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM sp WHERE id IN (5, 500) ORDER BY id;
RESET ALL;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT * FROM sp WHERE id IN (5, 500) ORDER BY id;
RESET ALL;

-- a row inserted in a savepoint, updated in a nested one, deleted in a third
BEGIN;
SAVEPOINT x;
INSERT INTO sp VALUES (14, 14);
SAVEPOINT y;
UPDATE sp SET v = 140 WHERE id = 14;
SAVEPOINT z;
DELETE FROM sp WHERE id = 14;
ROLLBACK TO z;
SELECT * FROM sp WHERE id = 14;
RELEASE y;
COMMIT;
SELECT * FROM sp WHERE id = 14;

-- an error inside a savepoint, then recovery
BEGIN;
INSERT INTO sp VALUES (15, 15);
SAVEPOINT e;
INSERT INTO sp VALUES (15, 150);  -- should fail
ROLLBACK TO e;
INSERT INTO sp VALUES (16, 16);
COMMIT;
SELECT * FROM sp WHERE id >= 15 ORDER BY id;
-- an error without a savepoint aborts the whole transaction
BEGIN;
INSERT INTO sp VALUES (17, 17);
INSERT INTO sp VALUES (17, 17);  -- should fail
SELECT 1;  -- should fail
COMMIT;
SELECT count(*) FROM sp WHERE id = 17;

-- PL/pgSQL exception blocks are subtransactions
CREATE FUNCTION sp_try(k int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  UPDATE sp SET v = v + 1 WHERE id = 1;
  BEGIN
    UPDATE sp SET v = v + 1000 WHERE id = 1;
    INSERT INTO sp VALUES (k, k);
    RETURN 'inserted';
  EXCEPTION WHEN unique_violation THEN
    RETURN 'duplicate';
  END;
END $$;
SELECT v FROM sp WHERE id = 1;
SELECT sp_try(18);
SELECT sp_try(18);
-- the first call added 1 + 1000, the second only 1
SELECT v FROM sp WHERE id = 1;
DROP FUNCTION sp_try(int);

-- many subtransactions in one transaction
DO $$
BEGIN
  FOR i IN 1..200 LOOP
    BEGIN
      INSERT INTO sp VALUES (1000 + i, i);
      IF i % 2 = 0 THEN RAISE EXCEPTION 'undo'; END IF;
    EXCEPTION WHEN raise_exception THEN NULL;
    END;
  END LOOP;
END $$;
SELECT count(*), sum(v) FROM sp WHERE id > 1000;

-- prepared statements
PREPARE sp_ins(int, int) AS INSERT INTO sp VALUES ($1, $2) RETURNING *;
PREPARE sp_get(int) AS SELECT * FROM sp WHERE id = $1;
PREPARE sp_upd(int, int) AS UPDATE sp SET v = $2 WHERE id = $1;
PREPARE sp_del(int) AS DELETE FROM sp WHERE id = $1;
EXECUTE sp_ins(20, 200);
EXECUTE sp_get(20);
EXECUTE sp_upd(20, 201);
EXECUTE sp_get(20);
-- more than five executions, so that a generic plan is used
EXECUTE sp_get(1);
EXECUTE sp_get(2);
EXECUTE sp_get(3);
EXECUTE sp_get(4);
EXECUTE sp_get(5);
EXECUTE sp_get(6);
EXECUTE sp_get(20);
EXECUTE sp_del(20);
EXECUTE sp_get(20);
EXECUTE sp_ins(20, 202);  -- the key is free again
EXECUTE sp_ins(20, 203);  -- should fail
SET plan_cache_mode = force_generic_plan;
PREPARE sp_range(int, int) AS SELECT count(*), sum(v) FROM sp WHERE id BETWEEN $1 AND $2;
EXECUTE sp_range(1, 10);
EXECUTE sp_range(1000, 2000);
RESET plan_cache_mode;
DEALLOCATE ALL;

-- a cursor keeps the snapshot it was opened with
BEGIN;
DECLARE cur CURSOR FOR SELECT id, v FROM sp WHERE id <= 4 ORDER BY id;
FETCH 1 FROM cur;
UPDATE sp SET v = -v WHERE id <= 4;
FETCH ALL FROM cur;
SELECT id, v FROM sp WHERE id <= 4 ORDER BY id;
ROLLBACK;

-- a statement sees the state from its start; a later statement sees its effects
BEGIN;
UPDATE sp SET v = v + 1 WHERE id = 6;
SELECT v FROM sp WHERE id = 6;
UPDATE sp SET v = v + 1 WHERE id = 6;
SELECT v FROM sp WHERE id = 6;
COMMIT;

-- REPEATABLE READ transactions (single session): own writes are visible
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT v FROM sp WHERE id = 7;
UPDATE sp SET v = 77 WHERE id = 7;
SELECT v FROM sp WHERE id = 7;
COMMIT;
SELECT v FROM sp WHERE id = 7;
-- a read-only transaction cannot write
BEGIN READ ONLY;
SELECT count(*) FROM sp WHERE id <= 10;
UPDATE sp SET v = 0;  -- should fail
ROLLBACK;

-- an insert into an indexed table takes no xid: a uniqueness check of
-- another session waits on the lock of its xid stand-in instead (a
-- speculative-token lock, held at the top level until the end)
BEGIN;
INSERT INTO sp VALUES (5020, 20);
SAVEPOINT a;
INSERT INTO sp VALUES (5021, 21);
ROLLBACK TO a;
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
SELECT locktype, mode, granted FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype IN ('spectoken', 'transactionid');
COMMIT;
-- a transaction that has an xid already publishes it: no stand-in
BEGIN;
SELECT pg_current_xact_id() IS NOT NULL AS has_xid;
INSERT INTO sp VALUES (5022, 22);
SELECT locktype, mode, granted FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype IN ('spectoken', 'transactionid');
COMMIT;
-- a change of a non-indexed column needs neither
BEGIN;
UPDATE sp SET v = 23 WHERE id = 5022;
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
SELECT count(*) AS waits_to_offer FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype IN ('spectoken', 'transactionid');
COMMIT;
SELECT id, v FROM sp WHERE id >= 5000 ORDER BY id;

DROP TABLE sp;
