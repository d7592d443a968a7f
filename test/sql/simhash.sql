-- The simhash type: I/O, casts, construction, distance, operators, btree
-- and hash support, planner estimates, errors.
SET extra_float_digits = 0;

-- the planner's row estimate for a query
CREATE FUNCTION pg_temp.estimated_rows(query text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;

-- text form: 16 hex digits, either case in, lower case out, blanks around allowed
SELECT '0123456789abcdef'::simhash, 'FEDCBA9876543210'::simhash, '  00000000000000ff  '::simhash;
-- text and binary round trips are exact
CREATE TABLE fps AS
SELECT g AS id, simhash_from_bigint(hashint8extended(g, 7)) AS fp
FROM generate_series(1, 10000) g;
INSERT INTO fps VALUES (10001, '0000000000000000'), (10002, 'ffffffffffffffff'),
    (10003, '8000000000000000'), (10004, '7fffffffffffffff');
SELECT count(*) AS values,
       bool_and(fp::text::simhash = fp) AS text_round_trip,
       bool_and(fp::text ~ '^[0-9a-f]{16}$') AS canonical_text,
       count(DISTINCT fp) AS distinct_values
FROM fps;
\copy fps TO 'results/simhash.bin' WITH (FORMAT binary)
CREATE TABLE fps_copy (LIKE fps);
\copy fps_copy FROM 'results/simhash.bin' WITH (FORMAT binary)
SELECT count(*) AS rows, bool_and(c.fp = f.fp) AS binary_round_trip
FROM fps f JOIN fps_copy c USING (id);
SELECT simhash_send('0123456789abcdef') AS send;

-- malformed literals: 22P02, with a hint for documents written as literals
SELECT 'garbage'::simhash;
\echo :SQLSTATE
SELECT ''::simhash;
\echo :SQLSTATE
SELECT '0123'::simhash;
\echo :SQLSTATE
SELECT '0123456789abcdef0'::simhash;
\echo :SQLSTATE
SELECT '0123456789abcdeg'::simhash;
\echo :SQLSTATE
SELECT '0x0123456789abcd'::simhash;
\echo :SQLSTATE
SELECT '01234567 89abcdef'::simhash;
\echo :SQLSTATE
SELECT '-123456789abcdef'::simhash;
\echo :SQLSTATE
SELECT '0123456789abcdef x'::simhash;
\echo :SQLSTATE

-- casts: the same 64 bits as bigint (two's complement) and bit(64), most
-- significant bit first
SELECT fp, fp::bigint AS as_bigint, fp::bit(64) AS as_bit
FROM (VALUES ('0000000000000001'::simhash), ('8000000000000000'), ('ffffffffffffffff'),
             ('0123456789abcdef')) v(fp);
SELECT (-1)::bigint::simhash AS minus_one, 9223372036854775807::simhash AS max_bigint,
       B'0000000000000000000000000000000000000000000000000000000000000011'::simhash AS from_bit;
SELECT bool_and(fp::bigint::simhash = fp) AS bigint_round_trip,
       bool_and(fp::bit(64)::simhash = fp) AS bit_round_trip,
       bool_and(fp::bit(64)::text = lpad(fp::bigint::bit(64)::text, 64, '0')) AS bit_agrees_with_bigint
FROM fps;
SELECT B'101'::simhash;
\echo :SQLSTATE
SELECT repeat('1', 65)::bit(65)::simhash;
\echo :SQLSTATE
-- only explicit casts
SELECT hamming_distance(1::bigint, 2::bigint);
\echo :SQLSTATE

-- hamming_distance, <->, simhash_cosine
SELECT hamming_distance('0000000000000000', 'ffffffffffffffff') AS d64,
       hamming_distance('0123456789abcdef', '0123456789abcdef') AS d0,
       hamming_distance('0000000000000000', '8000000000000001') AS d2,
       '0000000000000000'::simhash <-> '000000000000000f' AS dist4,
       ('0000000000000000'::simhash <-> '000000000000000f') = hamming_distance('0000000000000000', '000000000000000f') AS same;
SELECT round(simhash_cosine('0000000000000000', '0000000000000000')::numeric, 6) AS cos_d0,
       round(simhash_cosine('0000000000000000', '000000000000000f')::numeric, 6) AS cos_d4,
       round(simhash_cosine('0000000000000000', '00000000ffffffff')::numeric, 6) AS cos_d32,
       round(simhash_cosine('0000000000000000', 'ffffffffffffffff')::numeric, 6) AS cos_d64;
-- Hamming distance is a metric: symmetric, and the triangle inequality holds
SELECT bool_and(hamming_distance(a.fp, b.fp) = hamming_distance(b.fp, a.fp)) AS symmetric,
       bool_and(hamming_distance(a.fp, c.fp) <= hamming_distance(a.fp, b.fp) + hamming_distance(b.fp, c.fp)) AS triangle,
       round(avg(hamming_distance(a.fp, b.fp)), 0) AS mean_random_distance
FROM fps a JOIN fps b ON b.id = a.id + 1 JOIN fps c ON c.id = a.id + 2;

-- % is within ndd.hamming_threshold bits (default 3)
SHOW ndd.hamming_threshold;
SELECT '0000000000000000'::simhash % '0000000000000007' AS d3,
       '0000000000000000'::simhash % '000000000000000f' AS d4;
SET ndd.hamming_threshold = 4;
SELECT '0000000000000000'::simhash % '000000000000000f' AS d4_at_4;
SET ndd.hamming_threshold = 0;
SELECT '0000000000000000'::simhash % '0000000000000000' AS same_at_0,
       '0000000000000000'::simhash % '0000000000000001' AS d1_at_0;
SET ndd.hamming_threshold = 64;
SELECT '0000000000000000'::simhash % 'ffffffffffffffff' AS d64_at_64;
RESET ndd.hamming_threshold;
SET ndd.hamming_threshold = 65;
\echo :SQLSTATE
SET ndd.hamming_threshold = -1;
\echo :SQLSTATE

-- Construction from text: term-frequency votes over the shared shingles.
-- Features of single words (shingle_size => 1) make the votes easy to follow.
CREATE TABLE words AS
SELECT w, simhash(w::text, shingle_size => 1) AS fp
FROM (VALUES ('alpha'), ('beta'), ('gamma')) v(w);
SELECT w, fp, fp::bit(64) FROM words ORDER BY w;
-- one feature: its hash; a feature hashed twice outvotes one hashed once
SELECT simhash('alpha beta alpha'::text, shingle_size => 1) = a.fp AS tf_two_beats_one
FROM words a WHERE a.w = 'alpha';
-- three features, one vote each: the bitwise majority of their hashes
SELECT simhash('alpha beta gamma'::text, shingle_size => 1) AS fp,
       simhash_from_bigint((a.fp::bigint & b.fp::bigint) | (a.fp::bigint & c.fp::bigint)
                           | (b.fp::bigint & c.fp::bigint)) AS majority
FROM words a, words b, words c WHERE a.w = 'alpha' AND b.w = 'beta' AND c.w = 'gamma';
-- two features: ties give 0, so the result is their AND
SELECT simhash('alpha beta'::text, shingle_size => 1)
       = simhash_from_bigint(a.fp::bigint & b.fp::bigint) AS tie_is_zero
FROM words a, words b WHERE a.w = 'alpha' AND b.w = 'beta';
-- unigrams ignore order; normalisation happens before hashing
SELECT simhash('gamma beta alpha'::text, shingle_size => 1) = simhash('alpha beta gamma'::text, shingle_size => 1) AS order_free,
       simhash('The Quick, brown FOX!'::text) = simhash('the quick brown fox'::text) AS normalised,
       simhash('the quick brown fox'::text) = simhash(doc => 'the quick brown fox') AS named_arg;
-- shingles and character units, HTML, seeds
SELECT simhash('a b c d e f g h'::text, shingle_size => 3) <> simhash('a b c d e f g h'::text, shingle_size => 1) AS shingles_differ,
       simhash('night'::text, 2, 'char') <> simhash('night'::text, 1, 'char') AS char_units,
       simhash('<p>fish &amp; chips</p>'::text, strip_html => true) = simhash('fish & chips'::text) AS html,
       simhash('a b c'::text, seed => 1) <> simhash('a b c'::text, seed => 2) AS seeds_differ;
-- documents without tokens: no votes, all bits zero
SELECT simhash(''::text) AS empty, simhash('...!'::text) AS punctuation,
       simhash(ARRAY[]::text[]) AS no_features;
-- near-duplicates are near, unrelated documents about 32 bits apart
SELECT hamming_distance(simhash(string_agg('w' || g, ' ')),
                        simhash(string_agg(CASE WHEN g = 250 THEN 'x' ELSE 'w' END || g, ' '))) <= 3 AS one_word_changed,
       hamming_distance(simhash(string_agg('w' || g, ' ')),
                        simhash(string_agg('v' || g, ' '))) BETWEEN 16 AND 48 AS unrelated
FROM generate_series(1, 500) g;

-- Construction from features: every element votes once, or with its weight.
SELECT simhash(ARRAY['alpha']) AS alpha, simhash(ARRAY['beta']) AS beta,
       simhash(ARRAY['gamma']) AS gamma;
SELECT simhash(ARRAY['alpha', 'beta', 'gamma']) AS unweighted,
       simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[1, 1, 1]) AS equal_weights,
       simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[3, 1, 1]) AS alpha_3,
       simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[1, 2, 4]) AS gamma_4,
       simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[1, 1, -1]) AS gamma_against;
-- The hand check, bit by bit: with weights 1, 1, 1 each bit is the majority;
-- with 3, 1, 1 alpha outweighs the other two; with 1, 2, 4 gamma does; a
-- negative weight votes for the opposite bit, so with 1, 1, -1 a bit is
-- alpha's where alpha and beta agree and NOT gamma's where they do not.
WITH f AS (
    SELECT simhash(ARRAY['alpha'])::bigint AS a, simhash(ARRAY['beta'])::bigint AS b,
           simhash(ARRAY['gamma'])::bigint AS c
)
SELECT simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[1, 1, 1])::bigint = ((a & b) | (a & c) | (b & c)) AS majority,
       simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[3, 1, 1])::bigint = a AS alpha_wins,
       simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[1, 2, 4])::bigint = c AS gamma_wins,
       simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[1, 1, -1])::bigint = ((a & b) | ((a # b) & ~c)) AS gamma_against,
       simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[0.5, 0.5, 0.75])::bigint = ((a & b) | ((a # b) & c)) AS close_call
FROM f;
-- as gamma's weight grows, the bits where alpha and beta disagree go its way,
-- and past 2 it outvotes them everywhere
SELECT w AS gamma_weight,
       hamming_distance(simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[1, 1, w]),
                        simhash(ARRAY['alpha', 'beta'], ARRAY[1, 1])) AS bits_moved,
       simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[1, 1, w]) AS fp
FROM unnest(ARRAY[0, 0.5, 1, 1.5, 2, 2.5, 100]::float8[]) w;
-- repeated features add up; integers work the same way; seeds change hashes
SELECT simhash(ARRAY['x', 'y', 'x']) = simhash(ARRAY['x', 'y'], ARRAY[2, 1]) AS repeats_add_up,
       simhash(ARRAY[1, 2, 3]::bigint[]) = simhash(ARRAY[1, 2, 3]::bigint[], ARRAY[1, 1, 1]) AS bigint_features,
       simhash(ARRAY['x'], seed => 1) <> simhash(ARRAY['x'], seed => 2) AS seeds_differ,
       simhash(ARRAY['x'], ARRAY[1], 5) = simhash(ARRAY['x'], 5) AS weighted_seed;
-- tf-idf weights from a table, the usual way to call it
CREATE TABLE doc_terms (doc int, term text, tfidf float8);
INSERT INTO doc_terms VALUES (1, 'postgres', 2.5), (1, 'index', 1.0), (1, 'the', 0.01),
                             (2, 'postgres', 2.4), (2, 'index', 1.1), (2, 'a', 0.02);
SELECT hamming_distance(d1.fp, d2.fp) <= 3 AS rare_terms_dominate
FROM (SELECT simhash(array_agg(term ORDER BY term), array_agg(tfidf ORDER BY term)) fp FROM doc_terms WHERE doc = 1) d1,
     (SELECT simhash(array_agg(term ORDER BY term), array_agg(tfidf ORDER BY term)) fp FROM doc_terms WHERE doc = 2) d2;

-- bad features and weights: 22023; a null element: 22004, as for minhash
SELECT simhash(ARRAY['a', 'b'], ARRAY[1]);
\echo :SQLSTATE
SELECT simhash(ARRAY['a'], ARRAY[]::float8[]);
\echo :SQLSTATE
SELECT simhash(ARRAY['a', NULL], ARRAY[1, 2]);
\echo :SQLSTATE
SELECT simhash(ARRAY['a', 'b'], ARRAY[1, NULL]);
\echo :SQLSTATE
SELECT simhash(ARRAY['a', NULL]);
\echo :SQLSTATE
SELECT simhash(ARRAY[1, NULL]::bigint[]);
\echo :SQLSTATE
SELECT simhash(ARRAY['a', 'b'], ARRAY[1, 'NaN']::float8[]);
\echo :SQLSTATE
-- features or weights of more than one dimension: 2202E (they pair by
-- position, which a matrix does not define), for text[] and bigint[]
SELECT simhash(ARRAY[['a', 'b'], ['c', 'd']], ARRAY[1, 2, 3, 4]);
\echo :SQLSTATE
SELECT simhash(ARRAY['a', 'b', 'c', 'd'], ARRAY[[1, 2], [3, 4]]::float8[]);
\echo :SQLSTATE
SELECT simhash(ARRAY[[1, 2], [3, 4]]::bigint[], ARRAY[1, 2, 3, 4]);
\echo :SQLSTATE
SELECT simhash(ARRAY['a', 'b'], ARRAY['Infinity', 1]::float8[]);
\echo :SQLSTATE
SELECT simhash(ARRAY[1, 2]::bigint[], ARRAY[1, '-Infinity']::float8[]);
\echo :SQLSTATE
SELECT simhash('a'::text, shingle_size => 0);
\echo :SQLSTATE
SELECT simhash('a'::text, shingle_size => 33);
\echo :SQLSTATE
SELECT simhash('a'::text, unit => 'line');
\echo :SQLSTATE
-- a document given as a bare literal is read as a simhash literal (a cast):
-- the hint says what to write instead
SELECT simhash('the quick brown fox');
\echo :SQLSTATE

-- NULL in, NULL out
SELECT simhash(NULL::text) IS NULL AS a, simhash('x'::text, NULL) IS NULL AS b,
       simhash(ARRAY['x'], NULL::float8[]) IS NULL AS c,
       hamming_distance(NULL, '0000000000000000') IS NULL AS d,
       (NULL::simhash % '0000000000000000') IS NULL AS e,
       (NULL::simhash <-> '0000000000000000') IS NULL AS f,
       simhash_cosine(NULL, '0000000000000000') IS NULL AS g;

-- btree: sort by unsigned value (the text order), group, join, unique
SELECT fp FROM (VALUES ('8000000000000000'::simhash), ('7fffffffffffffff'), ('ffffffffffffffff'),
                       ('0000000000000000'), ('00000000000000ff')) v(fp)
ORDER BY fp;
SELECT bool_and(x.fp = y.fp) AS sorted_like_text
FROM (SELECT fp, row_number() OVER (ORDER BY fp) AS rn FROM fps) x
JOIN (SELECT fp, row_number() OVER (ORDER BY fp::text COLLATE "C") AS rn FROM fps) y USING (rn);
SELECT '0000000000000001'::simhash < '8000000000000000' AS lt, '8000000000000000'::simhash > '7fffffffffffffff' AS gt,
       '0000000000000001'::simhash <= '0000000000000001' AS le, '0000000000000002'::simhash >= '0000000000000001' AS ge,
       '0000000000000001'::simhash = '0000000000000001' AS eq, '0000000000000001'::simhash <> '0000000000000002' AS ne;
CREATE UNIQUE INDEX fps_fp_key ON fps (fp);
INSERT INTO fps VALUES (0, '0123456789abcdef'), (-1, '0123456789ABCDEF');
\echo :SQLSTATE
SELECT count(*) FROM (SELECT fp FROM fps_copy GROUP BY fp) g;
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps JOIN fps_copy USING (fp);
SELECT count(*) AS merge_join FROM fps JOIN fps_copy USING (fp);
RESET enable_hashjoin;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps JOIN fps_copy USING (fp);
SELECT count(*) AS hash_join FROM fps JOIN fps_copy USING (fp);
RESET enable_mergejoin;
RESET enable_nestloop;
SET enable_sort = off;
SELECT count(*) AS hash_agg FROM (SELECT DISTINCT fp FROM fps_copy) d;
RESET enable_sort;
SELECT simhash_hash('0123456789abcdef') = hashint8(81985529216486895) AS hash_as_bigint,
       simhash_hash_extended('0123456789abcdef', 3) = hashint8extended(81985529216486895, 3) AS hash_extended;
SELECT opcname, amname, amvalidate(opc.oid)
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE opcname = 'simhash_ops' ORDER BY amname;

-- planner estimates: a lookup expects about one row, a join about one per row
ANALYZE fps;
ANALYZE fps_copy;
SELECT pg_temp.estimated_rows($$SELECT * FROM fps WHERE fp % '0123456789abcdef'$$) AS lookup_rows;
SELECT pg_temp.estimated_rows($$SELECT * FROM fps a JOIN fps_copy b ON a.fp % b.fp$$) AS join_rows;
-- duplicates among the most common values count in full
CREATE TABLE dups AS SELECT g AS id, CASE WHEN g <= 5000 THEN '0123456789abcdef'::simhash
                                          ELSE simhash_from_bigint(g) END AS fp
FROM generate_series(1, 10000) g;
ANALYZE dups;
SELECT pg_temp.estimated_rows($$SELECT * FROM dups WHERE fp % '0123456789abcdee'$$) AS common_value_rows;
