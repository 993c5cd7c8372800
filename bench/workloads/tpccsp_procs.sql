-- bench/workloads/tpccsp_procs.sql
--	  The five TPC-C transactions (TPC-C 5.11, clauses 2.4-2.8) as PL/pgSQL
--	  procedures, for the server-side TPC-C family (tpccsp.toml): one CALL
--	  is one transaction.  The pgbench scripts tpccsp_*.sql draw the keys
--	  (home warehouse, district, NURand customer and items, remote
--	  warehouses, amounts) and pass them in; the procedures do what the
--	  specification's profiles do with them, statement by statement, on the
--	  tables of tpcc_schema.sql.  Each procedure runs in the transaction
--	  of its CALL (at REPEATABLE READ, as every benchmark transaction), and
--	  a serialization failure or deadlock reaches pgbench, which retries the
--	  CALL.  tpccsp_neworder rolls its transaction back itself (ROLLBACK in
--	  the procedure, legal as the CALL is pgbench's whole transaction) when
--	  an item is unused, so the 1 % of New-Orders the specification rolls
--	  back count as completed transactions, as TPC-C counts them.
--	  Local variables are named v_*, parameters p_*, so that neither is
--	  taken for a column.

-- tpccsp_customer_by_last returns the id of the customer of district
-- (w, d) whose last name is the one of number lastno: of those with that
-- name, sorted by first name, the one at position ceil(n / 2) (clauses
-- 2.5.2.2 and 2.6.2.2); NULL when none has it.
CREATE OR REPLACE FUNCTION tpccsp_customer_by_last(p_w_id integer, p_d_id integer, p_lastno integer)
RETURNS integer LANGUAGE plpgsql STABLE AS $$
DECLARE
	v_ids		integer[];
BEGIN
	SELECT array_agg(c_id ORDER BY c_first) INTO v_ids
	  FROM customer
	 WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = tpcc_lastname(p_lastno);
	RETURN v_ids[(cardinality(v_ids) + 1) / 2];
END
$$;

-- tpccsp_neworder is New-Order (clause 2.4): the district's next order
-- number, the order and its new-order row, and per line the item, the
-- stock update and the order line.  p_items, p_supply and p_qty hold the
-- lines' items, supply warehouses and quantities (at least p_ol_cnt of
-- each; the rest are ignored).  The lines run in item order (then supply
-- warehouse), as TPC-C kits sort them, so concurrent New-Orders lock stock
-- rows in one global order.  An unused item (the script sets the last
-- line's item to one in 1 % of New-Orders) rolls the transaction back
-- when the line reaches it, after the lines before it (clause 2.4.2.3).
CREATE OR REPLACE PROCEDURE tpccsp_neworder(p_w_id integer, p_d_id integer, p_c_id integer,
											p_ol_cnt integer, p_items integer[],
											p_supply integer[], p_qty integer[])
LANGUAGE plpgsql AS $$
DECLARE
	v_w_tax		numeric;
	v_d_tax		numeric;
	v_o_id		integer;
	v_discount	numeric;
	v_c_last	text;
	v_credit	text;
	v_all_local integer;
	v_i			integer[];
	v_sw		integer[];
	v_q			integer[];
	v_price		numeric;
	v_i_name	text;
	v_i_data	text;
	v_s_data	text;
	v_dist		text;
	v_brand		text;
	v_total		numeric := 0;
BEGIN
	SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
	UPDATE district SET d_next_o_id = d_next_o_id + 1
	 WHERE d_w_id = p_w_id AND d_id = p_d_id
	 RETURNING d_tax, d_next_o_id - 1 INTO v_d_tax, v_o_id;
	SELECT c_discount, c_last, c_credit INTO v_discount, v_c_last, v_credit
	  FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;

	-- the lines in item order (then supply warehouse)
	SELECT array_agg(i ORDER BY i, sw), array_agg(sw ORDER BY i, sw), array_agg(q ORDER BY i, sw),
		   CASE WHEN bool_and(sw = p_w_id) THEN 1 ELSE 0 END
	  INTO v_i, v_sw, v_q, v_all_local
	  FROM unnest(p_items[1:p_ol_cnt], p_supply[1:p_ol_cnt], p_qty[1:p_ol_cnt]) AS l(i, sw, q);

	INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
	VALUES (v_o_id, p_d_id, p_w_id, p_c_id, now(), NULL, p_ol_cnt, v_all_local);
	INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);

	FOR n IN 1 .. p_ol_cnt LOOP
		SELECT i_price, i_name, i_data INTO v_price, v_i_name, v_i_data
		  FROM item WHERE i_id = v_i[n];
		IF NOT FOUND THEN
			-- an unused item: the specification's rolled-back New-Order
			ROLLBACK;
			RETURN;
		END IF;
		UPDATE stock
		   SET s_quantity = CASE WHEN s_quantity >= v_q[n] + 10 THEN s_quantity - v_q[n]
								 ELSE s_quantity - v_q[n] + 91 END,
			   s_ytd = s_ytd + v_q[n],
			   s_order_cnt = s_order_cnt + 1,
			   s_remote_cnt = s_remote_cnt + CASE WHEN v_sw[n] <> p_w_id THEN 1 ELSE 0 END
		 WHERE s_w_id = v_sw[n] AND s_i_id = v_i[n]
		 RETURNING CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
							   WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
							   WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
							   ELSE s_dist_10 END, s_data
		  INTO v_dist, v_s_data;
		v_brand := CASE WHEN v_i_data LIKE '%ORIGINAL%' AND v_s_data LIKE '%ORIGINAL%'
						THEN 'B' ELSE 'G' END;
		INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
								ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
		VALUES (v_o_id, p_d_id, p_w_id, n, v_i[n], v_sw[n], NULL, v_q[n], v_q[n] * v_price, v_dist);
		v_total := v_total + v_q[n] * v_price;
	END LOOP;
	-- the order's total as the terminal would show it
	v_total := v_total * (1 - v_discount) * (1 + v_w_tax + v_d_tax);
END
$$;

-- tpccsp_payment is Payment (clause 2.5): the warehouse's and district's
-- year-to-date amounts, the customer (by id, or by last name when
-- p_bylast) of warehouse p_c_w_id and district p_c_d_id (a remote one for
-- 15 % of Payments) pays p_amount, its data extended for bad credit, and a
-- history row.
CREATE OR REPLACE PROCEDURE tpccsp_payment(p_w_id integer, p_d_id integer, p_c_w_id integer,
										   p_c_d_id integer, p_c_id integer, p_bylast boolean,
										   p_lastno integer, p_amount numeric)
LANGUAGE plpgsql AS $$
DECLARE
	v_w_name	text;
	v_d_name	text;
	v_c_id		integer := p_c_id;
	v_balance	numeric;
	v_credit	text;
BEGIN
	UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id
	 RETURNING w_name INTO v_w_name;
	UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id
	 RETURNING d_name INTO v_d_name;
	IF p_bylast THEN
		v_c_id := tpccsp_customer_by_last(p_c_w_id, p_c_d_id, p_lastno);
	END IF;
	UPDATE customer
	   SET c_balance = c_balance - p_amount,
		   c_ytd_payment = c_ytd_payment + p_amount,
		   c_payment_cnt = c_payment_cnt + 1,
		   c_data = CASE WHEN c_credit = 'BC'
						 THEN substr(c_id || ' ' || c_d_id || ' ' || c_w_id || ' ' || p_d_id || ' '
									 || p_w_id || ' ' || p_amount || ' ' || c_data, 1, 500)
						 ELSE c_data END
	 WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id
	 RETURNING c_balance, c_credit INTO v_balance, v_credit;
	INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
	VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, now(), p_amount,
			substr(v_w_name || '    ' || v_d_name, 1, 24));
END
$$;

-- tpccsp_orderstatus is Order-Status (clause 2.6), read-only: the customer
-- (by id, or by last name when p_bylast), its most recent order and that
-- order's lines.
CREATE OR REPLACE PROCEDURE tpccsp_orderstatus(p_w_id integer, p_d_id integer, p_c_id integer,
											   p_bylast boolean, p_lastno integer)
LANGUAGE plpgsql AS $$
DECLARE
	v_c_id		integer := p_c_id;
	v_balance	numeric;
	v_first		text;
	v_last		text;
	v_o_id		integer;
	v_entry		timestamp;
	v_carrier	integer;
	v_lines		integer;
	v_amount	numeric;
	v_delivered timestamp;
BEGIN
	IF p_bylast THEN
		v_c_id := tpccsp_customer_by_last(p_w_id, p_d_id, p_lastno);
	END IF;
	SELECT c_balance, c_first, c_last INTO v_balance, v_first, v_last
	  FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
	SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_entry, v_carrier
	  FROM orders
	 WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
	 ORDER BY o_id DESC LIMIT 1;
	SELECT count(*), sum(ol_amount), max(ol_delivery_d) INTO v_lines, v_amount, v_delivered
	  FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
END
$$;

-- tpccsp_delivery is Delivery (clause 2.7), run as one transaction (not
-- deferred): in each of the warehouse's 10 districts the oldest new order,
-- if any, is delivered by carrier p_carrier: its new-order row deleted, the
-- order's carrier and its lines' delivery date set, and the lines' amount
-- added to the customer's balance.
CREATE OR REPLACE PROCEDURE tpccsp_delivery(p_w_id integer, p_carrier integer)
LANGUAGE plpgsql AS $$
DECLARE
	v_o_id		integer;
	v_c_id		integer;
	v_amount	numeric;
BEGIN
	FOR d IN 1 .. 10 LOOP
		DELETE FROM new_order
		 WHERE no_w_id = p_w_id AND no_d_id = d
		   AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d)
		 RETURNING no_o_id INTO v_o_id;
		CONTINUE WHEN NOT FOUND;
		UPDATE orders SET o_carrier_id = p_carrier
		 WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o_id
		 RETURNING o_c_id INTO v_c_id;
		WITH l AS (UPDATE order_line SET ol_delivery_d = now()
					WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o_id
					RETURNING ol_amount)
		SELECT coalesce(sum(ol_amount), 0) INTO v_amount FROM l;
		UPDATE customer
		   SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
		 WHERE c_w_id = p_w_id AND c_d_id = d AND c_id = v_c_id;
	END LOOP;
END
$$;

-- tpccsp_stocklevel is Stock-Level (clause 2.8), read-only: how many
-- distinct items of the district's last 20 orders have less than
-- p_threshold in stock at the warehouse.
CREATE OR REPLACE PROCEDURE tpccsp_stocklevel(p_w_id integer, p_d_id integer, p_threshold integer)
LANGUAGE plpgsql AS $$
DECLARE
	v_next		integer;
	v_low		integer;
BEGIN
	SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
	SELECT count(DISTINCT s_i_id) INTO v_low
	  FROM order_line JOIN stock ON s_w_id = p_w_id AND s_i_id = ol_i_id
	 WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id
	   AND ol_o_id >= v_next - 20 AND ol_o_id < v_next
	   AND s_quantity < p_threshold;
END
$$;
