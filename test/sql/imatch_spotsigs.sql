--
-- I-Match, SpotSigs and ndd_explain
--
SET extra_float_digits = 0;
\set SHOW_CONTEXT never

-- the textbook examples, as show_shingles and jaccard see them
SELECT show_shingles('a rose is a rose is a rose', 4);
SELECT show_shingles('Four score and seven years ago', 4);
SELECT jaccard('a b c d e', 'c d e f g h', shingle_size => 1);   -- 3/8

--
-- I-Match
--
CREATE TABLE im_news (id int PRIMARY KEY, body text);
INSERT INTO im_news VALUES
 (1, 'The report says the river flooded the old mill and the bakery on Tuesday.'),
 (2, 'The report says a storm closed the harbour and the ferry to the island.'),
 (3, 'The council report is due and the mayor is on holiday in the mountains.'),
 (4, 'A report on the school says the new library is a success with pupils.'),
 (5, 'The weather is mild and the report says the orchard had a good harvest.'),
 (6, 'The report of the museum says the painting is a forgery by a student.'),
 (7, 'The team won the final and the report says the coach is leaving.'),
 (8, 'A fire at the depot is under control, the report says, and the road is open.'),
 (9, 'The bridge is closed and the report says repairs take a month.'),
 (10, 'The report says the zoo has a new panda and the queue is long.'),
 (11, NULL);
CREATE TABLE im_lex AS SELECT imatch_lexicon(body) AS lexicon FROM im_news;
-- NULL documents are not counted
SELECT * FROM imatch_lexicon_info((SELECT lexicon FROM im_lex));
-- idf = ln(N / df): "the" and "report" are everywhere, "a" in 7 of 10,
-- "says" in 9, "river" in one; a word the lexicon lacks counts as seen once
SELECT w, round(imatch_idf(l.lexicon, w)::numeric, 4) AS idf,
       round(ln(10.0 / df), 4) AS expected
FROM im_lex l, (VALUES ('the', 10), ('The', 10), ('report', 10), ('a', 7), ('says', 9),
                    ('river', 1), ('unseen', 1)) v(w, df)
ORDER BY w COLLATE "C";

-- a document and its variants; the default band is idf >= 1, so words in
-- more than N/e documents are ignored
CREATE TABLE im_variants (name text PRIMARY KEY, body text);
INSERT INTO im_variants VALUES
 ('original',       'The report says the river flooded the old mill and the bakery on Tuesday.'),
 ('stopword',       'A report says the river flooded the old mill and a bakery on Tuesday.'),
 ('frequent word',  'The report is: the river flooded the old mill and the bakery on Tuesday.'),
 ('punctuation',    'the REPORT says: the river flooded the old mill, and the bakery, on Tuesday'),
 ('rare word',      'The report says the river flooded the old barn and the bakery on Tuesday.'),
 ('new word',       'The report says the river flooded the old mill and the bakery on Monday.');
SELECT v.name,
       imatch_signature(v.body, l.lexicon) = imatch_signature(o.body, l.lexicon) AS same_signature,
       imatch_signatures(v.body, l.lexicon) && imatch_signatures(o.body, l.lexicon) AS randomized_match,
       cardinality(imatch_signatures(v.body, l.lexicon)) AS signatures,
       (imatch_signatures(v.body, l.lexicon))[1] = imatch_signature(v.body, l.lexicon) AS first_is_plain
FROM im_variants v, im_variants o, im_lex l
WHERE o.name = 'original'
ORDER BY v.name COLLATE "C";

-- a wider band keeps "says", which "is" replaced: the signatures part
SELECT imatch_signature(v.body, l.lexicon, min_idf => 0.1) = imatch_signature(o.body, l.lexicon, min_idf => 0.1) AS same
FROM im_variants v, im_variants o, im_lex l
WHERE v.name = 'frequent word' AND o.name = 'original';
-- a band that leaves out the rarest words ignores the changed one
SELECT imatch_signature(v.body, l.lexicon, max_idf => 2) = imatch_signature(o.body, l.lexicon, max_idf => 2) AS same
FROM im_variants v, im_variants o, im_lex l
WHERE v.name = 'rare word' AND o.name = 'original';

-- duplicates found with a plain UNIQUE index
CREATE TABLE im_sigs (name text, sig bigint UNIQUE);
INSERT INTO im_sigs SELECT v.name, imatch_signature(v.body, l.lexicon)
FROM im_variants v, im_lex l WHERE v.name IN ('original', 'rare word');
INSERT INTO im_sigs SELECT v.name, imatch_signature(v.body, l.lexicon)
FROM im_variants v, im_lex l WHERE v.name = 'stopword';
\echo :SQLSTATE
-- the randomized signatures through a GIN index
CREATE TABLE im_rsigs (name text, sigs bigint[]);
INSERT INTO im_rsigs SELECT v.name, imatch_signatures(v.body, l.lexicon) FROM im_variants v, im_lex l;
CREATE INDEX ON im_rsigs USING gin (sigs);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT r.name FROM im_rsigs r WHERE r.sigs && '{1,2}'::bigint[];
SELECT r.name FROM im_rsigs r, im_variants v, im_lex l
WHERE v.name = 'rare word' AND r.sigs && imatch_signatures(v.body, l.lexicon)
ORDER BY r.name COLLATE "C";
RESET enable_seqscan;

-- empty: no word in the band gives NULL; NULL arguments give NULL
SELECT imatch_signature('', l.lexicon) IS NULL AS empty,
       imatch_signature('The report says', l.lexicon) IS NULL AS only_frequent,
       imatch_signatures('the a report', l.lexicon) IS NULL AS randomized_empty,
       imatch_signature(NULL, l.lexicon) IS NULL AS null_doc,
       imatch_signature('river', NULL) IS NULL AS null_lexicon
FROM im_lex l;
-- no document, or only NULL ones: no lexicon
SELECT imatch_lexicon(body) IS NULL AS no_lexicon FROM im_news WHERE id > 10;
SELECT imatch_lexicon(body) IS NULL AS no_lexicon FROM im_news WHERE false;
-- documents without words count as documents
SELECT * FROM imatch_lexicon_info((SELECT imatch_lexicon(d) FROM (VALUES (''), ('!'), ('word')) v(d)));
-- copies and keep: keep = 1 keeps every word in every copy
SELECT cardinality(imatch_signatures(o.body, l.lexicon, copies => 3, keep => 1)) AS n
FROM im_variants o, im_lex l WHERE o.name = 'original';

-- parallel aggregation gives the same lexicon
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
ALTER TABLE im_news SET (parallel_workers = 2);
EXPLAIN (COSTS OFF) SELECT imatch_lexicon(body) FROM im_news;
SELECT imatch_lexicon(body) = (SELECT lexicon FROM im_lex) AS same_lexicon FROM im_news;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- bad parameters
SELECT imatch_signature('river', l.lexicon, min_idf => -1) FROM im_lex l;
\echo :SQLSTATE
SELECT imatch_signature('river', l.lexicon, min_idf => 3, max_idf => 2) FROM im_lex l;
\echo :SQLSTATE
SELECT imatch_signature('river', l.lexicon, max_idf => 'NaN') FROM im_lex l;
\echo :SQLSTATE
SELECT imatch_signatures('river', l.lexicon, copies => 0) FROM im_lex l;
\echo :SQLSTATE
SELECT imatch_signatures('river', l.lexicon, copies => 65) FROM im_lex l;
\echo :SQLSTATE
SELECT imatch_signatures('river', l.lexicon, keep => 0) FROM im_lex l;
\echo :SQLSTATE
SELECT imatch_signatures('river', l.lexicon, keep => 1.5) FROM im_lex l;
\echo :SQLSTATE
SELECT imatch_idf(l.lexicon, 'two words') FROM im_lex l;
\echo :SQLSTATE
SELECT imatch_idf(l.lexicon, '...') FROM im_lex l;
\echo :SQLSTATE
SELECT imatch_signature('river', '\x0102'::bytea);
\echo :SQLSTATE
SELECT imatch_signature('river', overlay(l.lexicon placing '\xff'::bytea from 40)) FROM im_lex l;
\echo :SQLSTATE
SELECT imatch_lexicon_info(substr(l.lexicon, 1, 40)) FROM im_lex l;
\echo :SQLSTATE
SET work_mem = 64;
SELECT imatch_lexicon(d) FROM (SELECT string_agg('w' || g, ' ') FROM generate_series(1, 5000) g) s(d);
\echo :SQLSTATE
RESET work_mem;

--
-- SpotSigs
--
-- "there is a rose in the garden": antecedents there, is, a, the; "in" is a
-- stopword; content words rose, garden.  Chains of 2: there:rose:garden,
-- is:rose:garden, a:rose:garden; the:garden:? is cut by the end.
SELECT cardinality(spotsigs('there is a rose in the garden')) AS n;
SELECT spotsigs('there is a rose in the garden') = spotsigs('There, IS: a rose of the garden!') AS same,
       spotsigs('is rose garden') <@ spotsigs('there is a rose in the garden') AS has_is_rose_garden,
       spotsigs('the rose garden') <@ spotsigs('there is a rose in the garden') AS has_the_rose_garden,
       spotsigs('the garden rose') && spotsigs('there is a rose in the garden') AS order_matters;
-- the signatures themselves (XXH3 of the word hashes, as the shingles)
SELECT spotsigs('there is a rose in the garden');
-- chain 1 adds the:garden; distance 2 takes every second content word
SELECT cardinality(spotsigs('there is a rose in the garden', chain => 1)) AS chain_1,
       spotsigs('the red rose is a flower', chain => 1, distance => 2)
         = spotsigs('the rose', chain => 1) AS distance_2;
-- antecedents and stopwords are read by the tokenizer: "The" is "the"
SELECT spotsigs('a rose is a rose is a rose', antecedents => ARRAY['The', 'IS'])
       = spotsigs('a rose is a rose is a rose', antecedents => ARRAY['is']) AS only_is,
       cardinality(spotsigs('a rose is a rose is a rose', antecedents => ARRAY['is'], stopwords => ARRAY['rose'])) AS all_stopwords;
-- empty: no signature
SELECT spotsigs('') AS empty, spotsigs('Home News Sports Weather') AS no_antecedent,
       spotsigs(NULL) IS NULL AS null_doc;

-- boilerplate: two pages share an article; their navigation differs
CREATE TABLE ss_pages (id int PRIMARY KEY, html text);
INSERT INTO ss_pages VALUES
 (1, '<html><body><nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a>
      <a href="/weather">Weather</a> <a href="/business">Business</a> <a href="/login">Login</a>
      <a href="/subscribe">Subscribe</a> <a href="/archive">Archive</a> <a href="/contact">Contact us</a>
      Latest headlines Markets Travel Culture Opinion Podcasts Newsletters Puzzles</nav>
      <aside>Most read: Mayor opens new bridge over Calder | Local team wins county cup final |
      Council approves budget plan for schools | Record crowds at summer fair | Police appeal after
      burglary spree | Rail strike disrupts commuters | Hospital unveils new cancer ward</aside>
      <article><h1>Flood closes mill</h1><p>The river burst its banks on Tuesday and the old mill
      was flooded for the first time in forty years. There was no warning, said the miller, who
      is now counting the cost. The bakery next door is also closed, and the owners say that the
      repairs will take a month. A fund for the families was opened by the council on Wednesday.</p></article>
      <footer>Copyright Daily Courier Privacy policy Cookie settings Advertise Careers Sitemap</footer></body></html>'),
 (2, '<html><body><div class="menu"><a href="/">Front page</a> | <a href="/local">Local</a> |
      <a href="/regional">Regional</a> | <a href="/obituaries">Obituaries</a> | <a href="/events">Events</a> |
      <a href="/classifieds">Classifieds</a> | <a href="/jobs">Jobs</a> | <a href="/homes">Homes</a> |
      <a href="/motors">Motors</a> Trending Elections Schools Crime Health Food Drink Letters</div>
      <div class="side">Popular now: Six things to do this weekend | Petrol prices hit new high |
      Primary pupils raise funds for charity | Bypass plans go on show | Village pub saved by
      locals | Cyclist injured in crash near ring road | Tributes paid to former headteacher</div>
      <div class="story"><h2>Flood closes mill</h2><p>The river burst its banks on Tuesday and the old mill
      was flooded for the first time in forty years. There was no warning, said the miller, who
      is now counting the cost. The bakery next door is also closed, and the owners say that the
      repairs will take a month. A fund for the families was opened by the council on Wednesday.</p></div>
      <div class="foot">Valley Gazette Terms of use Accessibility Contact the newsroom Subscribe Donate</div></body></html>');
SELECT round(spotsigs_similarity(spotsigs(a.html, strip_html => true),
                                 spotsigs(b.html, strip_html => true))::numeric, 3) AS spotsigs,
       round(jaccard(a.html, b.html, strip_html => true)::numeric, 3) AS shingles_5,
       round(jaccard(a.html, b.html, shingle_size => 3, strip_html => true)::numeric, 3) AS shingles_3
FROM ss_pages a, ss_pages b WHERE a.id = 1 AND b.id = 2;
-- indexable through minhash_sketch(bigint[])
SELECT round(similarity(minhash_sketch(spotsigs(a.html, strip_html => true)),
                        minhash_sketch(spotsigs(b.html, strip_html => true)))::numeric, 3) AS estimate
FROM ss_pages a, ss_pages b WHERE a.id = 1 AND b.id = 2;

-- spotsigs_similarity: Jaccard, or NULL when the length-ratio bound
-- min/max is below the threshold
SELECT spotsigs_similarity('{1,2,3,4}', '{3,4,5,6}') AS j,
       spotsigs_similarity('{1,2,3,4}', '{3,4,5,6}', 1) AS bound_1_passes,
       spotsigs_similarity('{1,2,3,4}', '{1,2}', 0.5) AS bound_half,
       spotsigs_similarity('{1,2,3,4}', '{1,2}', 0.6) IS NULL AS cut_by_bound,
       spotsigs_similarity('{4,3,3,2,1,1}', '{1,2,3,4}', 0.9) AS repeats_count_once,
       spotsigs_similarity('{}', '{}') AS empty,
       spotsigs_similarity('{}', '{1}', 0.1) IS NULL AS empty_cut;
-- the same bound as a WHERE clause over stored signatures, which an
-- expression index on cardinality() can serve
CREATE TABLE ss_spots AS SELECT id, spotsigs(html, strip_html => true) AS sigs FROM ss_pages;
INSERT INTO ss_spots VALUES (3, spotsigs('there is a rose in the garden'));
SELECT a.id, b.id, round(spotsigs_similarity(a.sigs, b.sigs, 0.8)::numeric, 3) AS similarity
FROM ss_spots a JOIN ss_spots b ON a.id < b.id
 AND cardinality(b.sigs) BETWEEN ceil(0.8 * cardinality(a.sigs)) AND floor(cardinality(a.sigs) / 0.8)
ORDER BY 1, 2;

-- bad parameters
SELECT spotsigs('there is a rose', chain => 0);
\echo :SQLSTATE
SELECT spotsigs('there is a rose', chain => 17);
\echo :SQLSTATE
SELECT spotsigs('there is a rose', distance => 0);
\echo :SQLSTATE
SELECT spotsigs('there is a rose', antecedents => '{}');
\echo :SQLSTATE
SELECT spotsigs('there is a rose', antecedents => ARRAY['...']);
\echo :SQLSTATE
SELECT spotsigs('there is a rose', antecedents => ARRAY['the', NULL]);
\echo :SQLSTATE
SELECT spotsigs('there is a rose', stopwords => ARRAY[NULL]::text[]);
\echo :SQLSTATE
SELECT spotsigs_similarity('{1}', '{1}', 1.5);
\echo :SQLSTATE
SELECT spotsigs_similarity('{1}', '{1}', 'NaN');
\echo :SQLSTATE
SELECT spotsigs_similarity('{1,NULL}', '{1}');
\echo :SQLSTATE

--
-- ndd_explain
--
-- {a..e} and {c..h} as 1-word shingles: 3 shared of 8
SELECT * FROM ndd_explain('a b c d e', 'c d e f g h', shingle_size => 1);
SELECT shared_sample, only_a_sample, only_b_sample
FROM ndd_explain('a b c d e', 'c d e f g h', shingle_size => 1, sample => 2);
-- a rose is a rose: 3 distinct 4-word shingles against 2 of one rose
SELECT jaccard, shingles_a, shingles_b, shared, total, shared_sample, only_a_sample, only_b_sample
FROM ndd_explain('a rose is a rose is a rose', 'a rose is a rose', shingle_size => 4);
-- the same document: everything agrees
SELECT jaccard, minhash_similarity, simhash_distance, shared, total, only_a_sample
FROM ndd_explain('Four score and seven years ago', 'four score, and seven years ago!', shingle_size => 4);
-- empty documents, characters, and no sample
SELECT * FROM ndd_explain('', '...', sample => 0);
SELECT jaccard, shingles_a, shingles_b, shared, total, shared_sample, only_a_sample, only_b_sample
FROM ndd_explain('night', 'nacht', 2, 'char');
SELECT ndd_explain(NULL, 'x') IS NULL AS null_doc;
-- any NULL argument gives NULL (STRICT), before any check
SELECT ndd_explain('x', NULL) IS NULL AS b, ndd_explain('x', 'y', NULL) IS NULL AS shingle_size,
       ndd_explain('x', 'y', 1, NULL) IS NULL AS unit, ndd_explain('x', 'y', 1, 'word', NULL) IS NULL AS sample,
       ndd_explain('x', 'y', 1, 'word', 5, NULL) IS NULL AS strip_html,
       ndd_explain('x', 'y', 1, 'word', 5, false, NULL) IS NULL AS num_perm,
       ndd_explain('x', 'y', 1, 'word', 5, false, 128, NULL) IS NULL AS seed,
       ndd_explain('x', 'y', 0, 'sentence', -1, NULL, 8) IS NULL AS bad_and_null;
-- samples in byte order (C collation), whatever the database's collation;
-- a sample larger than the set gives all of it
SELECT shared_sample, only_a_sample, only_b_sample
FROM ndd_explain('zebra éclair apple Banana mango', 'mango kiwi', shingle_size => 1, sample => 10);
-- strip_html shingles the text only; the seed moves the estimates, not the
-- exact counts
SELECT jaccard, shared, total, only_a_sample
FROM ndd_explain('<p>one <b>two</b> three</p>', 'one two three', shingle_size => 1, strip_html => true);
SELECT jaccard, shared, total, only_a_sample
FROM ndd_explain('<p>one <b>two</b> three</p>', 'one two three', shingle_size => 1);
SELECT e0.jaccard = e1.jaccard AS same_jaccard, e0.shared = e1.shared AS same_shared,
       e0.minhash_similarity <> e1.minhash_similarity OR e0.simhash_distance <> e1.simhash_distance AS estimates_move
FROM ndd_explain('a b c d e f g h i j', 'a b c d e f g h x y', shingle_size => 1, seed => 0) e0,
     ndd_explain('a b c d e f g h i j', 'a b c d e f g h x y', shingle_size => 1, seed => 7) e1;
-- one call per row, in a query of many rows
SELECT d.n, e.shared, e.total, e.only_a_sample
FROM generate_series(1, 3) d(n),
     LATERAL ndd_explain('a b c d', (SELECT string_agg(chr(96 + g), ' ') FROM generate_series(1, d.n) g),
                         shingle_size => 1) e ORDER BY d.n;
-- ndd's functions are found whatever the search_path
SET search_path = pg_temp;
SELECT shared, total FROM public.ndd_explain('a b c d e', 'c d e f g h', shingle_size => 1);
RESET search_path;

-- bad parameters
SELECT * FROM ndd_explain('a', 'b', sample => -1);
\echo :SQLSTATE
SELECT * FROM ndd_explain('a', 'b', shingle_size => 0);
\echo :SQLSTATE
SELECT * FROM ndd_explain('a', 'b', unit => 'sentence');
\echo :SQLSTATE
SELECT * FROM ndd_explain('a', 'b', num_perm => 8);
\echo :SQLSTATE
SELECT * FROM ndd_explain('a', 'b', num_perm => 2048);
\echo :SQLSTATE
SELECT * FROM ndd_explain('a', 'b', shingle_size => 33);
\echo :SQLSTATE
-- sample is checked first
SELECT * FROM ndd_explain('a', 'b', shingle_size => 0, sample => -5);
\echo :SQLSTATE

DROP TABLE im_news, im_lex, im_variants, im_sigs, im_rsigs, ss_pages, ss_spots;
