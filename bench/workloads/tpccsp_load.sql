-- bench/workloads/tpccsp_load.sql
--	  What the server-side TPC-C family (tpccsp.toml) adds to the load of
--	  tpcc_schema.sql and tpcc_load.sql: the index on orders by customer
--	  that Order-Status reads the newest order of a customer by (clause
--	  2.6.2.2), and year-to-date amounts that agree with the history at
--	  any size.  tpcc_load.sql gives every district 30,000.00 and every
--	  warehouse 300,000.00, which is the sum of its initial history rows
--	  (10.00 per customer) at the standard 3,000 customers per district; at
--	  a smaller size the consistency conditions 3.3.2.8 and 3.3.2.9
--	  (tpccsp_check.sql) need the sums of the rows loaded.  At the standard
--	  size the updates leave every value as it was.  It also stops the load
--	  when the sizes ask for more initial orders than customers per district
--	  (NVM_BENCH_TPCCSP_ORDERS above NVM_BENCH_TPCCSP_CUSTOMERS).

\set ON_ERROR_STOP on

-- tpcc_load.sql gives each customer at most one initial order: more orders
-- than customers would leave D_NEXT_O_ID past the orders loaded (3.3.2.2)
SELECT CASE WHEN :orders > :customers
			THEN ('tpccsp: ' || :orders || ' initial orders per district exceed its '
				  || :customers || ' customers')::integer END AS orders_fit;

CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);

UPDATE district SET d_ytd = h.amount
  FROM (SELECT h_w_id, h_d_id, sum(h_amount) AS amount FROM history GROUP BY h_w_id, h_d_id) AS h
 WHERE d_w_id = h.h_w_id AND d_id = h.h_d_id AND d_ytd <> h.amount;
UPDATE warehouse SET w_ytd = d.ytd
  FROM (SELECT d_w_id, sum(d_ytd) AS ytd FROM district GROUP BY d_w_id) AS d
 WHERE w_id = d.d_w_id AND w_ytd <> d.ytd;

VACUUM ANALYZE;
