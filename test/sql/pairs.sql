-- All-pairs discovery and clusters against brute force.
SET extra_float_digits = 0;
\set SHOW_CONTEXT never

-- 2,000 documents: 500 families of a base and three edited copies
-- uniform(key, stream): a number in [0, 1) hashed from its arguments, so
-- the data do not depend on the order a plan evaluates rows in
CREATE FUNCTION pg_temp.uniform(key bigint, stream bigint) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT
AS $$ SELECT (hashint8extended(key, stream) & 4503599627370495)::float8 / 4503599627370496 $$;
CREATE TABLE pbase AS
SELECT f, array_agg('w' || floor(pg_temp.uniform(f * 80 + i, 1) * 5000)::int ORDER BY i) AS words
FROM generate_series(1, 500) f, generate_series(1, 80) i GROUP BY f;
CREATE TABLE pdocs AS
SELECT f * 4 + v AS id,
       CASE WHEN v = 0 THEN array_to_string(words, ' ')
            ELSE (SELECT string_agg(CASE WHEN pg_temp.uniform((f * 4 + v) * 80 + n, 2) < 0.01 * v * (1 + f % 4)
                                         THEN 'x' || floor(pg_temp.uniform((f * 4 + v) * 80 + n, 3) * 5000)::int ELSE w END, ' ' ORDER BY n)
                  FROM unnest(words) WITH ORDINALITY AS u(w, n)) END AS body
FROM pbase, generate_series(0, 3) v;
-- a chain: a ~ b and b ~ c, but a and c further apart
INSERT INTO pdocs
SELECT 10000 + c, string_agg('chain' || g, ' ')
FROM generate_series(0, 2) c, generate_series(1 + 10 * c, 100 + 10 * c) g GROUP BY c;
-- rows without a sketch take no part
INSERT INTO pdocs VALUES (20000, NULL);
ALTER TABLE pdocs ADD PRIMARY KEY (id);
ALTER TABLE pdocs ADD COLUMN sketch minhash;
UPDATE pdocs SET sketch = minhash_sketch(body);
ANALYZE pdocs;

CREATE TABLE brute AS
SELECT a.id AS id_a, b.id AS id_b, similarity(a.sketch, b.sketch) AS similarity
FROM pdocs a JOIN pdocs b ON a.id < b.id
WHERE similarity(a.sketch, b.sketch) >= 0.5;

-- the same pairs as brute force, at every threshold
SELECT t, (SELECT count(*) FROM brute WHERE similarity >= t) AS brute_force,
       (SELECT count(*) FROM near_duplicate_pairs('pdocs', 'sketch', 'id', t)) AS found,
       (SELECT count(*) FROM ((SELECT id_a, id_b, similarity FROM near_duplicate_pairs('pdocs', 'sketch', 'id', t)
                               EXCEPT SELECT * FROM brute WHERE similarity >= t)
                              UNION ALL
                              (SELECT * FROM brute WHERE similarity >= t
                               EXCEPT SELECT id_a, id_b, similarity FROM near_duplicate_pairs('pdocs', 'sketch', 'id', t))) d) AS differences
FROM unnest(ARRAY[0.5, 0.7, 0.8, 0.9, 1.0]) t;
-- the threshold defaults to ndd.similarity_threshold; progress on request
-- (terse: the DETAIL lines carry elapsed times)
SET ndd.similarity_threshold = 0.9;
\set VERBOSITY terse
SELECT count(*) FROM near_duplicate_pairs('pdocs', 'sketch', 'id', progress => true);
\set VERBOSITY default
RESET ndd.similarity_threshold;
-- minhash pairs carry no distance
SELECT count(*) AS with_distance FROM near_duplicate_pairs('pdocs', 'sketch', 'id', 0.8) WHERE distance IS NOT NULL;

-- the least work_mem: the key filter saturates, and only does less good
SET work_mem = '64kB';
SELECT count(*) AS differences FROM (
    (SELECT id_a, id_b, similarity FROM near_duplicate_pairs('pdocs', 'sketch', 'id', 0.7)
     EXCEPT SELECT * FROM brute WHERE similarity >= 0.7)
    UNION ALL
    (SELECT * FROM brute WHERE similarity >= 0.7
     EXCEPT SELECT id_a, id_b, similarity FROM near_duplicate_pairs('pdocs', 'sketch', 'id', 0.7))) d;
RESET work_mem;

-- 600 documents that share a long paragraph: their common band keys make
-- big buckets, which each row leaves out (prefix filtering); still exact
CREATE TABLE bdocs AS
SELECT i AS id, minhash_sketch(
           (SELECT string_agg('common' || g, ' ') FROM generate_series(1, 30 + i % 40) g) || ' ' ||
           (SELECT string_agg('u' || floor(pg_temp.uniform(i * 32 + g, 4) * 100000)::int, ' ' ORDER BY g) FROM generate_series(1, 20 + i % 7) g)) AS sketch
FROM generate_series(1, 600) i;
ANALYZE bdocs;
SELECT t, (SELECT count(*) FROM bdocs a JOIN bdocs b ON a.id < b.id WHERE similarity(a.sketch, b.sketch) >= t) AS brute_force,
       (SELECT count(*) FROM ((SELECT id_a, id_b FROM near_duplicate_pairs('bdocs', 'sketch', 'id', t)
                               EXCEPT SELECT a.id, b.id FROM bdocs a JOIN bdocs b ON a.id < b.id
                                      WHERE similarity(a.sketch, b.sketch) >= t)
                              UNION ALL
                              (SELECT a.id, b.id FROM bdocs a JOIN bdocs b ON a.id < b.id
                               WHERE similarity(a.sketch, b.sketch) >= t
                               EXCEPT SELECT id_a, id_b FROM near_duplicate_pairs('bdocs', 'sketch', 'id', t))) d) AS differences
FROM unnest(ARRAY[0.5, 0.6, 0.7]) t;

-- the pieces: low bits never agree less than the sketches do
SELECT bool_and(minhash_lowbits_agreement(minhash_lowbits(a.sketch), minhash_lowbits(b.sketch))
                >= round(similarity(a.sketch, b.sketch) * 128)) AS lowbits_bound,
       count(*) FILTER (WHERE minhash_lowbits_agreement(minhash_lowbits(a.sketch), minhash_lowbits(b.sketch))
                        >= 103 AND similarity(a.sketch, b.sketch) < 0.5) AS unrelated_passing
FROM pdocs a JOIN pdocs b ON b.id = a.id + 1 OR b.id = a.id + 37
WHERE a.sketch IS NOT NULL AND b.sketch IS NOT NULL;
-- an empty document has no band keys; every key seen twice collides
SELECT minhash_band_keys(minhash_sketch(''), 32, 4) AS empty_keys;
CREATE TEMP TABLE kf AS
SELECT ndd_colliding_keys(ARRAY[g::bigint, 42, 7], 3000) AS f FROM generate_series(1000, 1999) g;
SELECT ndd_colliding(ARRAY[42::bigint, 7], f) AS repeated_kept,
       (SELECT count(*) FROM generate_series(1000, 1999) g
        WHERE ndd_colliding(ARRAY[g::bigint], f) <> '{}') < 300 AS most_singles_dropped,
       -- each row may leave out its most frequent keys: 42 and 7 here
       ndd_colliding(ARRAY[1500::bigint, 42, 7], f, 2) && ARRAY[42::bigint, 7] AS frequent_kept
FROM kf;
-- a filter read in place from a materialized tuple, where a bytea is only
-- 4-byte aligned (the sanitizer run, scripts/sanitize.sh, sees any
-- unaligned read)
WITH f AS MATERIALIZED (SELECT 1::int4 AS pad, ndd_colliding_keys(ARRAY[1, 2, 2]::bigint[], 3) AS filter)
SELECT ndd_colliding(ARRAY[1, 2]::bigint[], f.filter) AS from_a_tuple FROM f;
SELECT ndd_colliding(ARRAY[1::bigint], '\x00'::bytea);
\echo :SQLSTATE
-- a filter with no bits and no counters is not one ndd_colliding_keys makes
SELECT ndd_colliding(ARRAY[1::bigint, 2, 3], decode(repeat('00', 24), 'hex'));
\echo :SQLSTATE
-- all of a large work_mem: the filter still fits a value (2^31 bits a bitmap)
SET work_mem = '2GB';
SELECT length(ndd_colliding_keys(ARRAY[1, 2, 3]::bigint[], NULL)) AS filter_bytes;
-- discovery on a table never analysed counts its rows and sizes the filter
-- for them, instead of taking all of work_mem
CREATE TABLE pfresh (id bigint, sketch minhash);
INSERT INTO pfresh SELECT g, minhash_sketch('the same few words ' || g % 2) FROM generate_series(1, 4) g;
SELECT reltuples FROM pg_class WHERE oid = 'pfresh'::regclass;
\set VERBOSITY terse
SELECT count(*) FROM near_duplicate_pairs('pfresh', 'sketch', 'id', progress => true);
\set VERBOSITY default
DROP TABLE pfresh;
RESET work_mem;
SELECT ndd_colliding(ARRAY[1::bigint], f, -1) FROM kf;
\echo :SQLSTATE
SELECT ndd_colliding(ARRAY[1::bigint, NULL], f) FROM kf;
\echo :SQLSTATE
-- across shards: partial states of two halves, merged, make the filter of
-- the whole (same bits), so a key seen once in each half collides
SELECT ndd_key_filter_bits(3000) AS bits \gset
CREATE TEMP TABLE halves AS
SELECT (SELECT ndd_colliding_keys_partial(ARRAY[g::bigint, 42, 7, 5000 + g % 500], :bits)
        FROM generate_series(1000, 1499) g) AS lo,
       (SELECT ndd_colliding_keys_partial(ARRAY[g::bigint, 42, 7, 5000 + g % 500], :bits)
        FROM generate_series(1500, 1999) g) AS hi;
SELECT (SELECT ndd_colliding_keys_merge(p) FROM (SELECT lo FROM halves UNION ALL SELECT hi FROM halves) s(p))
       = (SELECT ndd_colliding_keys(ARRAY[g::bigint, 42, 7, 5000 + g % 500], 3000) FROM generate_series(1000, 1999) g)
       AS merged_equals_whole;
-- 5000 + g % 500 is seen once in each half: only the merge can tell
SELECT ndd_colliding(ARRAY[5123::bigint], ndd_colliding_keys_merge(p)) AS across_halves
FROM (SELECT lo FROM halves UNION ALL SELECT hi FROM halves) s(p);
-- a parallel partial aggregate makes the same state as a serial one
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE TABLE keyrows_p AS SELECT g FROM generate_series(1, 20000) g;
EXPLAIN (COSTS OFF) SELECT ndd_colliding_keys_partial(ARRAY[g::bigint, g % 1000], :bits) FROM keyrows_p;
SELECT ndd_colliding_keys_partial(ARRAY[g::bigint, g % 1000], :bits) AS parallel_state FROM keyrows_p \gset
RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT ndd_colliding_keys_partial(ARRAY[g::bigint, g % 1000], :bits) = :'parallel_state'::bytea AS parallel_same
FROM keyrows_p;
DROP TABLE keyrows_p;
SELECT ndd_colliding_keys_merge(p) IS NULL AS no_states FROM halves, LATERAL (SELECT NULL::bytea) s(p);
SELECT ndd_colliding_keys_partial(ARRAY[1::bigint], 100);
\echo :SQLSTATE
SELECT ndd_colliding_keys_partial(ARRAY[1::bigint], NULL);
\echo :SQLSTATE
SELECT ndd_colliding_keys_merge(p) FROM (SELECT ndd_colliding_keys_partial(ARRAY[1::bigint], 65536)
                                         UNION ALL SELECT ndd_colliding_keys_partial(ARRAY[1::bigint], 131072)) s(p);
\echo :SQLSTATE
SELECT ndd_colliding_keys_merge('\x0102'::bytea);
\echo :SQLSTATE

-- exact verification on 400 rows: the pairs whose texts reach 0.8, exactly
CREATE TABLE vdocs AS SELECT * FROM pdocs WHERE id < 400 OR id >= 10000;
SELECT count(*) AS brute_force FROM vdocs a JOIN vdocs b ON a.id < b.id
WHERE jaccard(a.body, b.body) >= 0.8;
SELECT count(*) AS differences FROM (
    (SELECT id_a, id_b FROM near_duplicate_pairs('vdocs', 'sketch', 'id', 0.8, verify_column => 'body')
     EXCEPT SELECT a.id, b.id FROM vdocs a JOIN vdocs b ON a.id < b.id WHERE jaccard(a.body, b.body) >= 0.8)
    UNION ALL
    (SELECT a.id, b.id FROM vdocs a JOIN vdocs b ON a.id < b.id WHERE jaccard(a.body, b.body) >= 0.8
     EXCEPT SELECT id_a, id_b FROM near_duplicate_pairs('vdocs', 'sketch', 'id', 0.8, verify_column => 'body'))) d;
-- and the similarity it reports is the exact one
SELECT bool_and(p.similarity = jaccard(a.body, b.body)) AS exact_values
FROM near_duplicate_pairs('vdocs', 'sketch', 'id', 0.8, verify_column => 'body') p
JOIN vdocs a ON a.id = p.id_a JOIN vdocs b ON b.id = p.id_b;
-- on the SQL path, a temporary table of verification's left in the session
-- (by an earlier call that failed) is dropped, not tripped over
CREATE TEMP TABLE ndd_pair_kept (x int);
CREATE TEMP TABLE ndd_pair_sets (x int);
SET ndd.discovery_path = sql;
SELECT count(*) AS verified FROM near_duplicate_pairs('vdocs', 'sketch', 'id', 0.8, verify_column => 'body');
RESET ndd.discovery_path;
SELECT count(*) AS left_over FROM pg_class WHERE relname IN ('ndd_pair_kept', 'ndd_pair_sets') AND relpersistence = 't';

-- clusters: connected components, the same as a brute-force closure
CREATE TABLE clusters AS SELECT * FROM near_duplicate_clusters('pdocs', 'sketch', 'id', 0.75);
CREATE TABLE brute_clusters AS
WITH RECURSIVE edge AS (
    SELECT id_a AS x, id_b AS y FROM brute WHERE similarity >= 0.75
    UNION ALL SELECT id_b, id_a FROM brute WHERE similarity >= 0.75
), reach(id, root) AS (
    SELECT x, x FROM edge
    UNION
    SELECT e.y, r.root FROM reach r JOIN edge e ON e.x = r.id
)
SELECT id, min(root) AS cluster_id FROM reach GROUP BY id;
SELECT count(*) AS rows_in_clusters, count(DISTINCT cluster_id) AS clusters,
       (SELECT count(*) FROM ((TABLE clusters EXCEPT TABLE brute_clusters)
                              UNION ALL (TABLE brute_clusters EXCEPT TABLE clusters)) d) AS differences
FROM clusters;
-- the chain is one cluster, though its ends are not near-duplicates
SELECT id, cluster_id FROM clusters WHERE id >= 10000 ORDER BY id;
SELECT round(similarity(a.sketch, c.sketch)::numeric, 2) < 0.75 AS ends_apart
FROM pdocs a, pdocs c WHERE a.id = 10000 AND c.id = 10002;

-- keep one row per cluster, the representative chosen by an ordering over
-- the table's columns (here: the longest text, ties to the lowest id): the
-- same as a window function over the clusters
CREATE TABLE reps AS
SELECT * FROM near_duplicate_clusters('pdocs', 'sketch', 'id', 0.75,
                                      representative_order => 'length(body) DESC');
SELECT count(*) AS differences FROM (
    (TABLE reps EXCEPT
     SELECT c.id, first_value(c.id) OVER (PARTITION BY c.cluster_id ORDER BY length(p.body) DESC, c.id)
     FROM clusters c JOIN pdocs p ON p.id = c.id)
    UNION ALL
    (SELECT c.id, first_value(c.id) OVER (PARTITION BY c.cluster_id ORDER BY length(p.body) DESC, c.id)
     FROM clusters c JOIN pdocs p ON p.id = c.id
     EXCEPT TABLE reps)) d;
-- mark the others, or delete them
ALTER TABLE pdocs ADD COLUMN duplicate_of bigint;
UPDATE pdocs d SET duplicate_of = c.cluster_id
FROM near_duplicate_clusters('pdocs', 'sketch', 'id', 0.75, representative_order => 'length(body) DESC') c
WHERE d.id = c.id AND c.id <> c.cluster_id;
SELECT count(*) FILTER (WHERE duplicate_of IS NULL) AS kept,
       count(*) FILTER (WHERE duplicate_of IS NOT NULL) AS marked FROM pdocs;
DELETE FROM pdocs d
USING near_duplicate_clusters('pdocs', 'sketch', 'id', 0.75, representative_order => 'length(body) DESC') c
WHERE d.id = c.id AND c.id <> c.cluster_id;
SELECT count(*) AS left_after_delete,
       (SELECT count(*) FROM near_duplicate_pairs('pdocs', 'sketch', 'id', 0.75)) AS pairs_left,
       (SELECT count(*) FROM pdocs p JOIN reps r ON r.id = p.id WHERE r.id <> r.cluster_id) AS non_representatives_left
FROM pdocs;

-- simhash columns: fingerprints within max_distance bits, as brute force
CREATE TABLE sdocs AS
SELECT b * 3 + v AS id,
       CASE WHEN v = 0 THEN base
            ELSE (SELECT simhash_from_bigint(simhash_to_bigint(base) #
                         coalesce(bit_or((1::bigint << floor(pg_temp.uniform((b * 3 + v) * 16 + g, 5) * 64)::int)), 0))
                  FROM generate_series(1, (b * v) % 9) g) END AS fp
FROM (SELECT b, simhash_from_bigint((pg_temp.uniform(b, 6) * 9.2e18)::bigint # ((pg_temp.uniform(b, 7) * 4)::bigint << 62)) AS base
      FROM generate_series(1, 1000) b) s, generate_series(0, 2) v;
INSERT INTO sdocs VALUES (1000000, NULL);
ANALYZE sdocs;
SELECT k, (SELECT count(*) FROM sdocs a JOIN sdocs b ON a.id < b.id WHERE hamming_distance(a.fp, b.fp) <= k) AS brute_force,
       (SELECT count(*) FROM ((SELECT id_a, id_b, distance FROM near_duplicate_pairs('sdocs', 'fp', 'id', max_distance => k)
                               EXCEPT SELECT a.id, b.id, hamming_distance(a.fp, b.fp) FROM sdocs a JOIN sdocs b ON a.id < b.id
                                      WHERE hamming_distance(a.fp, b.fp) <= k)
                              UNION ALL
                              (SELECT a.id, b.id, hamming_distance(a.fp, b.fp) FROM sdocs a JOIN sdocs b ON a.id < b.id
                               WHERE hamming_distance(a.fp, b.fp) <= k
                               EXCEPT SELECT id_a, id_b, distance FROM near_duplicate_pairs('sdocs', 'fp', 'id', max_distance => k))) d) AS differences
FROM generate_series(0, 6) k;
-- max_distance defaults to ndd.hamming_threshold; similarity is simhash_cosine
SET ndd.hamming_threshold = 2;
SELECT count(*) AS pairs, bool_and(similarity = simhash_cosine(a.fp, b.fp)) AS cosine
FROM near_duplicate_pairs('sdocs', 'fp', 'id') p JOIN sdocs a ON a.id = p.id_a JOIN sdocs b ON b.id = p.id_b;
RESET ndd.hamming_threshold;
-- clusters over fingerprints
SELECT count(*) AS rows_in_clusters, count(DISTINCT cluster_id) AS clusters
FROM near_duplicate_clusters('sdocs', 'fp', 'id', max_distance => 3);
-- simhash candidates verified by the exact Jaccard of the texts
CREATE TABLE svdocs AS SELECT id, body, simhash(doc => body) AS fp FROM vdocs WHERE body IS NOT NULL;
SELECT count(*) AS differences FROM (
    (SELECT id_a, id_b FROM near_duplicate_pairs('svdocs', 'fp', 'id', 0.8, verify_column => 'body', max_distance => 6)
     EXCEPT SELECT a.id, b.id FROM svdocs a JOIN svdocs b ON a.id < b.id
            WHERE jaccard(a.body, b.body) >= 0.8 AND hamming_distance(a.fp, b.fp) <= 6)
    UNION ALL
    (SELECT a.id, b.id FROM svdocs a JOIN svdocs b ON a.id < b.id
     WHERE jaccard(a.body, b.body) >= 0.8 AND hamming_distance(a.fp, b.fp) <= 6
     EXCEPT SELECT id_a, id_b FROM near_duplicate_pairs('svdocs', 'fp', 'id', 0.8, verify_column => 'body', max_distance => 6))) d;
SELECT simhash_keys('0123456789abcdef'::simhash, 3) AS keys_at_3;

-- bad input
SELECT * FROM near_duplicate_pairs('pdocs', 'sketch', 'id', 0);
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('pdocs', 'sketch', 'id', 1.5);
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('pdocs', 'nosuch', 'id');
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('nosuch', 'sketch', 'id');
\echo :SQLSTATE
SELECT * FROM lsh_banding(minhash_sketch('a'), 0.8, -1);
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('pdocs', 'body', 'id');
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('sdocs', 'fp', 'id', max_distance => 7);
\echo :SQLSTATE
-- NULL names, and a verify column that cannot be verified with: said before any work
CREATE TABLE perr (id int, body text, n int, am minhash, fp simhash);
INSERT INTO perr VALUES (1, 'a b c d e f g', 1, minhash_sketch(ARRAY['a', 'b']), simhash(doc => 'a b c d e f g')),
                        (2, 'a b c d e f h', 2, minhash_sketch(ARRAY['a', 'b', 'c']), simhash(doc => 'a b c d e f h'));
SELECT * FROM near_duplicate_pairs(NULL, 'am', 'id');
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('perr', NULL, 'id');
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('perr', 'am', 'id', 0.5, verify_column => 'body');
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('perr', 'fp', 'id', verify_column => 'n', max_distance => 6);
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('perr', 'fp', 'id', verify_column => 'nosuch', max_distance => 6);
\echo :SQLSTATE
DROP TABLE perr;
-- sketches made in different ways: a clear error before any work, whichever comes first
CREATE TABLE pmix (id int, mh minhash);
INSERT INTO pmix VALUES (1, minhash_sketch('a b c d e f g h i j', num_perm => 16));
INSERT INTO pmix SELECT g, minhash_sketch('a b c d e f g h i j k' || g, num_perm => 32) FROM generate_series(2, 5) g;
SELECT * FROM near_duplicate_pairs('pmix', 'mh', 'id', 0.5);
\echo :SQLSTATE
DELETE FROM pmix WHERE id = 1;
INSERT INTO pmix VALUES (1, minhash_sketch('a b c d e f g h i j', num_perm => 16));
SELECT * FROM near_duplicate_clusters('pmix', 'mh', 'id', 0.5);
\echo :SQLSTATE
-- one kind only: the pairs are found
DELETE FROM pmix WHERE id = 1;
SELECT count(*) AS pairs FROM near_duplicate_pairs('pmix', 'mh', 'id', 0.5);
DROP TABLE pmix;
SELECT simhash_keys('0000000000000000'::simhash, -1);
\echo :SQLSTATE
-- the error points into generated SQL, at a position that moves when that
-- SQL changes: its message is shown without one
\set VERBOSITY sqlstate
SELECT * FROM near_duplicate_clusters('pdocs', 'sketch', 'id', representative_order => 'nosuch');
\echo :LAST_ERROR_MESSAGE
\echo :SQLSTATE
\set VERBOSITY default
-- an empty table has no pairs
CREATE TABLE empty_docs (id int, sketch minhash, fp simhash);
SELECT count(*) FROM near_duplicate_pairs('empty_docs', 'sketch', 'id');
SELECT count(*) FROM near_duplicate_clusters('empty_docs', 'sketch', 'id');
SELECT count(*) FROM near_duplicate_pairs('empty_docs', 'fp', 'id');
-- empty documents are similar to nothing, even to each other
INSERT INTO empty_docs SELECT g, minhash_sketch(''), NULL FROM generate_series(1, 3) g;
SELECT count(*) FROM near_duplicate_pairs('empty_docs', 'sketch', 'id', 0.1);
