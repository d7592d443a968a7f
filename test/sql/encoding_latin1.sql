-- ndd in a LATIN1 database (scripts/test.sh runs this file alone, with
-- --encoding=LATIN1 --no-locale).  Text is converted to UTF-8 before it is
-- tokenized, so it gives the shingles, sketches and fingerprints that UTF-8
-- gives; shingles are shown in the database encoding.  Nothing may read past
-- the end of a value: the conversion hands an empty string back as it is, not
-- NUL-terminated.  This file is ASCII: other characters are escapes, and the
-- UTF-8 results they are checked against are bytes in hex or code points.
SET extra_float_digits = 0;
SELECT getdatabaseencoding();

-- text from its UTF-8 bytes, given in hex
CREATE FUNCTION pg_temp.utf8(hex text) RETURNS text
LANGUAGE sql AS $$ SELECT convert_from(decode(hex, 'hex'), 'UTF8') $$;

-- a stored table: empty and short values beside longer ones, several rows to
-- a page, so that a read past the end of a value would find its neighbours
CREATE TABLE docs (id int PRIMARY KEY, a text, b text);
INSERT INTO docs VALUES
    (1, '', 'secret words here'),
    (2, 'abc', 'zzz yyy'),
    (3, '', 'more neighbour text'),
    (4, 'x', ''),
    (5, '', '<p>tag soup</p>'),
    (6, '', ''),
    (7, E'caf\xe9', 'secret words');
SELECT id, show_shingles(a, 1) AS a, show_shingles(b, 1) AS b,
       show_shingles(a, 1, strip_html => true) AS a_html,
       show_shingles(b, 1, strip_html => true) AS b_html,
       show_shingles(a, 2, 'char') AS a_char
FROM docs WHERE id <> 7 ORDER BY id;
SELECT id, jaccard(a, b, 1), jaccard(a, b, 1, strip_html => true) AS jaccard_html,
       round(similarity(minhash_sketch(a, 16, 1), minhash_sketch(b, 16, 1))::numeric, 2) AS minhash,
       round(similarity(minhash_sketch(a, 16, 1, strip_html => true),
                        minhash_sketch(b, 16, 1, strip_html => true))::numeric, 2) AS minhash_html,
       hamming_distance(simhash(a, 1), simhash(b, 1)) AS hamming
FROM docs ORDER BY id;
-- an empty value has no tokens: the fingerprint and sketches of nothing
SELECT id, ndd_fingerprint(a), ndd_fingerprint(a, strip_html => true) AS fingerprint_html,
       simhash(a, 1), simhash(a, 1, strip_html => true) AS simhash_html,
       minhash_sketch(a, 16, 1)::text AS minhash
FROM docs WHERE a = '' ORDER BY id;

-- Latin-1 letters given as bytes shingle as the same letters do in UTF-8,
-- case-folded, and are shown as Latin-1 (four bytes for "cafe" with an acute)
SELECT show_shingles(E'caf\xe9', 1) = ARRAY[pg_temp.utf8('636166c3a9')] AS utf8_bytes,
       show_shingles(E'CAF\xc9 caf\xe9', 1) = ARRAY[E'caf\u00e9'] AS code_points,
       (SELECT array_agg(octet_length(s)) FROM unnest(show_shingles(E'caf\xe9', 1)) s) AS octets,
       convert_to(array_to_string(show_shingles(E'caf\xe9', 1), ''), 'UTF8') AS as_utf8;
SELECT id, show_shingles(a, 1) = ARRAY[E'caf\u00e9'] AS stored FROM docs WHERE id = 7;
SELECT show_shingles(E'Caf\xe9 CR\xc8ME br\xfbl\xe9e, \xd1and\xfa stra\xdfe \xff \xbd 10\xb2 \xaa', 1)
       = ARRAY['1', '102', '2', 'a', E'br\u00fbl\u00e9e', E'caf\u00e9', E'cr\u00e8me',
               E'stra\u00dfe', E'\u00f1and\u00fa', E'\u00ff'] AS words;
SELECT show_shingles(E'caf\xe9 cr\xe8me', 2)
       = ARRAY[pg_temp.utf8('636166c3a9206372c3a86d65')] AS pair,
       show_shingles(E'caf\xe9', 3, 'char') = ARRAY[E'af\u00e9', 'caf'] AS chars;
SELECT show_shingles(E'<p>Caf\xe9 &amp; cr&#xe8;me</p>', 1, strip_html => true)
       = ARRAY[E'caf\u00e9', E'cr\u00e8me'] AS html;

-- fingerprints and sketches equal those of the same text in UTF-8
SELECT ndd_fingerprint(E'caf\xe9') = 536582831172425385 AS fingerprint,
       ndd_fingerprint(E'\xb5m') = 4477280972902383313 AS micro_sign,
       ndd_fingerprint(E'<p>Caf\xe9 &amp; cr&#xe8;me &#945;</p>', true) = -8076419898402785455 AS fingerprint_html,
       simhash(E'caf\xe9 cr\xe8me'::text) = 'ba31fd720da89736' AS simhash,
       simhash(E'<p>Caf\xe9 &amp; cr&#xe8;me &#945;</p>', 1, strip_html => true) = '38a43b0181ae5a40' AS simhash_html;
SELECT minhash_sketch(E'caf\xe9 cr\xe8me', 16, 1)::text
       = 'v1,num_perm=16,unit=word,shingle_size=1,seed=0:c18d1840c18d1840c18d1840c18d184093be4e5fc18d184093be4e5f93be4e5f93be4e5f93be4e5fc18d184093be4e5f93be4e5fc18d1840c18d1840c18d1840:0000ff77' AS minhash,
       minhash_sketch(E'<p>Caf\xe9 &amp; cr&#xe8;me &#945;</p>', 16, 1, strip_html => true)::text
       = 'v1,num_perm=16,unit=word,shingle_size=1,seed=0:04a6db20c18d1840c18d1840c18d184093be4e5f04a6db2093be4e5f93be4e5f93be4e5f04a6db20c18d184093be4e5f93be4e5fc18d1840c18d184004a6db20:0000ff76' AS minhash_html;
SELECT jaccard(E'Caf\xe9 CR\xc8ME br\xfbl\xe9e', E'caf\xe9 cr\xe8me BR\xdbL\xc9E', 1) AS same,
       jaccard(E'Caf\xe9 CR\xc8ME br\xfbl\xe9e', E'caf\xe9 cr\xe8me tarte', 1) AS half,
       similarity(minhash_sketch(E'CAF\xc9 cr\xe8me'), minhash_sketch(E'caf\xe9 CR\xc8ME')) AS minhash;

-- a shingle with a character Latin-1 lacks (the micro sign's NFKC form is a
-- Greek mu) cannot be shown, though it can be hashed
SELECT show_shingles(E'\xb5m', 1);
\echo :SQLSTATE
SELECT show_shingles('&#945;', 1, strip_html => true);
\echo :SQLSTATE
