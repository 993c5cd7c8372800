/* src/nvmam--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION nvmam" to load this file. \quit

-- The module works only when loaded through shared_preload_libraries: the
-- pool is mapped in the postmaster before any backend starts.

CREATE FUNCTION nvm_tableam_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE ACCESS METHOD nvm TYPE TABLE HANDLER nvm_tableam_handler;

COMMENT ON ACCESS METHOD nvm IS
'rows in a persistent-memory pool as record heads with newest-to-oldest version chains, no WAL for rows, MCSI concurrency control';

CREATE FUNCTION nvm_pool_stats(
    OUT pool_path text,
    OUT pool_size bigint,
    OUT used_bytes bigint,
    OUT free_bytes bigint,
    OUT tables int,
    OUT concurrency_control text,
    OUT records bigint,
    OUT versions bigint,
    OUT reclaimable_bytes bigint,
    OUT versions_collected bigint,
    OUT state text,
    OUT state_detail text,
    OUT max_size bigint,
    OUT segments int,
    OUT storage text,
    OUT storage_detail text)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

COMMENT ON FUNCTION nvm_pool_stats() IS
'size and use of the persistent-memory pool of this cluster: its present size, bytes used and free, tables, records and versions of every database, the bytes garbage collection can reclaim now, the versions collected since the server started, whether this data directory uses the pool (state attached), replays into it as a standby (state standby), or is detached from it (a restored copy or a standby: state_detail says why, and the numbers are NULL), the largest size the pool may grow to, the number of times it has grown, and the storage class that holds it (persistent memory, page-cache file or volatile) with how it was found';

CREATE VIEW nvm_pool AS SELECT * FROM nvm_pool_stats();

COMMENT ON VIEW nvm_pool IS 'the persistent-memory pool: size, used, free, records, versions, reclaimable bytes, maximum size, growth segments, storage class';

CREATE FUNCTION nvm_table_stats(
    rel regclass,
    OUT live_rows bigint,
    OUT records bigint,
    OUT versions bigint,
    OUT version_bytes bigint,
    OUT avg_chain float8,
    OUT longest_chain bigint,
    OUT reclaimable_versions bigint,
    OUT reclaimable_bytes bigint,
    OUT dead_rows bigint,
    OUT removed_rows_waiting bigint,
    OUT index_redirects bigint,
    OUT version_numbers bigint,
    OUT free_version_numbers bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

COMMENT ON FUNCTION nvm_table_stats(regclass) IS
'one nvm table: live rows, records, versions and their bytes, average and longest version chain, what garbage collection can reclaim now, dead rows VACUUM would remove, removed rows waiting for older snapshots, index roots kept as redirects, version numbers handed out and free';

CREATE VIEW nvm_tables AS
  SELECT c.oid::regclass AS relation, s.*
    FROM pg_class c
    JOIN pg_am a ON a.oid = c.relam AND a.amname = 'nvm'
    CROSS JOIN LATERAL nvm_table_stats(c.oid) s
   WHERE c.relkind IN ('r', 'm')
     AND NOT pg_is_other_temp_schema(c.relnamespace);

COMMENT ON VIEW nvm_tables IS 'every nvm table of this database (but other sessions'' temporary tables) with its rows, versions, chains and reclaimable space';

CREATE FUNCTION nvm_backend_stats(
    OUT snapshots bigint,
    OUT snapshot_avg_ns float8,
    OUT commits bigint,
    OUT aborts bigint,
    OUT complete_avg_ns float8,
    OUT flushes bigint,
    OUT cache_lines_flushed bigint,
    OUT bytes_flushed bigint,
    OUT fences bigint,
    OUT log_free_commits bigint,
    OUT tied_commits bigint,
    OUT index_log_entries bigint,
    OUT commit_wal_flushes bigint,
    OUT sequence_positions bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

COMMENT ON FUNCTION nvm_backend_stats() IS
'this backend''s concurrency-control and persist counters: snapshots and their cost, completed nvm transactions and the cost of completing them, flushes, cache lines, bytes and fences; commits on the pool alone (log-free) and tied to PostgreSQL''s commit record, index roots logged in the pool, WAL flushes log-free commits needed, and identity sequence positions kept in the pool instead of a flush';

-- Integrity checks (src/pg/stats/nvm_verify.c), as amcheck's verify_heapam
-- is for heap.  Like amcheck's functions they are not for PUBLIC: a
-- superuser may grant EXECUTE to a monitoring role.

CREATE FUNCTION nvm_verify_table(
    rel regclass,
    leaks boolean DEFAULT false,
    OUT record_no bigint,
    OUT version_no bigint,
    OUT tid tid,
    OUT pool_offset bigint,
    OUT kind text,
    OUT msg text)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

COMMENT ON FUNCTION nvm_verify_table(regclass, boolean) IS
'checks one nvm table in the pool under a ShareLock: one row per problem found (none when the table is intact); with leaks, also space and numbers a crash leaked';

REVOKE ALL ON FUNCTION nvm_verify_table(regclass, boolean) FROM PUBLIC;

CREATE FUNCTION nvm_verify_pool(
    leaks boolean DEFAULT false,
    OUT relation regclass,
    OUT spcnode oid,
    OUT dbnode oid,
    OUT relfilenode oid,
    OUT record_no bigint,
    OUT version_no bigint,
    OUT tid tid,
    OUT pool_offset bigint,
    OUT kind text,
    OUT msg text)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

COMMENT ON FUNCTION nvm_verify_pool(boolean) IS
'checks the whole pool (every nvm table of every database, the table directory, the clock slots, that no block is used twice) while no block of it changes: one row per problem found; with leaks, also what nothing reaches';

REVOKE ALL ON FUNCTION nvm_verify_pool(boolean) FROM PUBLIC;

CREATE FUNCTION nvm_debug_layout(
    rel regclass,
    OUT item text,
    OUT record_no bigint,
    OUT version_no bigint,
    OUT pool_offset bigint,
    OUT value bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

COMMENT ON FUNCTION nvm_debug_layout(regclass) IS
'for tests that damage a pool on purpose, superusers only: where an nvm table''s descriptor, record heads, version slots and version headers are in the pool file';

REVOKE ALL ON FUNCTION nvm_debug_layout(regclass) FROM PUBLIC;

CREATE FUNCTION nvm_checkpoint_stats(
    OUT captures bigint,
    OUT bytes_written bigint,
    OUT rows_written bigint,
    OUT tables_written bigint,
    OUT tables_whole bigint,
    OUT capture_seconds float8,
    OUT last_lsn pg_lsn,
    OUT last_bytes bigint,
    OUT last_seconds float8,
    OUT tables_merged bigint,
    OUT merged_bytes bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

COMMENT ON FUNCTION nvm_checkpoint_stats() IS
'what the checkpoints of the nvm pool wrote to its checkpoint files since the server started, where commits are durable through the WAL: captures, bytes and rows written, tables written (of which whole), seconds spent, the last capture''s WAL position, bytes and seconds, and the tables merged and bytes merges wrote';

CREATE VIEW nvm_checkpoints AS SELECT * FROM nvm_checkpoint_stats();

COMMENT ON VIEW nvm_checkpoints IS 'what the checkpoints of the nvm pool wrote since the server started';

CREATE FUNCTION nvm_rebuild_stats(
    OUT state text,
    OUT workers int,
    OUT tables bigint,
    OUT parts bigint,
    OUT parts_loaded bigint,
    OUT rows_loaded bigint,
    OUT bytes_read bigint,
    OUT files_lsn pg_lsn,
    OUT replayed_lsn pg_lsn,
    OUT wal_left_bytes bigint,
    OUT started timestamptz,
    OUT loaded timestamptz,
    OUT finished timestamptz)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

COMMENT ON FUNCTION nvm_rebuild_stats() IS
'the rebuild of a pool that a crash of the operating system tore or lost, from its checkpoint files and the WAL after them, since the server started: its state (none, loading, replaying, done), workers, the tables, parts, rows and bytes loaded from the files, the WAL position the files are as of, how far replay is and how much WAL is left, and when it started, finished loading and finished replaying';

CREATE VIEW nvm_rebuild AS SELECT * FROM nvm_rebuild_stats();

COMMENT ON VIEW nvm_rebuild IS 'the rebuild of the nvm pool from its checkpoint files, if one ran since the server started';
