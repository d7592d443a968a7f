-- The minhash type: construction, I/O, similarity, operators, errors.
SET extra_float_digits = 0;

-- a sketch records how it was made
SELECT * FROM minhash_settings(minhash_sketch('a b c d e f'));
SELECT * FROM minhash_settings(minhash_sketch('a b c d e f', num_perm => 64, shingle_size => 3, unit => 'char', seed => 7));
SELECT * FROM minhash_settings(minhash_sketch(ARRAY['a','b']));
SELECT * FROM minhash_settings(minhash_sketch(ARRAY[1,2]::bigint[], 32, 9));
SELECT length(minhash_sketch('one two three four five six')::text) AS text_length;

-- text form, exactly (16 positions keep it short)
SELECT minhash_sketch('a b c d e f g h i j k l m n o p q r s t u v w x y z', 16, 1);
SELECT minhash_sketch('a b', 16);
SELECT minhash_sketch('', 16);

-- text and binary round trips are exact, with and without filled positions
CREATE TABLE docs (id int, doc text, mh minhash);
INSERT INTO docs
SELECT g, string_agg('w' || ((g * 7919 + i * 104729) % 997), ' '), NULL
FROM generate_series(1, 40) g, generate_series(1, g * 10) i
GROUP BY g;
INSERT INTO docs VALUES (41, '', NULL), (42, 'tiny', NULL);
UPDATE docs SET mh = minhash_sketch(doc);
SELECT count(*) AS sketches,
       count(*) FILTER (WHERE mh::text ~ ':[0-9a-f]+:[0-9a-f]+$') AS with_filled,
       count(*) FILTER (WHERE mh::text ~ ':empty$') AS empty,
       bool_and(mh::text::minhash::text = mh::text) AS text_round_trip
FROM docs;
\copy docs TO 'results/minhash.bin' WITH (FORMAT binary)
CREATE TABLE docs_copy (LIKE docs);
\copy docs_copy FROM 'results/minhash.bin' WITH (FORMAT binary)
SELECT count(*) AS rows,
       bool_and(c.mh::text = d.mh::text) AS binary_round_trip
FROM docs d JOIN docs_copy c USING (id);
SELECT length(minhash_send(minhash_sketch('a b c d e f', 16))) AS send_bytes_full,
       length(minhash_send(minhash_sketch('a b', 16))) AS send_bytes_filled,
       length(minhash_send(minhash_sketch('', 16))) AS send_bytes_empty;

-- similarity: identical documents give 1, different ones about their Jaccard
SELECT similarity(minhash_sketch(doc), minhash_sketch(doc)) FROM docs WHERE id = 30;
SELECT similarity(minhash_sketch('The Quick, brown fox!'), minhash_sketch('the quick brown FOX'));
SELECT round(similarity(a.mh, b.mh)::numeric, 2) AS unrelated
FROM (SELECT minhash_sketch(string_agg('a' || g, ' ')) mh FROM generate_series(1, 500) g) a,
     (SELECT minhash_sketch(string_agg('b' || g, ' ')) mh FROM generate_series(1, 500) g) b;
-- sets: the estimate follows the exact Jaccard of the arrays
SELECT abs(similarity(minhash_sketch(a, 1024), minhash_sketch(b, 1024)) - jaccard(a, b)) < 0.05 AS close
FROM (SELECT array_agg(g) a FROM generate_series(1, 3000) g) x,
     (SELECT array_agg(g) b FROM generate_series(1001, 4000) g) y;
SELECT abs(similarity(minhash_sketch(a, 1024), minhash_sketch(b, 1024)) - jaccard(a, b)) < 0.05 AS close
FROM (SELECT array_agg('t' || g) a FROM generate_series(1, 3000) g) x,
     (SELECT array_agg('t' || g) b FROM generate_series(2001, 5000) g) y;
-- Chinese with default arguments: a near copy scores high, another text near 0
SELECT similarity(minhash_sketch('今天天气很好，我们一起去公园散步，然后在湖边吃午饭，下午回家休息。'),
                  minhash_sketch('今天天气很好，我们一起去公园散步，然后在河边吃午饭，下午回家休息。')) > 0.5 AS cjk_near,
       similarity(minhash_sketch('今天天气很好，我们一起去公园散步，然后在湖边吃午饭，下午回家休息。'),
                  minhash_sketch('股票市场昨日大幅下跌，投资者对经济前景感到担忧，央行可能降息。')) < 0.1 AS cjk_far;
-- seeds give different but equally good sketches
SELECT minhash_sketch('a b c d e f g', 16, seed => 1)::text <> minhash_sketch('a b c d e f g', 16, seed => 2)::text AS seeds_differ;

-- empty documents: similar to nothing, themselves included
SELECT similarity(minhash_sketch(''), minhash_sketch('')) AS empty_empty,
       similarity(minhash_sketch(''), minhash_sketch('a b c d e f')) AS empty_doc,
       minhash_sketch('') % minhash_sketch('') AS empty_match,
       minhash_sketch('') <-> minhash_sketch('a') AS empty_distance;
-- documents shorter than the shingle size are one shingle of all their words
SELECT similarity(minhash_sketch('hello world'), minhash_sketch('Hello, World!')) AS short_same,
       similarity(minhash_sketch('hello world'), minhash_sketch('hello world again')) AS short_other;

-- % follows ndd.similarity_threshold; <-> is 1 - similarity
-- 40 words each, 30 shared: Jaccard 0.6
CREATE TABLE pair AS
SELECT minhash_sketch(string_agg('w' || g, ' '), shingle_size => 1) AS a,
       minhash_sketch(string_agg(CASE WHEN g <= 30 THEN 'w' ELSE 'x' END || g, ' '), shingle_size => 1) AS b
FROM generate_series(1, 40) g;
SELECT similarity(a, b), a <-> b AS distance, a <-> b = 1 - similarity(a, b) AS is_complement,
       a % b AS match FROM pair;
SHOW ndd.similarity_threshold;
SET ndd.similarity_threshold = 0.5;
SELECT a % b AS match_at_half FROM pair;
SET ndd.similarity_threshold = 0.99;
SELECT a % b AS match_at_099, a % a AS self_match FROM pair;
RESET ndd.similarity_threshold;
SET ndd.similarity_threshold = 1.5;
\echo :SQLSTATE
SET ndd.no_such_setting = 1;
\echo :SQLSTATE

-- NULL in, NULL out
SELECT minhash_sketch(NULL::text) IS NULL AS a,
       minhash_sketch('x', NULL) IS NULL AS b,
       minhash_sketch(NULL::text[]) IS NULL AS c,
       similarity(NULL, minhash_sketch('x')) IS NULL AS d,
       (NULL::minhash % minhash_sketch('x')) IS NULL AS e,
       (NULL::minhash <-> minhash_sketch('x')) IS NULL AS f,
       minhash_settings(NULL) IS NULL AS g;

-- sketches made differently cannot be compared
SELECT similarity(minhash_sketch('a b c'), minhash_sketch('a b c', num_perm => 64));
\echo :SQLSTATE
SELECT minhash_sketch('a b c') % minhash_sketch('a b c', shingle_size => 3);
\echo :SQLSTATE
SELECT minhash_sketch('a b c') <-> minhash_sketch('a b c', unit => 'char');
\echo :SQLSTATE
SELECT similarity(minhash_sketch('a b c'), minhash_sketch('a b c', seed => 1));
\echo :SQLSTATE
SELECT similarity(minhash_sketch(ARRAY['a']), minhash_sketch(ARRAY[1]::bigint[]));
\echo :SQLSTATE

-- arguments out of range
SELECT minhash_sketch('a', num_perm => 8);
\echo :SQLSTATE
SELECT minhash_sketch('a', num_perm => 1025);
\echo :SQLSTATE
SELECT minhash_sketch(ARRAY['a'], num_perm => 0);
\echo :SQLSTATE
SELECT minhash_sketch('a', shingle_size => 0);
\echo :SQLSTATE
SELECT minhash_sketch('a', shingle_size => 100);
\echo :SQLSTATE
SELECT minhash_sketch('a', unit => 'line');
\echo :SQLSTATE
SELECT minhash_sketch(ARRAY['a', NULL]);
\echo :SQLSTATE
SELECT minhash_sketch(ARRAY[1, NULL]::bigint[]);
\echo :SQLSTATE

-- malformed literals
SELECT 'garbage'::minhash;
\echo :SQLSTATE
SELECT ''::minhash;
\echo :SQLSTATE
SELECT 'v2,num_perm=16,unit=word,shingle_size=5,seed=0:empty'::minhash;
\echo :SQLSTATE
SELECT 'v1,num_perm=8,unit=word,shingle_size=5,seed=0:empty'::minhash;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=line,shingle_size=5,seed=0:empty'::minhash;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=0,seed=0:empty'::minhash;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=text,shingle_size=5,seed=0:empty'::minhash;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=x:empty'::minhash;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=99999999999:empty'::minhash;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=0:0011'::minhash;
\echo :SQLSTATE
SELECT ('v1,num_perm=16,unit=word,shingle_size=5,seed=0:' || repeat('0011223g', 16))::minhash;
\echo :SQLSTATE
SELECT ('v1,num_perm=16,unit=word,shingle_size=5,seed=0:' || repeat('00112233', 16) || 'ff')::minhash;
\echo :SQLSTATE
SELECT ('v1,num_perm=16,unit=word,shingle_size=5,seed=0:' || repeat('00112233', 16) || ':ffffffff')::minhash;
\echo :SQLSTATE
SELECT ('v1,num_perm=16,unit=word,shingle_size=5,seed=0:' || repeat('00112233', 16) || ':0000ffff')::minhash;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=0:emptyish'::minhash;
\echo :SQLSTATE
SELECT ('v1,num_perm=16,unit=word,shingle_size=5,seed=0:' || repeat('00112233', 16) || ':00000001')::minhash;
\echo :SQLSTATE
