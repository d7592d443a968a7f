-- simhash_search.sql: Hamming search over :rows random fingerprints, with
-- GIN and GiST.  Run by bench/simhash_search.sh, which sets :rows, :batch,
-- :lookups, :batch_repeat, :split_blocks and :split_pairs (on/off) and :commit.

\set ON_ERROR_STOP 1
CREATE EXTENSION ndd;
-- One backend, no JIT: the per-core cost of our code, not how well work
-- splits or how long LLVM takes (the parallel batch says so in its name).
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET client_min_messages = warning;
SET ndd.hamming_threshold = 3;

SELECT current_setting('server_version') AS server_version \gset
\echo
\echo 'ndd simhash search: ndd' :commit 'on PostgreSQL' :server_version
\echo :rows 'random fingerprints; threshold k = 3; JIT off; medians and percentiles of timed runs after a warm-up'
\pset footer off

-- random fingerprints (hashes of the row number)
CREATE TABLE fps (id int, fp simhash);
INSERT INTO fps SELECT g, simhash_from_bigint(hashint8extended(g, 1)) FROM generate_series(1, :rows) g;
VACUUM ANALYZE fps;

-- Lookups: half of them 1 to 3 bits from a stored row, half random.
CREATE TABLE lookup AS
SELECT n, CASE WHEN n % 2 = 0
               THEN simhash_from_bigint(f.fp::bigint # ((1::bigint << (n % 64))
                                                          | (1::bigint << ((n * 7) % 64))
                                                          | (1::bigint << ((n * 13) % 64))))
               ELSE simhash_from_bigint(hashint8extended(n, 77)) END AS q
FROM generate_series(1, :lookups) n
JOIN fps f ON f.id = 1 + abs(hashint8extended(n, 9)) % :rows;
-- The batch: :batch query fingerprints, the same mix.
CREATE TABLE bq AS
SELECT n, CASE WHEN n % 2 = 0
               THEN simhash_from_bigint(f.fp::bigint # (1::bigint << (n % 64)))
               ELSE simhash_from_bigint(hashint8extended(n, 78)) END AS q
FROM generate_series(1, :batch) n
JOIN fps f ON f.id = 1 + abs(hashint8extended(n, 10)) % :rows;
VACUUM ANALYZE lookup;
VACUUM ANALYZE bq;

-- wall-clock time of one statement, planning included
CREATE FUNCTION pg_temp.time_ms(q text) RETURNS float8
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
	t0 timestamptz := clock_timestamp();
	n bigint;
BEGIN
	EXECUTE q INTO n;
	RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

-- heap rows a bitmap scan visited (matches plus rows the recheck removed)
CREATE FUNCTION pg_temp.heap_rows(q text) RETURNS bigint
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
	plan json;
	node json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO plan;
	node := plan -> 0 -> 'Plan' -> 'Plans' -> 0;
	RETURN (node ->> 'Actual Rows')::bigint
		+ coalesce((node ->> 'Rows Removed by Index Recheck')::bigint, 0)
		+ coalesce((node ->> 'Rows Removed by Filter')::bigint, 0);
END $$;

CREATE TABLE result (what text, ord serial, value text);
-- (the helpers below return void; \gset after a call swallows its empty row)
CREATE TABLE timing (what text, ms float8);

-- size and build time of an index: CREATE INDEX timed by the caller
CREATE FUNCTION pg_temp.build(what text, ddl text, idx text) RETURNS void
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	EXECUTE ddl;
	INSERT INTO result (what, value) VALUES
		(what || ': build s', round(extract(epoch FROM clock_timestamp() - t0)::numeric, 1)),
		(what || ': MB', round(pg_relation_size(idx) / 1e6, 1)),
		(what || ': bytes per row', round(pg_relation_size(idx)::numeric / (SELECT count(*) FROM fps), 1));
END $$;

-- :lookups lookups of the form q, timed after one warm-up pass
CREATE FUNCTION pg_temp.lookups(what text, tmpl text) RETURNS void
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
BEGIN
	PERFORM pg_temp.time_ms(format(tmpl, l.q)) FROM lookup l;
	INSERT INTO timing SELECT what, pg_temp.time_ms(format(tmpl, l.q)) FROM lookup l;
	INSERT INTO result (what, value)
	SELECT what || ': p50 / p99 ms',
		   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3) || ' / ' ||
		   round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3)
	FROM timing t WHERE t.what = lookups.what;
END $$;

CREATE FUNCTION pg_temp.candidates(what text, tmpl text) RETURNS void
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
BEGIN
	INSERT INTO result (what, value)
	SELECT what || ': heap rows visited per lookup (mean / max)',
		   round(avg(h), 1) || ' / ' || max(h)
	FROM (SELECT pg_temp.heap_rows(format(tmpl, l.q)) AS h FROM lookup l) s;
END $$;

-- GIN, the default layout (max_distance = 3, keys = pairs: six keys of 21-22 bits)
SELECT pg_temp.build('GIN simhash_ops (keys=pairs)', 'CREATE INDEX fps_gin ON fps USING gin (fp)', 'fps_gin') \gset
SELECT q AS q1 FROM lookup WHERE n = 2 \gset
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps WHERE fp % :'q1';
SELECT pg_temp.lookups('GIN lookup', 'SELECT count(*) FROM fps WHERE fp %% %L') \gset
SELECT pg_temp.candidates('GIN lookup', 'SELECT count(*) FROM fps WHERE fp %% %L') \gset
INSERT INTO result (what, value)
SELECT 'matches per lookup (mean)', round(avg(c), 2)
FROM (SELECT (SELECT count(*) FROM fps WHERE fp % l.q) AS c FROM lookup l) s;

-- The same lookup by sequential scan, a few times.
SET enable_bitmapscan = off;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps WHERE fp % :'q1';
SELECT pg_temp.time_ms(format('SELECT count(*) FROM fps WHERE fp %% %L', q)) FROM lookup WHERE n <= 1 \gset
INSERT INTO timing SELECT 'seq scan', pg_temp.time_ms(format('SELECT count(*) FROM fps WHERE fp %% %L', q))
FROM lookup WHERE n <= 5;
RESET enable_bitmapscan;
RESET enable_indexscan;
INSERT INTO result (what, value)
SELECT 'seq scan: p50 ms', round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1)
FROM timing WHERE what = 'seq scan';
INSERT INTO result (what, value)
SELECT 'GIN lookup: seq scan p50 / GIN p50', round((s.p / g.p)::numeric, 0)
FROM (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) p FROM timing WHERE what = 'seq scan') s,
	 (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) p FROM timing WHERE what = 'GIN lookup') g;

-- Batch mode: every query fingerprint of bq against fps in one join.
EXPLAIN (COSTS OFF) SELECT count(*) FROM bq JOIN fps ON fps.fp % bq.q;
SELECT pg_temp.time_ms('SELECT count(*) FROM bq JOIN fps ON fps.fp % bq.q') AS batch_ms \gset
SELECT count(*) AS batch_matches FROM bq JOIN fps ON fps.fp % bq.q \gset
INSERT INTO result (what, value) VALUES
	('GIN batch, 1 process: ' || :batch || ' queries, s', round(:batch_ms / 1000.0, 1)),
	('GIN batch, 1 process: us per query', round(:batch_ms * 1000.0 / :batch, 1)),
	('GIN batch: matches found', :batch_matches);
-- and with two parallel workers (the machine has two cores)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
ALTER TABLE bq SET (parallel_workers = 2);
EXPLAIN (COSTS OFF) SELECT count(*) FROM bq JOIN fps ON fps.fp % bq.q;
SELECT pg_temp.time_ms('SELECT count(*) FROM bq JOIN fps ON fps.fp % bq.q') AS batch_par_ms \gset
INSERT INTO result (what, value) VALUES
	('GIN batch, 2 workers: ' || :batch || ' queries, s', round(:batch_par_ms / 1000.0, 1)),
	('GIN batch, 2 workers: 1M queries would take, s', round(:batch_par_ms / 1000.0 * 1000000 / :batch, 0));
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- The same batch by simhash_batch: the query fingerprints in permuted tables
-- (in work_mem: 80 bytes per query at max_distance 3), the stored ones
-- streamed past them.  Timed :batch_repeat times, median, beside the join
-- above (the same data, the same run).
SET work_mem = '256MB';
CREATE VIEW bqv AS SELECT n AS id, q AS fp FROM bq;
SELECT pg_temp.time_ms('SELECT count(*) FROM simhash_batch(''bqv'', ''fps'', 3)') \gset
INSERT INTO timing SELECT 'simhash_batch', pg_temp.time_ms('SELECT count(*) FROM simhash_batch(''bqv'', ''fps'', 3)')
FROM generate_series(1, :batch_repeat);
SELECT count(*) AS new_matches FROM simhash_batch('bqv', 'fps', 3) \gset
-- exactly the join's pairs, on the first 10,000 queries
CREATE VIEW bqv10k AS SELECT id, fp FROM bqv WHERE id <= 10000;
SELECT (SELECT count(*) FROM (SELECT query_id, target_id FROM simhash_batch('bqv10k', 'fps', 3)
                              EXCEPT SELECT bq.n, fps.id FROM bq JOIN fps ON fps.fp % bq.q WHERE bq.n <= 10000) x)
     + (SELECT count(*) FROM (SELECT bq.n, fps.id FROM bq JOIN fps ON fps.fp % bq.q WHERE bq.n <= 10000
                              EXCEPT SELECT query_id, target_id FROM simhash_batch('bqv10k', 'fps', 3)) x) AS differ \gset
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS new_ms FROM timing WHERE what = 'simhash_batch' \gset
INSERT INTO result (what, value) VALUES
	('simhash_batch, 1 process: ' || :batch || ' queries, s (median of ' || :batch_repeat || ')', round(:new_ms / 1000.0, 1)),
	('simhash_batch: us per query', round(:new_ms * 1000.0 / :batch, 1)),
	('simhash_batch: matches found', :new_matches),
	('simhash_batch: work_mem for the queries, MB (84 bytes each at d = 3)', round(:batch * 84 / 1e6, 1)),
	('simhash_batch: pairs differing from the join (first 10,000 queries)', :differ),
	('GIN batch 1 process / simhash_batch (same run)', round((:batch_ms / :new_ms)::numeric, 1)),
	('GIN batch 2 workers / simhash_batch (same run)', round((:batch_par_ms / :new_ms)::numeric, 1)),
	('simhash_batch: 1M queries would take, s', round(:new_ms / 1000.0 * 1000000 / :batch, 1));
RESET work_mem;

\if :split_blocks
-- The other layout, keys = blocks, queried at k = 3: max_distance + 2 blocks,
-- each a key, so four blocks of 16 bits (max_distance = 2: one shared block
-- at k = 3), five of 12-13 (max_distance = 3: two shared), six of 10-11
-- (max_distance = 4: three shared).
DROP INDEX fps_gin;
SELECT pg_temp.build('GIN keys=blocks max_distance=2 (4 blocks)',
					 'CREATE INDEX fps_gin2 ON fps USING gin (fp simhash_ops (max_distance = 2, keys = blocks))', 'fps_gin2') \gset
SELECT pg_temp.lookups('GIN keys=blocks max_distance=2 (4 blocks) lookup', 'SELECT count(*) FROM fps WHERE fp %% %L') \gset
SELECT pg_temp.candidates('GIN keys=blocks max_distance=2 (4 blocks) lookup', 'SELECT count(*) FROM fps WHERE fp %% %L') \gset
DROP INDEX fps_gin2;
SELECT pg_temp.build('GIN keys=blocks (5 blocks)',
					 'CREATE INDEX fps_gin3 ON fps USING gin (fp simhash_ops (keys = blocks))', 'fps_gin3') \gset
SELECT pg_temp.lookups('GIN keys=blocks (5 blocks) lookup', 'SELECT count(*) FROM fps WHERE fp %% %L') \gset
SELECT pg_temp.candidates('GIN keys=blocks (5 blocks) lookup', 'SELECT count(*) FROM fps WHERE fp %% %L') \gset
DROP INDEX fps_gin3;
SELECT pg_temp.build('GIN keys=blocks max_distance=4 (6 blocks)',
					 'CREATE INDEX fps_gin4 ON fps USING gin (fp simhash_ops (max_distance = 4, keys = blocks))', 'fps_gin4') \gset
SELECT pg_temp.lookups('GIN keys=blocks max_distance=4 (6 blocks) lookup', 'SELECT count(*) FROM fps WHERE fp %% %L') \gset
SELECT pg_temp.candidates('GIN keys=blocks max_distance=4 (6 blocks) lookup', 'SELECT count(*) FROM fps WHERE fp %% %L') \gset
DROP INDEX fps_gin4;
CREATE INDEX fps_gin ON fps USING gin (fp);
\endif

\if :split_pairs
-- Keys from all 15 pairs of six blocks (11, 11, 11, 11, 10, 10 bits): any
-- fingerprint within 3 bits shares 3 of them.  A prototype: a plain GIN
-- over the keys as bigint[], queried with && (one shared key, so it visits
-- more rows than an opclass demanding three would).
WITH b(i, s, l) AS (
	VALUES (0, 53, 11), (1, 42, 11), (2, 31, 11), (3, 20, 11), (4, 10, 10), (5, 0, 10))
SELECT 'ARRAY[' || string_agg(format('((%s::bigint << 48) | (((fp::bigint >> %s) & %s) << %s) | ((fp::bigint >> %s) & %s))',
									 x.i * 6 + y.i, x.s, (1::bigint << x.l) - 1, y.l, y.s, (1::bigint << y.l) - 1),
							  ', ' ORDER BY x.i, y.i) || ']' AS pair_keys
FROM b x JOIN b y ON y.i > x.i \gset
CREATE TABLE pk AS SELECT id, fp, :pair_keys AS keys FROM fps;
VACUUM ANALYZE pk;
CREATE FUNCTION pg_temp.build_pk(what text) RETURNS void
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	CREATE INDEX pk_gin ON pk USING gin (keys);
	INSERT INTO result (what, value) VALUES
		(what || ': build s', round(extract(epoch FROM clock_timestamp() - t0)::numeric, 1)),
		(what || ': MB', round(pg_relation_size('pk_gin') / 1e6, 1)),
		(what || ': bytes per row', round(pg_relation_size('pk_gin')::numeric / (SELECT count(*) FROM pk), 1));
END $$;
SELECT pg_temp.build_pk('GIN bigint[] of 15 pair keys (prototype)') \gset
CREATE TABLE lookup_pk AS SELECT n, q, (SELECT :pair_keys FROM (SELECT q AS fp) x) AS keys FROM lookup;
CREATE FUNCTION pg_temp.lookups_pk(what text) RETURNS void
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
BEGIN
	PERFORM pg_temp.time_ms(format('SELECT count(*) FROM pk WHERE keys && %L AND fp %% %L', l.keys, l.q)) FROM lookup_pk l;
	INSERT INTO timing SELECT what, pg_temp.time_ms(format('SELECT count(*) FROM pk WHERE keys && %L AND fp %% %L', l.keys, l.q)) FROM lookup_pk l;
	INSERT INTO result (what, value)
	SELECT what || ': p50 / p99 ms',
		   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3) || ' / ' ||
		   round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3)
	FROM timing t WHERE t.what = lookups_pk.what;
	INSERT INTO result (what, value)
	SELECT what || ': heap rows visited per lookup (mean / max)', round(avg(h), 1) || ' / ' || max(h)
	FROM (SELECT pg_temp.heap_rows(format('SELECT count(*) FROM pk WHERE keys && %L AND fp %% %L', l.keys, l.q)) AS h
		  FROM lookup_pk l) s;
END $$;
SELECT pg_temp.lookups_pk('GIN bigint[] of 15 pair keys (prototype) lookup') \gset
DROP TABLE pk;
\endif

-- GiST: sorted build, % lookups, k nearest (GIN does bitmap scans only:
-- with those off, the lookups go through GiST)
SELECT pg_temp.build('GiST simhash_ops', 'CREATE INDEX fps_gist ON fps USING gist (fp)', 'fps_gist') \gset
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps WHERE fp % :'q1';
SELECT pg_temp.lookups('GiST lookup', 'SELECT count(*) FROM fps WHERE fp %% %L') \gset
DELETE FROM lookup WHERE n > 20;
SELECT pg_temp.lookups('GiST 10 nearest (20 queries)',
					   'SELECT count(*) FROM (SELECT 1 FROM fps ORDER BY fp <-> %L LIMIT 10) s') \gset
SELECT pg_temp.lookups('GiST 10 nearest within k = 3 (20 queries)',
					   'SELECT count(*) FROM (SELECT 1 FROM fps WHERE fp %% %1$L ORDER BY fp <-> %1$L LIMIT 10) s') \gset

RESET enable_bitmapscan;

-- Both indexes: what the planner picks.  With GiST simhash_ops beside GIN,
-- GiST wins the costing for %; GiST simhash_knn_ops leaves % to GIN.
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps WHERE fp % :'q1';
EXPLAIN (COSTS OFF) SELECT count(*) FROM bq JOIN fps ON fps.fp % bq.q;
DROP INDEX fps_gist;
CREATE INDEX fps_gist_knn ON fps USING gist (fp simhash_knn_ops);
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps WHERE fp % :'q1';
EXPLAIN (COSTS OFF) SELECT count(*) FROM bq JOIN fps ON fps.fp % bq.q;
EXPLAIN (COSTS OFF) SELECT count(*) FROM (SELECT 1 FROM fps ORDER BY fp <-> :'q1' LIMIT 10) s;

SELECT what AS measure, value FROM result ORDER BY ord;
