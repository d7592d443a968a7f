-- containment.sql: bench/containment.sh's measurements on docs, queries and
-- items; :scans searches are also timed by sequential scan; :commit.
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
SELECT :nitems AS items, :contaminated_items AS "items contained at 0.7", :contaminated_pairs AS pairs,
       round(:check_s::numeric, 1) AS "seconds", round((:check_s * 1000 / :nitems)::numeric, 2) AS "ms per item";
