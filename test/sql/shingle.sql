-- Text to shingles: normalisation, tokens, HTML, CJK, and exact jaccard().
SET extra_float_digits = 0;

-- words: case folding beyond ASCII, punctuation and whitespace are separators
SELECT show_shingles('Hello,   World!  hello... WORLD?', 1);
SELECT show_shingles('ΣΊΣΥΦΟΣ σίσυφος Straße STRASSE Ǆemal', 1);
SELECT show_shingles('The quick brown fox jumps', 2);
-- composed and decomposed accents agree (NFC); compatibility forms are folded (NFKC)
SELECT show_shingles(E'caf\u00e9 cafe\u0301 CAF\u00c9', 1);
SELECT show_shingles('ＦＵＬＬ ｗｉｄｔｈ ﬁsh ① x²', 1);
-- characters that are not letters or digits never make a token
SELECT show_shingles('-- ... !!! ???', 1);

-- HTML stripping: tags, comments, scripts and styles go; entities are decoded
SELECT show_shingles('<p>Fish &amp; <b>chips</b></p><script>var x = 1;</script><!-- no --> &#72;ot &#x43;hips', 1, strip_html => true);
SELECT show_shingles('<style>p { color: red }</style><p>a &lt; b</p>', 1, strip_html => true);
-- without the option the markup is text
SELECT show_shingles('<p>Fish &amp; chips</p>', 1);
-- a lone '<' is text, not a tag
SELECT show_shingles('1 < 2 and 3 > 2', 1, strip_html => true);
-- a numeric entity is digits only, up to U+10FFFF; anything else stays text
SELECT show_shingles('&#72;i &#X4a;o &# 65; &#+66; &#x0x44; &#x; &#1114112; &#xD800;', 1, strip_html => true);

-- Chinese and Japanese: every character is a word, so defaults work
SELECT show_shingles('我们今天去北京。', 3);
SELECT show_shingles('日本語のテキスト、です', 2);
SELECT array_length(show_shingles('我们今天去北京看到了长城'), 1) AS cjk_default_shingles;
-- mixed scripts split at the script boundary
SELECT show_shingles('iPhone手机 Hangul 한국어', 1);
-- character mode: character k-grams with one space between words
SELECT show_shingles('Hi, you!', 3, 'char');
SELECT show_shingles('北京 abc', 2, 'char');

-- short documents: one shingle of all their tokens; empty ones: none
SELECT show_shingles('just three words');
SELECT show_shingles('');
SELECT show_shingles('  ,.;  ');
SELECT show_shingles(NULL);

-- exact Jaccard, hand-checked: {a..f} and {a..e,g} share 5 of 7
SELECT jaccard('a b c d e f', 'a b c d e g', 1);
-- 2-shingles {ab,bc,cd} and {ab,bc,ce}: 2 of 4
SELECT jaccard('a b c d', 'a b c e', 2);
SELECT jaccard('Same text, same TEXT.', 'same text same text');
SELECT jaccard('a b c d e f g', 'h i j k l m n');
-- options reach jaccard too
SELECT jaccard('<b>bold</b> move', 'bold move', 2, strip_html => true);
SELECT jaccard('<b>bold</b> move', 'bold move', 2);
SELECT jaccard('night', 'nacht', 2, 'char');
-- empty documents resemble nothing, not even each other
SELECT jaccard('', ''), jaccard('', 'a'), jaccard('a', '');
SELECT jaccard(NULL, 'a'), jaccard('a', NULL);
-- sets given as arrays
SELECT jaccard(ARRAY['x','y','z'], ARRAY['y','z','w']);
SELECT jaccard(ARRAY[1,2,3,4]::bigint[], ARRAY[3,4,5,6]::bigint[]);
SELECT jaccard(ARRAY[1,1,2]::bigint[], ARRAY[2,1]::bigint[]);
SELECT jaccard('{}'::text[], '{}'::text[]);

-- CJK near and far pairs with default arguments
SELECT round(jaccard('今天天气很好，我们一起去公园散步，然后在湖边吃午饭，下午回家休息。',
                     '今天天气很好，我们一起去公园散步，然后在河边吃午饭，下午回家休息。')::numeric, 3) AS cjk_near,
       round(jaccard('今天天气很好，我们一起去公园散步，然后在湖边吃午饭，下午回家休息。',
                     '股票市场昨日大幅下跌，投资者对经济前景感到担忧，央行可能降息。')::numeric, 3) AS cjk_far;
SELECT round(jaccard('東京の天気は晴れです。明日は雨が降るでしょう。',
                     '東京の天気は晴れです。明日は雪が降るでしょう。')::numeric, 3) AS ja_near;

-- Two ways through a document: the shingle loop reads ASCII words 64 bytes
-- at a time and leaves everything else to the tokenizer.  Each document below
-- is compared with itself with every ASCII separator turned into a no-break
-- space (a separator too), which leaves no ASCII word to the fast path: the
-- tokens, so every sketch, must not change.  The documents mix ASCII words
-- of 1 to 70 bytes in both cases with other scripts, compatibility
-- characters and combining marks, and runs of separators as long as a block.
CREATE TEMP TABLE path_words (kind text, n int, w text);
INSERT INTO path_words
SELECT 'ascii', n - 1, w FROM unnest(ARRAY[
    'a', 'I', 'to', 'The', 'WORD', 'words', 'Quick', 'brown99', 'x1y2z3', '2024',
    'abcdefgh', 'ABCDEFGHI', 'fifteenLetters1', 'sixteenLetters12',
    'seventeenLetters1', repeat('Ab', 31), repeat('c', 63), repeat('D', 64),
    repeat('e', 65), repeat('F9', 35)]) WITH ORDINALITY AS x(w, n)
UNION ALL
SELECT 'other', n - 1, w FROM unnest(ARRAY[
    'café', 'CAFÉ', E'cafe\u0301', 'Straße', 'ΣΊΣΥΦΟΣ', 'naïve', 'ｆｕｌｌ', 'ﬁsh',
    '北京', 'テキスト', 'x²', 'aéb', E'\u0301x', 'über' || repeat('X', 70)]) WITH ORDINALITY AS x(w, n)
UNION ALL
SELECT 'sep', n - 1, w FROM unnest(ARRAY[
    ' ', ' ', ' ', ', ', '. ', E'\n', E'\t', ' -- ', '!!', '(', ') ',
    repeat(' ', 63), repeat('.', 64), repeat(' ', 70)]) WITH ORDINALITY AS x(w, n)
UNION ALL
SELECT 'other sep', n - 1, w FROM unnest(ARRAY[
    E'\u00a0', '’', ' — ', ' © ', '、']) WITH ORDINALITY AS x(w, n);
CREATE TEMP TABLE path_docs AS
SELECT i, string_agg(w.w || s.w, '' ORDER BY j) AS doc
FROM generate_series(1, 150) AS i,
     generate_series(1, 1 + i * 7 % 400) AS j,
     LATERAL (SELECT decode(md5(i || '.' || j), 'hex') AS h) AS r,
     LATERAL (SELECT w FROM path_words
              WHERE kind = CASE WHEN get_byte(h, 2) % 6 = 0 THEN 'other' ELSE 'ascii' END
                AND n = get_byte(h, 0) % CASE WHEN get_byte(h, 2) % 6 = 0 THEN 14 ELSE 20 END) AS w,
     LATERAL (SELECT w FROM path_words
              WHERE kind = CASE WHEN get_byte(h, 3) % 10 = 0 THEN 'other sep' ELSE 'sep' END
                AND n = get_byte(h, 1) % CASE WHEN get_byte(h, 3) % 10 = 0 THEN 5 ELSE 14 END) AS s
GROUP BY i;
CREATE FUNCTION pg_temp.no_ascii_separators(doc text) RETURNS text
LANGUAGE sql AS $$ SELECT regexp_replace(doc, '[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]', E'\u00a0', 'g') $$;
SELECT count(*) AS docs, sum(octet_length(doc)) > 250000 AS long_enough,
       count(*) FILTER (WHERE doc ~ '[a-z0-9]{60}') > 25 AS long_words,
       count(*) FILTER (WHERE minhash_sketch(doc)::text = minhash_sketch(g)::text) AS word,
       count(*) FILTER (WHERE minhash_sketch(doc, 64, 1, seed => 9)::text = minhash_sketch(g, 64, 1, seed => 9)::text) AS word_1,
       count(*) FILTER (WHERE minhash_sketch(doc, unit => 'char')::text = minhash_sketch(g, unit => 'char')::text) AS char,
       count(*) FILTER (WHERE minhash_sketch(doc, 64, 2, 'char', seed => 3)::text = minhash_sketch(g, 64, 2, 'char', seed => 3)::text) AS char_2,
       count(*) FILTER (WHERE simhash(doc) = simhash(g)) AS simhash,
       count(*) FILTER (WHERE simhash(doc, unit => 'char') = simhash(g, unit => 'char')) AS simhash_char,
       count(*) FILTER (WHERE jaccard(doc, g) = 1 AND jaccard(doc, g, 3, 'char') = 1) AS jaccard
FROM (SELECT doc, pg_temp.no_ascii_separators(doc) AS g FROM path_docs) AS d;
-- and the shingles the tokenizer shows are those the fast path hashes
SELECT count(*) FILTER (WHERE jaccard(doc, array_to_string(show_shingles(doc, 1), ' '), 1) = 1) AS shown
FROM path_docs;

-- bad arguments
SELECT show_shingles('a', 0);
\echo :SQLSTATE
SELECT show_shingles('a', 33);
\echo :SQLSTATE
SELECT jaccard('a', 'b', 5, 'sentence');
\echo :SQLSTATE
SELECT jaccard(ARRAY['a', NULL], ARRAY['a']);
\echo :SQLSTATE
SELECT jaccard(ARRAY[1, 2]::bigint[], ARRAY[2, NULL]::bigint[]);
\echo :SQLSTATE

-- exact duplicates: ndd_fingerprint hashes the normalised words
SELECT ndd_fingerprint('Hello, World!') = ndd_fingerprint('hello   world') AS same_words,
       ndd_fingerprint('hello world') <> ndd_fingerprint('helloworld') AS boundaries_count,
       ndd_fingerprint('ab c') <> ndd_fingerprint('a bc') AS split_counts,
       ndd_fingerprint('<p>Hello</p> world', strip_html => true) = ndd_fingerprint('hello world') AS markup_stripped,
       ndd_fingerprint('<p>Hello</p> world') <> ndd_fingerprint('hello world') AS markup_kept,
       ndd_fingerprint('') = ndd_fingerprint(' ... ') AS empty_texts_alike,
       ndd_fingerprint(NULL) IS NULL AS null_in;
CREATE TABLE fingerprinted (id int, body text);
CREATE UNIQUE INDEX ON fingerprinted (ndd_fingerprint(body));
INSERT INTO fingerprinted VALUES (1, 'The same text.');
INSERT INTO fingerprinted VALUES (2, 'the SAME text');
\echo :SQLSTATE
DROP TABLE fingerprinted;

-- shingle sets: a document shingled once, compared with many; their
-- Jaccard is jaccard() of the documents, for every unit, size and option
-- (680 pairs of documents drawn from a 40-word vocabulary by a hash of
-- integers, so that resemblance ranges from 0 to 1)
CREATE TEMP TABLE set_docs AS
SELECT d, (SELECT string_agg('w' || (hashint8extended(d * 1000 + w, 7) % (CASE WHEN d % 3 = 0 THEN 6 ELSE 40 END)), ' ')
           FROM generate_series(1, 20 + d % 30) w) AS body
FROM generate_series(1, 60) d;
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE ndd_shingle_set_jaccard(ndd_shingle_set(a.body, s.size, s.unit, s.html),
                                                      ndd_shingle_set(b.body, s.size, s.unit, s.html))
                              = jaccard(a.body, b.body, s.size, s.unit, s.html)) AS equal,
       count(*) FILTER (WHERE jaccard(a.body, b.body, s.size, s.unit, s.html) BETWEEN 0.01 AND 0.99) AS between_0_and_1
FROM set_docs a JOIN set_docs b ON b.d IN (a.d + 1, a.d + 3, a.d + 6),
     (VALUES (1, 'word', false), (3, 'word', false), (5, 'word', true), (4, 'char', false)) s(size, unit, html);
-- the examples of docs/guide-shingles.md, "Exact resemblance"
SELECT ndd_shingle_set_jaccard(ndd_shingle_set('a b c d e f', 1),
                               ndd_shingle_set('a b c d e g', 1));
SELECT cardinality(ndd_shingle_set('the quick brown fox jumps', 2));
-- one hash per distinct shingle, sorted as unsigned
SELECT bool_and(cardinality(ndd_shingle_set(body, 2)) = cardinality(show_shingles(body, 2))) AS one_per_shingle
FROM set_docs;
-- longer documents (hundreds to thousands of shingles, sorted in buckets):
-- the sets are strictly increasing as unsigned, and their Jaccard equals
-- the one SQL counts from show_shingles() with set operations
CREATE TEMP TABLE long_docs AS
SELECT d, (SELECT string_agg('w' || (hashint8extended(d / 2 * 10000 + w + (d % 2) * (w / 97), 9) % 5000), ' ')
           FROM generate_series(1, 100 + d * 97) w) AS body
FROM generate_series(1, 24) d;
SELECT bool_and(ok) AS increasing FROM (
  SELECT (SELECT bool_and(CASE WHEN s.h < 0 THEN s.h::numeric + 18446744073709551616 ELSE s.h END
                          > CASE WHEN s.p < 0 THEN s.p::numeric + 18446744073709551616 ELSE s.p END)
          FROM (SELECT h, lag(h) OVER (ORDER BY o) AS p
                FROM unnest(ndd_shingle_set(body, 3)) WITH ORDINALITY u(h, o)) s
          WHERE s.p IS NOT NULL) AS ok
  FROM long_docs) x;
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE ndd_shingle_set_jaccard(ndd_shingle_set(a.body, 3), ndd_shingle_set(b.body, 3))
           = (SELECT count(*) FROM (SELECT unnest(show_shingles(a.body, 3)) INTERSECT SELECT unnest(show_shingles(b.body, 3))) i)::float8
           / (SELECT count(*) FROM (SELECT unnest(show_shingles(a.body, 3)) UNION SELECT unnest(show_shingles(b.body, 3))) u)) AS equal,
       count(*) FILTER (WHERE ndd_shingle_set_jaccard(ndd_shingle_set(a.body, 3), ndd_shingle_set(b.body, 3)) > 0.3) AS similar
FROM long_docs a JOIN long_docs b ON b.d IN (a.d + 1, a.d + 2);
DROP TABLE long_docs;
-- a document without shingles has the empty set, which resembles nothing,
-- as in jaccard(); NULL in, NULL out
SELECT ndd_shingle_set(''), ndd_shingle_set_jaccard(ndd_shingle_set(''), ndd_shingle_set('')),
       ndd_shingle_set_jaccard(ndd_shingle_set('a'), ndd_shingle_set('a')),
       ndd_shingle_set(NULL) IS NULL AS null_in, ndd_shingle_set_jaccard(NULL, '{}') IS NULL AS null_set;
-- what is not a set from ndd_shingle_set is refused
SELECT ndd_shingle_set_jaccard('{2,1}', '{1}');
\echo :SQLSTATE
SELECT ndd_shingle_set_jaccard('{1,1}', '{1}');
\echo :SQLSTATE
SELECT ndd_shingle_set_jaccard('{1}', '{1,NULL}');
\echo :SQLSTATE
SELECT ndd_shingle_set_jaccard('{{1,2},{3,4}}', '{1}');
\echo :SQLSTATE
-- sorted as unsigned: a negative bigint is a large hash
SELECT ndd_shingle_set_jaccard('{1,-1}', '{-1}');
DROP TABLE set_docs;

-- jaccard() counts in hash sets (shingle_set.c), ndd_shingle_set_jaccard()
-- merges sorted sets: the same value to the bit, for texts of words from md5
-- in families of four that share most words, with empty texts, texts of
-- separators only and texts shorter than a shingle, in both units
CREATE TEMP TABLE md5_docs AS
SELECT d, CASE WHEN d % 13 = 0 THEN ' ,.; -- '
          ELSE (SELECT coalesce(string_agg(substr(md5((CASE WHEN (w + d) % 23 = 0 THEN d * 1000 + w
                                                             ELSE d / 4 * 1000 + w % 90 END)::text), 1, 1 + w % 3), ' '), '')
                FROM generate_series(1, CASE WHEN d % 9 = 0 THEN d % 4 ELSE 30 + d / 4 * 37 % 200 + d % 4 * 5 END) w) END AS body
FROM generate_series(1, 90) d;
SELECT count(*) FILTER (WHERE body = '') AS empty, count(*) FILTER (WHERE body !~ '[0-9a-f]') AS no_words,
       count(*) FILTER (WHERE body <> '' AND array_length(regexp_split_to_array(body, ' '), 1) < 5) AS under_5_words
FROM md5_docs;
SELECT s.size, s.unit, s.html, count(*) AS pairs,
       count(*) FILTER (WHERE jaccard(a.body, b.body, s.size, s.unit, s.html)
                              = ndd_shingle_set_jaccard(ndd_shingle_set(a.body, s.size, s.unit, s.html),
                                                        ndd_shingle_set(b.body, s.size, s.unit, s.html))) AS equal,
       count(*) FILTER (WHERE jaccard(a.body, b.body, s.size, s.unit, s.html) = 0) AS zero,
       count(*) FILTER (WHERE jaccard(a.body, b.body, s.size, s.unit, s.html) BETWEEN 0.3 AND 0.99) AS between_03_and_1
FROM md5_docs a JOIN md5_docs b ON b.d IN (a.d, a.d + 1, a.d + 2, a.d + 3, a.d + 9),
     (VALUES (5, 'word', false), (1, 'word', false), (3, 'word', true), (3, 'char', false), (5, 'char', false)) s(size, unit, html)
GROUP BY s.size, s.unit, s.html ORDER BY s.unit, s.size;
-- arrays: the Jaccard of their distinct elements, as SQL's set operations count it
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE jaccard(regexp_split_to_array(a.body, ' '), regexp_split_to_array(b.body, ' '))
           = (SELECT count(*) FROM (SELECT unnest(regexp_split_to_array(a.body, ' ')) INTERSECT SELECT unnest(regexp_split_to_array(b.body, ' '))) i)::float8
           / (SELECT count(*) FROM (SELECT unnest(regexp_split_to_array(a.body, ' ')) UNION SELECT unnest(regexp_split_to_array(b.body, ' '))) u)) AS text_equal,
       count(*) FILTER (WHERE jaccard(ARRAY(SELECT length(x)::bigint * 1000 + ascii(x) FROM unnest(regexp_split_to_array(a.body, ' ')) x),
                                      ARRAY(SELECT length(x)::bigint * 1000 + ascii(x) FROM unnest(regexp_split_to_array(b.body, ' ')) x))
           = (SELECT count(*) FROM (SELECT length(x)::bigint * 1000 + ascii(x) FROM unnest(regexp_split_to_array(a.body, ' ')) x
                                    INTERSECT SELECT length(x)::bigint * 1000 + ascii(x) FROM unnest(regexp_split_to_array(b.body, ' ')) x) i)::float8
           / (SELECT count(*) FROM (SELECT length(x)::bigint * 1000 + ascii(x) FROM unnest(regexp_split_to_array(a.body, ' ')) x
                                    UNION SELECT length(x)::bigint * 1000 + ascii(x) FROM unnest(regexp_split_to_array(b.body, ' ')) x) u)) AS bigint_equal
FROM md5_docs a JOIN md5_docs b ON b.d IN (a.d + 1, a.d + 4)
WHERE a.body ~ '[0-9a-f]' AND b.body ~ '[0-9a-f]';
-- a text is itself: 1 when it has a shingle; the empty set resembles nothing
SELECT count(*) FILTER (WHERE jaccard(body, body) = 1) AS one, count(*) FILTER (WHERE jaccard(body, body) = 0) AS zero,
       count(*) FILTER (WHERE jaccard(body, '') = 0 AND jaccard('', body, 3, 'char') = 0) AS against_empty
FROM md5_docs;
DROP TABLE md5_docs;
