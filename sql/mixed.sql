--
-- mixed: views over nvm tables, joins between nvm and heap tables, and
-- transactions that write both kinds of table
--
CREATE TABLE mx_nvm (id int PRIMARY KEY, name text, dept int) USING nvm;
CREATE TABLE mx_heap (dept int PRIMARY KEY, dname text) USING heap;
INSERT INTO mx_nvm SELECT g, 'emp' || g, g % 4 FROM generate_series(1, 20) g;
INSERT INTO mx_heap VALUES (0, 'zero'), (1, 'one'), (2, 'two');

-- joins, with every join method
SELECT h.dname, count(*) FROM mx_nvm n JOIN mx_heap h ON h.dept = n.dept
  GROUP BY h.dname ORDER BY h.dname;
SELECT n.dept, count(*) FROM mx_nvm n LEFT JOIN mx_heap h ON h.dept = n.dept
  WHERE h.dept IS NULL GROUP BY n.dept;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT n.id, h.dname FROM mx_nvm n JOIN mx_heap h ON h.dept = n.dept WHERE n.id <= 5 ORDER BY n.id;
RESET ALL;
SET enable_nestloop = off;
SET enable_mergejoin = off;
SELECT n.id, h.dname FROM mx_nvm n JOIN mx_heap h ON h.dept = n.dept WHERE n.id <= 5 ORDER BY n.id;
RESET ALL;
SET enable_nestloop = off;
SET enable_hashjoin = off;
SELECT n.id, h.dname FROM mx_nvm n JOIN mx_heap h ON h.dept = n.dept WHERE n.id <= 5 ORDER BY n.id;
RESET ALL;
-- nvm on the inner side of a nested loop driven by heap rows
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT h.dname, n.id FROM mx_heap h JOIN mx_nvm n ON n.id = h.dept + 10 ORDER BY h.dept;
RESET ALL;
-- self-join of an nvm table, semi- and anti-joins
SELECT a.id, b.id FROM mx_nvm a JOIN mx_nvm b ON b.id = a.id * 2 WHERE a.id <= 4 ORDER BY a.id;
SELECT count(*) FROM mx_nvm n WHERE EXISTS (SELECT 1 FROM mx_heap h WHERE h.dept = n.dept);
SELECT count(*) FROM mx_nvm n WHERE n.dept NOT IN (SELECT dept FROM mx_heap);
-- UPDATE and DELETE driven by a join with a heap table
UPDATE mx_nvm n SET name = h.dname || '-' || n.id FROM mx_heap h
  WHERE h.dept = n.dept AND n.id <= 4;
SELECT id, name FROM mx_nvm WHERE id <= 4 ORDER BY id;
UPDATE mx_heap h SET dname = upper(dname) FROM mx_nvm n WHERE n.dept = h.dept AND n.id = 1;
SELECT * FROM mx_heap ORDER BY dept;

-- views over nvm tables, updatable and not
CREATE VIEW mx_view AS SELECT id, name, dept FROM mx_nvm WHERE dept = 1;
CREATE VIEW mx_join_view AS
  SELECT n.id, n.name, h.dname FROM mx_nvm n JOIN mx_heap h USING (dept);
SELECT * FROM mx_view ORDER BY id;
SELECT count(*) FROM mx_join_view;
INSERT INTO mx_view VALUES (21, 'via view', 1);
UPDATE mx_view SET name = 'renamed' WHERE id = 21;
DELETE FROM mx_view WHERE id = 5;
SELECT * FROM mx_view ORDER BY id;
SELECT * FROM mx_nvm WHERE id IN (5, 21) ORDER BY id;
-- WITH CHECK OPTION
CREATE VIEW mx_checked AS SELECT * FROM mx_nvm WHERE dept = 2 WITH CHECK OPTION;
INSERT INTO mx_checked VALUES (22, 'wrong dept', 3);  -- should fail
INSERT INTO mx_checked VALUES (22, 'right dept', 2);
-- a materialized view over an nvm table (stored in heap), refreshed
CREATE MATERIALIZED VIEW mx_mat AS SELECT dept, count(*) AS n FROM mx_nvm GROUP BY dept;
SELECT * FROM mx_mat ORDER BY dept;
INSERT INTO mx_nvm VALUES (23, 'late', 0);
REFRESH MATERIALIZED VIEW mx_mat;
SELECT * FROM mx_mat ORDER BY dept;

-- a transaction writing heap and nvm, rolled back: neither change is there
BEGIN;
INSERT INTO mx_nvm VALUES (100, 'both', 9);
INSERT INTO mx_heap VALUES (9, 'nine');
UPDATE mx_nvm SET name = 'gone' WHERE id = 1;
DELETE FROM mx_heap WHERE dept = 0;
SELECT n.name, h.dname FROM mx_nvm n JOIN mx_heap h USING (dept) WHERE n.id = 100;
ROLLBACK;
SELECT (SELECT count(*) FROM mx_nvm WHERE id = 100) AS nvm_row,
       (SELECT count(*) FROM mx_heap WHERE dept = 9) AS heap_row,
       (SELECT name FROM mx_nvm WHERE id = 1) AS nvm_name,
       (SELECT count(*) FROM mx_heap WHERE dept = 0) AS heap_dept0;
-- the same, committed: both changes are there
BEGIN;
INSERT INTO mx_nvm VALUES (100, 'both', 9);
INSERT INTO mx_heap VALUES (9, 'nine');
UPDATE mx_nvm SET name = 'kept' WHERE id = 1;
COMMIT;
SELECT n.name, h.dname FROM mx_nvm n JOIN mx_heap h USING (dept) WHERE n.id IN (1, 100)
  ORDER BY n.id;
-- a failing statement on the heap side aborts the nvm side too
BEGIN;
INSERT INTO mx_nvm VALUES (101, 'half', 9);
INSERT INTO mx_heap VALUES (9, 'duplicate');  -- should fail
COMMIT;
SELECT count(*) FROM mx_nvm WHERE id = 101;
-- and the other way round
BEGIN;
INSERT INTO mx_heap VALUES (10, 'ten');
INSERT INTO mx_nvm VALUES (100, 'duplicate', 10);  -- should fail
COMMIT;
SELECT count(*) FROM mx_heap WHERE dept = 10;
-- moving rows between the two kinds in one statement
WITH moved AS (DELETE FROM mx_nvm WHERE dept = 3 RETURNING id, name)
  INSERT INTO mx_heap SELECT 1000 + id, name FROM moved;
SELECT (SELECT count(*) FROM mx_nvm WHERE dept = 3) AS left_in_nvm,
       (SELECT count(*) FROM mx_heap WHERE dept > 1000) AS now_in_heap;
WITH moved AS (DELETE FROM mx_heap WHERE dept > 1000 RETURNING dept - 1000 AS id, dname)
  INSERT INTO mx_nvm SELECT id, dname, 3 FROM moved;
SELECT count(*) FROM mx_nvm WHERE dept = 3;

-- partitioned table with nvm and heap partitions
CREATE TABLE mx_part (id int, v text) PARTITION BY RANGE (id);
CREATE TABLE mx_part_1 PARTITION OF mx_part FOR VALUES FROM (0) TO (100) USING nvm;
CREATE TABLE mx_part_2 PARTITION OF mx_part FOR VALUES FROM (100) TO (200) USING heap;
INSERT INTO mx_part SELECT g, 'p' || g FROM generate_series(0, 199, 10) g;
-- a row moved across partitions by UPDATE
UPDATE mx_part SET id = id + 100 WHERE id = 50;
UPDATE mx_part SET id = id - 100 WHERE id = 150;
SELECT tableoid::regclass AS part, count(*), sum(id) FROM mx_part GROUP BY 1 ORDER BY 1;
SELECT * FROM mx_part WHERE id IN (50, 150) ORDER BY id;
-- a partition attached later
CREATE TABLE mx_part_3 (id int, v text) USING nvm;
INSERT INTO mx_part_3 VALUES (250, 'attached');
ALTER TABLE mx_part ATTACH PARTITION mx_part_3 FOR VALUES FROM (200) TO (300);
SELECT count(*) FROM mx_part;

-- table inheritance
CREATE TABLE mx_inh_parent (id int, v text) USING heap;
CREATE TABLE mx_inh_child (extra int) INHERITS (mx_inh_parent) USING nvm;
INSERT INTO mx_inh_parent VALUES (1, 'parent');
INSERT INTO mx_inh_child VALUES (2, 'child', 22);
UPDATE mx_inh_parent SET v = v || '!';
SELECT tableoid::regclass, * FROM mx_inh_parent ORDER BY id;

DROP VIEW mx_view, mx_join_view, mx_checked;
DROP MATERIALIZED VIEW mx_mat;
DROP TABLE mx_nvm, mx_heap, mx_part, mx_inh_child, mx_inh_parent;
