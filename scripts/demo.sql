-- ndd demo: near-duplicate Debian copyright files, found with plain SQL.
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION ndd;

\echo
\echo '== 1. Load every /usr/share/doc/*/copyright file (server-side reads; superuser)'
CREATE TABLE copyright (id serial PRIMARY KEY, pkg text UNIQUE NOT NULL, doc text NOT NULL);
DO $$
DECLARE
    d text;
    raw bytea;
BEGIN
    FOR d IN SELECT pg_ls_dir('/usr/share/doc') ORDER BY 1 LOOP
        raw := pg_read_binary_file('/usr/share/doc/' || d || '/copyright', 0, 100000000, true);
        CONTINUE WHEN raw IS NULL;
        BEGIN
            INSERT INTO copyright (pkg, doc) VALUES (d, convert_from(raw, 'UTF8'));
        EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
            INSERT INTO copyright (pkg, doc) VALUES (d, convert_from(raw, 'LATIN1'));
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
\echo '== 3. Every near-duplicate pair at exact Jaccard >= 0.8: candidates from shared LSH bands,'
\echo '==    verified against the stored texts (no all-pairs comparison)'
CREATE TABLE pairs AS
SELECT a.pkg AS a, b.pkg AS b, p.similarity AS exact, similarity(a.sketch, b.sketch) AS estimate
FROM near_duplicate_pairs('copyright', 'sketch', 'id', 0.8, verify_column => 'doc') p
JOIN copyright a ON a.id = p.id_a
JOIN copyright b ON b.id = p.id_b;
SELECT CASE WHEN exact = 1 THEN 'identical' WHEN exact >= 0.9 THEN '0.9 - 1' ELSE '0.8 - 0.9' END AS exact_jaccard,
       count(*) AS pairs,
       round(avg(abs(estimate - exact))::numeric, 3) AS estimate_mean_abs_error
FROM pairs GROUP BY 1 ORDER BY min(exact) DESC;

\echo
\echo '== 4. Near-duplicate groups: connected components of those pairs'
CREATE TABLE groups AS
SELECT c.id, c.cluster_id, x.pkg
FROM near_duplicate_clusters('copyright', 'sketch', 'id', 0.8, verify_column => 'doc') c
JOIN copyright x ON x.id = c.id;
SELECT min(pkg) AS first_package, count(*) AS files,
       left(string_agg(pkg, ' ' ORDER BY pkg), 70) AS members
FROM groups
GROUP BY cluster_id
ORDER BY files DESC, first_package
LIMIT 15;

\echo '== 5. One lookup through a GIN index: the files most like a file that has near (not identical) copies'
CREATE INDEX copyright_sketch ON copyright USING gin (sketch minhash_ops(threshold = 0.5));
SELECT a AS probe FROM pairs WHERE exact < 1 GROUP BY a ORDER BY count(*) DESC, a LIMIT 1 \gset
SET ndd.similarity_threshold = 0.5;
SELECT c.pkg, round(similarity(c.sketch, q.sketch)::numeric, 3) AS estimate,
       round(jaccard(c.doc, q.doc)::numeric, 3) AS exact
FROM copyright c, (SELECT sketch, doc FROM copyright WHERE pkg = :'probe') q
WHERE c.sketch % q.sketch
ORDER BY c.sketch <-> q.sketch, c.pkg
LIMIT 10;

\echo
\echo '== 6. Keep one file per group, the shortest package name first (rolled back, so the demo can be re-read)'
BEGIN;
DELETE FROM copyright c
USING (SELECT id, first_value(id) OVER (PARTITION BY cluster_id ORDER BY length(pkg), pkg) AS keep FROM groups) g
WHERE g.id = c.id AND g.id <> g.keep;
SELECT count(*) AS files_left FROM copyright;
ROLLBACK;
