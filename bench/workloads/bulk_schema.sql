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
-- the data directory): bulk_rows.sql
SELECT current_setting('data_directory') || '/bulk_rows.copy' AS copyfile \gset
\ir bulk_rows.sql

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
