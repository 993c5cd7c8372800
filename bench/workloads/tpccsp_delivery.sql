-- bench/workloads/tpccsp_delivery.sql
--	  TPC-C Delivery (clause 2.7), server-side: one CALL of tpccsp_delivery
--	  (tpccsp_procs.sql), which delivers the oldest new order of each of
--	  the home warehouse's 10 districts in one transaction (not deferred).
--	  Variables: nwh, the warehouses in play.  Home warehouse
--	  client_id % nwh + 1, carrier uniform 1..10.

\set w_id :client_id % :nwh + 1
\set carrier random(1, 10)
CALL tpccsp_delivery(:w_id, :carrier);
