--
-- constraints: primary keys, unique constraints, foreign keys (between nvm
-- tables and between nvm and heap tables)
--
\set VERBOSITY default
CREATE TABLE pk (id int PRIMARY KEY, code text UNIQUE, v int) USING nvm;
INSERT INTO pk VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30);

-- duplicate keys are refused (unique_violation, 23505)
INSERT INTO pk VALUES (1, 'z', 0);  -- should fail
INSERT INTO pk VALUES (4, 'a', 0);  -- should fail
INSERT INTO pk VALUES (4, 'd', 40), (4, 'e', 50);  -- should fail
-- the SQLSTATE itself
DO $$ BEGIN
  INSERT INTO pk VALUES (2, 'y', 0);
EXCEPTION WHEN unique_violation THEN
  RAISE NOTICE 'caught %', SQLSTATE;
END $$;
-- an update that would create a duplicate is refused
UPDATE pk SET id = 2 WHERE id = 1;  -- should fail
UPDATE pk SET code = 'c' WHERE id = 1;  -- should fail
-- a whole-table key shift that is unique only at the end is refused too
-- (the constraint is not deferrable, as for heap)
UPDATE pk SET id = id + 1;  -- should fail
SELECT * FROM pk ORDER BY id;

-- a key freed by DELETE or UPDATE in the same transaction can be reused
BEGIN;
DELETE FROM pk WHERE id = 3;
INSERT INTO pk VALUES (3, 'c2', 31);
UPDATE pk SET id = 30 WHERE id = 3;
INSERT INTO pk VALUES (3, 'c3', 32);
COMMIT;
SELECT * FROM pk ORDER BY id;
-- a key freed by an aborted insert can be used
BEGIN;
INSERT INTO pk VALUES (5, 'e', 50);
ROLLBACK;
INSERT INTO pk VALUES (5, 'e', 50);
-- and a key whose delete was rolled back is still taken
BEGIN;
DELETE FROM pk WHERE id = 5;
ROLLBACK;
INSERT INTO pk VALUES (5, 'e again', 0);  -- should fail
SELECT * FROM pk ORDER BY id;

-- NULLs do not collide in a unique constraint
INSERT INTO pk VALUES (6, NULL, 0), (7, NULL, 0);
SELECT count(*) FROM pk WHERE code IS NULL;
-- but a primary key column cannot be NULL
INSERT INTO pk VALUES (NULL, 'n', 0);  -- should fail

-- a deferrable unique constraint allows the shift, checked at commit
CREATE TABLE pk_def (id int UNIQUE DEFERRABLE INITIALLY IMMEDIATE) USING nvm;
INSERT INTO pk_def SELECT generate_series(1, 5);
UPDATE pk_def SET id = id + 1;
SELECT id FROM pk_def ORDER BY id;
BEGIN;
SET CONSTRAINTS ALL DEFERRED;
INSERT INTO pk_def VALUES (2);
COMMIT;  -- should fail
SELECT id FROM pk_def ORDER BY id;

-- an exclusion constraint
CREATE TABLE pk_excl (r int4range, EXCLUDE USING gist (r WITH &&)) USING nvm;
INSERT INTO pk_excl VALUES ('[1,5)'), ('[5,10)');
INSERT INTO pk_excl VALUES ('[3,7)');  -- should fail
SELECT r FROM pk_excl ORDER BY r;

-- a primary key added to a filled table checks the existing rows
CREATE TABLE pk_late (id int, v text) USING nvm;
INSERT INTO pk_late VALUES (1, 'a'), (2, 'b'), (2, 'c');
ALTER TABLE pk_late ADD PRIMARY KEY (id);  -- should fail
DELETE FROM pk_late WHERE v = 'c';
ALTER TABLE pk_late ADD PRIMARY KEY (id);
INSERT INTO pk_late VALUES (2, 'd');  -- should fail

-- foreign keys
CREATE TABLE fk_parent (id int PRIMARY KEY, name text) USING nvm;
CREATE TABLE fk_child (id int PRIMARY KEY, parent_id int REFERENCES fk_parent (id),
  note text) USING nvm;
INSERT INTO fk_parent VALUES (1, 'one'), (2, 'two'), (3, 'three');
INSERT INTO fk_child VALUES (10, 1, 'x'), (11, 1, 'y'), (12, 2, 'z'), (13, NULL, 'orphan ok');
-- a child pointing at no parent is refused
INSERT INTO fk_child VALUES (14, 99, 'bad');  -- should fail
UPDATE fk_child SET parent_id = 98 WHERE id = 10;  -- should fail
-- a referenced parent cannot be deleted nor have its key changed
DELETE FROM fk_parent WHERE id = 1;  -- should fail
UPDATE fk_parent SET id = 100 WHERE id = 2;  -- should fail
-- an unreferenced one can, and a non-key change of a referenced one is fine
DELETE FROM fk_parent WHERE id = 3;
UPDATE fk_parent SET name = 'ONE' WHERE id = 1;
SELECT * FROM fk_parent ORDER BY id;
SELECT * FROM fk_child ORDER BY id;
-- a parent inserted and referenced in one transaction
BEGIN;
INSERT INTO fk_parent VALUES (4, 'four');
INSERT INTO fk_child VALUES (14, 4, 'new');
COMMIT;
-- a parent deleted in the same transaction cannot be referenced
BEGIN;
DELETE FROM fk_child WHERE parent_id = 4;
DELETE FROM fk_parent WHERE id = 4;
INSERT INTO fk_child VALUES (15, 4, 'too late');  -- should fail
ROLLBACK;
SELECT c.id, p.name FROM fk_child c JOIN fk_parent p ON p.id = c.parent_id ORDER BY c.id;

-- ON DELETE CASCADE and ON UPDATE CASCADE
CREATE TABLE fk_cascade (id int PRIMARY KEY,
  parent_id int REFERENCES fk_parent (id) ON DELETE CASCADE ON UPDATE CASCADE) USING nvm;
INSERT INTO fk_cascade VALUES (20, 1), (21, 1), (22, 2), (23, 4);
DELETE FROM fk_child WHERE parent_id IN (2, 4);
DELETE FROM fk_parent WHERE id = 4;
SELECT * FROM fk_cascade ORDER BY id;
UPDATE fk_child SET parent_id = NULL WHERE parent_id = 2;
UPDATE fk_parent SET id = 200 WHERE id = 2;
SELECT * FROM fk_cascade ORDER BY id;
-- ON DELETE SET NULL
CREATE TABLE fk_setnull (id int PRIMARY KEY,
  parent_id int REFERENCES fk_parent (id) ON DELETE SET NULL) USING nvm;
INSERT INTO fk_setnull VALUES (30, 200);
DELETE FROM fk_cascade WHERE parent_id = 200;
DELETE FROM fk_parent WHERE id = 200;
SELECT * FROM fk_setnull ORDER BY id;
-- a cascade that is rolled back
BEGIN;
DELETE FROM fk_child WHERE parent_id = 1;
DELETE FROM fk_parent WHERE id = 1;
SELECT count(*) FROM fk_cascade;
ROLLBACK;
SELECT * FROM fk_cascade ORDER BY id;

-- a self-referencing table: deleting a parent cascades through its subtree
CREATE TABLE fk_tree (id int PRIMARY KEY, up int REFERENCES fk_tree (id) ON DELETE CASCADE)
  USING nvm;
INSERT INTO fk_tree VALUES (1, NULL), (2, 1), (3, 1), (4, 2), (5, 4), (6, 3), (7, NULL);
DELETE FROM fk_tree WHERE id = 2;
SELECT * FROM fk_tree ORDER BY id;

-- foreign keys across access methods, both ways
CREATE TABLE fk_heap_parent (id int PRIMARY KEY) USING heap;
CREATE TABLE fk_nvm_child (id int, pid int REFERENCES fk_heap_parent (id)) USING nvm;
CREATE TABLE fk_heap_child (id int, pid int REFERENCES fk_parent (id)) USING heap;
INSERT INTO fk_heap_parent VALUES (1);
INSERT INTO fk_nvm_child VALUES (1, 1);
INSERT INTO fk_nvm_child VALUES (2, 2);  -- should fail
INSERT INTO fk_heap_child VALUES (1, 1);
INSERT INTO fk_heap_child VALUES (2, 2);  -- should fail
DELETE FROM fk_heap_parent WHERE id = 1;  -- should fail
DELETE FROM fk_parent WHERE id = 1;  -- should fail

-- a foreign key added to a filled table validates the existing rows
CREATE TABLE fk_late (pid int) USING nvm;
INSERT INTO fk_late VALUES (1), (99);
ALTER TABLE fk_late ADD FOREIGN KEY (pid) REFERENCES fk_parent (id);  -- should fail
DELETE FROM fk_late WHERE pid = 99;
ALTER TABLE fk_late ADD FOREIGN KEY (pid) REFERENCES fk_parent (id);
ALTER TABLE fk_late ADD CHECK (pid > 0);
ALTER TABLE fk_late ADD CHECK (pid > 1);  -- should fail

DROP TABLE fk_late, fk_heap_child, fk_nvm_child, fk_heap_parent, fk_tree, fk_setnull,
  fk_cascade, fk_child, fk_parent, pk_late, pk_excl, pk_def, pk;
