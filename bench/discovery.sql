-- discovery.sql: near_duplicate_pairs and near_duplicate_clusters scored
-- against exact Jaccard (part a) and timed at scale (part b), all in one
-- session.  Run by bench/discovery.sh, which loads docs(id, family,
-- edit_rate, body) (the 20k corpus) and, for part b, big_load (same
-- columns), and sets :part_a, :part_b (on/off), :docs, :check (documents in
-- the brute-force sample), :runs and :big_runs (runs per call on docs and
-- on big), :verify_timeout and :big_timeout (seconds, 0 for none), :load_s,
-- :commit, :small_corpus and :big_corpus.
--
-- Bookkeeping tables are ordinary tables, not temporary ones: parallel
-- workers cannot read temporary tables.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;
\set th 0.8

CREATE EXTENSION ndd;

CREATE TABLE bench_step (ord serial, part text, step text, s float8);
-- one row per timed call; temp_bytes holds the counter before the call
-- until pg_temp.temp_after() turns it into the difference
CREATE TABLE bench_run (ord serial, label text, run int, s float8, n1 bigint, n2 bigint,
						temp_bytes bigint, temp_files bigint, status text);
-- the pairs each method returned, per run
CREATE TABLE found (label text, run int, a bigint, b bigint, sim float8);

-- Flush this backend's statistics when it next goes idle, so that
-- pg_stat_database counts the temporary files of the previous call.
CREATE PROCEDURE pg_temp.flush() LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_stat_force_next_flush();
END
$$;

-- One timed call, its own top-level statement (so statement_timeout
-- applies to it alone).  p_store: insert the pairs p_sql returns into
-- found; otherwise p_sql returns two bigints.  A call that fails (a
-- timeout, a cancel from outside, a full disk) is recorded with its error,
-- and its label is not run again.
CREATE PROCEDURE pg_temp.timed(p_label text, p_run int, p_sql text, p_store bool)
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz;
	n1 bigint;
	n2 bigint;
	tb bigint;
	tf bigint;
	state text;
	msg text;
BEGIN
	IF EXISTS (SELECT FROM bench_run WHERE label = p_label AND status <> 'ok') THEN
		INSERT INTO bench_run (label, run, status) VALUES (p_label, p_run, 'skipped');
		RETURN;
	END IF;
	SELECT temp_bytes, temp_files INTO tb, tf
	FROM pg_stat_database WHERE datname = current_database();
	t0 := clock_timestamp();
	BEGIN
		IF p_store THEN
			EXECUTE format('INSERT INTO found SELECT %L, %s, * FROM (%s) q', p_label, p_run, p_sql);
			GET DIAGNOSTICS n1 = ROW_COUNT;
		ELSE
			EXECUTE p_sql INTO n1, n2;
		END IF;
		INSERT INTO bench_run (label, run, s, n1, n2, temp_bytes, temp_files, status)
		VALUES (p_label, p_run, extract(epoch FROM clock_timestamp() - t0), n1, n2, tb, tf, 'ok');
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
		INSERT INTO bench_run (label, run, s, temp_bytes, temp_files, status)
		VALUES (p_label, p_run, extract(epoch FROM clock_timestamp() - t0), tb, tf,
				CASE WHEN msg LIKE '%statement timeout%' THEN 'timeout'
					 ELSE 'error ' || state || ': ' || msg END);
	END;
END
$$;

-- The temporary files written by the last call: the counters now, less
-- those before it.
CREATE PROCEDURE pg_temp.temp_after() LANGUAGE plpgsql AS $$
BEGIN
	UPDATE bench_run r SET temp_bytes = d.temp_bytes - r.temp_bytes,
						   temp_files = d.temp_files - r.temp_files
	FROM pg_stat_database d
	WHERE d.datname = current_database()
	  AND r.ord = (SELECT max(ord) FROM bench_run) AND r.status <> 'skipped';
END
$$;

-- :'label' run :nruns times, each run one top-level CALL between flushes:
-- :sql and :store as pg_temp.timed takes them.
\set run_timed 'SELECT s FROM generate_series(1, :nruns) r, LATERAL (VALUES (1, ''CALL pg_temp.flush()''), (2, format(''CALL pg_temp.timed(%L, %s, %L, %L)'', :''label'', r, :''sql'', :''store'')), (3, ''CALL pg_temp.flush()''), (4, ''CALL pg_temp.temp_after()'')) v(o, s) ORDER BY r, o \\gexec'

-- median and spread of the runs of a label
CREATE VIEW bench_runsum AS
SELECT label, min(ord) AS first,
	   count(*) FILTER (WHERE status = 'ok') AS ok,
	   count(*) FILTER (WHERE status NOT IN ('ok', 'skipped')) AS failed,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY s) FILTER (WHERE status = 'ok') AS med,
	   min(s) FILTER (WHERE status = 'ok') AS min, max(s) FILTER (WHERE status = 'ok') AS max,
	   max(s) FILTER (WHERE status NOT IN ('ok', 'skipped')) AS failed_s,
	   max(status) FILTER (WHERE status NOT IN ('ok', 'skipped')) AS failure,
	   min(n1) AS n1, max(n1) AS n1_max, min(n2) AS n2, max(n2) AS n2_max,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY temp_bytes) FILTER (WHERE status = 'ok') AS temp_bytes,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY temp_files) FILTER (WHERE status = 'ok') AS temp_files
FROM bench_run GROUP BY label;

\warn '== sketching docs'
SELECT clock_timestamp() AS t0 \gset
ALTER TABLE docs ADD COLUMN mh minhash;
UPDATE docs SET mh = minhash_sketch(body);
VACUUM (ANALYZE) docs;
INSERT INTO bench_step (part, step, s)
VALUES ('-', 'docs: minhash_sketch(body) + VACUUM (ANALYZE)',
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
SELECT count(*) AS rows, count(*) FILTER (WHERE family = id) AS bases,
	   round(avg(octet_length(body))) AS avg_bytes,
	   current_setting('server_version') AS server_version
FROM docs \gset
SELECT lower_threshold AS vlow, bands AS vbands, rows AS vrows, required AS vreq
FROM lsh_banding((SELECT mh FROM docs LIMIT 1), :th, 3) \gset
SELECT bands AS ebands, rows AS erows, required AS ereq
FROM lsh_banding((SELECT mh FROM docs LIMIT 1), :th) \gset

\pset footer off
\echo
\echo 'ndd discovery benchmark: ndd' :commit 'on PostgreSQL' :server_version
SELECT string_agg(name || ' = ' || current_setting(name), ', ' ORDER BY name) AS settings
FROM pg_settings
WHERE name IN ('work_mem', 'maintenance_work_mem', 'max_wal_size', 'shared_buffers',
			   'temp_buffers', 'max_parallel_workers_per_gather', 'jit', 'hash_mem_multiplier') \gset
\echo 'settings:' :settings
SELECT format('docs: %s, %s rows (%s bases, the rest edited copies), avg %s bytes', :'small_corpus', :rows, :bases, :avg_bytes) AS l \gset
\echo :l
SELECT format('banding at %s: %s bands of %s, %s required; with verify_column (3 sd lower, %s): %s bands of %s, %s required',
			  :th, :ebands, :erows, :ereq, round(:vlow::numeric, 4), :vbands, :vrows, :vreq) AS l \gset
\echo :l

\if :part_a
--------------------------------------------------------------------------
-- Part a: ground truth by prefix filtering
--
-- J(x, y) >= t implies |x & y| >= t * max(|x|, |y|), so |x & y| >=
-- ceil(t |x|).  Under any global order of the shingles, two sets that share
-- at least k elements share one among the first |x| - k + 1 of each
-- (Chaudhuri et al. 2006; Bayardo et al. 2007): each document keeps the
-- first |x| - ceil(t |x|) + 1 of its shingles, rarest first (ties by the
-- shingle's bytes), and only documents sharing one of those, with
-- t |x| <= |y| <= |x| / t, are candidates.  Their Jaccard is then computed
-- exactly on the shingle sets (show_shingles(), the text of each shingle,
-- mapped one to one onto integers).  Nothing is lost: the truth is exact.
-- A document without shingles has Jaccard 0 with everything (jaccard()'s
-- definition, an empty set included), so it has no pair.
--------------------------------------------------------------------------

\warn '== part a: ground truth'
SET jit = off;
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE sh AS SELECT d.id, s FROM docs d, LATERAL unnest(show_shingles(d.body)) s;
-- rank: rarest first, ties by bytes (deterministic)
CREATE TABLE dict AS
SELECT s, count(*) AS df, row_number() OVER (ORDER BY count(*), s COLLATE "C") AS tok
FROM sh GROUP BY s;
-- each document's set as sorted ranks
CREATE TABLE dtok AS
SELECT sh.id, count(*)::int AS n, array_agg(dict.tok ORDER BY dict.tok) AS toks
FROM sh JOIN dict USING (s) GROUP BY sh.id;
SELECT count(*) AS sh_rows FROM sh \gset
SELECT count(*) AS sh_distinct FROM dict \gset
DROP TABLE sh, dict;
ALTER TABLE dtok ADD PRIMARY KEY (id);
CREATE TABLE prefix AS
SELECT d.id, d.n, p.tok
FROM dtok d, LATERAL unnest(d.toks[1 : d.n - ceil(:th * d.n)::int + 1]) p(tok);
CREATE TABLE cand AS
SELECT DISTINCT x.id AS a, y.id AS b
FROM prefix x JOIN prefix y ON y.tok = x.tok AND y.id > x.id
WHERE y.n >= :th * x.n AND x.n >= :th * y.n;
-- exact Jaccard of every candidate (MATERIALIZED: computed once per pair)
CREATE TABLE truth AS
WITH j AS MATERIALIZED (
	SELECT c.a, c.b, jaccard(x.toks, y.toks) AS j
	FROM cand c JOIN dtok x ON x.id = c.a JOIN dtok y ON y.id = c.b)
SELECT a, b, j FROM j WHERE j >= :th;
ALTER TABLE truth ADD PRIMARY KEY (a, b);
INSERT INTO bench_step (part, step, s)
VALUES ('a', 'ground truth: shingles, ranks, prefixes, candidates, exact Jaccard',
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
SELECT (SELECT count(*) FROM prefix) AS prefix_rows, (SELECT count(*) FROM cand) AS cand_rows,
	   (SELECT count(*) FROM docs d WHERE NOT EXISTS (SELECT FROM dtok t WHERE t.id = d.id)) AS empty_docs \gset
DROP TABLE prefix;

-- the truth's values are those of jaccard(text, text), pair by pair
SELECT clock_timestamp() AS t0 \gset
SELECT count(*) AS truth_n,
	   count(*) FILTER (WHERE t.j = jaccard(x.body, y.body)) AS truth_same,
	   count(*) FILTER (WHERE x.family = y.family) AS truth_within,
	   count(*) FILTER (WHERE x.family <> y.family) AS truth_cross,
	   count(*) FILTER (WHERE t.j = 1) AS truth_one
FROM truth t JOIN docs x ON x.id = t.a JOIN docs y ON y.id = t.b \gset
INSERT INTO bench_step (part, step, s)
VALUES ('a', 'jaccard(body, body) on every truth pair',
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));

--------------------------------------------------------------------------
-- The check: brute force on a sample.  Half whole families (many true
-- pairs), half random documents (what a random sample meets); every pair
-- of the sample through jaccard(body, body), against the truth restricted
-- to the sample.
--------------------------------------------------------------------------

\warn '== part a: brute-force check on a sample'
SELECT setseed(0.42) AS seeded \gset
CREATE TABLE samp AS
WITH fam AS (SELECT family, count(*) AS n, random() AS r FROM docs GROUP BY family),
cum AS (SELECT family, sum(n) OVER (ORDER BY r, family) AS c FROM fam)
SELECT d.id, d.body FROM docs d JOIN cum USING (family) WHERE cum.c <= :check / 2;
SELECT count(*) AS samp_fam, count(DISTINCT d.family) AS samp_families
FROM samp s JOIN docs d USING (id) \gset
INSERT INTO samp
SELECT id, body FROM docs WHERE id NOT IN (SELECT id FROM samp)
ORDER BY random() LIMIT :check - :samp_fam;
ALTER TABLE samp ADD PRIMARY KEY (id);
ANALYZE samp;
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE brute AS
WITH j AS MATERIALIZED (
	SELECT x.id AS a, y.id AS b, jaccard(x.body, y.body) AS j
	FROM samp x JOIN samp y ON x.id < y.id)
SELECT a, b, j FROM j WHERE j >= :th;
INSERT INTO bench_step (part, step, s)
VALUES ('a', format('brute force: jaccard(body, body) on all %s pairs of %s sampled docs',
					:check::bigint * (:check - 1) / 2, :check),
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
SELECT count(*) FILTER (WHERE b.a IS NOT NULL) AS brute_n,
	   count(*) FILTER (WHERE t.a IS NOT NULL) AS insamp_n,
	   count(*) FILTER (WHERE b.a IS NOT NULL AND t.a IS NOT NULL) AS both_n,
	   count(*) FILTER (WHERE t.a IS NULL) AS brute_only,
	   count(*) FILTER (WHERE b.a IS NULL) AS truth_only,
	   count(*) FILTER (WHERE b.j <> t.j) AS j_differ
FROM brute b
FULL JOIN (SELECT t.* FROM truth t JOIN samp x ON x.id = t.a JOIN samp y ON y.id = t.b) t USING (a, b) \gset

--------------------------------------------------------------------------
-- The methods
--------------------------------------------------------------------------

\warn '== part a: near_duplicate_pairs, estimate only'
SET jit TO DEFAULT;
\set nruns :runs
\set store true
\set label 'a: near_duplicate_pairs(0.8)'
SELECT format('SELECT id_a, id_b, similarity FROM near_duplicate_pairs(%L, %L, %L, %s)', 'docs', 'mh', 'id', :th) AS sql \gset
:run_timed

-- verify_column's recipe by hand: the pairs estimated at or above the
-- lowered threshold, kept when jaccard() of the texts reaches 0.8
\warn '== part a: near_duplicate_pairs at the lowered threshold, then jaccard()'
\set label 'c: near_duplicate_pairs(lower) + jaccard() >= 0.8'
SELECT format('WITH p AS MATERIALIZED (SELECT id_a, id_b, similarity FROM near_duplicate_pairs(%L, %L, %L, %s)), '
			  'j AS MATERIALIZED (SELECT p.id_a, p.id_b, jaccard(x.body, y.body) AS j FROM p '
			  'JOIN docs x ON x.id = p.id_a JOIN docs y ON y.id = p.id_b) '
			  'SELECT * FROM j WHERE j >= %s', 'docs', 'mh', 'id', :vlow, :th) AS sql \gset
:run_timed

\warn '== part a: near_duplicate_pairs, verify_column => body'
\set label 'b: near_duplicate_pairs(0.8, verify_column => body)'
SELECT format('SELECT id_a, id_b, similarity FROM near_duplicate_pairs(%L, %L, %L, %s, verify_column => %L)',
			  'docs', 'mh', 'id', :th, 'body') AS sql \gset
SELECT CASE WHEN :verify_timeout > 0 THEN :verify_timeout || 's' ELSE '0' END AS tmo \gset
SET statement_timeout = :'tmo';
:run_timed
RESET statement_timeout;

-- every truth pair's estimate
CREATE TABLE truth_est AS
SELECT t.a, t.b, t.j, similarity(x.mh, y.mh) AS est, x.family AS fa, y.family AS fb
FROM truth t JOIN docs x ON x.id = t.a JOIN docs y ON y.id = t.b;

-- per method: the first run scored, and whether the other runs agree
CREATE TABLE bench_pr AS
SELECT s.label, s.ok, s.failed, s.med, s.min, s.max, s.failed_s, s.failure,
	   (SELECT count(*) FROM found f WHERE f.label = s.label AND f.run = 1) AS found,
	   (SELECT count(*) FROM found f JOIN truth t USING (a, b) WHERE f.label = s.label AND f.run = 1) AS tp,
	   (SELECT count(*) FROM truth) AS truth,
	   (SELECT bool_and(n) FROM (
		   SELECT NOT EXISTS (
			   (SELECT a, b FROM found WHERE label = s.label AND run = r.run
				EXCEPT SELECT a, b FROM found WHERE label = s.label AND run = 1)
			   UNION ALL
			   (SELECT a, b FROM found WHERE label = s.label AND run = 1
				EXCEPT SELECT a, b FROM found WHERE label = s.label AND run = r.run)) AS n
		   FROM bench_run r WHERE r.label = s.label AND r.status = 'ok' AND r.run > 1) z) AS same
FROM bench_runsum s WHERE s.label LIKE '_: %';

\echo
\echo 'Part a: accuracy against exact Jaccard >=' :th '(word 5-shingles, the defaults of minhash_sketch and jaccard), 128-position sketches'
SELECT part, step, round(s::numeric, 1) AS seconds FROM bench_step WHERE part IN ('-', 'a') ORDER BY ord;
SELECT format('truth: %s shingles (%s distinct) in %s docs (%s without shingles); %s prefix entries; %s candidate pairs (size and prefix filters); %s pairs with J >= %s: %s within a family, %s across families, %s with J = 1; jaccard(body, body) equals the truth''s J on %s of them',
			  :sh_rows, :sh_distinct, :rows, :empty_docs, :prefix_rows, :cand_rows, :truth_n, :th,
			  :truth_within, :truth_cross, :truth_one, :truth_same) AS l \gset
\echo :l
SELECT format('check: %s docs (%s from %s whole families, %s at random), %s pairs by brute force: %s with J >= %s; the truth has %s of the sample''s pairs; in both %s, brute force only %s, truth only %s, J different %s => %s',
			  :check, :samp_fam, :samp_families, :check - :samp_fam,
			  :check::bigint * (:check - 1) / 2, :brute_n, :th, :insamp_n, :both_n,
			  :brute_only, :truth_only, :j_differ,
			  CASE WHEN :brute_only = 0 AND :truth_only = 0 AND :j_differ = 0
				   THEN 'exact match' ELSE 'MISMATCH' END) AS l \gset
\echo :l
\echo
\echo 'Recall and precision (pairs id_a < id_b; the first run scored; seconds: median of the runs)'
SELECT label AS method, ok AS runs, failed, round(med::numeric, 1) AS "median s",
	   round(min::numeric, 1) AS "min s", round(max::numeric, 1) AS "max s",
	   CASE WHEN ok = 0 THEN NULL ELSE truth END AS truth,
	   CASE WHEN ok = 0 THEN NULL ELSE found END AS found,
	   CASE WHEN ok = 0 THEN NULL ELSE tp END AS "true pos",
	   CASE WHEN ok > 0 THEN round(tp::numeric / nullif(truth, 0), 4) END AS recall,
	   CASE WHEN ok > 0 THEN round(tp::numeric / nullif(found, 0), 4) END AS precision,
	   CASE WHEN ok = 0 THEN failure || ' after ' || round(failed_s::numeric) || ' s'
			WHEN ok = 1 THEN 'one run' WHEN same THEN 'yes' ELSE 'NO' END AS "runs agree"
FROM bench_pr ORDER BY label;
SELECT format('same-run ratios (medians): verify_column / estimate only %s x; by hand / estimate only %s x',
			  coalesce(round((SELECT med FROM bench_runsum WHERE label LIKE 'b:%')::numeric /
							 (SELECT med FROM bench_runsum WHERE label LIKE 'a:%')::numeric, 2)::text, 'n/a'),
			  coalesce(round((SELECT med FROM bench_runsum WHERE label LIKE 'c:%')::numeric /
							 (SELECT med FROM bench_runsum WHERE label LIKE 'a:%')::numeric, 2)::text, 'n/a')) AS l \gset
\echo :l

\echo
\echo 'Truth pairs by estimated similarity (estimate only keeps >= 0.8; verify_column looks down to 3 sd lower)'
SELECT CASE WHEN est >= :th THEN '1: est >= ' || :th
			WHEN est >= :vlow THEN '2: ' || round(:vlow::numeric, 3) || ' <= est < ' || :th
			ELSE '3: est < ' || round(:vlow::numeric, 3) END AS estimate,
	   count(*) AS pairs, round(min(j)::numeric, 4) AS "min J", round(max(j)::numeric, 4) AS "max J",
	   round(min(est)::numeric, 4) AS "min est", round(max(est)::numeric, 4) AS "max est",
	   count(*) FILTER (WHERE fa = fb) AS "within family"
FROM truth_est GROUP BY 1 ORDER BY 1;

\echo 'Estimate only: its false positives (est >= 0.8, J < 0.8), by exact J'
SELECT CASE WHEN j >= 0.75 THEN '0.75 <= J < 0.8' WHEN j >= 0.7 THEN '0.70 <= J < 0.75'
			ELSE 'J < 0.70' END AS exact, count(*) AS pairs,
	   round(min(j)::numeric, 4) AS "min J", round(min(f.sim)::numeric, 4) AS "min est",
	   round(max(f.sim)::numeric, 4) AS "max est"
FROM (SELECT f.*, jaccard(x.body, y.body) AS j
	  FROM found f JOIN docs x ON x.id = f.a JOIN docs y ON y.id = f.b
	  WHERE f.label LIKE 'a:%' AND f.run = 1
		AND NOT EXISTS (SELECT FROM truth t WHERE t.a = f.a AND t.b = f.b)) f
GROUP BY 1 ORDER BY min(j) DESC;

-- the misses of the verified method (the built-in one if it finished, the
-- composed one otherwise), pair by pair
SELECT coalesce((SELECT label FROM bench_pr WHERE label LIKE 'b:%' AND ok > 0),
				(SELECT label FROM bench_pr WHERE label LIKE 'c:%')) AS vlabel \gset
\echo
SELECT format('Missed by %s (first 30 by exact J)', :'vlabel') AS l \gset
\echo :l
SELECT t.a, t.b, t.fa AS "family a", t.fb AS "family b", x.n AS "shingles a", y.n AS "shingles b",
	   round(t.j::numeric, 4) AS "exact J", round(t.est::numeric, 4) AS est,
	   round(((t.j - t.est) / nullif(sqrt(t.j * (1 - t.j) / 128), 0))::numeric, 1) AS "sd below"
FROM truth_est t JOIN dtok x ON x.id = t.a JOIN dtok y ON y.id = t.b
WHERE NOT EXISTS (SELECT FROM found f WHERE f.label = :'vlabel' AND f.run = 1 AND f.a = t.a AND f.b = t.b)
ORDER BY t.j DESC, t.a, t.b LIMIT 30;
\endif

\if :part_b
--------------------------------------------------------------------------
-- Part b: speed
--------------------------------------------------------------------------

\warn '== part b: sketching big'
INSERT INTO bench_step (part, step, s) VALUES ('b', 'big: \copy into the unlogged staging table big_load', :load_s);
SELECT count(*) AS big_rows, count(*) FILTER (WHERE family = id) AS big_bases,
	   round(avg(octet_length(body))) AS big_avg_bytes,
	   round(sum(octet_length(body)) / 1e9, 2) AS big_gb,
	   pg_size_pretty(pg_total_relation_size('big_load')) AS load_size
FROM big_load \gset
SET max_parallel_workers_per_gather = 2;
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE big AS SELECT id, family, minhash_sketch(body) AS mh FROM big_load;
INSERT INTO bench_step (part, step, s)
VALUES ('b', 'big: CREATE TABLE big AS SELECT id, family, minhash_sketch(body) (2 workers)',
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
DROP TABLE big_load;
RESET max_parallel_workers_per_gather;
SELECT clock_timestamp() AS t0 \gset
ALTER TABLE big ADD PRIMARY KEY (id);
VACUUM (ANALYZE) big;
INSERT INTO bench_step (part, step, s)
VALUES ('b', 'big: primary key + VACUUM (ANALYZE)',
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
SELECT pg_size_pretty(pg_total_relation_size('big')) AS big_size \gset

\warn '== part b: the 20k table'
\set store false
\set nruns :runs
\set label 'docs: pairs'
\set sql 'SELECT count(*), count(DISTINCT id_a) FROM near_duplicate_pairs(''docs'', ''mh'', ''id'', 0.8)'
:run_timed
\set label 'docs: clusters'
\set sql 'SELECT count(*), count(DISTINCT cluster_id) FROM near_duplicate_clusters(''docs'', ''mh'', ''id'', 0.8)'
:run_timed

\warn '== part b: big'
SELECT CASE WHEN :big_timeout > 0 THEN :big_timeout || 's' ELSE '0' END AS tmo \gset
SET statement_timeout = :'tmo';
\set nruns :big_runs
\set label 'big: pairs'
\set sql 'SELECT count(*), count(DISTINCT id_a) FROM near_duplicate_pairs(''big'', ''mh'', ''id'', 0.8)'
:run_timed
\set label 'big: clusters'
\set sql 'SELECT count(*), count(DISTINCT cluster_id) FROM near_duplicate_clusters(''big'', ''mh'', ''id'', 0.8)'
:run_timed
RESET statement_timeout;

\echo
\echo 'Part b: speed at threshold' :th
SELECT format('big: %s, %s rows (%s bases, 8 edited copies of some), avg %s bytes, %s GB of text (staging table %s); big (id, family, mh) with its key: %s',
			  :'big_corpus', :big_rows, :big_bases, :big_avg_bytes, :big_gb, :'load_size', :'big_size') AS l \gset
\echo :l
SELECT part, step, round(s::numeric, 1) AS seconds FROM bench_step WHERE part IN ('-', 'b') ORDER BY ord;
\echo 'Discovery (count(*) over the function; pairs: rows, distinct id_a; clusters: rows in clusters, clusters);'
\echo 'seconds: median of the runs; temp: pg_stat_database temp files written per run (median)'
SELECT label AS call, ok AS runs, failed,
	   round(med::numeric, 1) AS "median s", round(min::numeric, 1) AS "min s", round(max::numeric, 1) AS "max s",
	   CASE WHEN label LIKE '%pairs' THEN n1 END AS pairs,
	   CASE WHEN label LIKE '%clusters' THEN n1 END AS "rows in clusters",
	   CASE WHEN label LIKE '%clusters' THEN n2 END AS clusters,
	   CASE WHEN n1 <> n1_max OR n2 <> n2_max THEN 'runs differ' ELSE '' END AS " ",
	   pg_size_pretty(temp_bytes::bigint) AS "temp bytes", temp_files::bigint AS "temp files",
	   CASE WHEN failed > 0 THEN failure || ' after ' || round(failed_s::numeric) || ' s' ELSE '' END AS note
FROM bench_runsum WHERE label LIKE 'docs:%' OR label LIKE 'big:%' ORDER BY first;
SELECT format('same-run ratios (medians): big / docs: pairs %s x the time for %s x the rows; clusters / pairs: docs %s x, big %s x',
			  round((SELECT med FROM bench_runsum WHERE label = 'big: pairs')::numeric /
					(SELECT med FROM bench_runsum WHERE label = 'docs: pairs')::numeric, 1),
			  round(:big_rows::numeric / :rows, 1),
			  round((SELECT med FROM bench_runsum WHERE label = 'docs: clusters')::numeric /
					(SELECT med FROM bench_runsum WHERE label = 'docs: pairs')::numeric, 2),
			  round((SELECT med FROM bench_runsum WHERE label = 'big: clusters')::numeric /
					(SELECT med FROM bench_runsum WHERE label = 'big: pairs')::numeric, 2)) AS l \gset
\echo :l
SELECT format('summary: %s docs, all pairs at %s: %s s (target < 120 s), %s pairs; clusters %s s, %s clusters of %s rows; temp files %s',
			  :big_rows, :th, round(p.med::numeric), p.n1, round(c.med::numeric), c.n2, c.n1,
			  pg_size_pretty(p.temp_bytes::bigint)) AS l
FROM bench_runsum p, bench_runsum c WHERE p.label = 'big: pairs' AND c.label = 'big: clusters' \gset
\echo :l
\endif
