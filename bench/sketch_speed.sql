-- sketch_speed.sql: time sketching against a plain scan of t(doc), all in
-- one session.  Run by bench/sketch_speed.sh, which loads t and sets
-- :reps (timed runs per query), :slow_reps (for show_trgm), :trgm (whether
-- pg_trgm is installed) and :commit (what was built).

\set ON_ERROR_STOP 1
-- One backend, no JIT: we want the per-core cost of our C code, not how
-- well the work splits or how long LLVM takes to compile the plan.
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET client_min_messages = warning;

CREATE TEMP TABLE bench_query (ord int, name text, reps int, q text);
INSERT INTO bench_query VALUES
	(1, 'scan: sum(length(doc))', :reps,
	 'SELECT sum(length(doc)) FROM t'),
	(2, 'minhash_sketch(doc)', :reps,
	 'SELECT count(minhash_sketch(doc)) FROM t'),
	(3, 'minhash_sketch(doc, unit => ''char'')', :reps,
	 'SELECT count(minhash_sketch(doc, unit => ''char'')) FROM t'),
	(4, 'simhash(doc)', :reps,
	 'SELECT count(simhash(doc)) FROM t'),
	-- exact resemblance shingles the document twice and compares the sets:
	-- what a sketch saves when pairs are scored (~8x a scan, so fewer runs)
	(5, 'jaccard(doc, doc)', :slow_reps,
	 'SELECT count(jaccard(doc, doc)) FROM t');
\if :trgm
-- pg_trgm is the yardstick users know, but it is slow: fewer runs.
INSERT INTO bench_query VALUES
	(6, 'pg_trgm show_trgm(doc)', :slow_reps,
	 'SELECT count(show_trgm(doc)) FROM t');
\endif

CREATE TEMP TABLE bench_run (ord int, round int, ms float8);

-- The executor's own time for one run: EXPLAIN ANALYZE's "Execution Time"
-- leaves out parsing, planning and sending the result, and TIMING OFF
-- saves a clock read per row (the one aggregate row is all that comes
-- back anyway).
CREATE FUNCTION pg_temp.exec_ms(q text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) ' || q
		INTO plan;
	RETURN (plan -> 0 ->> 'Execution Time')::float8;
END
$$;

-- octet_length reads the size from the TOAST header without detoasting,
-- and this pass warms the cache for the first round.
SELECT count(*) AS docs, sum(octet_length(doc)) AS bytes,
	   round(avg(octet_length(doc))) AS avg_bytes,
	   round(sum(octet_length(doc)) / 1e6, 1) AS total_mb,
	   current_setting('server_version') AS server_version
FROM t \gset

-- Round 0 is the warm-up and is not counted.  Rounds go round-robin over
-- the queries, each run its own statement, so drift in machine load hits
-- every query alike rather than whichever happened to run last.
SELECT format('INSERT INTO bench_run VALUES (%s, %s, pg_temp.exec_ms(%L))',
			  ord, r, q)
FROM bench_query, generate_series(0, :reps) AS r
WHERE r <= reps
ORDER BY r, ord \gexec

\echo
\echo 'ndd sketch speed: ndd' :commit 'on PostgreSQL' :server_version
\echo :docs 'docs, avg' :avg_bytes 'bytes, total' :total_mb 'MB of text (MB = 10^6 bytes); median of timed runs after one warm-up'
\pset footer off
WITH m AS (
	SELECT ord, count(*) AS runs,
		   percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS med
	FROM bench_run
	WHERE round > 0
	GROUP BY ord
), base AS (
	SELECT med FROM m WHERE ord = 1
)
SELECT q.name AS query, m.runs,
	   round(m.med::numeric, 1) AS "median ms",
	   round((:bytes / 1e6 / (m.med / 1000))::numeric, 1) AS "MB/s",
	   round((m.med / base.med)::numeric, 2) AS "x scan"
FROM m JOIN bench_query q USING (ord), base
ORDER BY ord;

-- the targets of issue 17: minhash_sketch at most 1.3x the scan, simhash 1.5x
SELECT format('sketch/scan ratio: minhash_sketch %s (target <= 1.3), simhash %s (target <= 1.5)',
			  round((s.med / b.med)::numeric, 2),
			  round((h.med / b.med)::numeric, 2)) AS ratio_line
FROM (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS med
	  FROM bench_run WHERE ord = 2 AND round > 0) s,
	 (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS med
	  FROM bench_run WHERE ord = 4 AND round > 0) h,
	 (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS med
	  FROM bench_run WHERE ord = 1 AND round > 0) b \gset
\echo :ratio_line
