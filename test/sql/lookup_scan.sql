-- The lookup scan (src/index/minhash_lookup_scan.c): col % q through a minhash_ops
-- index, counted from the posting lists.  Its rows equal those of GIN's own
-- scan (ndd.lookup_scan = off) and of a sequential scan at every threshold,
-- with rows in the pending list, deleted and updated rows, as a subplan
-- rescanned once per query, as a prepared statement's generic plan; it
-- gives ctid and tableoid, locks and deletes rows, and errs as GIN's scan.
SET extra_float_digits = 0;
SET jit = off;
-- any call of an ndd function loads its library, and with it the planner hook
SELECT similarity(minhash_sketch('a b c'), minhash_sketch('a b c'));

-- 3,000 documents of 60 words in families of three: a base and two copies
-- with words replaced at 2% to 30%.  uniform() is a hash, not random(), so
-- every major builds the same table.
CREATE FUNCTION pg_temp.uniform(key bigint, stream bigint) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT
AS $$ SELECT (hashint8extended(key, stream) & 4503599627370495)::float8 / 4503599627370496 $$;
CREATE TABLE lbase AS
SELECT f, array_agg('w' || floor(pg_temp.uniform(f * 60 + i, 1) * 5000)::int ORDER BY i) AS words
FROM generate_series(1, 1000) f, generate_series(1, 60) i
GROUP BY f;
CREATE TABLE ltexts AS
SELECT f * 3 + v AS id, f AS family,
       (SELECT string_agg(CASE WHEN v > 0 AND pg_temp.uniform((f * 3 + v) * 60 + n, 2) < 0.02 + 0.28 * pg_temp.uniform(f * 3 + v, 4)
                               THEN 'x' || floor(pg_temp.uniform((f * 3 + v) * 60 + n, 3) * 5000)::int
                               ELSE w END, ' ' ORDER BY n)
        FROM unnest(words) WITH ORDINALITY AS u(w, n)) AS doc
FROM lbase, generate_series(0, 2) v;

-- ldocs: an index built over the rows; lpend: rows added through the
-- pending list, all but the last 300 moved into the entry tree
CREATE TABLE ldocs (id int PRIMARY KEY, family int, doc text, mh minhash);
INSERT INTO ldocs SELECT id, family, doc, minhash_sketch(doc) FROM ltexts;
CREATE INDEX ldocs_mh ON ldocs USING gin (mh minhash_ops(threshold = 0.5)) WITH (fastupdate = off);
CREATE TABLE lpend (LIKE ldocs INCLUDING INDEXES);
DROP INDEX lpend_mh_idx;
CREATE INDEX lpend_mh ON lpend USING gin (mh minhash_ops(threshold = 0.5)) WITH (fastupdate = on, gin_pending_list_limit = 4096);
INSERT INTO lpend SELECT * FROM ldocs WHERE id < 2703;
SELECT gin_clean_pending_list('lpend_mh') > 0 AS moved_to_tree;
INSERT INTO lpend SELECT * FROM ldocs WHERE id >= 2703;
VACUUM (ANALYZE, INDEX_CLEANUP off) ldocs;
ANALYZE lpend;

-- EXPLAIN (COSTS OFF) of a query, its scan nodes only, alike on every major
CREATE FUNCTION pg_temp.scans(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        CONTINUE WHEN line !~ '(Custom Scan|Bitmap|Index Name|Seq Scan)';
        RETURN NEXT regexp_replace(line, '^[ ->]*', '');
    END LOOP;
END $$;

-- the queries: every 47th document of each table, at thresholds from 0.3
-- (below what the index serves exactly: one band suffices, as in GIN's
-- scan) to 0.95, each answered by a subquery that is run again for every
-- query and threshold (a rescan)
CREATE TABLE lq AS SELECT 'ldocs' AS tbl, id AS qid, mh FROM ldocs WHERE id % 47 = 0
                   UNION ALL SELECT 'lpend', id, mh FROM lpend WHERE id % 47 = 0;
CREATE TABLE lth AS SELECT unnest(ARRAY[0.3, 0.5, 0.7, 0.8, 0.95])::float8 AS t;
CREATE FUNCTION pg_temp.answers(mode text) RETURNS TABLE (tbl text, t float8, qid int, ids int[])
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('ndd.lookup_scan', (mode = 'lookup')::text, true);
    PERFORM set_config('enable_seqscan', (mode = 'seq')::text, true);
    PERFORM set_config('enable_bitmapscan', (mode <> 'seq')::text, true);
    -- planned here, with these settings
    RETURN QUERY EXECUTE $q$
    SELECT q.tbl, th.t, q.qid,
           CASE q.tbl WHEN 'ldocs' THEN (SELECT array_agg(d.id ORDER BY d.id) FROM ldocs d WHERE d.mh % ROW(q.mh, th.t)::minhash_query)
                      ELSE (SELECT array_agg(d.id ORDER BY d.id) FROM lpend d WHERE d.mh % ROW(q.mh, th.t)::minhash_query) END
    FROM lq q, lth th$q$;
END $$;
CREATE FUNCTION pg_temp.differences() RETURNS TABLE (tbl text, t float8, queries bigint, rows_found bigint,
                                                     differ_from_gin bigint, differ_from_seq bigint)
LANGUAGE sql AS $$
    SELECT l.tbl, l.t, count(*), sum(cardinality(l.ids)),
           count(*) FILTER (WHERE l.ids IS DISTINCT FROM g.ids),
           count(*) FILTER (WHERE l.ids IS DISTINCT FROM s.ids)
    FROM pg_temp.answers('lookup') l
    JOIN pg_temp.answers('gin') g USING (tbl, t, qid)
    JOIN pg_temp.answers('seq') s USING (tbl, t, qid)
    GROUP BY l.tbl, l.t ORDER BY l.tbl, l.t
$$;

-- the plans of the three modes
BEGIN;
SET LOCAL enable_seqscan = off;
SELECT * FROM pg_temp.scans($q$SELECT (SELECT count(*) FROM ldocs d WHERE d.mh % ROW(q.mh, 0.8)::minhash_query) FROM lq q$q$);
SET LOCAL ndd.lookup_scan = off;
SELECT * FROM pg_temp.scans($q$SELECT (SELECT count(*) FROM ldocs d WHERE d.mh % ROW(q.mh, 0.8)::minhash_query) FROM lq q$q$);
ROLLBACK;

-- the same rows in all three, and near-duplicates among them
SELECT * FROM pg_temp.differences();

-- deleted rows, rows whose sketch changed, rows updated in place: seen as
-- this transaction sees them, and as the others do after it commits
BEGIN;
DELETE FROM ldocs WHERE id % 7 = 1;
DELETE FROM lpend WHERE id % 7 = 1;
UPDATE ldocs SET mh = minhash_sketch(doc || ' one more line of text at its end') WHERE id % 7 = 2;
UPDATE lpend SET mh = minhash_sketch(doc || ' one more line of text at its end') WHERE id % 7 = 2;
UPDATE ldocs SET family = -family WHERE id % 7 = 3;
UPDATE lpend SET family = -family WHERE id % 7 = 3;
SELECT tbl, t, rows_found, differ_from_gin, differ_from_seq FROM pg_temp.differences() WHERE t IN (0.3, 0.7);
COMMIT;
SELECT tbl, t, rows_found, differ_from_gin, differ_from_seq FROM pg_temp.differences() WHERE t IN (0.3, 0.7);

-- % with ndd.similarity_threshold, and similar(), as a scan answers them;
-- a threshold of 0 matches every row
SET ndd.similarity_threshold = 0;
SELECT count(*) AS every_row, (SELECT count(*) FROM ldocs) AS rows
FROM ldocs WHERE mh % (SELECT mh FROM ldocs WHERE id = 30);
SET ndd.similarity_threshold = 0.6;
SELECT * FROM pg_temp.scans($q$SELECT id FROM ldocs WHERE mh % (SELECT mh FROM ldocs WHERE id = 30)$q$);
SELECT array_agg(id ORDER BY id) AS by_lookup,
       (SELECT array_agg(id ORDER BY id) FROM ldocs WHERE similarity(mh, (SELECT mh FROM ldocs WHERE id = 30)) >= 0.6) AS by_similarity
FROM ldocs WHERE mh % (SELECT mh FROM ldocs WHERE id = 30);
RESET ndd.similarity_threshold;
SELECT * FROM pg_temp.scans($q$SELECT id FROM ldocs WHERE similar(mh, (SELECT mh FROM ldocs WHERE id = 30), 0.6)$q$);
SELECT array_agg(id ORDER BY id) AS by_similar FROM ldocs WHERE similar(mh, (SELECT mh FROM ldocs WHERE id = 30), 0.6);

-- a prepared statement's generic plan: the query is a parameter
SET plan_cache_mode = force_generic_plan;
PREPARE near(minhash, float8) AS SELECT array_agg(id ORDER BY id) FROM ldocs WHERE similar(mh, $1, $2);
SELECT * FROM pg_temp.scans($q$EXECUTE near(NULL, 0.6)$q$);
SELECT mh AS q30 FROM ldocs WHERE id = 30 \gset
SELECT mh AS q31 FROM ldocs WHERE id = 31 \gset
EXECUTE near(:'q30', 0.6);
EXECUTE near(:'q31', 0.6);
EXECUTE near(:'q31', 0.4);
EXECUTE near(NULL, 0.6);
DEALLOCATE near;
RESET plan_cache_mode;

-- ctid and tableoid come with the rows; another system column leaves the
-- query to GIN's scan
SELECT d.ctid = (SELECT ctid FROM ldocs WHERE id = 30) AS same_ctid, d.tableoid::regclass
FROM ldocs d WHERE d.mh % (SELECT mh FROM ldocs WHERE id = 30) AND d.id = 30;
SELECT * FROM pg_temp.scans($q$SELECT xmin FROM ldocs WHERE mh % (SELECT mh FROM ldocs WHERE id = 30)$q$);

-- rows locked and deleted through it
BEGIN;
SELECT * FROM pg_temp.scans($q$SELECT id FROM ldocs WHERE mh % (SELECT mh FROM ldocs WHERE id = 30) FOR UPDATE$q$);
SELECT array_agg(id ORDER BY id) AS locked FROM (SELECT id FROM ldocs WHERE mh % (SELECT mh FROM ldocs WHERE id = 30) FOR UPDATE) l;
SELECT * FROM pg_temp.scans($q$DELETE FROM ldocs WHERE mh % (SELECT mh FROM ldocs WHERE id = 30)$q$);
WITH gone AS (DELETE FROM ldocs WHERE mh % (SELECT mh FROM ldocs WHERE id = 30) RETURNING id)
SELECT array_agg(id ORDER BY id) AS deleted FROM gone;
ROLLBACK;

-- a sketch made otherwise than the index's: SQLSTATE 22023, as GIN's scan
\set VERBOSITY sqlstate
SELECT count(*) FROM ldocs WHERE mh % minhash_sketch('a b c d e f', num_perm => 64);
SET ndd.lookup_scan = off;
SELECT count(*) FROM ldocs WHERE mh % minhash_sketch('a b c d e f', num_perm => 64);
RESET ndd.lookup_scan;
\set VERBOSITY default

-- counted as scans of the index
SELECT pg_stat_force_next_flush();
SELECT idx_scan > 0 AS counted FROM pg_stat_user_indexes WHERE indexrelname = 'ldocs_mh';

DROP TABLE ldocs, lpend, lq, lth, ltexts, lbase;
