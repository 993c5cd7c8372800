--
-- index_kill: index entries of nvm rows that no snapshot can see any more
-- are marked dead by index scans (kill_prior_tuple) and removed by btree
-- before it splits a page (index_delete_tuples), as on heap
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;

-- rolled-back inserts, by an aborted subtransaction of the running
-- transaction (PostgreSQL's mvcc test): the index stops growing
BEGIN;
CREATE TABLE ik_self (key int, data text) USING nvm;
CREATE INDEX ik_self_key ON ik_self (key);
INSERT INTO ik_self VALUES (-1, 'just to allocate metapage');
SELECT pg_relation_size('ik_self_key') AS ik_self_before \gset
DO $$
BEGIN
    FOR i IN 1..100 LOOP
        BEGIN
            IF EXISTS (SELECT * FROM ik_self WHERE key > 0 AND key < 100) THEN
                RAISE data_corrupted USING MESSAGE = 'these rows should not exist';
            END IF;
            INSERT INTO ik_self SELECT g.i, 'rolling back in a sec' FROM generate_series(1, 100) g(i);
            RAISE reading_sql_data_not_permitted USING MESSAGE = 'round and round again';
        EXCEPTION WHEN reading_sql_data_not_permitted THEN END;
    END LOOP;
END;$$;
SELECT pg_relation_size('ik_self_key') = :ik_self_before AS index_did_not_grow;
-- the rows inserted last are still in the index, and marked dead once scanned
SELECT count(*) FILTER (WHERE NOT dead) > 1 AS live_entries_before_scan FROM bt_page_items('ik_self_key', 1);
SELECT count(*) FROM ik_self WHERE key > 0 AND key < 1000;
SELECT count(*) FILTER (WHERE NOT dead) AS live_entries_after_scan FROM bt_page_items('ik_self_key', 1);
SELECT * FROM ik_self ORDER BY key;
COMMIT;
SELECT bt_index_check('ik_self_key', true);

-- whole rolled-back transactions, and an inserting transaction that is
-- still running in this session: its rows are not dead, even to a scan
-- that cannot see them yet
CREATE TABLE ik (id int, v text) USING nvm;
CREATE INDEX ik_id ON ik (id);
INSERT INTO ik SELECT i, 'live' FROM generate_series(1, 10) i;
BEGIN;
INSERT INTO ik SELECT i, 'rolled back' FROM generate_series(11, 20) i;
ROLLBACK;
BEGIN;
DECLARE c CURSOR FOR SELECT * FROM ik WHERE id > 20;
INSERT INTO ik SELECT i, 'running' FROM generate_series(21, 30) i;
FETCH ALL FROM c;
CLOSE c;
SELECT count(*) FROM ik WHERE id BETWEEN 1 AND 30;
COMMIT;
SELECT count(*) FILTER (WHERE dead) AS dead FROM bt_page_items('ik_id', 1);
SELECT count(*), count(*) FILTER (WHERE v = 'running') AS committed_later FROM ik WHERE id BETWEEN 1 AND 30;

-- committed deletes and key updates, once no snapshot can see the old rows
-- (the horizon index scans use is at most 10 ms old)
DELETE FROM ik WHERE id <= 5;
UPDATE ik SET id = id + 100 WHERE id BETWEEN 6 AND 8;
UPDATE ik SET v = 'non-key update' WHERE id IN (9, 10);
SELECT pg_sleep(0.05);
SELECT id, v FROM ik WHERE id BETWEEN 1 AND 200 ORDER BY id;
SELECT count(*) FILTER (WHERE dead) AS dead FROM bt_page_items('ik_id', 1);
SELECT bt_index_check('ik_id', true);
-- VACUUM removes what is left and gives the numbers back, killed or not
VACUUM ik;
SELECT count(*) AS entries, count(*) FILTER (WHERE dead) AS dead FROM bt_page_items('ik_id', 1);
SELECT id, v FROM ik WHERE id BETWEEN 1 AND 200 ORDER BY id;
INSERT INTO ik SELECT i, 'reuses numbers' FROM generate_series(1, 8) i;
SELECT id, v FROM ik WHERE id BETWEEN 1 AND 200 ORDER BY id;
SELECT bt_index_check('ik_id', true);

-- a full leaf page: dead entries are deleted instead of splitting it
CREATE TABLE ik_full (id int, v text) USING nvm;
CREATE INDEX ik_full_id ON ik_full (id);
INSERT INTO ik_full SELECT i, 'x' FROM generate_series(1, 400) i;
SELECT pg_relation_size('ik_full_id') AS ik_full_before \gset
DELETE FROM ik_full;
SELECT pg_sleep(0.05);
SELECT count(*) FROM ik_full WHERE id BETWEEN 1 AND 400;
INSERT INTO ik_full SELECT i, 'y' FROM generate_series(1, 400) i;
SELECT pg_relation_size('ik_full_id') = :ik_full_before AS index_did_not_grow;
SELECT count(*), min(v), max(v) FROM ik_full WHERE id BETWEEN 1 AND 400;
SELECT bt_index_check('ik_full_id', true);

-- unique indexes: an insert's uniqueness check kills the entries of dead
-- rows with the same key too
CREATE TABLE iku (id int PRIMARY KEY, v text) USING nvm;
INSERT INTO iku VALUES (1, 'a');
BEGIN;
INSERT INTO iku VALUES (2, 'rolled back');
ROLLBACK;
INSERT INTO iku VALUES (2, 'b');
SELECT itemoffset, ctid, dead FROM bt_page_items('iku_pkey', 1) ORDER BY itemoffset;
SELECT * FROM iku WHERE id = 2;
SELECT bt_index_check('iku_pkey', true);

RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;
DROP TABLE ik_self, ik, ik_full, iku;
