-- methods.sql: every near-duplicate method ndd offers, run over one corpus
-- and scored against the same exact truth, all in one session.  Run by
-- bench/methods.sh, which loads t(id, family, edit_rate, doc) and sets
-- :runs (timed runs per query, after a warm-up for the sketches), :corpus
-- and :commit.
--
-- Bookkeeping tables are ordinary tables, not temporary ones, as in
-- discovery.sql.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;
-- One backend, no JIT: the per-core cost of each method, not how well the
-- work splits or how long LLVM takes to compile a plan.
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET work_mem = '64MB';
\set th 0.8

CREATE EXTENSION ndd;

SELECT count(*) AS docs, count(*) FILTER (WHERE family = id) AS bases,
	   round(avg(octet_length(doc))) AS avg_bytes,
	   current_setting('server_version') AS server_version
FROM t \gset

--------------------------------------------------------------------------
-- Ground truth: every pair with exact jaccard() >= 0.8, found as
-- discovery.sql finds it.  J(x, y) >= t implies |x & y| >= ceil(t |x|), so
-- two such sets share one of the first |x| - ceil(t |x|) + 1 shingles of
-- each under any global order (prefix filtering: Chaudhuri et al. 2006,
-- Bayardo et al. 2007); shingles are ranked rarest first, candidates must
-- also pass the size filter t |x| <= |y| <= |x| / t, and their Jaccard is
-- computed exactly on the shingle sets (show_shingles(), the defaults of
-- jaccard()).  Nothing is sampled and nothing is lost: the truth is every
-- pair of the corpus, not only those within a planted family.
--------------------------------------------------------------------------

\warn '== ground truth'
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE sh AS SELECT t.id, s FROM t, LATERAL unnest(show_shingles(t.doc)) s;
CREATE TABLE dict AS
SELECT s, count(*) AS df, row_number() OVER (ORDER BY count(*), s COLLATE "C") AS tok
FROM sh GROUP BY s;
CREATE TABLE dtok AS
SELECT sh.id, count(*)::int AS n, array_agg(dict.tok ORDER BY dict.tok) AS toks
FROM sh JOIN dict USING (s) GROUP BY sh.id;
DROP TABLE sh, dict;
ALTER TABLE dtok ADD PRIMARY KEY (id);
CREATE TABLE prefix AS
SELECT d.id, d.n, p.tok
FROM dtok d, LATERAL unnest(d.toks[1 : d.n - ceil(:th * d.n)::int + 1]) p(tok);
CREATE TABLE cand AS
SELECT DISTINCT x.id AS a, y.id AS b
FROM prefix x JOIN prefix y ON y.tok = x.tok AND y.id > x.id
WHERE y.n >= :th * x.n AND x.n >= :th * y.n;
CREATE TABLE truth AS
WITH j AS MATERIALIZED (
	SELECT c.a, c.b, jaccard(x.toks, y.toks) AS j
	FROM cand c JOIN dtok x ON x.id = c.a JOIN dtok y ON y.id = c.b)
SELECT a, b, j FROM j WHERE j >= :th;
ALTER TABLE truth ADD PRIMARY KEY (a, b);
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 1) AS truth_s,
	   (SELECT count(*) FROM cand) AS cand_rows \gset
DROP TABLE prefix, cand, dtok;
-- the truth's values are jaccard(text, text)'s, pair by pair
SELECT count(*) AS truth_n,
	   count(*) FILTER (WHERE tr.j = jaccard(x.doc, y.doc)) AS truth_same,
	   count(*) FILTER (WHERE x.family = y.family) AS truth_within,
	   count(*) FILTER (WHERE tr.j = 1) AS truth_one
FROM truth tr JOIN t x ON x.id = tr.a JOIN t y ON y.id = tr.b \gset

--------------------------------------------------------------------------
-- What each method stores, in one table: the sketches and signatures are
-- made from t's text (the lexicon from the whole of t), and the text is
-- kept for verify_column.
--------------------------------------------------------------------------

\warn '== storing every sketch and signature'
CREATE TABLE lex AS SELECT imatch_lexicon(doc) AS lexicon FROM t;
CREATE TABLE sk AS
SELECT z.id, z.family, z.doc, z.mh, z.sh, z.sp, z.sig, z.sigs,
	   minhash_supershingles(z.mh) AS ss,
	   minhash_bbit(z.mh, 1) AS b1, minhash_bbit(z.mh, 2) AS b2, minhash_bbit(z.mh, 4) AS b4
FROM (SELECT t.id, t.family, t.doc, minhash_sketch(t.doc) AS mh, simhash(t.doc) AS sh,
			 spotsigs(t.doc) AS sp, imatch_signature(t.doc, l.lexicon) AS sig,
			 imatch_signatures(t.doc, l.lexicon) AS sigs
	  FROM t, lex l OFFSET 0) z;
ALTER TABLE sk ADD PRIMARY KEY (id);
VACUUM (ANALYZE) sk;
SELECT lower_threshold AS vlow FROM lsh_banding((SELECT mh FROM sk LIMIT 1), :th, 3) \gset
SELECT octet_length(lexicon) AS lex_bytes, (imatch_lexicon_info(lexicon)).words AS lex_words FROM lex \gset

-- bytes per document of each stored column, as stored (pg_column_size; a
-- NULL signature counts 0)
CREATE TABLE bench_bytes AS
SELECT avg(coalesce(pg_column_size(mh), 0)) AS mh, avg(coalesce(pg_column_size(sh), 0)) AS sh,
	   avg(coalesce(pg_column_size(ss), 0)) AS ss, avg(coalesce(pg_column_size(sig), 0)) AS sig,
	   avg(coalesce(pg_column_size(sigs), 0)) AS sigs, avg(coalesce(pg_column_size(sp), 0)) AS sp,
	   avg(coalesce(pg_column_size(b1), 0)) AS b1, avg(coalesce(pg_column_size(b2), 0)) AS b2,
	   avg(coalesce(pg_column_size(b4), 0)) AS b4, avg(pg_column_size(doc)) AS doc,
	   count(*) FILTER (WHERE sig IS NULL) AS sig_null,
	   count(*) FILTER (WHERE cardinality(sp) = 0) AS sp_empty,
	   avg(cardinality(sp)) AS sp_avg
FROM sk;

--------------------------------------------------------------------------
-- Sketching: each expression computed from the text over all of t, timed
-- by EXPLAIN ANALYZE's execution time (no parsing, planning or result
-- sent), one warm-up round and :runs timed rounds, round-robin so that
-- drift in the machine's load hits every query alike.
--------------------------------------------------------------------------

CREATE TABLE bench_sketch (ord int, name text, q text);
INSERT INTO bench_sketch VALUES
	(1, 'scan', 'SELECT sum(length(doc)) FROM t'),
	(2, 'minhash', 'SELECT count(minhash_sketch(doc)) FROM t'),
	(3, 'simhash', 'SELECT count(simhash(doc)) FROM t'),
	(4, 'supershingles', 'SELECT count(minhash_supershingles(minhash_sketch(doc))) FROM t'),
	(5, 'lexicon', 'SELECT octet_length(imatch_lexicon(doc)) FROM t'),
	(6, 'imatch', 'SELECT count(imatch_signature(doc, (SELECT lexicon FROM lex))) FROM t'),
	(7, 'imatch10', 'SELECT count(imatch_signatures(doc, (SELECT lexicon FROM lex))) FROM t'),
	(8, 'spotsigs', 'SELECT count(spotsigs(doc)) FROM t'),
	(9, 'bbit1', 'SELECT count(minhash_bbit(minhash_sketch(doc), 1)) FROM t'),
	(10, 'bbit2', 'SELECT count(minhash_bbit(minhash_sketch(doc), 2)) FROM t'),
	(11, 'bbit4', 'SELECT count(minhash_bbit(minhash_sketch(doc), 4)) FROM t');
CREATE TABLE bench_sketch_run (ord int, round int, ms float8);

CREATE FUNCTION pg_temp.exec_ms(q text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) ' || q INTO plan;
	RETURN (plan -> 0 ->> 'Execution Time')::float8;
END
$$;

\warn '== timing the sketches'
SELECT format('INSERT INTO bench_sketch_run VALUES (%s, %s, pg_temp.exec_ms(%L))', ord, r, q)
FROM bench_sketch, generate_series(0, :runs) r
ORDER BY r, ord \gexec

CREATE VIEW sketch_ms AS
SELECT s.name, percentile_cont(0.5) WITHIN GROUP (ORDER BY r.ms) AS ms
FROM bench_sketch s JOIN bench_sketch_run r USING (ord)
WHERE r.round > 0 GROUP BY s.name;

--------------------------------------------------------------------------
-- Pairing: each method's pairs (id a < id b) from what it stored, timed
-- from the first row read to the last pair inserted into found, :runs
-- rounds, round-robin; the first round's pairs are scored.  b-bit minhash
-- has no index (LSH needs full values): its candidates are those of
-- near_duplicate_pairs at the threshold verify_column uses (3 standard
-- deviations of the full sketch's estimate below 0.8), timed once per round
-- as 'candidates', and each b keeps those whose b-bit similarity reaches
-- 0.8; its pairing time is the candidates' plus its own.
--------------------------------------------------------------------------

CREATE TABLE bench_pair (ord int, name text, q text);
INSERT INTO bench_pair VALUES
	(1, 'mh_lsh', format('SELECT id_a, id_b FROM near_duplicate_pairs(%L, %L, %L, %s)', 'sk', 'mh', 'id', :th)),
	(2, 'mh_verify', format('SELECT id_a, id_b FROM near_duplicate_pairs(%L, %L, %L, %s, verify_column => %L)',
							'sk', 'mh', 'id', :th, 'doc')),
	(3, 'simhash', format('SELECT id_a, id_b FROM near_duplicate_pairs(%L, %L, %L, max_distance => 3)', 'sk', 'sh', 'id')),
	-- rows sharing a super-shingle, kept when they share 2
	(4, 'supershingles',
	 'WITH u AS MATERIALIZED (SELECT id, unnest(ss) AS x FROM sk), '
	 'c AS MATERIALIZED (SELECT DISTINCT p.id AS a, q.id AS b FROM u p JOIN u q ON q.x = p.x AND q.id > p.id) '
	 'SELECT c.a, c.b FROM c JOIN sk x ON x.id = c.a JOIN sk y ON y.id = c.b '
	 'WHERE supershingles_shared(x.ss, y.ss) >= 2'),
	(5, 'imatch', 'SELECT p.id, q.id FROM sk p JOIN sk q ON q.sig = p.sig AND q.id > p.id'),
	(6, 'imatch10',
	 'WITH u AS MATERIALIZED (SELECT id, unnest(sigs) AS x FROM sk) '
	 'SELECT DISTINCT p.id, q.id FROM u p JOIN u q ON q.x = p.x AND q.id > p.id'),
	-- rows sharing a spot signature among their rarest, within the
	-- length-ratio bound (prefix filtering, as for the truth: exact for
	-- SpotSigs Jaccard >= 0.8), then spotsigs_similarity >= 0.8
	(7, 'spotsigs', format(
	 'WITH u AS MATERIALIZED (SELECT sk.id, cardinality(sk.sp) AS n, x FROM sk, unnest(sk.sp) x), '
	 'df AS MATERIALIZED (SELECT x, count(*) AS f FROM u GROUP BY x), '
	 'pre AS MATERIALIZED (SELECT id, n, x FROM (SELECT u.id, u.n, u.x, '
	 'row_number() OVER (PARTITION BY u.id ORDER BY df.f, u.x) AS rn FROM u JOIN df USING (x)) r '
	 'WHERE rn <= n - ceil(%1$s * n) + 1), '
	 'c AS MATERIALIZED (SELECT DISTINCT p.id AS a, q.id AS b FROM pre p JOIN pre q '
	 'ON q.x = p.x AND q.id > p.id AND q.n BETWEEN ceil(%1$s * p.n) AND floor(p.n / %1$s)) '
	 'SELECT c.a, c.b FROM c JOIN sk x ON x.id = c.a JOIN sk y ON y.id = c.b '
	 'WHERE spotsigs_similarity(x.sp, y.sp, %1$s) >= %1$s', :th)),
	(8, 'candidates', format('SELECT id_a, id_b FROM near_duplicate_pairs(%L, %L, %L, %s)', 'sk', 'mh', 'id', :vlow)),
	(9, 'bbit1', format('SELECT c.a, c.b FROM found c JOIN sk x ON x.id = c.a JOIN sk y ON y.id = c.b '
						'WHERE c.name = %L AND c.run = 1 AND similarity(x.b1, y.b1) >= %s', 'candidates', :th)),
	(10, 'bbit2', format('SELECT c.a, c.b FROM found c JOIN sk x ON x.id = c.a JOIN sk y ON y.id = c.b '
						 'WHERE c.name = %L AND c.run = 1 AND similarity(x.b2, y.b2) >= %s', 'candidates', :th)),
	(11, 'bbit4', format('SELECT c.a, c.b FROM found c JOIN sk x ON x.id = c.a JOIN sk y ON y.id = c.b '
						 'WHERE c.name = %L AND c.run = 1 AND similarity(x.b4, y.b4) >= %s', 'candidates', :th));
CREATE TABLE found (name text, run int, a bigint, b bigint);
CREATE INDEX ON found (name, run);
CREATE TABLE bench_pair_run (name text, run int, ms float8, n bigint);

CREATE PROCEDURE pg_temp.timed(p_name text, p_run int, p_sql text) LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz;
	n bigint;
BEGIN
	t0 := clock_timestamp();
	EXECUTE format('INSERT INTO found SELECT %L, %s, * FROM (%s) q', p_name, p_run, p_sql);
	GET DIAGNOSTICS n = ROW_COUNT;
	INSERT INTO bench_pair_run
	VALUES (p_name, p_run, extract(epoch FROM clock_timestamp() - t0) * 1000, n);
END
$$;

\warn '== pairing'
-- each call its own top-level statement (and transaction)
SELECT format('CALL pg_temp.timed(%L, %s, %L)', name, r, q)
FROM bench_pair, generate_series(1, :runs) r
ORDER BY r, ord \gexec

CREATE VIEW pair_ms AS
SELECT name, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms,
	   min(n) <> max(n) AS runs_differ
FROM bench_pair_run GROUP BY name;

--------------------------------------------------------------------------
-- The report
--------------------------------------------------------------------------

-- one row per method: its pairs, its sketching (the names of bench_sketch
-- whose medians add up), its pairing (bench_pair) and its stored column
CREATE TABLE bench_method (ord int, method text, pairs text, sketch text[], pairing text[], bytes float8, stored text);
INSERT INTO bench_method
SELECT m.* FROM bench_bytes b, LATERAL (VALUES
	(1, 'minhash + LSH (estimate only)', 'mh_lsh', '{minhash}'::text[], '{mh_lsh}'::text[], b.mh,
	 'minhash, 128 positions'),
	(2, 'minhash + exact verification', 'mh_verify', '{minhash}', '{mh_verify}', b.mh,
	 format('minhash, and the text (%s B/doc as stored) for jaccard()', round(b.doc))),
	(3, 'simhash, k = 3', 'simhash', '{simhash}', '{simhash}', b.sh, 'simhash, 64 bits'),
	(4, 'supershingles, 6 groups, share >= 2', 'supershingles', '{supershingles}', '{supershingles}', b.ss,
	 'bigint[6] (sketched from a minhash)'),
	(5, 'I-Match', 'imatch', '{lexicon,imatch}', '{imatch}', b.sig,
	 format('bigint, %s NULL; + the lexicon once, %s B (%s B/doc here)',
			b.sig_null, :lex_bytes, round(:lex_bytes::numeric / :docs))),
	(6, 'I-Match, 10 random lexicons, share any', 'imatch10', '{lexicon,imatch10}', '{imatch10}', b.sigs,
	 format('bigint[11]; + the lexicon once (%s B/doc here)', round(:lex_bytes::numeric / :docs))),
	(7, 'SpotSigs, Jaccard >= 0.8', 'spotsigs', '{spotsigs}', '{spotsigs}', b.sp,
	 format('bigint[], %s signatures on average, %s docs with none', round(b.sp_avg, 1), b.sp_empty)),
	(8, 'b-bit minhash, b = 1', 'bbit1', '{bbit1}', '{candidates,bbit1}', b.b1,
	 'minhash_bbit; candidates from the minhash''s LSH'),
	(9, 'b-bit minhash, b = 2', 'bbit2', '{bbit2}', '{candidates,bbit2}', b.b2,
	 'minhash_bbit; candidates from the minhash''s LSH'),
	(10, 'b-bit minhash, b = 4', 'bbit4', '{bbit4}', '{candidates,bbit4}', b.b4,
	 'minhash_bbit; candidates from the minhash''s LSH')) m;

CREATE TABLE bench_score AS
SELECT m.ord, m.method, f.found, f.tp,
	   f.tp::numeric / nullif(f.found, 0) AS precision,
	   f.tp::numeric / nullif(:truth_n, 0) AS recall,
	   (SELECT sum(ms) FROM sketch_ms s WHERE s.name = ANY (m.sketch)) AS sketch_ms,
	   (SELECT sum(ms) FROM pair_ms p WHERE p.name = ANY (m.pairing)) AS pair_ms,
	   (SELECT bool_or(runs_differ) FROM pair_ms p WHERE p.name = ANY (m.pairing)) AS runs_differ,
	   m.bytes, m.stored
FROM bench_method m,
	 LATERAL (SELECT count(*) AS found, count(tr.a) AS tp
			  FROM found f LEFT JOIN truth tr USING (a, b)
			  WHERE f.name = m.pairs AND f.run = 1) f;

\pset footer off
\echo
\echo 'ndd methods benchmark: ndd' :commit 'on PostgreSQL' :server_version
SELECT string_agg(name || ' = ' || current_setting(name), ', ' ORDER BY name) AS settings
FROM pg_settings WHERE name IN ('work_mem', 'max_parallel_workers_per_gather', 'jit', 'shared_buffers') \gset
\echo 'settings:' :settings '(one backend)'
SELECT format('corpus: %s, %s docs (%s bases, the rest edited copies), avg %s bytes; %s timed runs per query, medians',
			  :'corpus', :docs, :bases, :avg_bytes, :runs) AS l \gset
\echo :l
SELECT format('truth: every pair with exact jaccard() >= %s (word 5-shingles), by prefix filtering over the whole corpus, not sampled: %s pairs (%s within a family, %s across, %s with J = 1) from %s candidates in %s s; jaccard(doc, doc) equals the truth''s J on %s of them',
			  :th, :truth_n, :truth_within, :truth_n - :truth_within, :truth_one, :cand_rows, :truth_s, :truth_same) AS l \gset
\echo :l
\echo
\echo 'Per method: precision, recall and F1 against the truth; ms per 1,000 docs to sketch (from the text) and to pair (from what is stored); bytes per doc stored'
SELECT method, found AS pairs, tp AS "true pos",
	   round(precision, 3) AS precision, round(recall, 3) AS recall,
	   round(2 * precision * recall / nullif(precision + recall, 0), 3) AS "F1",
	   round((sketch_ms * 1000 / :docs)::numeric, 1) AS "sketch ms/1k",
	   round((pair_ms * 1000 / :docs)::numeric, 1) AS "pair ms/1k",
	   round(bytes::numeric) AS "B/doc",
	   stored || CASE WHEN runs_differ THEN ' (RUNS DIFFER)' ELSE '' END AS "what is stored"
FROM bench_score ORDER BY ord;
SELECT format('scan of the text (sum(length(doc))): %s ms/1k; I-Match lexicon: %s ms/1k (%s words) of the I-Match sketch times; b-bit pairing includes the candidates: %s pairs at estimate >= %s in %s ms/1k',
			  round(((SELECT ms FROM sketch_ms WHERE name = 'scan') * 1000 / :docs)::numeric, 1),
			  round(((SELECT ms FROM sketch_ms WHERE name = 'lexicon') * 1000 / :docs)::numeric, 1), :lex_words,
			  (SELECT count(*) FROM found WHERE name = 'candidates' AND run = 1), round(:vlow::numeric, 4),
			  round(((SELECT ms FROM pair_ms WHERE name = 'candidates') * 1000 / :docs)::numeric, 1)) AS l \gset
\echo :l

\echo
\echo 'Recall by exact J (truth pairs found / truth pairs in the band)'
SELECT m.method,
	   round(avg((f.a IS NOT NULL)::int) FILTER (WHERE tr.j < 0.85), 3) AS "0.80-0.85",
	   round(avg((f.a IS NOT NULL)::int) FILTER (WHERE tr.j >= 0.85 AND tr.j < 0.9), 3) AS "0.85-0.90",
	   round(avg((f.a IS NOT NULL)::int) FILTER (WHERE tr.j >= 0.9 AND tr.j < 0.95), 3) AS "0.90-0.95",
	   round(avg((f.a IS NOT NULL)::int) FILTER (WHERE tr.j >= 0.95 AND tr.j < 1), 3) AS "0.95-1",
	   round(avg((f.a IS NOT NULL)::int) FILTER (WHERE tr.j = 1), 3) AS "1"
FROM bench_method m CROSS JOIN truth tr
LEFT JOIN found f ON f.name = m.pairs AND f.run = 1 AND f.a = tr.a AND f.b = tr.b
GROUP BY m.ord, m.method ORDER BY m.ord;
SELECT format('truth pairs per band: %s, %s, %s, %s, %s',
			  count(*) FILTER (WHERE j < 0.85), count(*) FILTER (WHERE j >= 0.85 AND j < 0.9),
			  count(*) FILTER (WHERE j >= 0.9 AND j < 0.95), count(*) FILTER (WHERE j >= 0.95 AND j < 1),
			  count(*) FILTER (WHERE j = 1)) AS l FROM truth \gset
\echo :l

\echo
\echo 'False positives by exact J (pairs found that the truth lacks)'
SELECT m.method, count(*) AS "false pos",
	   count(*) FILTER (WHERE fp.j >= 0.7) AS "0.7 <= J < 0.8",
	   count(*) FILTER (WHERE fp.j >= 0.5 AND fp.j < 0.7) AS "0.5 <= J < 0.7",
	   count(*) FILTER (WHERE fp.j < 0.5) AS "J < 0.5",
	   count(*) FILTER (WHERE fp.fa <> fp.fb) AS "across families"
FROM bench_method m
JOIN LATERAL (SELECT jaccard(x.doc, y.doc) AS j, x.family AS fa, y.family AS fb
			  FROM found f JOIN t x ON x.id = f.a JOIN t y ON y.id = f.b
			  WHERE f.name = m.pairs AND f.run = 1
				AND NOT EXISTS (SELECT FROM truth tr WHERE tr.a = f.a AND tr.b = f.b)) fp ON true
GROUP BY m.ord, m.method ORDER BY m.ord;
