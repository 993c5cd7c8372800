-- bench/workloads/bulk_sum.sql
--	  A sequential scan of bulk_scan (bulk_schema.sql) that sums four
--	  integer columns, the last of them the eighth: every row is deformed.
SELECT sum(ol_w_id), sum(ol_i_id), sum(ol_supply_w_id), sum(ol_quantity) FROM bulk_scan;
