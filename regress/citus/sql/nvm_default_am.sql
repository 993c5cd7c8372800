-- nvm is the default table access method on every node (the harness's
-- server option), nvmam is loaded and created everywhere, and the tables
-- of CREATE EXTENSION citus (its metadata) are heap tables all the same.
SELECT extname FROM pg_extension WHERE extname IN ('citus', 'nvmam') ORDER BY extname;
SHOW default_table_access_method;
SELECT result FROM run_command_on_workers($$SELECT string_agg(extname, ',' ORDER BY extname)
	FROM pg_extension WHERE extname IN ('citus', 'nvmam')$$);
SELECT result FROM run_command_on_workers($$SHOW default_table_access_method$$);
SELECT a.amname, count(*) > 0 AS some FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relname LIKE 'pg_dist%' AND c.relkind = 'r'
 GROUP BY a.amname;
-- a distributed table created without USING: its shards are nvm tables
CREATE TABLE nvm_default_check (id int PRIMARY KEY, v int);
SELECT create_distributed_table('nvm_default_check', 'id');
SELECT DISTINCT result FROM run_command_on_placements('nvm_default_check',
	$$SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = '%s'::regclass$$);
DROP TABLE nvm_default_check;
