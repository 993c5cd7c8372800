-- bench/workloads/ycsb_load.sql
--	  Loads :rows rows (keys 1..:rows) into usertable, each field 100
--	  characters derived from the key (so rows differ and nothing compresses),
--	  then adds the primary key and collects statistics.  Needs psql's
--	  variable rows (-v rows=N).

\set ON_ERROR_STOP on

INSERT INTO usertable
SELECT k,
	   substr(repeat(md5(k::text || 'f0'), 4), 1, 100),
	   substr(repeat(md5(k::text || 'f1'), 4), 1, 100),
	   substr(repeat(md5(k::text || 'f2'), 4), 1, 100),
	   substr(repeat(md5(k::text || 'f3'), 4), 1, 100),
	   substr(repeat(md5(k::text || 'f4'), 4), 1, 100),
	   substr(repeat(md5(k::text || 'f5'), 4), 1, 100),
	   substr(repeat(md5(k::text || 'f6'), 4), 1, 100),
	   substr(repeat(md5(k::text || 'f7'), 4), 1, 100),
	   substr(repeat(md5(k::text || 'f8'), 4), 1, 100),
	   substr(repeat(md5(k::text || 'f9'), 4), 1, 100)
FROM generate_series(1, :rows) AS k;

ALTER TABLE usertable ADD PRIMARY KEY (ycsb_key);
VACUUM ANALYZE usertable;
