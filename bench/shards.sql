-- shards.sql: lookups, discovery and clusters on one server (single) and
-- over two postgres_fdw shards (docs), on the coordinator of
-- bench/shards.sh, which sets :nq, :wirefile, :commit and :docs, and the
-- environment variable NDD_WIRE (a script that writes to :wirefile the bytes
-- this backend's connections to the shards have received and sent).

\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;

-- Query sketches: a deterministic sample of the rows (about half of the
-- corpus's bases have planted near-duplicates).
CREATE TABLE q AS SELECT s.id, s.mh FROM single s ORDER BY hashint8(s.id) LIMIT :nq;

CREATE FUNCTION lookup(tbl regclass, sketch minhash, OUT ms float8, OUT ids bigint[])
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	EXECUTE format('SELECT array_agg(t.id ORDER BY t.id) FROM %s t WHERE similar(t.mh, $1, 0.8)', tbl)
		USING sketch INTO ids;
	ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

-- The same round trips without ndd: rows by primary key through the same
-- foreign tables (each key on one shard; the whole table, so both shards).
CREATE FUNCTION lookup_by_ids(tbl regclass, ids bigint[], OUT ms float8, OUT n bigint)
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	EXECUTE format('SELECT count(*) FROM %s t WHERE t.id = ANY ($1)', tbl) USING ids INTO n;
	ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

CREATE FUNCTION wire(OUT rx bigint, OUT tx bigint) LANGUAGE sql AS $$
	SELECT split_part(f, ' ', 1)::bigint, split_part(f, ' ', 2)::bigint
	FROM pg_read_file(current_setting('bench.wirefile')) AS f $$;
SELECT set_config('bench.wirefile', :'wirefile', false);

\warn '== lookups (a warm-up pass, then the timed one)'
CREATE TABLE warm AS SELECT q.id, (lookup('single', q.mh)).ms AS a, (lookup('docs', q.mh)).ms AS b FROM q;
\! sh "$NDD_WIRE"
SELECT rx AS rx0, tx AS tx0 FROM wire() \gset
CREATE TABLE timed AS
SELECT q.id, s.ms AS single_ms, s.ids AS single_ids, d.ms AS docs_ms, d.ids AS docs_ids
FROM q, LATERAL lookup('single', q.mh) s, LATERAL lookup('docs', q.mh) d;
\! sh "$NDD_WIRE"
SELECT rx - :rx0 AS lookup_rx, tx - :tx0 AS lookup_tx FROM wire() \gset
CREATE TABLE by_ids AS
SELECT q.id, s.ms AS single_ms, d.ms AS docs_ms
FROM q, LATERAL lookup_by_ids('single', ARRAY[q.id, q.id + 1]) s, LATERAL lookup_by_ids('docs', ARRAY[q.id, q.id + 1]) d;

INSERT INTO bench_fig (figure, value)
SELECT 'lookups at 0.8: ' || count(*) || ' queries, ' || round(avg(cardinality(single_ids)), 2) || ' rows each on average',
	   'one server p50 ' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY single_ms)::numeric, 3)
	   || ' ms, p99 ' || round(percentile_cont(0.99) WITHIN GROUP (ORDER BY single_ms)::numeric, 3)
	   || ' ms; two shards p50 ' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY docs_ms)::numeric, 3)
	   || ' ms, p99 ' || round(percentile_cont(0.99) WITHIN GROUP (ORDER BY docs_ms)::numeric, 3)
	   || ' ms; ratio of medians ' || round((percentile_cont(0.5) WITHIN GROUP (ORDER BY docs_ms)
										 / percentile_cont(0.5) WITHIN GROUP (ORDER BY single_ms))::numeric, 2)
	   || '; different answers: ' || count(*) FILTER (WHERE single_ids IS DISTINCT FROM docs_ids)
FROM timed;
INSERT INTO bench_fig (figure, value)
SELECT 'for scale: two rows by primary key (id = ANY, both shards), no ndd',
	   'one server p50 ' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY single_ms)::numeric, 3)
	   || ' ms; two shards p50 ' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY docs_ms)::numeric, 3)
	   || ' ms, p99 ' || round(percentile_cont(0.99) WITHIN GROUP (ORDER BY docs_ms)::numeric, 3) || ' ms'
FROM by_ids;
INSERT INTO bench_fig (figure, value)
SELECT 'bytes per lookup, shards to coordinator / coordinator to shards',
	   round(:lookup_rx / count(*)::numeric) || ' / ' || round(:lookup_tx / count(*)::numeric)
FROM timed;

\warn '== discovery on one server'
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE pairs_single AS SELECT * FROM near_duplicate_pairs('single', 'mh', 'id');
SELECT extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) AS single_s \gset
\warn '== discovery over two shards'
\! sh "$NDD_WIRE"
SELECT rx AS rx0, tx AS tx0 FROM wire() \gset
SELECT clock_timestamp() AS t0 \gset
SET client_min_messages = notice;
CREATE TABLE pairs_docs AS SELECT * FROM near_duplicate_pairs('docs', 'mh', 'id', progress => true);
SET client_min_messages = warning;
SELECT extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) AS docs_s \gset
\! sh "$NDD_WIRE"
SELECT rx - :rx0 AS pairs_rx, tx - :tx0 AS pairs_tx FROM wire() \gset

INSERT INTO bench_fig (figure, value)
SELECT 'near_duplicate_pairs at 0.8: ' || (SELECT count(*) FROM pairs_single) || ' pairs, '
	   || (SELECT count(*) FROM pairs_docs p JOIN single a ON a.id = p.id_a JOIN single b ON b.id = p.id_b
		   WHERE satisfies_hash_partition('docs'::regclass, 2, 0, a.id) <> satisfies_hash_partition('docs'::regclass, 2, 0, b.id))
	   || ' of them across shards',
	   'one server ' || round(:single_s::numeric, 1) || ' s; two shards ' || round(:docs_s::numeric, 1)
	   || ' s; differences: '
	   || (SELECT count(*) FROM ((TABLE pairs_single EXCEPT TABLE pairs_docs)
								 UNION ALL (TABLE pairs_docs EXCEPT TABLE pairs_single)) d);
INSERT INTO bench_fig (figure, value)
SELECT 'bytes moved by discovery over two shards (shards to coordinator / back)',
	   pg_size_pretty(:pairs_rx::bigint) || ' / ' || pg_size_pretty(:pairs_tx::bigint)
	   || '; every id and sketch would be ' || pg_size_pretty(sum(pg_column_size(mh) + 8))
	   || ', every document ' || pg_size_pretty(sum(octet_length(doc)))
FROM single;

\warn '== clusters'
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE clusters_single AS SELECT * FROM near_duplicate_clusters('single', 'mh', 'id');
SELECT extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) AS single_s \gset
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE clusters_docs AS SELECT * FROM near_duplicate_clusters('docs', 'mh', 'id');
SELECT extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) AS docs_s \gset
INSERT INTO bench_fig (figure, value)
SELECT 'near_duplicate_clusters: ' || (SELECT count(DISTINCT cluster_id) FROM clusters_single) || ' clusters',
	   'one server ' || round(:single_s::numeric, 1) || ' s; two shards ' || round(:docs_s::numeric, 1)
	   || ' s; differences: '
	   || (SELECT count(*) FROM ((TABLE clusters_single EXCEPT TABLE clusters_docs)
								 UNION ALL (TABLE clusters_docs EXCEPT TABLE clusters_single)) d);

SELECT current_setting('server_version') AS server_version \gset
\echo
\echo 'ndd across shards, commit' :commit 'on PostgreSQL' :server_version ',' :docs 'corpus documents'
\echo '  coordinator (also the one-server table single) and two shards: three clusters on this machine, shards on 127.0.0.1'
\echo '  docs: PARTITION BY HASH (id), two postgres_fdw foreign tables (async_capable, fetch_size 10000), GIN minhash_ops on each shard'
\echo '  bytes: the kernel''s count for the coordinator backend''s TCP connections to the shards (ss -ti)'
\echo
SELECT figure, value FROM bench_fig ORDER BY ord;
