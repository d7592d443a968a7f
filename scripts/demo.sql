-- ndd demo: near-duplicate Debian copyright files, found with plain SQL.
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION ndd;

\echo
\echo '== 1. Load every /usr/share/doc/*/copyright file (server-side reads; superuser)'
CREATE TABLE copyright (pkg text PRIMARY KEY, doc text NOT NULL);
DO $$
DECLARE
    d text;
    raw bytea;
BEGIN
    FOR d IN SELECT pg_ls_dir('/usr/share/doc') ORDER BY 1 LOOP
        raw := pg_read_binary_file('/usr/share/doc/' || d || '/copyright', 0, 100000000, true);
        CONTINUE WHEN raw IS NULL;
        BEGIN
            INSERT INTO copyright VALUES (d, convert_from(raw, 'UTF8'));
        EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
            INSERT INTO copyright VALUES (d, convert_from(raw, 'LATIN1'));
        END;
    END LOOP;
END $$;
SELECT count(*) AS files, round(avg(length(doc))) AS avg_chars FROM copyright;

\set ECHO queries
\echo
\echo '== 2. Sketch each file: 128 min-wise hashes of its 5-word shingles'
ALTER TABLE copyright ADD COLUMN sketch minhash;
UPDATE copyright SET sketch = minhash_sketch(doc);

\echo
\echo '== 3. Near-duplicate pairs: estimated resemblance >= 0.8 (the % operator),'
\echo '==    checked against the exact Jaccard of the shingle sets'
SET ndd.similarity_threshold = 0.8;
CREATE TABLE pairs AS
SELECT a.pkg AS a, b.pkg AS b, similarity(a.sketch, b.sketch) AS estimate,
       jaccard(a.doc, b.doc) AS exact
FROM copyright a JOIN copyright b ON a.pkg < b.pkg AND a.sketch % b.sketch;
SELECT CASE WHEN exact = 1 THEN 'identical' WHEN exact >= 0.9 THEN '0.9 - 1'
            WHEN exact >= 0.8 THEN '0.8 - 0.9' ELSE 'below 0.8' END AS exact_jaccard,
       count(*) AS pairs,
       round(avg(abs(estimate - exact))::numeric, 3) AS mean_abs_error
FROM pairs GROUP BY 1 ORDER BY min(exact) DESC;

\echo
\echo '== 4. Near-duplicate groups: connected components of those pairs'
CREATE TABLE groups AS
WITH RECURSIVE edge AS (
    SELECT a, b FROM pairs UNION ALL SELECT b, a FROM pairs
), reach(pkg, root) AS (
    SELECT a, a FROM edge
    UNION
    SELECT e.b, r.root FROM reach r JOIN edge e ON e.a = r.pkg
)
SELECT pkg, min(root) AS group_id FROM reach GROUP BY pkg;
SELECT g.group_id AS representative, count(*) AS files,
       left(string_agg(g.pkg, ' ' ORDER BY g.pkg) FILTER (WHERE g.pkg <> g.group_id), 70) AS near_duplicates
FROM groups g
GROUP BY g.group_id
ORDER BY files DESC, representative
LIMIT 15;

\echo
\echo '== 5. One lookup: the files most like a file that has near (not identical) copies'
SELECT a AS probe FROM pairs WHERE exact < 1 GROUP BY a ORDER BY count(*) DESC, a LIMIT 1 \gset
SET ndd.similarity_threshold = 0.5;
SELECT c.pkg, round(similarity(c.sketch, q.sketch)::numeric, 3) AS estimate,
       round(jaccard(c.doc, q.doc)::numeric, 3) AS exact
FROM copyright c, (SELECT sketch, doc FROM copyright WHERE pkg = :'probe') q
WHERE c.sketch % q.sketch
ORDER BY c.sketch <-> q.sketch, c.pkg
LIMIT 10;

\echo
\echo '== 6. Keep one file per group (rolled back, so the demo can be re-read)'
BEGIN;
DELETE FROM copyright c USING groups g WHERE g.pkg = c.pkg AND g.pkg <> g.group_id;
SELECT count(*) AS files_left FROM copyright;
ROLLBACK;
