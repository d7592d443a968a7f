-- bench/lookup_scan.sh's work on one corpus (:corpus = bench or random):
-- the table of sketches, the default index, and the lookups of both scans.
\set ON_ERROR_STOP 1
\pset footer off
SET client_min_messages = warning;
DROP TABLE IF EXISTS t, t_load, bench_q, bench_times;
CREATE EXTENSION IF NOT EXISTS ndd;

SELECT clock_timestamp() AS t0 \gset
SELECT :'corpus' = 'bench' AS is_bench \gset
\if :is_bench
CREATE UNLOGGED TABLE t_load (id int, family int, edit_rate float8, doc text);
-- \copy takes its line as written: the file name goes in by a variable
\set load_cmd '\\copy t_load FROM ' :'file'
:load_cmd
CREATE TABLE t AS SELECT id, minhash_sketch(doc) AS mh FROM t_load;
DROP TABLE t_load;
\else
-- 30 words of 50,000, each drawn by a hash of (row, position)
CREATE TABLE t AS
SELECT i AS id,
       minhash_sketch((SELECT string_agg('w' || abs(hashint8extended(i::int8 * 30 + j, 7)) % 50000, ' ')
                       FROM generate_series(1, 30) j)) AS mh
FROM generate_series(1, :docs) i;
\endif
ALTER TABLE t ADD PRIMARY KEY (id);
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 1) AS load_s \gset
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX t_mh ON t USING gin (mh minhash_ops);
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 1) AS build_s \gset
VACUUM ANALYZE t;

CREATE TABLE bench_q AS
SELECT row_number() OVER (ORDER BY id) AS ord, mh AS q FROM t
WHERE id % (:docs / :nq) = 0 ORDER BY id LIMIT :nq;
CREATE TABLE bench_times (scan text, kind text, round int, ord int, ms float8, ids int[]);

\echo
\echo == :corpus corpus
-- each lookup parsed and planned (EXECUTE), or a prepared statement whose
-- generic plan was made under the scan's setting
SET plan_cache_mode = force_generic_plan;
SET ndd.lookup_scan = on;
PREPARE p_on(minhash) AS SELECT array_agg(id ORDER BY id) FROM t WHERE mh % $1;
EXPLAIN (COSTS OFF) EXECUTE p_on(NULL);
SET ndd.lookup_scan = off;
PREPARE p_off(minhash) AS SELECT array_agg(id ORDER BY id) FROM t WHERE mh % $1;
EXPLAIN (COSTS OFF) EXECUTE p_off(NULL);
RESET plan_cache_mode;

CREATE FUNCTION pg_temp.run(scan text, kind text, rnd int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r record;
    t0 timestamptz;
    found int[];
BEGIN
    PERFORM set_config('ndd.lookup_scan', (scan = 'lookup scan')::text, false);
    FOR r IN SELECT ord, q FROM bench_q ORDER BY ord LOOP
        t0 := clock_timestamp();
        IF kind = 'planned each time' THEN
            EXECUTE 'SELECT array_agg(id ORDER BY id) FROM t WHERE mh % $1' INTO found USING r.q;
        ELSE
            EXECUTE format('EXECUTE %I(%L::minhash)', CASE scan WHEN 'lookup scan' THEN 'p_on' ELSE 'p_off' END, r.q) INTO found;
        END IF;
        INSERT INTO bench_times VALUES (scan, kind, rnd, r.ord,
            extract(epoch FROM clock_timestamp() - t0) * 1000, found);
    END LOOP;
END $$;

-- warm the caches once, then alternate
\o /dev/null
SELECT pg_temp.run('GIN scan', 'planned each time', 0);
SELECT pg_temp.run(s, k, rnd)
FROM generate_series(1, :rounds) rnd,
     (VALUES (1, 'lookup scan'), (2, 'GIN scan')) s(o, s),
     (VALUES (1, 'planned each time'), (2, 'prepared')) k(p, k)
ORDER BY rnd, p, o;
\o

SELECT count(*) AS rows, round(pg_relation_size('t_mh')::numeric / count(*)) AS index_bytes_per_row,
       :'load_s' AS load_and_sketch_s, :'build_s' AS index_build_s,
       (SELECT round(avg(cardinality(ids)), 2) FROM bench_times WHERE round = 1) AS rows_per_answer
FROM t;
SELECT kind, scan, count(*) AS lookups,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3) AS p50_ms,
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3) AS p99_ms
FROM bench_times WHERE round > 0 GROUP BY kind, scan ORDER BY kind, scan DESC;
-- the same-run ratio: per round, p50 of the lookup scan over p50 of GIN's
SELECT kind, round, round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE scan = 'lookup scan') /
                     percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE scan = 'GIN scan'))::numeric, 2) AS p50_ratio
FROM bench_times WHERE round > 0 GROUP BY kind, round ORDER BY kind, round;
SELECT count(*) AS answers_compared,
       count(*) FILTER (WHERE a.ids IS DISTINCT FROM b.ids) AS answers_differing
FROM bench_times a JOIN bench_times b USING (kind, round, ord)
WHERE a.scan = 'lookup scan' AND b.scan = 'GIN scan' AND a.round > 0;
DEALLOCATE p_on;
DEALLOCATE p_off;
DROP TABLE t, bench_q, bench_times;
