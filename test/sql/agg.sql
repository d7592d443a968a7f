-- minhash_union: the sketch of a union, serial and parallel.
SET extra_float_digits = 0;

-- 2000 sets of 1..30 integers; their union is 1..3000
CREATE TABLE parts AS
SELECT g AS id, array_agg(((g * 37 + i * 101) % 3000) + 1)::bigint[] AS elems
FROM generate_series(1, 2000) g, generate_series(1, 1 + g % 30) i
GROUP BY g;
ALTER TABLE parts ADD COLUMN mh minhash;
UPDATE parts SET mh = minhash_sketch(elems);

-- the union of the sketches is exactly the sketch of the union
SELECT minhash_union(mh)::text = (SELECT minhash_sketch(array_agg(e)) FROM parts, unnest(elems) e)::text
       AS union_exact
FROM parts;
-- short sets leave positions to densification: the union is still exact
SELECT minhash_union(mh)::text = minhash_sketch(ARRAY[1,2,3]::bigint[])::text AS small_union_exact
FROM (VALUES (minhash_sketch(ARRAY[1]::bigint[])), (minhash_sketch(ARRAY[2,3]::bigint[]))) v(mh);
-- documents: the union of two halves resembles the whole
SELECT similarity(minhash_union(minhash_sketch(part, shingle_size => 1)),
                  minhash_sketch('alpha beta gamma delta epsilon zeta eta theta', shingle_size => 1))
FROM (VALUES ('alpha beta gamma delta'), ('epsilon zeta eta theta')) v(part);

-- parallel aggregation gives the same sketch
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT minhash_union(mh) FROM parts;
SELECT minhash_union(mh)::text = (SELECT minhash_sketch(array_agg(e)) FROM parts, unnest(elems) e)::text
       AS parallel_union_exact
FROM parts;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- NULLs are skipped; no rows or only NULLs give NULL; empty sets add nothing
SELECT minhash_union(mh) IS NULL AS none FROM parts WHERE false;
SELECT minhash_union(NULL::minhash) IS NULL AS only_null;
SELECT minhash_union(mh)::text = minhash_sketch(ARRAY[5]::bigint[])::text AS nulls_skipped
FROM (VALUES (NULL::minhash), (minhash_sketch(ARRAY[5]::bigint[])), (NULL)) v(mh);
SELECT minhash_union(mh)::text = minhash_sketch(ARRAY[5]::bigint[])::text AS empty_adds_nothing
FROM (VALUES (minhash_sketch('{}'::bigint[])), (minhash_sketch(ARRAY[5]::bigint[]))) v(mh);
SELECT minhash_union(mh) FROM (VALUES (minhash_sketch('{}'::bigint[], 16))) v(mh);

-- mixed settings are an error
SELECT minhash_union(mh) FROM (VALUES (minhash_sketch('a b')), (minhash_sketch('a b', 64))) v(mh);
\echo :SQLSTATE

-- ndd_components: connected components of pairs by union-find, each id
-- labelled with the smallest id of its component; NULL ids are skipped
SELECT ndd_components(a, b) FROM (VALUES (1, 2), (3, 4), (2, 3), (11, 10), (NULL, 5), (7, 7)) v(a, b);
SELECT ndd_components(a, b) FROM (VALUES (NULL::bigint, NULL::bigint)) v(a, b);
SELECT ndd_components(a, b) IS NULL AS no_pairs FROM (VALUES (1::bigint, 2::bigint)) v(a, b) WHERE false;
-- the same components as a recursive walk over 400 pseudo-random edges
CREATE TEMP TABLE edges AS
SELECT (g * 7919) % 500 AS a, (g * 104729 + 13) % 500 AS b FROM generate_series(1, 400) g;
WITH RECURSIVE e AS (SELECT a AS x, b AS y FROM edges UNION SELECT b, a FROM edges),
     r(id, c) AS (SELECT x, x FROM e UNION SELECT r.id, e.y FROM r JOIN e ON e.x = r.c),
     walk AS (SELECT id, min(c) AS label FROM r GROUP BY id),
     uf AS (SELECT c[i][1] AS id, c[i][2] AS label
            FROM (SELECT ndd_components(a, b) AS c FROM edges) s, generate_subscripts(s.c, 1) i)
SELECT (SELECT count(*) FROM walk) AS ids,
       (SELECT count(DISTINCT label) FROM walk) AS components,
       (SELECT count(*) FROM (SELECT * FROM walk EXCEPT SELECT * FROM uf) d) +
       (SELECT count(*) FROM (SELECT * FROM uf EXCEPT SELECT * FROM walk) d) AS differences;
