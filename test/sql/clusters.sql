-- near_duplicate_clusters over more rows than it writes to its temporary
-- table at a time (8,192 labels an INSERT, with representative_order), or
-- checks for cancel between (without): the answers of both paths against the
-- truth, against ndd_components, and in ndd_maintain_clusters' first build.
SET extra_float_digits = 0;
\set SHOW_CONTEXT never

-- 3,300 texts, text t in 1 + t % 5 copies (one to five); the copies of a
-- text are its cluster, and no two texts share a shingle: 9,240 rows in
-- 2,640 clusters.  Ids are shuffled across the texts (7919 is invertible
-- modulo the prime 65521), and prio often ties (then the smaller id wins).
CREATE TABLE cdocs AS
SELECT (t * 8 + c) * 7919 % 65521 AS id, t, c,
       (SELECT string_agg(md5((t * 100 + k)::text), ' ' ORDER BY k) FROM generate_series(1, 6) k) AS body,
       hashint8(t * 8 + c) % 3 AS prio
FROM generate_series(1, 3300) t, generate_series(0, 4) c
WHERE c <= t % 5;
ALTER TABLE cdocs ADD PRIMARY KEY (id);
ALTER TABLE cdocs ADD COLUMN mh minhash;
UPDATE cdocs SET mh = minhash_sketch(body);
CREATE TABLE ctruth AS
SELECT id, min(id) OVER (PARTITION BY t) AS cluster_id,
       first_value(id) OVER (PARTITION BY t ORDER BY prio DESC, id) AS representative
FROM cdocs WHERE t % 5 <> 0;
SELECT count(*) AS docs, (SELECT count(*) FROM ctruth) AS clustered,
       (SELECT count(DISTINCT cluster_id) FROM ctruth) AS clusters
FROM cdocs;

-- each row with the smallest id of its cluster
CREATE TABLE cplain AS SELECT * FROM near_duplicate_clusters('cdocs', 'mh', 'id', 0.8);
SELECT count(*) AS rows_in_clusters, count(DISTINCT cluster_id) AS clusters,
       (SELECT count(*) FROM ((TABLE cplain EXCEPT SELECT id, cluster_id FROM ctruth)
                              UNION ALL (SELECT id, cluster_id FROM ctruth EXCEPT TABLE cplain)) d) AS differences
FROM cplain;
-- the same as the aggregate over the same pairs
SELECT count(*) AS differences FROM (
    (TABLE cplain EXCEPT
     SELECT c.l[i.i][1], c.l[i.i][2]
     FROM (SELECT ndd_components(p.id_a, p.id_b) AS l
           FROM near_duplicate_pairs('cdocs', 'mh', 'id', 0.8) p) c,
          generate_subscripts(c.l, 1) i(i))
    UNION ALL
    (SELECT c.l[i.i][1], c.l[i.i][2]
     FROM (SELECT ndd_components(p.id_a, p.id_b) AS l
           FROM near_duplicate_pairs('cdocs', 'mh', 'id', 0.8) p) c,
          generate_subscripts(c.l, 1) i(i)
     EXCEPT TABLE cplain)) d;

-- each row with the first row of its cluster by an order
CREATE TABLE cranked AS
SELECT * FROM near_duplicate_clusters('cdocs', 'mh', 'id', 0.8, representative_order => 'prio DESC');
SELECT count(*) AS rows_in_clusters, count(DISTINCT cluster_id) AS clusters,
       (SELECT count(*) FROM ((TABLE cranked EXCEPT SELECT id, representative FROM ctruth)
                              UNION ALL (SELECT id, representative FROM ctruth EXCEPT TABLE cranked)) d) AS differences
FROM cranked;
-- its temporary table is gone
SELECT count(*) AS left_over FROM pg_class WHERE relname = 'ndd_cluster_labels';

-- without an order, clusters write nothing but temporary files: they run in
-- a read-only transaction; with one, they need a temporary table
BEGIN READ ONLY;
SELECT count(*) AS rows_in_clusters FROM near_duplicate_clusters('cdocs', 'mh', 'id', 0.8);
SELECT count(*) FROM near_duplicate_clusters('cdocs', 'mh', 'id', 0.8, representative_order => 'prio DESC');
\echo :SQLSTATE
ROLLBACK;

-- the first build of a cluster table is near_duplicate_clusters' answer
SELECT ndd_maintain_clusters('cdocs', 'mh', 'id', threshold => 0.8, representative_order => 'prio DESC');
SELECT count(*) AS rows_in_clusters,
       (SELECT count(*) FROM ((SELECT id, cluster_id FROM cdocs_clusters EXCEPT TABLE cranked)
                              UNION ALL (TABLE cranked EXCEPT SELECT id, cluster_id FROM cdocs_clusters)) d) AS differences
FROM cdocs_clusters;

DROP TABLE cdocs CASCADE;
DROP TABLE cdocs_clusters, ctruth, cplain, cranked;
