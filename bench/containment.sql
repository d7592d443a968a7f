-- containment.sql: bench/containment.sh's measurements on docs, queries and
-- items; :scans searches are also timed by sequential scan; :sketches
-- whether the sketch-based design is measured too; :long searches of each
-- long-passage case (long_queries, on docs and docs2), if any; :commit.
\set ON_ERROR_STOP 1
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET client_min_messages = warning;
SET maintenance_work_mem = '1GB';

SELECT count(*) AS docs, round(avg(array_length(string_to_array(body, ' '), 1))) AS avg_words,
       min(array_length(string_to_array(body, ' '), 1)) AS min_words,
       max(array_length(string_to_array(body, ' '), 1)) AS max_words,
       pg_size_pretty(sum(octet_length(body))) AS text
FROM docs \gset

-- the index
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX docs_body ON docs USING gin (body containment_ops);
SELECT extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) AS build_s,
       pg_relation_size('docs_body') AS index_bytes \gset
SELECT sum(cardinality(ndd_shingle_set(body))) AS shingles FROM docs \gset

CREATE FUNCTION pg_temp.explain(q text) RETURNS json LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) ' || q INTO plan;
	RETURN plan -> 0;
END $$;

-- three rounds of every search through the index, round-robin; then a few
-- by sequential scan
CREATE TABLE run (q int, t float8, round int, ms float8, rows bigint, rechecked bigint, how text);
SELECT format('INSERT INTO run SELECT %s, %s, %s, (p ->> %L)::float8, (p -> %L ->> %L)::bigint, '
              'coalesce((p -> %L ->> %L)::bigint, 0), %L FROM pg_temp.explain(%L) p',
              q, t, r, 'Execution Time', 'Plan', 'Actual Rows', 'Plan', 'Rows Removed by Index Recheck', 'index',
              format('SELECT id FROM docs WHERE body @> containment_query(%L, %s)', passage, t))
FROM queries, generate_series(1, 3) r ORDER BY r, q, t \gexec
SET enable_bitmapscan = off;
SET enable_indexscan = off;
SELECT format('INSERT INTO run SELECT %s, %s, 1, (p ->> %L)::float8, (p -> %L ->> %L)::bigint, 0, %L FROM pg_temp.explain(%L) p',
              q, t, 'Execution Time', 'Plan', 'Actual Rows', 'seqscan',
              format('SELECT id FROM docs WHERE body @> containment_query(%L, %s)', passage, t))
FROM queries WHERE q <= :scans AND t = 0.7 ORDER BY q \gexec
RESET enable_bitmapscan;
RESET enable_indexscan;

-- long passages at low thresholds, 3 rounds, as the planner plans them
SELECT :long > 0 AS has_long \gset
\if :has_long
CREATE INDEX docs2_body ON docs2 USING gin (body containment_ops);
SELECT count(*) AS docs2, round(avg(n)) AS docs2_avg_words, min(n) AS docs2_min_words, max(n) AS docs2_max_words
FROM words WHERE kind = 'varied' \gset
-- each search as the planner plans it, through the index, and by
-- sequential scan (what each costs in the same run)
CREATE TABLE long_run (kind text, w int, t float8, how text, q int, round int, ms float8, rows bigint,
                       rechecked bigint, plan text);
SELECT format('SET enable_seqscan = %s; SET enable_bitmapscan = %s; ', how <> 'index', how <> 'seqscan')
       || format('INSERT INTO long_run SELECT %L, %s, %s, %L, %s, %s, (p ->> %L)::float8, (p -> %L ->> %L)::bigint, '
                 'coalesce((p -> %L ->> %L)::bigint, 0), p -> %L ->> %L FROM pg_temp.explain(%L) p',
                 kind, w, t, how, q, r, 'Execution Time', 'Plan', 'Actual Rows', 'Plan', 'Rows Removed by Index Recheck',
                 'Plan', 'Node Type',
                 format('SELECT id FROM %I WHERE body @> containment_query(%L, %s)',
                        CASE kind WHEN 'corpus' THEN 'docs' ELSE 'docs2' END, passage, t))
FROM long_queries, generate_series(1, 3) r, (VALUES ('planner'), ('index'), ('seqscan')) h(how)
ORDER BY r, kind, w, t, q, how \gexec
RESET enable_seqscan;
RESET enable_bitmapscan;
\endif

\if :sketches
-- The sketch-based design side by side, at its best: each document's
-- minhash (K = 256) and its exact number of shingles, split into 8
-- partitions by size as LSH Ensemble splits them, each partition searched
-- for Jaccard at least t q / (q + u - t q) (u its largest size: the least
-- resemblance a document of that partition holding t of the query has),
-- by scanning the sketches rather than through LSH bands, which could
-- only lose more.  And the containment estimate with exact sizes.  Both
-- against the index's answers, which are exact.
-- (in a table of their own: an update of docs would add to its index)
CREATE TABLE dsk AS
SELECT id, minhash_sketch(body, num_perm => 256) AS sketch, cardinality(ndd_shingle_set(body)) AS size FROM docs;
CREATE TABLE parts AS SELECT id, ntile(8) OVER (ORDER BY size) AS part FROM dsk;
CREATE TABLE part_upper AS SELECT part, max(d.size) AS u FROM parts JOIN dsk d USING (id) GROUP BY part;
CREATE TABLE qs AS SELECT q, t, passage, minhash_sketch(passage, num_perm => 256) AS sketch,
                          cardinality(ndd_shingle_set(passage)) AS size FROM queries;
CREATE TABLE truth AS
SELECT q.q, q.t, d.id FROM qs q JOIN LATERAL
    (SELECT d.id FROM docs d WHERE d.body @> containment_query(q.passage, q.t)) d ON true;
CREATE TABLE by_partitions AS
SELECT q.q, q.t, d.id
FROM qs q, dsk d JOIN parts USING (id) JOIN part_upper USING (part)
WHERE similarity(q.sketch, d.sketch) >= q.t * q.size / (q.size + part_upper.u - q.t * q.size);
CREATE TABLE by_estimate AS
SELECT q.q, q.t, d.id
FROM qs q, dsk d, LATERAL (SELECT similarity(q.sketch, d.sketch) AS j) e
WHERE e.j > 0 AND e.j * (q.size + d.size) / ((1 + e.j) * q.size) >= q.t;
CREATE FUNCTION pg_temp.accuracy(answers text) RETURNS TABLE (t float8, recall numeric, prec numeric, found bigint)
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'SELECT x.t, round(count(*) FILTER (WHERE tr.id IS NOT NULL)::numeric / NULLIF((SELECT count(*) FROM truth y WHERE y.t = x.t), 0), 3),
		        round(count(*) FILTER (WHERE tr.id IS NOT NULL)::numeric / NULLIF(count(*), 0), 3), count(*)
		 FROM %I x LEFT JOIN truth tr USING (q, t, id) GROUP BY x.t ORDER BY x.t', answers);
END $$;
\endif

-- the contamination check
SELECT clock_timestamp() AS t0 \gset
SELECT count(*) AS contaminated_pairs, count(DISTINCT item_id) AS contaminated_items
FROM contamination_pairs('items', 'question', 'item', 'docs', 'body', 'id', threshold => 0.7) \gset
SELECT extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) AS check_s,
       (SELECT count(*) FROM items) AS nitems \gset

\echo
\echo 'containment search: ndd' :commit
\echo :docs 'documents of' :min_words 'to' :max_words 'words (mean' :avg_words'),' :text 'of text,' :shingles 'distinct shingles in all'
SELECT round(:build_s::numeric, 1) AS "index build s", pg_size_pretty(:index_bytes::bigint) AS "index size",
       round(:index_bytes::numeric / :docs) AS "bytes per document",
       round(:index_bytes::numeric / :shingles, 2) AS "bytes per shingle";
\pset footer off
SELECT t AS threshold, count(DISTINCT q) AS searches,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) AS "p50 ms",
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2) AS "p99 ms",
       round(avg(rows), 1) AS "rows returned",
       round(avg(rechecked), 1) AS "rows rechecked away"
FROM run WHERE how = 'index' GROUP BY t ORDER BY t;
SELECT count(*) AS "searches by seqscan (t = 0.7)",
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY s.ms)::numeric, 1) AS "p50 ms",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY s.ms)
            / (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY i.ms) FROM run i
               WHERE i.how = 'index' AND i.t = 0.7 AND i.q IN (SELECT q FROM run WHERE how = 'seqscan')))::numeric, 0)
           AS "x the index, same searches",
       bool_and(s.rows = (SELECT max(i.rows) FROM run i WHERE i.how = 'index' AND i.q = s.q AND i.t = s.t)) AS "same rows"
FROM run s WHERE s.how = 'seqscan';
\if :has_long
\echo 'long passages:' :docs 'documents as above, and' :docs2 'of' :docs2_min_words 'to' :docs2_max_words 'words (mean' :docs2_avg_words') of random words'
SELECT kind || ' ' || w || ' words, t = ' || t AS "long passage", how AS "searched", count(DISTINCT q) AS searches,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1) AS "median ms",
       round(avg(rows), 1) AS "rows returned", round(avg(rechecked), 1) AS "rows rechecked away",
       string_agg(DISTINCT plan, ', ') AS plan
FROM long_run GROUP BY kind, w, t, how ORDER BY kind, w, t, array_position(ARRAY['planner', 'index', 'seqscan'], how);
\endif
\if :sketches
SELECT t AS threshold, (SELECT count(*) FROM truth y WHERE y.t = a.t) AS "true pairs (index)",
       a.recall AS "partitions: recall", a.prec AS "partitions: precision",
       b.recall AS "estimate: recall", b.prec AS "estimate: precision"
FROM pg_temp.accuracy('by_partitions') a JOIN pg_temp.accuracy('by_estimate') b USING (t) ORDER BY t;
\endif
SELECT :nitems AS items, :contaminated_items AS "items contained at 0.7", :contaminated_pairs AS pairs,
       round(:check_s::numeric, 1) AS "seconds", round((:check_s * 1000 / :nitems)::numeric, 2) AS "ms per item";
