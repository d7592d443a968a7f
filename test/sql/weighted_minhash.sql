-- Weighted minhash: similarity() estimates weighted Jaccard sum(min)/sum(max)
-- within statistical bounds; weighted_jaccard() is exact; a weighted sketch
-- goes wherever a minhash goes (index, discovery, guard, union) and nowhere
-- it would give a wrong answer.
SET extra_float_digits = 0;
\set SHOW_CONTEXT never

-------------------------------------------------------------------------
-- (a) Exact weighted Jaccard, NULL and empty inputs
-------------------------------------------------------------------------
-- {a:1, b:2, c:3} and {a:2, b:2, d:1}: min 1+2 = 3, max 2+2+3+1 = 8
SELECT weighted_jaccard(ARRAY['a','b','c'], ARRAY[1,2,3]::float8[],
                        ARRAY['a','b','d'], ARRAY[2,2,1]::float8[]);
-- a repeated feature weighs the sum of its weights; zero weights drop out
SELECT weighted_jaccard(ARRAY['a','a','b'], ARRAY[1,2,0]::float8[], ARRAY['a'], ARRAY[3]::float8[]);
SELECT weighted_jaccard(ARRAY[1,2]::bigint[], ARRAY[1,1]::float8[], ARRAY[2,3]::bigint[], ARRAY[1,1]::float8[]);
-- documents: each word weighs its count ("to" twice against once)
SELECT weighted_jaccard('to be or not to be', 'to be or not', shingle_size => 1);
SELECT weighted_jaccard('to be or not to be', 'to be or not');
-- empty sets: 0, as jaccard() of empty documents
SELECT weighted_jaccard('{}'::text[], '{}'::float8[], '{}'::text[], '{}'::float8[]);
SELECT weighted_jaccard('', 'x');
-- NULL in, NULL out (STRICT)
SELECT weighted_jaccard(NULL::text[], NULL, ARRAY['a'], ARRAY[1]::float8[]) IS NULL AS null_in_null_out;
SELECT weighted_minhash_sketch(NULL::text[], ARRAY[1]::float8[]) IS NULL AS null_sketch;
-- an empty set sketches as empty; it resembles nothing
SELECT weighted_minhash_sketch('{}'::text[], '{}'::float8[], num_perm => 16);
SELECT weighted_minhash_sketch(ARRAY['a'], ARRAY[0]::float8[], num_perm => 16);
SELECT similarity(weighted_minhash_sketch('', num_perm => 16), weighted_minhash_sketch('', num_perm => 16));

-------------------------------------------------------------------------
-- (b) Errors, with their SQLSTATEs
-------------------------------------------------------------------------
SELECT weighted_minhash_sketch(ARRAY['a','b'], ARRAY[1]::float8[]);
\echo :SQLSTATE
SELECT weighted_minhash_sketch(ARRAY['a',NULL], ARRAY[1,1]::float8[]);
\echo :SQLSTATE
SELECT weighted_minhash_sketch(ARRAY['a','b'], ARRAY[1,NULL]::float8[]);
\echo :SQLSTATE
SELECT weighted_minhash_sketch(ARRAY['a','b'], ARRAY[1,-1]::float8[]);
\echo :SQLSTATE
SELECT weighted_minhash_sketch(ARRAY['a'], ARRAY['NaN']::float8[]);
\echo :SQLSTATE
SELECT weighted_minhash_sketch(ARRAY['a'], ARRAY['Infinity']::float8[]);
\echo :SQLSTATE
SELECT weighted_minhash_sketch(ARRAY['a'], ARRAY[1e-13]::float8[]);
\echo :SQLSTATE
SELECT weighted_minhash_sketch(ARRAY['a'], ARRAY[1]::float8[], num_perm => 8);
\echo :SQLSTATE
SELECT weighted_minhash_sketch('text', unit => 'sentence');
\echo :SQLSTATE
SELECT weighted_jaccard(ARRAY['a'], ARRAY[1]::float8[], ARRAY['a'], ARRAY[1,2]::float8[]);
\echo :SQLSTATE
-- features and weights pair up by position: arrays of more than one
-- dimension are refused, features or weights, in every array form
SELECT weighted_minhash_sketch(array[['a','b'],['c','d']], array[1,2,3,4]);
\echo :SQLSTATE
SELECT weighted_minhash_sketch(ARRAY['a','b','c','d'], ARRAY[[1,2],[3,4]]::float8[]);
\echo :SQLSTATE
SELECT weighted_minhash_sketch(ARRAY[[1,2]]::bigint[], ARRAY[1,2]::float8[]);
\echo :SQLSTATE
SELECT weighted_minhash_sketch(ARRAY[1,2]::bigint[], ARRAY[[1],[2]]::float8[]);
\echo :SQLSTATE
SELECT weighted_jaccard(ARRAY[['a'],['b']], ARRAY[1,2]::float8[], ARRAY['a'], ARRAY[1]::float8[]);
\echo :SQLSTATE
SELECT weighted_jaccard(ARRAY['a'], ARRAY[1]::float8[], ARRAY['a','b'], ARRAY[[1,2]]::float8[]);
\echo :SQLSTATE
SELECT weighted_jaccard(ARRAY[[1,2]]::bigint[], ARRAY[1,2]::float8[], ARRAY[1]::bigint[], ARRAY[1]::float8[]);
\echo :SQLSTATE
SELECT weighted_jaccard(ARRAY[1]::bigint[], ARRAY[1]::float8[], ARRAY[1,2]::bigint[], ARRAY[[[1]],[[2]]]::float8[]);
\echo :SQLSTATE
-- one dimension with any lower bound, or none, is fine
SELECT weighted_minhash_sketch('[5:6]={a,b}'::text[], '[0:1]={1,1}'::float8[], num_perm => 16)::text
     = weighted_minhash_sketch(ARRAY['a','b'], ARRAY[1,1]::float8[], num_perm => 16)::text AS lower_bounds_ignored;
-- a weighted sketch is not compared with a plain one
SELECT similarity(weighted_minhash_sketch('a b c'), minhash_sketch('a b c', shingle_size => 1));
\echo :SQLSTATE

-------------------------------------------------------------------------
-- (c) What a sketch is: its settings, a text form that round-trips,
--     order-free input, repeated features summed, union = larger weights
-------------------------------------------------------------------------
SELECT * FROM minhash_settings(weighted_minhash_sketch('a b c'));
SELECT * FROM minhash_settings(weighted_minhash_sketch(ARRAY[1]::bigint[], ARRAY[1]::float8[], num_perm => 64, seed => 7));
SELECT * FROM minhash_settings(weighted_minhash_sketch('abc', shingle_size => 3, unit => 'char'));
CREATE TABLE wio (id int, s minhash);
INSERT INTO wio VALUES (1, weighted_minhash_sketch(ARRAY['x','y','z'], ARRAY[0.5, 2, 7]::float8[])),
                       (2, weighted_minhash_sketch('to be or not to be', num_perm => 16)),
                       (3, weighted_minhash_sketch('{}'::bigint[], '{}'::float8[]));
\copy wio TO 'results/weighted_minhash.bin' WITH (FORMAT binary)
CREATE TABLE wio_copy (LIKE wio);
\copy wio_copy FROM 'results/weighted_minhash.bin' WITH (FORMAT binary)
SELECT bool_and(w.s::text::minhash::text = w.s::text) AS text_round_trip,
       bool_and(c.s::text = w.s::text) AS binary_round_trip,
       count(*) AS sketches
FROM wio w JOIN wio_copy c USING (id);
CREATE FUNCTION ws(f text[], w float8[]) RETURNS minhash LANGUAGE sql IMMUTABLE
    AS $$ SELECT weighted_minhash_sketch(f, w) $$;
SELECT ws(ARRAY['x','y','z'], ARRAY[0.5, 2, 7])::text = ws(ARRAY['z','x','y'], ARRAY[7, 0.5, 2])::text AS order_free,
       ws(ARRAY['x','x','y'], ARRAY[1, 2, 5])::text = ws(ARRAY['x','y'], ARRAY[3, 5])::text AS repeats_summed,
       ws(ARRAY['x','y'], ARRAY[3, 5])::text = ws(ARRAY['x','y','q'], ARRAY[3, 5, 0])::text AS zero_weight_ignored;
-- the union of two weighted sketches is the sketch of the larger weights,
-- position for position (ranks are stored so that the least is the union's)
SELECT (SELECT minhash_union(s) FROM (VALUES (ws(ARRAY['a','b','c'], ARRAY[1, 5, 2])),
                                             (ws(ARRAY['b','c','d'], ARRAY[2, 3, 4]))) v(s))::text
     = ws(ARRAY['a','b','c','d'], ARRAY[1, 5, 3, 4])::text AS union_is_max;
-- a document's sketch equals the sketch of its words with their counts,
-- when both hash the same strings: checked through the exact similarity
SELECT weighted_jaccard('the cat and the hat and the bat', 'the cat and the bat',
                        shingle_size => 1) AS by_document,
       weighted_jaccard(ARRAY['the','cat','and','hat','bat'], ARRAY[3,1,2,1,1]::float8[],
                        ARRAY['the','cat','and','bat'], ARRAY[2,1,1,1]::float8[]) AS by_counts;

-------------------------------------------------------------------------
-- (d) Accuracy: 2,000 independent pairs across the whole range.  Pair g
--     has its own features (so the pairs' errors are independent): 60 of
--     weights 1 to 20; its second set drops 1 + 6 L of them, reweighs
--     about 2 + 10 L percent and adds 3 L new ones, for L = g % 10.  Per
--     band of exact similarity, the mean error lies within 4 standard
--     errors of 0, and the spread is binomial's.
-------------------------------------------------------------------------
CREATE TABLE wpairs AS
SELECT g,
       array_agg(g * 1000 + f ORDER BY f) FILTER (WHERE f <= 60) AS fa,
       array_agg((1 + abs(hashint8extended(g * 1000 + f, 1)) % 20)::float8 ORDER BY f)
           FILTER (WHERE f <= 60) AS wa,
       array_agg(g * 1000 + f ORDER BY f) FILTER (WHERE f > 1 + 6 * (g % 10) AND f <= 60 + 3 * (g % 10)) AS fb,
       array_agg(CASE WHEN f <= 60 AND abs(hashint8extended(g * 1000 + f, 2)) % 100 >= 2 + 10 * (g % 10)
                      THEN (1 + abs(hashint8extended(g * 1000 + f, 1)) % 20)
                      ELSE (1 + abs(hashint8extended(g * 1000 + f, 3)) % 20) END::float8 ORDER BY f)
           FILTER (WHERE f > 1 + 6 * (g % 10) AND f <= 60 + 3 * (g % 10)) AS wb
FROM generate_series(1, 2000) g, generate_series(1, 100) f
GROUP BY g;
CREATE TABLE westimates AS
SELECT g, weighted_jaccard(fa, wa, fb, wb) AS j,
       similarity(weighted_minhash_sketch(fa, wa), weighted_minhash_sketch(fb, wb)) AS s
FROM wpairs;
SELECT band, count(*) > 50 AS enough_pairs,
       abs(avg(s - j)) <= 4 * sqrt(sum(j * (1 - j) / 128)) / count(*) AS unbiased,
       stddev(s - j) / sqrt(avg(j * (1 - j) / 128)) BETWEEN 0.85 AND 1.15 AS binomial_spread
FROM (SELECT *, width_bucket(j, 0, 1.0000001, 4) AS band FROM westimates) e
GROUP BY band ORDER BY band;
-- identical sets agree everywhere; disjoint ones nowhere
SELECT min(similarity(weighted_minhash_sketch(fa, wa), weighted_minhash_sketch(fa, wa))) AS identical,
       max(similarity(weighted_minhash_sketch(fa, wa),
                      weighted_minhash_sketch(ARRAY(SELECT x + 500 FROM unnest(fa) x), wa))) AS disjoint
FROM wpairs WHERE g <= 200;
-- scaling both sets leaves weighted Jaccard unchanged; the estimate follows
SELECT abs(avg(similarity(weighted_minhash_sketch(fa, ARRAY(SELECT x * 1000 FROM unnest(wa) x)),
                          weighted_minhash_sketch(fb, ARRAY(SELECT x * 1000 FROM unnest(wb) x))) - j))
       <= 4 * sqrt(sum(j * (1 - j) / 128)) / count(*) AS scaled_unbiased
FROM wpairs JOIN westimates USING (g) WHERE g <= 1000;

-------------------------------------------------------------------------
-- (e) Through the same entry points as minhash: an index whose scans
--     equal a sequential scan, discovery, top-k, and the insert guard
-------------------------------------------------------------------------
CREATE TABLE wdocs (id bigint PRIMARY KEY, features bigint[], weights float8[], sketch minhash, label text);
INSERT INTO wdocs (id, features, weights, label)
SELECT g, fa, wa, 'a' FROM wpairs WHERE g <= 600
UNION ALL
SELECT 10000 + g, fb, wb, 'b' FROM wpairs WHERE g <= 600;
UPDATE wdocs SET sketch = weighted_minhash_sketch(features, weights);
CREATE INDEX wdocs_sketch ON wdocs USING gin (sketch minhash_ops(unit = 'weighted_bigint', threshold = 0.5));
ANALYZE wdocs;
CREATE TABLE wqueries AS SELECT id, sketch FROM wdocs WHERE id % 7 = 0;
SET ndd.similarity_threshold = 0.5;
SET enable_seqscan = off;
CREATE TABLE wby_index AS
SELECT q.id AS q, d.id AS d FROM wqueries q JOIN LATERAL
    (SELECT d.id FROM wdocs d WHERE d.sketch % q.sketch) d ON true;
RESET enable_seqscan;
SET enable_indexscan = off; SET enable_bitmapscan = off;
SET ndd.lookup_scan = off;
CREATE TABLE wby_seqscan AS
SELECT q.id AS q, d.id AS d FROM wqueries q JOIN wdocs d ON similarity(d.sketch, q.sketch) >= 0.5;
RESET enable_indexscan; RESET enable_bitmapscan; RESET ndd.lookup_scan;
SELECT (SELECT count(*) FROM wby_seqscan) > 100 AS many_matches,
       NOT EXISTS (SELECT * FROM wby_index EXCEPT SELECT * FROM wby_seqscan)
   AND NOT EXISTS (SELECT * FROM wby_seqscan EXCEPT SELECT * FROM wby_index) AS index_equals_seqscan;
-- discovery: every pair whose estimate reaches 0.6, no other
CREATE TABLE wfound AS SELECT id_a, id_b, similarity FROM near_duplicate_pairs('wdocs', 'sketch', 'id', 0.6);
CREATE TABLE wbrute AS
SELECT a.id AS id_a, b.id AS id_b, similarity(a.sketch, b.sketch) AS similarity
FROM wdocs a JOIN wdocs b ON a.id < b.id WHERE similarity(a.sketch, b.sketch) >= 0.6;
SELECT (SELECT count(*) FROM wbrute) > 100 AS many_pairs,
       NOT EXISTS (SELECT * FROM wfound EXCEPT SELECT * FROM wbrute)
   AND NOT EXISTS (SELECT * FROM wbrute EXCEPT SELECT * FROM wfound) AS pairs_exact;
-- top-k equals the sequential ranking
SELECT array_agg(t.id ORDER BY t.similarity DESC, t.id) =
       (SELECT array_agg(id ORDER BY s DESC, id) FROM
           (SELECT id, similarity(sketch, (SELECT sketch FROM wdocs WHERE id = 7)) s
            FROM wdocs ORDER BY 2 DESC, 1 LIMIT 5) x) AS top_k_exact
FROM near_duplicate_top_k('wdocs', 'sketch', 'id', (SELECT sketch FROM wdocs WHERE id = 7), 5) t;
-- verification compares texts as sets: it refuses weighted sketches
SELECT * FROM near_duplicate_pairs('wdocs', 'sketch', 'id', 0.6, verify_column => 'label');
\echo :SQLSTATE
-- the guard turns away a near-duplicate weighted set, naming the row
CREATE TABLE wguarded (id bigint PRIMARY KEY, sketch minhash);
CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON wguarded
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
INSERT INTO wguarded VALUES (1, ws(ARRAY['red','green','blue'], ARRAY[10, 5, 1]));
INSERT INTO wguarded VALUES (2, ws(ARRAY['red','green','blue'], ARRAY[10, 5, 1.2]));
\echo :SQLSTATE
INSERT INTO wguarded VALUES (3, ws(ARRAY['red','green','blue'], ARRAY[1, 5, 10]));
SELECT id FROM wguarded ORDER BY id;
