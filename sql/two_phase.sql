--
-- two_phase: PREPARE TRANSACTION, COMMIT PREPARED and ROLLBACK PREPARED of
-- transactions that wrote nvm rows.  The prepared transaction's rows stay
-- invisible (to this session's later transactions too) until COMMIT
-- PREPARED, and are gone after ROLLBACK PREPARED; index scans agree.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;
CREATE TABLE tp (id int PRIMARY KEY, v text) USING nvm;
CREATE INDEX tp_v ON tp (v);
INSERT INTO tp SELECT g, 'v' || g FROM generate_series(1, 20) g;

-- insert, update and delete, then prepare
BEGIN;
INSERT INTO tp VALUES (21, 'new21'), (22, 'new22');
UPDATE tp SET v = 'upd' || id WHERE id IN (1, 2);
DELETE FROM tp WHERE id IN (3, 4);
SELECT * FROM tp WHERE id IN (1, 2, 3, 4, 21, 22) ORDER BY id;
PREPARE TRANSACTION 'tp_one';
SELECT gid FROM pg_prepared_xacts WHERE gid = 'tp_one';

-- not visible to later transactions of the same session
SELECT * FROM tp WHERE id IN (1, 2, 3, 4, 21, 22) ORDER BY id;
SELECT count(*), sum(id) FROM tp;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM tp WHERE id IN (1, 2, 3, 4, 21, 22) ORDER BY id;
SELECT id FROM tp WHERE v IN ('upd1', 'new21', 'v1', 'v3') ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- a repeatable-read snapshot taken before COMMIT PREPARED keeps its view
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*), sum(id) FROM tp;
-- (COMMIT PREPARED cannot run inside a transaction block: the outer view
-- is checked by the isolation test two-phase)
ROLLBACK;

-- a non-conflicting write meanwhile works; this session writes on
COMMIT PREPARED 'tp_one';
SELECT count(*) FROM pg_prepared_xacts WHERE gid = 'tp_one';
SELECT * FROM tp WHERE id IN (1, 2, 3, 4, 21, 22) ORDER BY id;
SELECT count(*), sum(id) FROM tp;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM tp WHERE id IN (1, 2, 3, 4, 21, 22) ORDER BY id;
SELECT id FROM tp WHERE v IN ('upd1', 'new21', 'v1', 'v3') ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- ROLLBACK PREPARED: every change is gone
BEGIN;
INSERT INTO tp VALUES (30, 'new30');
UPDATE tp SET v = 'rb' || id WHERE id IN (5, 21);
DELETE FROM tp WHERE id IN (6, 22);
PREPARE TRANSACTION 'tp_two';
SELECT * FROM tp WHERE id IN (5, 6, 21, 22, 30) ORDER BY id;
ROLLBACK PREPARED 'tp_two';
SELECT * FROM tp WHERE id IN (5, 6, 21, 22, 30) ORDER BY id;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM tp WHERE id IN (5, 6, 21, 22, 30) ORDER BY id;
SELECT id FROM tp WHERE v IN ('rb5', 'rb21', 'new30', 'v5', 'new21') ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT count(*), sum(id) FROM tp;

-- the rows of a rolled-back prepared transaction can be written again
INSERT INTO tp VALUES (30, 'again30');
UPDATE tp SET v = 'again5' WHERE id = 5;
SELECT * FROM tp WHERE id IN (5, 30) ORDER BY id;

-- savepoints inside a prepared transaction
BEGIN;
INSERT INTO tp VALUES (40, 'sp40');
SAVEPOINT a;
INSERT INTO tp VALUES (41, 'sp41');
UPDATE tp SET v = 'sp7' WHERE id = 7;
ROLLBACK TO a;
SAVEPOINT b;
INSERT INTO tp VALUES (42, 'sp42');
RELEASE b;
PREPARE TRANSACTION 'tp_three';
-- the prepared transaction holds its rows: a duplicate key waits, so test
-- with a lock timeout; a write of another row goes on
SET lock_timeout = '100ms';
INSERT INTO tp VALUES (40, 'dup');
UPDATE tp SET v = 'other8' WHERE id = 8;
RESET lock_timeout;
COMMIT PREPARED 'tp_three';
SELECT * FROM tp WHERE id IN (7, 8, 40, 41, 42) ORDER BY id;
INSERT INTO tp VALUES (40, 'dup');  -- fails: committed
-- several prepared transactions at once, finished out of order
BEGIN;
INSERT INTO tp VALUES (50, 'p50');
PREPARE TRANSACTION 'tp_a';
BEGIN;
INSERT INTO tp VALUES (51, 'p51');
UPDATE tp SET v = 'p9' WHERE id = 9;
PREPARE TRANSACTION 'tp_b';
BEGIN;
DELETE FROM tp WHERE id = 10;
PREPARE TRANSACTION 'tp_c';
SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'tp\_%' ORDER BY gid;
COMMIT PREPARED 'tp_b';
SELECT * FROM tp WHERE id IN (9, 10, 50, 51) ORDER BY id;
ROLLBACK PREPARED 'tp_a';
COMMIT PREPARED 'tp_c';
SELECT * FROM tp WHERE id IN (9, 10, 50, 51) ORDER BY id;

-- a serializable transaction can be prepared too
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT count(*) FROM tp;
INSERT INTO tp VALUES (60, 's60');
PREPARE TRANSACTION 'tp_s';
COMMIT PREPARED 'tp_s';
SELECT * FROM tp WHERE id = 60;

-- row locks pass to the prepared transaction, foreign-key checks
-- included: writers and lockers that conflict wait for it (a lock timeout
-- here), those that do not go on; COMMIT or ROLLBACK PREPARED releases them
CREATE TABLE tp_parent (id int PRIMARY KEY, v text) USING nvm;
CREATE TABLE tp_child (id int PRIMARY KEY, parent int REFERENCES tp_parent) USING nvm;
INSERT INTO tp_parent VALUES (1, 'a'), (2, 'b'), (3, 'c');
BEGIN;
SELECT id FROM tp_parent WHERE id = 2 FOR UPDATE;
INSERT INTO tp_child VALUES (10, 1);  -- locks parent 1 FOR KEY SHARE
PREPARE TRANSACTION 'tp_locks';
SET lock_timeout = '100ms';
UPDATE tp_parent SET v = 'b2' WHERE id = 2;  -- waits: lock timeout
SELECT id FROM tp_parent WHERE id = 2 FOR SHARE NOWAIT;  -- fails
DELETE FROM tp_parent WHERE id = 1;  -- waits for the key-share lock: lock timeout
UPDATE tp_parent SET v = 'a2' WHERE id = 1;  -- a key-share lock lets this through
SELECT id FROM tp_parent WHERE id = 1 FOR KEY SHARE NOWAIT;
UPDATE tp_parent SET v = 'c2' WHERE id = 3;
RESET lock_timeout;
COMMIT PREPARED 'tp_locks';
UPDATE tp_parent SET v = 'b2' WHERE id = 2;
DELETE FROM tp_parent WHERE id = 1;  -- fails: the child row is committed
SELECT * FROM tp_parent ORDER BY id;
SELECT * FROM tp_child;
BEGIN;
SELECT id FROM tp_parent WHERE id = 3 FOR NO KEY UPDATE;
PREPARE TRANSACTION 'tp_locks2';
SET lock_timeout = '100ms';
UPDATE tp_parent SET v = 'c3' WHERE id = 3;  -- waits: lock timeout
RESET lock_timeout;
ROLLBACK PREPARED 'tp_locks2';
UPDATE tp_parent SET v = 'c3' WHERE id = 3;
SELECT * FROM tp_parent WHERE id = 3;
DROP TABLE tp_child, tp_parent;

-- a table created in a prepared transaction
BEGIN;
CREATE TABLE tp2 (id int PRIMARY KEY) USING nvm;
INSERT INTO tp2 SELECT generate_series(1, 5);
PREPARE TRANSACTION 'tp_create';
COMMIT PREPARED 'tp_create';
SELECT count(*) FROM tp2;
DROP TABLE tp2;

-- everything consistent
SELECT count(*), sum(id) FROM tp;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(id) FROM tp WHERE id > 0;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT bt_index_check('tp_pkey', true);
SELECT bt_index_check('tp_v', true);
SELECT live_rows FROM nvm_table_stats('tp');
VACUUM tp;
SELECT live_rows, dead_rows FROM nvm_table_stats('tp');
SELECT count(*) FROM pg_prepared_xacts;
DROP TABLE tp;
