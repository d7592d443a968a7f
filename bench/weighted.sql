-- weighted.sql: time weighted_minhash_sketch against minhash_sketch, in one
-- session.  Run by bench/weighted.sh, which loads t (the bench corpus), r
-- (30 random words) and s (weighted sets of n integers) and sets :reps and
-- :commit.
\set ON_ERROR_STOP 1
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET client_min_messages = warning;

-- (order, input, method, sketches made, features in all, the query)
CREATE TEMP TABLE q (ord int, input text, method text, items bigint, features bigint, sql text);
INSERT INTO q
SELECT 1, 'bench corpus', 'weighted, word counts', count(*), sum(cardinality(show_shingles(doc, 1))),
       'SELECT count(weighted_minhash_sketch(doc)) FROM t' FROM t
UNION ALL SELECT 2, 'bench corpus', 'minhash, words', count(*), NULL,
       'SELECT count(minhash_sketch(doc, shingle_size => 1)) FROM t' FROM t
UNION ALL SELECT 3, 'bench corpus', 'minhash, 5-word shingles', count(*), NULL,
       'SELECT count(minhash_sketch(doc)) FROM t' FROM t
UNION ALL SELECT 4, '30 random words', 'weighted, word counts', count(*), sum(cardinality(show_shingles(doc, 1))),
       'SELECT count(weighted_minhash_sketch(doc)) FROM r' FROM r
UNION ALL SELECT 5, '30 random words', 'minhash, words', count(*), NULL,
       'SELECT count(minhash_sketch(doc, shingle_size => 1)) FROM r' FROM r;
INSERT INTO q
SELECT 10 + 2 * row_number() OVER (ORDER BY n), n || ' weighted integers', 'weighted', count(*), sum(n),
       format('SELECT count(weighted_minhash_sketch(features, weights)) FROM s WHERE n = %s', n)
FROM s GROUP BY n
UNION ALL
SELECT 11 + 2 * row_number() OVER (ORDER BY n), n || ' weighted integers', 'minhash (weights ignored)', count(*), NULL,
       format('SELECT count(minhash_sketch(features)) FROM s WHERE n = %s', n)
FROM s GROUP BY n;

CREATE TEMP TABLE run (ord int, round int, ms float8);
CREATE FUNCTION pg_temp.exec_ms(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) ' || q INTO plan;
	RETURN (plan -> 0 ->> 'Execution Time')::float8;
END $$;
SELECT format('INSERT INTO run VALUES (%s, %s, pg_temp.exec_ms(%L))', ord, r, sql)
FROM q, generate_series(0, :reps) r ORDER BY r, ord \gexec

\echo
\echo 'weighted minhash sketching: ndd' :commit ', K = 128; medians of' :reps 'runs'
\pset footer off
WITH m AS (
	SELECT ord, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms FROM run WHERE round > 0 GROUP BY ord
)
SELECT q.input, q.method, q.items AS sketches,
       round((m.ms * 1000 / q.items)::numeric, 1) AS "us per sketch",
       round((m.ms * 1e6 / NULLIF(q.features, 0))::numeric, 0) AS "ns per feature",
       round((m.ms / (SELECT m2.ms FROM m m2 JOIN q q2 USING (ord)
                      WHERE q2.input = q.input AND q2.ord > q.ord
                      ORDER BY q2.ord LIMIT 1))::numeric, 1) AS "x the next"
FROM q JOIN m USING (ord)
ORDER BY q.ord;
