-- bench/workloads/tpcc_neworder.sql
--	  TPC-C New-Order (clause 2.4) as one pgbench transaction.  Variables
--	  (pgbench -D; bench/run.sh sets them):
--		nwh			warehouses in play (1, 4, or one per client)
--		items, customers	the loaded sizes (tpcc_load.sql)
--		a_item, a_cust	the NURand A constants scaled to those sizes
--						(8191 and 1023 at the standard sizes)
--	  Home warehouse: client_id % nwh + 1, so each client keeps one.  5..15
--	  order lines; each line's supply warehouse is remote with probability 1%
--	  (when nwh > 1), which makes about 10% of New-Orders touch a remote
--	  warehouse, as in the MCSI paper.  1% of New-Orders look up an unused
--	  item after their lines and roll back (clause 2.4.1.4).  Each line is a
--	  single statement: stock update and order-line insert in one CTE.
--	  pgbench has no loops, so the fifteen lines are written out.
--
--	  Lines run in item order (then supply warehouse), as TPC-C kits sort
--	  them, so concurrent New-Orders lock stock rows in one global order and
--	  cannot deadlock on them.  pgbench has no arrays: the ol_cnt (item,
--	  supply warehouse) pairs are drawn as before (NURand item, 1% remote),
--	  packed into one integer key each, sorted by a fixed network of
--	  least()/greatest() steps and unpacked.  Quantities stay with their line
--	  number: drawn independently of the items, they are distributed the same
--	  whichever sorted line they go with, so an order's lines are the lines
--	  of before, only in item order.

\set w_id :client_id % :nwh + 1
\set d_id random(1, 10)
\set c_id (((random(0, :a_cust) | random(1, :customers)) + 259) % :customers) + 1
\set ol_cnt random(5, 15)
\set rbk random(1, 100)
\set i_1 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_1 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_1 random(1, 10)
\set i_2 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_2 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_2 random(1, 10)
\set i_3 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_3 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_3 random(1, 10)
\set i_4 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_4 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_4 random(1, 10)
\set i_5 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_5 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_5 random(1, 10)
\set i_6 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_6 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_6 random(1, 10)
\set i_7 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_7 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_7 random(1, 10)
\set i_8 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_8 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_8 random(1, 10)
\set i_9 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_9 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_9 random(1, 10)
\set i_10 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_10 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_10 random(1, 10)
\set i_11 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_11 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_11 random(1, 10)
\set i_12 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_12 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_12 random(1, 10)
\set i_13 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_13 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_13 random(1, 10)
\set i_14 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_14 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_14 random(1, 10)
\set i_15 (((random(0, :a_item) | random(1, :items)) + 7911) % :items) + 1
\set sw_15 CASE WHEN :nwh > 1 AND random(1, 100) = 1 THEN (:w_id + random(0, :nwh - 2)) % :nwh + 1 ELSE :w_id END
\set q_15 random(1, 10)
-- order lines in item order: key = (item - 1) * nwh + supply warehouse - 1,
-- unused lines (past ol_cnt) get keys above every real one; sorted by a
-- sorting network (Batcher's odd-even merge sort of 16 inputs less its
-- 16th wire: 59 compare-exchanges), then decoded
\set k_1 (:i_1 - 1) * :nwh + :sw_1 - 1
\set k_2 (:i_2 - 1) * :nwh + :sw_2 - 1
\set k_3 (:i_3 - 1) * :nwh + :sw_3 - 1
\set k_4 (:i_4 - 1) * :nwh + :sw_4 - 1
\set k_5 (:i_5 - 1) * :nwh + :sw_5 - 1
\set k_6 CASE WHEN :ol_cnt >= 6 THEN (:i_6 - 1) * :nwh + :sw_6 - 1 ELSE :items * :nwh + 6 END
\set k_7 CASE WHEN :ol_cnt >= 7 THEN (:i_7 - 1) * :nwh + :sw_7 - 1 ELSE :items * :nwh + 7 END
\set k_8 CASE WHEN :ol_cnt >= 8 THEN (:i_8 - 1) * :nwh + :sw_8 - 1 ELSE :items * :nwh + 8 END
\set k_9 CASE WHEN :ol_cnt >= 9 THEN (:i_9 - 1) * :nwh + :sw_9 - 1 ELSE :items * :nwh + 9 END
\set k_10 CASE WHEN :ol_cnt >= 10 THEN (:i_10 - 1) * :nwh + :sw_10 - 1 ELSE :items * :nwh + 10 END
\set k_11 CASE WHEN :ol_cnt >= 11 THEN (:i_11 - 1) * :nwh + :sw_11 - 1 ELSE :items * :nwh + 11 END
\set k_12 CASE WHEN :ol_cnt >= 12 THEN (:i_12 - 1) * :nwh + :sw_12 - 1 ELSE :items * :nwh + 12 END
\set k_13 CASE WHEN :ol_cnt >= 13 THEN (:i_13 - 1) * :nwh + :sw_13 - 1 ELSE :items * :nwh + 13 END
\set k_14 CASE WHEN :ol_cnt >= 14 THEN (:i_14 - 1) * :nwh + :sw_14 - 1 ELSE :items * :nwh + 14 END
\set k_15 CASE WHEN :ol_cnt >= 15 THEN (:i_15 - 1) * :nwh + :sw_15 - 1 ELSE :items * :nwh + 15 END
\set t least(:k_1, :k_2)
\set k_2 greatest(:k_1, :k_2)
\set k_1 :t
\set t least(:k_3, :k_4)
\set k_4 greatest(:k_3, :k_4)
\set k_3 :t
\set t least(:k_1, :k_3)
\set k_3 greatest(:k_1, :k_3)
\set k_1 :t
\set t least(:k_2, :k_4)
\set k_4 greatest(:k_2, :k_4)
\set k_2 :t
\set t least(:k_2, :k_3)
\set k_3 greatest(:k_2, :k_3)
\set k_2 :t
\set t least(:k_5, :k_6)
\set k_6 greatest(:k_5, :k_6)
\set k_5 :t
\set t least(:k_7, :k_8)
\set k_8 greatest(:k_7, :k_8)
\set k_7 :t
\set t least(:k_5, :k_7)
\set k_7 greatest(:k_5, :k_7)
\set k_5 :t
\set t least(:k_6, :k_8)
\set k_8 greatest(:k_6, :k_8)
\set k_6 :t
\set t least(:k_6, :k_7)
\set k_7 greatest(:k_6, :k_7)
\set k_6 :t
\set t least(:k_1, :k_5)
\set k_5 greatest(:k_1, :k_5)
\set k_1 :t
\set t least(:k_3, :k_7)
\set k_7 greatest(:k_3, :k_7)
\set k_3 :t
\set t least(:k_3, :k_5)
\set k_5 greatest(:k_3, :k_5)
\set k_3 :t
\set t least(:k_2, :k_6)
\set k_6 greatest(:k_2, :k_6)
\set k_2 :t
\set t least(:k_4, :k_8)
\set k_8 greatest(:k_4, :k_8)
\set k_4 :t
\set t least(:k_4, :k_6)
\set k_6 greatest(:k_4, :k_6)
\set k_4 :t
\set t least(:k_2, :k_3)
\set k_3 greatest(:k_2, :k_3)
\set k_2 :t
\set t least(:k_4, :k_5)
\set k_5 greatest(:k_4, :k_5)
\set k_4 :t
\set t least(:k_6, :k_7)
\set k_7 greatest(:k_6, :k_7)
\set k_6 :t
\set t least(:k_9, :k_10)
\set k_10 greatest(:k_9, :k_10)
\set k_9 :t
\set t least(:k_11, :k_12)
\set k_12 greatest(:k_11, :k_12)
\set k_11 :t
\set t least(:k_9, :k_11)
\set k_11 greatest(:k_9, :k_11)
\set k_9 :t
\set t least(:k_10, :k_12)
\set k_12 greatest(:k_10, :k_12)
\set k_10 :t
\set t least(:k_10, :k_11)
\set k_11 greatest(:k_10, :k_11)
\set k_10 :t
\set t least(:k_13, :k_14)
\set k_14 greatest(:k_13, :k_14)
\set k_13 :t
\set t least(:k_13, :k_15)
\set k_15 greatest(:k_13, :k_15)
\set k_13 :t
\set t least(:k_14, :k_15)
\set k_15 greatest(:k_14, :k_15)
\set k_14 :t
\set t least(:k_9, :k_13)
\set k_13 greatest(:k_9, :k_13)
\set k_9 :t
\set t least(:k_11, :k_15)
\set k_15 greatest(:k_11, :k_15)
\set k_11 :t
\set t least(:k_11, :k_13)
\set k_13 greatest(:k_11, :k_13)
\set k_11 :t
\set t least(:k_10, :k_14)
\set k_14 greatest(:k_10, :k_14)
\set k_10 :t
\set t least(:k_12, :k_14)
\set k_14 greatest(:k_12, :k_14)
\set k_12 :t
\set t least(:k_10, :k_11)
\set k_11 greatest(:k_10, :k_11)
\set k_10 :t
\set t least(:k_12, :k_13)
\set k_13 greatest(:k_12, :k_13)
\set k_12 :t
\set t least(:k_14, :k_15)
\set k_15 greatest(:k_14, :k_15)
\set k_14 :t
\set t least(:k_1, :k_9)
\set k_9 greatest(:k_1, :k_9)
\set k_1 :t
\set t least(:k_5, :k_13)
\set k_13 greatest(:k_5, :k_13)
\set k_5 :t
\set t least(:k_5, :k_9)
\set k_9 greatest(:k_5, :k_9)
\set k_5 :t
\set t least(:k_3, :k_11)
\set k_11 greatest(:k_3, :k_11)
\set k_3 :t
\set t least(:k_7, :k_15)
\set k_15 greatest(:k_7, :k_15)
\set k_7 :t
\set t least(:k_7, :k_11)
\set k_11 greatest(:k_7, :k_11)
\set k_7 :t
\set t least(:k_3, :k_5)
\set k_5 greatest(:k_3, :k_5)
\set k_3 :t
\set t least(:k_7, :k_9)
\set k_9 greatest(:k_7, :k_9)
\set k_7 :t
\set t least(:k_11, :k_13)
\set k_13 greatest(:k_11, :k_13)
\set k_11 :t
\set t least(:k_2, :k_10)
\set k_10 greatest(:k_2, :k_10)
\set k_2 :t
\set t least(:k_6, :k_14)
\set k_14 greatest(:k_6, :k_14)
\set k_6 :t
\set t least(:k_6, :k_10)
\set k_10 greatest(:k_6, :k_10)
\set k_6 :t
\set t least(:k_4, :k_12)
\set k_12 greatest(:k_4, :k_12)
\set k_4 :t
\set t least(:k_8, :k_12)
\set k_12 greatest(:k_8, :k_12)
\set k_8 :t
\set t least(:k_4, :k_6)
\set k_6 greatest(:k_4, :k_6)
\set k_4 :t
\set t least(:k_8, :k_10)
\set k_10 greatest(:k_8, :k_10)
\set k_8 :t
\set t least(:k_12, :k_14)
\set k_14 greatest(:k_12, :k_14)
\set k_12 :t
\set t least(:k_2, :k_3)
\set k_3 greatest(:k_2, :k_3)
\set k_2 :t
\set t least(:k_4, :k_5)
\set k_5 greatest(:k_4, :k_5)
\set k_4 :t
\set t least(:k_6, :k_7)
\set k_7 greatest(:k_6, :k_7)
\set k_6 :t
\set t least(:k_8, :k_9)
\set k_9 greatest(:k_8, :k_9)
\set k_8 :t
\set t least(:k_10, :k_11)
\set k_11 greatest(:k_10, :k_11)
\set k_10 :t
\set t least(:k_12, :k_13)
\set k_13 greatest(:k_12, :k_13)
\set k_12 :t
\set t least(:k_14, :k_15)
\set k_15 greatest(:k_14, :k_15)
\set k_14 :t
\set i_1 :k_1 / :nwh + 1
\set sw_1 :k_1 % :nwh + 1
\set i_2 :k_2 / :nwh + 1
\set sw_2 :k_2 % :nwh + 1
\set i_3 :k_3 / :nwh + 1
\set sw_3 :k_3 % :nwh + 1
\set i_4 :k_4 / :nwh + 1
\set sw_4 :k_4 % :nwh + 1
\set i_5 :k_5 / :nwh + 1
\set sw_5 :k_5 % :nwh + 1
\set i_6 :k_6 / :nwh + 1
\set sw_6 :k_6 % :nwh + 1
\set i_7 :k_7 / :nwh + 1
\set sw_7 :k_7 % :nwh + 1
\set i_8 :k_8 / :nwh + 1
\set sw_8 :k_8 % :nwh + 1
\set i_9 :k_9 / :nwh + 1
\set sw_9 :k_9 % :nwh + 1
\set i_10 :k_10 / :nwh + 1
\set sw_10 :k_10 % :nwh + 1
\set i_11 :k_11 / :nwh + 1
\set sw_11 :k_11 % :nwh + 1
\set i_12 :k_12 / :nwh + 1
\set sw_12 :k_12 % :nwh + 1
\set i_13 :k_13 / :nwh + 1
\set sw_13 :k_13 % :nwh + 1
\set i_14 :k_14 / :nwh + 1
\set sw_14 :k_14 % :nwh + 1
\set i_15 :k_15 / :nwh + 1
\set sw_15 :k_15 % :nwh + 1
\set all_local CASE WHEN (:ol_cnt < 1 OR :sw_1 = :w_id) AND (:ol_cnt < 2 OR :sw_2 = :w_id) AND (:ol_cnt < 3 OR :sw_3 = :w_id) AND (:ol_cnt < 4 OR :sw_4 = :w_id) AND (:ol_cnt < 5 OR :sw_5 = :w_id) AND (:ol_cnt < 6 OR :sw_6 = :w_id) AND (:ol_cnt < 7 OR :sw_7 = :w_id) AND (:ol_cnt < 8 OR :sw_8 = :w_id) AND (:ol_cnt < 9 OR :sw_9 = :w_id) AND (:ol_cnt < 10 OR :sw_10 = :w_id) AND (:ol_cnt < 11 OR :sw_11 = :w_id) AND (:ol_cnt < 12 OR :sw_12 = :w_id) AND (:ol_cnt < 13 OR :sw_13 = :w_id) AND (:ol_cnt < 14 OR :sw_14 = :w_id) AND (:ol_cnt < 15 OR :sw_15 = :w_id) THEN 1 ELSE 0 END
BEGIN;
SELECT c_discount, c_last, c_credit, w_tax
  FROM customer JOIN warehouse ON w_id = c_w_id
 WHERE c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id;
UPDATE district SET d_next_o_id = d_next_o_id + 1
 WHERE d_w_id = :w_id AND d_id = :d_id
RETURNING d_next_o_id - 1 AS o_id, d_tax \gset
INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
VALUES (:o_id, :d_id, :w_id, :c_id, now(), NULL, :ol_cnt, :all_local);
INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (:o_id, :d_id, :w_id);
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_1 + 10 THEN s_quantity - :q_1 ELSE s_quantity - :q_1 + 91 END,
		   s_ytd = s_ytd + :q_1, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_1::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_1 AND s_i_id = :i_1
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 1, :i_1, :sw_1, NULL, :q_1, :q_1 * i_price, s.dist
  FROM item, s WHERE i_id = :i_1;
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_2 + 10 THEN s_quantity - :q_2 ELSE s_quantity - :q_2 + 91 END,
		   s_ytd = s_ytd + :q_2, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_2::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_2 AND s_i_id = :i_2
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 2, :i_2, :sw_2, NULL, :q_2, :q_2 * i_price, s.dist
  FROM item, s WHERE i_id = :i_2;
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_3 + 10 THEN s_quantity - :q_3 ELSE s_quantity - :q_3 + 91 END,
		   s_ytd = s_ytd + :q_3, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_3::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_3 AND s_i_id = :i_3
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 3, :i_3, :sw_3, NULL, :q_3, :q_3 * i_price, s.dist
  FROM item, s WHERE i_id = :i_3;
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_4 + 10 THEN s_quantity - :q_4 ELSE s_quantity - :q_4 + 91 END,
		   s_ytd = s_ytd + :q_4, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_4::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_4 AND s_i_id = :i_4
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 4, :i_4, :sw_4, NULL, :q_4, :q_4 * i_price, s.dist
  FROM item, s WHERE i_id = :i_4;
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_5 + 10 THEN s_quantity - :q_5 ELSE s_quantity - :q_5 + 91 END,
		   s_ytd = s_ytd + :q_5, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_5::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_5 AND s_i_id = :i_5
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 5, :i_5, :sw_5, NULL, :q_5, :q_5 * i_price, s.dist
  FROM item, s WHERE i_id = :i_5;
\if :ol_cnt >= 6
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_6 + 10 THEN s_quantity - :q_6 ELSE s_quantity - :q_6 + 91 END,
		   s_ytd = s_ytd + :q_6, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_6::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_6 AND s_i_id = :i_6
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 6, :i_6, :sw_6, NULL, :q_6, :q_6 * i_price, s.dist
  FROM item, s WHERE i_id = :i_6;
\endif
\if :ol_cnt >= 7
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_7 + 10 THEN s_quantity - :q_7 ELSE s_quantity - :q_7 + 91 END,
		   s_ytd = s_ytd + :q_7, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_7::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_7 AND s_i_id = :i_7
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 7, :i_7, :sw_7, NULL, :q_7, :q_7 * i_price, s.dist
  FROM item, s WHERE i_id = :i_7;
\endif
\if :ol_cnt >= 8
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_8 + 10 THEN s_quantity - :q_8 ELSE s_quantity - :q_8 + 91 END,
		   s_ytd = s_ytd + :q_8, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_8::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_8 AND s_i_id = :i_8
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 8, :i_8, :sw_8, NULL, :q_8, :q_8 * i_price, s.dist
  FROM item, s WHERE i_id = :i_8;
\endif
\if :ol_cnt >= 9
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_9 + 10 THEN s_quantity - :q_9 ELSE s_quantity - :q_9 + 91 END,
		   s_ytd = s_ytd + :q_9, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_9::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_9 AND s_i_id = :i_9
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 9, :i_9, :sw_9, NULL, :q_9, :q_9 * i_price, s.dist
  FROM item, s WHERE i_id = :i_9;
\endif
\if :ol_cnt >= 10
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_10 + 10 THEN s_quantity - :q_10 ELSE s_quantity - :q_10 + 91 END,
		   s_ytd = s_ytd + :q_10, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_10::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_10 AND s_i_id = :i_10
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 10, :i_10, :sw_10, NULL, :q_10, :q_10 * i_price, s.dist
  FROM item, s WHERE i_id = :i_10;
\endif
\if :ol_cnt >= 11
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_11 + 10 THEN s_quantity - :q_11 ELSE s_quantity - :q_11 + 91 END,
		   s_ytd = s_ytd + :q_11, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_11::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_11 AND s_i_id = :i_11
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 11, :i_11, :sw_11, NULL, :q_11, :q_11 * i_price, s.dist
  FROM item, s WHERE i_id = :i_11;
\endif
\if :ol_cnt >= 12
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_12 + 10 THEN s_quantity - :q_12 ELSE s_quantity - :q_12 + 91 END,
		   s_ytd = s_ytd + :q_12, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_12::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_12 AND s_i_id = :i_12
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 12, :i_12, :sw_12, NULL, :q_12, :q_12 * i_price, s.dist
  FROM item, s WHERE i_id = :i_12;
\endif
\if :ol_cnt >= 13
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_13 + 10 THEN s_quantity - :q_13 ELSE s_quantity - :q_13 + 91 END,
		   s_ytd = s_ytd + :q_13, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_13::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_13 AND s_i_id = :i_13
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 13, :i_13, :sw_13, NULL, :q_13, :q_13 * i_price, s.dist
  FROM item, s WHERE i_id = :i_13;
\endif
\if :ol_cnt >= 14
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_14 + 10 THEN s_quantity - :q_14 ELSE s_quantity - :q_14 + 91 END,
		   s_ytd = s_ytd + :q_14, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_14::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_14 AND s_i_id = :i_14
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 14, :i_14, :sw_14, NULL, :q_14, :q_14 * i_price, s.dist
  FROM item, s WHERE i_id = :i_14;
\endif
\if :ol_cnt >= 15
WITH s AS (
	UPDATE stock
	   SET s_quantity = CASE WHEN s_quantity >= :q_15 + 10 THEN s_quantity - :q_15 ELSE s_quantity - :q_15 + 91 END,
		   s_ytd = s_ytd + :q_15, s_order_cnt = s_order_cnt + 1,
		   s_remote_cnt = s_remote_cnt + CASE WHEN :sw_15::integer = :w_id::integer THEN 0 ELSE 1 END
	 WHERE s_w_id = :sw_15 AND s_i_id = :i_15
	RETURNING CASE :d_id::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
		WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
		WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS dist)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
						ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, 15, :i_15, :sw_15, NULL, :q_15, :q_15 * i_price, s.dist
  FROM item, s WHERE i_id = :i_15;
\endif
\if :rbk = 1
SELECT i_price FROM item WHERE i_id = 0;
ROLLBACK;
\else
COMMIT;
\endif
