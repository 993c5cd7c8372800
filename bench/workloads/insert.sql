-- bench/workloads/insert.sql
--	  One single-row INSERT into o (rows_schema.sql), autocommit: the
--	  identity primary key comes from its sequence.
\set c random(1, 1000000)
INSERT INTO o (c, note) VALUES (:c, 'order of customer ' || :c);
