-- bench/workloads/tpccsp_stocklevel.sql
--	  TPC-C Stock-Level (clause 2.8), server-side: one CALL of
--	  tpccsp_stocklevel (tpccsp_procs.sql), read-only: the items of the
--	  district's last 20 orders with less stock than the threshold.
--	  Variables: nwh, the warehouses in play.  Home warehouse
--	  client_id % nwh + 1, district uniform (the specification gives each
--	  terminal a district of its own; pgbench's clients draw one), threshold
--	  uniform 10..20.

\set w_id :client_id % :nwh + 1
\set d_id random(1, 10)
\set threshold random(10, 20)
CALL tpccsp_stocklevel(:w_id, :d_id, :threshold);
