-- simhash_features.sql: precision and recall of simhash % (within 3 bits)
-- for several feature sets against exact Jaccard.  Run by
-- bench/simhash_features.sh, which loads t(id, family, edit_rate, doc).

\set ON_ERROR_STOP 1
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET client_min_messages = warning;
SET work_mem = '256MB';
\set lowest 0.7

-- Ground truth: every pair with Jaccard >= :lowest over 5-word shingles.
-- Prefix filtering (Chaudhuri et al. 2006; Bayardo et al. 2007): order each
-- set's shingles from rarest to commonest; two sets with J >= t share a
-- shingle among their first n - ceil(t n) + 1, and their sizes are within
-- a factor t, so other pairs cannot reach t.  The candidates are then
-- measured exactly with jaccard() over each document's set of shingles.
CREATE TEMP TABLE sh AS
SELECT id, hashtextextended(s, 0) AS h FROM t, unnest(show_shingles(doc)) s;
ANALYZE sh;
CREATE TEMP TABLE sets AS SELECT id, count(*) AS n, array_agg(h) AS hs FROM sh GROUP BY id;
CREATE TEMP TABLE freq AS SELECT h, count(*) AS f FROM sh GROUP BY h;
ANALYZE sets;
ANALYZE freq;
CREATE TEMP TABLE pre AS
SELECT id, h FROM (
	SELECT sh.id, sh.h, sets.n,
		   row_number() OVER (PARTITION BY sh.id ORDER BY freq.f, sh.h) AS rn
	FROM sh JOIN freq USING (h) JOIN sets USING (id)) x
WHERE rn <= n - ceil(:lowest * n) + 1;
ANALYZE pre;
CREATE TEMP TABLE cand AS
SELECT DISTINCT a.id AS a, b.id AS b
FROM pre a JOIN pre b ON a.h = b.h AND a.id < b.id;
ANALYZE cand;
CREATE TEMP TABLE truth AS
SELECT * FROM (
	SELECT c.a, c.b, jaccard(x.hs, y.hs) AS j
	FROM cand c JOIN sets x ON x.id = c.a JOIN sets y ON y.id = c.b
	WHERE least(x.n, y.n) >= :lowest * greatest(x.n, y.n)
	OFFSET 0) s				-- OFFSET 0: compute each Jaccard once
WHERE j >= :lowest;
CREATE INDEX ON truth (a, b);
ANALYZE truth;

SELECT count(*) AS docs FROM t \gset
SELECT count(*) AS cand_pairs FROM cand \gset
\echo
\echo 'ndd simhash feature sets: ndd' :commit
\echo :docs 'docs;' :cand_pairs 'candidate pairs from prefix filtering; exact pairs by Jaccard of 5-word shingles:'
\pset footer off
SELECT count(*) FILTER (WHERE j >= 0.7) AS "J>=0.7",
	   count(*) FILTER (WHERE j >= 0.8) AS "J>=0.8",
	   count(*) FILTER (WHERE j >= 0.9) AS "J>=0.9",
	   count(*) FILTER (WHERE j >= 0.95) AS "J>=0.95"
FROM truth;

-- One pass per feature set: fingerprints, the distances of every exact
-- pair, and every pair within 3 bits by a self-join through a GIN index.
CREATE TEMP TABLE feature_set (ord int, name text, expr text);
INSERT INTO feature_set VALUES
	(1, 'word 1 (unigrams)', 'simhash(doc, shingle_size => 1)'),
	(2, 'word 2', 'simhash(doc, shingle_size => 2)'),
	(3, 'word 3', 'simhash(doc, shingle_size => 3)'),
	(4, 'word 5', 'simhash(doc, shingle_size => 5)'),
	(5, 'char 4', 'simhash(doc, shingle_size => 4, unit => ''char'')'),
	(6, 'char 8', 'simhash(doc, shingle_size => 8, unit => ''char'')');
CREATE TEMP TABLE found (ord int, a int, b int, j float8);
CREATE TEMP TABLE truth_d (ord int, j float8, d int);
CREATE TEMP TABLE timing (ord int, ms float8);

CREATE FUNCTION pg_temp.run(ord int, expr text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz;
BEGIN
	DROP TABLE IF EXISTS f;
	t0 := clock_timestamp();
	EXECUTE format('CREATE TEMP TABLE f AS SELECT id, %s AS fp FROM t', expr);
	INSERT INTO timing VALUES (ord, extract(epoch FROM clock_timestamp() - t0) * 1000);
	CREATE INDEX ON f (id);
	CREATE INDEX ON f USING gin (fp);
	ANALYZE f;
	INSERT INTO truth_d
	SELECT ord, tr.j, hamming_distance(fa.fp, fb.fp)
	FROM truth tr JOIN f fa ON fa.id = tr.a JOIN f fb ON fb.id = tr.b;
	INSERT INTO found
	SELECT ord, a.id, b.id, jaccard(x.hs, y.hs)
	FROM f a JOIN f b ON a.fp % b.fp AND a.id < b.id
	JOIN sets x ON x.id = a.id JOIN sets y ON y.id = b.id;
END $$;

SET ndd.hamming_threshold = 3;
DO $$ BEGIN PERFORM pg_temp.run(ord, expr) FROM feature_set ORDER BY ord; END $$;

\echo
\echo 'pairs within 3 bits; precision (P) and recall (R) against J >= 0.7 .. 0.95:'
WITH tot AS (
	SELECT count(*) FILTER (WHERE j >= 0.7) AS t7, count(*) FILTER (WHERE j >= 0.8) AS t8,
		   count(*) FILTER (WHERE j >= 0.9) AS t9, count(*) FILTER (WHERE j >= 0.95) AS t95
	FROM truth
)
SELECT fs.name AS features,
	   round((SELECT ms FROM timing WHERE timing.ord = fs.ord)::numeric * 1000 / :docs, 1) AS "us/doc",
	   count(f.j) AS pairs,
	   round(avg((f.j >= 0.5)::int), 3) AS "P .5",
	   round(avg((f.j >= 0.7)::int), 3) AS "P .7",
	   round(count(*) FILTER (WHERE f.j >= 0.7)::numeric / tot.t7, 3) AS "R .7",
	   round(avg((f.j >= 0.8)::int), 3) AS "P .8",
	   round(count(*) FILTER (WHERE f.j >= 0.8)::numeric / tot.t8, 3) AS "R .8",
	   round(avg((f.j >= 0.9)::int), 3) AS "P .9",
	   round(count(*) FILTER (WHERE f.j >= 0.9)::numeric / tot.t9, 3) AS "R .9",
	   round(count(*) FILTER (WHERE f.j >= 0.95)::numeric / tot.t95, 3) AS "R .95"
FROM feature_set fs LEFT JOIN found f USING (ord), tot
GROUP BY fs.ord, fs.name, tot.t7, tot.t8, tot.t9, tot.t95
ORDER BY fs.ord;

\echo 'median Hamming distance of the exact pairs, by Jaccard band:'
SELECT fs.name AS features,
	   percentile_disc(0.5) WITHIN GROUP (ORDER BY d) FILTER (WHERE j >= 0.95) AS "J>=.95",
	   percentile_disc(0.5) WITHIN GROUP (ORDER BY d) FILTER (WHERE j >= 0.9 AND j < 0.95) AS "J .9-.95",
	   percentile_disc(0.5) WITHIN GROUP (ORDER BY d) FILTER (WHERE j >= 0.8 AND j < 0.9) AS "J .8-.9",
	   percentile_disc(0.5) WITHIN GROUP (ORDER BY d) FILTER (WHERE j >= 0.7 AND j < 0.8) AS "J .7-.8"
FROM feature_set fs JOIN truth_d USING (ord)
GROUP BY fs.ord, fs.name
ORDER BY fs.ord;
