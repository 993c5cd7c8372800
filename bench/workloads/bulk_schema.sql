-- bench/workloads/bulk_schema.sql
--	  The bulk family's data: a file of :rows TPC-C ORDER-LINE rows written
--	  into the data directory (bulk_rows.copy, the same rows for every
--	  contender), the scanned table bulk_scan loaded from it, :tables empty
--	  tables bulk_0 ... for the COPY workload, and bulk_copy(t), which
--	  empties bulk_t and copies the file into it.  No table has an index.
--	  Created without USING: the database's default_table_access_method
--	  decides heap or nvm.  Parallel query and JIT are off in the database,
--	  so a scan is one backend's work for every contender.
--
--	  psql -v rows=N -v tables=T -f bulk_schema.sql

\set ON_ERROR_STOP on

ALTER DATABASE :"DBNAME" SET max_parallel_workers_per_gather = 0;
ALTER DATABASE :"DBNAME" SET jit = off;

DROP TABLE IF EXISTS bulk_scan;
CREATE TABLE bulk_scan (
	ol_w_id			integer NOT NULL,
	ol_d_id			integer NOT NULL,
	ol_o_id			integer NOT NULL,
	ol_number		integer NOT NULL,
	ol_i_id			integer NOT NULL,
	ol_supply_w_id	integer NOT NULL,
	ol_delivery_d	timestamp,
	ol_quantity		integer NOT NULL,
	ol_amount		numeric(6, 2) NOT NULL,
	ol_dist_info	char(24) NOT NULL
);

-- the file (COPY TO takes an absolute path; COPY FROM reads it relative to
-- the data directory), deterministic: 4 warehouses, 10 districts, 1-15 lines per
-- order, a third of the lines not yet delivered
SELECT current_setting('data_directory') || '/bulk_rows.copy' AS copyfile \gset
COPY (
	SELECT 1 + i % 4, 1 + (i / 4) % 10, 1 + i / 40, 1 + i % 15,
		   1 + (i * 7919) % 100000, 1 + i % 4,
		   CASE WHEN i % 3 = 0 THEN NULL
				ELSE timestamp '2026-01-01' + i * interval '1 second' END,
		   1 + i % 10, ((i * 37) % 999999) / 100.0,
		   left(md5(i::text), 24)
	FROM generate_series(1, :rows::bigint) i
) TO :'copyfile';

COPY bulk_scan FROM 'bulk_rows.copy';

SELECT format('CREATE TABLE bulk_%s (LIKE bulk_scan)', t)
FROM generate_series(0, :tables - 1) t \gexec

CREATE PROCEDURE bulk_copy(t integer)
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('TRUNCATE bulk_%s', t);
	EXECUTE format('COPY bulk_%s FROM %L', t, 'bulk_rows.copy');
END
$$;

ANALYZE bulk_scan;
