-- setup.sql: the tables and procedures of bench/trigger_insert.sh, run once
-- after it has loaded the corpus into corpus(id, family, edit_rate, doc).
-- Odd ids become preload (sketched once here), even ids become staging, the
-- documents the pgbench clients insert, each exactly once per run.  The
-- corpus plants families of a base and three edited copies at neighbouring
-- ids, so most staging rows have relatives both in preload and in staging.
-- Set by the caller: :inserts (staging rows kept) and :shuffle (on: the
-- words of each staging document in an order of its own, so none is a
-- near-duplicate of anything, at the same length).

\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS toast
FROM pg_settings WHERE name = 'default_toast_compression' \gset
SET default_toast_compression = :toast;

CREATE EXTENSION ndd;

CREATE TABLE preload AS
SELECT id, family, doc AS body, minhash_sketch(doc) AS mh FROM corpus WHERE id % 2 = 1;

-- Staging ids 1..n in a fixed pseudo-random order, so that relatives are
-- not always inserted back to back (and by neighbouring clients).
CREATE TABLE staging AS
SELECT row_number() OVER (ORDER BY md5(id::text))::int AS id, id AS corpus_id, family, doc AS body
FROM corpus WHERE id % 2 = 0;
DELETE FROM staging WHERE id > :inserts;
\if :shuffle
UPDATE staging s
SET body = (SELECT string_agg(w, ' ' ORDER BY md5(s.id || ':' || o))
			FROM regexp_split_to_table(s.body, ' ') WITH ORDINALITY AS t(w, o));
\endif
ALTER TABLE staging ADD PRIMARY KEY (id);
DROP TABLE corpus;

-- pgbench clients take staging ids from this, so no document is inserted
-- twice in a run: a repeat would be an exact duplicate, skipped cheaply,
-- and flatter the trigger.
CREATE SEQUENCE pick;

-- One row per pgbench run, filled by the driver.
CREATE TABLE bench_run (
	ord serial,
	rep int,
	clients int,
	variant text,
	attempted bigint,			-- transactions pgbench completed
	inserted bigint,			-- rows that reached docs
	failed bigint,				-- pgbench's failed transactions
	tps float8,					-- without the initial connection time
	lat_ms float8,
	pgbench_status int,
	log_errors int,				-- ERROR and deadlock lines in the server log
	token_rows bigint,			-- ndd_near_duplicate_locks after the run
	token_bytes bigint
);

-- What the pgbench backends were doing, sampled every 20 ms.
CREATE TABLE bench_wait (run int, what text, n int);
CREATE TABLE bench_stop (run int);

-- Rebuild docs for a variant: the same preload, a fresh GIN index (all
-- variants from 'index' on), the trigger (variant 'trigger') or the cluster
-- table kept by ndd_maintain_clusters (variant 'clusters'), empty tokens.
-- The trigger is created after the preload: preload holds relatives too.
CREATE PROCEDURE bench_reset(variant text, threshold float8)
LANGUAGE plpgsql AS $$
BEGIN
	DROP TABLE IF EXISTS docs;
	DROP TABLE IF EXISTS docs_clusters;
	CREATE TABLE docs (id bigserial PRIMARY KEY, body text, mh minhash);
	INSERT INTO docs (body, mh) SELECT body, mh FROM preload ORDER BY id;
	IF variant NOT IN ('body', 'sketch') THEN
		CREATE INDEX docs_mh_idx ON docs USING gin (mh minhash_ops) WITH (fastupdate = off);
	END IF;
	IF variant = 'trigger' THEN
		EXECUTE format('CREATE TRIGGER docs_no_near_duplicates BEFORE INSERT OR UPDATE ON docs '
					   'FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates(%L, %L, %L)',
					   'mh', threshold::text, 'skip');
	END IF;
	IF variant = 'clusters' THEN
		PERFORM ndd_maintain_clusters('docs', 'mh', 'id', threshold);
	END IF;
	TRUNCATE ndd_near_duplicate_locks;
	ALTER SEQUENCE pick RESTART;
END $$;

-- Sample pg_stat_activity for the pgbench backends until the driver writes
-- run into bench_stop: 'CPU' is active with no wait event, 'client' is idle
-- (waiting for pgbench), anything else is type:event.
CREATE PROCEDURE bench_sample(run int)
LANGUAGE plpgsql AS $$
BEGIN
	LOOP
		EXIT WHEN EXISTS (SELECT FROM bench_stop s WHERE s.run = bench_sample.run);
		PERFORM pg_stat_clear_snapshot();
		INSERT INTO bench_wait
		SELECT bench_sample.run,
			   CASE WHEN state <> 'active' THEN 'client'
					ELSE coalesce(wait_event_type || ':' || wait_event, 'CPU') END,
			   count(*)
		FROM pg_stat_activity
		WHERE application_name = 'pgbench' AND backend_type = 'client backend'
		GROUP BY 2;
		COMMIT;
		PERFORM pg_sleep(0.02);
	END LOOP;
END $$;

VACUUM ANALYZE preload, staging;
