-- Super-shingles (Broder) and b-bit minhash (Li and Koenig): their structure,
-- their statistics on planted pairs, I/O round trips and bad inputs.
SET extra_float_digits = 0;
\set SHOW_CONTEXT never

--
-- Planted pairs.  Document a has 1000 distinct words; document b keeps m of
-- them and adds 1000 - m words of its own, so with shingle_size 1 (a
-- document's shingles are its words) the resemblance is m / (2000 - m).
-- Every pair has words of its own, so pairs are independent; no random().
-- 1000 words fill all 128 bins of a sketch, so no position is densified.
--
CREATE FUNCTION planted_doc(pair bigint, first int, last int) RETURNS text
LANGUAGE sql IMMUTABLE AS
$$ SELECT string_agg('w' || (pair * 10000 + i), ' ') FROM generate_series(first, last) i $$;

CREATE FUNCTION planted_pairs(pair bigint, m int, OUT a text, OUT b text) RETURNS record
LANGUAGE sql IMMUTABLE AS
$$ SELECT planted_doc(pair, 1, 1000), concat_ws(' ', planted_doc(pair, 1, m), planted_doc(pair, 1001, 2000 - m)) $$;

--
-- Super-shingles
--

-- 500 pairs at each of the resemblances 0.5, 0.8, 0.9, 0.95
CREATE TABLE ss_pairs AS
SELECT level, pair,
       jaccard(d.a, d.b, shingle_size => 1) AS j,
       minhash_sketch(d.a, shingle_size => 1) AS sa,
       minhash_sketch(d.b, shingle_size => 1) AS sb
FROM (SELECT level, 1000 * l + p AS pair, round(2000 * level / (1 + level))::int AS m
      FROM unnest(ARRAY[0.5, 0.8, 0.9, 0.95]) WITH ORDINALITY AS t(level, l),
           generate_series(1, 500) p) x,
     LATERAL planted_pairs(pair, m) d;
SELECT level, count(*) AS pairs, round(min(j)::numeric, 4) AS min_j, round(max(j)::numeric, 4) AS max_j
FROM ss_pairs GROUP BY level ORDER BY level;

-- One bigint per group; identical sketches share all of them
SELECT array_length(minhash_supershingles(sa), 1) AS default_groups,
       array_length(minhash_supershingles(sa, 16), 1) AS sixteen,
       array_length(minhash_supershingles(sa, 128), 1) AS one_position_each,
       supershingles_shared(minhash_supershingles(sa), minhash_supershingles(sa)) AS shared_with_itself
FROM ss_pairs WHERE pair = 1001;

-- Which positions: with K = 128 and 6 groups, group g is positions
-- 21g .. 21g + 20 and positions 126 and 127 are not used.  Changing the
-- last value changes nothing; changing the first changes group 0 only
-- (to fffffffe: ffffffff marks an empty bin, which a real position never holds).
WITH s AS (SELECT sa::text AS t FROM ss_pairs WHERE pair = 1001),
     v AS (SELECT minhash_supershingles(t::minhash) AS orig,
                  minhash_supershingles(overlay(t PLACING 'fffffffe' FROM length(t) - 7)::minhash) AS last_changed,
                  minhash_supershingles(overlay(t PLACING 'fffffffe' FROM position(':' IN t) + 1)::minhash) AS first_changed
           FROM s)
SELECT orig = last_changed AS last_position_unused,
       orig[1] <> first_changed[1] AND orig[2:6] = first_changed[2:6] AS first_in_group_0
FROM v;

-- The empty document has none; sketches made with other settings share none
SELECT minhash_supershingles(minhash_sketch('')) AS empty_doc,
       supershingles_shared(minhash_supershingles(minhash_sketch('a b c d e f g', shingle_size => 1)),
                            minhash_supershingles(minhash_sketch('a b c d e f g', shingle_size => 1, seed => 1))) AS other_seed,
       supershingles_shared(minhash_supershingles(minhash_sketch('a b c d e f g', shingle_size => 1), 4),
                            minhash_supershingles(minhash_sketch('a b c d e f g', shingle_size => 1), 5)) AS other_groups;

-- supershingles_shared counts distinct common values
SELECT supershingles_shared(ARRAY[1, 2, 2, 3]::bigint[], ARRAY[2, 3, 3, 4]::bigint[]) AS two,
       supershingles_shared('{}'::bigint[], ARRAY[1]::bigint[]) AS none,
       supershingles_shared(ARRAY[[1, 2], [3, 4]]::bigint[], ARRAY[4, 1]::bigint[]) AS flattened;

-- supershingle_probability is the binomial tail: at_least = 1 is
-- lsh_probability; at_least = 2 is 1 - (1-p)^g - g p (1-p)^(g-1)
SELECT s, g, r,
       abs(supershingle_probability(s, g, r, 1) - lsh_probability(s, g, r)) < 1e-12 AS one_is_lsh,
       abs(supershingle_probability(s, g, r) -
           (1 - power(1 - power(s, r), g) - g * power(s, r) * power(1 - power(s, r), g - 1))) < 1e-12 AS two_ok,
       abs(supershingle_probability(s, g, r, g) - power(s, r * g)) < 1e-12 AS all_ok
FROM unnest(ARRAY[0.0, 0.3, 0.5, 0.8, 0.9, 0.95, 1.0]::float8[]) s,
     (VALUES (6, 14), (6, 21), (16, 8), (32, 4)) v(g, r)
WHERE s IN (0.5, 0.9) OR g = 6 AND r = 21
ORDER BY g, r, s;
SELECT round(supershingle_probability(0.9, 6, 14)::numeric, 4) AS broder_at_09,
       round(supershingle_probability(0.95, 6, 14)::numeric, 4) AS broder_at_095,
       round(supershingle_probability(0.5, 6, 14)::numeric, 8) AS broder_at_05,
       supershingle_probability(0.99, 1024, 1, 1000) > 0 AS large_groups_finite;

-- The fraction of planted pairs sharing at least 2 super-shingles follows
-- the binomial prediction, summed over the pairs' exact Jaccard, within 4
-- standard deviations; for 6, 16 and 32 groups of 21, 8 and 4 positions.
CREATE TABLE ss_observed AS
SELECT level, groups,
       count(*) FILTER (WHERE supershingles_shared(minhash_supershingles(sa, groups),
                                                   minhash_supershingles(sb, groups)) >= 2) AS observed,
       sum(supershingle_probability(j, groups, 128 / groups)) AS expected,
       sum(supershingle_probability(j, groups, 128 / groups) *
           (1 - supershingle_probability(j, groups, 128 / groups))) AS variance,
       count(*) AS pairs
FROM ss_pairs, unnest(ARRAY[6, 16, 32]) groups
GROUP BY level, groups;
SELECT level, groups,
       abs(observed - expected) <= 4 * sqrt(variance) + 1e-9 AS within_4_sigma
FROM ss_observed ORDER BY level, groups;

-- GIN's array_ops finds the rows sharing a super-shingle; the index scan
-- returns what a sequential scan returns
CREATE TABLE ss_docs AS
SELECT pair * 2 AS id, minhash_supershingles(sa) AS ss FROM ss_pairs
UNION ALL
SELECT pair * 2 + 1, minhash_supershingles(sb) FROM ss_pairs;
CREATE INDEX ss_docs_ss ON ss_docs USING gin (ss);
ANALYZE ss_docs;
CREATE TABLE ss_probes AS
SELECT id, ss FROM ss_docs WHERE id % 50 IN (0, 1);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT d.id FROM ss_docs d WHERE d.ss && '{1,2}'::bigint[] AND supershingles_shared(d.ss, '{1,2}') >= 2;
CREATE TABLE ss_by_index AS
SELECT p.id AS probe, d.id FROM ss_probes p, LATERAL
  (SELECT d.id FROM ss_docs d WHERE d.ss && p.ss AND supershingles_shared(d.ss, p.ss) >= 2) d;
RESET enable_seqscan;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
CREATE TABLE ss_by_scan AS
SELECT p.id AS probe, d.id FROM ss_probes p, LATERAL
  (SELECT d.id FROM ss_docs d WHERE d.ss && p.ss AND supershingles_shared(d.ss, p.ss) >= 2) d;
RESET enable_bitmapscan;
RESET enable_indexscan;
SELECT (SELECT count(*) FROM ss_by_index) AS matches,
       (SELECT count(*) FROM ss_by_index) > (SELECT count(*) FROM ss_probes) AS finds_partners,
       NOT EXISTS (SELECT * FROM ss_by_index EXCEPT SELECT * FROM ss_by_scan) AND
       NOT EXISTS (SELECT * FROM ss_by_scan EXCEPT SELECT * FROM ss_by_index) AS index_equals_scan;

--
-- b-bit minhash
--

-- 400 pairs spread evenly over Jaccard 0 .. 1
CREATE TABLE bb_pairs AS
SELECT pair, jaccard(d.a, d.b, shingle_size => 1) AS j,
       minhash_sketch(d.a, shingle_size => 1) AS sa,
       minhash_sketch(d.b, shingle_size => 1) AS sb
FROM (SELECT 100000 + p AS pair, round(2000 * t / (1 + t))::int AS m
      FROM generate_series(0, 399) p, LATERAL (SELECT p / 399.0 AS t) t) x,
     LATERAL planted_pairs(pair, m) d;
SELECT width_bucket(j, 0, 1.000001, 5) AS jaccard_fifth, count(*) AS pairs
FROM bb_pairs GROUP BY 1 ORDER BY 1;

-- The estimator for each b: P = agreeing fraction, R = (P - 2^-b) / (1 - 2^-b);
-- its variance is P(1 - P) / (K (1 - 2^-b)^2) with P = 2^-b + (1 - 2^-b) J.
CREATE TABLE bb_est AS
SELECT b, pair, j,
       similarity(minhash_bbit(sa, b), minhash_bbit(sb, b)) AS est,
       similarity(sa, sb) AS full_est,
       pc * (1 - pc) / (128 * power(1 - power(2, -b), 2)) AS variance
FROM bb_pairs, unnest(ARRAY[1, 2, 4, 8]) b,
     LATERAL (SELECT power(2, -b) + (1 - power(2, -b)) * j AS pc) p;

-- The squared error, in units of the variance, averages 1 within 4
-- standard errors (sqrt(2 / pairs)) over all the pairs but J = 1 (variance
-- 0, error 0), clipped ones included.  The mean error is within 4 standard errors of 0 over the pairs
-- with J >= 0.25, where clipping at 0 has no effect (over 2.5 sd away even
-- at b = 1).
SELECT b, count(*) AS pairs,
       abs(avg(power(est - j, 2) / variance) FILTER (WHERE j < 1) - 1)
           <= 4 * sqrt(2.0 / count(*) FILTER (WHERE j < 1)) AS error_within_variance,
       abs(avg(est - j) FILTER (WHERE j >= 0.25)) <=
           4 * sqrt(sum(variance) FILTER (WHERE j >= 0.25)) / count(*) FILTER (WHERE j >= 0.25) AS unbiased,
       bool_and(est BETWEEN 0 AND 1) AS clipped_to_0_1
FROM bb_est GROUP BY b ORDER BY b;

-- identical documents give exactly 1, at every b; disjoint ones are near 0
SELECT b, bool_and(est = 1) AS identical_is_one FROM bb_est WHERE j = 1 GROUP BY b ORDER BY b;
SELECT b, est <= 4 * sqrt(variance) AS disjoint_near_zero FROM bb_est WHERE j = 0 ORDER BY b;

-- Sizes: 64 bytes of payload at b = 4 and K = 128, after a 16-byte header
SELECT b, pg_column_size(minhash_bbit(sa, b)) AS bytes, length(minhash_bbit_send(minhash_bbit(sa, b))) AS send_bytes
FROM bb_pairs, unnest(ARRAY[1, 2, 4, 8]) b WHERE pair = 100100 ORDER BY b;
SELECT pg_column_size(minhash_bbit(minhash_sketch('a b c d e f g'))) AS default_bytes,
       pg_column_size(minhash_sketch('a b c d e f g')) AS minhash_bytes;

-- text form, exactly
SELECT b, minhash_bbit(minhash_sketch('a b c d e f g h i j k l m n o p q r s t u v w x y z', 16, 1), b)
FROM unnest(ARRAY[1, 2, 4, 8]) b ORDER BY b;
SELECT minhash_bbit(minhash_sketch('', 16), 2) AS empty_doc;
SELECT minhash_bbit(minhash_sketch(ARRAY[1, 2, 3]::bigint[], 17, -5), 1) AS bigint_odd_k;

-- The empty document: similarity 0 against anything, itself included
SELECT similarity(minhash_bbit(minhash_sketch('')), minhash_bbit(minhash_sketch(''))) AS empty_empty,
       similarity(minhash_bbit(minhash_sketch('')), minhash_bbit(minhash_sketch('a b c d e'))) AS empty_other;

-- NULLs: every function is STRICT
SELECT minhash_bbit(NULL) IS NULL AS null_sketch, minhash_bbit(minhash_sketch('a'), NULL) IS NULL AS null_b,
       similarity(NULL::minhash_bbit, minhash_bbit(minhash_sketch('a'))) IS NULL AS null_similarity,
       minhash_supershingles(NULL) IS NULL AS null_supershingles,
       supershingles_shared(NULL, '{1}') IS NULL AS null_shared;

-- text and binary round trips are exact: every b, odd K, every unit,
-- negative seeds, empty documents
CREATE TABLE bb_io (id int, mb minhash_bbit);
INSERT INTO bb_io
SELECT row_number() OVER (), minhash_bbit(mh, b)
FROM unnest(ARRAY[1, 2, 4, 8]) b,
     (SELECT sa AS mh FROM bb_pairs WHERE pair IN (100000, 100200)
      UNION ALL SELECT minhash_sketch('one two three four', num_perm => 17, shingle_size => 2, seed => -7)
      UNION ALL SELECT minhash_sketch('one two three four', num_perm => 1024, unit => 'char', seed => 2147483647)
      UNION ALL SELECT minhash_sketch(ARRAY['x', 'y'], 33, -2147483648)
      UNION ALL SELECT minhash_sketch(ARRAY[1, 2]::bigint[], 16)
      UNION ALL SELECT minhash_sketch('', 19)) s;
SELECT count(*) AS values, count(*) FILTER (WHERE mb::text ~ ':empty$') AS empty,
       bool_and(mb::text::minhash_bbit::text = mb::text) AS text_round_trip,
       bool_and((split_part(mb::text, ':', 1) || ':' || upper(split_part(mb::text, ':', 2)))::minhash_bbit::text = mb::text)
           FILTER (WHERE mb::text !~ ':empty$') AS upper_case_digits_read
FROM bb_io;
\copy bb_io TO 'results/bbit_supershingles.bin' WITH (FORMAT binary)
CREATE TABLE bb_io_copy (LIKE bb_io);
\copy bb_io_copy FROM 'results/bbit_supershingles.bin' WITH (FORMAT binary)
SELECT count(*) AS rows,
       bool_and(c.mb::text = d.mb::text) AS binary_round_trip,
       bool_and(minhash_bbit_send(c.mb) = minhash_bbit_send(d.mb)) AS same_bytes
FROM bb_io d JOIN bb_io_copy c USING (id);

-- no index: b-bit sketches are for storage and verification
CREATE TABLE bb_noindex (mb minhash_bbit);
CREATE INDEX ON bb_noindex USING gin (mb);
\echo :SQLSTATE
CREATE INDEX ON bb_noindex USING btree (mb);
\echo :SQLSTATE

--
-- Bad inputs, one per line
--
SELECT minhash_supershingles(minhash_sketch('a b c'), 0);
\echo :SQLSTATE
SELECT minhash_supershingles(minhash_sketch('a b c', num_perm => 16), 17);
\echo :SQLSTATE
SELECT supershingles_shared(ARRAY[1, NULL]::bigint[], ARRAY[1]::bigint[]);
\echo :SQLSTATE
SELECT supershingles_shared(ARRAY[1]::bigint[], ARRAY[NULL]::bigint[]);
\echo :SQLSTATE
SELECT supershingle_probability(1.5, 6, 14);
\echo :SQLSTATE
SELECT supershingle_probability('NaN', 6, 14);
\echo :SQLSTATE
SELECT supershingle_probability(0.5, 0, 14);
\echo :SQLSTATE
SELECT supershingle_probability(0.5, 6, 0);
\echo :SQLSTATE
SELECT supershingle_probability(0.5, 64, 64);
\echo :SQLSTATE
SELECT supershingle_probability(0.5, 6, 14, 0);
\echo :SQLSTATE
SELECT supershingle_probability(0.5, 6, 14, 7);
\echo :SQLSTATE
SELECT minhash_bbit(minhash_sketch('a b c'), 3);
\echo :SQLSTATE
SELECT minhash_bbit(minhash_sketch('a b c'), 0);
\echo :SQLSTATE
SELECT minhash_bbit(minhash_sketch('a b c'), 16);
\echo :SQLSTATE
SELECT similarity(minhash_bbit(minhash_sketch('a b c'), 4), minhash_bbit(minhash_sketch('a b c'), 2));
\echo :SQLSTATE
SELECT similarity(minhash_bbit(minhash_sketch('a b c', num_perm => 64)), minhash_bbit(minhash_sketch('a b c')));
\echo :SQLSTATE
SELECT similarity(minhash_bbit(minhash_sketch('a b c', seed => 1)), minhash_bbit(minhash_sketch('a b c')));
\echo :SQLSTATE
SELECT 'not a sketch'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=0,b=4:0123'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=0,b=4:0123456789abcdef0'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=0,b=2:0123012301230124'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=0,b=3:0123012301230123'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=8,unit=word,shingle_size=5,seed=0,b=4:01234567'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=line,shingle_size=5,seed=0,b=4:empty'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=text,shingle_size=5,seed=0,b=4:empty'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed= 0,b=4:empty'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=+16,unit=word,shingle_size=5,seed=0,b=4:empty'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=2147483648,b=4:empty'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v2,num_perm=16,unit=word,shingle_size=5,seed=0,b=4:empty'::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=0,b=4:empty '::minhash_bbit;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=0:0123456789abcdef'::minhash_bbit;
\echo :SQLSTATE
-- binary input checks what text input checks: bytes of a bytea column read
-- back as minhash_bbit go through minhash_bbit_recv
CREATE TABLE bb_bytes (id int, raw bytea);
INSERT INTO bb_bytes VALUES
  (1, '\x0101050004001000000000'),                          -- b = 4, no payload
  (2, '\x01010500030010000000000123456789abcdef'),          -- b = 3
  (3, '\x010105000100110000000000ff07'),                    -- b = 1, K = 17: bit past K set
  (4, '\x01010502040010000000000123456701234567'),        -- unknown flag 2
  (5, '\x010105000400100000000001234567012345670f'),       -- a byte left over
  (6, '\x010105000400100000000001234567012345fe');         -- valid
CREATE TABLE bb_one (id int, mb minhash_bbit);
-- (psql sets no SQLSTATE variable for \copy: the error shows only its code)
\set VERBOSITY sqlstate
\copy (SELECT id, raw FROM bb_bytes WHERE id = 1) TO 'results/bbit_bad1.bin' WITH (FORMAT binary)
\copy bb_one FROM 'results/bbit_bad1.bin' WITH (FORMAT binary)
\copy (SELECT id, raw FROM bb_bytes WHERE id = 2) TO 'results/bbit_bad2.bin' WITH (FORMAT binary)
\copy bb_one FROM 'results/bbit_bad2.bin' WITH (FORMAT binary)
\copy (SELECT id, raw FROM bb_bytes WHERE id = 3) TO 'results/bbit_bad3.bin' WITH (FORMAT binary)
\copy bb_one FROM 'results/bbit_bad3.bin' WITH (FORMAT binary)
\copy (SELECT id, raw FROM bb_bytes WHERE id = 4) TO 'results/bbit_bad4.bin' WITH (FORMAT binary)
\copy bb_one FROM 'results/bbit_bad4.bin' WITH (FORMAT binary)
\copy (SELECT id, raw FROM bb_bytes WHERE id = 5) TO 'results/bbit_bad5.bin' WITH (FORMAT binary)
\copy bb_one FROM 'results/bbit_bad5.bin' WITH (FORMAT binary)
\set VERBOSITY default
SELECT count(*) AS nothing_read FROM bb_one;
\copy (SELECT id, raw FROM bb_bytes WHERE id = 6) TO 'results/bbit_good.bin' WITH (FORMAT binary)
\copy bb_one FROM 'results/bbit_good.bin' WITH (FORMAT binary)
SELECT id, mb FROM bb_one;
