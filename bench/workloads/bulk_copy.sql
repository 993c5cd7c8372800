-- bench/workloads/bulk_copy.sql
--	  One transaction: TRUNCATE of the client's table and COPY of the 1M-row
--	  file into it (bulk_copy in bulk_schema.sql; a procedure, because a
--	  COPY cannot take the table's name as a parameter).  Variable
--	  (pgbench -D): tables, the COPY tables; client c uses bulk_(c % tables).
\set t :client_id % :tables
CALL bulk_copy(:t);
