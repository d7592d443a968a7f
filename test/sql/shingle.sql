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
