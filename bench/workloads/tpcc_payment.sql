-- bench/workloads/tpcc_payment.sql
--	  TPC-C Payment (clause 2.5) as one pgbench transaction.  Variables
--	  (pgbench -D; bench/run.sh sets them):
--		nwh			warehouses in play (1, 4, or one per client)
--		customers	customers per district (tpcc_load.sql)
--		a_cust, a_last	NURand A constants for customer id and last-name
--						number, scaled (1023 and 255 at the standard size)
--		last_max	largest last-name number every district has
--						(999, or customers - 1 when fewer than 1000)
--	  Home warehouse: client_id % nwh + 1.  15% of Payments pay for a
--	  customer of a remote warehouse (when nwh > 1); 60% select the customer
--	  by last name (the middle one by first name), 40% by id.

\set w_id :client_id % :nwh + 1
\set d_id random(1, 10)
\set remote :nwh > 1 AND random(1, 100) <= 15
\set c_w_id CASE WHEN :remote THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set c_d_id CASE WHEN :remote THEN random(1, 10) ELSE :d_id END
\set bylast random(1, 100) <= 60
\set c_id (((random(0, :a_cust) | random(1, :customers)) + 259) % :customers) + 1
\set c_lastno ((random(0, :a_last) | random(0, :last_max)) + 223) % (:last_max + 1)
\set amount random(100, 500000)
BEGIN;
UPDATE warehouse SET w_ytd = w_ytd + :amount::numeric / 100 WHERE w_id = :w_id;
UPDATE district SET d_ytd = d_ytd + :amount::numeric / 100 WHERE d_w_id = :w_id AND d_id = :d_id;
\if :bylast
SELECT c_id
  FROM (SELECT c_id, row_number() OVER (ORDER BY c_first) AS rn, count(*) OVER () AS cnt
		  FROM customer
		 WHERE c_w_id = :c_w_id AND c_d_id = :c_d_id AND c_last = tpcc_lastname(:c_lastno)) AS m
 WHERE rn = (cnt + 1) / 2 \gset
\endif
UPDATE customer
   SET c_balance = c_balance - :amount::numeric / 100,
	   c_ytd_payment = c_ytd_payment + :amount::numeric / 100,
	   c_payment_cnt = c_payment_cnt + 1,
	   c_data = CASE WHEN c_credit = 'BC'
					 THEN substr(c_id || ' ' || c_d_id || ' ' || c_w_id || ' ' || :d_id || ' ' || :w_id
								 || ' ' || :amount || ' ' || c_data, 1, 500)
					 ELSE c_data END
 WHERE c_w_id = :c_w_id AND c_d_id = :c_d_id AND c_id = :c_id;
INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
VALUES (:c_id, :c_d_id, :c_w_id, :d_id, :w_id, now(), :amount::numeric / 100, 'payment');
COMMIT;
