-- shingle_set.sql: time exact jaccard() and the shingling under it against
-- minhash_sketch, on long_texts and short_texts (id, a, b), all in one
-- session.  Run by bench/shingle_set.sh, which sets :reps (timed runs per
-- query) and :commit (what was built).

\set ON_ERROR_STOP 1
-- One backend, no JIT: the per-core cost of our C code.
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET client_min_messages = warning;

-- Each query reads one of the tables; its rows are texts (one a row) or
-- pairs (two a row), as "per" says.  The two detoast queries read the texts
-- whole (LIKE needs them) and do nothing else: what the others cost beyond
-- them is ndd's work ("net").
CREATE TEMP TABLE bench_query (ord int, tbl text, name text, per text, q text);
INSERT INTO bench_query
SELECT t.n * 10 + q.ord, t.tbl, q.name, q.per, format(q.q, t.tbl)
FROM (VALUES (1, 'long_texts'), (2, 'short_texts')) t(n, tbl),
     (VALUES (1, 'detoast a', 'text',
              'SELECT count(*) FILTER (WHERE a LIKE ''zzz%%'') FROM %s'),
             (2, 'detoast a and b', 'pair',
              'SELECT sum((a LIKE ''zzz%%'')::int + (b LIKE ''zzz%%'')::int) FROM %s'),
             (3, 'minhash_sketch(a)', 'text',
              'SELECT count(minhash_sketch(a)) FROM %s'),
             -- the empty text has no shingles: this is a's set alone
             (4, 'jaccard(a, ''''): a shingled into a set', 'text',
              'SELECT sum(jaccard(a, '''')) FROM %s'),
             (5, 'ndd_shingle_set(a): a sorted set', 'text',
              'SELECT sum(cardinality(ndd_shingle_set(a))) FROM %s'),
             (6, 'jaccard(a, b)', 'pair',
              'SELECT sum(jaccard(a, b)) FROM %s'),
             (7, 'ndd_shingle_set_jaccard(sorted sets)', 'pair',
              'SELECT sum(ndd_shingle_set_jaccard(ndd_shingle_set(a), ndd_shingle_set(b))) FROM %s')
     ) q(ord, name, per, q);

CREATE TEMP TABLE bench_run (ord int, round int, ms float8, cpu_ms float8);

-- The backend's CPU time so far, in ns (Linux: the first field of
-- /proc/self/schedstat, brought up to date at each scheduler tick and
-- switch), or NULL where there is none.  The machines we measure on are
-- shared: their load stretches the wall time of a run far more than the CPU
-- time it takes.
CREATE FUNCTION pg_temp.cpu_ns() RETURNS bigint
LANGUAGE sql AS $$
	SELECT nullif(split_part(pg_read_file('/proc/self/schedstat', 0, 200, true), ' ', 1), '')::bigint
$$;

-- One run: the executor's own time (EXPLAIN ANALYZE's Execution Time,
-- without a clock read per row), and the CPU time around it.
CREATE FUNCTION pg_temp.run(q text, OUT ms float8, OUT cpu_ms float8)
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
	cpu0 bigint := pg_temp.cpu_ns();
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) ' || q
		INTO plan;
	cpu_ms := (pg_temp.cpu_ns() - cpu0) / 1e6;
	ms := (plan -> 0 ->> 'Execution Time')::float8;
END
$$;

CREATE TEMP TABLE bench_size AS
SELECT 'long_texts' AS tbl, count(*) AS rows, round(avg(octet_length(a))) AS avg_bytes,
       round(avg(array_length(regexp_split_to_array(a, ' '), 1))) AS avg_words,
       round(avg(jaccard(a, b))::numeric, 3) AS avg_jaccard
FROM long_texts
UNION ALL
SELECT 'short_texts', count(*), round(avg(octet_length(a))),
       round(avg(array_length(regexp_split_to_array(a, ' '), 1))),
       round(avg(jaccard(a, b))::numeric, 3)
FROM short_texts;
SELECT current_setting('server_version') AS server_version \gset

-- Round 0 is the warm-up.  Rounds go round-robin over the queries, so a
-- drift of the machine's load hits every query alike.
SELECT format('INSERT INTO bench_run SELECT %s, %s, * FROM pg_temp.run(%L)', ord, r, q)
FROM bench_query, generate_series(0, :reps) AS r
ORDER BY r, ord \gexec

\echo
\echo 'ndd exact jaccard and shingle sets: ndd' :commit 'on PostgreSQL' :server_version
SELECT (SELECT count(*) FILTER (WHERE cpu_ms IS NULL) = 0 FROM bench_run) AS cpu_measured \gset
\if :cpu_measured
\echo 'cpu ms: the backend''s CPU time, the mean of' :reps 'runs after a warm-up (the clock moves at scheduler'
\echo 'ticks, so a run is off by up to a tick either way; a mean evens that out, a median would not)'
\else
\echo 'no CPU time on this system: "cpu ms" is the median wall time of' :reps 'runs after a warm-up'
\endif
\echo 'per 1,000 rows: texts or pairs, as "per" says; net: beyond the detoast of the same texts, per text'
\pset footer off
SELECT tbl AS "table", rows, avg_bytes AS "avg bytes", avg_words AS "avg words", avg_jaccard AS "avg jaccard(a, b)"
FROM bench_size ORDER BY tbl;
CREATE TEMP VIEW bench_med AS
SELECT ord, CASE WHEN :'cpu_measured'::boolean THEN avg(cpu_ms)
				 ELSE percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) END AS med,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS wall
FROM bench_run WHERE round > 0 GROUP BY ord;
WITH net AS (
	SELECT q.ord, m.med, s.rows,
		   (m.med - d.med) * 1000 / (s.rows * CASE q.per WHEN 'pair' THEN 2 ELSE 1 END) AS us
	FROM bench_med m JOIN bench_query q USING (ord)
		 JOIN bench_size s ON s.tbl = q.tbl
		 JOIN bench_med d ON d.ord = q.ord / 10 * 10 + CASE q.per WHEN 'pair' THEN 2 ELSE 1 END
)
SELECT q.tbl AS "table", q.name AS query, q.per,
	   round(n.med::numeric, 1) AS "cpu ms",
	   round((n.med * 1000 / n.rows)::numeric, 1) AS "ms per 1000",
	   CASE WHEN q.ord % 10 > 2 THEN round(n.us::numeric, 2) END AS "net us per text",
	   CASE WHEN q.ord % 10 > 2 THEN round((n.us / mh.us)::numeric, 2) END AS "x minhash_sketch"
FROM net n JOIN bench_query q USING (ord)
	 JOIN net mh ON mh.ord = q.ord / 10 * 10 + 3
ORDER BY q.ord;
\if :cpu_measured
\echo 'wall time (the machine''s load stretches it):'
SELECT q.tbl AS "table", q.name AS query, round(m.wall::numeric, 1) AS "wall median ms",
	   round((m.med / m.wall)::numeric, 2) AS "cpu / wall"
FROM bench_med m JOIN bench_query q USING (ord)
ORDER BY q.ord;
\endif
