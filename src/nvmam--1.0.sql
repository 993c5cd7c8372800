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
    OUT concurrency_control text)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

COMMENT ON FUNCTION nvm_pool_stats() IS
'size and use of the persistent-memory pool of this cluster';

CREATE FUNCTION nvm_backend_stats(
    OUT snapshots bigint,
    OUT snapshot_avg_ns float8,
    OUT commits bigint,
    OUT aborts bigint,
    OUT complete_avg_ns float8,
    OUT flushes bigint,
    OUT cache_lines_flushed bigint,
    OUT bytes_flushed bigint,
    OUT fences bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

COMMENT ON FUNCTION nvm_backend_stats() IS
'this backend''s concurrency-control and persist counters: snapshots and their cost, completed nvm transactions and the cost of completing them, flushes, cache lines, bytes and fences';
