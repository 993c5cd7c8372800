-- bench/workloads/bulk_count.sql
--	  A sequential scan of bulk_scan (bulk_schema.sql) that reads no column:
--	  the access method's iteration over the rows and their visibility.
SELECT count(*) FROM bulk_scan;
