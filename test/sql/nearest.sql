-- Top-k search (near_duplicate_top_k) against a sequential scan ordered by
-- similarity: the same rows, the same similarities, ties by smaller id,
-- through no index, an index exact from 0.758 and one of one-row bands.
SET extra_float_digits = 0;
-- enable_seqscan = off inflates costs past jit_above_cost: tiny queries would compile
SET jit = off;
\set SHOW_CONTEXT never

-- 1,200 documents: 300 families of a base and three edited copies (the
-- first 20 families also an exact copy), rows without a sketch, and an
-- empty document
-- uniform(key, stream): a number in [0, 1) hashed from its arguments, so
-- the data do not depend on the order a plan evaluates rows in
CREATE FUNCTION pg_temp.uniform(key bigint, stream bigint) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT
AS $$ SELECT (hashint8extended(key, stream) & 4503599627370495)::float8 / 4503599627370496 $$;
CREATE TABLE nbase AS
SELECT f, array_agg('w' || floor(pg_temp.uniform(f * 60 + i, 1) * 3000)::int ORDER BY i) AS words
FROM generate_series(1, 300) f, generate_series(1, 60) i GROUP BY f;
CREATE TABLE ntexts AS
SELECT f * 4 + v AS id,
       CASE WHEN v = 0 THEN array_to_string(words, ' ')
            ELSE (SELECT string_agg(CASE WHEN pg_temp.uniform((f * 4 + v) * 60 + n, 26) < 0.04 * v * (1 + f % 3)
                                         THEN 'x' || floor(pg_temp.uniform((f * 4 + v) * 60 + n, 27) * 3000)::int ELSE w END, ' ' ORDER BY n)
                  FROM unnest(words) WITH ORDINALITY AS u(w, n)) END AS body
FROM nbase, generate_series(0, 3) v;
INSERT INTO ntexts SELECT 5000 + f, array_to_string(words, ' ') FROM nbase WHERE f <= 20;
INSERT INTO ntexts VALUES (6000, NULL), (6001, NULL), (6002, '');
-- sketched as the table is made: an UPDATE would leave HOT chains, and an
-- index built over them is not used while older transactions run
CREATE TABLE ndocs AS SELECT id, body, minhash_sketch(body, shingle_size => 2) AS sketch FROM ntexts;
ALTER TABLE ndocs ADD PRIMARY KEY (id);
ANALYZE ndocs;

-- queries: every 61st document, an unrelated text, an empty document
CREATE TABLE nq AS
SELECT id AS qid, sketch AS q FROM ndocs WHERE id % 61 = 1 AND sketch IS NOT NULL
UNION ALL SELECT -1, minhash_sketch('nothing in this text occurs in the table at all', shingle_size => 2)
UNION ALL SELECT -2, minhash_sketch('', shingle_size => 2);
SELECT count(*) AS queries FROM nq;

-- the reference: a sequential scan ordered by similarity, ties by id
CREATE FUNCTION pg_temp.ref(q minhash, k int, tbl regclass DEFAULT 'ndocs')
RETURNS TABLE (id bigint, similarity float8)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT d.id::bigint, similarity(d.sketch, $1) FROM %s d
                                 WHERE d.sketch IS NOT NULL ORDER BY 2 DESC, d.id LIMIT $2', tbl)
    USING q, k;
END
$$;
-- per k: queries, and those whose answer is exactly the reference's
CREATE FUNCTION pg_temp.compare(tbl regclass DEFAULT 'ndocs')
RETURNS TABLE (k int, queries bigint, same bigint) LANGUAGE sql AS $$
    SELECT k, count(*), count(*) FILTER (WHERE
        (SELECT array_agg(ROW(n.id, n.similarity)::text ORDER BY n.o)
         FROM near_duplicate_top_k(tbl, 'sketch', 'id', nq.q, k) WITH ORDINALITY n(id, similarity, o))
        IS NOT DISTINCT FROM
        (SELECT array_agg(ROW(r.id, r.similarity)::text ORDER BY r.o)
         FROM pg_temp.ref(nq.q, k, tbl) WITH ORDINALITY r(id, similarity, o)))
    FROM nq, unnest(ARRAY[1, 3, 5, 10, 25, 2000]) k
    GROUP BY k ORDER BY k
$$;

-- no index: one sequential scan
SELECT * FROM pg_temp.compare();
SELECT minhash_index_exact_threshold('ndocs', 'sketch');
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 6, progress => true);

-- the default index: exact from 97 of 128 positions, then a sequential scan
CREATE INDEX ndocs_default ON ndocs USING gin (sketch minhash_ops(shingle_size = 2));
SELECT minhash_index_exact_threshold('ndocs', 'sketch'), 97 / 128.0 AS "97/128";
SET enable_seqscan = off;
SELECT * FROM pg_temp.compare();
-- a family of five (copies at similarity 1, tie broken by id) from the index
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 2, progress => true);
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 6, progress => true);
RESET enable_seqscan;
DROP INDEX ndocs_default;

-- one-row bands: exact down to 1/128, then the smallest ids at similarity 0
CREATE INDEX ndocs_rows1 ON ndocs USING gin (sketch minhash_ops(shingle_size = 2, rows = 1, key_bits = 16));
SELECT minhash_index_exact_threshold('ndocs', 'sketch') = 1 / 128.0 AS one_position;
SET enable_seqscan = off;
SELECT * FROM pg_temp.compare();
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 3, progress => true);
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 8, progress => true);
-- no similar row: the smallest ids, at similarity 0
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'id', (SELECT q FROM nq WHERE qid = -1), 3, progress => true);
-- an empty query is 0 similar to everything: no pass at all
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'id', (SELECT q FROM nq WHERE qid = -2), 2, progress => true);
-- every answer above but the empty query's came from counting keys in the
-- posting lists
SELECT k, count(*) FILTER (WHERE c.ids IS NOT NULL) AS counted, count(*) AS queries
FROM nq, unnest(ARRAY[1, 3, 5, 10, 25, 2000]) k,
     minhash_index_top_k('ndocs', 'sketch', 'id', nq.q, k) c
GROUP BY k ORDER BY k;
RESET enable_seqscan;

-- the counted answer as rows change: a pending list (fastupdate), HOT and
-- other updates, deletes, rows without a sketch; then the same after the
-- pending list is moved into the index
CREATE TABLE ndocs_live AS SELECT id, sketch, NULL::text AS note FROM ndocs;
ALTER TABLE ndocs_live ADD PRIMARY KEY (id);
CREATE INDEX ndocs_live_rows1 ON ndocs_live USING gin (sketch minhash_ops(shingle_size = 2, rows = 1, key_bits = 16));
INSERT INTO ndocs_live SELECT id + 10000, sketch FROM ndocs WHERE id % 7 = 0;
UPDATE ndocs_live SET note = 'hot' WHERE id % 11 = 0;
UPDATE ndocs_live l SET sketch = d.sketch FROM ndocs d WHERE d.id = l.id + 1 AND l.id % 13 = 0;
UPDATE ndocs_live SET sketch = NULL WHERE id % 19 = 0;
DELETE FROM ndocs_live WHERE id % 17 = 0;
CREATE EXTENSION IF NOT EXISTS pgstattuple;
SELECT pending_tuples > 0 AS pending FROM pgstatginindex('ndocs_live_rows1');
SELECT * FROM pg_temp.compare('ndocs_live') WHERE k IN (1, 10, 25);
SELECT count(*) FILTER (WHERE c.ids IS NOT NULL) AS counted, count(*) AS queries
FROM nq, minhash_index_top_k('ndocs_live', 'sketch', 'id', nq.q, 10) c;
SELECT gin_clean_pending_list('ndocs_live_rows1') > 0 AS cleaned;
SELECT * FROM pg_temp.compare('ndocs_live') WHERE k IN (1, 10, 25);
-- keys of 4 bits collide for most rows: every row holds several of the
-- query's keys, and counting needs room for more rows (its last try keeps
-- as many as work_mem holds); with too little work_mem the passes answer
DROP INDEX ndocs_live_rows1;
CREATE INDEX ndocs_live_kb4 ON ndocs_live USING gin (sketch minhash_ops(shingle_size = 2, rows = 1, key_bits = 4));
SELECT count(*) FILTER (WHERE c.ids IS NOT NULL) AS counted, count(*) AS queries
FROM nq, minhash_index_top_k('ndocs_live', 'sketch', 'id', nq.q, 10) c;
SELECT * FROM pg_temp.compare('ndocs_live') WHERE k IN (1, 10);
SET work_mem = '64kB';
SELECT count(*) FILTER (WHERE c.ids IS NOT NULL) AS counted, count(*) AS queries
FROM nq, minhash_index_top_k('ndocs_live', 'sketch', 'id', nq.q, 10) c;
SELECT * FROM pg_temp.compare('ndocs_live') WHERE k IN (10);
RESET work_mem;
-- a NULL id among the best rows: a scan orders it last, the passes answer
DROP INDEX ndocs_live_kb4;
CREATE INDEX ndocs_live_rows1 ON ndocs_live USING gin (sketch minhash_ops(shingle_size = 2, rows = 1, key_bits = 16));
ALTER TABLE ndocs_live DROP CONSTRAINT ndocs_live_pkey, ALTER COLUMN id DROP NOT NULL;
UPDATE ndocs_live SET id = NULL WHERE id = 4;
SELECT c.ids IS NULL AS passed_on FROM minhash_index_top_k('ndocs_live', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 4) c;
SELECT * FROM near_duplicate_top_k('ndocs_live', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 4);
SELECT * FROM pg_temp.ref((SELECT sketch FROM ndocs WHERE id = 5), 4, 'ndocs_live');
DROP TABLE ndocs_live;

-- a passage every row shares: the query's lists of the positions it wins
-- hold every row, and the first try leaves the longest unread
CREATE TABLE ncommon AS
SELECT f * 5 + v AS id,
       minhash_sketch((SELECT string_agg(CASE WHEN pg_temp.uniform((f * 5 + v) * 60 + n, 4) < 0.05 * v
                                               THEN 'y' || floor(pg_temp.uniform((f * 5 + v) * 60 + n, 5) * 3000)::int ELSE w END, ' ' ORDER BY n)
                       FROM unnest(words) WITH ORDINALITY AS u(w, n))
                      || ' and then the same long passage that every one of these rows carries along with it',
                      shingle_size => 2) AS sketch
FROM nbase, generate_series(0, 4) v;
ALTER TABLE ncommon ADD PRIMARY KEY (id);
CREATE INDEX ncommon_rows1 ON ncommon USING gin (sketch minhash_ops(shingle_size = 2, rows = 1, key_bits = 16));
SELECT k, count(*) AS queries,
       count(*) FILTER (WHERE c.lists_unread > 0) AS some_lists_unread,
       count(*) FILTER (WHERE
           (SELECT array_agg(ROW(n.id, n.similarity)::text ORDER BY n.o)
            FROM near_duplicate_top_k('ncommon', 'sketch', 'id', q.sketch, k) WITH ORDINALITY n(id, similarity, o))
           IS NOT DISTINCT FROM
           (SELECT array_agg(ROW(r.id, r.similarity)::text ORDER BY r.o)
            FROM pg_temp.ref(q.sketch, k, 'ncommon') WITH ORDINALITY r(id, similarity, o))) AS same
FROM (SELECT sketch FROM ncommon WHERE id % 37 = 3) q, unnest(ARRAY[1, 10, 25, 300]) k,
     minhash_index_top_k('ncommon', 'sketch', 'id', q.sketch, k) c
GROUP BY k ORDER BY k;
DROP TABLE ncommon;

-- families of 4, each member with one of the last words its own, and
-- nothing shared across families: fewer than k rows above 0, and lists so
-- short that the first try offers every row in them; the rest, at 0, by id
CREATE TABLE nfam AS
SELECT f * 4 + m + 1 AS id,
       minhash_sketch((SELECT string_agg(CASE WHEN n = 17 + m THEN 'v' || (f * 4 + m) ELSE w END, ' ' ORDER BY n)
                       FROM unnest(words) WITH ORDINALITY AS u(w, n) WHERE n <= 20),
                      shingle_size => 2) AS sketch
FROM nbase, generate_series(0, 3) m;
ALTER TABLE nfam ADD PRIMARY KEY (id);
CREATE INDEX nfam_rows1 ON nfam USING gin (sketch minhash_ops(shingle_size = 2, rows = 1, key_bits = 16));
SELECT k, count(*) AS queries,
       count(*) FILTER (WHERE c.ids IS NOT NULL) AS counted,
       count(*) FILTER (WHERE
           (SELECT array_agg(ROW(n.id, n.similarity)::text ORDER BY n.o)
            FROM near_duplicate_top_k('nfam', 'sketch', 'id', q.sketch, k) WITH ORDINALITY n(id, similarity, o))
           IS NOT DISTINCT FROM
           (SELECT array_agg(ROW(r.id, r.similarity)::text ORDER BY r.o)
            FROM pg_temp.ref(q.sketch, k, 'nfam') WITH ORDINALITY r(id, similarity, o))) AS same
FROM (SELECT sketch FROM nfam WHERE id % 9 = 2) q, unnest(ARRAY[1, 4, 10, 25]) k,
     minhash_index_top_k('nfam', 'sketch', 'id', q.sketch, k) c
GROUP BY k ORDER BY k;
DROP TABLE nfam;

-- both indexes: the less exact one decides
CREATE INDEX ndocs_default ON ndocs USING gin (sketch minhash_ops(shingle_size = 2));
SELECT minhash_index_exact_threshold('ndocs', 'sketch'), 97 / 128.0 AS "97/128";
SELECT * FROM pg_temp.compare() WHERE k IN (5, 25);
DROP INDEX ndocs_default;
RESET enable_seqscan;

-- k larger than the table, and an empty table
SELECT count(*), count(DISTINCT id), min(similarity), max(similarity)
FROM near_duplicate_top_k('ndocs', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 100000);
CREATE TABLE nempty (id int, sketch minhash);
CREATE INDEX ON nempty USING gin (sketch minhash_ops(shingle_size = 2, rows = 1));
SELECT * FROM near_duplicate_top_k('nempty', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5));
SELECT * FROM near_duplicate_top_k('nempty', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 3);

-- partitions with indexes of their own, quoted names, a bigint id
CREATE TABLE "N parts" ("Doc Id" bigint, "My Sketch" minhash) PARTITION BY RANGE ("Doc Id");
CREATE TABLE "N parts low" PARTITION OF "N parts" FOR VALUES FROM (MINVALUE) TO (600);
CREATE TABLE "N parts high" PARTITION OF "N parts" FOR VALUES FROM (600) TO (MAXVALUE);
INSERT INTO "N parts" SELECT id, sketch FROM ndocs;
CREATE INDEX ON "N parts low" USING gin ("My Sketch" minhash_ops(shingle_size = 2, rows = 1));
SELECT minhash_index_exact_threshold('"N parts"', 'My Sketch') = 1 / 128.0 AS one_position;
-- a partition's own, less exact index decides
CREATE INDEX ON "N parts high" USING gin ("My Sketch" minhash_ops(shingle_size = 2, rows = 2));
SELECT minhash_index_exact_threshold('"N parts"', 'My Sketch'), 65 / 128.0 AS "65/128";
SELECT (SELECT array_agg(n.id ORDER BY n.o) FROM near_duplicate_top_k('"N parts"', 'My Sketch', 'Doc Id', nq.q, 7)
                                                 WITH ORDINALITY n(id, similarity, o))
       = (SELECT array_agg(r.id ORDER BY r.o) FROM pg_temp.ref(nq.q, 7) WITH ORDINALITY r(id, similarity, o)) AS same,
       count(*)
FROM nq GROUP BY 1;
-- one-row bands on every partition: counted in each, merged (columns in
-- another order in one partition)
CREATE TABLE "N parts mid" ("My Sketch" minhash, "Doc Id" bigint);
ALTER TABLE "N parts" DETACH PARTITION "N parts high";
DELETE FROM "N parts high" WHERE "Doc Id" < 3000;
INSERT INTO "N parts mid" SELECT sketch, id FROM ndocs WHERE id >= 600 AND id < 3000;
ALTER TABLE "N parts" ATTACH PARTITION "N parts mid" FOR VALUES FROM (600) TO (3000);
ALTER TABLE "N parts" ATTACH PARTITION "N parts high" FOR VALUES FROM (3000) TO (MAXVALUE);
CREATE INDEX ON "N parts mid" USING gin ("My Sketch" minhash_ops(shingle_size = 2, rows = 1));
CREATE INDEX ON "N parts high" USING gin ("My Sketch" minhash_ops(shingle_size = 2, rows = 1));
SELECT count(*) FILTER (WHERE c.ids IS NOT NULL) AS counted,
       count(*) FILTER (WHERE (SELECT array_agg(ROW(n.id, n.similarity)::text ORDER BY n.o)
                               FROM near_duplicate_top_k('"N parts"', 'My Sketch', 'Doc Id', nq.q, 7)
                                    WITH ORDINALITY n(id, similarity, o))
                              IS NOT DISTINCT FROM
                              (SELECT array_agg(ROW(r.id, r.similarity)::text ORDER BY r.o)
                               FROM pg_temp.ref(nq.q, 7) WITH ORDINALITY r(id, similarity, o))) AS same,
       count(*) AS queries
FROM nq, minhash_index_top_k('"N parts"', 'My Sketch', 'Doc Id', nq.q, 7) c;
SELECT c.index_name FROM minhash_index_top_k('"N parts"', 'My Sketch', 'Doc Id', (SELECT sketch FROM ndocs WHERE id = 5), 3) c;

-- NULL arguments: no rows (the function is STRICT)
SELECT count(*) FROM near_duplicate_top_k('ndocs', 'sketch', 'id', NULL);
SELECT count(*) FROM near_duplicate_top_k('ndocs', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), NULL);

-- bad inputs
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 0);
\echo :SQLSTATE
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), -3);
\echo :SQLSTATE
SELECT * FROM near_duplicate_top_k('ndocs', 'no_such_column', 'id', (SELECT sketch FROM ndocs WHERE id = 5));
\echo :SQLSTATE
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'no_such_id', (SELECT sketch FROM ndocs WHERE id = 5));
\echo :SQLSTATE
SELECT * FROM near_duplicate_top_k('ndocs', 'body', 'id', (SELECT sketch FROM ndocs WHERE id = 5));
\echo :SQLSTATE
SELECT * FROM near_duplicate_top_k('no_such_table', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5));
\echo :SQLSTATE
-- a query made otherwise than the indexed sketches
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'id', minhash_sketch('a b c d', num_perm => 64));
\echo :SQLSTATE
SELECT minhash_index_exact_threshold('ndocs', 'no_such_column');
\echo :SQLSTATE
SELECT * FROM minhash_index_top_k('ndocs', 'no_such_column', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 3);
\echo :SQLSTATE
SELECT * FROM minhash_index_top_k('ndocs', 'sketch', 'no_such_id', (SELECT sketch FROM ndocs WHERE id = 5), 3);
\echo :SQLSTATE
SELECT * FROM minhash_index_top_k('ndocs', 'sketch', 'id', (SELECT sketch FROM ndocs WHERE id = 5), 0);
\echo :SQLSTATE
-- a system column is no sketch: nothing counted
SELECT ids IS NULL AS passed_on FROM minhash_index_top_k('ndocs', 'sketch', 'ctid', (SELECT sketch FROM ndocs WHERE id = 5), 3);
-- a role that may not read the table learns nothing of its indexes
CREATE ROLE regress_ndd_topk_reader;
SET ROLE regress_ndd_topk_reader;
SELECT minhash_index_exact_threshold('ndocs', 'sketch');
\echo :SQLSTATE
SELECT * FROM near_duplicate_top_k('ndocs', 'sketch', 'id', minhash_sketch('a b c d', shingle_size => 2));
\echo :SQLSTATE
RESET ROLE;
-- row-level security: counting would bypass the policy, so the passes
-- answer, with the rows the policy lets through
CREATE TABLE ndocs_rls AS SELECT id, body, sketch FROM ndocs;
CREATE INDEX ON ndocs_rls USING gin (sketch minhash_ops(shingle_size = 2, rows = 1, key_bits = 16));
GRANT SELECT ON ndocs_rls TO regress_ndd_topk_reader;
ALTER TABLE ndocs_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY even_ids ON ndocs_rls TO regress_ndd_topk_reader USING (id % 2 = 0);
SET ROLE regress_ndd_topk_reader;
SELECT c.ids IS NULL AS passed_on
FROM minhash_index_top_k('ndocs_rls', 'sketch', 'id', (SELECT sketch FROM ndocs_rls WHERE id = 4), 5) c;
SELECT * FROM near_duplicate_top_k('ndocs_rls', 'sketch', 'id', (SELECT sketch FROM ndocs_rls WHERE id = 4), 5);
RESET ROLE;
-- a partitioned table's policy applies to its partitions, read through it
GRANT SELECT ON "N parts" TO regress_ndd_topk_reader;
ALTER TABLE "N parts" ENABLE ROW LEVEL SECURITY;
CREATE POLICY even_ids ON "N parts" TO regress_ndd_topk_reader USING ("Doc Id" % 2 = 0);
SET ROLE regress_ndd_topk_reader;
SELECT c.ids IS NULL AS passed_on
FROM minhash_index_top_k('"N parts"', 'My Sketch', 'Doc Id', (SELECT sketch FROM ndocs_rls WHERE id = 4), 5) c;
SELECT * FROM near_duplicate_top_k('"N parts"', 'My Sketch', 'Doc Id', (SELECT sketch FROM ndocs_rls WHERE id = 4), 3);
RESET ROLE;
ALTER TABLE "N parts" DISABLE ROW LEVEL SECURITY;
DROP POLICY even_ids ON "N parts";
REVOKE SELECT ON "N parts" FROM regress_ndd_topk_reader;
-- SELECT on the two columns only is enough to count
ALTER TABLE ndocs_rls DISABLE ROW LEVEL SECURITY;
REVOKE SELECT ON ndocs_rls FROM regress_ndd_topk_reader;
GRANT SELECT (id, sketch) ON ndocs_rls TO regress_ndd_topk_reader;
SELECT sketch AS q4 FROM ndocs WHERE id = 4 \gset
SET ROLE regress_ndd_topk_reader;
SELECT c.ids, c.index_name
FROM minhash_index_top_k('ndocs_rls', 'sketch', 'id', :'q4'::minhash, 3) c;
SELECT * FROM near_duplicate_top_k('ndocs_rls', 'sketch', 'id', :'q4'::minhash, 3);
RESET ROLE;
DROP TABLE ndocs_rls;
DROP ROLE regress_ndd_topk_reader;
DROP FUNCTION pg_temp.compare(regclass), pg_temp.ref(minhash, int, regclass);
DROP TABLE "N parts", nempty, nq, ndocs, ntexts, nbase;
