-- report.sql: the figures of bench/trigger_insert.sh, from bench_run,
-- bench_wait and bench_prof.  Set by the caller: :commit, :threshold,
-- :shuffle.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;
\pset footer off

SELECT count(*) AS preload, round(avg(octet_length(body))) AS preload_avg_bytes FROM preload \gset
SELECT count(*) AS staging, round(avg(octet_length(body))) AS staging_avg_bytes,
	   count(*) FILTER (WHERE EXISTS (SELECT FROM preload p WHERE p.family = s.family)) AS kin_preload,
	   count(*) FILTER (WHERE EXISTS (SELECT FROM staging t WHERE t.family = s.family AND t.id <> s.id))
		   AS kin_staging
FROM staging s \gset
SELECT string_agg(DISTINCT clients::text, ', ' ORDER BY clients::text) AS clients,
	   max(rep) AS reps FROM bench_run \gset

\echo
SELECT current_setting('server_version') AS server_version \gset
\echo 'ndd trigger insert benchmark, commit' :commit 'on PostgreSQL' :server_version
\echo '  docs preloaded:' :preload 'rows of' :preload_avg_bytes 'bytes, GIN minhash_ops WITH (fastupdate = off)'
\if :shuffle
\echo '  inserted per run:' :staging 'distinct documents of' :staging_avg_bytes 'bytes, each once, their words shuffled (NDD_BENCH_SHUFFLE)'
\else
\echo '  inserted per run:' :staging 'distinct documents of' :staging_avg_bytes 'bytes, each once;' :kin_preload 'have a planted relative preloaded,' :kin_staging 'one among the inserted'
\endif
\echo '  trigger: ndd_reject_near_duplicates(''mh'', ''':threshold''', ''skip''); clients' :clients'; runs of each:' :reps
\echo '  each run: pgbench -n -t (inserts / clients) -c clients -j min(clients, 2) on a rebuilt table'

\echo
\echo 'Median TPS (min-max over runs); each insert is one transaction'
SELECT clients,
	   max(t) FILTER (WHERE variant = 'body') AS body,
	   max(t) FILTER (WHERE variant = 'sketch') AS sketch,
	   max(t) FILTER (WHERE variant = 'index') AS index,
	   max(t) FILTER (WHERE variant = 'notexists') AS notexists,
	   max(t) FILTER (WHERE variant = 'trigger') AS trigger,
	   max(t) FILTER (WHERE variant = 'clusters') AS clusters
FROM (SELECT clients, variant,
			 format('%s (%s-%s)', round(percentile_cont(0.5) WITHIN GROUP (ORDER BY tps)),
					round(min(tps)), round(max(tps))) AS t
	  FROM bench_run GROUP BY clients, variant) m
GROUP BY clients ORDER BY clients;

\echo 'Median latency (ms)'
SELECT clients,
	   max(l) FILTER (WHERE variant = 'body') AS body,
	   max(l) FILTER (WHERE variant = 'sketch') AS sketch,
	   max(l) FILTER (WHERE variant = 'index') AS index,
	   max(l) FILTER (WHERE variant = 'notexists') AS notexists,
	   max(l) FILTER (WHERE variant = 'trigger') AS trigger,
	   max(l) FILTER (WHERE variant = 'clusters') AS clusters
FROM (SELECT clients, variant,
			 round(percentile_cont(0.5) WITHIN GROUP (ORDER BY lat_ms)::numeric, 3) AS l
	  FROM bench_run GROUP BY clients, variant) m
GROUP BY clients ORDER BY clients;

-- a/b within each repetition, then the median (min-max) over repetitions
\echo 'Cost ratios, TPS of a over TPS of b in the same repetition: median (min-max).  Target: index/trigger <= 3'
WITH pair(a, b) AS (
	VALUES ('index', 'trigger'), ('index', 'notexists'), ('notexists', 'trigger'),
		   ('sketch', 'index'), ('body', 'sketch'), ('body', 'trigger'),
		   ('index', 'clusters'), ('trigger', 'clusters')
), r AS (
	SELECT x.clients, pair.a || '/' || pair.b AS ratio, x.tps / y.tps AS r
	FROM pair
	JOIN bench_run x ON x.variant = pair.a
	JOIN bench_run y ON y.variant = pair.b AND y.rep = x.rep AND y.clients = x.clients
)
SELECT clients,
	   max(s) FILTER (WHERE ratio = 'index/trigger') AS "index/trigger",
	   max(s) FILTER (WHERE ratio = 'index/notexists') AS "index/notexists",
	   max(s) FILTER (WHERE ratio = 'notexists/trigger') AS "notexists/trigger",
	   max(s) FILTER (WHERE ratio = 'sketch/index') AS "sketch/index",
	   max(s) FILTER (WHERE ratio = 'body/sketch') AS "body/sketch",
	   max(s) FILTER (WHERE ratio = 'body/trigger') AS "body/trigger",
	   max(s) FILTER (WHERE ratio = 'index/clusters') AS "index/clusters",
	   max(s) FILTER (WHERE ratio = 'trigger/clusters') AS "trigger/clusters"
FROM (SELECT clients, ratio,
			 format('%s (%s-%s)', round(percentile_cont(0.5) WITHIN GROUP (ORDER BY r)::numeric, 2),
					round(min(r)::numeric, 2), round(max(r)::numeric, 2)) AS s
	  FROM r GROUP BY clients, ratio) m
GROUP BY clients ORDER BY clients;

\echo 'Rows not inserted (trigger: skipped as near-duplicates; notexists: found one); failures and server-log errors summed over runs;'
\echo 'ndd_near_duplicate_locks after a trigger run (median)'
SELECT variant, clients,
	   format('%s (%s-%s)', percentile_disc(0.5) WITHIN GROUP (ORDER BY attempted - inserted),
			  min(attempted - inserted), max(attempted - inserted)) AS "not inserted: median (min-max)",
	   round(100.0 * percentile_disc(0.5) WITHIN GROUP (ORDER BY attempted - inserted) / max(attempted), 1) AS "%",
	   sum(failed) AS failed_tx, sum(log_errors) AS log_errors,
	   count(*) FILTER (WHERE pgbench_status <> 0) AS pgbench_failures,
	   percentile_disc(0.5) WITHIN GROUP (ORDER BY token_rows) FILTER (WHERE variant = 'trigger') AS token_rows,
	   pg_size_pretty(percentile_disc(0.5) WITHIN GROUP (ORDER BY token_bytes) FILTER (WHERE variant = 'trigger'))
		   AS token_table
FROM bench_run GROUP BY variant, clients
ORDER BY array_position(ARRAY['body', 'sketch', 'index', 'notexists', 'trigger'], variant), clients;

\echo 'What the pgbench backends were doing: share of samples (every 20 ms) over all runs, 2% and up'
\echo '(client: idle, waiting for pgbench; CPU: active without a wait event; Lock:transactionid or Lock:tuple: waiting for another insert''s token)'
SELECT variant, clients,
	   string_agg(format('%s %s%%', what, pct), ', ' ORDER BY pct DESC) AS samples
FROM (SELECT r.variant, r.clients, w.what,
			 round(100.0 * sum(w.n) / sum(sum(w.n)) OVER (PARTITION BY r.variant, r.clients)) AS pct
	  FROM bench_wait w JOIN bench_run r ON r.ord = w.run
	  GROUP BY r.variant, r.clients, w.what) s
WHERE pct >= 2
GROUP BY variant, clients
ORDER BY array_position(ARRAY['body', 'sketch', 'index', 'notexists', 'trigger'], variant), clients;

\echo 'Where an insert''s time goes, one client, timed by auto_explain (ms per insert; its logging slows every statement alike)'
SELECT variant,
	   round((max(total_ms) FILTER (WHERE kind = 'statement') / max(n) FILTER (WHERE kind = 'statement'))::numeric, 3)
		   AS "INSERT in all",
	   round((max(total_ms) FILTER (WHERE kind = 'claim') / max(n) FILTER (WHERE kind = 'statement'))::numeric, 3)
		   AS "trigger: claim tokens",
	   round((max(total_ms) FILTER (WHERE kind = 'check') / max(n) FILTER (WHERE kind = 'statement'))::numeric, 3)
		   AS "trigger: look up",
	   round(((max(total_ms) FILTER (WHERE kind = 'statement')
			   - coalesce(max(total_ms) FILTER (WHERE kind = 'claim'), 0)
			   - coalesce(max(total_ms) FILTER (WHERE kind = 'check'), 0))
			  / max(n) FILTER (WHERE kind = 'statement'))::numeric, 3) AS "the rest"
FROM bench_prof GROUP BY variant
ORDER BY array_position(ARRAY['body', 'sketch', 'index', 'notexists', 'trigger'], variant);

\echo 'Plan of the notexists insert (on the table the last pass left)'
EXPLAIN (COSTS OFF)
WITH s AS MATERIALIZED (
	SELECT body, minhash_sketch(body) AS mh FROM staging WHERE id = (SELECT nextval('pick'))
)
INSERT INTO docs (body, mh)
SELECT body, mh FROM s
WHERE NOT EXISTS (SELECT FROM docs d WHERE d.mh % ROW(s.mh, :threshold)::minhash_query);
