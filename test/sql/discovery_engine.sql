-- The discovery engine (ndd.discovery_path = engine) against the SQL path
-- and brute force: the same pairs with the same scores, bit for bit.
SET extra_float_digits = 0;
\set SHOW_CONTEXT never

-- uniform(key, stream): a number in [0, 1) hashed from its arguments
CREATE FUNCTION pg_temp.uniform(key bigint, stream bigint) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT
AS $$ SELECT (hashint8extended(key, stream) & 4503599627370495)::float8 / 4503599627370496 $$;

-- 1,200 documents: 300 families of a base and three edited copies, then
-- 40 copies of one text (a key shared by 40 rows), empty documents, a
-- row without a sketch and rows without an id
CREATE TABLE ebase AS
SELECT f, array_agg('w' || floor(pg_temp.uniform(f * 60 + i, 1) * 3000)::int ORDER BY i) AS words
FROM generate_series(1, 300) f, generate_series(1, 60) i GROUP BY f;
CREATE TABLE edocs (id bigint, body text);
INSERT INTO edocs
SELECT f * 4 + v,
       CASE WHEN v = 0 THEN array_to_string(words, ' ')
            ELSE (SELECT string_agg(CASE WHEN pg_temp.uniform((f * 4 + v) * 60 + n, 2) < 0.015 * v * (1 + f % 3)
                                         THEN 'x' || floor(pg_temp.uniform((f * 4 + v) * 60 + n, 3) * 3000)::int ELSE w END, ' ' ORDER BY n)
                  FROM unnest(words) WITH ORDINALITY AS u(w, n)) END
FROM ebase, generate_series(0, 3) v;
INSERT INTO edocs SELECT 5000 + i, 'the same text repeated in forty rows of the table word for word' FROM generate_series(1, 40) i;
INSERT INTO edocs VALUES (6001, ''), (6002, ''), (6003, NULL), (NULL, 'w1 w2 w3 w4 w5 w6 w7 w8'), (NULL, 'w1 w2 w3 w4 w5 w6 w7 w8');
ALTER TABLE edocs ADD COLUMN m64 minhash, ADD COLUMN m128 minhash, ADD COLUMN m256 minhash, ADD COLUMN sh simhash;
UPDATE edocs SET m64 = minhash_sketch(body, num_perm => 64), m128 = minhash_sketch(body),
                 m256 = minhash_sketch(body, num_perm => 256), sh = simhash(body);
ANALYZE edocs;

-- the pairs of one path, as a table of (id_a, id_b, similarity, distance)
CREATE FUNCTION pg_temp.pairs_by(path text, col name, t float8, k int DEFAULT NULL,
                                  v name DEFAULT NULL, tbl regclass DEFAULT 'edocs')
RETURNS TABLE (id_a bigint, id_b bigint, similarity float8, distance int)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('ndd.discovery_path', path, true);
  RETURN QUERY SELECT * FROM near_duplicate_pairs(tbl, col, 'id', t, verify_column => v, max_distance => k);
END $$;

-- pairs in one path and not the other, both ways, and how many there are
CREATE FUNCTION pg_temp.compare(col name, t float8, k int DEFAULT NULL,
                                 v name DEFAULT NULL, tbl regclass DEFAULT 'edocs')
RETURNS TABLE (pairs bigint, only_engine bigint, only_sql bigint)
LANGUAGE sql AS $$
  WITH e AS (SELECT * FROM pg_temp.pairs_by('engine', col, t, k, v, tbl)),
       s AS (SELECT * FROM pg_temp.pairs_by('sql', col, t, k, v, tbl))
  SELECT (SELECT count(*) FROM e),
         (SELECT count(*) FROM (SELECT * FROM e EXCEPT ALL SELECT * FROM s) x),
         (SELECT count(*) FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM e) x)
$$;

-- brute force, for the engine alone
CREATE TABLE ebrute AS
SELECT a.id AS id_a, b.id AS id_b, similarity(a.m128, b.m128) AS similarity
FROM edocs a JOIN edocs b ON a.id < b.id
WHERE similarity(a.m128, b.m128) >= 0.5;

-- minhash at five thresholds and three sketch sizes
BEGIN;
SELECT t, c.* FROM unnest(ARRAY[0.5, 0.7, 0.8, 0.9, 1.0]) t, pg_temp.compare('m128', t) c;
SELECT t, c.* FROM unnest(ARRAY[0.6, 0.9]) t, pg_temp.compare('m64', t) c;
SELECT t, c.* FROM unnest(ARRAY[0.6, 0.9]) t, pg_temp.compare('m256', t) c;
SELECT t, (SELECT count(*) FROM ebrute WHERE similarity >= t) AS brute_force,
       (SELECT count(*) FROM ((SELECT id_a, id_b, similarity FROM pg_temp.pairs_by('engine', 'm128', t)
                               EXCEPT SELECT * FROM ebrute WHERE similarity >= t)
                              UNION ALL
                              (SELECT * FROM ebrute WHERE similarity >= t
                               EXCEPT SELECT id_a, id_b, similarity FROM pg_temp.pairs_by('engine', 'm128', t))) d) AS differences
FROM unnest(ARRAY[0.5, 0.8]) t;
-- simhash at every distance
SELECT k, c.* FROM generate_series(0, 6) k, pg_temp.compare('sh', NULL, k) c;
COMMIT;

-- verification against the texts: the exact Jaccard of the same pairs, on
-- text, varchar, char(n) (trailing spaces do not count, as in its cast to
-- text) and a domain, for minhash and simhash candidates
CREATE DOMAIN pg_temp.doc_text AS text;
CREATE TABLE everify AS
SELECT id, m128, sh, body,
       CASE WHEN id % 5 = 0 THEN body || '   ' ELSE body END::varchar AS vbody,
       CASE WHEN id % 5 = 0 THEN body || '   ' ELSE body END::char(600) AS cbody,
       body::pg_temp.doc_text AS dbody
FROM edocs;
UPDATE everify SET body = NULL, vbody = NULL WHERE id IN (8, 1001);
BEGIN;
SELECT v, t, c.* FROM unnest(ARRAY['body', 'vbody', 'cbody', 'dbody']::name[]) v, unnest(ARRAY[0.5, 0.8]) t,
                      pg_temp.compare('m128', t, NULL, v, 'everify') c;
SELECT c.* FROM pg_temp.compare('sh', 0.7, 3, 'body', 'everify') c;
-- each pair kept is at least the threshold by jaccard(), and none is missed
SELECT count(*) AS kept,
       count(*) FILTER (WHERE p.similarity <> jaccard(a.body, b.body) OR p.similarity < 0.8) AS wrong
FROM pg_temp.pairs_by('engine', 'm128', 0.8, NULL, 'body', 'everify') p
JOIN everify a ON a.id = p.id_a JOIN everify b ON b.id = p.id_b;
COMMIT;

-- the least work_mem: the engine's partitions are split again and again
SET work_mem = '64kB';
BEGIN;
SELECT t, c.* FROM unnest(ARRAY[0.5, 0.9]) t, pg_temp.compare('m128', t) c;
SELECT c.* FROM pg_temp.compare('sh', NULL, 3) c;
COMMIT;
RESET work_mem;

-- past the filter's 4 bits a key, the engine counts keys exactly: each row
-- 4 times at 64kB is 1.1 bits a key for minhash, 8 times 2.9 for simhash
CREATE TABLE eexact AS SELECT id + 10000 * c AS id, m128, sh FROM edocs, generate_series(0, 7) c;
CREATE TABLE eexact4 AS SELECT * FROM eexact WHERE id < 40000;
SET work_mem = '64kB';
BEGIN;
SELECT t, c.* FROM unnest(ARRAY[0.5, 0.9]) t, pg_temp.compare('m128', t, NULL, NULL, 'eexact4') c;
SELECT c.* FROM pg_temp.compare('sh', NULL, 3, NULL, 'eexact') c;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT c.* FROM pg_temp.compare('m128', 0.8, NULL, NULL, 'eexact4') c;
SELECT c.* FROM pg_temp.compare('sh', NULL, 3, NULL, 'eexact') c;
COMMIT;
RESET work_mem;

-- tables of 64 GB and more keep whole heap positions in the engine's
-- records (ndd.discovery_row_numbers = off lays them out so here, which
-- leaves the filter): the same pairs, split at 64kB, with workers too
SET ndd.discovery_row_numbers = off;
BEGIN;
SELECT t, c.* FROM unnest(ARRAY[0.5, 0.9]) t, pg_temp.compare('m128', t) c;
SELECT c.* FROM pg_temp.compare('sh', NULL, 3) c;
SET LOCAL work_mem = '64kB';
SELECT c.* FROM pg_temp.compare('m128', 0.8, NULL, NULL, 'eexact4') c;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT c.* FROM pg_temp.compare('m128', 0.8, NULL, NULL, 'eexact4') c;
SELECT c.* FROM pg_temp.compare('sh', NULL, 3, NULL, 'eexact') c;
COMMIT;
RESET ndd.discovery_row_numbers;

-- parallel workers: the same pairs as one process, at any work_mem
-- (workers_of: the answer of a run with at most n workers)
CREATE FUNCTION pg_temp.workers_of(n int, col name, t float8, k int DEFAULT NULL)
RETURNS TABLE (id_a bigint, id_b bigint, similarity float8, distance int)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('max_parallel_workers_per_gather', n::text, true);
  PERFORM set_config('min_parallel_table_scan_size', '0', true);
  RETURN QUERY SELECT * FROM pg_temp.pairs_by('engine', col, t, k);
END $$;
CREATE FUNCTION pg_temp.compare_workers(col name, t float8, k int DEFAULT NULL)
RETURNS TABLE (pairs bigint, only_serial bigint, only_parallel bigint)
LANGUAGE sql AS $$
  WITH s AS (SELECT * FROM pg_temp.workers_of(0, col, t, k)),
       p AS (SELECT * FROM pg_temp.workers_of(2, col, t, k))
  SELECT (SELECT count(*) FROM p),
         (SELECT count(*) FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM p) x),
         (SELECT count(*) FROM (SELECT * FROM p EXCEPT ALL SELECT * FROM s) x)
$$;
BEGIN;
SELECT t, c.* FROM unnest(ARRAY[0.5, 0.8]) t, pg_temp.compare_workers('m128', t) c;
SELECT c.* FROM pg_temp.compare_workers('sh', NULL, 3) c;
SET LOCAL work_mem = '64kB';
SELECT c.* FROM pg_temp.compare_workers('m128', 0.8) c;
COMMIT;
BEGIN;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT c.* FROM pg_temp.compare('m128', 0.8, NULL, 'cbody', 'everify') c;
SET LOCAL work_mem = '64kB';
SELECT c.* FROM pg_temp.compare('m128', 0.5, NULL, 'body', 'everify') c;
COMMIT;
-- verification whose grouping by component would pass work_mem (3,000
-- rows in pairs): the pairs are checked in the order of their first rows
CREATE TABLE everify_many AS
SELECT i AS id, (SELECT string_agg('w' || ((i / 2) * 8 + k), ' ') FROM generate_series(1, 8) k) AS body
FROM generate_series(0, 2999) i;
ALTER TABLE everify_many ADD COLUMN m128 minhash;
UPDATE everify_many SET m128 = minhash_sketch(body);
BEGIN;
SET LOCAL work_mem = '64kB';
SELECT c.* FROM pg_temp.compare('m128', 0.8, NULL, 'body', 'everify_many') c;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT c.* FROM pg_temp.compare('m128', 0.8, NULL, 'body', 'everify_many') c;
RESET work_mem;
SELECT c.* FROM pg_temp.compare('m128', 0.8, NULL, 'body', 'everify_many') c;
COMMIT;
-- a component's texts are counted in one table of up to 64 texts; past 64
-- rows (70 copies of a text of 100 words, each with a word of its own) or past the
-- table's budget (three texts of 1,500 words at 64kB) its pairs are
-- checked one at a time, with the same answers
CREATE TABLE everify_groups AS
SELECT c AS id, (SELECT string_agg(CASE WHEN w = c THEN 'z' || c ELSE 'w' || w END, ' ')
                 FROM generate_series(0, 99) w) AS body
FROM generate_series(1, 70) c
UNION ALL
SELECT 100 + c, (SELECT string_agg(CASE WHEN w % 500 = c THEN 'y' || w ELSE 'v' || w END, ' ')
                 FROM generate_series(0, 1499) w)
FROM generate_series(1, 3) c;
ALTER TABLE everify_groups ADD COLUMN m128 minhash;
UPDATE everify_groups SET m128 = minhash_sketch(body);
BEGIN;
SELECT c.* FROM pg_temp.compare('m128', 0.8, NULL, 'body', 'everify_groups') c;
SET LOCAL work_mem = '64kB';
SELECT c.* FROM pg_temp.compare('m128', 0.8, NULL, 'body', 'everify_groups') c;
SELECT count(*) AS kept,
       count(*) FILTER (WHERE p.similarity <> jaccard(a.body, b.body) OR p.similarity < 0.8) AS wrong
FROM pg_temp.pairs_by('engine', 'm128', 0.8, NULL, 'body', 'everify_groups') p
JOIN everify_groups a ON a.id = p.id_a JOIN everify_groups b ON b.id = p.id_b;
COMMIT;
-- a worker's error reaches the caller as the leader's would
BEGIN;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL min_parallel_table_scan_size = 0;
UPDATE edocs SET m128 = minhash_sketch(body, seed => 7) WHERE id = 1001;
SELECT count(*) FROM pg_temp.pairs_by('engine', 'm128', 0.8);
ROLLBACK;
-- in a serializable transaction, and with the rows it wrote itself
BEGIN ISOLATION LEVEL SERIALIZABLE;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL min_parallel_table_scan_size = 0;
INSERT INTO edocs (id, body, m128) SELECT 8000 + id, body, m128 FROM edocs WHERE id BETWEEN 4 AND 40;
SELECT c.* FROM pg_temp.compare_workers('m128', 0.8) c;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT c.* FROM pg_temp.compare('m128', 0.8) c;
ROLLBACK;

-- clusters, and live clusters' first build inside its INSERT, with workers
CREATE TABLE eclu (id int PRIMARY KEY, m128 minhash);
INSERT INTO eclu SELECT id, m128 FROM edocs WHERE id IS NOT NULL AND m128 IS NOT NULL;
CREATE INDEX ON eclu USING gin (m128 minhash_ops (threshold = 0.8));
BEGIN;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL min_parallel_table_scan_size = 0;
CREATE TABLE eclu_parallel AS SELECT * FROM near_duplicate_clusters('eclu', 'm128', 'id', 0.8);
SELECT ndd_maintain_clusters('eclu', 'm128', 'id', threshold => 0.8);
COMMIT;
SET ndd.discovery_path = sql;
SELECT (SELECT count(*) FROM eclu_parallel) AS clustered,
       (SELECT count(*) FROM (SELECT id, cluster_id FROM eclu_parallel
                              EXCEPT SELECT id, cluster_id FROM near_duplicate_clusters('eclu', 'm128', 'id', 0.8)) x) AS differences,
       (SELECT count(*) FROM (SELECT id, cluster_id FROM eclu_clusters
                              EXCEPT SELECT id, cluster_id FROM eclu_parallel) x) AS live_differences;
RESET ndd.discovery_path;

-- rows updated (dead versions behind them) and rows this transaction
-- inserted are read as the SQL path reads them
BEGIN;
UPDATE edocs SET m128 = minhash_sketch(body || ' tail') WHERE id % 7 = 0;
INSERT INTO edocs (id, body, m128) SELECT 7000 + id, body, m128 FROM edocs WHERE id BETWEEN 4 AND 40;
SELECT c.* FROM pg_temp.compare('m128', 0.8) c;
ROLLBACK;

-- the same progress as the SQL path, step by step
SET ndd.discovery_path = engine;
\set VERBOSITY terse
SELECT count(*) FROM near_duplicate_pairs('edocs', 'm128', 'id', 0.8, progress => true);
SET ndd.discovery_path = sql;
SELECT count(*) FROM near_duplicate_pairs('edocs', 'm128', 'id', 0.8, progress => true);
-- where the filter would have too few bits a key (2,484 rows at 64kB), the
-- engine counts keys exactly: fewer keys kept, the same pairs
CREATE TABLE ebig AS SELECT id, m128 FROM edocs UNION ALL SELECT id + 100000, m128 FROM edocs;
SET work_mem = '64kB';
SET ndd.discovery_path = engine;
SELECT count(*) FROM near_duplicate_pairs('ebig', 'm128', 'id', 0.8, progress => true);
SET ndd.discovery_path = sql;
SELECT count(*) FROM near_duplicate_pairs('ebig', 'm128', 'id', 0.8);
-- its temporary files count against temp_file_limit, with workers too:
-- SQLSTATE 53400, and the files gone with the error
SET ndd.discovery_path = engine;
SET temp_file_limit = '64kB';
\set VERBOSITY sqlstate
SELECT count(*) FROM near_duplicate_pairs('ebig', 'm128', 'id', 0.8);
BEGIN;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT count(*) FROM near_duplicate_pairs('ebig', 'm128', 'id', 0.8);
ROLLBACK;
\set VERBOSITY terse
RESET temp_file_limit;
SELECT count(*) AS files_left FROM pg_ls_tmpdir();
RESET work_mem;
\set VERBOSITY default

-- sketches made in different ways: the same error on both paths
CREATE TABLE emixed AS SELECT id, m128 AS sketch FROM edocs WHERE id < 100 ORDER BY id;
UPDATE emixed SET sketch = minhash_sketch('other words entirely', shingle_size => 3) WHERE id = 57;
SET ndd.discovery_path = engine;
SELECT count(*) FROM near_duplicate_pairs('emixed', 'sketch', 'id', 0.8);
SET ndd.discovery_path = sql;
SELECT count(*) FROM near_duplicate_pairs('emixed', 'sketch', 'id', 0.8);

-- ids of every integer type, and a domain over one
CREATE DOMAIN pg_temp.doc_id AS integer CHECK (VALUE > 0);
CREATE TABLE eint2 AS SELECT id::smallint AS id, m128 FROM edocs WHERE id < 2000;
CREATE TABLE eint4 AS SELECT id::pg_temp.doc_id AS id, m128 FROM edocs WHERE id < 2000;
CREATE TABLE etext AS SELECT id::text AS id, m128 FROM edocs WHERE id < 2000;
SET ndd.discovery_path = engine;
SELECT (SELECT count(*) FROM near_duplicate_pairs('eint2', 'm128', 'id', 0.8)) AS int2,
       (SELECT count(*) FROM near_duplicate_pairs('eint4', 'm128', 'id', 0.8)) AS domain_int4;

-- what the engine does not read: an error under engine, the SQL path under auto
CREATE VIEW eview AS SELECT * FROM edocs;
SELECT count(*) FROM near_duplicate_pairs('eview', 'm128', 'id', 0.8);
SELECT count(*) FROM near_duplicate_pairs('etext', 'm128', 'id', 0.8);
CREATE MATERIALIZED VIEW emat AS SELECT * FROM eint2 WITH NO DATA;
SELECT count(*) FROM near_duplicate_pairs('emat', 'm128', 'id', 0.8);
REFRESH MATERIALIZED VIEW emat;
SELECT count(*) FROM near_duplicate_pairs('emat', 'm128', 'id', 0.8);
CREATE TABLE echild () INHERITS (eint2);
SELECT count(*) FROM near_duplicate_pairs('eint2', 'm128', 'id', 0.8);
DROP TABLE echild;
SET ndd.discovery_path = auto;
SELECT count(*) FROM near_duplicate_pairs('eview', 'm128', 'id', 0.8);
REFRESH MATERIALIZED VIEW emat WITH NO DATA;
SELECT count(*) FROM near_duplicate_pairs('emat', 'm128', 'id', 0.8);
SELECT count(*) FROM near_duplicate_pairs('etext', 'm128', 'id', 0.8);
RESET ndd.discovery_path;
SHOW ndd.discovery_path;
SET ndd.discovery_path = sideways;

-- row-level security: the engine stands aside, and the policy holds
CREATE ROLE ndd_engine_reader;
GRANT SELECT ON edocs TO ndd_engine_reader;
ALTER TABLE edocs ENABLE ROW LEVEL SECURITY;
CREATE POLICY even_only ON edocs TO ndd_engine_reader USING (id % 2 = 0);
SET ROLE ndd_engine_reader;
SET ndd.discovery_path = engine;
SELECT count(*) FROM near_duplicate_pairs('edocs', 'm128', 'id', 0.8);
SET ndd.discovery_path = auto;
SELECT count(*) = count(*) FILTER (WHERE id_a % 2 = 0 AND id_b % 2 = 0) AS only_visible_rows
FROM near_duplicate_pairs('edocs', 'm128', 'id', 0.8);
RESET ROLE;
ALTER TABLE edocs DISABLE ROW LEVEL SECURITY;
DROP POLICY even_only ON edocs;
REVOKE ALL ON edocs FROM ndd_engine_reader;
DROP ROLE ndd_engine_reader;
RESET ndd.discovery_path;
