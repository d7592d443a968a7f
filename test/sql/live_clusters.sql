-- Clusters kept current: ndd_maintain_clusters() keeps a cluster table equal
-- to what near_duplicate_clusters() gives for the table as it is now,
-- through random inserts, updates and deletes, one row or many at a time.
SET client_min_messages = warning;

-- documents: 40 words of base b, with some of them replaced
CREATE FUNCTION pg_temp.doc(b int, edits int) RETURNS text
LANGUAGE sql AS $$
    SELECT string_agg(CASE WHEN random() < edits / 40.0
                           THEN substr(md5(random()::text), 1, 6)
                           ELSE substr(md5((b * 1000 + j)::text), 1, 6) END, ' ' ORDER BY j)
    FROM generate_series(1, 40) j
$$;

-- rows of the cluster table that near_duplicate_clusters() does not give,
-- and the other way round
CREATE FUNCTION pg_temp.mismatches(tbl regclass, col name, t float8, d int, ord text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE format($q$
        WITH f AS (SELECT * FROM near_duplicate_clusters(%1$L, %2$L, 'id', %3$L, NULL, false, %4$L, %5$L)),
             m AS (SELECT id, cluster_id FROM %6$I)
        SELECT (SELECT count(*) FROM (SELECT * FROM f EXCEPT SELECT * FROM m) x)
             + (SELECT count(*) FROM (SELECT * FROM m EXCEPT SELECT * FROM f) y)$q$,
        tbl, col, t, d, ord, tbl::text || '_clusters') INTO n;
    RETURN n;
END $$;

SELECT setseed(0.17);
CREATE TABLE lc (id int PRIMARY KEY, body text, sketch minhash, created int);
CREATE INDEX lc_sketch ON lc USING gin (sketch minhash_ops (threshold = 0.5));
INSERT INTO lc SELECT i, pg_temp.doc(i % 20, (i % 7)), NULL, (random() * 5)::int FROM generate_series(1, 120) i;
UPDATE lc SET sketch = minhash_sketch(body);
SELECT ndd_maintain_clusters('lc', 'sketch', 'id', threshold => 0.5,
                             representative_order => 'created DESC');
SELECT count(*) > 20 AS clustered, count(DISTINCT cluster_id) > 5 AS clusters FROM lc_clusters;
SELECT pg_temp.mismatches('lc', 'sketch', 0.5, NULL, 'created DESC') AS after_setup;

-- the same table under simhash fingerprints, representatives by smallest id
CREATE TABLE ls (id bigint PRIMARY KEY, body text, fp simhash);
INSERT INTO ls SELECT id, body, simhash(body) FROM lc;
CREATE INDEX ON ls USING gin (fp simhash_ops (max_distance = 4));
SELECT ndd_maintain_clusters('ls', 'fp', 'id', max_distance => 4);
SELECT pg_temp.mismatches('ls', 'fp', NULL, 4, NULL) AS after_setup;

-- 400 random changes; checked every 50
CREATE TABLE checks (step int, lc_wrong bigint, ls_wrong bigint);
DO $$
DECLARE
    next_id int := 1000;
    r float8;
    victim int;
    b int;
BEGIN
    FOR step IN 1 .. 400 LOOP
        r := random();
        b := (random() * 25)::int;
        SELECT id INTO victim FROM lc ORDER BY id OFFSET (random() * ((SELECT count(*) FROM lc) - 1))::int LIMIT 1;
        IF r < 0.35 THEN
            next_id := next_id + 1;
            INSERT INTO lc VALUES (next_id, pg_temp.doc(b, (random() * 8)::int), NULL, (random() * 5)::int);
            UPDATE lc SET sketch = minhash_sketch(body) WHERE id = next_id;
            INSERT INTO ls SELECT id, body, simhash(body) FROM lc WHERE id = next_id;
        ELSIF r < 0.55 THEN
            DELETE FROM lc WHERE id = victim;
            DELETE FROM ls WHERE id = victim;
        ELSIF r < 0.75 THEN
            UPDATE lc SET body = pg_temp.doc(b, (random() * 8)::int) WHERE id = victim;
            UPDATE lc SET sketch = minhash_sketch(body) WHERE id = victim;
            UPDATE ls SET body = l.body, fp = simhash(l.body) FROM lc l WHERE l.id = victim AND ls.id = victim;
        ELSIF r < 0.85 THEN
            -- only the column the representative is chosen by
            UPDATE lc SET created = (random() * 5)::int WHERE id = victim;
        ELSIF r < 0.9 THEN
            -- a new id for a row
            next_id := next_id + 1;
            UPDATE lc SET id = next_id WHERE id = victim;
            UPDATE ls SET id = next_id WHERE id = victim;
        ELSIF r < 0.95 THEN
            -- many rows in one statement
            INSERT INTO lc SELECT next_id + row_number() OVER (), body, NULL, (random() * 5)::int FROM lc
            WHERE id % 9 = (step % 9) LIMIT 3 ;
            UPDATE lc SET sketch = minhash_sketch(body) WHERE sketch IS NULL;
            INSERT INTO ls SELECT id, body, simhash(body) FROM lc WHERE id > next_id;
            next_id := next_id + 3;
        ELSE
            DELETE FROM lc WHERE id % 13 = (step % 13) AND id < 1000;
            DELETE FROM ls WHERE id % 13 = (step % 13) AND id < 1000;
        END IF;
        IF step % 50 = 0 THEN
            INSERT INTO checks VALUES (step, pg_temp.mismatches('lc', 'sketch', 0.5, NULL, 'created DESC'),
                                       pg_temp.mismatches('ls', 'fp', NULL, 4, NULL));
        END IF;
    END LOOP;
END $$;
SELECT * FROM checks ORDER BY step;
SELECT count(*) > 20 AS clustered, count(DISTINCT cluster_id) > 5 AS clusters FROM lc_clusters;

-- TRUNCATE empties the cluster table
TRUNCATE ls;
SELECT count(*) AS ls_clusters_after_truncate FROM ls_clusters;

-- the check sees a cluster table that was not kept: the comparison can fail
ALTER TABLE lc DISABLE TRIGGER ndd_maintain_clusters;
DELETE FROM lc WHERE id IN (SELECT cluster_id FROM lc_clusters);
SELECT pg_temp.mismatches('lc', 'sketch', 0.5, NULL, 'created DESC') > 0 AS stale_table_detected;
ALTER TABLE lc ENABLE TRIGGER ndd_maintain_clusters;

-- no duplicates at all: an empty cluster table, which the first pair fills
CREATE TABLE fresh (id bigint PRIMARY KEY, sketch minhash);
SELECT ndd_maintain_clusters('fresh', 'sketch', 'id', cluster_table => 'fresh_groups');
SELECT count(*) FROM fresh_groups;
INSERT INTO fresh VALUES (1, minhash_sketch('one two three four five six seven eight nine ten')),
                         (2, NULL), (3, minhash_sketch('one two three four five six seven eight nine ten'));
SELECT * FROM fresh_groups ORDER BY id;
UPDATE fresh SET sketch = minhash_sketch('one two three four five six seven eight nine ten') WHERE id = 2;
SELECT * FROM fresh_groups ORDER BY id;
DELETE FROM fresh WHERE id = 1;
SELECT * FROM fresh_groups ORDER BY id;
DELETE FROM fresh WHERE id = 3;
SELECT * FROM fresh_groups ORDER BY id;

-- bad calls, each with its SQLSTATE
\set VERBOSITY terse
\set ON_ERROR_STOP 0
SELECT ndd_maintain_clusters('fresh', 'nope', 'id');
\echo :SQLSTATE
SELECT ndd_maintain_clusters('fresh', 'sketch', 'nope');
\echo :SQLSTATE
CREATE TABLE noid (id int, sketch minhash);
SELECT ndd_maintain_clusters('noid', 'sketch', 'id');
\echo :SQLSTATE
CREATE TABLE textid (id text PRIMARY KEY, sketch minhash);
SELECT ndd_maintain_clusters('textid', 'sketch', 'id');
\echo :SQLSTATE
CREATE TABLE notsketch (id int PRIMARY KEY, sketch text);
SELECT ndd_maintain_clusters('notsketch', 'sketch', 'id');
\echo :SQLSTATE
CREATE TABLE again (id int PRIMARY KEY, sketch minhash);
SELECT ndd_maintain_clusters('again', 'sketch', 'id', threshold => 1.5);
\echo :SQLSTATE
SELECT ndd_maintain_clusters('again', 'sketch', 'id', max_distance => 3);
\echo :SQLSTATE
SELECT ndd_maintain_clusters('ls', 'fp', 'id', threshold => 0.5, cluster_table => 'ls2');
\echo :SQLSTATE
SELECT ndd_maintain_clusters('ls', 'fp', 'id', max_distance => 9, cluster_table => 'ls2');
\echo :SQLSTATE
-- the cluster table exists already
SELECT ndd_maintain_clusters('fresh', 'sketch', 'id', cluster_table => 'fresh_groups');
\echo :SQLSTATE
-- an index that finds pairs at 0.5 only by chance would leave clusters wrong
CREATE INDEX ON again USING gin (sketch minhash_ops (threshold = 0.9));
SELECT ndd_maintain_clusters('again', 'sketch', 'id', threshold => 0.5);
\echo :SQLSTATE
-- and one created later stops the trigger, not the clusters' truth
DROP INDEX again_sketch_idx;
SELECT ndd_maintain_clusters('again', 'sketch', 'id', threshold => 0.5);
CREATE INDEX ON again USING gin (sketch minhash_ops (threshold = 0.9));
INSERT INTO again VALUES (1, minhash_sketch('a b c d e f g h'));
\echo :SQLSTATE
-- the trigger function, fired the wrong way
CREATE TRIGGER wrong BEFORE INSERT ON noid FOR EACH ROW EXECUTE FUNCTION ndd_maintain_clusters_trigger();
INSERT INTO noid VALUES (1, NULL);
\echo :SQLSTATE
-- only the owner of a table may put it under maintenance
CREATE ROLE ndd_lc_stranger;
GRANT SELECT, INSERT ON again TO ndd_lc_stranger;
SET ROLE ndd_lc_stranger;
SELECT ndd_maintain_clusters('again', 'sketch', 'id', cluster_table => 'again3');
\echo :SQLSTATE
-- nor take the lock of a cluster table it may not update
SELECT ndd_claim_cluster_lock('lc_clusters');
\echo :SQLSTATE
RESET ROLE;
DROP TABLE again;
DROP ROLE ndd_lc_stranger;
