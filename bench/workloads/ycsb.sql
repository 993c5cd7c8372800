-- bench/workloads/ycsb.sql
--	  One YCSB transaction as in the MCSI paper (§5.1): 1 to 5 uniformly
--	  random records of usertable, each read (all fields) or updated (one
--	  field rewritten with 100 new characters), between BEGIN and COMMIT.
--	  Variables (pgbench -D):
--		rows		number of rows loaded (keys 1..rows)
--		update_pct	percentage of operations that update: 50 = YCSB-A,
--					5 = YCSB-B, 0 = YCSB-C (read only)
--	  Operation i (1..5) updates field i-1: every update writes a whole new
--	  row version in both heap and nvm, so which field is rewritten does not
--	  change the cost.  pgbench has no loops, so the five operations are
--	  written out.

\set nops random(1, 5)
\set k1 random(1, :rows)
\set u1 random(1, 100) <= :update_pct
\set v1 random(1, 999999999)
\set k2 random(1, :rows)
\set u2 random(1, 100) <= :update_pct
\set v2 random(1, 999999999)
\set k3 random(1, :rows)
\set u3 random(1, 100) <= :update_pct
\set v3 random(1, 999999999)
\set k4 random(1, :rows)
\set u4 random(1, 100) <= :update_pct
\set v4 random(1, 999999999)
\set k5 random(1, :rows)
\set u5 random(1, 100) <= :update_pct
\set v5 random(1, 999999999)
BEGIN;
\if :u1
UPDATE usertable SET field0 = lpad(:v1::text, 100, 'u') WHERE ycsb_key = :k1;
\else
SELECT * FROM usertable WHERE ycsb_key = :k1;
\endif
\if :nops >= 2
\if :u2
UPDATE usertable SET field1 = lpad(:v2::text, 100, 'u') WHERE ycsb_key = :k2;
\else
SELECT * FROM usertable WHERE ycsb_key = :k2;
\endif
\endif
\if :nops >= 3
\if :u3
UPDATE usertable SET field2 = lpad(:v3::text, 100, 'u') WHERE ycsb_key = :k3;
\else
SELECT * FROM usertable WHERE ycsb_key = :k3;
\endif
\endif
\if :nops >= 4
\if :u4
UPDATE usertable SET field3 = lpad(:v4::text, 100, 'u') WHERE ycsb_key = :k4;
\else
SELECT * FROM usertable WHERE ycsb_key = :k4;
\endif
\endif
\if :nops >= 5
\if :u5
UPDATE usertable SET field4 = lpad(:v5::text, 100, 'u') WHERE ycsb_key = :k5;
\else
SELECT * FROM usertable WHERE ycsb_key = :k5;
\endif
\endif
COMMIT;
