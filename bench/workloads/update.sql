-- bench/workloads/update.sql
--	  One single-row UPDATE of a counter of u (rows_schema.sql), autocommit;
--	  no indexed column changes.  Variable (pgbench -D): rows, the rows of u.
\set k random(1, :rows)
UPDATE u SET n = n + 1 WHERE k = :k;
