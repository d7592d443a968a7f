-- topk.sql: top-k search without a threshold, near_duplicate_top_k(..., 10)
-- through a minhash_ops index of one-row bands, against a sequential scan
-- ordered by similarity (the reference) and pg_trgm's <-> over GiST.  Run by
-- bench/topk.sh, which loads t_load(id, family, edit_rate, doc) and sets
-- :docs, :sub (rows of t_small), :nq (queries), :seqq (queries also run as a
-- sequential scan), :kbits (key_bits), :boundq (queries given the
-- posting-list bound), :trgm (pg_trgm installed), :commit and :corpus.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET jit = off;
SET maintenance_work_mem = '1GB';

CREATE EXTENSION ndd;
\if :trgm
CREATE EXTENSION pg_trgm;
\endif

\warn '== sketching'
SET max_parallel_workers_per_gather = 2;
CREATE TABLE t AS
SELECT id, family, edit_rate, doc, minhash_sketch(doc) AS mh FROM t_load;
DROP TABLE t_load;
ALTER TABLE t ADD PRIMARY KEY (id);
VACUUM (ANALYZE) t;
SET max_parallel_workers_per_gather = 0;

SELECT count(*) AS rows, round(avg(octet_length(doc))) AS avg_bytes,
	   current_setting('server_version') AS server_version,
	   current_setting('shared_buffers') AS shared_buffers
FROM t \gset

CREATE TABLE bench_q (qset text, ord int, qid int, mh minhash, doc text);
INSERT INTO bench_q
SELECT 'big', row_number() OVER (ORDER BY id), id, mh, doc
FROM t
WHERE id % greatest(:docs / :nq, 1) = 7 % greatest(:docs / :nq, 1)
ORDER BY id LIMIT :nq;

CREATE TABLE bench_idx (ord serial, label text, idx text, rows bigint, build_s float8, bytes bigint);
CREATE TABLE bench_lat (label text, pass int, qset text, ord int, qid int,
						ms float8, ids int[], sims float8[], seq bigserial);

-- One search, its own statement, timed around the EXECUTE (parse, plan,
-- run, fetch the ids): $1 is the query's sketch ('mh') or text ('doc').
CREATE PROCEDURE pg_temp.search(p_label text, p_pass int, p_qset text, p_ord int,
								p_sql text, p_param text)
LANGUAGE plpgsql AS $$
DECLARE
	q bench_q;
	t0 timestamptz;
	res int[];
	sims float8[];
BEGIN
	SELECT * INTO q FROM bench_q WHERE qset = p_qset AND ord = p_ord;
	t0 := clock_timestamp();
	IF p_param = 'doc' THEN
		EXECUTE p_sql INTO res, sims USING q.doc;
	ELSE
		EXECUTE p_sql INTO res, sims USING q.mh;
	END IF;
	INSERT INTO bench_lat VALUES (p_label, p_pass, p_qset, p_ord, q.qid,
		extract(epoch FROM clock_timestamp() - t0) * 1000, res, sims);
END
$$;
\set run 'SELECT format(''CALL pg_temp.search(%L, %s, %L, %s, %L, %L)'', :''label'', p, :''qset'', ord, :''sql'', :''param'') FROM bench_q, generate_series(:p0, :p1) p WHERE qset = :''qset'' AND ord <= :upto ORDER BY p, ord \\gexec'

\set topk_sql 'SELECT array_agg(n.id ORDER BY n.o), array_agg(n.similarity ORDER BY n.o) FROM near_duplicate_top_k(''t'', ''mh'', ''id'', $1, 10) WITH ORDINALITY n(id, similarity, o)'
\set seq_sql 'SELECT array_agg(s.id ORDER BY s.o), array_agg(s.sim ORDER BY s.o) FROM (SELECT id, sim, row_number() OVER (ORDER BY sim DESC, id) AS o FROM (SELECT id, similarity(mh, $1) AS sim FROM t ORDER BY 2 DESC, 1 LIMIT 10) x) s'

\warn '== index of one-row bands on t, top-10 searches'
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX t_mh_topk ON t USING gin (mh minhash_ops (rows = 1, key_bits = :kbits));
INSERT INTO bench_idx (label, idx, rows, build_s, bytes)
VALUES ('ndd minhash_ops(rows = 1, key_bits = ' || :kbits || ')', 't_mh_topk', :rows,
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz), pg_relation_size('t_mh_topk'));
\set label 'ndd top-10, t'
\set qset big
\set sql :topk_sql
\set param mh
\set upto :nq
\set p0 0
\set p1 1
:run

\warn '== sequential scans ordered by similarity (the reference)'
\set label 'sequential scan ORDER BY similarity LIMIT 10, t'
\set sql :seq_sql
\set upto :seqq
\set p0 1
:run

\set trgm_line ''
\if :trgm
\warn '== subset t_small: ndd and pg_trgm GiST'
CREATE TABLE t_small AS SELECT * FROM t WHERE id <= :sub;
ALTER TABLE t_small ADD PRIMARY KEY (id);
VACUUM (ANALYZE) t_small;
SELECT count(*) AS sub_rows FROM t_small \gset
INSERT INTO bench_q
SELECT 'small', row_number() OVER (ORDER BY id), id, mh, doc
FROM t_small
WHERE id % greatest(:sub / :nq, 1) = 7 % greatest(:sub / :nq, 1)
ORDER BY id LIMIT :nq;
SELECT clock_timestamp() AS t0 \gset
CREATE INDEX t_small_mh ON t_small USING gin (mh minhash_ops (rows = 1, key_bits = :kbits));
INSERT INTO bench_idx (label, idx, rows, build_s, bytes)
VALUES ('ndd minhash_ops(rows = 1, key_bits = ' || :kbits || ')', 't_small_mh', :sub_rows,
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz), pg_relation_size('t_small_mh'));
SELECT clock_timestamp() AS t0 \gset
-- a GiST leaf row holds every trigram of its text, so whole documents of
-- 3.5 kB overflow the 8 kB row limit: pg_trgm indexes and compares their
-- first 2000 characters
CREATE INDEX t_small_trgm ON t_small USING gist (left(doc, 2000) gist_trgm_ops);
INSERT INTO bench_idx (label, idx, rows, build_s, bytes)
VALUES ('pg_trgm gist_trgm_ops on left(doc, 2000)', 't_small_trgm', :sub_rows,
		extract(epoch FROM clock_timestamp() - :'t0'::timestamptz), pg_relation_size('t_small_trgm'));
\set qset small
\set label 'ndd top-10, t_small'
SELECT replace(:'topk_sql', '''t''', '''t_small''') AS sql \gset
\set upto :nq
\set p0 0
\set p1 1
:run
-- pg_trgm's KNN: its own similarity of the texts' prefixes, so other rows; one pass
-- over the first :seqq queries (each reads most of the index)
\set label 'pg_trgm ORDER BY left(doc, 2000) <-> q LIMIT 10 (GiST), t_small'
\set sql 'SELECT array_agg(y.id ORDER BY y.o), array_agg(y.d ORDER BY y.o) FROM (SELECT id, d, row_number() OVER () AS o FROM (SELECT id, left(doc, 2000) <-> left($1, 2000) AS d FROM t_small ORDER BY left(doc, 2000) <-> left($1, 2000) LIMIT 10) x) y'
\set param doc
\set upto :seqq
\set p0 1
:run
\endif

--------------------------------------------------------------------------
-- Report
--------------------------------------------------------------------------

CREATE TABLE bench_sum AS
SELECT label, min(seq) AS first, count(*) AS queries,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
	   percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99,
	   avg(ms) AS mean, max(ms) AS max
FROM bench_lat WHERE pass = 1 GROUP BY label;

\pset footer off
\echo
\echo 'ndd top-k benchmark: ndd' :commit 'on PostgreSQL' :server_version
\echo 'corpus' :corpus ':' :rows 'docs, avg' :avg_bytes 'bytes; one backend, jit off, shared_buffers' :shared_buffers
\echo
SELECT i.label AS index, i.idx AS name, i.rows, round(i.build_s::numeric, 1) AS "build s",
	   pg_size_pretty(i.bytes) AS size, round(i.bytes::numeric / i.rows) AS "bytes/row"
FROM bench_idx i ORDER BY ord;
\echo 'Latency, ms per search (parse, plan, execute, fetch): ndd after one warm-up pass'
SELECT label AS search, queries, round(p50::numeric, 2) AS p50, round(p99::numeric, 2) AS p99,
	   round(mean::numeric, 2) AS mean, round(max::numeric, 2) AS max
FROM bench_sum ORDER BY first;

-- exactness: the top-10 of each query also run as a sequential scan
SELECT count(*) AS n, count(*) FILTER (WHERE s.ids = i.ids AND s.sims = i.sims) AS same,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY s.ms)::numeric, 1) AS seq_med,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY i.ms)::numeric, 2) AS idx_med,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY s.ms) /
			  percentile_cont(0.5) WITHIN GROUP (ORDER BY i.ms))::numeric) AS ratio
FROM bench_lat s JOIN bench_lat i ON i.qset = s.qset AND i.ord = s.ord AND i.pass = 1
WHERE s.label = 'sequential scan ORDER BY similarity LIMIT 10, t' AND s.pass = 1
  AND i.label = 'ndd top-10, t' \gset
\echo 'exact: ' :same 'of' :n 'top-10 answers equal the sequential scan''s (ids and similarities, ties by id);'
\echo 'sequential scan median' :seq_med 'ms, near_duplicate_top_k on the same queries' :idx_med 'ms: ratio' :ratio 'x'
-- how far down the tenth row was
SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY sims[10])::numeric, 3) AS tenth_med,
	   count(*) FILTER (WHERE sims[10] = 0) AS tenth_zero, count(*) AS n
FROM bench_lat WHERE label = 'ndd top-10, t' AND pass = 1 \gset
\echo 'the tenth row''s similarity: median' :tenth_med ',' :tenth_zero 'of' :n 'queries at 0 (fewer than 10 rows share a position)'

-- What any search over per-position posting lists must read.  A row among
-- the k nearest agrees with the query on at least theta positions (theta:
-- the k-th similarity times num_perm), so it is in at least one of the
-- 129 - theta shortest of the query's 128 lists (the prefix filter of
-- all-pairs search): a posting-list method cannot read less than those,
-- even told theta.  Full 64-bit keys, so these are the shortest lists any
-- key_bits can give.
SELECT num_perm FROM minhash_settings((SELECT mh FROM bench_q WHERE qset = 'big' LIMIT 1)) \gset
CREATE TABLE bound_q AS
SELECT q.ord, round(l.sims[10] * :num_perm)::int AS theta, q.mh
FROM bench_q q JOIN bench_lat l ON l.label = 'ndd top-10, t' AND l.pass = 1
	AND l.qset = q.qset AND l.ord = q.ord
WHERE q.qset = 'big' AND q.ord <= :boundq;
CREATE TABLE bound_k AS
SELECT b.ord, k.key FROM bound_q b, unnest(minhash_band_keys(b.mh, :num_perm, 1)) k(key);
SET max_parallel_workers_per_gather = 2;
CREATE TABLE bound_n AS
SELECT x.key, count(*) AS n
FROM (SELECT unnest(minhash_band_keys(t.mh, :num_perm, 1)) AS key FROM t) x
WHERE x.key IN (SELECT key FROM bound_k)
GROUP BY x.key;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE bound_per_q AS
SELECT b.ord, b.theta,
	   sum(l.n) FILTER (WHERE l.r <= :num_perm + 1 - b.theta) AS prefix_postings,
	   sum(l.n) AS all_postings, max(l.n) AS longest
FROM bound_q b
JOIN (SELECT k.ord, n.n, row_number() OVER (PARTITION BY k.ord ORDER BY n.n) AS r
	  FROM bound_k k JOIN bound_n n USING (key)) l USING (ord)
GROUP BY b.ord, b.theta;
SELECT count(*) AS bq, percentile_cont(0.5) WITHIN GROUP (ORDER BY theta) AS theta_med,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY prefix_postings)) AS prefix_med,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY all_postings)) AS all_med,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY longest)) AS longest_med
FROM bound_per_q \gset
\echo 'what a posting-list search must read (' :bq 'queries): the tenth row agrees on' :theta_med 'positions (median);'
\echo 'the prefix filter leaves' :prefix_med 'postings to read even knowing that (median), of' :all_med 'in the query''s lists; longest list' :longest_med
-- what counting read (minhash_index_top_k, as near_duplicate_top_k calls
-- it): the postings over all its tries, and how often the answer came from
-- a try that left the longest lists unread
CREATE TABLE count_q AS
SELECT q.ord, c.postings, c.lists_unread
FROM bench_q q, minhash_index_top_k('t', 'mh', 'id', q.mh, 10) c
WHERE q.qset = 'big' AND q.ord <= :boundq;
SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY postings)) AS counted_med,
	   round(percentile_cont(0.9) WITHIN GROUP (ORDER BY postings)) AS counted_p90,
	   count(*) FILTER (WHERE lists_unread > 0) AS first_try, count(*) AS cq
FROM count_q \gset
\echo 'counting read' :counted_med 'postings (median;' :counted_p90 'p90) over its tries;' :first_try 'of' :cq 'queries answered with lists left unread'
SELECT format('summary: ndd top-10 at %s docs: p50 %s ms, p99 %s ms, index %s B/row (rows = 1, key_bits = %s), build %s s; target p50 <= 2 ms',
			  :rows, round(s.p50::numeric, 2), round(s.p99::numeric, 2),
			  round(i.bytes::numeric / i.rows), :kbits, round(i.build_s::numeric))
FROM bench_sum s, bench_idx i WHERE s.label = 'ndd top-10, t' AND i.idx = 't_mh_topk' \gset
\echo :format
