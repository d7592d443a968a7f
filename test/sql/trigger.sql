-- ndd_reject_near_duplicates: every path and every error.
-- (Races between sessions are in test/specs/near_duplicate_race.spec.)
SET extra_float_digits = 0;

CREATE TABLE tdocs (id int PRIMARY KEY, body text, sketch minhash);
-- fastupdate off: every insert is looked up at once, no pending list to scan
CREATE INDEX tdocs_sketch ON tdocs USING gin (sketch minhash_ops) WITH (fastupdate = off);
-- the sketch is filled by an earlier BEFORE trigger (triggers fire by name)
CREATE FUNCTION tdocs_sketch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.sketch := minhash_sketch(NEW.body);
    RETURN NEW;
END $$;
CREATE TRIGGER a_sketch BEFORE INSERT OR UPDATE OF body ON tdocs
    FOR EACH ROW EXECUTE FUNCTION tdocs_sketch();
CREATE TRIGGER b_no_near_duplicates BEFORE INSERT OR UPDATE ON tdocs
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'error');

CREATE FUNCTION text_of(variant text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT 'near duplicate detection inside postgres finds copies of crawled pages '
        || 'articles tickets and product listings with plain sql and every answer '
        || 'is transactional because the data never leaves the database ' || variant $$;

-- 2,000 unrelated rows, so the planner picks the index for the lookups
INSERT INTO tdocs (id, body)
SELECT 1000 + g, 'filler ' || g || ' ' || md5(g::text) || ' ' || md5((g + 1)::text) FROM generate_series(1, 2000) g;
ANALYZE tdocs;
INSERT INTO tdocs (id, body) VALUES (1, text_of('alpha'));
INSERT INTO tdocs (id, body) VALUES (2, 'a different text about gardening, tomatoes and the summer heat');
-- a near-duplicate: 23505 with the key of the existing row and the similarity
INSERT INTO tdocs (id, body) VALUES (3, text_of('beta'));
\echo :SQLSTATE
-- the index did the lookup
SELECT pg_stat_force_next_flush();
SELECT idx_scan > 0 AS index_used FROM pg_stat_user_indexes WHERE indexrelname = 'tdocs_sketch';
-- an exact copy, too
INSERT INTO tdocs (id, body) VALUES (4, text_of('alpha'));
\echo :SQLSTATE
-- a row is never a near-duplicate of its own old version
UPDATE tdocs SET body = text_of('alpha!') WHERE id = 1;
UPDATE tdocs SET id = 10 WHERE id = 1;
-- an update that makes a row a near-duplicate of another is caught
UPDATE tdocs SET body = text_of('gamma') WHERE id = 2;
\echo :SQLSTATE
-- rows without a sketch pass
INSERT INTO tdocs (id, body) VALUES (5, NULL);
SELECT id, left(body, 20) AS body FROM tdocs WHERE id < 1000 ORDER BY id;

-- skip: the row is dropped, like ON CONFLICT DO NOTHING, with a notice
CREATE TABLE tdocs_skip (id int PRIMARY KEY, sketch minhash);
CREATE TRIGGER no_near_duplicates BEFORE INSERT ON tdocs_skip
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'skip');
INSERT INTO tdocs_skip VALUES (1, minhash_sketch(text_of('alpha'))),
                             (2, minhash_sketch(text_of('beta'))),
                             (3, minhash_sketch('something else entirely'));
SELECT id FROM tdocs_skip ORDER BY id;
-- without a primary key the detail names the ctid
CREATE TABLE tdocs_nokey (sketch minhash);
CREATE TRIGGER no_near_duplicates BEFORE INSERT ON tdocs_nokey
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch');
INSERT INTO tdocs_nokey VALUES (minhash_sketch(text_of('alpha')));
INSERT INTO tdocs_nokey VALUES (minhash_sketch(text_of('alpha')));
\echo :SQLSTATE
-- the threshold defaults to ndd.similarity_threshold; a higher one catches fewer
SET ndd.similarity_threshold = 0.95;
INSERT INTO tdocs_nokey VALUES (minhash_sketch(text_of('beta')));
RESET ndd.similarity_threshold;
-- dynamic SQL quotes identifiers and does not depend on search_path
CREATE SCHEMA "Odd Schema";
CREATE TABLE "Odd Schema"."Odd Table" ("Odd Id" int PRIMARY KEY, "Odd Sketch" minhash);
CREATE TRIGGER no_near_duplicates BEFORE INSERT ON "Odd Schema"."Odd Table"
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('Odd Sketch');
INSERT INTO "Odd Schema"."Odd Table" VALUES (1, minhash_sketch(text_of('alpha')));
SET search_path = pg_catalog;
INSERT INTO "Odd Schema"."Odd Table" VALUES (2, public.minhash_sketch(public.text_of('beta')));
\echo :SQLSTATE
RESET search_path;

-- fired AFTER each row: a statement stores all its rows, then each is
-- checked against the others and the table, leaving itself out
CREATE TABLE adocs (id int PRIMARY KEY, body text,
                    sketch minhash GENERATED ALWAYS AS (minhash_sketch(body)) STORED);
CREATE INDEX ON adocs USING gin (sketch minhash_ops);
-- a generated sketch works here: it is computed before AFTER triggers
CREATE TRIGGER no_near_duplicates AFTER INSERT OR UPDATE ON adocs
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
CREATE FUNCTION words_of(n int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(md5((n * 100 + i)::text), ' ') FROM generate_series(1, 20) i $$;
INSERT INTO adocs (id, body) SELECT g, words_of(g) FROM generate_series(1, 40) g;
SELECT count(*) FROM adocs;
-- a near-duplicate inside one statement fails it as a whole
INSERT INTO adocs (id, body) VALUES (41, text_of('gamma')), (42, 'unrelated words here'), (43, text_of('gamma') || ' extra');
\echo :SQLSTATE
-- and of a stored row, with the index's pending list not yet moved
INSERT INTO adocs (id, body) VALUES (44, 'more unrelated words'), (45, words_of(7) || ' x');
\echo :SQLSTATE
SELECT count(*) FROM adocs;
-- updates: unchanged, changed to something new, changed into a copy
UPDATE adocs SET id = id + 100 WHERE id = 3;
UPDATE adocs SET body = 'something else entirely now' WHERE id = 4;
UPDATE adocs SET body = (SELECT body FROM adocs WHERE id = 5) || ' x' WHERE id = 6;
\echo :SQLSTATE
-- skipping needs a BEFORE trigger
CREATE TRIGGER skipper AFTER INSERT ON adocs
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'skip');
INSERT INTO adocs (id, body) VALUES (50, 'fifty');
\echo :SQLSTATE
DROP TRIGGER skipper ON adocs;
-- the same checks as without the index
DROP INDEX adocs_sketch_idx;
INSERT INTO adocs (id, body) VALUES (41, text_of('gamma')), (43, text_of('gamma') || ' extra');
\echo :SQLSTATE
INSERT INTO adocs (id, body) VALUES (41, text_of('gamma'));
SELECT count(*) FROM adocs;

-- fired AFTER INSERT FOR EACH STATEMENT, with the statement's rows as a
-- transition table: checked together (for bulk loads)
CREATE TABLE stmt_docs (id int PRIMARY KEY, body text,
                    sketch minhash GENERATED ALWAYS AS (minhash_sketch(body)) STORED);
CREATE INDEX ON stmt_docs USING gin (sketch minhash_ops);
CREATE TRIGGER no_near_duplicates AFTER INSERT ON stmt_docs REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
INSERT INTO stmt_docs (id, body) SELECT g, words_of(g) FROM generate_series(1, 40) g;
-- a near-duplicate among the statement's own rows
INSERT INTO stmt_docs (id, body) VALUES (41, words_of(41)), (42, 'unrelated words'), (43, words_of(41) || ' x');
\echo :SQLSTATE
-- a near-duplicate of a stored row, with few stored rows (their keys are read)
INSERT INTO stmt_docs (id, body) SELECT 40 + g, words_of(40 + g) FROM generate_series(1, 5) g
UNION ALL SELECT 50, words_of(7) || ' x';
\echo :SQLSTATE
-- and with many (each new row is looked up in the index)
INSERT INTO stmt_docs (id, body) VALUES (51, words_of(9) || ' y');
\echo :SQLSTATE
-- rows that are no near-duplicates go in, with a NULL sketch among them
INSERT INTO stmt_docs (id, body) SELECT 40 + g, words_of(40 + g) FROM generate_series(1, 5) g
UNION ALL SELECT 46, NULL;
INSERT INTO stmt_docs (id, body) VALUES (47, words_of(47));
SELECT count(*) FROM stmt_docs;
-- the same answers without the index
DROP INDEX stmt_docs_sketch_idx;
INSERT INTO stmt_docs (id, body) VALUES (60, words_of(60)), (61, words_of(60) || ' z');
\echo :SQLSTATE
INSERT INTO stmt_docs (id, body) VALUES (62, words_of(3) || ' z');
\echo :SQLSTATE
INSERT INTO stmt_docs (id, body) VALUES (63, words_of(63));
-- a simhash column
CREATE TABLE stmt_fps (id int PRIMARY KEY, fp simhash);
CREATE TRIGGER no_near_fps AFTER INSERT ON stmt_fps REFERENCING NEW TABLE AS n
    FOR EACH STATEMENT EXECUTE FUNCTION ndd_reject_near_duplicates('fp', '3');
INSERT INTO stmt_fps SELECT g, simhash_from_bigint(hashint8extended(g, 3)) FROM generate_series(1, 100) g;
INSERT INTO stmt_fps VALUES (101, simhash_from_bigint(hashint8extended(101, 3))),
                        (102, simhash_from_bigint(hashint8extended(101, 3) # 6));
\echo :SQLSTATE
INSERT INTO stmt_fps VALUES (103, simhash_from_bigint(hashint8extended(5, 3) # 1));
\echo :SQLSTATE
SELECT count(*) FROM stmt_fps;
-- misuse: no transition table, UPDATE, skip, verification
CREATE TABLE stmt_misuse (id int, sketch minhash, body text);
CREATE TRIGGER t AFTER INSERT ON stmt_misuse FOR EACH STATEMENT EXECUTE FUNCTION ndd_reject_near_duplicates('sketch');
INSERT INTO stmt_misuse (id) VALUES (1);
\echo :SQLSTATE
DROP TRIGGER t ON stmt_misuse;
CREATE TRIGGER t AFTER UPDATE ON stmt_misuse REFERENCING NEW TABLE AS n FOR EACH STATEMENT
    EXECUTE FUNCTION ndd_reject_near_duplicates('sketch');
UPDATE stmt_misuse SET id = 2;
\echo :SQLSTATE
DROP TRIGGER t ON stmt_misuse;
CREATE TRIGGER t AFTER INSERT ON stmt_misuse REFERENCING NEW TABLE AS n FOR EACH STATEMENT
    EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'skip');
INSERT INTO stmt_misuse (id, sketch) VALUES (1, minhash_sketch('a b c d e f'));
\echo :SQLSTATE
DROP TRIGGER t ON stmt_misuse;
CREATE TRIGGER t AFTER INSERT ON stmt_misuse REFERENCING NEW TABLE AS n FOR EACH STATEMENT
    EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'error', 'body');
INSERT INTO stmt_misuse (id, sketch) VALUES (1, minhash_sketch('a b c d e f'));
\echo :SQLSTATE
DROP TABLE stmt_misuse;

-- misuse
CREATE TABLE misuse (id int, sketch minhash, body text, gen minhash GENERATED ALWAYS AS (minhash_sketch(body)) STORED);
CREATE TRIGGER t AFTER DELETE ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch');
INSERT INTO misuse (id) VALUES (1);
DELETE FROM misuse;
\echo :SQLSTATE
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH STATEMENT EXECUTE FUNCTION ndd_reject_near_duplicates('sketch');
INSERT INTO misuse (id) VALUES (1);
\echo :SQLSTATE
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates();
INSERT INTO misuse (id) VALUES (1);
\echo :SQLSTATE
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('nosuch');
INSERT INTO misuse (id) VALUES (1);
\echo :SQLSTATE
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('body');
INSERT INTO misuse (id) VALUES (1);
\echo :SQLSTATE
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('gen');
INSERT INTO misuse (id) VALUES (1);
\echo :SQLSTATE
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '1.5');
INSERT INTO misuse (id) VALUES (1);
\echo :SQLSTATE
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'ignore');
INSERT INTO misuse (id) VALUES (1);
\echo :SQLSTATE
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'error', 'body', 'extra');
INSERT INTO misuse (id) VALUES (1);
\echo :SQLSTATE
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'error', 'nosuch');
INSERT INTO misuse (id) VALUES (1);
\echo :SQLSTATE
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'error', 'id');
INSERT INTO misuse (id) VALUES (1);
\echo :SQLSTATE
DROP TRIGGER t ON misuse;
-- sketches of arrays cannot be verified against text
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'error', 'body');
INSERT INTO misuse (id, sketch, body) VALUES (1, minhash_sketch(ARRAY['a', 'b']), 'a b');
\echo :SQLSTATE
DROP TRIGGER t ON misuse;

-- exact verification: candidates from 3 standard deviations below the
-- threshold, decided by the exact Jaccard of the texts
CREATE TABLE trig_vdocs (id int PRIMARY KEY, body text, sketch minhash);
CREATE INDEX ON trig_vdocs USING gin (sketch minhash_ops (threshold = 0.6)) WITH (fastupdate = off);
CREATE TRIGGER no_near_duplicates BEFORE INSERT OR UPDATE ON trig_vdocs
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'skip', 'body');
CREATE FUNCTION words(n int, changed int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(CASE WHEN g <= changed THEN 'other' || g ELSE 'word' || g END, ' ')
    FROM generate_series(1, n) g $$;
INSERT INTO trig_vdocs VALUES (1, words(200, 0), minhash_sketch(words(200, 0)));
-- variants of row 1: each is skipped exactly when its exact Jaccard reaches 0.8
CREATE TABLE variants AS
SELECT c, words(200, c) AS body, jaccard(words(200, 0), words(200, c)) AS exact,
       similarity(minhash_sketch(words(200, 0)), minhash_sketch(words(200, c))) AS estimate
FROM generate_series(0, 40, 2) c;
CREATE TABLE outcome (c int, skipped boolean);
SET client_min_messages = warning;
DO $$
DECLARE
    v record;
    n int;
BEGIN
    FOR v IN SELECT * FROM variants ORDER BY c LOOP
        INSERT INTO trig_vdocs VALUES (100 + v.c, v.body, minhash_sketch(v.body));
        GET DIAGNOSTICS n = ROW_COUNT;
        INSERT INTO outcome VALUES (v.c, n = 0);
        DELETE FROM trig_vdocs WHERE id = 100 + v.c;
    END LOOP;
END $$;
RESET client_min_messages;
SELECT v.c, round(v.exact::numeric, 3) AS exact, v.exact >= 0.8 AS should_skip, o.skipped
FROM variants v JOIN outcome o USING (c) ORDER BY v.c;
-- the estimate alone would have decided some of these differently
SELECT count(*) FILTER (WHERE (exact >= 0.8) <> (estimate >= 0.8)) > 0 AS estimate_disagrees FROM variants;
-- error action: the detail gives the exact value
CREATE TABLE trig_vdocs_err (id int PRIMARY KEY, body text, sketch minhash);
CREATE TRIGGER no_near_duplicates BEFORE INSERT ON trig_vdocs_err
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'error', 'body');
INSERT INTO trig_vdocs_err VALUES (1, words(200, 0), minhash_sketch(words(200, 0)));
INSERT INTO trig_vdocs_err VALUES (2, words(200, 10), minhash_sketch(words(200, 10)));
\echo :SQLSTATE
-- a char(n) column verifies too: its padding makes no shingle, stored or
-- new, so the same text again has exact Jaccard 1, in character shingles too
CREATE TABLE trig_vdocs_char (id int PRIMARY KEY, body char(20), sketch minhash);
CREATE TRIGGER no_near_duplicates BEFORE INSERT ON trig_vdocs_char
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.9', 'error', 'body');
INSERT INTO trig_vdocs_char VALUES (1, 'abcdefghij', minhash_sketch('abcdefghij', unit => 'char'));
INSERT INTO trig_vdocs_char VALUES (2, 'abcdefghij', minhash_sketch('abcdefghij', unit => 'char'));
\echo :SQLSTATE
DROP TABLE trig_vdocs_char;

-- simhash columns: within the distance, through the Hamming GIN index
CREATE TABLE trig_sdocs (id int PRIMARY KEY, fp simhash);
CREATE INDEX trig_sdocs_fp ON trig_sdocs USING gin (fp simhash_ops) WITH (fastupdate = off);
CREATE TRIGGER no_near_duplicates BEFORE INSERT OR UPDATE ON trig_sdocs
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('fp', '3', 'error');
INSERT INTO trig_sdocs SELECT g, simhash_from_bigint(hashint8extended(g, 7)) FROM generate_series(1, 2000) g;
ANALYZE trig_sdocs;
INSERT INTO trig_sdocs VALUES (0, 'ffff0000ffff0000');
-- 2 bits away: rejected, whatever ndd.hamming_threshold says
SET ndd.hamming_threshold = 0;
INSERT INTO trig_sdocs VALUES (-1, 'ffff0000ffff0003');
\echo :SQLSTATE
RESET ndd.hamming_threshold;
SHOW ndd.hamming_threshold;
-- 3 bits away: rejected; 4: accepted
INSERT INTO trig_sdocs VALUES (-2, 'ffff0000ffff0007');
\echo :SQLSTATE
INSERT INTO trig_sdocs VALUES (-3, 'ffff0000ffff000f');
-- an update into the neighbourhood of another row is caught; its own old
-- value does not count
UPDATE trig_sdocs SET fp = 'ffff0000ffff000e' WHERE id = -3;
\echo :SQLSTATE
UPDATE trig_sdocs SET fp = 'ffff0000ffff0001' WHERE id = -3;
\echo :SQLSTATE
SELECT pg_stat_force_next_flush();
SELECT idx_scan > 0 AS index_used FROM pg_stat_user_indexes WHERE indexrelname = 'trig_sdocs_fp';
-- the distance from ndd.hamming_threshold when not given; skip
CREATE TABLE trig_sdocs_skip (id int, fp simhash);
CREATE TRIGGER no_near_duplicates BEFORE INSERT ON trig_sdocs_skip
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('fp');
SET ndd.hamming_threshold = 1;
INSERT INTO trig_sdocs_skip VALUES (1, '00000000000000ff');
INSERT INTO trig_sdocs_skip VALUES (2, '00000000000000fe');
\echo :SQLSTATE
INSERT INTO trig_sdocs_skip VALUES (3, '00000000000000fc');
RESET ndd.hamming_threshold;
CREATE TRIGGER skip_near_duplicates BEFORE INSERT ON trig_sdocs
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('fp', '3', 'skip');
DROP TRIGGER no_near_duplicates ON trig_sdocs;
INSERT INTO trig_sdocs VALUES (-4, 'ffff0000ffff0003'), (-5, '0f0f0f0f0f0f0f0f');
SELECT id FROM trig_sdocs_skip ORDER BY id;
SELECT id, fp FROM trig_sdocs WHERE id < 1 ORDER BY id;
-- bad distances
CREATE TABLE stmt_misuse (id int, fp simhash);
CREATE TRIGGER t BEFORE INSERT ON stmt_misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('fp', '7');
INSERT INTO stmt_misuse VALUES (1, '0000000000000000');
\echo :SQLSTATE
DROP TRIGGER t ON stmt_misuse;
CREATE TRIGGER t BEFORE INSERT ON stmt_misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('fp', '0.8');
INSERT INTO stmt_misuse VALUES (1, '0000000000000000');
\echo :SQLSTATE
DROP TRIGGER t ON stmt_misuse;
SET ndd.hamming_threshold = 9;
CREATE TRIGGER t BEFORE INSERT ON stmt_misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('fp');
INSERT INTO stmt_misuse VALUES (1, '0000000000000000');
\echo :SQLSTATE
RESET ndd.hamming_threshold;
