-- bench/lib/wait_sample.sql
--	  Wait-event sampling for bench/run.sh --profile: every 10 ms for :secs
--	  seconds, the state and wait event of every client backend connected to
--	  database :db, from pg_stat_activity.  Prints one CSV line per state and
--	  wait event: state,wait_event_type,wait_event,samples (an active backend
--	  with no wait event is on the CPU: type and event "CPU").
--
--	  psql -At -F , -v secs=2 -v db=tpcc -f wait_sample.sql (in another
--	  database than :db, so the sampler does not sample itself).

SET nvm_bench.secs = :'secs';
SET nvm_bench.db = :'db';
CREATE TEMP TABLE nvm_bench_waits (state text, wait_event_type text, wait_event text) USING heap;
DO $$
DECLARE
	stop timestamptz := clock_timestamp()
		+ make_interval(secs => current_setting('nvm_bench.secs')::float8);
BEGIN
	WHILE clock_timestamp() < stop LOOP
		-- pg_stat_activity is read once per transaction unless cleared
		PERFORM pg_stat_clear_snapshot();
		INSERT INTO nvm_bench_waits
		SELECT coalesce(state, '?'), coalesce(wait_event_type, 'CPU'), coalesce(wait_event, 'CPU')
		  FROM pg_stat_activity
		 WHERE datname = current_setting('nvm_bench.db') AND backend_type = 'client backend';
		PERFORM pg_sleep(0.01);
	END LOOP;
END
$$;
SELECT state, wait_event_type, wait_event, count(*)
  FROM nvm_bench_waits
 GROUP BY 1, 2, 3
 ORDER BY 4 DESC, 1, 2, 3;
