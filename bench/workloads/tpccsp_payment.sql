-- bench/workloads/tpccsp_payment.sql
--	  TPC-C Payment (clause 2.5), server-side: one CALL of tpccsp_payment
--	  (tpccsp_procs.sql).  Variables (pgbench -D; bench/run.sh sets them):
--		nwh			warehouses in play (4, or 1)
--		customers	customers per district (tpcc_load.sql)
--		a_cust, a_last	NURand A constants for customer id and last-name
--						number, scaled (1023 and 255 at the standard size)
--		last_max	largest last-name number every district has
--						(999, or customers - 1 when fewer than 1000)
--	  Home warehouse client_id % nwh + 1, district uniform; 15 % of
--	  Payments pay for a customer of a remote warehouse (when nwh > 1, a
--	  uniform district there); 60 % select the customer by last name
--	  (NURand(255)), 40 % by id (NURand(1023)); amount 1.00..5,000.00.

\set w_id :client_id % :nwh + 1
\set d_id random(1, 10)
\set remote :nwh > 1 AND random(1, 100) <= 15
\set c_w_id CASE WHEN :remote THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set c_d_id CASE WHEN :remote THEN random(1, 10) ELSE :d_id END
\set bylast random(1, 100) <= 60
\set c_id (((random(0, :a_cust) | random(1, :customers)) + 259) % :customers) + 1
\set c_lastno ((random(0, :a_last) | random(0, :last_max)) + 223) % (:last_max + 1)
\set amount random(100, 500000)
CALL tpccsp_payment(:w_id, :d_id, :c_w_id, :c_d_id, :c_id, :bylast, :c_lastno,
	:amount::numeric / 100);
