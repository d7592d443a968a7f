-- Containment: containment() is |Q ∩ D| / |Q| exactly; text @>
-- containment_query holds when it reaches the query's threshold; a
-- containment_ops index returns exactly the rows a sequential scan returns,
-- at every threshold, before and after inserts, updates and deletes.
SET extra_float_digits = 0;
\set SHOW_CONTEXT never

-------------------------------------------------------------------------
-- (a) Exact containment, NULL and empty inputs
-------------------------------------------------------------------------
-- the passage's 3 shingles of 3 words are all in the longer text
SELECT containment('to be or not to', 'whether to be or not to be', shingle_size => 3);
-- 2 of its 4: "a b c", "b c d" held; "c d x", "d x y" not
SELECT containment('a b c d x y', 'a b c d e f', shingle_size => 3);
-- containment is one-sided: the other way round, 2 of 4 again, but of the other set
SELECT containment('a b c d e f', 'a b c d x y z w', shingle_size => 3);
SELECT containment('abcd', 'xxabcdxx', shingle_size => 3, unit => 'char');
SELECT containment('<b>to be</b> or not', 'to be or not to be', shingle_size => 2, strip_html => true);
-- a passage without shingles is contained in nothing: 0
SELECT containment('', 'anything at all'), containment('a b', '');
SELECT containment(NULL, 'x') IS NULL AS null_in_null_out;
SELECT containment('a b', 'a b', unit => 'sentence');
\echo :SQLSTATE
SELECT containment('a b', 'a b', shingle_size => 0);
\echo :SQLSTATE

-------------------------------------------------------------------------
-- (b) The query and the operator
-------------------------------------------------------------------------
SELECT containment_query('to be or not', 0.7);
SELECT * FROM containment_query('to be or not', 0.7, shingle_size => 2, unit => 'char', strip_html => true);
SELECT containment_query('x', 0);
\echo :SQLSTATE
SELECT containment_query('x', 1.5);
\echo :SQLSTATE
SELECT containment_query('x', 'NaN');
\echo :SQLSTATE
SELECT containment_query('x', 0.5, unit => 'line');
\echo :SQLSTATE
SELECT containment_query(NULL, 0.5) IS NULL AS null_query;
SELECT 'whether to be or not to be' @> containment_query('to be or not to', 1, shingle_size => 3) AS whole,
       'a b c d e f' @> containment_query('a b c d x y', 0.5, shingle_size => 3) AS half_at_half,
       'a b c d e f' @> containment_query('a b c d x y', 0.51, shingle_size => 3) AS half_at_more;
-- a composite written by hand is checked as the maker checks it
SELECT 'a b' @> ROW('a b', 2, 5, 'word', false)::containment_query;
\echo :SQLSTATE
SELECT 'a b' @> ROW('a b', 0.5, NULL, 'word', false)::containment_query IS NULL AS null_field;

-------------------------------------------------------------------------
-- (c) The index returns exactly what a sequential scan returns
--     800 documents of 150 to 900 words from a 3,000-word vocabulary;
--     every tenth holds a planted passage of 20 to 80 words, whole or
--     in part; 80 queries, 3 thresholds.
-------------------------------------------------------------------------
CREATE FUNCTION c_words(seed bigint, n int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg('w' || (abs(hashint8extended(seed * 100000 + i, 11)) % 3000), ' ' ORDER BY i)
    FROM generate_series(1, n) i $$;
-- passage p: 20 + p % 61 words; its copy in a document keeps the first
-- 100%, 95%, 80%, 60% or 40% of its words (by p % 5) and replaces the rest
CREATE FUNCTION c_passage(p int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT c_words(1000000 + p, 20 + p % 61) $$;
CREATE FUNCTION c_copy(p int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(CASE WHEN i <= ceil((20 + p % 61) * (ARRAY[1, 0.95, 0.8, 0.6, 0.4])[1 + p % 5])
                           THEN w ELSE 'edited' || i END, ' ' ORDER BY i)
    FROM unnest(string_to_array(c_passage(p), ' ')) WITH ORDINALITY u(w, i) $$;
CREATE TABLE cdocs (id bigint PRIMARY KEY, body text);
INSERT INTO cdocs
SELECT d, CASE WHEN d % 10 = 0
               THEN c_words(d, 75 + d % 375) || ' ' || c_copy((d / 10) % 80) || ' ' || c_words(-d, 75 + d % 375)
               ELSE c_words(d, 150 + d % 750) END
FROM generate_series(1, 800) d;
CREATE INDEX cdocs_body ON cdocs USING gin (body containment_ops);
ANALYZE cdocs;
CREATE TABLE cqueries AS
SELECT p, c_passage(p) AS passage, t
FROM generate_series(0, 79) p, (VALUES (0.5::float8), (0.7), (0.9)) v(t);
CREATE FUNCTION c_compare(label text) RETURNS TABLE (index_state text, matches bigint, equal boolean)
LANGUAGE plpgsql AS $$
BEGIN
    SET LOCAL enable_seqscan = off;
    CREATE TEMP TABLE c_by_index AS
    SELECT q.p, q.t, d.id FROM cqueries q
    JOIN LATERAL (SELECT d.id FROM cdocs d WHERE d.body @> containment_query(q.passage, q.t)) d ON true;
    SET LOCAL enable_seqscan = on; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexscan = off;
    -- each passage against each document once, then the three thresholds
    CREATE TEMP TABLE c_by_scan AS
    SELECT s.p, q.t, s.id
    FROM (SELECT q.p, d.id, containment(q.passage, d.body) AS c
          FROM (SELECT DISTINCT p, passage FROM cqueries) q, cdocs d) s
    JOIN cqueries q ON q.p = s.p AND s.c >= q.t;
    RETURN QUERY SELECT c_compare.label, (SELECT count(*) FROM c_by_scan),
        NOT EXISTS (SELECT * FROM c_by_index EXCEPT SELECT * FROM c_by_scan)
        AND NOT EXISTS (SELECT * FROM c_by_scan EXCEPT SELECT * FROM c_by_index);
    DROP TABLE c_by_index, c_by_scan;
END $$;
-- the planner chooses the index by itself, for short passages and long
-- ones (a long passage has many keys, which GIN prices high; a scan
-- shingles every document, which containment's cost says)
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM cdocs WHERE body @> containment_query('w1 w2 w3 w4 w5 w6', 0.7);
RESET enable_seqscan;
CREATE FUNCTION c_plan_uses_index(passage text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
    EXECUTE format('EXPLAIN (FORMAT JSON) SELECT id FROM cdocs WHERE body @> containment_query(%L, 0.7)', passage)
        INTO plan;
    RETURN plan::text LIKE '%Bitmap Index Scan%';
END $$;
SELECT c_plan_uses_index(c_passage(0)) AS short_passage, c_plan_uses_index(c_passage(60)) AS long_passage;
SELECT * FROM c_compare('fresh index');
-- matches at each threshold: whole copies at all three, partial ones at fewer
SELECT t, count(*) AS pairs FROM cqueries q JOIN cdocs d ON d.body @> containment_query(q.passage, q.t)
GROUP BY t ORDER BY t;
DROP INDEX cdocs_body;
CREATE INDEX cdocs_body16 ON cdocs USING gin (body containment_ops(key_bits = 16));
SELECT * FROM c_compare('16-bit keys');
DROP INDEX cdocs_body16;
CREATE INDEX cdocs_body ON cdocs USING gin (body containment_ops) WITH (fastupdate = off);
-- inserts, updates and deletes, seen by the next query
UPDATE cdocs SET body = c_words(id, 100) WHERE id % 30 = 0;
DELETE FROM cdocs WHERE id % 50 = 0;
INSERT INTO cdocs SELECT 5000 + p, c_words(p, 40) || ' ' || c_passage(p) FROM generate_series(0, 79, 7) p;
SELECT * FROM c_compare('after changes');
-- a query shingled otherwise than the index is answered, through the whole
-- index and the recheck where scans are off (more in (f))
SET enable_seqscan = off;
SELECT count(*) FROM cdocs WHERE body @> containment_query('w1 w2 w3 w4', 0.5, shingle_size => 3);
-- a passage without shingles matches nothing, through the index too
SELECT count(*) FROM cdocs WHERE body @> containment_query('', 0.5);
RESET enable_seqscan;

-------------------------------------------------------------------------
-- (d) contamination_pairs: every (item, document) pair at the threshold,
--     the same as the pairs by hand, in one call, with progress
-------------------------------------------------------------------------
CREATE TABLE citems (item bigint PRIMARY KEY, question text);
INSERT INTO citems SELECT p, c_passage(p) FROM generate_series(0, 79) p;
INSERT INTO citems VALUES (1000, NULL), (1001, ''), (1002, 'w1 w2 w3 w4 w5 w6 w7');
CREATE TABLE c_found AS
SELECT * FROM contamination_pairs('citems', 'question', 'item', 'cdocs', 'body', 'id', threshold => 0.7);
CREATE TABLE c_by_hand AS
SELECT i.item AS item_id, d.id AS doc_id, containment(i.question, d.body) AS containment
FROM citems i, cdocs d WHERE containment(i.question, d.body) >= 0.7;
SELECT (SELECT count(*) FROM c_by_hand) AS pairs,
       NOT EXISTS (SELECT * FROM c_found EXCEPT SELECT * FROM c_by_hand)
   AND NOT EXISTS (SELECT * FROM c_by_hand EXCEPT SELECT * FROM c_found) AS same_pairs_and_scores;
\set VERBOSITY terse
SELECT count(*) FROM contamination_pairs('citems', 'question', 'item', 'cdocs', 'body', 'id', progress => true);
\set VERBOSITY default
-- rows without an id are no item: a table without a primary key
CREATE TABLE citems_loose (item bigint, question text);
INSERT INTO citems_loose VALUES (NULL, c_passage(0)), (7, c_passage(0));
SELECT item_id, count(*) > 0 AS found FROM contamination_pairs('citems_loose', 'question', 'item', 'cdocs', 'body', 'id')
GROUP BY item_id ORDER BY item_id;
-- NULL arguments: no pairs
SELECT count(*) FROM contamination_pairs('citems', 'question', 'item', 'cdocs', 'body', 'id', threshold => NULL);
-- errors
SELECT * FROM contamination_pairs('citems', 'question', 'item', 'cdocs', 'body', 'id', threshold => 0);
\echo :SQLSTATE
SELECT * FROM contamination_pairs('citems', 'nope', 'item', 'cdocs', 'body', 'id');
\echo :SQLSTATE
SELECT * FROM contamination_pairs('citems', 'item', 'item', 'cdocs', 'body', 'id');
\echo :SQLSTATE
SELECT * FROM contamination_pairs('citems', 'question', 'question', 'cdocs', 'body', 'id');
\echo :SQLSTATE
SELECT * FROM contamination_pairs('citems', 'question', 'item', 'cqueries', 'passage', 'p');
\echo :SQLSTATE
SELECT * FROM contamination_pairs('citems', 'question', 'item', 'cdocs', 'body', 'id', shingle_size => 3);
\echo :SQLSTATE
-- a relation that does not exist, by OID
SELECT * FROM contamination_pairs(0, 'question', 'item', 'cdocs', 'body', 'id');
\echo :SQLSTATE
SELECT * FROM contamination_pairs('citems', 'question', 'item', 0, 'body', 'id');
\echo :SQLSTATE

-------------------------------------------------------------------------
-- (e) containment(query minhash, doc minhash): an estimate from sketches,
--     unbiased below 1 on 300 independent pairs of each size ratio, with
--     the spread the documentation states: (1 + r) / (1 + J)^2 times
--     minhash's sqrt(J (1 - J) / K), r = |D| / |Q|
-------------------------------------------------------------------------
CREATE TABLE cest AS
SELECT g, r, containment(minhash_sketch(ARRAY(SELECT g * 100000 + i FROM generate_series(1, 200) i)::bigint[]),
                         minhash_sketch(ARRAY(SELECT g * 100000 + i FROM generate_series(1, 140) i
                                              UNION ALL
                                              SELECT g * 100000 + 50000 + i FROM generate_series(1, 200 * r - 140) i)::bigint[])) AS c
FROM generate_series(1, 300) g, (VALUES (1), (4)) v(r);
SELECT r, abs(avg(c) - 0.7) <= 4 * stddev(c) / sqrt(count(*)) AS unbiased,
       stddev(c) / ((1 + r) / (1 + 0.7 / (r + 0.3)) ^ 2 * sqrt((0.7 / (r + 0.3)) * (1 - 0.7 / (r + 0.3)) / 128))
           BETWEEN 0.6 AND 1.4 AS stated_spread
FROM cest GROUP BY r ORDER BY r;
-- a set inside itself, an empty query, and sketches made differently
SELECT containment(minhash_sketch('a b c d e f g h'), minhash_sketch('a b c d e f g h')) AS itself,
       containment(minhash_sketch(''), minhash_sketch('a b c d e f g h')) AS empty_query;
SELECT containment(minhash_sketch('a b c'), minhash_sketch('a b c', seed => 1));
\echo :SQLSTATE
-- weighted sketches: containment of weight, sum(min) / sum(query's weights)
SELECT abs(avg(c) - 0.5) <= 4 * stddev(c) / sqrt(count(*)) AS weighted_unbiased
FROM (SELECT containment(weighted_minhash_sketch(ARRAY[g * 10 + 1, g * 10 + 2]::bigint[], ARRAY[3, 3]::float8[]),
                         weighted_minhash_sketch(ARRAY[g * 10 + 1, g * 10 + 3]::bigint[], ARRAY[3, 6]::float8[])) AS c
      FROM generate_series(1, 300) g) w;

-------------------------------------------------------------------------
-- (f) Indexes of several shinglings: a query is answered by an index of
--     its own shingling or by a scan, never refused; an index shingled
--     otherwise is priced as reading all of it and left aside.  A column
--     indexed in the second place of a multicolumn index serves too.
-------------------------------------------------------------------------
CREATE TABLE c2docs AS SELECT id, c_words(-id, 30) AS t2, body FROM cdocs WHERE id <= 300;
ALTER TABLE c2docs ADD PRIMARY KEY (id);
CREATE INDEX c2_multi ON c2docs USING gin (t2 containment_ops, body containment_ops(shingle_size = 3));
ANALYZE c2docs;
-- contamination_pairs finds body in the second place
SELECT count(*) > 0 AS pairs,
       bool_and(containment = containment(i.question, d.body, 3)) AS right_scores
FROM contamination_pairs('citems', 'question', 'item', 'c2docs', 'body', 'id', threshold => 0.7, shingle_size => 3) c
JOIN citems i ON i.item = c.item_id JOIN c2docs d ON d.id = c.doc_id;
CREATE INDEX c2_body5 ON c2docs USING gin (body containment_ops);
-- each shingling its index; a third, none: a scan
EXPLAIN (COSTS OFF) SELECT id FROM c2docs WHERE body @> containment_query('w1 w2 w3 w4 w5 w6', 0.7);
EXPLAIN (COSTS OFF) SELECT id FROM c2docs WHERE body @> containment_query('w1 w2 w3 w4 w5 w6', 0.7, shingle_size => 3);
EXPLAIN (COSTS OFF) SELECT id FROM c2docs WHERE body @> containment_query('w1 w2 w3 w4 w5 w6', 0.7, shingle_size => 4);
-- with scans off, either index serves any shingling: the same rows as a scan
CREATE FUNCTION c2_compare(size int) RETURNS TABLE (shingle_size int, matches bigint, equal boolean)
LANGUAGE plpgsql AS $$
BEGIN
    SET LOCAL enable_seqscan = off;
    CREATE TEMP TABLE c_by_index AS
    SELECT q.p, q.t, d.id FROM cqueries q
    JOIN LATERAL (SELECT d.id FROM c2docs d WHERE d.body @> containment_query(q.passage, q.t, size)) d ON true
    WHERE q.p < 30;
    SET LOCAL enable_seqscan = on; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexscan = off;
    CREATE TEMP TABLE c_by_scan AS
    SELECT q.p, q.t, d.id FROM cqueries q, c2docs d
    WHERE q.p < 30 AND containment(q.passage, d.body, size) >= q.t;
    RETURN QUERY SELECT size, (SELECT count(*) FROM c_by_scan),
        NOT EXISTS (SELECT * FROM c_by_index EXCEPT SELECT * FROM c_by_scan)
        AND NOT EXISTS (SELECT * FROM c_by_scan EXCEPT SELECT * FROM c_by_index);
    DROP TABLE c_by_index, c_by_scan;
END $$;
SELECT c.* FROM generate_series(3, 5) s, c2_compare(s) c;
-- contamination_pairs takes the index of the items' shingling
CREATE FUNCTION c2_contamination(size int) RETURNS TABLE (shingle_size int, pairs bigint, same boolean)
LANGUAGE sql AS $$
    WITH found AS (SELECT * FROM contamination_pairs('citems', 'question', 'item', 'c2docs', 'body', 'id',
                                                     threshold => 0.7, shingle_size => size)),
         by_hand AS (SELECT i.item, d.id, containment(i.question, d.body, size) AS c
                     FROM citems i, c2docs d WHERE containment(i.question, d.body, size) >= 0.7)
    SELECT size, (SELECT count(*) FROM by_hand),
           NOT EXISTS (SELECT * FROM found EXCEPT SELECT * FROM by_hand)
           AND NOT EXISTS (SELECT * FROM by_hand EXCEPT SELECT * FROM found) $$;
SELECT * FROM c2_contamination(3);
SELECT * FROM c2_contamination(5);
SELECT * FROM contamination_pairs('citems', 'question', 'item', 'c2docs', 'body', 'id', shingle_size => 4);
\echo :SQLSTATE
-- the operator and containment() keep a passage's shingles between rows:
-- a PL/pgSQL variable that changes is seen (passage 1 is 95% in row 10)
CREATE FUNCTION c_loop() RETURNS TABLE (p int, by_operator boolean, by_function boolean) LANGUAGE plpgsql AS $$
DECLARE
    q containment_query;
    passage text;
    doc text := (SELECT body FROM cdocs WHERE id = 10);
BEGIN
    FOR i IN 0..3 LOOP
        p := i;
        passage := c_passage(i);
        q := containment_query(passage, 0.5);
        by_operator := doc @> q;
        by_function := containment(passage, doc) >= 0.5;
        RETURN NEXT;
    END LOOP;
END $$;
SELECT * FROM c_loop();

-------------------------------------------------------------------------
-- (g) Passages with more keys than a query sends (2,048): a row must
--     match fewer of them, or where that leaves nothing to ask every row
--     is a candidate; the answer is exact either way.  A passage of 5,000
--     words, held whole, at 95%, at 85% or not at all by 16 documents.
-------------------------------------------------------------------------
CREATE TABLE clong (id bigint PRIMARY KEY, body text);
INSERT INTO clong
SELECT d, CASE d % 4
              WHEN 0 THEN c_words(-d, 50) || ' ' || c_words(7, 5000)
              WHEN 1 THEN c_words(7, 4750) || ' ' || c_words(-d, 250)
              WHEN 2 THEN c_words(7, 4250) || ' ' || c_words(-d, 750)
              ELSE c_words(-d, 5000) END
FROM generate_series(1, 16) d;
CREATE INDEX clong_body ON clong USING gin (body containment_ops);
ANALYZE clong;
-- 4,996 shingles: at 0.3 and 0.55 nothing is left to ask (every row is a
-- candidate), at 0.6 a row must match 50 of the 2,048 keys, at 0.9 1,548
CREATE TABLE clong_q AS
SELECT t, c_words(7, 5000) AS passage FROM (VALUES (0.3::float8), (0.55), (0.6), (0.9), (0.96)) v(t);
SET enable_seqscan = off;
CREATE TABLE clong_by_index AS
SELECT q.t, x.id FROM clong_q q, LATERAL (SELECT x.id FROM clong x WHERE x.body @> containment_query(q.passage, q.t)) x;
RESET enable_seqscan;
SELECT q.t, count(*) FILTER (WHERE containment(q.passage, d.body) >= q.t) AS by_scan,
       (SELECT count(*) FROM clong_by_index i WHERE i.t = q.t) AS by_index,
       bool_and((containment(q.passage, d.body) >= q.t)
                = EXISTS (SELECT FROM clong_by_index i WHERE i.t = q.t AND i.id = d.id)) AS equal
FROM clong_q q, clong d GROUP BY q.t ORDER BY q.t;

-------------------------------------------------------------------------
-- (h) Long passages at low thresholds: where a row need match none of the
--     2,048 keys sent, the query asks for the size keys of the documents
--     long enough (at least ceil(t |Q|) shingles), and only those are
--     rechecked.  302 documents of mixed sizes: 200 short ones (10 to 609
--     words), 50 long ones without the passage (1,000 to 8,999 words), 50
--     holding a prefix of 460 to 8,300 words of the passages' source, one
--     NULL and one empty.  Passages of 1,000 to 8,000 words of that source.
-------------------------------------------------------------------------
CREATE TABLE cmix (id bigint PRIMARY KEY, body text);
INSERT INTO cmix
SELECT d, CASE WHEN d <= 200 THEN c_words(-d, 10 + d * 7 % 600)
               WHEN d <= 250 THEN c_words(-d, 1000 + d * 131 % 8000)
               ELSE c_words(-d, d % 300) || ' ' || c_words(9, 300 + (d - 250) * 160) || ' ' || c_words(-d - 1000, d % 500)
          END
FROM generate_series(1, 300) d;
INSERT INTO cmix VALUES (301, NULL), (302, '');
-- 32 bits would reach the size keys' negative range: refused
CREATE INDEX cmix_body ON cmix USING gin (body containment_ops(key_bits = 32));
\echo :SQLSTATE
CREATE INDEX cmix_body ON cmix USING gin (body containment_ops);
-- two more long documents, in the pending list
INSERT INTO cmix VALUES (303, c_words(9, 2000)), (304, c_words(-304, 7000));
ANALYZE cmix;
-- each passage's shingles, and the keys it sends: all of them up to 2,048
CREATE TABLE cmix_p AS
SELECT len, c_words(9, len) AS passage, cardinality(ndd_shingle_set(c_words(9, len))) AS n
FROM (VALUES (1000), (3000), (5000), (8000)) v(len);
-- thresholds: plain ones, 1e-12 (no shingle to share: every row), and
-- those where the count a row must match, ceil(t n) - (n - 2,048), is
-- -1, 0 and 1
CREATE TABLE cmix_q AS
SELECT p.len, p.passage, p.n, t.t,
       CASE WHEN ceil(t.t * p.n - 1e-9) - (p.n - least(p.n, 2048)) > 0 THEN 'shingle keys'
            WHEN ceil(t.t * p.n - 1e-9) > 0 THEN 'size keys' ELSE 'every row' END AS path
FROM cmix_p p, LATERAL (SELECT unnest(ARRAY[1e-12, 0.05, 0.1, 0.3, 0.5, 0.8]::float8[]) AS t
                        UNION ALL
                        SELECT (p.n - 2048 + k)::float8 / p.n FROM generate_series(-1, 1) k WHERE p.n > 2048) t;
-- the size class of n shingles, as the index computes it
CREATE FUNCTION c_size_class(n bigint) RETURNS int LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN n < 4 THEN n::int
                ELSE 4 * b + ((n >> (b - 2)) & 3)::int END
    FROM (SELECT length(ltrim(least(n, 4294967295)::bit(32)::text, '0')) - 1 AS b) x $$;
CREATE FUNCTION cmix_compare(label text) RETURNS TABLE (index_state text, path text, queries bigint, matches bigint, equal boolean)
LANGUAGE plpgsql AS $$
BEGIN
    SET LOCAL enable_seqscan = off;
    CREATE TEMP TABLE c_by_index AS
    SELECT q.len, q.t, d.id FROM cmix_q q
    JOIN LATERAL (SELECT d.id FROM cmix d WHERE d.body @> containment_query(q.passage, q.t)) d ON true;
    SET LOCAL enable_seqscan = on; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexscan = off;
    CREATE TEMP TABLE c_by_scan AS
    SELECT s.len, q.t, s.id
    FROM (SELECT p.len, d.id, containment(p.passage, d.body) AS c FROM cmix_p p, cmix d) s
    JOIN cmix_q q ON q.len = s.len AND s.c >= q.t;
    RETURN QUERY
    SELECT cmix_compare.label, q.path, count(*), sum(m.by_scan)::bigint, bool_and(m.same)
    FROM cmix_q q, LATERAL (
        SELECT (SELECT count(*) FROM c_by_scan s WHERE s.len = q.len AND s.t = q.t) AS by_scan,
               NOT EXISTS (SELECT id FROM c_by_index i WHERE i.len = q.len AND i.t = q.t
                           EXCEPT SELECT id FROM c_by_scan s WHERE s.len = q.len AND s.t = q.t)
               AND NOT EXISTS (SELECT id FROM c_by_scan s WHERE s.len = q.len AND s.t = q.t
                               EXCEPT SELECT id FROM c_by_index i WHERE i.len = q.len AND i.t = q.t) AS same) m
    GROUP BY q.path ORDER BY q.path;
    DROP TABLE c_by_index, c_by_scan;
END $$;
SELECT len, n, path, count(*) AS thresholds FROM cmix_q GROUP BY len, n, path ORDER BY len, path;
SELECT * FROM cmix_compare('24-bit keys');
-- the size keys narrow: the rows the index returns for the recheck are
-- the documents of a class at least that of ceil(t n) shingles, where
-- without them they were every row (as "every row" still is)
CREATE FUNCTION c_candidates(q containment_query) RETURNS TABLE (node text, candidates bigint, matches bigint)
LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
    SET LOCAL enable_seqscan = off;
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) SELECT id FROM cmix WHERE body @> $1'
        INTO plan USING q;
    plan := plan -> 0 -> 'Plan';
    RETURN QUERY SELECT plan ->> 'Node Type',
        (plan ->> 'Actual Rows')::numeric::bigint + coalesce((plan ->> 'Rows Removed by Index Recheck')::numeric::bigint, 0),
        (plan ->> 'Actual Rows')::numeric::bigint;
END $$;
SELECT q.len, round(q.t::numeric, 4) AS t, q.path, c.node,
       (SELECT count(*) FROM cmix WHERE body IS NOT NULL) AS docs,
       (SELECT count(*) FROM cmix d WHERE c_size_class(cardinality(ndd_shingle_set(d.body)))
                                         >= c_size_class(ceil(q.t * q.n - 1e-9)::bigint)) AS long_enough,
       c.candidates, c.matches
FROM cmix_q q, c_candidates(containment_query(q.passage, q.t)) c
WHERE q.path <> 'shingle keys' AND (q.len, q.t) IN (SELECT len, min(t) FROM cmix_q GROUP BY len UNION ALL
                                                    SELECT len, max(t) FROM cmix_q WHERE path <> 'shingle keys' GROUP BY len)
ORDER BY q.len, q.t;
-- another shingling's query: every row, through the index too
SET enable_seqscan = off;
SELECT count(*) FROM cmix WHERE body @> containment_query(c_words(9, 5000), 0.3, shingle_size => 4);
RESET enable_seqscan;
SELECT count(*) FROM cmix WHERE containment(c_words(9, 5000), body, 4) >= 0.3;
-- a NULL field: no row, through the index too
SET enable_seqscan = off;
SELECT count(*) FROM cmix WHERE body @> ROW(c_words(9, 5000), 0.3, NULL, 'word', false)::containment_query;
RESET enable_seqscan;
-- the planner takes the index by itself for long passages at low thresholds
CREATE FUNCTION cmix_plan(len int, t float8) RETURNS text LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
    EXECUTE format('EXPLAIN (FORMAT JSON) SELECT id FROM cmix WHERE body @> containment_query(%L, %s)', c_words(9, len), t)
        INTO plan;
    RETURN (plan -> 0 -> 'Plan' ->> 'Node Type') || coalesce(' on ' || (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Index Name'), '');
END $$;
SELECT len, t, cmix_plan(len, t) FROM (VALUES (3000, 0.1), (5000, 0.3), (8000, 0.5)) v(len, t);
-- 31 bits, the most: shingle keys and size keys still apart
DROP INDEX cmix_body;
CREATE INDEX cmix_body31 ON cmix USING gin (body containment_ops(key_bits = 31));
SELECT * FROM cmix_compare('31-bit keys');
