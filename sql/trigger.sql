-- ndd_reject_near_duplicates: every path and every error.
-- (Races between sessions are in specs/near_duplicate_race.spec.)
SET extra_float_digits = 0;

CREATE FUNCTION pg_temp.sqlstate_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    RETURN 'no error';
EXCEPTION WHEN others THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

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
SELECT pg_temp.sqlstate_of($$INSERT INTO tdocs (id, body) VALUES (3, text_of('beta'))$$);
-- the index did the lookup
SELECT pg_stat_force_next_flush();
SELECT idx_scan > 0 AS index_used FROM pg_stat_user_indexes WHERE indexrelname = 'tdocs_sketch';
-- an exact copy, too
SELECT pg_temp.sqlstate_of($$INSERT INTO tdocs (id, body) VALUES (4, text_of('alpha'))$$);
-- a row is never a near-duplicate of its own old version
UPDATE tdocs SET body = text_of('alpha!') WHERE id = 1;
UPDATE tdocs SET id = 10 WHERE id = 1;
-- an update that makes a row a near-duplicate of another is caught
UPDATE tdocs SET body = text_of('gamma') WHERE id = 2;
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
SELECT pg_temp.sqlstate_of($$INSERT INTO "Odd Schema"."Odd Table" VALUES (2, public.minhash_sketch(public.text_of('beta')))$$);
RESET search_path;

-- misuse
CREATE TABLE misuse (id int, sketch minhash, body text, gen minhash GENERATED ALWAYS AS (minhash_sketch(body)) STORED);
CREATE TRIGGER t AFTER INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch');
SELECT pg_temp.sqlstate_of($$INSERT INTO misuse (id) VALUES (1)$$);
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH STATEMENT EXECUTE FUNCTION ndd_reject_near_duplicates('sketch');
SELECT pg_temp.sqlstate_of($$INSERT INTO misuse (id) VALUES (1)$$);
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates();
SELECT pg_temp.sqlstate_of($$INSERT INTO misuse (id) VALUES (1)$$);
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('nosuch');
SELECT pg_temp.sqlstate_of($$INSERT INTO misuse (id) VALUES (1)$$);
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('body');
SELECT pg_temp.sqlstate_of($$INSERT INTO misuse (id) VALUES (1)$$);
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('gen');
SELECT pg_temp.sqlstate_of($$INSERT INTO misuse (id) VALUES (1)$$);
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '1.5');
SELECT pg_temp.sqlstate_of($$INSERT INTO misuse (id) VALUES (1)$$);
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'ignore');
SELECT pg_temp.sqlstate_of($$INSERT INTO misuse (id) VALUES (1)$$);
DROP TRIGGER t ON misuse;
