-- simhash_batch: every pair of a query and a target within max_distance
-- bits, exactly the pairs of the brute-force join, at every distance.

-- fp with nbits distinct bits flipped, at positions chosen by salt
CREATE FUNCTION pg_temp.flip(fp simhash, nbits int, salt bigint) RETURNS simhash
LANGUAGE sql AS $$
    SELECT simhash_from_bigint(fp::bigint # coalesce(bit_or(1::bigint << pos), 0))
    FROM (SELECT pos FROM generate_series(0, 63) pos
          ORDER BY hashint8extended(pos, salt) LIMIT nbits) p
$$;

-- 2,000 random queries; 2,000 random targets, and for 200 of the queries
-- one planted target at each distance from 0 to 8
CREATE TABLE batch_q AS
SELECT g AS id, simhash_from_bigint(hashint8extended(g, 7)) AS fp
FROM generate_series(1, 2000) g;
CREATE TABLE batch_t (id bigint, fp simhash);
INSERT INTO batch_t
SELECT 100000 + g, simhash_from_bigint(hashint8extended(g, 8)) FROM generate_series(1, 2000) g;
INSERT INTO batch_t
SELECT q.id * 10 + d, pg_temp.flip(q.fp, d, q.id * 10 + d)
FROM batch_q q, generate_series(0, 8) d WHERE q.id % 10 = 0;
-- and 600 fingerprints that vary in 13 bits only, as queries and targets:
-- many pairs at every small distance, agreeing on several blocks or few
INSERT INTO batch_q
SELECT 5000 + g, simhash_from_bigint(hashint8extended(g, 9) & x'8421084210842108'::bigint) FROM generate_series(1, 600) g;
INSERT INTO batch_t
SELECT 500000 + g, simhash_from_bigint(hashint8extended(g, 10) & x'8421084210842108'::bigint) FROM generate_series(1, 600) g;
ANALYZE batch_q;
ANALYZE batch_t;

CREATE TABLE batch_truth AS
SELECT q.id AS query_id, t.id AS target_id, hamming_distance(q.fp, t.fp) AS distance
FROM batch_q q CROSS JOIN batch_t t WHERE hamming_distance(q.fp, t.fp) <= 6;

-- pairs found, and the differences with the brute-force join (both ways)
CREATE FUNCTION pg_temp.check_batch(d int) RETURNS TABLE (found bigint, expected bigint, extra bigint, missing bigint)
LANGUAGE sql AS $$
    WITH b AS MATERIALIZED (SELECT * FROM simhash_batch('batch_q', 'batch_t', d)),
         e AS MATERIALIZED (SELECT * FROM batch_truth WHERE distance <= d)
    SELECT (SELECT count(*) FROM b), (SELECT count(*) FROM e),
           (SELECT count(*) FROM (SELECT * FROM b EXCEPT ALL SELECT * FROM e) x),
           (SELECT count(*) FROM (SELECT * FROM e EXCEPT ALL SELECT * FROM b) x)
$$;
SELECT d, c.* FROM generate_series(0, 6) d, pg_temp.check_batch(d) c ORDER BY d;

-- max_distance defaults to ndd.hamming_threshold
SET ndd.hamming_threshold = 2;
SELECT count(*) FROM simhash_batch('batch_q', 'batch_t');
RESET ndd.hamming_threshold;
SELECT count(*) FROM simhash_batch('batch_q', 'batch_t');

-- queries beyond work_mem: the targets are scanned once per part, same pairs
SET work_mem = '64kB';
SELECT c.* FROM pg_temp.check_batch(3) c;
RESET work_mem;

-- more than 2^16 queries: buckets of more bits than the targets are sorted
-- on; 140,000 fingerprints varying in 20 bits, checked at distances 0 and 1
-- against a hash join on each fingerprint with one bit flipped or none
CREATE TABLE batch_many_q AS
SELECT g AS id, simhash_from_bigint(hashint8extended(g, 11) & x'F0F0F0F0F0000000'::bigint) AS fp
FROM generate_series(1, 140000) g;
CREATE TABLE batch_many_t AS
SELECT g AS id, simhash_from_bigint(hashint8extended(g, 12) & x'F0F0F0F0F0000000'::bigint) AS fp
FROM generate_series(1, 3000) g;
CREATE TABLE batch_many_truth AS
SELECT q.id AS query_id, t.id AS target_id, hamming_distance(q.fp, t.fp) AS distance
FROM batch_many_t t CROSS JOIN LATERAL (SELECT t.fp::bigint AS v UNION ALL
                                        SELECT t.fp::bigint # (1::bigint << b) FROM generate_series(0, 63) b) f
JOIN batch_many_q q ON q.fp::bigint = f.v;
SET work_mem = '32MB';
SELECT d, (SELECT count(*) FROM batch_many_truth WHERE distance <= d) AS expected,
       (SELECT count(*) FROM (SELECT * FROM simhash_batch('batch_many_q', 'batch_many_t', d)
                              EXCEPT ALL SELECT * FROM batch_many_truth WHERE distance <= d) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM batch_many_truth WHERE distance <= d
                              EXCEPT ALL SELECT * FROM simhash_batch('batch_many_q', 'batch_many_t', d)) x) AS missing
FROM generate_series(0, 1) d ORDER BY d;
RESET work_mem;

-- a query table smaller than the targets or larger: the same pairs, swapped
SELECT (SELECT count(*) FROM (SELECT target_id, query_id, distance FROM simhash_batch('batch_t', 'batch_q', 4)
                              EXCEPT ALL SELECT * FROM batch_truth WHERE distance <= 4) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM batch_truth WHERE distance <= 4
                              EXCEPT ALL SELECT target_id, query_id, distance FROM simhash_batch('batch_t', 'batch_q', 4)) x) AS missing;

-- other column names, quoted names, int ids, a view, NULLs skipped, an
-- empty side, a domain
CREATE DOMAIN batch_fp AS simhash;
CREATE TABLE "Batch Q" ("Id" int, "F p" batch_fp);
INSERT INTO "Batch Q" SELECT id, fp FROM batch_q WHERE id % 10 = 0;
INSERT INTO "Batch Q" VALUES (NULL, '0000000000000000'), (1, NULL);
CREATE VIEW batch_tv AS SELECT id::int AS "Id", fp AS "F p" FROM batch_t;
SELECT distance, count(*)
FROM simhash_batch('"Batch Q"', 'batch_tv', 3, fingerprint_column => 'F p', id_column => 'Id')
GROUP BY distance ORDER BY distance;
SELECT (SELECT count(*) FROM (SELECT * FROM simhash_batch('"Batch Q"', 'batch_tv', 3, fingerprint_column => 'F p', id_column => 'Id')
                              EXCEPT ALL SELECT * FROM batch_truth WHERE distance <= 3 AND query_id % 10 = 0) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM batch_truth WHERE distance <= 3 AND query_id % 10 = 0
                              EXCEPT ALL SELECT * FROM simhash_batch('"Batch Q"', 'batch_tv', 3, fingerprint_column => 'F p', id_column => 'Id')) x) AS missing;
CREATE TABLE batch_empty (id bigint, fp simhash);
SELECT count(*) FROM simhash_batch('batch_empty', 'batch_t');
SELECT count(*) FROM simhash_batch('batch_q', 'batch_empty');
-- whatever the caller's search_path
SET search_path = pg_temp;
SELECT count(*) FROM public.simhash_batch('public.batch_q', 'public.batch_t', 1);
RESET search_path;

-- errors
\set SHOW_CONTEXT never
SELECT * FROM simhash_batch(NULL, 'batch_t');
\echo :SQLSTATE
SELECT * FROM simhash_batch('batch_q', 'batch_t', id_column => NULL);
\echo :SQLSTATE
SELECT * FROM simhash_batch('batch_q', 'batch_t', 7);
\echo :SQLSTATE
SELECT * FROM simhash_batch('batch_q', 'batch_t', -1);
\echo :SQLSTATE
SET ndd.hamming_threshold = 8;
SELECT * FROM simhash_batch('batch_q', 'batch_t');
\echo :SQLSTATE
RESET ndd.hamming_threshold;
SELECT * FROM simhash_batch('batch_q', 'batch_t', fingerprint_column => 'nope');
\echo :SQLSTATE
SELECT * FROM simhash_batch('batch_q', 'batch_t', fingerprint_column => 'ctid');
\echo :SQLSTATE
SELECT * FROM simhash_batch('batch_q', 'batch_t', fingerprint_column => 'id');
\echo :SQLSTATE
CREATE TABLE batch_bad (id text, fp simhash);
SELECT * FROM simhash_batch('batch_q', 'batch_bad');
\echo :SQLSTATE
SELECT * FROM simhash_batch('batch_q', 'no_such_table');
\echo :SQLSTATE
