-- guard_bulk_load.sql: the tables, procedures and report of
-- bench/guard_bulk_load.sh.  Run with :part set to
--   pool    after the corpus is in corpus(id, family, edit_rate, doc), plain
--           PostgreSQL: words(id, body), :rows documents of 300 words
--           (their corpus ids, so not 1..:rows)
--   setup   after ndd is installed: the extension, the sketches, the
--           procedures and bench_run
--   report  after the loads; also set :commit and :largest
-- The script itself runs the loads.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;
\pset footer off
SELECT :'part' = 'pool' AS is_pool, :'part' = 'setup' AS is_setup,
	   :'part' = 'report' AS is_report \gset

\if :is_pool
SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS toast
FROM pg_settings WHERE name = 'default_toast_compression' \gset
SET default_toast_compression = :toast;
-- A document is the first 300 words of a corpus document that has at
-- least 300 words, 150 of them distinct, in an order of its own (a fixed
-- hash of id and position).  No two are near-duplicates, not even the
-- corpus's planted copies, so a guarded load keeps every row and the
-- trigger's cost is its check, not an error or a skip.  (Shorter documents
-- are left out: some are lists of file names, which the shingler splits
-- into a few words, and shuffled repeats of a few words are near-duplicates
-- of each other.)  About 45% of the corpus qualifies; the first :rows do.
CREATE TABLE words AS
SELECT c.id::bigint AS id,
	   (SELECT string_agg(u.w, ' ' ORDER BY hashint8(c.id * 1000 + u.o), u.o)
		FROM unnest(c.w[1:300]) WITH ORDINALITY AS u(w, o)) AS body
FROM (SELECT id, regexp_split_to_array(doc, ' ') AS w FROM corpus
	  OFFSET 0) AS c			-- split each document once, not once per use
WHERE cardinality(c.w) >= 300 AND (SELECT count(DISTINCT x) FROM unnest(c.w[1:300]) AS x) >= 150
ORDER BY c.id LIMIT :rows;
SELECT count(*) < :rows AS too_few FROM words \gset
\if :too_few
\warn 'the corpus has fewer than' :rows 'documents of 300 words'
\quit 1
\endif
DROP TABLE corpus;
\endif

\if :is_setup
CREATE EXTENSION ndd;
SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS toast
FROM pg_settings WHERE name = 'default_toast_compression' \gset
SET default_toast_compression = :toast;
-- The sketches are made once, here: a load copies them.
CREATE TABLE pool AS SELECT id, body, minhash_sketch(body) AS mh FROM words ORDER BY id;
DROP TABLE words;
ALTER TABLE pool ADD PRIMARY KEY (id);
VACUUM ANALYZE pool;

-- One row per load, filled by the script.
CREATE TABLE bench_run (
	rows bigint,
	rep int,
	fastupdate boolean,
	guard text,					-- 'none', or the trigger: 'before', 'after' (row), 'statement'
	seconds float8,				-- the INSERT ... SELECT, commit included
	cleanup_seconds float8,		-- then gin_clean_pending_list(): work left for later
	loaded bigint,				-- rows in docs afterwards
	index_bytes bigint,			-- the GIN index afterwards
	token_rows bigint,			-- ndd_near_duplicate_locks afterwards
	token_bytes bigint			-- its pg_total_relation_size
);

-- staging: the first n documents of pool, in id order.
CREATE PROCEDURE bench_staging(n bigint)
LANGUAGE plpgsql AS $$
BEGIN
	DROP TABLE IF EXISTS staging;
	CREATE TABLE staging AS SELECT id, body, mh FROM pool ORDER BY id LIMIT n;
END $$;

-- A fresh docs with its index created before the load, default options or
-- fastupdate = off, and the guard fired BEFORE or AFTER each row, or none;
-- no tokens left from the last load.
CREATE PROCEDURE bench_reset(fastupdate boolean, guard text)
LANGUAGE plpgsql AS $$
BEGIN
	DROP TABLE IF EXISTS docs;
	CREATE TABLE docs (id bigint PRIMARY KEY, body text, mh minhash);
	IF fastupdate THEN
		CREATE INDEX docs_mh_idx ON docs USING gin (mh minhash_ops(threshold = 0.69));
	ELSE
		CREATE INDEX docs_mh_idx ON docs USING gin (mh minhash_ops(threshold = 0.69))
			WITH (fastupdate = off);
	END IF;
	IF guard = 'before' THEN
		CREATE TRIGGER docs_no_near_duplicates BEFORE INSERT OR UPDATE ON docs
			FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('mh', '0.8');
	ELSIF guard = 'after' THEN
		CREATE TRIGGER docs_no_near_duplicates AFTER INSERT OR UPDATE ON docs
			FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('mh', '0.8');
	ELSIF guard = 'statement' THEN
		CREATE TRIGGER docs_no_near_duplicates AFTER INSERT ON docs REFERENCING NEW TABLE AS new_rows
			FOR EACH STATEMENT EXECUTE FUNCTION ndd_reject_near_duplicates('mh', '0.8');
	ELSIF guard <> 'none' THEN
		RAISE 'unknown guard %', guard;
	END IF;
	TRUNCATE ndd_near_duplicate_locks;
END $$;
\endif

\if :is_report
SELECT current_setting('server_version') AS server_version,
	   round(avg(octet_length(body))) AS avg_bytes,
	   round(avg(pg_column_size(mh))) AS mh_bytes
FROM pool \gset
SELECT max(rep) AS reps FROM bench_run \gset
\echo
\echo 'ndd guarded bulk load benchmark, commit' :commit 'on PostgreSQL' :server_version
\echo '  docs(id bigint PRIMARY KEY, body text, mh minhash), GIN (mh minhash_ops(threshold = 0.69)) created before the load'
\echo '  load: INSERT INTO docs SELECT id, body, mh FROM staging, one statement; staging holds' :avg_bytes 'byte documents of 300 words'
\echo '  (shuffled: none is a near-duplicate of another) and their' :mh_bytes 'byte sketches'
\echo '  guard: trigger ndd_reject_near_duplicates(''mh'', ''0.8'') fired BEFORE or AFTER INSERT OR UPDATE FOR EACH ROW, or AFTER INSERT FOR EACH STATEMENT (REFERENCING NEW TABLE); unguarded: the same table and index without it'
\echo '  each figure: median over' :reps 'repetitions, each a fresh table; guarded and unguarded take turns within a repetition'
\echo '  ratio: guarded / unguarded seconds in the same repetition.  Target: <= 2 at 100,000 rows, default options, linear in rows'
\echo '  with pending: each load followed by gin_clean_pending_list(), the index work fastupdate leaves for later'
\echo
SELECT rows, CASE WHEN fastupdate THEN 'on (default)' ELSE 'off' END AS fastupdate, guard,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY u)::numeric, 2) AS unguarded_s,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY g)::numeric, 2) AS guarded_s,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY g / u)::numeric, 2) AS ratio,
	   format('%s-%s', round(min(g / u)::numeric, 2), round(max(g / u)::numeric, 2)) AS ratio_range,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY uc)::numeric, 2) AS unguarded_then_pending_s,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY (g + gc) / uc)::numeric, 2) AS ratio_with_pending,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY u) * 1e6 / rows)::numeric) AS us_per_row_unguarded,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY g) * 1e6 / rows)::numeric) AS us_per_row_guarded
FROM (SELECT b.rows, b.rep, b.fastupdate, b.guard, u.seconds AS u, b.seconds AS g,
			 u.seconds + u.cleanup_seconds AS uc, b.cleanup_seconds AS gc
	  FROM bench_run AS b
	  JOIN bench_run AS u ON u.rows = b.rows AND u.rep = b.rep AND u.fastupdate = b.fastupdate
	  WHERE u.guard = 'none' AND b.guard <> 'none') AS r
GROUP BY rows, fastupdate, guard ORDER BY rows, fastupdate DESC, guard DESC;

\echo 'After the loads of' :largest 'rows (median over repetitions): the index, and the guard''s token table'
SELECT CASE WHEN fastupdate THEN 'on (default)' ELSE 'off' END AS fastupdate,
	   guard,
	   pg_size_pretty(percentile_disc(0.5) WITHIN GROUP (ORDER BY index_bytes)) AS index_size,
	   percentile_disc(0.5) WITHIN GROUP (ORDER BY token_rows) AS token_rows,
	   pg_size_pretty(percentile_disc(0.5) WITHIN GROUP (ORDER BY token_bytes)) AS ndd_near_duplicate_locks
FROM bench_run WHERE rows = :largest
GROUP BY fastupdate, guard ORDER BY fastupdate DESC, guard DESC;

SELECT count(*) AS short, count(*) > 0 AS any_short FROM bench_run WHERE loaded <> rows \gset
\if :any_short
\echo 'WARNING:' :short 'loads kept fewer rows than they were given'
\endif
\endif
