--
-- nvm_backend_stats(): this backend's concurrency-control and persist
-- counters, which the engine benchmark reports per transaction
--
CREATE TABLE bs (id int, v text) USING nvm;
SELECT snapshots AS s0, commits AS c0, flushes AS f0, fences AS d0, bytes_flushed AS b0
  FROM nvm_backend_stats() \gset
-- a read takes a snapshot but persists nothing
SELECT count(*) FROM bs;
SELECT snapshots > :s0 AS took_snapshot, flushes = :f0 AS read_flushed_nothing,
       fences = :d0 AS read_fenced_nothing
  FROM nvm_backend_stats();
-- a write transaction is counted, with what it persisted
INSERT INTO bs VALUES (1, repeat('x', 200));
SELECT commits = :c0 + 1 AS one_commit, flushes > :f0 AS flushed, fences > :d0 AS fenced,
       bytes_flushed - :b0 >= 200 AS row_bytes_flushed, complete_avg_ns > 0 AS timed
  FROM nvm_backend_stats();
-- a rolled-back write transaction is counted as aborted
SELECT aborts AS a0 FROM nvm_backend_stats() \gset
BEGIN;
INSERT INTO bs VALUES (2, 'y');
ROLLBACK;
SELECT aborts = :a0 + 1 AS one_abort FROM nvm_backend_stats();
DROP TABLE bs;
