--
-- delete: DELETE (with RETURNING and USING), TRUNCATE and DROP TABLE, each
-- also rolled back
--
CREATE TABLE del (id int PRIMARY KEY, v text) USING nvm;
INSERT INTO del SELECT g, 'v' || g FROM generate_series(1, 100) g;

DELETE FROM del WHERE id = 1;
DELETE FROM del WHERE id BETWEEN 90 AND 95 RETURNING *;
DELETE FROM del WHERE id = 1;  -- already gone: deletes nothing
DELETE FROM del WHERE id % 10 = 0 RETURNING id;
SELECT count(*), sum(id) FROM del;
-- the deleted keys are not found by any path
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM del WHERE id IN (1, 10, 90, 93, 95, 96) ORDER BY id;
SET enable_indexscan = off;
SELECT count(*), sum(id) FROM del WHERE id > 0;
RESET ALL;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT * FROM del WHERE id IN (1, 10, 90, 93, 95, 96) ORDER BY id;
RESET ALL;
-- a deleted key can be inserted again
INSERT INTO del VALUES (1, 'new one');
SELECT * FROM del WHERE id = 1;

-- DELETE ... USING another table
CREATE TABLE del_keys (id int) USING heap;
INSERT INTO del_keys VALUES (2), (3), (4);
DELETE FROM del USING del_keys WHERE del.id = del_keys.id RETURNING del.*;
SELECT count(*) FROM del WHERE id BETWEEN 2 AND 4;

-- DELETE of a row updated earlier in the same transaction
BEGIN;
UPDATE del SET v = 'updated' WHERE id = 5;
DELETE FROM del WHERE id = 5 RETURNING *;
SELECT count(*) FROM del WHERE id = 5;
COMMIT;
SELECT count(*) FROM del WHERE id = 5;

-- a rolled-back DELETE restores the rows
BEGIN;
DELETE FROM del WHERE id < 50;
SELECT count(*) FROM del;
ROLLBACK;
SELECT count(*), sum(id) FROM del;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, v FROM del WHERE id BETWEEN 6 AND 8 ORDER BY id;
RESET ALL;

-- DELETE everything
DELETE FROM del;
SELECT count(*) FROM del;
INSERT INTO del VALUES (1, 'after delete all');
SELECT * FROM del ORDER BY id;

-- TRUNCATE
INSERT INTO del SELECT g, 'v' || g FROM generate_series(2, 50) g;
TRUNCATE del;
SELECT count(*) FROM del;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM del WHERE id = 1;
RESET ALL;
INSERT INTO del SELECT g, 'w' || g FROM generate_series(1, 20) g;
SELECT count(*), sum(id) FROM del;

-- TRUNCATE rolled back: the rows are still there, through every path
BEGIN;
TRUNCATE del;
SELECT count(*) FROM del;
INSERT INTO del VALUES (100, 'inside');
SELECT * FROM del ORDER BY id;
ROLLBACK;
SELECT count(*), sum(id) FROM del;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM del WHERE id IN (1, 20, 100) ORDER BY id;
RESET ALL;
-- and the table still takes writes
INSERT INTO del VALUES (21, 'w21');
UPDATE del SET v = 'x' || id WHERE id <= 2;
SELECT * FROM del WHERE id IN (1, 2, 21) ORDER BY id;

-- TRUNCATE in a transaction that then commits, and one inside a savepoint
BEGIN;
INSERT INTO del VALUES (22, 'w22');
SAVEPOINT s;
TRUNCATE del;
ROLLBACK TO s;
SELECT count(*) FROM del;
TRUNCATE del;
INSERT INTO del VALUES (1, 'after truncate');
COMMIT;
SELECT * FROM del ORDER BY id;

-- TRUNCATE of a table created in the same transaction
BEGIN;
CREATE TABLE del_new (id int) USING nvm;
INSERT INTO del_new VALUES (1), (2);
TRUNCATE del_new;
INSERT INTO del_new VALUES (3);
COMMIT;
SELECT * FROM del_new ORDER BY id;

-- TRUNCATE of several tables, one of them heap
INSERT INTO del_new VALUES (4);
TRUNCATE del_new, del_keys;
SELECT (SELECT count(*) FROM del_new) AS nvm_rows, (SELECT count(*) FROM del_keys) AS heap_rows;

-- DROP TABLE rolled back: the table and its data are still there
CREATE TABLE del_drop (id int PRIMARY KEY, v text) USING nvm;
INSERT INTO del_drop SELECT g, 'd' || g FROM generate_series(1, 10) g;
BEGIN;
DROP TABLE del_drop;
SELECT count(*) FROM del_drop;  -- should fail
ROLLBACK;
SELECT count(*), sum(id) FROM del_drop;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM del_drop WHERE id = 7;
RESET ALL;
INSERT INTO del_drop VALUES (11, 'd11');
SELECT count(*) FROM del_drop;
-- DROP inside a savepoint that is rolled back
BEGIN;
SAVEPOINT s;
DROP TABLE del_drop;
ROLLBACK TO s;
SELECT count(*) FROM del_drop;
COMMIT;
SELECT count(*) FROM del_drop;

-- CREATE TABLE rolled back: the table does not exist, the name is free
BEGIN;
CREATE TABLE del_gone (id int) USING nvm;
INSERT INTO del_gone VALUES (1);
ROLLBACK;
SELECT count(*) FROM del_gone;  -- should fail
CREATE TABLE del_gone (id int) USING nvm;
SELECT count(*) FROM del_gone;

-- DROP TABLE for real
DROP TABLE del_drop;
SELECT count(*) FROM del_drop;  -- should fail
-- a table of the same name is new and empty
CREATE TABLE del_drop (id int PRIMARY KEY, v text) USING nvm;
SELECT count(*) FROM del_drop;

DROP TABLE del, del_keys, del_new, del_drop, del_gone;
