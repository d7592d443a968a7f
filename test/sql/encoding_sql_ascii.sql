-- ndd in a SQL_ASCII database (scripts/test.sh runs this file alone, with
-- --encoding=SQL_ASCII --no-locale).  Text is read as UTF-8 without any
-- conversion, so every value reaches the tokenizer as it is stored, not
-- NUL-terminated: nothing may read past its end.  Bytes that are not UTF-8
-- are an error.  This file is ASCII: other bytes are escapes.
SET extra_float_digits = 0;
SELECT getdatabaseencoding();

-- a stored table: empty and short values beside longer ones, several rows to
-- a page, so that a read past the end of a value would find its neighbours
CREATE TABLE docs (id int PRIMARY KEY, a text, b text);
INSERT INTO docs VALUES
    (1, '', 'secret words here'),
    (2, 'abc', 'zzz yyy'),
    (3, '', 'more neighbour text'),
    (4, 'x', ''),
    (5, 'abc', '<p>tag soup</p>'),
    (6, '', ''),
    (7, 'ab', 'c');
SELECT id, show_shingles(a, 1) AS a, show_shingles(b, 1) AS b,
       show_shingles(a, 1, strip_html => true) AS a_html,
       show_shingles(b, 1, strip_html => true) AS b_html,
       show_shingles(a, 2, 'char') AS a_char
FROM docs ORDER BY id;
SELECT id, jaccard(a, b, 1), jaccard(a, b, 1, strip_html => true) AS jaccard_html,
       round(similarity(minhash_sketch(a, 16, 1), minhash_sketch(b, 16, 1))::numeric, 2) AS minhash,
       round(similarity(minhash_sketch(a, 16, 1, strip_html => true),
                        minhash_sketch(b, 16, 1, strip_html => true))::numeric, 2) AS minhash_html,
       hamming_distance(simhash(a, 1), simhash(b, 1)) AS hamming
FROM docs ORDER BY id;
-- the fingerprints and sketches of nothing and of "abc", as in UTF-8
SELECT id, a, ndd_fingerprint(a), ndd_fingerprint(a, strip_html => true) AS fingerprint_html,
       simhash(a, 1), simhash(a, 1, strip_html => true) AS simhash_html,
       minhash_sketch(a, 16, 1)::text AS minhash
FROM docs WHERE a IN ('', 'abc') ORDER BY id;
SELECT id, b, ndd_fingerprint(b) FROM docs WHERE id = 1;
SELECT ndd_fingerprint('abc') AS abc, ndd_fingerprint('') AS empty;

-- UTF-8 is read as UTF-8: the same letters, case-folded, as in a UTF-8 database
SELECT show_shingles(E'CAF\xc3\x89 caf\xc3\xa9', 1) = ARRAY[E'caf\xc3\xa9'] AS words,
       show_shingles(E'caf\xc3\xa9', 3, 'char') = ARRAY[E'af\xc3\xa9', 'caf'] AS chars,
       show_shingles(E'<p>Caf\xc3\xa9 &amp; cr&#xe8;me &#945;</p>', 2, strip_html => true)
       = ARRAY[E'caf\xc3\xa9 cr\xc3\xa8me', E'cr\xc3\xa8me \xce\xb1'] AS html;
SELECT ndd_fingerprint(E'caf\xc3\xa9') = 536582831172425385 AS fingerprint,
       ndd_fingerprint(E'\xc2\xb5m') = 4477280972902383313 AS micro_sign,
       simhash(E'caf\xc3\xa9 cr\xc3\xa8me'::text) = 'ba31fd720da89736' AS simhash,
       minhash_sketch(E'caf\xc3\xa9 cr\xc3\xa8me', 16, 1)::text
       = 'v1,num_perm=16,unit=word,shingle_size=1,seed=0:c18d1840c18d1840c18d1840c18d184093be4e5fc18d184093be4e5f93be4e5f93be4e5f93be4e5fc18d184093be4e5f93be4e5fc18d1840c18d1840c18d1840:0000ff77' AS minhash,
       jaccard(E'Caf\xc3\xa9 CR\xc3\x88ME', E'caf\xc3\xa9 cr\xc3\xa8me', 1) AS jaccard;

-- bytes that are not UTF-8, stored beside good values: a clean error from
-- every function, whatever follows them (a lead byte at the very end
-- announces bytes that are not there)
CREATE TABLE bad (id int PRIMARY KEY, doc text);
INSERT INTO bad VALUES
    (1, E'abc \xff'),
    (2, E'ab\xc3'),
    (3, E'caf\xe9 au lait'),
    (4, E'\xe2\x82'),
    (5, 'good words');
SELECT show_shingles(doc, 1) FROM bad WHERE id = 1;
\echo :SQLSTATE
SELECT show_shingles(doc, 1) FROM bad WHERE id = 2;
\echo :SQLSTATE
SELECT show_shingles(doc, 1) FROM bad WHERE id = 3;
\echo :SQLSTATE
SELECT show_shingles(doc, 1) FROM bad WHERE id = 4;
\echo :SQLSTATE
SELECT show_shingles(doc, 1) FROM bad WHERE id = 5;
\echo :SQLSTATE
SELECT show_shingles(doc, 1, 'char', true) FROM bad WHERE id = 1;
\echo :SQLSTATE
SELECT show_shingles(doc, 1, 'char', true) FROM bad WHERE id = 2;
\echo :SQLSTATE
SELECT show_shingles(doc, 1, 'char', true) FROM bad WHERE id = 3;
\echo :SQLSTATE
SELECT show_shingles(doc, 1, 'char', true) FROM bad WHERE id = 4;
\echo :SQLSTATE
SELECT show_shingles(doc, 1, 'char', true) FROM bad WHERE id = 5;
\echo :SQLSTATE
SELECT jaccard(doc, 'good words') FROM bad WHERE id = 1;
\echo :SQLSTATE
SELECT jaccard(doc, 'good words') FROM bad WHERE id = 2;
\echo :SQLSTATE
SELECT jaccard(doc, 'good words') FROM bad WHERE id = 3;
\echo :SQLSTATE
SELECT jaccard(doc, 'good words') FROM bad WHERE id = 4;
\echo :SQLSTATE
SELECT jaccard(doc, 'good words') FROM bad WHERE id = 5;
\echo :SQLSTATE
SELECT minhash_sketch(doc) FROM bad WHERE id = 1;
\echo :SQLSTATE
SELECT minhash_sketch(doc) FROM bad WHERE id = 2;
\echo :SQLSTATE
SELECT minhash_sketch(doc) FROM bad WHERE id = 3;
\echo :SQLSTATE
SELECT minhash_sketch(doc) FROM bad WHERE id = 4;
\echo :SQLSTATE
SELECT minhash_sketch(doc) IS NOT NULL AS sketched FROM bad WHERE id = 5;
\echo :SQLSTATE
SELECT simhash(doc) FROM bad WHERE id = 1;
\echo :SQLSTATE
SELECT simhash(doc) FROM bad WHERE id = 2;
\echo :SQLSTATE
SELECT simhash(doc) FROM bad WHERE id = 3;
\echo :SQLSTATE
SELECT simhash(doc) FROM bad WHERE id = 4;
\echo :SQLSTATE
SELECT simhash(doc) FROM bad WHERE id = 5;
\echo :SQLSTATE
SELECT ndd_fingerprint(doc, true) FROM bad WHERE id = 1;
\echo :SQLSTATE
SELECT ndd_fingerprint(doc, true) FROM bad WHERE id = 2;
\echo :SQLSTATE
SELECT ndd_fingerprint(doc, true) FROM bad WHERE id = 3;
\echo :SQLSTATE
SELECT ndd_fingerprint(doc, true) FROM bad WHERE id = 4;
\echo :SQLSTATE
SELECT ndd_fingerprint(doc, true) FROM bad WHERE id = 5;
\echo :SQLSTATE
