-- bench/workloads/tpccsp_orderstatus.sql
--	  TPC-C Order-Status (clause 2.6), server-side: one CALL of
--	  tpccsp_orderstatus (tpccsp_procs.sql), read-only.  Variables as in
--	  tpccsp_payment.sql.  Home warehouse client_id % nwh + 1, district
--	  uniform; 60 % select the customer by last name (NURand(255)), 40 % by
--	  id (NURand(1023)).

\set w_id :client_id % :nwh + 1
\set d_id random(1, 10)
\set bylast random(1, 100) <= 60
\set c_id (((random(0, :a_cust) | random(1, :customers)) + 259) % :customers) + 1
\set c_lastno ((random(0, :a_last) | random(0, :last_max)) + 223) % (:last_max + 1)
CALL tpccsp_orderstatus(:w_id, :d_id, :c_id, :bylast, :c_lastno);
