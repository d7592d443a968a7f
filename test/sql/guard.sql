-- The insert guard keeps its promise: after renames, across the partitions
-- of a partitioned table, at every threshold it accepts, and whatever the
-- inserting role may read; its tokens are nobody's to read, fill or lock.
SET extra_float_digits = 0;
\set SHOW_CONTEXT never

CREATE FUNCTION doc(variant text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT 'near duplicate detection inside postgres finds copies of crawled pages '
        || 'articles tickets and product listings with plain sql and every answer '
        || 'is transactional because the data never leaves the database ' || variant $$;

-------------------------------------------------------------------------
-- (a) Renames: the statements follow the table, not its old name
-------------------------------------------------------------------------
CREATE TABLE g_a (id int PRIMARY KEY, sketch minhash);
CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON g_a
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
INSERT INTO g_a VALUES (1, minhash_sketch(doc('alpha')));
-- the statements are prepared now, naming g_a
INSERT INTO g_a VALUES (2, minhash_sketch(doc('alpha')));
\echo :SQLSTATE
ALTER TABLE g_a RENAME TO g_b;
CREATE TABLE g_a (id int PRIMARY KEY, sketch minhash);
CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON g_a
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
-- g_b still holds row 1: a copy of it is rejected, citing row 1
INSERT INTO g_b VALUES (3, minhash_sketch(doc('alpha')));
\echo :SQLSTATE
-- the new g_a is empty: the same text goes in once, then is rejected there
INSERT INTO g_a VALUES (101, minhash_sketch(doc('alpha')));
INSERT INTO g_a VALUES (102, minhash_sketch(doc('alpha beta')));
\echo :SQLSTATE
-- a new schema, and a renamed schema
CREATE SCHEMA g_s1;
ALTER TABLE g_b SET SCHEMA g_s1;
INSERT INTO g_s1.g_b VALUES (4, minhash_sketch(doc('alpha')));
\echo :SQLSTATE
ALTER SCHEMA g_s1 RENAME TO g_s2;
INSERT INTO g_s2.g_b VALUES (5, minhash_sketch(doc('alpha')));
\echo :SQLSTATE
-- a renamed key column shows in the detail
ALTER TABLE g_s2.g_b RENAME COLUMN id TO doc_id;
INSERT INTO g_s2.g_b VALUES (6, minhash_sketch(doc('alpha')));
\echo :SQLSTATE
-- a renamed sketch column: the trigger names a column that is gone
ALTER TABLE g_s2.g_b RENAME COLUMN sketch TO fp;
INSERT INTO g_s2.g_b VALUES (7, minhash_sketch(doc('alpha')));
\echo :SQLSTATE
SELECT doc_id FROM g_s2.g_b ORDER BY 1;
SELECT id FROM g_a ORDER BY 1;

-------------------------------------------------------------------------
-- (b) Partitions: every clone checks the whole partitioned table
-------------------------------------------------------------------------
CREATE TABLE g_parts (id int, sketch minhash) PARTITION BY RANGE (id);
CREATE TABLE g_parts_1 PARTITION OF g_parts FOR VALUES FROM (0) TO (100);
CREATE TABLE g_parts_2 PARTITION OF g_parts FOR VALUES FROM (100) TO (200);
CREATE INDEX ON g_parts USING gin (sketch minhash_ops) WITH (fastupdate = off);
CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON g_parts
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
INSERT INTO g_parts VALUES (1, minhash_sketch(doc('alpha')));
-- through the parent, and straight into the other partition
INSERT INTO g_parts VALUES (150, minhash_sketch(doc('alpha')));
\echo :SQLSTATE
INSERT INTO g_parts_2 VALUES (151, minhash_sketch(doc('alpha')));
\echo :SQLSTATE
-- a partition attached later is covered too, with columns in another order
CREATE TABLE g_parts_3 (sketch minhash, id int);
ALTER TABLE g_parts ATTACH PARTITION g_parts_3 FOR VALUES FROM (200) TO (300);
INSERT INTO g_parts_3 (id, sketch) VALUES (250, minhash_sketch(doc('alpha')));
\echo :SQLSTATE
-- a row may move to another partition: it is no near-duplicate of itself
UPDATE g_parts SET id = 160 WHERE id = 1;
-- an unrelated row goes in; an update that copies it is caught
INSERT INTO g_parts VALUES (2, minhash_sketch('an unrelated text about gardening and tomatoes in the summer heat'));
UPDATE g_parts SET sketch = minhash_sketch(doc('alpha')) WHERE id = 2;
\echo :SQLSTATE
-- without a primary key the detail names the partition and the ctid
SELECT tableoid::regclass, id FROM g_parts ORDER BY id;

-------------------------------------------------------------------------
-- (c) Thresholds: never answered by LSH recall
-------------------------------------------------------------------------
-- 1 base text of 100 words, and 220 variants that each keep about 67 of its
-- words and add 33 of their own: Jaccard about 0.5 with the base, so their
-- estimates fall on both sides of 0.5
CREATE FUNCTION variant(i int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(w, ' ' ORDER BY w) FROM (
        SELECT 'w' || g AS w FROM generate_series(1, 100) g
        WHERE i = 0 OR abs(('x' || left(md5(i || ':' || g), 8))::bit(32)::int) % 100 >= 33
        UNION ALL
        SELECT 'v' || i || 'x' || g FROM generate_series(1, 33) g WHERE i > 0) s $$;
SELECT count(*) AS variants, round(avg(jaccard(variant(0), variant(i), 1))::numeric, 2) AS mean_jaccard,
       round(min(jaccard(variant(0), variant(i), 1))::numeric, 2) AS min_jaccard,
       round(max(jaccard(variant(0), variant(i), 1))::numeric, 2) AS max_jaccard
FROM generate_series(1, 220) i;

CREATE TABLE g_low (id int PRIMARY KEY, sketch minhash);
-- the default banding (0.8: 32 bands of 4 rows) finds pairs at 0.5 by chance
CREATE INDEX g_low_sketch ON g_low USING gin (sketch minhash_ops(shingle_size = 1)) WITH (fastupdate = off);
CREATE TRIGGER guard BEFORE INSERT ON g_low
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.5', 'skip');
SET client_min_messages = warning;
INSERT INTO g_low SELECT i, minhash_sketch(variant(i), shingle_size => 1) FROM generate_series(0, 220) i;
\echo :SQLSTATE
RESET client_min_messages;
-- so the trigger refuses that index, at first use
INSERT INTO g_low VALUES (0, minhash_sketch(variant(0), shingle_size => 1));
\echo :SQLSTATE
-- the same table with an index exact at 0.5, and one with no index at all
DROP INDEX g_low_sketch;
CREATE INDEX g_low_sketch ON g_low USING gin (sketch minhash_ops(shingle_size = 1, threshold = 0.5))
    WITH (fastupdate = off);
CREATE TABLE g_seq (id int PRIMARY KEY, sketch minhash);
CREATE TRIGGER guard BEFORE INSERT ON g_seq
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.5', 'skip');
SET client_min_messages = warning;
INSERT INTO g_low SELECT i, minhash_sketch(variant(i), shingle_size => 1) FROM generate_series(0, 220) i;
INSERT INTO g_seq SELECT i, minhash_sketch(variant(i), shingle_size => 1) FROM generate_series(0, 220) i;
RESET client_min_messages;
SELECT pg_stat_force_next_flush();
SELECT idx_scan > 0 AS index_used FROM pg_stat_user_indexes WHERE indexrelname = 'g_low_sketch';
-- some variants were near-duplicates of the base and were skipped, the rest
-- went in; no pair left in either table reaches 0.5, and both kept the same rows
SELECT count(*) AS kept, count(*) FILTER (WHERE similarity(sketch, minhash_sketch(variant(0), shingle_size => 1)) >= 0.5) AS near_base
FROM g_low WHERE id > 0;
SELECT count(*) AS pairs_at_half FROM g_low a JOIN g_low b ON a.id < b.id WHERE similarity(a.sketch, b.sketch) >= 0.5;
SELECT count(*) AS pairs_at_half FROM g_seq a JOIN g_seq b ON a.id < b.id WHERE similarity(a.sketch, b.sketch) >= 0.5;
SELECT (SELECT array_agg(id ORDER BY id) FROM g_low) = (SELECT array_agg(id ORDER BY id) FROM g_seq) AS same_rows;

-------------------------------------------------------------------------
-- Roles: the check sees every row; the detail shows only what the role
-- may read; the tokens are nobody's
-------------------------------------------------------------------------
CREATE ROLE regress_ndd_writer;
CREATE ROLE regress_ndd_stranger;
CREATE TABLE g_owned (id int PRIMARY KEY, who text DEFAULT current_user, sketch minhash);
CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON g_owned
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
INSERT INTO g_owned (id, sketch) VALUES (1, minhash_sketch(doc('alpha')));
GRANT INSERT ON g_owned TO regress_ndd_writer;
SET ROLE regress_ndd_writer;
-- may insert, may not read: rejected all the same, without the key
INSERT INTO g_owned (id, sketch) VALUES (2, minhash_sketch(doc('alpha')));
\echo :SQLSTATE
INSERT INTO g_owned (id, sketch) VALUES (3, minhash_sketch(doc('unrelated words about the weather in spring')));
RESET ROLE;
-- row-level security hides other roles' rows from the writer, not from the check
GRANT SELECT ON g_owned TO regress_ndd_writer;
ALTER TABLE g_owned ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON g_owned USING (who = current_user);
SET ROLE regress_ndd_writer;
SELECT id FROM g_owned ORDER BY id;
INSERT INTO g_owned (id, sketch) VALUES (4, minhash_sketch(doc('alpha')));
\echo :SQLSTATE
-- under row-level security no row is named, not even its own (as for a
-- unique violation)
INSERT INTO g_owned (id, sketch) VALUES (5, minhash_sketch(doc('unrelated words about the weather in spring')));
\echo :SQLSTATE
RESET ROLE;
SELECT id, who FROM g_owned ORDER BY id;
-- a stranger can neither read, fill, lock nor change the tokens
SET ROLE regress_ndd_stranger;
SELECT count(*) FROM ndd_near_duplicate_locks;
\echo :SQLSTATE
SELECT relid FROM ndd_near_duplicate_locks FOR UPDATE;
\echo :SQLSTATE
INSERT INTO ndd_near_duplicate_locks VALUES (1, 1, 0);
\echo :SQLSTATE
UPDATE ndd_near_duplicate_locks SET claims = 0;
\echo :SQLSTATE
DELETE FROM ndd_near_duplicate_locks;
\echo :SQLSTATE
BEGIN;
LOCK TABLE ndd_near_duplicate_locks;
\echo :SQLSTATE
ROLLBACK;
RESET ROLE;
-- nothing of ndd is granted to PUBLIC beyond running its functions: the
-- table's rights are its owner's alone (the owner's default rights, which
-- gained MAINTAIN in PostgreSQL 17)
SELECT c.relname, c.relacl IS NOT NULL AS explicit_acl,
       c.relacl = acldefault('r', c.relowner) AS owner_only
FROM pg_class c JOIN pg_depend d ON d.objid = c.oid
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'ndd')
  AND d.classid = 'pg_class'::regclass;
-- the guard's tokens are locks held to commit (advisory tags of ndd's own
-- kind, 28260), not rows: nothing is left behind
SELECT count(*) AS token_rows FROM ndd_near_duplicate_locks WHERE relid = 'g_owned'::regclass;
BEGIN;
INSERT INTO g_owned (id, sketch) VALUES (6, minhash_sketch(doc('a row of its own, with words nobody else uses here')));
SELECT count(*) > 10 AS token_locks, bool_and(mode = 'ExclusiveLock' AND granted) AS exclusive
FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 28260 AND classid = 'g_owned'::regclass::oid
  AND pid = pg_backend_pid();
SELECT mode FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 28261
  AND classid = 'g_owned'::regclass::oid AND pid = pg_backend_pid();
-- a bulk load takes the table's tag instead, past 256 tokens
INSERT INTO g_owned (id, sketch)
SELECT 100 + i, minhash_sketch((SELECT string_agg(md5(i || ':' || j), ' ') FROM generate_series(1, 30) j))
FROM generate_series(1, 20) i;
SELECT count(*) <= 256 AS bounded FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 28260
  AND classid = 'g_owned'::regclass::oid AND pid = pg_backend_pid();
SELECT mode FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 28261
  AND classid = 'g_owned'::regclass::oid AND pid = pg_backend_pid() ORDER BY mode;
COMMIT;
SELECT count(*) AS token_locks_after_commit FROM pg_locks WHERE locktype = 'advisory' AND objsubid IN (28260, 28261);
-- the token row of a cluster table kept by ndd_maintain_clusters goes with it
CREATE TABLE g_kept (id int PRIMARY KEY, sketch minhash);
SELECT ndd_maintain_clusters('g_kept', 'sketch', 'id', 0.8);
INSERT INTO g_kept VALUES (1, minhash_sketch(doc('alpha'))), (2, minhash_sketch(doc('alpha')));
SELECT count(*) AS has_token FROM ndd_near_duplicate_locks WHERE relid = 'g_kept_clusters'::regclass;
CREATE TEMP TABLE g_kept_oid AS SELECT 'g_kept_clusters'::regclass::oid AS relid;
DROP TABLE g_kept, g_kept_clusters;
SELECT count(*) AS tokens_left FROM ndd_near_duplicate_locks WHERE relid = (SELECT relid FROM g_kept_oid);
-- what the event trigger forgets: a dropped table's rows, not those of a
-- table that lost a column, nor any when something else is dropped
CREATE TABLE g_forget (id int, extra int);
CREATE FUNCTION g_forget_fn() RETURNS int LANGUAGE sql AS 'SELECT 1';
INSERT INTO ndd_near_duplicate_locks VALUES ('g_forget'::regclass, 1, 0), ('g_forget'::regclass, 2, 0);
CREATE TEMP TABLE g_forget_oid AS SELECT 'g_forget'::regclass::oid AS relid;
ALTER TABLE g_forget DROP COLUMN extra;
DROP FUNCTION g_forget_fn();
SELECT count(*) AS after_other_drops FROM ndd_near_duplicate_locks WHERE relid = (SELECT relid FROM g_forget_oid);
DROP TABLE g_forget;
SELECT count(*) AS after_table_drop FROM ndd_near_duplicate_locks WHERE relid = (SELECT relid FROM g_forget_oid);
-- its function serves the event trigger only
SELECT ndd_forget_dropped_tables();
\echo :SQLSTATE
DROP TABLE g_owned;
-- a temporary table takes no token: no other session can write it
CREATE TEMP TABLE g_temp (id int, sketch minhash);
CREATE TRIGGER guard BEFORE INSERT ON g_temp
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
BEGIN;
INSERT INTO g_temp VALUES (1, minhash_sketch(doc('alpha')));
SELECT count(*) AS temp_token_locks FROM pg_locks WHERE locktype = 'advisory' AND objsubid IN (28260, 28261)
  AND pid = pg_backend_pid();
COMMIT;
INSERT INTO g_temp VALUES (2, minhash_sketch(doc('alpha')));
\echo :SQLSTATE

-- a bulk load into an empty guarded table: every row's check goes through
-- the index (a plan made while the table was empty scanned it), and the
-- pending list of fastupdate stays short instead of being read whole for
-- every row
CREATE EXTENSION pgstattuple;
CREATE TABLE g_bulk (id int PRIMARY KEY, sketch minhash);
CREATE INDEX g_bulk_sketch ON g_bulk USING gin (sketch minhash_ops(threshold = 0.69));
CREATE TRIGGER guard BEFORE INSERT ON g_bulk
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
CREATE FUNCTION distinct_doc(i int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(md5((i * 100 + w)::text), ' ') FROM generate_series(1, 30) w $$;
INSERT INTO g_bulk SELECT g, minhash_sketch(distinct_doc(g)) FROM generate_series(1, 600) g;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
SELECT idx_scan >= 600 AS every_check_used_the_index FROM pg_stat_user_indexes
WHERE indexrelid = 'g_bulk_sketch'::regclass;
SELECT pending_pages <= 16 AS pending_list_short, pending_tuples < 600 AS pending_list_moved
FROM pgstatginindex('g_bulk_sketch');
-- and the index still answers as a scan does
SELECT count(*) AS near_7 FROM g_bulk WHERE similar(sketch, minhash_sketch(distinct_doc(7)), 0.7);
SET enable_bitmapscan = off;
SELECT count(*) AS near_7 FROM g_bulk WHERE similar(sketch, minhash_sketch(distinct_doc(7)), 0.7);
RESET enable_bitmapscan;
DROP TABLE g_bulk;
DROP FUNCTION distinct_doc(int);
DROP EXTENSION pgstattuple;

DROP TABLE g_a, g_s2.g_b, g_parts, g_low, g_seq, g_temp;
DROP SCHEMA g_s2;
DROP FUNCTION doc(text), variant(int);
DROP ROLE regress_ndd_writer, regress_ndd_stranger;
