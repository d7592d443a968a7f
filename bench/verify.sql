-- bench/verify.sh's measurements: :runs, :commit
CREATE TABLE timing (tbl text, method text, run int, s float8, pairs bigint);

CREATE FUNCTION time_call(tbl text, verify boolean, run int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    n bigint;
BEGIN
    IF verify THEN
        SELECT count(*) INTO n FROM near_duplicate_pairs(tbl::regclass, 'sketch', 'id', 0.8, verify_column => 'body');
    ELSE
        SELECT count(*) INTO n FROM near_duplicate_pairs(tbl::regclass, 'sketch', 'id', 0.8);
    END IF;
    INSERT INTO timing VALUES (tbl, CASE WHEN verify THEN 'verify_column' ELSE 'estimate only' END, run,
                               extract(epoch FROM clock_timestamp() - t0), n);
END $$;

-- interleaved: run 1 of each call, then run 2, ...
SELECT time_call(t.tbl, v.verify, r)
FROM generate_series(1, :runs) r, (VALUES ('corpus'), ('clustered')) t(tbl), (VALUES (false), (true)) v(verify)
ORDER BY r, t.tbl, v.verify;

-- The least verify_column can cost: it must find the candidates whose
-- estimate reaches the lower threshold (here with as many workers as the
-- session allows, the most the verify call gets), and read each of their
-- texts once, which is PostgreSQL's detoasting (pglz); the floor counts
-- the reading split over two cores and nothing for shingling or counting.
-- (LIKE 'zzz%' detoasts the whole text and stops at its first byte; the
-- texts are read in heap order.)
CREATE TABLE candidate_ids AS
SELECT t.tbl, p.id
FROM (VALUES ('corpus'), ('clustered')) t(tbl),
     LATERAL (SELECT c.id_a FROM near_duplicate_pairs(t.tbl::regclass, 'sketch', 'id',
                              (SELECT b.lower_threshold FROM lsh_banding(minhash_sketch('x'), 0.8, 3) b)) c
              UNION SELECT c.id_b FROM near_duplicate_pairs(t.tbl::regclass, 'sketch', 'id',
                              (SELECT b.lower_threshold FROM lsh_banding(minhash_sketch('x'), 0.8, 3) b)) c) p(id);

CREATE FUNCTION time_floor(tbl text, run int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    n bigint;
    workers text := current_setting('max_parallel_workers_per_gather');
BEGIN
    t0 := clock_timestamp();
    SELECT count(*) INTO n FROM near_duplicate_pairs(tbl::regclass, 'sketch', 'id',
        (SELECT b.lower_threshold FROM lsh_banding(minhash_sketch('x'), 0.8, 3) b));
    INSERT INTO timing VALUES (tbl, 'lower threshold', run, extract(epoch FROM clock_timestamp() - t0), n);
    PERFORM set_config('max_parallel_workers_per_gather', '0', true);
    t0 := clock_timestamp();
    EXECUTE format('SELECT count(*) FROM (SELECT t.body FROM %I t WHERE t.id IN (SELECT c.id FROM candidate_ids c WHERE c.tbl = %L)
                    OFFSET 0) s WHERE s.body LIKE %L', tbl, tbl, 'zzz%') INTO n;
    INSERT INTO timing VALUES (tbl, 'reading texts', run, extract(epoch FROM clock_timestamp() - t0), n);
    PERFORM set_config('max_parallel_workers_per_gather', workers, true);
END $$;

-- the workers a verify_column call gets (its texts' TOAST pages count)
SELECT format('ALTER TABLE %I SET (parallel_workers = %s)', t, current_setting('max_parallel_workers_per_gather'))
FROM unnest(ARRAY['corpus', 'clustered']) t \gexec
SELECT time_floor(t.tbl, r) FROM generate_series(1, :runs) r, (VALUES ('corpus'), ('clustered')) t(tbl) ORDER BY r, t.tbl;
ALTER TABLE corpus RESET (parallel_workers);
ALTER TABLE clustered RESET (parallel_workers);

-- verify_column's pairs are exactly those with jaccard() >= 0.8 among the
-- candidates it looks at (estimate at least 3 standard deviations below 0.8)
CREATE TABLE check_pairs (tbl text, verified bigint, by_hand bigint);
INSERT INTO check_pairs
SELECT 'corpus',
       (SELECT count(*) FROM near_duplicate_pairs('corpus', 'sketch', 'id', 0.8, verify_column => 'body')),
       (SELECT count(*) FROM near_duplicate_pairs('corpus', 'sketch', 'id',
                                                  (SELECT b.lower_threshold FROM lsh_banding(minhash_sketch('x'), 0.8, 3) b)) p
        JOIN corpus a ON a.id = p.id_a JOIN corpus b ON b.id = p.id_b
        WHERE jaccard(a.body, b.body) >= 0.8);
INSERT INTO check_pairs
SELECT 'clustered',
       (SELECT count(*) FROM near_duplicate_pairs('clustered', 'sketch', 'id', 0.8, verify_column => 'body')),
       (SELECT count(*) FROM near_duplicate_pairs('clustered', 'sketch', 'id',
                                                  (SELECT b.lower_threshold FROM lsh_banding(minhash_sketch('x'), 0.8, 3) b)) p
        JOIN clustered a ON a.id = p.id_a JOIN clustered b ON b.id = p.id_b
        WHERE jaccard(a.body, b.body) >= 0.8);

\echo
SELECT :'commit' AS commit, (SELECT count(*) FROM corpus) AS corpus_docs,
       (SELECT round(avg(length(body))) FROM corpus) AS corpus_avg_bytes,
       (SELECT count(*) FROM clustered) AS clustered_docs,
       (SELECT round(avg(length(body))) FROM clustered) AS clustered_avg_bytes;
SELECT t.tbl AS "table",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY t.s) FILTER (WHERE t.method = 'estimate only'))::numeric, 2) AS "estimate only s",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY t.s) FILTER (WHERE t.method = 'verify_column'))::numeric, 2) AS "verify_column s",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY t.s) FILTER (WHERE t.method = 'verify_column')
            / percentile_cont(0.5) WITHIN GROUP (ORDER BY t.s) FILTER (WHERE t.method = 'estimate only'))::numeric, 2) AS "ratio",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY t.s) FILTER (WHERE t.method = 'lower threshold'))::numeric, 2) AS "candidates at lower threshold s",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY t.s) FILTER (WHERE t.method = 'reading texts'))::numeric, 2) AS "reading their texts, 1 core s",
       round(((percentile_cont(0.5) WITHIN GROUP (ORDER BY t.s) FILTER (WHERE t.method = 'lower threshold')
             + percentile_cont(0.5) WITHIN GROUP (ORDER BY t.s) FILTER (WHERE t.method = 'reading texts') / 2)
            / percentile_cont(0.5) WITHIN GROUP (ORDER BY t.s) FILTER (WHERE t.method = 'estimate only'))::numeric, 2) AS "floor ratio",
       max(t.pairs) FILTER (WHERE t.method = 'verify_column') AS "verified pairs",
       min(c.by_hand) AS "jaccard() >= 0.8 by hand",
       min(c.verified) = min(c.by_hand) AS "same count"
FROM timing t JOIN check_pairs c ON c.tbl = t.tbl
GROUP BY t.tbl ORDER BY t.tbl DESC;
