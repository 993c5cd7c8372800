--
-- Row locks live in the rows' lock words, not in the lock manager: one
-- transaction can lock any number of rows with the default
-- max_locks_per_transaction, as on heap.
--
SHOW max_locks_per_transaction;
CREATE TABLE rl_parent (id int PRIMARY KEY, v int NOT NULL) USING nvm;
CREATE TABLE rl_child (id int PRIMARY KEY, parent int NOT NULL REFERENCES rl_parent) USING nvm;
ALTER TABLE rl_parent SET (autovacuum_enabled = off);
INSERT INTO rl_parent SELECT g, 0 FROM generate_series(1, 100000) g;

-- one statement inserting 100,000 children of 100,000 distinct parents:
-- each foreign-key check locks its parent FOR KEY SHARE
INSERT INTO rl_child SELECT g, g FROM generate_series(1, 100000) g;
SELECT count(*), count(DISTINCT parent) FROM rl_child;

-- every row of a table, in each mode, in one transaction
BEGIN;
SELECT count(*) FROM (SELECT id FROM rl_parent FOR KEY SHARE) s;
SELECT count(*) FROM (SELECT id FROM rl_parent FOR SHARE) s;
SELECT count(*) FROM (SELECT id FROM rl_parent FOR NO KEY UPDATE) s;
SELECT count(*) FROM (SELECT id FROM rl_parent FOR UPDATE) s;
-- no row lock holds a lock-table entry
SELECT count(*) FROM pg_locks WHERE locktype = 'tuple' AND pid = pg_backend_pid();
-- the holder may write what it locked
UPDATE rl_parent SET v = 1 WHERE id <= 3;
DELETE FROM rl_child WHERE id = 100000;
DELETE FROM rl_parent WHERE id = 100000;
COMMIT;
SELECT sum(v), count(*) FROM rl_parent;

-- a lock taken in a subtransaction that rolls back is gone, one taken
-- before it stays (checked from another session in specs/row-lock-multi)
BEGIN;
SELECT id FROM rl_parent WHERE id = 1 FOR KEY SHARE;
SAVEPOINT s;
SELECT id FROM rl_parent WHERE id = 1 FOR UPDATE;
ROLLBACK TO s;
SELECT id FROM rl_parent WHERE id = 1 FOR UPDATE;
COMMIT;

-- NOWAIT and SKIP LOCKED on rows the same transaction locked
BEGIN;
SELECT id FROM rl_parent WHERE id <= 2 ORDER BY id FOR UPDATE NOWAIT;
SELECT id FROM rl_parent WHERE id <= 3 ORDER BY id FOR UPDATE SKIP LOCKED;
COMMIT;

-- once their lockers have ended, VACUUM clears the lock words (each row's
-- once), and finds none the second time
CREATE TABLE rl_vac (id int PRIMARY KEY) USING nvm WITH (autovacuum_enabled = off);
INSERT INTO rl_vac SELECT generate_series(1, 1000);
SELECT count(*) FROM (SELECT id FROM rl_vac FOR KEY SHARE) s;
VACUUM (VERBOSE, PROCESS_TOAST false) rl_vac;
VACUUM (VERBOSE, PROCESS_TOAST false) rl_vac;

DROP TABLE rl_child, rl_parent, rl_vac;
