-- bench/workloads/bulk_rows.sql
--	  The bulk family's rows: the first :rows TPC-C ORDER-LINE rows, written
--	  to the file :'copyfile' (an absolute path: COPY TO writes it in the
--	  server), deterministic: 4 warehouses, 10 districts, 1-15 lines per
--	  order, a third of the lines not yet delivered.  bulk_schema.sql
--	  includes it; the callgrind benchmarks (bench/lib/callgrind.sh) run it
--	  alone.
--
--	  psql -v rows=N -v copyfile=PATH -f bulk_rows.sql

COPY (
	SELECT 1 + i % 4, 1 + (i / 4) % 10, 1 + i / 40, 1 + i % 15,
		   1 + (i * 7919) % 100000, 1 + i % 4,
		   CASE WHEN i % 3 = 0 THEN NULL
				ELSE timestamp '2026-01-01' + i * interval '1 second' END,
		   1 + i % 10, ((i * 37) % 999999) / 100.0,
		   left(md5(i::text), 24)
	FROM generate_series(1, :rows::bigint) i
) TO :'copyfile';
