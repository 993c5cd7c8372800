-- bench/workloads/tpcc_load.sql
--	  Loads the TPC-C tables created by tpcc_schema.sql with generate_series,
--	  following the population rules of TPC-C clause 4.3.3 at a configurable
--	  size, then adds the primary keys and indexes and collects statistics.
--	  psql variables (-v):
--		warehouses	number of warehouses (1..warehouses)
--		items		rows of item, and of stock per warehouse (standard: 100000)
--		customers	customers per district (standard: 3000)
--		orders		initial orders per district, at most customers (standard:
--					3000); the newest 30% of them are new orders (900 of 3000
--					in the standard).  New-Order and Payment never read them,
--					so a smaller number only shrinks order_line (tpcc.toml);
--					server-side TPC-C (tpccsp.toml) loads the standard's.
--	  Ten districts per warehouse, 5..15 lines per initial order.

\set ON_ERROR_STOP on

INSERT INTO item
SELECT i, 1 + floor(random() * 10000)::integer, tpcc_astring(14, 24),
	   1.00 + floor(random() * 9901) / 100,
	   CASE WHEN random() < 0.1 THEN 'ORIGINAL' || tpcc_astring(18, 42) ELSE tpcc_astring(26, 50) END
FROM generate_series(1, :items) AS i;

INSERT INTO warehouse
SELECT w, tpcc_astring(6, 10), tpcc_astring(10, 20), tpcc_astring(10, 20), tpcc_astring(10, 20),
	   'CA', '123411111', round((random() * 0.2)::numeric, 4), 300000.00
FROM generate_series(1, :warehouses) AS w;

INSERT INTO district
SELECT d, w, tpcc_astring(6, 10), tpcc_astring(10, 20), tpcc_astring(10, 20), tpcc_astring(10, 20),
	   'CA', '123411111', round((random() * 0.2)::numeric, 4), 30000.00, :orders + 1
FROM generate_series(1, :warehouses) AS w, generate_series(1, 10) AS d;

INSERT INTO customer
SELECT c, d, w, tpcc_astring(8, 16), 'OE',
	   tpcc_lastname(CASE WHEN c <= 1000 THEN c - 1 ELSE tpcc_nurand(255, 0, 999, 157) END),
	   tpcc_astring(10, 20), tpcc_astring(10, 20), tpcc_astring(10, 20), 'CA', '123411111',
	   lpad(floor(random() * 1e16)::bigint::text, 16, '0'), now(),
	   CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END, 50000.00,
	   round((random() * 0.5)::numeric, 4), -10.00, 10.00, 1, 0, tpcc_astring(300, 500)
FROM generate_series(1, :warehouses) AS w, generate_series(1, 10) AS d,
	 generate_series(1, :customers) AS c;

INSERT INTO history
SELECT c, d, w, d, w, now(), 10.00, tpcc_astring(12, 24)
FROM generate_series(1, :warehouses) AS w, generate_series(1, 10) AS d,
	 generate_series(1, :customers) AS c;

-- each district's orders go to a random permutation of its customers
INSERT INTO orders
SELECT o, d, w, c, now(),
	   CASE WHEN o <= :orders * 7 / 10 THEN 1 + floor(random() * 10)::integer END,
	   5 + floor(random() * 11)::integer, 1
FROM (SELECT w, d, c, row_number() OVER (PARTITION BY w, d ORDER BY random()) AS o
	  FROM generate_series(1, :warehouses) AS w, generate_series(1, 10) AS d,
		   generate_series(1, :customers) AS c) AS perm
WHERE o <= :orders;

INSERT INTO order_line
SELECT o_id, o_d_id, o_w_id, n, 1 + floor(random() * :items)::integer, o_w_id,
	   CASE WHEN o_carrier_id IS NOT NULL THEN o_entry_d END, 5,
	   CASE WHEN o_carrier_id IS NOT NULL THEN 0.00 ELSE round((random() * 9999.99)::numeric, 2) END,
	   tpcc_astring(24, 24)
FROM orders, generate_series(1, o_ol_cnt) AS n;

INSERT INTO new_order
SELECT o_id, o_d_id, o_w_id FROM orders WHERE o_id > :orders * 7 / 10;

INSERT INTO stock
SELECT i, w, 10 + floor(random() * 91)::integer,
	   tpcc_astring(24, 24), tpcc_astring(24, 24), tpcc_astring(24, 24), tpcc_astring(24, 24),
	   tpcc_astring(24, 24), tpcc_astring(24, 24), tpcc_astring(24, 24), tpcc_astring(24, 24),
	   tpcc_astring(24, 24), tpcc_astring(24, 24), 0, 0, 0,
	   CASE WHEN random() < 0.1 THEN 'ORIGINAL' || tpcc_astring(18, 42) ELSE tpcc_astring(26, 50) END
FROM generate_series(1, :warehouses) AS w, generate_series(1, :items) AS i;

ALTER TABLE warehouse ADD PRIMARY KEY (w_id);
ALTER TABLE district ADD PRIMARY KEY (d_w_id, d_id);
ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id);
CREATE INDEX customer_last_name ON customer (c_w_id, c_d_id, c_last, c_first);
ALTER TABLE new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id);
ALTER TABLE orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id);
ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
ALTER TABLE item ADD PRIMARY KEY (i_id);
ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id);

VACUUM ANALYZE;
