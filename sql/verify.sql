--
-- verify: the integrity checks nvm_verify_table() and nvm_verify_pool() find
-- nothing in intact tables, after inserts, updates (with and without new
-- index runs), deletes, rollbacks, savepoints, VACUUM, rewrites, TRUNCATE,
-- with temporary, unlogged and prepared work; they refuse what they cannot
-- check, and, like amcheck, are not for PUBLIC
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;

-- the result columns
SELECT p.proname, a.n, a.name FROM pg_proc p,
  unnest(p.proargnames, p.proargmodes::text[]) WITH ORDINALITY AS a(name, mode, n)
  WHERE p.proname IN ('nvm_verify_table', 'nvm_verify_pool')
  ORDER BY p.proname, a.n;

SET nvm.prune_on_update = off;
CREATE TABLE vt (id int PRIMARY KEY, k int, v text) USING nvm;
CREATE INDEX vt_k ON vt (k);
INSERT INTO vt SELECT g, g % 10, 'v' || g FROM generate_series(1, 2000) g;
SELECT * FROM nvm_verify_table('vt');

-- updates in the same index run, in new ones, deletes, rollbacks
UPDATE vt SET v = v || 'u' WHERE id % 3 = 0;
UPDATE vt SET k = k + 1 WHERE id % 5 = 0;
DELETE FROM vt WHERE id % 7 = 0;
BEGIN;
UPDATE vt SET v = 'rolled back' WHERE id % 11 = 0;
ROLLBACK;
BEGIN;
INSERT INTO vt SELECT g, 0, 'gone' FROM generate_series(5001, 5100) g;
ROLLBACK;
BEGIN;
UPDATE vt SET v = 'kept' WHERE id = 1;
SAVEPOINT s;
DELETE FROM vt WHERE id < 100;
INSERT INTO vt VALUES (6001, 1, 'gone too');
ROLLBACK TO s;
UPDATE vt SET v = 'kept again' WHERE id = 2;
COMMIT;
SELECT * FROM nvm_verify_table('vt');

-- within a transaction that has written rows of its own, not yet committed
BEGIN;
INSERT INTO vt VALUES (9001, 1, 'mine');
UPDATE vt SET v = 'mine too' WHERE id = 4;
SELECT * FROM nvm_verify_table('vt');
COMMIT;

-- collection: pruning into redirects, retired rows, finished ones, reused numbers
SET nvm.prune_on_update = on;
UPDATE vt SET v = v || 'p' WHERE id % 2 = 0;
VACUUM vt;
SELECT * FROM nvm_verify_table('vt');
VACUUM vt;
SELECT * FROM nvm_verify_table('vt', leaks => true);
SELECT free_version_numbers > 0 AS numbers_freed, dead_rows FROM nvm_table_stats('vt');
INSERT INTO vt SELECT g, g % 10, 'again' FROM generate_series(3001, 3500) g;
UPDATE vt SET k = k + 1 WHERE id % 4 = 0;
SELECT * FROM nvm_verify_table('vt');
SELECT bt_index_check('vt_pkey', true), bt_index_check('vt_k', true);

-- rewrites and TRUNCATE, committed and rolled back
VACUUM FULL vt;
SELECT * FROM nvm_verify_table('vt');
CLUSTER vt USING vt_pkey;
SELECT * FROM nvm_verify_table('vt');
BEGIN;
TRUNCATE vt;
INSERT INTO vt VALUES (1, 1, 'after truncate');
SELECT * FROM nvm_verify_table('vt');
ROLLBACK;
SELECT count(*) FROM vt;
SELECT * FROM nvm_verify_table('vt');
TRUNCATE vt;
INSERT INTO vt SELECT g, g % 10, 'new' FROM generate_series(1, 100) g;
SELECT * FROM nvm_verify_table('vt');

-- temporary and unlogged tables, a materialized view
CREATE TEMP TABLE vtemp (id int PRIMARY KEY, v text) USING nvm;
INSERT INTO vtemp SELECT g, 'x' FROM generate_series(1, 300) g;
UPDATE vtemp SET v = 'y' WHERE id % 2 = 0;
DELETE FROM vtemp WHERE id % 3 = 0;
SELECT * FROM nvm_verify_table('vtemp');
CREATE UNLOGGED TABLE vunlogged (id int, v text) USING nvm;
INSERT INTO vunlogged SELECT g, 'x' FROM generate_series(1, 300) g;
UPDATE vunlogged SET v = 'y';
SELECT * FROM nvm_verify_table('vunlogged');
CREATE MATERIALIZED VIEW vmv USING nvm AS SELECT id, v FROM vt WHERE id < 50;
REFRESH MATERIALIZED VIEW vmv;
SELECT * FROM nvm_verify_table('vmv');

-- a prepared transaction's rows (not final yet) are not damage; the pool
-- check locks nothing, the table check would wait for the prepared one
BEGIN;
INSERT INTO vt VALUES (7777, 1, 'prepared');
UPDATE vt SET v = 'prepared too' WHERE id = 5;
PREPARE TRANSACTION 'verify_p';
SELECT kind, msg FROM nvm_verify_pool();
COMMIT PREPARED 'verify_p';
SELECT * FROM nvm_verify_table('vt');

-- the whole pool: every table of every earlier test, and what nothing reaches
SELECT relation, kind, msg FROM nvm_verify_pool();
SELECT relation, kind, msg FROM nvm_verify_pool(leaks => true);

-- what cannot be checked
CREATE TABLE vheap (id int);
SELECT * FROM nvm_verify_table('vheap');
CREATE VIEW vview AS SELECT 1 AS one;
SELECT * FROM nvm_verify_table('vview');
CREATE TABLE vparted (id int) PARTITION BY RANGE (id);
SELECT * FROM nvm_verify_table('vparted');

-- privileges: not for PUBLIC; a granted role may check; the layout is for superusers
CREATE ROLE regress_nvm_verify;
GRANT SELECT ON vt TO regress_nvm_verify;
SET ROLE regress_nvm_verify;
SELECT * FROM nvm_verify_table('vt');
SELECT * FROM nvm_verify_pool();
SELECT count(*) FROM nvm_debug_layout('vt');
RESET ROLE;
GRANT EXECUTE ON FUNCTION nvm_verify_table(regclass, boolean) TO regress_nvm_verify;
GRANT EXECUTE ON FUNCTION nvm_debug_layout(regclass) TO regress_nvm_verify;
SET ROLE regress_nvm_verify;
SELECT * FROM nvm_verify_table('vt');
SELECT count(*) FROM nvm_debug_layout('vt');
RESET ROLE;
REVOKE ALL ON FUNCTION nvm_verify_table(regclass, boolean) FROM regress_nvm_verify;
REVOKE ALL ON FUNCTION nvm_debug_layout(regclass) FROM regress_nvm_verify;
REVOKE ALL ON vt FROM regress_nvm_verify;
DROP ROLE regress_nvm_verify;

-- the layout a superuser sees names the table's structures
SELECT item, count(*) FROM nvm_debug_layout('vt') GROUP BY item ORDER BY item;

DROP TABLE vt, vheap, vunlogged, vparted CASCADE;
DROP VIEW vview;
RESET nvm.prune_on_update;
