-- bench/workloads/rows_schema.sql
--	  Two small tables for the row-level workloads: orders o, into which
--	  every transaction inserts one row (an identity primary key, as an
--	  application numbers its rows), and counters u, whose rows are updated
--	  in place (no indexed column changes).  Created without USING: the
--	  database's default_table_access_method decides heap or nvm.
--
--	  psql -v rows=N -f rows_schema.sql

\set ON_ERROR_STOP on

DROP TABLE IF EXISTS o, u;
CREATE TABLE o (
	id			bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	c			integer NOT NULL,
	created		timestamptz NOT NULL DEFAULT now(),
	note		text NOT NULL
);
CREATE TABLE u (
	k			integer PRIMARY KEY,
	n			bigint NOT NULL
);
INSERT INTO u SELECT k, 0 FROM generate_series(1, :rows) k;
ANALYZE o;
ANALYZE u;
