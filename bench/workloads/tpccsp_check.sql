-- bench/workloads/tpccsp_check.sql
--	  The consistency conditions of TPC-C 5.11, clause 3.3.2, checked after
--	  every run of the server-side TPC-C family (tpccsp.toml names this file
--	  as its check; bench/run.sh runs it with psql -At -F ','): one output
--	  row per condition, "condition,what,violations", with the number of
--	  warehouses, districts, orders or customers that break it (0: it
--	  holds).  All conditions read one snapshot (REPEATABLE READ, read
--	  only), taken when the run's clients are gone.
--		3.3.2.1		W_YTD = sum(D_YTD) per warehouse
--		3.3.2.2		D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district
--		3.3.2.3		count(NO) = max(NO_O_ID) - min(NO_O_ID) + 1 per district
--		3.3.2.4		sum(O_OL_CNT) = count(ORDER_LINE) per district
--		3.3.2.5		O_CARRIER_ID is null iff the order has a NEW-ORDER row
--		3.3.2.6		O_OL_CNT = count of the order's lines, per order
--		3.3.2.7		OL_DELIVERY_D is null iff the order has a NEW-ORDER row
--		3.3.2.8		W_YTD = sum(H_AMOUNT) per warehouse
--		3.3.2.9		D_YTD = sum(H_AMOUNT) per district
--		3.3.2.10	C_BALANCE = sum(OL_AMOUNT of delivered orders) -
--					sum(H_AMOUNT), per customer
--		3.3.2.12	C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT of delivered
--					orders), per customer
--	  (3.3.2.11 compares the customers' delivery counts with all delivered
--	  orders; the loader, like the specification's initial population,
--	  delivers 70 % of the orders without counting them, so it holds only
--	  for what the runs deliver and is left out.)  A district without new
--	  orders (all delivered) passes 3.3.2.2 and 3.3.2.3 on its orders alone.

BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;
-- room for the hash aggregates of the full size in memory
SET LOCAL work_mem = '256MB';

SELECT '3.3.2.1', 'warehouses with W_YTD <> sum(D_YTD)', count(*)
  FROM warehouse w
  JOIN (SELECT d_w_id, sum(d_ytd) AS ytd FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id
 WHERE w.w_ytd <> d.ytd;

SELECT '3.3.2.2', 'districts with D_NEXT_O_ID - 1, max(O_ID), max(NO_O_ID) unequal', count(*)
  FROM district
  LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) AS mo FROM orders GROUP BY o_w_id, o_d_id) o
		 ON o.o_w_id = d_w_id AND o.o_d_id = d_id
  LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) AS mno FROM new_order GROUP BY no_w_id, no_d_id) n
		 ON n.no_w_id = d_w_id AND n.no_d_id = d_id
 WHERE o.mo IS DISTINCT FROM d_next_o_id - 1
	OR (n.mno IS NOT NULL AND n.mno <> d_next_o_id - 1);

SELECT '3.3.2.3', 'districts with count(NO_O_ID) <> max(NO_O_ID) - min(NO_O_ID) + 1', count(*)
  FROM (SELECT count(*) AS n, max(no_o_id) - min(no_o_id) + 1 AS span
		  FROM new_order GROUP BY no_w_id, no_d_id) n
 WHERE n.n <> n.span;

SELECT '3.3.2.8', 'warehouses with W_YTD <> sum(H_AMOUNT)', count(*)
  FROM warehouse w
  LEFT JOIN (SELECT h_w_id, sum(h_amount) AS amount FROM history GROUP BY h_w_id) h ON h.h_w_id = w.w_id
 WHERE w.w_ytd IS DISTINCT FROM h.amount;

SELECT '3.3.2.9', 'districts with D_YTD <> sum(H_AMOUNT)', count(*)
  FROM district
  LEFT JOIN (SELECT h_w_id, h_d_id, sum(h_amount) AS amount FROM history GROUP BY h_w_id, h_d_id) h
		 ON h.h_w_id = d_w_id AND h.h_d_id = d_id
 WHERE d_ytd IS DISTINCT FROM h.amount;

-- the conditions on orders and their lines (3.3.2.4-3.3.2.7) and on the
-- customers' balances (3.3.2.10, 3.3.2.12) in one statement, with one pass
-- over order_line: per order its lines, those not delivered and the amount
-- of those delivered (l), joined to its order and new-order row (o; a group
-- of lines without an order has o_id NULL)
WITH l AS MATERIALIZED (
	SELECT ol_w_id, ol_d_id, ol_o_id, count(*) AS lines,
		   count(*) FILTER (WHERE ol_delivery_d IS NULL) AS undelivered,
		   coalesce(sum(ol_amount) FILTER (WHERE ol_delivery_d IS NOT NULL), 0) AS delivered
	  FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id),
o AS MATERIALIZED (
	SELECT coalesce(o_w_id, l.ol_w_id) AS w, coalesce(o_d_id, l.ol_d_id) AS d, o_id, o_c_id,
		   o_ol_cnt, o_carrier_id, no_o_id IS NOT NULL AS is_new, coalesce(l.lines, 0) AS lines,
		   coalesce(l.undelivered, 0) AS undelivered, coalesce(l.delivered, 0) AS delivered
	  FROM orders
	  LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
	  FULL JOIN l ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id AND l.ol_o_id = o_id),
c AS (
	SELECT c_balance, c_ytd_payment, coalesce(dl.amount, 0) AS delivered, coalesce(h.amount, 0) AS paid
	  FROM customer
	  LEFT JOIN (SELECT w, d, o_c_id, sum(delivered) AS amount FROM o WHERE o_id IS NOT NULL
				  GROUP BY w, d, o_c_id) dl
			 ON dl.w = c_w_id AND dl.d = c_d_id AND dl.o_c_id = c_id
	  LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) AS amount
				   FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id) h
			 ON h.h_c_w_id = c_w_id AND h.h_c_d_id = c_d_id AND h.h_c_id = c_id)
SELECT '3.3.2.4', 'districts with sum(O_OL_CNT) <> count(ORDER_LINE)', count(*)
  FROM (SELECT FROM o GROUP BY w, d HAVING sum(o_ol_cnt) IS DISTINCT FROM sum(lines)) x
UNION ALL
SELECT '3.3.2.5', 'orders whose O_CARRIER_ID is null xor they have a NEW-ORDER row',
	   count(*) FILTER (WHERE o_id IS NOT NULL AND (o_carrier_id IS NULL) <> is_new)
  FROM o
UNION ALL
SELECT '3.3.2.6', 'orders whose O_OL_CNT <> count of their lines (or lines without an order)',
	   count(*) FILTER (WHERE o_id IS NULL OR o_ol_cnt <> lines)
  FROM o
UNION ALL
SELECT '3.3.2.7', 'orders with a line whose OL_DELIVERY_D is null xor the order has a NEW-ORDER row',
	   count(*) FILTER (WHERE o_id IS NOT NULL
						  AND CASE WHEN is_new THEN undelivered <> lines ELSE undelivered > 0 END)
  FROM o
UNION ALL
SELECT '3.3.2.10', 'customers with C_BALANCE <> delivered sum(OL_AMOUNT) - sum(H_AMOUNT)',
	   count(*) FILTER (WHERE c_balance <> delivered - paid)
  FROM c
UNION ALL
SELECT '3.3.2.12', 'customers with C_BALANCE + C_YTD_PAYMENT <> delivered sum(OL_AMOUNT)',
	   count(*) FILTER (WHERE c_balance + c_ytd_payment <> delivered)
  FROM c;

ROLLBACK;
