-- simhash GIN (block keys): index scans return exactly what sequential
-- scans return, at every threshold and max_distance, for single lookups and
-- for the batch join.
SET extra_float_digits = 0;

-- fp with nbits distinct bits flipped, at positions chosen by salt
CREATE FUNCTION pg_temp.flip(fp simhash, nbits int, salt bigint) RETURNS simhash
LANGUAGE sql AS $$
    SELECT simhash_from_bigint(fp::bigint # coalesce(bit_or(1::bigint << pos), 0))
    FROM (SELECT pos FROM generate_series(0, 63) pos
          ORDER BY hashint8extended(pos, salt) LIMIT nbits) p
$$;

-- 100,000 random fingerprints, and 40 queries with three planted neighbours
-- at each distance from 0 to 8
CREATE TABLE gin_queries AS
SELECT g AS q, simhash_from_bigint(hashint8extended(g, 42)) AS fp
FROM generate_series(1, 40) g;
CREATE TABLE gin_fps (id int PRIMARY KEY, fp simhash, planted_q int, planted_d int);
INSERT INTO gin_fps
SELECT g, simhash_from_bigint(hashint8extended(g, 1)), NULL, NULL
FROM generate_series(1, 100000) g;
INSERT INTO gin_fps
SELECT 100000 + row_number() OVER (ORDER BY q.q, d, r),
       pg_temp.flip(q.fp, d, q.q * 1000 + d * 10 + r), q.q, d
FROM gin_queries q, generate_series(0, 8) d, generate_series(1, 3) r;
SELECT count(*) AS rows, count(planted_q) AS planted FROM gin_fps;
-- the planted distances are what they claim
SELECT bool_and(hamming_distance(f.fp, q.fp) = f.planted_d) AS planted_ok
FROM gin_fps f JOIN gin_queries q ON q.q = f.planted_q;
ANALYZE gin_fps;
ANALYZE gin_queries;

-- Every query at once (the batch join), by the index and by sequential
-- scans; returns what each found, what the index missed or added, the
-- planted neighbours it found, and whether the plan used the index.
CREATE FUNCTION pg_temp.index_vs_seq(t int, index_name text)
RETURNS TABLE (threshold int, matches bigint, missing bigint, extra bigint,
               planted text, index_used bool)
LANGUAGE plpgsql AS $$
DECLARE
    q text := 'SELECT q.q, f.id FROM gin_queries q JOIN gin_fps f ON f.fp % q.fp';
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
    EXECUTE 'CREATE TEMP TABLE via_seq AS ' || q;
    PERFORM set_config('enable_bitmapscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    RETURN QUERY
    SELECT t,
           (SELECT count(*) FROM via_seq),
           (SELECT count(*) FROM (SELECT * FROM via_seq EXCEPT SELECT * FROM via_index) x),
           (SELECT count(*) FROM (SELECT * FROM via_index EXCEPT SELECT * FROM via_seq) x),
           (SELECT count(*) FILTER (WHERE v.id IS NOT NULL) || ' of ' || count(*)
            FROM gin_fps f LEFT JOIN via_index v ON v.id = f.id AND v.q = f.planted_q
            WHERE f.planted_d <= t),
           plan LIKE '%Bitmap Index Scan on ' || index_name || '%';
    DROP TABLE via_index;
    DROP TABLE via_seq;
END $$;

-- the default: max_distance = 3, keys = pairs: two halves of three blocks,
-- six keys of two blocks each
CREATE INDEX fps_gin ON gin_fps USING gin (fp);
SET enable_seqscan = off;
-- EXPLAIN (COSTS OFF) without the "Disabled: true" that 18 adds under a
-- scan enable_seqscan = off disabled (the query table's, in a join)
CREATE FUNCTION pg_temp.explain(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        CONTINUE WHEN line ~ '^ *Disabled: true$';
        RETURN NEXT line;
    END LOOP;
END $$;
SELECT * FROM pg_temp.explain($q$ SELECT id FROM gin_fps WHERE fp % '0123456789abcdef' $q$);
SELECT * FROM pg_temp.explain($q$ SELECT id FROM gin_fps WHERE '0123456789abcdef' % fp $q$);
SELECT * FROM pg_temp.explain($q$ SELECT q.q, f.id FROM gin_queries q JOIN gin_fps f ON f.fp % q.fp $q$);
RESET enable_seqscan;
-- thresholds up to max_distance and above: at 4, a difference may fall in
-- every pair, and every row is a candidate
SELECT r.* FROM generate_series(0, 5) t, pg_temp.index_vs_seq(t, 'fps_gin') r;
SELECT r.* FROM pg_temp.index_vs_seq(20, 'fps_gin') r;
-- a single lookup finds the planted neighbours and nothing else
SET enable_seqscan = off;
SELECT planted_d, count(*) FROM gin_fps
WHERE fp % (SELECT fp FROM gin_queries WHERE q = 7) GROUP BY planted_d ORDER BY planted_d;
RESET enable_seqscan;

-- rows added after the build (the pending list, then merged by VACUUM)
INSERT INTO gin_fps
SELECT 200000 + row_number() OVER (ORDER BY q.q, d, r),
       pg_temp.flip(q.fp, d, q.q * 1000 + d * 10 + r + 5), q.q, d
FROM gin_queries q, generate_series(0, 5) d, generate_series(1, 2) r;
INSERT INTO gin_fps
SELECT g, simhash_from_bigint(hashint8extended(g, 1)), NULL, NULL
FROM generate_series(300001, 310000) g;
SELECT r.* FROM generate_series(2, 4) t, pg_temp.index_vs_seq(t, 'fps_gin') r;
VACUUM gin_fps;
SELECT r.* FROM generate_series(2, 4) t, pg_temp.index_vs_seq(t, 'fps_gin') r;
DROP INDEX fps_gin;

-- keys = blocks: max_distance + 2 blocks, each a key, two of them shared
-- at max_distance, one at max_distance + 1, then every row
CREATE INDEX fps_gin_blocks ON gin_fps USING gin (fp simhash_ops (keys = blocks));
SELECT r.* FROM generate_series(2, 5) t, pg_temp.index_vs_seq(t, 'fps_gin_blocks') r;
DROP INDEX fps_gin_blocks;

-- other distances, both layouts: 0 (halves, or two 32-bit blocks), 1, 6
CREATE INDEX fps_gin0 ON gin_fps USING gin (fp simhash_ops (max_distance = 0));
SELECT r.* FROM generate_series(0, 2) t, pg_temp.index_vs_seq(t, 'fps_gin0') r;
DROP INDEX fps_gin0;
CREATE INDEX fps_gin0b ON gin_fps USING gin (fp simhash_ops (max_distance = 0, keys = blocks));
SELECT r.* FROM generate_series(0, 2) t, pg_temp.index_vs_seq(t, 'fps_gin0b') r;
DROP INDEX fps_gin0b;
CREATE INDEX fps_gin1b ON gin_fps USING gin (fp simhash_ops (max_distance = 1, keys = blocks));
SELECT r.* FROM generate_series(0, 3) t, pg_temp.index_vs_seq(t, 'fps_gin1b') r;
DROP INDEX fps_gin1b;
CREATE INDEX fps_gin6 ON gin_fps USING gin (fp simhash_ops (max_distance = 6));
SELECT r.* FROM unnest(ARRAY[3, 6, 7, 8]) t, pg_temp.index_vs_seq(t, 'fps_gin6') r;
DROP INDEX fps_gin6;
CREATE INDEX fps_gin6b ON gin_fps USING gin (fp simhash_ops (max_distance = 6, keys = blocks));
SELECT r.* FROM unnest(ARRAY[6, 7, 8]) t, pg_temp.index_vs_seq(t, 'fps_gin6b') r;
DROP INDEX fps_gin6b;

-- max_distance outside what the index supports: 22023 at CREATE INDEX
CREATE INDEX ON gin_fps USING gin (fp simhash_ops (max_distance = 7));
\echo :SQLSTATE
CREATE INDEX ON gin_fps USING gin (fp simhash_ops (max_distance = -1));
\echo :SQLSTATE
CREATE INDEX ON gin_fps USING gin (fp simhash_ops (max_distance = 'three'));
\echo :SQLSTATE
CREATE INDEX ON gin_fps USING gin (fp simhash_ops (keys = triples));
\echo :SQLSTATE
CREATE INDEX ON gin_fps USING gin (fp simhash_ops (blocks = 4));
\echo :SQLSTATE

-- similar(fp, q, d): the distance as an argument (IMMUTABLE, so postgres_fdw
-- can send it to a shard); through the index it answers as
-- hamming_distance(fp, q) <= d does in a sequential scan, within the
-- index's max_distance and beyond it
CREATE INDEX fps_gin_similar ON gin_fps USING gin (fp simhash_ops);
CREATE FUNCTION pg_temp.similar_vs_seq(d int)
RETURNS TABLE (distance int, matches bigint, missing bigint, extra bigint, index_used bool)
LANGUAGE plpgsql AS $$
DECLARE
    plan text := '';
    line text;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT q.q, f.id FROM gin_queries q JOIN gin_fps f ON q.q <= 20 AND similar(f.fp, q.fp, %s)', d) LOOP
        plan := plan || line || E'\n';
    END LOOP;
    EXECUTE format('CREATE TEMP TABLE sim_index AS SELECT q.q, f.id FROM gin_queries q JOIN gin_fps f ON q.q <= 20 AND similar(f.fp, q.fp, %s)', d);
    PERFORM set_config('enable_seqscan', 'on', true);
    EXECUTE format('CREATE TEMP TABLE sim_seq AS SELECT q.q, f.id FROM gin_queries q, gin_fps f WHERE q.q <= 20 AND hamming_distance(f.fp, q.fp) <= %s', d);
    RETURN QUERY
    SELECT d, (SELECT count(*) FROM sim_seq),
           (SELECT count(*) FROM (SELECT * FROM sim_seq EXCEPT SELECT * FROM sim_index) x),
           (SELECT count(*) FROM (SELECT * FROM sim_index EXCEPT SELECT * FROM sim_seq) x),
           plan LIKE '%fps_gin_similar%';
    DROP TABLE sim_index, sim_seq;
END $$;
SELECT r.* FROM generate_series(0, 8) d, pg_temp.similar_vs_seq(d) r;
-- the support function also takes the column second
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM gin_fps WHERE similar('0123456789abcdef'::simhash, fp, 2);
SELECT count(*) FROM gin_fps WHERE similar(fp, NULL, 2);
SELECT count(*) FROM gin_fps WHERE fp % ROW('0123456789abcdef', NULL)::simhash_query;
SELECT count(*) FROM gin_fps WHERE similar(fp, '0123456789abcdef', 65);
\echo :SQLSTATE
SELECT count(*) FROM gin_fps WHERE fp % ROW('0123456789abcdef', -1)::simhash_query;
\echo :SQLSTATE
RESET enable_seqscan;
DROP INDEX fps_gin_similar;

SELECT amvalidate(opc.oid) FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE opcname = 'simhash_ops' AND amname = 'gin';
