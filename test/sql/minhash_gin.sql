-- LSH banding: the GIN operator class minhash_ops, similar(), the bucket
-- table helper and the S-curve helpers.
SET extra_float_digits = 0;
SET jit = off;

SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'minhash_ops';

-- S-curve helpers against hand-computed values:
-- 20 bands of 5 at 0.8 miss a pair with probability 1 - 0.99964394 = 0.00036
SELECT round(lsh_probability(0.8, 20, 5)::numeric, 8) AS p_20x5_at_08,
       round(1 - lsh_probability(0.8, 20, 5)::numeric, 5) AS missed,
       lsh_probability(0, 10, 2) AS at_0, lsh_probability(1, 10, 2) AS at_1,
       round(lsh_probability(0.5, 1, 1)::numeric, 3) AS one_band_one_row;
-- lsh_params: values from an independent implementation (Python, Simpson's
-- rule); at 0.8 this is datasketch's choice of 9 bands of 13
SELECT bands, rows, round(false_positive::numeric, 4) AS fp, round(false_negative::numeric, 4) AS fn
FROM lsh_params(0.8);
SELECT bands, rows, round(false_positive::numeric, 4) AS fp, round(false_negative::numeric, 4) AS fn
FROM lsh_params(0.5);
SELECT bands, rows FROM lsh_params(0.9);
SELECT bands, rows FROM lsh_params(0.8, false_positive_weight => 0.1, false_negative_weight => 0.9);
SELECT bands, rows FROM lsh_params(0.8, num_perm => 64);

-- 20,000 documents of 400 words: 5,000 families, each a base and three
-- copies with words replaced at rates that spread Jaccard over 0.2 .. 1.
-- uniform(key, stream) is a hash of its arguments, not random(): the data
-- do not depend on the order in which a plan (or a spilling aggregate)
-- evaluates rows, so every major builds the same table.
CREATE FUNCTION pg_temp.uniform(key bigint, stream bigint) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT
AS $$ SELECT (hashint8extended(key, stream) & 4503599627370495)::float8 / 4503599627370496 $$;
CREATE TABLE base AS
SELECT f, array_agg('w' || floor(pg_temp.uniform(f * 400 + i, 1) * 50000)::int ORDER BY i) AS words
FROM generate_series(1, 5000) f, generate_series(1, 400) i
GROUP BY f;
CREATE TABLE gdocs AS
SELECT f * 4 + v AS id, f AS family, rate,
       CASE WHEN v = 0 THEN array_to_string(words, ' ')
            ELSE (SELECT string_agg(CASE WHEN pg_temp.uniform((f * 4 + v) * 400 + n, 2) < rate
                                         THEN 'x' || floor(pg_temp.uniform((f * 4 + v) * 400 + n, 3) * 50000)::int
                                         ELSE w END, ' ' ORDER BY n)
                  FROM unnest(words) WITH ORDINALITY AS u(w, n)) END AS doc
FROM base,
     LATERAL (SELECT v, CASE WHEN v = 0 THEN 0
                        ELSE (ARRAY[0.005, 0.02, 0.05, 0.07, 0.09, 0.11, 0.13, 0.2])[1 + (f * 3 + v) % 8]
                        END AS rate
              FROM generate_series(0, 3) v) r;
ALTER TABLE gdocs ADD PRIMARY KEY (id);
ALTER TABLE gdocs ADD COLUMN mh minhash;
UPDATE gdocs SET mh = minhash_sketch(doc);
VACUUM ANALYZE gdocs;
SELECT count(*) AS documents, count(DISTINCT family) AS families FROM gdocs;

-- queries: every 50th document; the truth: what a sequential scan of
-- similarity() returns for each threshold
CREATE TABLE queries AS SELECT id, mh FROM gdocs WHERE id % 50 = 0;
CREATE TABLE thresholds AS SELECT round(t::numeric, 2)::float8 AS t FROM generate_series(0.5, 0.95, 0.05) t;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE truth AS
SELECT t, q.id AS qid, d.id
FROM queries q JOIN gdocs d ON similarity(d.mh, q.mh) >= 0.5, thresholds
WHERE similarity(d.mh, q.mh) >= t;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT t, count(*) AS pairs, count(*) FILTER (WHERE qid <> id) AS non_self
FROM truth GROUP BY t ORDER BY t;

-- EXPLAIN (COSTS OFF) of a query, written alike on every major: a value
-- an InitPlan returns as 17 and later print it ("(InitPlan 1).col1", where
-- 15 printed "$0" and "InitPlan 1 (returns $0)"), and without the
-- "Disabled: true" 18 adds under a scan that enable_seqscan = off disabled
CREATE FUNCTION pg_temp.explain(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    param text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        line := regexp_replace(line, '(InitPlan \d+) \(returns [^)]*\)', '\1');
        FOR param IN SELECT m[1] FROM regexp_matches(line, '\$(\d+)', 'g') m ORDER BY length(m[1]) DESC LOOP
            line := replace(line, '$' || param, '(InitPlan ' || (param::int + 1) || ').col1');
        END LOOP;
        CONTINUE WHEN line ~ '^ *Disabled: true$';
        RETURN NEXT line;
    END LOOP;
END $$;

-- exact mode, down to 0.5: an index built for threshold 0.5
CREATE INDEX gdocs_exact ON gdocs USING gin (mh minhash_ops(threshold = 0.5));
SET enable_seqscan = off;
SELECT * FROM pg_temp.explain($q$
SELECT id FROM gdocs WHERE mh % (SELECT mh FROM queries LIMIT 1)
$q$);
SELECT * FROM pg_temp.explain($q$
SELECT id FROM gdocs WHERE mh % ROW((SELECT mh FROM queries LIMIT 1), 0.7)::minhash_query
$q$);
SELECT * FROM pg_temp.explain($q$
SELECT d.id FROM queries q JOIN gdocs d ON similar(d.mh, q.mh, 0.7)
$q$);

-- index scans return exactly the truth at every threshold, through the
-- query operator and through similar()
CREATE TABLE by_index AS
SELECT t, q.id AS qid, d.id
FROM thresholds, queries q, LATERAL (SELECT id FROM gdocs d WHERE d.mh % ROW(q.mh, t)::minhash_query) d;
SELECT t, (SELECT count(*) FROM by_index b WHERE b.t = th.t) AS found,
       (SELECT count(*) FROM ((SELECT qid, id FROM by_index b WHERE b.t = th.t
                               EXCEPT SELECT qid, id FROM truth x WHERE x.t = th.t)
                              UNION ALL
                              (SELECT qid, id FROM truth x WHERE x.t = th.t
                               EXCEPT SELECT qid, id FROM by_index b WHERE b.t = th.t)) d) AS differences
FROM thresholds th ORDER BY t;
SELECT count(*) AS similar_differences FROM (
    (SELECT 0.65::float8, q.id, d.id FROM queries q JOIN gdocs d ON similar(d.mh, q.mh, 0.65)
     EXCEPT SELECT t, qid, id FROM truth WHERE t = 0.65)
    UNION ALL
    (SELECT t, qid, id FROM truth WHERE t = 0.65
     EXCEPT SELECT 0.65::float8, q.id, d.id FROM queries q JOIN gdocs d ON similar(d.mh, q.mh, 0.65))) x;
-- the % operator reads ndd.similarity_threshold
SET ndd.similarity_threshold = 0.55;
SELECT count(*) AS differences FROM (
    (SELECT q.id, d.id FROM queries q JOIN gdocs d ON d.mh % q.mh
     EXCEPT SELECT qid, id FROM truth WHERE t = 0.55)
    UNION ALL
    (SELECT qid, id FROM truth WHERE t = 0.55
     EXCEPT SELECT q.id, d.id FROM queries q JOIN gdocs d ON d.mh % q.mh)) x;
SET ndd.similarity_threshold = 0.9;
SELECT count(*) AS differences FROM (
    (SELECT q.id, d.id FROM queries q JOIN gdocs d ON d.mh % q.mh
     EXCEPT SELECT qid, id FROM truth WHERE t = 0.9)
    UNION ALL
    (SELECT qid, id FROM truth WHERE t = 0.9
     EXCEPT SELECT q.id, d.id FROM queries q JOIN gdocs d ON d.mh % q.mh)) x;
-- threshold 0 matches every row, by index too
SET ndd.similarity_threshold = 0;
SELECT count(*) AS all_rows FROM gdocs WHERE mh % (SELECT mh FROM queries LIMIT 1);
RESET ndd.similarity_threshold;

-- top-k: a % filter, then ORDER BY <-> LIMIT
SELECT * FROM pg_temp.explain($q$
SELECT id FROM gdocs WHERE mh % (SELECT mh FROM gdocs WHERE id = 40)
ORDER BY mh <-> (SELECT mh FROM gdocs WHERE id = 40) LIMIT 3
$q$);
SELECT id, family, round((mh <-> (SELECT mh FROM gdocs WHERE id = 40))::numeric, 3) AS distance
FROM gdocs WHERE mh % ROW((SELECT mh FROM gdocs WHERE id = 40), 0.3)::minhash_query
ORDER BY mh <-> (SELECT mh FROM gdocs WHERE id = 40), id LIMIT 3;
RESET enable_seqscan;
DROP INDEX gdocs_exact;

-- the default index (threshold 0.8: 32 bands of 4) is exact from 0.76 up
CREATE INDEX gdocs_default ON gdocs USING gin (mh minhash_ops);
SET enable_seqscan = off;
SELECT count(*) AS differences FROM (
    (SELECT t, q.id, d.id FROM thresholds, queries q,
            LATERAL (SELECT id FROM gdocs d WHERE d.mh % ROW(q.mh, t)::minhash_query) d WHERE t >= 0.8
     EXCEPT SELECT t, qid, id FROM truth WHERE t >= 0.8)
    UNION ALL
    (SELECT t, qid, id FROM truth WHERE t >= 0.8
     EXCEPT SELECT t, q.id, d.id FROM thresholds, queries q,
            LATERAL (SELECT id FROM gdocs d WHERE d.mh % ROW(q.mh, t)::minhash_query) d WHERE t >= 0.8)) x;
RESET enable_seqscan;
DROP INDEX gdocs_default;

-- the fast layout for 0.8 (27 bands of 4, exact from 0.797 up), built in
-- several passes of a small maintenance_work_mem, as docs/guide-minhash-index.md
-- advises ("Build it in several passes"): the passes after the first fill
-- the entry pages the first left half empty, and the answers stay exact
SET maintenance_work_mem = '64MB';
CREATE INDEX gdocs_onepass ON gdocs USING gin (mh minhash_ops(bands = 27, rows = 4, key_bits = 16));
SET maintenance_work_mem = '1MB';
CREATE INDEX gdocs_passes ON gdocs USING gin (mh minhash_ops(bands = 27, rows = 4, key_bits = 16));
RESET maintenance_work_mem;
SELECT pg_relation_size('gdocs_passes') < 0.85 * pg_relation_size('gdocs_onepass') AS passes_pack_pages;
DROP INDEX gdocs_onepass;
SET enable_seqscan = off;
SELECT count(*) AS differences FROM (
    (SELECT t, q.id, d.id FROM thresholds, queries q,
            LATERAL (SELECT id FROM gdocs d WHERE d.mh % ROW(q.mh, t)::minhash_query) d WHERE t >= 0.8
     EXCEPT SELECT t, qid, id FROM truth WHERE t >= 0.8)
    UNION ALL
    (SELECT t, qid, id FROM truth WHERE t >= 0.8
     EXCEPT SELECT t, q.id, d.id FROM thresholds, queries q,
            LATERAL (SELECT id FROM gdocs d WHERE d.mh % ROW(q.mh, t)::minhash_query) d WHERE t >= 0.8)) x;
RESET enable_seqscan;
DROP INDEX gdocs_passes;

-- LSH mode: below what 32 bands of 4 serve exactly, a pair is found when
-- any band agrees, with probability 1 - (1 - J^4)^32.  Threshold 0.2 keeps
-- the recheck out of the way for pairs with J >= 0.35.  The fraction of
-- planted pairs found per Jaccard range must match the mean S-curve value
-- within 4 standard deviations (plus 0.02 for densified positions).
CREATE INDEX gdocs_lsh ON gdocs USING gin (mh minhash_ops(bands = 32, rows = 4, key_bits = 20));
CREATE TABLE planted AS
SELECT b.id AS base, v.id AS copy, jaccard(b.doc, v.doc) AS j
FROM gdocs b JOIN gdocs v ON v.family = b.family AND b.id % 4 = 0 AND v.id % 4 <> 0;
SET enable_seqscan = off;
SET ndd.similarity_threshold = 0.2;
CREATE TABLE found AS
SELECT b.id AS base, d.id AS copy
FROM gdocs b, LATERAL (SELECT id FROM gdocs d WHERE d.mh % b.mh) d
WHERE b.id % 4 = 0 AND d.id <> b.id;
RESET ndd.similarity_threshold;
RESET enable_seqscan;
SELECT bucket, count(*) >= 500 AS enough_pairs,
       abs(avg(found::int) - avg(expected)) <= 4 * sqrt(sum(expected * (1 - expected))) / count(*) + 0.02 AS follows_s_curve
FROM (SELECT width_bucket(j, ARRAY[0.35, 0.45, 0.55, 0.7]) AS bucket,
             lsh_probability(j, 32, 4) AS expected,
             EXISTS (SELECT 1 FROM found f WHERE f.base = p.base AND f.copy = p.copy) AS found
      FROM planted p WHERE j >= 0.35 AND j < 0.7) x
GROUP BY bucket ORDER BY bucket;
-- the same banding in a bucket table finds the same planted pairs
SELECT count(*) AS planted_pairs,
       count(*) FILTER (WHERE by_index <> by_buckets) AS disagreements
FROM (SELECT EXISTS (SELECT 1 FROM found f WHERE f.base = p.base AND f.copy = p.copy) AS by_index,
             EXISTS (SELECT 1 FROM minhash_bands(b.mh, 32, 4) x
                     JOIN minhash_bands(c.mh, 32, 4) y USING (band, key)) AS by_buckets
      FROM planted p JOIN gdocs b ON b.id = p.base JOIN gdocs c ON c.id = p.copy
      WHERE p.j >= 0.35) x;
DROP INDEX gdocs_lsh;

-- the bucket table: (id, band, key) with a plain index; a self-join on
-- (band, key) gives candidates, similarity() verifies them.  It finds the
-- same pairs as the index and the sequential scan, exactly.
CREATE TABLE buckets AS
SELECT d.id, b.band, b.key FROM gdocs d, minhash_bands(d.mh, 32, 4) b;
CREATE INDEX ON buckets (band, key);
SELECT count(*) AS rows_per_document FROM buckets WHERE id = 4;
CREATE TABLE bucket_pairs AS
SELECT DISTINCT q.id AS qid, d.id
FROM queries q
JOIN buckets bq ON bq.id = q.id
JOIN buckets bd ON bd.band = bq.band AND bd.key = bq.key
JOIN gdocs d ON d.id = bd.id
WHERE similarity(d.mh, q.mh) >= 0.8;
SELECT count(*) AS bucket_pairs,
       (SELECT count(*) FROM ((TABLE bucket_pairs EXCEPT SELECT qid, id FROM truth WHERE t = 0.8)
                              UNION ALL
                              (SELECT qid, id FROM truth WHERE t = 0.8 EXCEPT TABLE bucket_pairs)) x) AS differences
FROM bucket_pairs;

-- bad input
CREATE TABLE small (id int, mh minhash);
INSERT INTO small VALUES (1, minhash_sketch('a b c d e f g')), (2, minhash_sketch('x y', num_perm => 64));
CREATE INDEX ON gdocs USING gin (mh minhash_ops(bands = 40, rows = 4));
\echo :SQLSTATE
CREATE INDEX ON gdocs USING gin (mh minhash_ops(bands = -1));
\echo :SQLSTATE
CREATE INDEX ON gdocs USING gin (mh minhash_ops(rows = 200));
\echo :SQLSTATE
CREATE INDEX ON gdocs USING gin (mh minhash_ops(threshold = 0));
\echo :SQLSTATE
CREATE INDEX ON gdocs USING gin (mh minhash_ops(threshold = 1.5));
\echo :SQLSTATE
CREATE INDEX ON gdocs USING gin (mh minhash_ops(key_bits = 32));
\echo :SQLSTATE
CREATE INDEX ON gdocs USING gin (mh minhash_ops(unit = 'line'));
\echo :SQLSTATE
-- sketches made otherwise: an error when indexed or searched, never wrong rows
CREATE INDEX ON small USING gin (mh minhash_ops);
\echo :SQLSTATE
CREATE INDEX small_mh ON small USING gin (mh minhash_ops) WHERE id = 1;
INSERT INTO small VALUES (1, minhash_sketch('p q r', seed => 5));
\echo :SQLSTATE
SET enable_seqscan = off;
SELECT id FROM small WHERE id = 1 AND mh % minhash_sketch('a b', num_perm => 64);
\echo :SQLSTATE
SELECT id FROM small WHERE id = 1 AND mh % minhash_sketch('a b', unit => 'char');
\echo :SQLSTATE
RESET enable_seqscan;
SELECT id, minhash_settings(mh) FROM small WHERE id = 1 AND mh % minhash_sketch('a b c d e f g');
-- helpers
SELECT * FROM minhash_bands(minhash_sketch('a'), 33, 4);
\echo :SQLSTATE
SELECT * FROM minhash_bands(minhash_sketch('a'), 0, 4);
\echo :SQLSTATE
SELECT * FROM minhash_bands(minhash_sketch('a'), 4, -1);
\echo :SQLSTATE
SELECT lsh_probability(1.5, 10, 2);
\echo :SQLSTATE
SELECT lsh_probability(0.5, 0, 2);
\echo :SQLSTATE
SELECT * FROM lsh_params(0);
\echo :SQLSTATE
SELECT * FROM lsh_params(1.01);
\echo :SQLSTATE
SELECT * FROM lsh_params(0.8, num_perm => 4);
\echo :SQLSTATE
SELECT * FROM lsh_params(0.8, false_positive_weight => -1);
\echo :SQLSTATE
SELECT similar(minhash_sketch('a'), minhash_sketch('a'), 0);
\echo :SQLSTATE
SELECT similar(minhash_sketch('a'), minhash_sketch('a'), 'NaN');
\echo :SQLSTATE
SELECT minhash_sketch('a') % ROW(minhash_sketch('a'), 2)::minhash_query;
\echo :SQLSTATE
-- a NULL sketch or threshold matches nothing (similar() is STRICT), and the
-- index answers as a scan does
SELECT minhash_sketch('a') % ROW(NULL, 0.5)::minhash_query IS NULL AS null_sketch,
       minhash_sketch('a') % ROW(minhash_sketch('a'), NULL)::minhash_query IS NULL AS null_threshold;
CREATE TABLE nullq (id int, mh minhash);
INSERT INTO nullq SELECT g, minhash_sketch('w' || g || ' a b c d e f g h', shingle_size => 1) FROM generate_series(1, 50) g;
CREATE INDEX ON nullq USING gin (mh minhash_ops(shingle_size = 1));
SET enable_seqscan = off;
SELECT * FROM pg_temp.explain($q$
SELECT count(*) FROM nullq WHERE similar(mh, (SELECT minhash_sketch('w1 a b c d e f g h', shingle_size => 1)), (SELECT NULL::float8))
$q$);
SELECT (SELECT count(*) FROM nullq WHERE similar(mh, minhash_sketch('w1 a b c d e f g h', shingle_size => 1), (SELECT NULL::float8))) AS null_threshold,
       (SELECT count(*) FROM nullq WHERE mh % ROW(NULL, (SELECT 0.5::float8))::minhash_query) AS null_sketch,
       (SELECT count(*) FROM nullq WHERE similar(mh, minhash_sketch('w1 a b c d e f g h', shingle_size => 1), (SELECT 0.8::float8))) AS at_0_8;
RESET enable_seqscan;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
SELECT (SELECT count(*) FROM nullq WHERE similar(mh, minhash_sketch('w1 a b c d e f g h', shingle_size => 1), (SELECT NULL::float8))) AS null_threshold,
       (SELECT count(*) FROM nullq WHERE mh % ROW(NULL, (SELECT 0.5::float8))::minhash_query) AS null_sketch,
       (SELECT count(*) FROM nullq WHERE similar(mh, minhash_sketch('w1 a b c d e f g h', shingle_size => 1), (SELECT 0.8::float8))) AS at_0_8;
RESET enable_bitmapscan;
RESET enable_indexscan;
DROP TABLE nullq;
SELECT similar(minhash_sketch('a b'), minhash_sketch('a b'), 1) AS same, similar(NULL, minhash_sketch('a'), 0.5) IS NULL AS null_in;
