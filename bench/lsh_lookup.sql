-- lsh_lookup.sql: near-duplicate lookups through minhash_ops against pg_trgm,
-- all in one session.  ndd is timed and scored at % 0.8, at similar() 0.75
-- and 0.70, and verified (similar() 0.70, then jaccard() >= 0.8).  Run by
-- bench/lsh_lookup.sh, which loads t_load(id, family, edit_rate, doc) and
-- sets :docs, :sub (rows of t_small), :nq (queries per table), :tq
-- (pg_trgm queries), :budget (seconds of pg_trgm per pass), :seqq (queries
-- timed as a sequential scan), :kb16 (on/off), :trgm (whether pg_trgm is
-- installed), :commit, :load_s and :corpus.
--
-- Bookkeeping tables are ordinary tables, not temporary ones: parallel
-- workers cannot read temporary tables, and the ground truth needs them.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET jit = off;
SET maintenance_work_mem = '1GB';
SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS toast
FROM pg_settings WHERE name = 'default_toast_compression' \gset
SET default_toast_compression = :toast;

CREATE EXTENSION ndd;
\if :trgm
CREATE EXTENSION pg_trgm;
\endif

CREATE TABLE bench_step (ord serial, step text, s float8);
INSERT INTO bench_step (step, s) VALUES ('load: \copy into t_load', :load_s);

--------------------------------------------------------------------------
-- Sketches, the big table, its index
--------------------------------------------------------------------------

-- Sketching is parallel safe: let both cores work.  The rewrite of the rows
-- (documents stay compressed) is part of this figure.
\warn '== sketching'
SET max_parallel_workers_per_gather = 2;
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE t AS
SELECT id, family, edit_rate, doc, minhash_sketch(doc) AS mh FROM t_load;
INSERT INTO bench_step (step, s)
VALUES ('sketch: CREATE TABLE t AS ... minhash_sketch(doc), 2 workers',
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
DROP TABLE t_load;

SELECT clock_timestamp() AS t0 \gset
ALTER TABLE t ADD PRIMARY KEY (id);
-- statistics, hint bits and the visibility map, so no lookup pays for them
VACUUM (ANALYZE) t;
INSERT INTO bench_step (step, s)
VALUES ('primary key + VACUUM (ANALYZE)',
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));

-- Lookups: one backend, no JIT, the index forced where one exists.
SET max_parallel_workers_per_gather = 0;
SET ndd.similarity_threshold = 0.8;

SELECT count(*) AS rows, count(*) FILTER (WHERE family = id) AS bases,
	   round(avg(octet_length(doc))) AS avg_bytes,
	   round(sum(octet_length(doc)) / 1e9, 2) AS total_gb,
	   pg_size_pretty(pg_relation_size('t')) AS heap,
	   pg_size_pretty(pg_total_relation_size('t')) AS total,
	   current_setting('server_version') AS server_version
FROM t \gset

-- Query documents: a fixed stride through the ids (bases and edited copies
-- alike), the sketch and the text fetched once, outside any timing.
CREATE TABLE bench_q (qset text, ord int, qid int, base bool, mh minhash, doc text);
INSERT INTO bench_q
SELECT 'big', row_number() OVER (ORDER BY id), id, family = id, mh, doc
FROM t
WHERE id % greatest(:docs / :nq, 1) = 7 % greatest(:docs / :nq, 1)
ORDER BY id LIMIT :nq;

CREATE TABLE bench_idx (ord serial, label text, idx text, rows bigint, build_s float8, bytes bigint);
CREATE TABLE bench_lat (label text, pass int, qset text, ord int, qid int,
						ms float8, status text, ids int[], seq bigserial);
CREATE TABLE bench_plan (label text PRIMARY KEY, plan text);
-- ndd's index lookups: the estimated threshold each one asks the index for
-- (its answer is checked against the rows that similar), and whether it
-- then verifies with exact Jaccard
CREATE TABLE bench_ndd (label text PRIMARY KEY, th numeric, verified bool);
INSERT INTO bench_ndd VALUES
	('ndd t key_bits 13', 0.8, false), ('ndd t key_bits 16', 0.8, false),
	('ndd t bands 27 key_bits 16', 0.8, false),
	('ndd t_small key_bits 13', 0.8, false),
	('ndd t similar 0.75', 0.75, false), ('ndd t similar 0.70', 0.70, false),
	('ndd t verified', 0.70, true),
	('ndd t_small similar 0.75', 0.75, false), ('ndd t_small similar 0.70', 0.70, false),
	('ndd t_small verified', 0.70, true);
CREATE TABLE trgm_ret (qid int, id int, sim real);

-- One lookup, its own top-level statement (so statement_timeout applies to
-- each; a procedure, so CALL prints nothing): the query text gets the
-- sketch ($1 minhash, p_param 'mh'), the document ($1 text, 'doc') or both
-- ($1 minhash, $2 text, 'mh,doc').  Only the EXECUTE is timed: parse,
-- plan, run, fetch the ids.
CREATE PROCEDURE pg_temp.lookup(p_label text, p_pass int, p_qset text, p_ord int,
								p_sql text, p_param text, p_budget_ms float8)
LANGUAGE plpgsql AS $$
DECLARE
	q bench_q;
	t0 timestamptz;
	res int[];
BEGIN
	IF p_budget_ms IS NOT NULL AND
	   (SELECT coalesce(sum(ms), 0) FROM bench_lat
		WHERE label = p_label AND pass = p_pass) > p_budget_ms THEN
		INSERT INTO bench_lat VALUES (p_label, p_pass, p_qset, p_ord, NULL, NULL, 'skipped');
		RETURN;
	END IF;
	SELECT * INTO q FROM bench_q WHERE qset = p_qset AND ord = p_ord;
	BEGIN
		t0 := clock_timestamp();
		IF p_param = 'doc' THEN
			EXECUTE p_sql INTO res USING q.doc;
		ELSIF p_param = 'mh,doc' THEN
			EXECUTE p_sql INTO res USING q.mh, q.doc;
		ELSE
			EXECUTE p_sql INTO res USING q.mh;
		END IF;
		INSERT INTO bench_lat VALUES (p_label, p_pass, p_qset, p_ord, q.qid,
			extract(epoch FROM clock_timestamp() - t0) * 1000, 'ok', coalesce(res, '{}'));
	EXCEPTION WHEN query_canceled THEN
		INSERT INTO bench_lat VALUES (p_label, p_pass, p_qset, p_ord, q.qid,
			extract(epoch FROM clock_timestamp() - t0) * 1000, 'timeout');
	END;
END
$$;

-- The plan of the first query, as node types and index names.
CREATE PROCEDURE pg_temp.plan_of(p_label text, p_qset text, p_sql text, p_param text)
LANGUAGE plpgsql AS $$
DECLARE
	q bench_q;
	plan jsonb;
BEGIN
	SELECT * INTO q FROM bench_q WHERE qset = p_qset AND ord = 1;
	IF p_param = 'doc' THEN
		EXECUTE 'EXPLAIN (FORMAT JSON) ' || p_sql INTO plan USING q.doc;
	ELSIF p_param = 'mh,doc' THEN
		EXECUTE 'EXPLAIN (FORMAT JSON) ' || p_sql INTO plan USING q.mh, q.doc;
	ELSE
		EXECUTE 'EXPLAIN (FORMAT JSON) ' || p_sql INTO plan USING q.mh;
	END IF;
	INSERT INTO bench_plan VALUES (p_label,
		(SELECT string_agg(n #>> '{}', ' > ') FROM jsonb_path_query(plan, 'strict $.**."Node Type"') n) ||
		coalesce(' (' || (SELECT string_agg(n #>> '{}', ', ') FROM jsonb_path_query(plan, 'strict $.**."Index Name"') n) || ')', ''))
	ON CONFLICT DO NOTHING;
END
$$;

-- :'label' over :'qset', queries with ord <= :upto, passes :p0 .. :p1
-- (pass 0 is a warm-up), :param the bound value, :budget_ms or NULL.
-- Rounds go query by query within a pass, each lookup its own statement.
\set run_lookups 'CALL pg_temp.plan_of(:''label'', :''qset'', :''sql'', :''param''); SELECT format(''CALL pg_temp.lookup(%L, %s, %L, %s, %L, %L, %L)'', :''label'', p, :''qset'', ord, :''sql'', :''param'', :budget_ms) FROM bench_q, generate_series(:p0, :p1) p WHERE qset = :''qset'' AND ord <= :upto ORDER BY p, ord \\gexec'

\warn '== index on t (key_bits 13), lookups, sequential scans'
SET enable_seqscan = off;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX t_mh_kb13 ON t USING gin (mh minhash_ops);
INSERT INTO bench_idx (label, idx, rows, build_s, bytes)
VALUES ('ndd minhash_ops, key_bits 13', 't_mh_kb13', :rows,
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz),
		pg_relation_size('t_mh_kb13'));

\set label 'ndd t key_bits 13'
\set qset big
\set sql 'SELECT array_agg(id) FROM t WHERE mh % $1'
\set param mh
\set budget_ms NULL
\set upto :nq
\set p0 0
\set p1 1
:run_lookups

-- ndd's own threshold sweep, through the same index: similar() at 0.75
-- and 0.70, below the 0.758 from which 32 bands of 4 are exact, so the
-- index runs in LSH mode (one matching band of 32 suffices; a pair of
-- similarity 0.7 is found with probability 0.9998) and the recheck keeps
-- the candidates with similarity >= t.  Then the verified lookup: the
-- candidates down to 0.7 (0.8 less three standard deviations of the
-- 128-position estimate), kept if the stored texts' exact Jaccard is >= 0.8:
-- the sketch and the query document are the two parameters.
\warn '== ndd on t: similar() at 0.75 and 0.70, verified lookups'
\set label 'ndd t similar 0.75'
\set sql 'SELECT array_agg(id) FROM t WHERE similar(mh, $1, 0.75)'
:run_lookups
\set label 'ndd t similar 0.70'
\set sql 'SELECT array_agg(id) FROM t WHERE similar(mh, $1, 0.70)'
:run_lookups
\set label 'ndd t verified'
\set sql 'SELECT array_agg(id) FROM t WHERE similar(mh, $1, 0.70) AND jaccard(doc, $2) >= 0.8'
\set param mh,doc
:run_lookups
\set param mh
\set sql 'SELECT array_agg(id) FROM t WHERE mh % $1'

-- The same lookups as a sequential scan, for the ratio: a warm-up on the
-- first query, then :seqq queries.
SET enable_seqscan = on;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
\set label 'ndd t sequential scan'
\set upto 1
\set p0 0
\set p1 0
:run_lookups
\set upto :seqq
\set p0 1
\set p1 1
:run_lookups
RESET enable_bitmapscan;
RESET enable_indexscan;

--------------------------------------------------------------------------
-- Ground truth: exact Jaccard on candidates.  A pair with exact J >= 0.8
-- whose 128-position estimate falls below 0.5 is 8.5 standard deviations
-- (sqrt(0.8 * 0.2 / 128) = 0.035) away: the candidates miss nothing.
--------------------------------------------------------------------------

\warn '== ground truth on t'
SET max_parallel_workers_per_gather = 2;
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE truth AS
SELECT q.qset, q.qid, t.id, similarity(t.mh, q.mh) AS est, jaccard(t.doc, q.doc) AS exact
FROM t JOIN bench_q q ON similarity(t.mh, q.mh) >= 0.5 AND t.id <> q.qid
WHERE q.qset = 'big';
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 1) AS truth_big_s \gset
SET max_parallel_workers_per_gather = 0;

\if :kb16
\warn '== index on t (key_bits 16), lookups'
DROP INDEX t_mh_kb13;
SET enable_seqscan = off;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX t_mh_kb16 ON t USING gin (mh minhash_ops (key_bits = 16));
INSERT INTO bench_idx (label, idx, rows, build_s, bytes)
VALUES ('ndd minhash_ops, key_bits 16', 't_mh_kb16', :rows,
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz),
		pg_relation_size('t_mh_kb16'));
\set label 'ndd t key_bits 16'
\set upto :nq
\set p0 0
\set p1 1
:run_lookups
DROP INDEX t_mh_kb16;
\endif

-- The fewest bands still exact at 0.8 that leave a second matching band to
-- demand (27 of 4 rows: a pair at 0.8 differs on at most 25 positions, so
-- it shares 2 bands), with 16 bits per key: GIN walks the union of the 26
-- posting lists any such pair must meet, an eighth as long as the default's.
-- Built twice.  GIN's build writes its keys in sorted order and splits a
-- full entry page in half, so a build that fits in one pass of
-- maintenance_work_mem leaves its entry pages about half empty; a build of
-- several passes grows the entries of the pages already written and fills
-- them.  The first build shows the size with 1GB, the second (timed) 32MB.
\warn '== index on t (27 bands of 4, key_bits 16), lookups'
DROP INDEX IF EXISTS t_mh_kb13;
SET enable_seqscan = off;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX t_mh_b27 ON t USING gin (mh minhash_ops (bands = 27, rows = 4, key_bits = 16));
INSERT INTO bench_idx (label, idx, rows, build_s, bytes)
VALUES ('ndd minhash_ops, bands 27, rows 4, key_bits 16, maintenance_work_mem 1GB', 't_mh_b27', :rows,
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz),
		pg_relation_size('t_mh_b27'));
DROP INDEX t_mh_b27;
SET maintenance_work_mem = '32MB';
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX t_mh_b27 ON t USING gin (mh minhash_ops (bands = 27, rows = 4, key_bits = 16));
INSERT INTO bench_idx (label, idx, rows, build_s, bytes)
VALUES ('ndd minhash_ops, bands 27, rows 4, key_bits 16, maintenance_work_mem 32MB', 't_mh_b27', :rows,
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz),
		pg_relation_size('t_mh_b27'));
SET maintenance_work_mem = '1GB';
\set label 'ndd t bands 27 key_bits 16'
\set qset big
\set sql 'SELECT array_agg(id) FROM t WHERE mh % $1'
\set param mh
\set budget_ms NULL
\set upto :nq
\set p0 0
\set p1 1
:run_lookups
DROP INDEX t_mh_b27;

--------------------------------------------------------------------------
-- The subset: pg_trgm and ndd on the same rows
--------------------------------------------------------------------------

\warn '== subset t_small: truth, ndd index, lookups'
SET enable_seqscan = on;
CREATE TABLE t_small AS SELECT * FROM t WHERE id <= :sub;
ALTER TABLE t_small ADD PRIMARY KEY (id);
VACUUM (ANALYZE) t_small;
SELECT count(*) AS sub_rows, round(avg(octet_length(doc))) AS sub_avg_bytes FROM t_small \gset

INSERT INTO bench_q
SELECT 'small', row_number() OVER (ORDER BY id), id, family = id, mh, doc
FROM t_small
WHERE id % greatest(:sub / :nq, 1) = 7 % greatest(:sub / :nq, 1)
ORDER BY id LIMIT :nq;
SELECT count(*) AS nq_small FROM bench_q WHERE qset = 'small' \gset
-- pg_trgm's queries: an even spread over the subset's, renumbered
INSERT INTO bench_q
SELECT 'trgm', row_number() OVER (ORDER BY ord), qid, base, mh, doc
FROM bench_q
WHERE qset = 'small' AND ord % greatest(:nq_small / :tq, 1) = 1 % greatest(:nq_small / :tq, 1)
ORDER BY ord LIMIT :tq;

SET max_parallel_workers_per_gather = 2;
INSERT INTO truth
SELECT q.qset, q.qid, t.id, similarity(t.mh, q.mh), jaccard(t.doc, q.doc)
FROM t_small t JOIN bench_q q ON similarity(t.mh, q.mh) >= 0.5 AND t.id <> q.qid
WHERE q.qset = 'small';
SET max_parallel_workers_per_gather = 0;

SET enable_seqscan = off;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX t_small_mh ON t_small USING gin (mh minhash_ops);
INSERT INTO bench_idx (label, idx, rows, build_s, bytes)
VALUES ('ndd minhash_ops, key_bits 13', 't_small_mh', :sub_rows,
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz),
		pg_relation_size('t_small_mh'));
\set label 'ndd t_small key_bits 13'
\set qset small
\set sql 'SELECT array_agg(id) FROM t_small WHERE mh % $1'
\set upto :nq
\set p0 0
\set p1 1
:run_lookups
-- the sweep and the verified lookups, as on t
\set label 'ndd t_small similar 0.75'
\set sql 'SELECT array_agg(id) FROM t_small WHERE similar(mh, $1, 0.75)'
:run_lookups
\set label 'ndd t_small similar 0.70'
\set sql 'SELECT array_agg(id) FROM t_small WHERE similar(mh, $1, 0.70)'
:run_lookups
\set label 'ndd t_small verified'
\set sql 'SELECT array_agg(id) FROM t_small WHERE similar(mh, $1, 0.70) AND jaccard(doc, $2) >= 0.8'
\set param mh,doc
:run_lookups
\set param mh

\set trgm_th NULL
\set trgm_low NULL
\if :trgm
\warn '== pg_trgm index, threshold sweep, best threshold'
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX t_small_trgm ON t_small USING gin (doc gin_trgm_ops);
INSERT INTO bench_idx (label, idx, rows, build_s, bytes)
VALUES ('pg_trgm gin_trgm_ops', 't_small_trgm', :sub_rows,
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz),
		pg_relation_size('t_small_trgm'));

-- pg_trgm's similarity of the true pairs: every threshold up to the lowest
-- of them (in steps of 0.05) has full recall, so a sweep from there up
-- (but no lower than 0.5, and no higher than 0.8) covers the best F1.
CREATE TABLE trgm_truth AS
SELECT tr.qid, tr.id, similarity(t.doc, q.doc) AS sim
FROM truth tr JOIN bench_q q ON q.qset = 'trgm' AND q.qid = tr.qid
JOIN t_small t ON t.id = tr.id
WHERE tr.qset = 'small' AND tr.exact >= 0.8;
SELECT least(0.8, greatest(0.5, coalesce(floor(min(sim) * 20) / 20, 0.5)))::numeric(3,2) AS trgm_low
FROM trgm_truth \gset

-- Sweep: every row at least :trgm_low similar, one lookup each (no warm-up:
-- they take seconds), and whatever fits in the budget.
SET pg_trgm.similarity_threshold = :trgm_low;
SET statement_timeout = '30s';
SELECT 'pg_trgm t_small % ' || :'trgm_low' AS label \gset
\set qset trgm
\set sql 'SELECT array_agg(id) FROM t_small WHERE doc % $1'
\set param doc
SELECT :budget * 1000 AS budget_ms \gset
\set upto :tq
\set p0 1
\set p1 1
:run_lookups
RESET statement_timeout;

-- pg_trgm's similarity for every row the sweep returned, then each
-- threshold of the grid scored against the truth (pairs, self excluded).
INSERT INTO trgm_ret
SELECT l.qid, r.id, similarity(t.doc, q.doc) AS sim
FROM bench_lat l CROSS JOIN unnest(l.ids) r(id)
JOIN bench_q q ON q.qset = 'trgm' AND q.qid = l.qid
JOIN t_small t ON t.id = r.id
WHERE l.label = :'label' AND l.status = 'ok' AND r.id <> l.qid;
CREATE TABLE trgm_sweep AS
WITH answered AS (SELECT qid FROM bench_lat WHERE label = :'label' AND status = 'ok'),
th AS (SELECT (:trgm_low + 0.05 * i)::numeric(3,2) AS th
	   FROM generate_series(0, 19) i WHERE :trgm_low + 0.05 * i < 0.999),
tp AS (SELECT tr.qid, tr.id FROM truth tr JOIN answered USING (qid)
	   WHERE tr.qset = 'small' AND tr.exact >= 0.8)
SELECT th.th,
	   (SELECT count(*) FROM trgm_ret r WHERE r.sim >= th.th) AS returned,
	   (SELECT count(*) FROM tp) AS truth,
	   (SELECT count(*) FROM trgm_ret r JOIN tp USING (qid, id) WHERE r.sim >= th.th) AS hits
FROM th;
SELECT th AS trgm_th FROM trgm_sweep
ORDER BY coalesce(2.0 * hits / nullif(returned + truth, 0), 0) DESC, th DESC LIMIT 1 \gset

-- The best threshold, timed.
SET pg_trgm.similarity_threshold = :trgm_th;
SET statement_timeout = '30s';
SELECT 'pg_trgm t_small % ' || :'trgm_th' AS label \gset
:run_lookups
RESET statement_timeout;
RESET pg_trgm.similarity_threshold;
\endif
RESET enable_seqscan;

--------------------------------------------------------------------------
-- Report
--------------------------------------------------------------------------


-- Summaries first, as tables, so the closing line can quote them.
CREATE TABLE bench_latsum AS
SELECT l.label, min(l.seq) AS first,
	   count(*) FILTER (WHERE status <> 'skipped') AS queries,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
	   percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99,
	   avg(ms) AS mean, min(ms) AS min, max(ms) AS max,
	   avg(cardinality(ids)) AS rows_per,
	   count(*) FILTER (WHERE status = 'timeout') AS timeouts,
	   count(*) FILTER (WHERE status = 'skipped') AS skipped
FROM bench_lat l
WHERE l.pass = 1
GROUP BY l.label;

-- Recall and precision over pairs (query, other row), self excluded: the
-- rows each method returned against exact Jaccard >= 0.8.  tset: the
-- truth's query set; qset: the queries scored, those that every lookup in
-- also answered (pg_trgm's rows and ndd's on its queries compare the
-- queries both pg_trgm passes answered); label: where the rows come from;
-- sweep: the rows come from the pg_trgm sweep, cut at 0.8.  ord is the
-- order of the table: per set of queries, ndd at 0.8, 0.75, 0.70, then
-- verified.
CREATE TABLE bench_method (ord int, method text, label text, tset text, qset text,
						   sweep bool, also text[]);
INSERT INTO bench_method
SELECT m.ord + tb.ord, m.method || ', ' || tb.tname, 'ndd ' || tb.tname || m.suffix,
	   tb.qset, tb.qset, false, ARRAY['ndd ' || tb.tname || m.suffix]
FROM (VALUES (10, 't', 'big'), (20, 't_small', 'small')) tb(ord, tname, qset),
	 (VALUES (0, 'ndd % 0.8', ' key_bits 13'), (1, 'ndd similar 0.75', ' similar 0.75'),
			 (2, 'ndd similar 0.70', ' similar 0.70'),
			 (3, 'ndd similar 0.70 + jaccard >= 0.8', ' verified')) m(ord, method, suffix);
\if :trgm
SELECT ARRAY['ndd t_small key_bits 13', 'pg_trgm t_small % ' || :'trgm_low',
			 'pg_trgm t_small % ' || :'trgm_th'] AS trgm_also \gset
INSERT INTO bench_method
SELECT m.ord + 10, m.method || ', pg_trgm''s queries', m.label, 'small', 'trgm', false,
	   :'trgm_also'::text[] || m.label
FROM bench_method m WHERE m.ord BETWEEN 20 AND 29;
INSERT INTO bench_method VALUES
	(34, 'pg_trgm % ' || :'trgm_th' || ', t_small', 'pg_trgm t_small % ' || :'trgm_th', 'small', 'trgm', false, :'trgm_also'),
	(35, 'pg_trgm % 0.80, t_small (cut from the sweep)', 'pg_trgm t_small % ' || :'trgm_low', 'small', 'trgm', true, :'trgm_also');
\endif
CREATE TABLE bench_pr AS
WITH q AS (
	-- the queries each method answered
	SELECT m.ord, bq.qid
	FROM bench_method m JOIN bench_q bq ON bq.qset = m.qset
	WHERE NOT EXISTS (
		SELECT FROM unnest(m.also) a(label) WHERE NOT EXISTS (
			SELECT FROM bench_lat l WHERE l.label = a.label AND l.pass = 1
			AND l.qset IN (m.qset, m.tset) AND l.qid = bq.qid AND l.status = 'ok'))
), ret AS (
	SELECT DISTINCT m.ord, l.qid, r.id
	FROM bench_method m JOIN bench_lat l ON l.label = m.label AND l.pass = 1 AND l.status = 'ok'
	CROSS JOIN unnest(l.ids) r(id)
	WHERE NOT m.sweep AND r.id <> l.qid AND l.qid IN (SELECT qid FROM q WHERE q.ord = m.ord)
	UNION ALL
	SELECT m.ord, r.qid, r.id FROM bench_method m, trgm_ret r
	WHERE m.sweep AND r.sim >= 0.8 AND r.qid IN (SELECT qid FROM q WHERE q.ord = m.ord)
), tp AS (
	SELECT q.ord, tr.qid, tr.id
	FROM q JOIN bench_method m USING (ord)
	JOIN truth tr ON tr.qset = m.tset AND tr.qid = q.qid
	WHERE tr.exact >= 0.8
), c AS (
	SELECT m.ord, m.method,
		   (SELECT count(*) FROM q WHERE q.ord = m.ord) AS queries,
		   (SELECT count(DISTINCT qid) FROM tp WHERE tp.ord = m.ord) AS with_dups,
		   (SELECT count(*) FROM tp WHERE tp.ord = m.ord) AS truth,
		   (SELECT count(*) FROM ret WHERE ret.ord = m.ord) AS returned,
		   (SELECT count(*) FROM ret JOIN tp USING (ord, qid, id) WHERE ret.ord = m.ord) AS hits
	FROM bench_method m
)
SELECT c.*, hits::numeric / nullif(truth, 0) AS recall,
	   hits::numeric / nullif(returned, 0) AS precision,
	   2.0 * hits / nullif(returned + truth, 0) AS f1
FROM c;

\pset footer off
SELECT format('corpus %s: %s docs (%s bases, the rest edited copies), avg %s bytes, %s GB of text; TOAST %s',
			  :'corpus', :rows, :bases, :avg_bytes, :total_gb, :'toast') AS l1,
	   format('table t: heap %s, %s with TOAST and indexes; t_small: the first %s rows of t, avg %s bytes',
			  :'heap', :'total', :sub_rows, :sub_avg_bytes) AS l2,
	   format('lookups: one backend, jit off, ndd.similarity_threshold 0.8, shared_buffers %s; builds: maintenance_work_mem 1GB (the 27-band index: also 32MB, the one timed)',
			  current_setting('shared_buffers')) AS l3 \gset
\echo
\echo 'ndd LSH lookup benchmark: ndd' :commit 'on PostgreSQL' :server_version
\echo :l1
\echo :l2
\echo :l3
\echo
\echo 'Set-up and index builds'
SELECT step, round(s::numeric, 1) AS seconds FROM bench_step ORDER BY ord;
SELECT i.label AS index, i.idx AS name, i.rows,
	   round(i.build_s::numeric, 1) AS "build s",
	   pg_size_pretty(i.bytes) AS size,
	   round(i.bytes::numeric / i.rows) AS "bytes/row"
FROM bench_idx i ORDER BY ord;

\echo 'Lookup latency, ms per lookup (parse, plan, execute, fetch the ids): ndd after one warm-up pass;'
\echo 'pg_trgm one pass per threshold, the sweep at the lowest first; rows/lookup counts the query itself'
SELECT s.label AS lookup, s.queries,
	   round(s.p50::numeric, 2) AS p50, round(s.p99::numeric, 2) AS p99,
	   round(s.mean::numeric, 2) AS mean, round(s.min::numeric, 2) AS min,
	   round(s.max::numeric, 2) AS max,
	   round(s.rows_per::numeric, 1) AS "rows/lookup",
	   s.timeouts, s.skipped, p.plan
FROM bench_latsum s LEFT JOIN bench_plan p USING (label)
ORDER BY s.first;

-- same-run ratio: the sequential scans against the index on the same queries
SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY s.ms)::numeric, 1) AS seq_med,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY i.ms)::numeric, 2) AS idx_med_same,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY s.ms) /
			  percentile_cont(0.5) WITHIN GROUP (ORDER BY i.ms))::numeric) AS ratio
FROM bench_lat s JOIN bench_lat i ON i.qset = s.qset AND i.ord = s.ord
WHERE s.label = 'ndd t sequential scan' AND s.pass = 1
  AND i.label = 'ndd t key_bits 13' AND i.pass = 1 \gset
SELECT format('sequential scan of t: median %s ms over %s queries; the key_bits 13 index on the same queries: %s ms; ratio %s x',
			  :seq_med, :seqq, :idx_med_same, :ratio) AS l \gset
\echo :l

-- The index returns exactly the rows with similarity >= t (exact from
-- 0.758 up, LSH below), and the verified lookups those with J >= 0.8 too?
SELECT string_agg(format('%s: %s of %s', label, same, n), '; ' ORDER BY first) AS l
FROM (SELECT l.label, min(l.seq) AS first, count(*) AS n,
			 count(*) FILTER (WHERE (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(l.ids) x WHERE x <> l.qid)
							  = (SELECT coalesce(array_agg(tr.id ORDER BY tr.id), '{}') FROM truth tr
								 WHERE tr.qset = l.qset AND tr.qid = l.qid AND tr.est >= n.th
								 AND (NOT n.verified OR tr.exact >= 0.8))) AS same
	  FROM bench_lat l JOIN bench_ndd n USING (label)
	  WHERE l.pass = 1 AND l.status = 'ok'
	  GROUP BY l.label) s \gset
\echo 'lookups whose answer is exactly the rows with similarity >= t (% at t = 0.8; verified: and J >= 0.8):' :l
SELECT format('truth: exact jaccard() (5-word shingles) on the pairs with similarity >= 0.5 (a pair with J >= 0.8 estimated below 0.5 is 8.5 sigma out at K = 128); on t: %s such pairs (%s s, 2 workers), %s with J >= 0.8, %s with similarity >= 0.8',
			  count(*), :truth_big_s, count(*) FILTER (WHERE exact >= 0.8),
			  count(*) FILTER (WHERE est >= 0.8)) AS l
FROM truth WHERE qset = 'big' \gset
\echo :l

\if :trgm
\echo
SELECT count(*) FILTER (WHERE status = 'ok') AS sw_ok, count(*) AS sw_n FROM bench_lat
WHERE label = 'pg_trgm t_small % ' || :'trgm_low' \gset
\echo 'pg_trgm threshold sweep on t_small (' :sw_ok 'of' :sw_n 'queries answered): the pairs it returned, scored against J >= 0.8, self excluded'
SELECT th AS threshold, returned, truth, hits,
	   round(hits::numeric / nullif(truth, 0), 3) AS recall,
	   round(hits::numeric / nullif(returned, 0), 3) AS precision,
	   round(2.0 * hits / nullif(returned + truth, 0), 3) AS f1,
	   CASE WHEN th = :trgm_th THEN 'best F1' ELSE '' END AS " "
FROM trgm_sweep ORDER BY th;
\endif

\echo 'Recall and precision against exact Jaccard >= 0.8 (pairs, self excluded; "with dups": queries that have one);'
\echo 'ndd similar 0.75 / 0.70: the index answer at that estimated threshold (LSH mode below 0.758);'
\echo 'ndd similar 0.70 + jaccard >= 0.8: those rows, kept if the stored texts'' exact Jaccard is >= 0.8'
SELECT method, queries, with_dups AS "with dups", truth, returned, hits,
	   round(recall, 3) AS recall, round(precision, 3) AS precision, round(f1, 3) AS f1
FROM bench_pr ORDER BY ord;

SELECT format('ndd, %s docs: index %s B/row, build %s s, p50 %s ms, p99 %s ms, recall %s, precision %s',
			  :rows, round(i.bytes::numeric / i.rows), round(i.build_s::numeric),
			  round(s.p50::numeric, 2), round(s.p99::numeric, 2),
			  round(pr.recall, 3), round(pr.precision, 3)) AS s_ndd
FROM bench_idx i, bench_latsum s, bench_pr pr
WHERE i.idx = 't_mh_kb13' AND s.label = 'ndd t key_bits 13' AND pr.ord = 10 \gset
SELECT format('ndd verified (similar(mh, q, 0.70) AND jaccard(doc, q_doc) >= 0.8), %s docs: p50 %s ms, p99 %s ms, recall %s, precision %s',
			  :rows, round(s.p50::numeric, 2), round(s.p99::numeric, 2),
			  round(pr.recall, 3), round(pr.precision, 3)) AS s_ver
FROM bench_latsum s, bench_pr pr
WHERE s.label = 'ndd t verified' AND pr.ord = 13 \gset
\echo
\if :trgm
SELECT format('pg_trgm %% %s, %s docs: index %s B/row, build %s s, p50 %s ms, p99 %s ms, recall %s, precision %s (ndd on the same rows and queries: %s B/row, p50 %s ms, recall %s, precision %s)',
			  :'trgm_th', :sub_rows, round(i.bytes::numeric / i.rows), round(i.build_s::numeric, 1),
			  round(s.p50::numeric), round(s.p99::numeric),
			  round(pr.recall, 3), round(pr.precision, 3),
			  round(ni.bytes::numeric / ni.rows),
			  (SELECT round((percentile_cont(0.5) WITHIN GROUP (ORDER BY l.ms))::numeric, 2)
			   FROM bench_lat l JOIN bench_lat b ON b.label = s.label AND b.pass = 1
			   AND b.status = 'ok' AND b.qid = l.qid
			   WHERE l.label = 'ndd t_small key_bits 13' AND l.pass = 1),
			  round(npr.recall, 3), round(npr.precision, 3)) AS s_trgm
FROM bench_idx i, bench_latsum s, bench_pr pr, bench_idx ni, bench_pr npr
WHERE i.idx = 't_small_trgm' AND s.label = 'pg_trgm t_small % ' || :'trgm_th' AND pr.ord = 34
  AND ni.idx = 't_small_mh' AND npr.ord = 30 \gset
-- the verified lookup on pg_trgm's rows and queries
SELECT format('%s (on pg_trgm''s %s docs and queries: p50 %s ms, p99 %s ms, recall %s, precision %s)',
			  :'s_ver', :sub_rows,
			  round((percentile_cont(0.5) WITHIN GROUP (ORDER BY l.ms))::numeric, 2),
			  round((percentile_cont(0.99) WITHIN GROUP (ORDER BY l.ms))::numeric, 2),
			  round(min(pr.recall), 3), round(min(pr.precision), 3)) AS s_ver
FROM bench_lat l JOIN bench_lat b ON b.label = 'pg_trgm t_small % ' || :'trgm_th'
	 AND b.pass = 1 AND b.status = 'ok' AND b.qid = l.qid
CROSS JOIN bench_pr pr
WHERE l.label = 'ndd t_small verified' AND l.pass = 1 AND pr.ord = 33 \gset
\echo 'summary:' :s_ndd '|' :s_trgm '|' :s_ver '| targets for ndd at 1M: p50 <= 2 ms, p99 <= 10 ms, <= 200 B/row, recall >= pg_trgm''s'
\else
\echo 'summary:' :s_ndd '|' :s_ver '| targets at 1M: p50 <= 2 ms, p99 <= 10 ms, <= 200 B/row'
\endif
SELECT format('fast layout, %s docs: minhash_ops(bands = 27, rows = 4, key_bits = 16) built with maintenance_work_mem 32MB: %s B/row (%s B/row with 1GB), build %s s, p50 %s ms, p99 %s ms; target p50 <= 0.3 ms, p99 <= 2 ms, <= 200 B/row',
			  :rows, round(i.bytes::numeric / i.rows), round(o.bytes::numeric / o.rows),
			  round(i.build_s::numeric), round(s.p50::numeric, 2), round(s.p99::numeric, 2)) AS s_fast
FROM bench_idx i, bench_idx o, bench_latsum s
WHERE i.label LIKE '%bands 27%32MB' AND o.label LIKE '%bands 27%1GB'
  AND s.label = 'ndd t bands 27 key_bits 16' \gset
\echo :s_fast
