--
-- triggers: AFTER ROW triggers see OLD and NEW (an audit table), BEFORE ROW
-- triggers change NEW or skip the row, statement triggers with transition
-- tables, constraint triggers deferred to commit
--
CREATE TABLE tr (id int PRIMARY KEY, v text, n int) USING nvm;
CREATE TABLE tr_audit (seq serial, op text, old_row text, new_row text) USING nvm;

CREATE FUNCTION tr_audit_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tr_audit (op, old_row, new_row)
    VALUES (TG_OP || ' ' || TG_WHEN,
            CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN OLD::text END,
            CASE WHEN TG_OP IN ('INSERT', 'UPDATE') THEN NEW::text END);
  RETURN NULL;
END $$;
CREATE TRIGGER tr_after AFTER INSERT OR UPDATE OR DELETE ON tr
  FOR EACH ROW EXECUTE FUNCTION tr_audit_fn();

INSERT INTO tr VALUES (1, 'a', 1), (2, 'b', 2);
UPDATE tr SET v = 'A', n = n * 10 WHERE id = 1;
-- a key update: OLD and NEW are the two different versions
UPDATE tr SET id = 3 WHERE id = 2;
-- the same row updated twice in one transaction: each event sees its own pair
BEGIN;
UPDATE tr SET n = 100 WHERE id = 1;
UPDATE tr SET n = 101 WHERE id = 1;
COMMIT;
DELETE FROM tr WHERE id = 3;
SELECT op, old_row, new_row FROM tr_audit ORDER BY seq;
-- an UPDATE that changes nothing still fires (as for heap)
TRUNCATE tr_audit;
UPDATE tr SET v = v WHERE id = 1;
SELECT op, old_row, new_row FROM tr_audit ORDER BY seq;
-- a rolled-back statement leaves no audit rows
TRUNCATE tr_audit;
BEGIN;
UPDATE tr SET n = 0;
ROLLBACK;
SELECT count(*) FROM tr_audit;

-- BEFORE ROW triggers that change NEW
CREATE FUNCTION tr_before_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.v := upper(NEW.v) || ' (' || TG_OP || ')';
  IF TG_OP = 'UPDATE' THEN
    NEW.n := OLD.n + 1;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER tr_before BEFORE INSERT OR UPDATE ON tr
  FOR EACH ROW EXECUTE FUNCTION tr_before_fn();
TRUNCATE tr_audit;
INSERT INTO tr VALUES (10, 'ten', 0) RETURNING *;
UPDATE tr SET v = 'ten again', n = 999 WHERE id = 10 RETURNING *;
SELECT * FROM tr WHERE id = 10;
-- the AFTER trigger saw the row as the BEFORE trigger left it
SELECT op, old_row, new_row FROM tr_audit ORDER BY seq;

-- a BEFORE trigger that returns NULL skips the row
CREATE FUNCTION tr_skip_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.id = 10 THEN RETURN NULL; END IF;
    RETURN OLD;
  END IF;
  IF NEW.n < 0 THEN RETURN NULL; END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER tr_skip BEFORE INSERT OR UPDATE OR DELETE ON tr
  FOR EACH ROW EXECUTE FUNCTION tr_skip_fn();
INSERT INTO tr VALUES (11, 'eleven', -1), (12, 'twelve', 12);
DELETE FROM tr WHERE id IN (10, 12);
SELECT id, v, n FROM tr ORDER BY id;

-- a BEFORE UPDATE trigger changing the key
DROP TRIGGER tr_skip ON tr;
DROP TRIGGER tr_before ON tr;
CREATE FUNCTION tr_rekey_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.id := NEW.id + 1000; RETURN NEW; END $$;
CREATE TRIGGER tr_rekey BEFORE UPDATE ON tr FOR EACH ROW EXECUTE FUNCTION tr_rekey_fn();
UPDATE tr SET v = 'rekeyed' WHERE id = 10;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, v FROM tr WHERE id IN (10, 1010) ORDER BY id;
RESET ALL;
DROP TRIGGER tr_rekey ON tr;

-- statement triggers with transition tables
CREATE FUNCTION tr_stmt_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    RAISE NOTICE '% inserted: %', TG_OP, (SELECT string_agg(id::text, ',' ORDER BY id) FROM newtab);
  ELSIF TG_OP = 'UPDATE' THEN
    RAISE NOTICE '% old: % new: %', TG_OP,
      (SELECT string_agg(id || '=' || n, ',' ORDER BY id) FROM oldtab),
      (SELECT string_agg(id || '=' || n, ',' ORDER BY id) FROM newtab);
  ELSE
    RAISE NOTICE '% deleted: %', TG_OP, (SELECT string_agg(id::text, ',' ORDER BY id) FROM oldtab);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER tr_stmt_ins AFTER INSERT ON tr REFERENCING NEW TABLE AS newtab
  FOR EACH STATEMENT EXECUTE FUNCTION tr_stmt_fn();
CREATE TRIGGER tr_stmt_upd AFTER UPDATE ON tr REFERENCING OLD TABLE AS oldtab NEW TABLE AS newtab
  FOR EACH STATEMENT EXECUTE FUNCTION tr_stmt_fn();
CREATE TRIGGER tr_stmt_del AFTER DELETE ON tr REFERENCING OLD TABLE AS oldtab
  FOR EACH STATEMENT EXECUTE FUNCTION tr_stmt_fn();
INSERT INTO tr VALUES (20, 't', 20), (21, 't', 21), (22, 't', 22);
UPDATE tr SET n = n + 1 WHERE id >= 20;
DELETE FROM tr WHERE id >= 21;
DROP TRIGGER tr_stmt_ins ON tr;
DROP TRIGGER tr_stmt_upd ON tr;
DROP TRIGGER tr_stmt_del ON tr;

-- a deferred constraint trigger fires at commit and sees the committed state
CREATE FUNCTION tr_check_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT sum(n) FROM tr) > 100000 THEN
    RAISE EXCEPTION 'sum of n too large: %', (SELECT sum(n) FROM tr);
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER tr_check AFTER INSERT OR UPDATE ON tr
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tr_check_fn();
BEGIN;
INSERT INTO tr VALUES (30, 'big', 200000);
UPDATE tr SET n = 0 WHERE id = 30;
COMMIT;
BEGIN;
UPDATE tr SET n = 200000 WHERE id = 30;
COMMIT;  -- should fail
SELECT id, n FROM tr WHERE id = 30;

-- WHEN conditions on OLD and NEW
CREATE TABLE tr_changes (id int, old_n int, new_n int) USING nvm;
CREATE FUNCTION tr_changes_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO tr_changes VALUES (NEW.id, OLD.n, NEW.n); RETURN NULL; END $$;
CREATE TRIGGER tr_when AFTER UPDATE ON tr FOR EACH ROW
  WHEN (OLD.n IS DISTINCT FROM NEW.n) EXECUTE FUNCTION tr_changes_fn();
UPDATE tr SET n = n WHERE id = 30;
UPDATE tr SET n = n + 5 WHERE id = 30;
SELECT * FROM tr_changes ORDER BY id;

DROP TABLE tr, tr_audit, tr_changes;
DROP FUNCTION tr_audit_fn(), tr_before_fn(), tr_skip_fn(), tr_rekey_fn(), tr_stmt_fn(),
  tr_check_fn(), tr_changes_fn();
