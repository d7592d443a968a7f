-- All-pairs discovery and clusters against brute force.
SET extra_float_digits = 0;

CREATE FUNCTION pg_temp.sqlstate_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    RETURN 'no error';
EXCEPTION WHEN others THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- 2,000 documents: 500 families of a base and three edited copies
SELECT setseed(0.3);
CREATE TABLE pbase AS
SELECT f, array_agg('w' || floor(random() * 5000)::int) AS words
FROM generate_series(1, 500) f, generate_series(1, 80) i GROUP BY f;
CREATE TABLE pdocs AS
SELECT f * 4 + v AS id,
       CASE WHEN v = 0 THEN array_to_string(words, ' ')
            ELSE (SELECT string_agg(CASE WHEN random() < 0.01 * v * (1 + f % 4)
                                         THEN 'x' || floor(random() * 5000)::int ELSE w END, ' ')
                  FROM unnest(words) w) END AS body
FROM pbase, generate_series(0, 3) v;
-- a chain: a ~ b and b ~ c, but a and c further apart
INSERT INTO pdocs
SELECT 10000 + c, string_agg('chain' || g, ' ')
FROM generate_series(0, 2) c, generate_series(1 + 10 * c, 100 + 10 * c) g GROUP BY c;
-- rows without a sketch take no part
INSERT INTO pdocs VALUES (20000, NULL);
ALTER TABLE pdocs ADD PRIMARY KEY (id);
ALTER TABLE pdocs ADD COLUMN sketch minhash;
UPDATE pdocs SET sketch = minhash_sketch(body);
ANALYZE pdocs;

CREATE TABLE brute AS
SELECT a.id AS id_a, b.id AS id_b, similarity(a.sketch, b.sketch) AS similarity
FROM pdocs a JOIN pdocs b ON a.id < b.id
WHERE similarity(a.sketch, b.sketch) >= 0.5;

-- the same pairs as brute force, at every threshold
SELECT t, (SELECT count(*) FROM brute WHERE similarity >= t) AS brute_force,
       (SELECT count(*) FROM near_duplicate_pairs('pdocs', 'sketch', 'id', t)) AS found,
       (SELECT count(*) FROM ((SELECT * FROM near_duplicate_pairs('pdocs', 'sketch', 'id', t)
                               EXCEPT SELECT * FROM brute WHERE similarity >= t)
                              UNION ALL
                              (SELECT * FROM brute WHERE similarity >= t
                               EXCEPT SELECT * FROM near_duplicate_pairs('pdocs', 'sketch', 'id', t))) d) AS differences
FROM unnest(ARRAY[0.5, 0.7, 0.8, 0.9, 1.0]) t;
-- the threshold defaults to ndd.similarity_threshold; progress on request
SET ndd.similarity_threshold = 0.9;
SELECT count(*) FROM near_duplicate_pairs('pdocs', 'sketch', 'id', progress => true);
RESET ndd.similarity_threshold;

-- exact verification on 400 rows: the pairs whose texts reach 0.8, exactly
CREATE TABLE vdocs AS SELECT * FROM pdocs WHERE id < 400 OR id >= 10000;
SELECT count(*) AS brute_force FROM vdocs a JOIN vdocs b ON a.id < b.id
WHERE jaccard(a.body, b.body) >= 0.8;
SELECT count(*) AS differences FROM (
    (SELECT id_a, id_b FROM near_duplicate_pairs('vdocs', 'sketch', 'id', 0.8, verify_column => 'body')
     EXCEPT SELECT a.id, b.id FROM vdocs a JOIN vdocs b ON a.id < b.id WHERE jaccard(a.body, b.body) >= 0.8)
    UNION ALL
    (SELECT a.id, b.id FROM vdocs a JOIN vdocs b ON a.id < b.id WHERE jaccard(a.body, b.body) >= 0.8
     EXCEPT SELECT id_a, id_b FROM near_duplicate_pairs('vdocs', 'sketch', 'id', 0.8, verify_column => 'body'))) d;
-- and the similarity it reports is the exact one
SELECT bool_and(p.similarity = jaccard(a.body, b.body)) AS exact_values
FROM near_duplicate_pairs('vdocs', 'sketch', 'id', 0.8, verify_column => 'body') p
JOIN vdocs a ON a.id = p.id_a JOIN vdocs b ON b.id = p.id_b;

-- clusters: connected components, the same as a brute-force closure
CREATE TABLE clusters AS SELECT * FROM near_duplicate_clusters('pdocs', 'sketch', 'id', 0.75);
CREATE TABLE brute_clusters AS
WITH RECURSIVE edge AS (
    SELECT id_a AS x, id_b AS y FROM brute WHERE similarity >= 0.75
    UNION ALL SELECT id_b, id_a FROM brute WHERE similarity >= 0.75
), reach(id, root) AS (
    SELECT x, x FROM edge
    UNION
    SELECT e.y, r.root FROM reach r JOIN edge e ON e.x = r.id
)
SELECT id, min(root) AS cluster_id FROM reach GROUP BY id;
SELECT count(*) AS rows_in_clusters, count(DISTINCT cluster_id) AS clusters,
       (SELECT count(*) FROM ((TABLE clusters EXCEPT TABLE brute_clusters)
                              UNION ALL (TABLE brute_clusters EXCEPT TABLE clusters)) d) AS differences
FROM clusters;
-- the chain is one cluster, though its ends are not near-duplicates
SELECT id, cluster_id FROM clusters WHERE id >= 10000 ORDER BY id;
SELECT round(similarity(a.sketch, c.sketch)::numeric, 2) < 0.75 AS ends_apart
FROM pdocs a, pdocs c WHERE a.id = 10000 AND c.id = 10002;

-- keep one row per cluster, the representative chosen by any ordering
-- (here: the longest text, then the lowest id); mark the others instead
-- of deleting them with the same join
ALTER TABLE pdocs ADD COLUMN duplicate_of bigint;
UPDATE pdocs d SET duplicate_of = r.representative
FROM (SELECT c.id, first_value(c.id) OVER (PARTITION BY c.cluster_id
                                           ORDER BY length(p.body) DESC, c.id) AS representative
      FROM clusters c JOIN pdocs p ON p.id = c.id) r
WHERE d.id = r.id AND r.id <> r.representative;
SELECT count(*) FILTER (WHERE duplicate_of IS NULL) AS kept,
       count(*) FILTER (WHERE duplicate_of IS NOT NULL) AS marked FROM pdocs;
DELETE FROM pdocs d
USING (SELECT c.id, first_value(c.id) OVER (PARTITION BY c.cluster_id
                                            ORDER BY length(p.body) DESC, c.id) AS representative
       FROM clusters c JOIN pdocs p ON p.id = c.id) r
WHERE d.id = r.id AND r.id <> r.representative;
SELECT count(*) AS left_after_delete,
       (SELECT count(*) FROM near_duplicate_pairs('pdocs', 'sketch', 'id', 0.75)) AS pairs_left
FROM pdocs;

-- bad input
SELECT pg_temp.sqlstate_of($$SELECT * FROM near_duplicate_pairs('pdocs', 'sketch', 'id', 0)$$);
SELECT pg_temp.sqlstate_of($$SELECT * FROM near_duplicate_pairs('pdocs', 'sketch', 'id', 1.5)$$);
SELECT pg_temp.sqlstate_of($$SELECT * FROM near_duplicate_pairs('pdocs', 'nosuch', 'id')$$);
SELECT pg_temp.sqlstate_of($$SELECT * FROM near_duplicate_pairs('nosuch', 'sketch', 'id')$$);
SELECT pg_temp.sqlstate_of($$SELECT * FROM lsh_banding(minhash_sketch('a'), 0.8, -1)$$);
-- an empty table has no pairs
CREATE TABLE empty_docs (id int, sketch minhash);
SELECT count(*) FROM near_duplicate_pairs('empty_docs', 'sketch', 'id');
SELECT count(*) FROM near_duplicate_clusters('empty_docs', 'sketch', 'id');
