-- bench/workloads/tpccsp_neworder.sql
--	  TPC-C New-Order (clause 2.4), server-side: one CALL of tpccsp_neworder
--	  (tpccsp_procs.sql).  Variables (pgbench -D; bench/run.sh sets them):
--		nwh			warehouses in play (4, or 1)
--		items, customers	the loaded sizes (tpcc_load.sql)
--		a_item, a_cust	the NURand A constants scaled to those sizes
--						(8191 and 1023 at the standard sizes)
--	  Home warehouse client_id % nwh + 1 (each client a terminal of one
--	  warehouse), district uniform, customer NURand(1023), 5..15 lines of
--	  NURand(8191) items, quantity 1..10, each line's supply warehouse remote
--	  with probability 1 % (when nwh > 1).  In 1 % of New-Orders the last
--	  line's item is unused (items + 1): the procedure rolls back when it
--	  reaches it (clause 2.4.1.4).  pgbench has no arrays or loops, so the
--	  fifteen lines are drawn one by one and passed as three arrays; the
--	  procedure takes the first ol_cnt and sorts them by item.

\set w_id :client_id % :nwh + 1
\set d_id random(1, 10)
\set c_id (((random(0, :a_cust) | random(1, :customers)) + 259) % :customers) + 1
\set ol_cnt random(5, 15)
\set rbk random(1, 100) = 1
\set i_1 CASE WHEN :rbk AND :ol_cnt = 1 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_1 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_1 random(1, 10)
\set i_2 CASE WHEN :rbk AND :ol_cnt = 2 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_2 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_2 random(1, 10)
\set i_3 CASE WHEN :rbk AND :ol_cnt = 3 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_3 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_3 random(1, 10)
\set i_4 CASE WHEN :rbk AND :ol_cnt = 4 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_4 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_4 random(1, 10)
\set i_5 CASE WHEN :rbk AND :ol_cnt = 5 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_5 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_5 random(1, 10)
\set i_6 CASE WHEN :rbk AND :ol_cnt = 6 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_6 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_6 random(1, 10)
\set i_7 CASE WHEN :rbk AND :ol_cnt = 7 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_7 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_7 random(1, 10)
\set i_8 CASE WHEN :rbk AND :ol_cnt = 8 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_8 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_8 random(1, 10)
\set i_9 CASE WHEN :rbk AND :ol_cnt = 9 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_9 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_9 random(1, 10)
\set i_10 CASE WHEN :rbk AND :ol_cnt = 10 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_10 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_10 random(1, 10)
\set i_11 CASE WHEN :rbk AND :ol_cnt = 11 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_11 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_11 random(1, 10)
\set i_12 CASE WHEN :rbk AND :ol_cnt = 12 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_12 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_12 random(1, 10)
\set i_13 CASE WHEN :rbk AND :ol_cnt = 13 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_13 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_13 random(1, 10)
\set i_14 CASE WHEN :rbk AND :ol_cnt = 14 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_14 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_14 random(1, 10)
\set i_15 CASE WHEN :rbk AND :ol_cnt = 15 THEN :items + 1 ELSE (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1 END
\set sw_15 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_15 random(1, 10)
CALL tpccsp_neworder(:w_id, :d_id, :c_id, :ol_cnt,
	ARRAY[:i_1, :i_2, :i_3, :i_4, :i_5, :i_6, :i_7, :i_8, :i_9, :i_10, :i_11, :i_12, :i_13, :i_14, :i_15]::integer[],
	ARRAY[:sw_1, :sw_2, :sw_3, :sw_4, :sw_5, :sw_6, :sw_7, :sw_8, :sw_9, :sw_10, :sw_11, :sw_12, :sw_13, :sw_14, :sw_15]::integer[],
	ARRAY[:q_1, :q_2, :q_3, :q_4, :q_5, :q_6, :q_7, :q_8, :q_9, :q_10, :q_11, :q_12, :q_13, :q_14, :q_15]::integer[]);
