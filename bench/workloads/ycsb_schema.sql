-- bench/workloads/ycsb_schema.sql
--	  The YCSB table of the MCSI paper (§5.1): an integer key and ten text
--	  fields of 100 bytes each (about 1 KB a row).  Created without USING: the
--	  database's default_table_access_method decides heap or nvm.
--
--	  psql -v rows=N -f ycsb_schema.sql -f ycsb_load.sql

DROP TABLE IF EXISTS usertable;
CREATE TABLE usertable (
	ycsb_key	integer NOT NULL,
	field0		text NOT NULL,
	field1		text NOT NULL,
	field2		text NOT NULL,
	field3		text NOT NULL,
	field4		text NOT NULL,
	field5		text NOT NULL,
	field6		text NOT NULL,
	field7		text NOT NULL,
	field8		text NOT NULL,
	field9		text NOT NULL
);
