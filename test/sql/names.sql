-- No column name changes what ndd's generated SQL does: discovery, clusters
-- and the insert guard give the same answers on tables whose columns are
-- named like every alias and helper that SQL uses, in mixed case, with
-- spaces and quotes, as on a table with plain names.
SET extra_float_digits = 0;

-- 12 families of 5 near-identical texts, and 20 texts of their own
CREATE TABLE n_source AS
SELECT f * 10 + m AS id,
       (SELECT string_agg('f' || f || 'w' || g, ' ') FROM generate_series(1, 60) g)
       || CASE WHEN m > 1 THEN ' extra' || m ELSE '' END AS body
FROM generate_series(1, 12) f, generate_series(1, 5) m
UNION ALL
SELECT 1000 + g, (SELECT string_agg('own' || g || 'w' || h, ' ') FROM generate_series(1, 40) h)
FROM generate_series(1, 20) g;

-- plain names
CREATE TABLE n_plain (id bigint, body text, sketch minhash, fp simhash);
-- every alias of the generated SQL, as columns; the key is "s", the sketch
-- "t", the text "c", the fingerprint "x"
CREATE TABLE n_alias (
    a int, b int, d int, e int, id int, j int, k int, key int, l int, label int, m int, n int,
    ndd_id int, ndd_label int, o int, p int, q int, qualifies boolean, r int, rank int,
    sa int, sb int, similarity float8, distance int, summary text, ta int, tb int,
    u int, v int, y int, z int, relid oid, token int, claims int8, tableoid_ int, ctid_ int,
    s bigint, t minhash, c text, x simhash);
-- mixed case, spaces and quotes
CREATE TABLE "N Odd" ("Mixed Case" bigint, "with space" text, "quo""te" minhash, "Key" simhash,
                      "S" int, "T" int, "ID" int);

INSERT INTO n_plain (id, body, sketch, fp)
SELECT id, body, minhash_sketch(body), simhash(body) FROM n_source;
INSERT INTO n_alias (s, c, t, x, id, key, summary, similarity, distance, qualifies, label, rank, sa, sb)
SELECT id, body, minhash_sketch(body), simhash(body), -id, -1, 'zzz', -1, 99, false, -5, -6, 1, 2
FROM n_source;
INSERT INTO "N Odd" ("Mixed Case", "with space", "quo""te", "Key", "S", "T", "ID")
SELECT id, body, minhash_sketch(body), simhash(body), 1, 2, -id FROM n_source;

-- the plain answers: a few dozen pairs of each kind
CREATE TEMP TABLE n_expected AS
SELECT 'minhash' AS kind, p.id_a, p.id_b, round(p.similarity::numeric, 6) AS s FROM near_duplicate_pairs('n_plain', 'sketch', 'id', 0.8) p
UNION ALL
SELECT 'verified', p.id_a, p.id_b, round(p.similarity::numeric, 6) FROM near_duplicate_pairs('n_plain', 'sketch', 'id', 0.8, verify_column => 'body') p
UNION ALL
SELECT 'simhash', p.id_a, p.id_b, p.distance FROM near_duplicate_pairs('n_plain', 'fp', 'id', max_distance => 6) p
UNION ALL
SELECT 'simhash verified', p.id_a, p.id_b, round(p.similarity::numeric, 6) FROM near_duplicate_pairs('n_plain', 'fp', 'id', 0.8, verify_column => 'body', max_distance => 6) p;
SELECT kind, count(*) FROM n_expected GROUP BY kind ORDER BY kind;

-- the same from the alias table and the odd one: no difference either way
CREATE TEMP TABLE n_alias_pairs AS
SELECT 'minhash' AS kind, p.id_a, p.id_b, round(p.similarity::numeric, 6) AS s FROM near_duplicate_pairs('n_alias', 't', 's', 0.8) p
UNION ALL
SELECT 'verified', p.id_a, p.id_b, round(p.similarity::numeric, 6) FROM near_duplicate_pairs('n_alias', 't', 's', 0.8, verify_column => 'c') p
UNION ALL
SELECT 'simhash', p.id_a, p.id_b, p.distance FROM near_duplicate_pairs('n_alias', 'x', 's', max_distance => 6) p
UNION ALL
SELECT 'simhash verified', p.id_a, p.id_b, round(p.similarity::numeric, 6) FROM near_duplicate_pairs('n_alias', 'x', 's', 0.8, verify_column => 'c', max_distance => 6) p;
CREATE TEMP TABLE n_odd_pairs AS
SELECT 'minhash' AS kind, p.id_a, p.id_b, round(p.similarity::numeric, 6) AS s FROM near_duplicate_pairs('"N Odd"', 'quo"te', 'Mixed Case', 0.8) p
UNION ALL
SELECT 'verified', p.id_a, p.id_b, round(p.similarity::numeric, 6) FROM near_duplicate_pairs('"N Odd"', 'quo"te', 'Mixed Case', 0.8, verify_column => 'with space') p
UNION ALL
SELECT 'simhash', p.id_a, p.id_b, p.distance FROM near_duplicate_pairs('"N Odd"', 'Key', 'Mixed Case', max_distance => 6) p
UNION ALL
SELECT 'simhash verified', p.id_a, p.id_b, round(p.similarity::numeric, 6) FROM near_duplicate_pairs('"N Odd"', 'Key', 'Mixed Case', 0.8, verify_column => 'with space', max_distance => 6) p;
SELECT 'alias' AS tbl, count(*) AS differences
FROM ((TABLE n_expected EXCEPT ALL TABLE n_alias_pairs) UNION ALL (TABLE n_alias_pairs EXCEPT ALL TABLE n_expected)) d
UNION ALL
SELECT 'odd', count(*)
FROM ((TABLE n_expected EXCEPT ALL TABLE n_odd_pairs) UNION ALL (TABLE n_odd_pairs EXCEPT ALL TABLE n_expected)) d;

-- clusters, with a representative order over each table's own columns
CREATE TEMP TABLE n_clusters AS
SELECT 'plain' AS tbl, c.id, c.cluster_id FROM near_duplicate_clusters('n_plain', 'sketch', 'id', 0.8, representative_order => 'length(body) DESC') c
UNION ALL
SELECT 'alias', c.id, c.cluster_id FROM near_duplicate_clusters('n_alias', 't', 's', 0.8, representative_order => 'length(c) DESC, id DESC') c
UNION ALL
SELECT 'odd', c.id, c.cluster_id FROM near_duplicate_clusters('"N Odd"', 'quo"te', 'Mixed Case', 0.8, representative_order => 'length("with space") DESC, "ID" DESC') c
UNION ALL
SELECT 'alias unordered', c.id, c.cluster_id FROM near_duplicate_clusters('n_alias', 't', 's', 0.8) c
UNION ALL
SELECT 'plain unordered', c.id, c.cluster_id FROM near_duplicate_clusters('n_plain', 'sketch', 'id', 0.8) c;
-- every family is one cluster.  Its representative is its longest text:
-- members 2 to 5 are equally long, and ties go to member 2, the smallest
-- id, in the plain table by default and in the others through "id" and
-- "ID", which hold minus the key: the order saw the tables' own columns.
SELECT tbl, count(*) AS rows, count(DISTINCT cluster_id) AS clusters,
       array_agg(DISTINCT cluster_id % 10 ORDER BY cluster_id % 10) AS representative_members
FROM n_clusters GROUP BY tbl ORDER BY tbl;
SELECT count(*) AS differences FROM (
    SELECT id, cluster_id FROM n_clusters WHERE tbl = 'plain'
    EXCEPT SELECT id, cluster_id FROM n_clusters WHERE tbl = 'alias') d;
SELECT count(*) AS differences FROM (
    SELECT id, cluster_id FROM n_clusters WHERE tbl = 'plain'
    EXCEPT SELECT id, cluster_id FROM n_clusters WHERE tbl = 'odd') d;
SELECT count(*) AS differences FROM (
    SELECT id, cluster_id FROM n_clusters WHERE tbl = 'plain unordered'
    EXCEPT SELECT id, cluster_id FROM n_clusters WHERE tbl = 'alias unordered') d;
-- the order sees the table's columns only
\set VERBOSITY sqlstate
SELECT count(*) FROM near_duplicate_clusters('n_alias', 't', 's', 0.8, representative_order => 'nosuch');
\echo :LAST_ERROR_MESSAGE
\echo :SQLSTATE
\set VERBOSITY default

-- the insert guard: the same rows kept in each table, verified and not
CREATE TABLE n_plain_g (LIKE n_plain);
CREATE TABLE n_alias_g (LIKE n_alias);
CREATE TABLE "N Odd G" (LIKE "N Odd");
ALTER TABLE n_plain_g ADD PRIMARY KEY (id);
ALTER TABLE n_alias_g ADD PRIMARY KEY (s);
ALTER TABLE "N Odd G" ADD PRIMARY KEY ("Mixed Case");
CREATE TRIGGER guard BEFORE INSERT ON n_plain_g
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'skip', 'body');
CREATE TRIGGER guard BEFORE INSERT ON n_alias_g
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('t', '0.8', 'skip', 'c');
CREATE TRIGGER guard BEFORE INSERT ON "N Odd G"
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('quo"te', '0.8', 'skip', 'with space');
CREATE TRIGGER guard_fp BEFORE INSERT ON n_plain_g
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('fp', '3', 'skip');
CREATE TRIGGER guard_fp BEFORE INSERT ON n_alias_g
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('x', '3', 'skip');
CREATE TRIGGER guard_fp BEFORE INSERT ON "N Odd G"
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('Key', '3', 'skip');
SET client_min_messages = warning;
INSERT INTO n_plain_g SELECT * FROM n_plain ORDER BY id;
INSERT INTO n_alias_g SELECT * FROM n_alias ORDER BY s;
INSERT INTO "N Odd G" SELECT * FROM "N Odd" ORDER BY "Mixed Case";
RESET client_min_messages;
SELECT count(*) AS kept FROM n_plain_g;
SELECT (SELECT array_agg(id ORDER BY id) FROM n_plain_g) = (SELECT array_agg(s ORDER BY s) FROM n_alias_g) AS alias_same,
       (SELECT array_agg(id ORDER BY id) FROM n_plain_g) = (SELECT array_agg("Mixed Case" ORDER BY "Mixed Case") FROM "N Odd G") AS odd_same;
-- and a rejection names the key by its odd name
CREATE TRIGGER guard_error BEFORE UPDATE ON "N Odd G"
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('quo"te', '0.8', 'error');
UPDATE "N Odd G" SET "quo""te" = (SELECT "quo""te" FROM "N Odd G" WHERE "Mixed Case" = 11) WHERE "Mixed Case" = 21;
\echo :SQLSTATE

DROP TABLE n_source, n_plain, n_alias, "N Odd", n_plain_g, n_alias_g, "N Odd G";
