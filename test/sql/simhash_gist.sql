-- simhash GiST: % returns exactly what a sequential scan returns, and
-- ORDER BY fp <-> q returns rows by non-decreasing Hamming distance, the
-- same nearest distances as a sort, and every row when asked for all.
SET extra_float_digits = 0;

-- fp with nbits distinct bits flipped, at positions chosen by salt
CREATE FUNCTION pg_temp.flip(fp simhash, nbits int, salt bigint) RETURNS simhash
LANGUAGE sql AS $$
    SELECT simhash_from_bigint(fp::bigint # coalesce(bit_or(1::bigint << pos), 0))
    FROM (SELECT pos FROM generate_series(0, 63) pos
          ORDER BY hashint8extended(pos, salt) LIMIT nbits) p
$$;

-- 100,000 random fingerprints, 40 queries with three planted neighbours at
-- each distance from 0 to 8, and 2,000 copies of one fingerprint
CREATE TABLE gist_queries AS
SELECT g AS q, simhash_from_bigint(hashint8extended(g, 42)) AS fp
FROM generate_series(1, 40) g;
CREATE TABLE gist_fps (id int PRIMARY KEY, fp simhash, planted_q int, planted_d int);
INSERT INTO gist_fps
SELECT g, simhash_from_bigint(hashint8extended(g, 1)), NULL, NULL
FROM generate_series(1, 100000) g;
INSERT INTO gist_fps
SELECT 100000 + row_number() OVER (ORDER BY q.q, d, r),
       pg_temp.flip(q.fp, d, q.q * 1000 + d * 10 + r), q.q, d
FROM gist_queries q, generate_series(0, 8) d, generate_series(1, 3) r;
INSERT INTO gist_fps SELECT g, 'a5a5a5a5a5a5a5a5', NULL, NULL FROM generate_series(200001, 202000) g;
SELECT count(*) AS rows, count(planted_q) AS planted FROM gist_fps;
VACUUM ANALYZE gist_fps;
ANALYZE gist_queries;

-- the same comparison as simhash_gin, for the GiST index
CREATE FUNCTION pg_temp.index_vs_seq(t int, index_name text)
RETURNS TABLE (threshold int, matches bigint, missing bigint, extra bigint,
               planted text, index_used bool)
LANGUAGE plpgsql AS $$
DECLARE
    q text := 'SELECT q.q, f.id FROM gist_queries q JOIN gist_fps f ON f.fp % q.fp';
    plan text := '';
    line text;
BEGIN
    PERFORM set_config('ndd.hamming_threshold', t::text, true);
    PERFORM set_config('enable_seqscan', 'off', true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        plan := plan || line || E'\n';
    END LOOP;
    EXECUTE 'CREATE TEMP TABLE via_index AS ' || q;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_indexonlyscan', 'off', true);
    EXECUTE 'CREATE TEMP TABLE via_seq AS ' || q;
    PERFORM set_config('enable_bitmapscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_indexonlyscan', 'on', true);
    RETURN QUERY
    SELECT t,
           (SELECT count(*) FROM via_seq),
           (SELECT count(*) FROM (SELECT * FROM via_seq EXCEPT SELECT * FROM via_index) x),
           (SELECT count(*) FROM (SELECT * FROM via_index EXCEPT SELECT * FROM via_seq) x),
           (SELECT count(*) FILTER (WHERE v.id IS NOT NULL) || ' of ' || count(*)
            FROM gist_fps f LEFT JOIN via_index v ON v.id = f.id AND v.q = f.planted_q
            WHERE f.planted_d <= t),
           plan ~ ('(Index Scan using|Bitmap Index Scan on) ' || index_name || '\M');
    DROP TABLE via_index;
    DROP TABLE via_seq;
END $$;

-- The k nearest of every query, by the index and by a sort: the distances
-- must be the same lists; each list non-decreasing.
CREATE FUNCTION pg_temp.knn_vs_sort(k int, index_name text)
RETURNS TABLE (queries bigint, same_distances bigint, ordered bigint,
               index_used bool, example int[])
LANGUAGE plpgsql AS $$
DECLARE
    q text := format('SELECT q.q, n.d FROM gist_queries q CROSS JOIN LATERAL '
                     '(SELECT array_agg(d) AS d FROM (SELECT f.fp <-> q.fp AS d FROM gist_fps f '
                     'ORDER BY f.fp <-> q.fp LIMIT %s) s) n', k);
    plan text := '';
    line text;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_sort', 'off', true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        plan := plan || line || E'\n';
    END LOOP;
    EXECUTE 'CREATE TEMP TABLE knn_index AS ' || q;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_sort', 'on', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_indexonlyscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    EXECUTE 'CREATE TEMP TABLE knn_sort AS ' || q;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_indexonlyscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    RETURN QUERY
    SELECT count(*),
           count(*) FILTER (WHERE i.d = s.d),
           count(*) FILTER (WHERE i.d = (SELECT array_agg(x ORDER BY x) FROM unnest(i.d) x)),
           plan ~ ('Index (Only )?Scan using ' || index_name || '\M'),
           (SELECT d FROM knn_index WHERE knn_index.q = 1)
    FROM knn_index i JOIN knn_sort s USING (q);
    DROP TABLE knn_index;
    DROP TABLE knn_sort;
END $$;

-- Built sorted (sortsupport), from the full table.
CREATE INDEX fps_gist ON gist_fps USING gist (fp);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM gist_fps WHERE fp % '0123456789abcdef';
EXPLAIN (COSTS OFF) SELECT id FROM gist_fps ORDER BY fp <-> '0123456789abcdef' LIMIT 10;
EXPLAIN (COSTS OFF) SELECT fp FROM gist_fps ORDER BY fp <-> '0123456789abcdef' LIMIT 10;
RESET enable_seqscan;
SELECT r.* FROM unnest(ARRAY[0, 1, 2, 3, 4, 6, 8, 12]) t, pg_temp.index_vs_seq(t, 'fps_gist') r;
SELECT * FROM pg_temp.knn_vs_sort(10, 'fps_gist');
SELECT * FROM pg_temp.knn_vs_sort(100, 'fps_gist');
-- complete: asked for every row, the index returns all of them, in order
SET enable_seqscan = off;
SET enable_sort = off;
SELECT count(*) AS rows, (SELECT count(*) FROM gist_fps) AS table_rows,
       bool_and(d >= prev) AS non_decreasing, min(d) AS nearest, max(d) AS farthest
FROM (SELECT d, lag(d, 1, 0) OVER (ORDER BY ord) AS prev
      FROM (SELECT fp <-> (SELECT fp FROM gist_queries WHERE q = 3) AS d,
                   row_number() OVER () AS ord
            FROM (SELECT fp FROM gist_fps ORDER BY fp <-> (SELECT fp FROM gist_queries WHERE q = 3)) o) n) m;
-- the nearest rows of a query are its planted neighbours, by distance
SELECT planted_d, fp <-> (SELECT fp FROM gist_queries WHERE q = 5) AS distance
FROM gist_fps ORDER BY fp <-> (SELECT fp FROM gist_queries WHERE q = 5) LIMIT 12;
-- index-only scans give back the fingerprints
SELECT count(*) AS rows, bool_and(fp <-> '0123456789abcdef' >= 0) AS ok
FROM (SELECT fp FROM gist_fps ORDER BY fp <-> '0123456789abcdef' LIMIT 1000) s;
-- % and ORDER BY together: the near-duplicates, nearest first
SET ndd.hamming_threshold = 2;
EXPLAIN (COSTS OFF)
SELECT id FROM gist_fps WHERE fp % '0123456789abcdef' ORDER BY fp <-> '0123456789abcdef';
SELECT f.planted_d, f.fp <-> q.qfp AS distance
FROM gist_fps f, (SELECT fp AS qfp FROM gist_queries WHERE q = 9) q
WHERE f.fp % q.qfp ORDER BY f.fp <-> q.qfp, f.id;
RESET ndd.hamming_threshold;
RESET enable_sort;
RESET enable_seqscan;
DROP INDEX fps_gist;

-- Built by insertion (penalty and picksplit), into an empty table.
CREATE TABLE gist_fps2 (LIKE gist_fps);
CREATE INDEX fps2_gist ON gist_fps2 USING gist (fp);
INSERT INTO gist_fps2 SELECT * FROM gist_fps ORDER BY id;
ALTER TABLE gist_fps RENAME TO gist_fps_loaded;
ALTER TABLE gist_fps2 RENAME TO gist_fps;
VACUUM ANALYZE gist_fps;
SELECT r.* FROM unnest(ARRAY[0, 2, 3, 4, 8]) t, pg_temp.index_vs_seq(t, 'fps2_gist') r;
SELECT * FROM pg_temp.knn_vs_sort(10, 'fps2_gist');
-- and more rows after that, with deletions
DELETE FROM gist_fps WHERE id % 7 = 0 AND planted_q IS NULL;
INSERT INTO gist_fps
SELECT g, simhash_from_bigint(hashint8extended(g, 1)), NULL, NULL
FROM generate_series(300001, 320000) g;
SELECT r.* FROM unnest(ARRAY[1, 3, 5]) t, pg_temp.index_vs_seq(t, 'fps2_gist') r;
SELECT * FROM pg_temp.knn_vs_sort(20, 'fps2_gist');

-- simhash_knn_ops: the same tree for ORDER BY only, so that beside a GIN
-- index % goes to GIN and ORDER BY <-> to GiST
DROP INDEX fps2_gist;
CREATE INDEX fps_gin ON gist_fps USING gin (fp);
CREATE INDEX fps_knn ON gist_fps USING gist (fp simhash_knn_ops);
EXPLAIN (COSTS OFF) SELECT id FROM gist_fps WHERE fp % '0123456789abcdef';
EXPLAIN (COSTS OFF) SELECT id FROM gist_fps ORDER BY fp <-> '0123456789abcdef' LIMIT 10;
EXPLAIN (COSTS OFF)
SELECT id FROM gist_fps WHERE fp % '0123456789abcdef' ORDER BY fp <-> '0123456789abcdef' LIMIT 10;
SELECT * FROM pg_temp.knn_vs_sort(10, 'fps_knn');

-- similar(fp, q, d): the distance as an argument (IMMUTABLE, so postgres_fdw
-- can send it to a shard); through the index it answers as
-- hamming_distance(fp, q) <= d does in a sequential scan, within the
-- index's max_distance and beyond it
DROP INDEX fps_gin, fps_knn;
CREATE INDEX fps_gist_similar ON gist_fps USING gist (fp simhash_ops);
CREATE FUNCTION pg_temp.similar_vs_seq(d int)
RETURNS TABLE (distance int, matches bigint, missing bigint, extra bigint, index_used bool)
LANGUAGE plpgsql AS $$
DECLARE
    plan text := '';
    line text;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT q.q, f.id FROM gist_queries q JOIN gist_fps f ON q.q <= 20 AND similar(f.fp, q.fp, %s)', d) LOOP
        plan := plan || line || E'\n';
    END LOOP;
    EXECUTE format('CREATE TEMP TABLE sim_index AS SELECT q.q, f.id FROM gist_queries q JOIN gist_fps f ON q.q <= 20 AND similar(f.fp, q.fp, %s)', d);
    PERFORM set_config('enable_seqscan', 'on', true);
    EXECUTE format('CREATE TEMP TABLE sim_seq AS SELECT q.q, f.id FROM gist_queries q, gist_fps f WHERE q.q <= 20 AND hamming_distance(f.fp, q.fp) <= %s', d);
    RETURN QUERY
    SELECT d, (SELECT count(*) FROM sim_seq),
           (SELECT count(*) FROM (SELECT * FROM sim_seq EXCEPT SELECT * FROM sim_index) x),
           (SELECT count(*) FROM (SELECT * FROM sim_index EXCEPT SELECT * FROM sim_seq) x),
           plan LIKE '%fps_gist_similar%';
    DROP TABLE sim_index, sim_seq;
END $$;
SELECT r.* FROM generate_series(0, 8) d, pg_temp.similar_vs_seq(d) r;
-- the support function also takes the column second
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM gist_fps WHERE similar('0123456789abcdef'::simhash, fp, 2);
SELECT count(*) FROM gist_fps WHERE similar(fp, NULL, 2);
SELECT count(*) FROM gist_fps WHERE fp % ROW('0123456789abcdef', NULL)::simhash_query;
SELECT count(*) FROM gist_fps WHERE similar(fp, '0123456789abcdef', 65);
\echo :SQLSTATE
SELECT count(*) FROM gist_fps WHERE fp % ROW('0123456789abcdef', -1)::simhash_query;
\echo :SQLSTATE
RESET enable_seqscan;
DROP INDEX fps_gist_similar;

SELECT opcname, amvalidate(opc.oid) FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE opcname IN ('simhash_ops', 'simhash_knn_ops') AND amname = 'gist' ORDER BY opcname;
