/* ndd--0.1.sql: near-duplicate detection */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION ndd" to load this file. \quit

--------------------------------------------------------------------------
-- Shingles and exact resemblance
--------------------------------------------------------------------------

CREATE FUNCTION show_shingles(doc text, shingle_size int DEFAULT 5,
                              unit text DEFAULT 'word',
                              strip_html boolean DEFAULT false)
RETURNS text[]
AS 'MODULE_PATHNAME', 'show_shingles'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION show_shingles(text, int, text, boolean) IS
'distinct shingles of a document, sorted, as the sketches see them';

CREATE FUNCTION jaccard(a text, b text, shingle_size int DEFAULT 5,
                        unit text DEFAULT 'word',
                        strip_html boolean DEFAULT false)
RETURNS float8
AS 'MODULE_PATHNAME', 'jaccard_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION jaccard(text, text, int, text, boolean) IS
'exact Jaccard resemblance of the shingle sets of two documents';

CREATE FUNCTION jaccard(a text[], b text[])
RETURNS float8
AS 'MODULE_PATHNAME', 'jaccard_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jaccard(text[], text[]) IS
'exact Jaccard resemblance of two sets of strings';

CREATE FUNCTION jaccard(a bigint[], b bigint[])
RETURNS float8
AS 'MODULE_PATHNAME', 'jaccard_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION jaccard(bigint[], bigint[]) IS
'exact Jaccard resemblance of two sets of integers';

--------------------------------------------------------------------------
-- The minhash type
--------------------------------------------------------------------------

CREATE TYPE minhash;

CREATE FUNCTION minhash_in(cstring) RETURNS minhash
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION minhash_out(minhash) RETURNS cstring
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION minhash_recv(internal) RETURNS minhash
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION minhash_send(minhash) RETURNS bytea
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The values are random bits: compression cannot shrink them.
CREATE TYPE minhash (
    INPUT = minhash_in,
    OUTPUT = minhash_out,
    RECEIVE = minhash_recv,
    SEND = minhash_send,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = int4,
    STORAGE = external
);

COMMENT ON TYPE minhash IS
'min-wise hashing sketch of a set (Broder): estimates Jaccard resemblance';

CREATE FUNCTION minhash_sketch(doc text, num_perm int DEFAULT 128,
                               shingle_size int DEFAULT 5,
                               unit text DEFAULT 'word',
                               strip_html boolean DEFAULT false,
                               seed int DEFAULT 0)
RETURNS minhash
AS 'MODULE_PATHNAME', 'minhash_sketch_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION minhash_sketch(text, int, int, text, boolean, int) IS
'minhash sketch of the shingles of a document';

CREATE FUNCTION minhash_sketch(elements text[], num_perm int DEFAULT 128,
                               seed int DEFAULT 0)
RETURNS minhash
AS 'MODULE_PATHNAME', 'minhash_sketch_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;

COMMENT ON FUNCTION minhash_sketch(text[], int, int) IS
'minhash sketch of a set of strings, taken as they are';

CREATE FUNCTION minhash_sketch(elements bigint[], num_perm int DEFAULT 128,
                               seed int DEFAULT 0)
RETURNS minhash
AS 'MODULE_PATHNAME', 'minhash_sketch_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;

COMMENT ON FUNCTION minhash_sketch(bigint[], int, int) IS
'minhash sketch of a set of integers';

CREATE FUNCTION minhash_settings(sketch minhash)
RETURNS text
AS 'MODULE_PATHNAME', 'minhash_settings'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_settings(minhash) IS
'how a minhash sketch was made: num_perm, unit, shingle_size, seed';

CREATE FUNCTION similarity(minhash, minhash)
RETURNS float8
AS 'MODULE_PATHNAME', 'minhash_similarity'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5;

COMMENT ON FUNCTION similarity(minhash, minhash) IS
'estimated Jaccard resemblance of two minhash sketches';

CREATE FUNCTION minhash_similarity_op(minhash, minhash)
RETURNS bool
AS 'MODULE_PATHNAME', 'minhash_similarity_op'
LANGUAGE C STABLE STRICT PARALLEL SAFE COST 5;  -- reads ndd.similarity_threshold

COMMENT ON FUNCTION minhash_similarity_op(minhash, minhash) IS
'true when similarity is at least ndd.similarity_threshold';

CREATE FUNCTION minhash_similarity_dist(minhash, minhash)
RETURNS float8
AS 'MODULE_PATHNAME', 'minhash_similarity_dist'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5;

COMMENT ON FUNCTION minhash_similarity_dist(minhash, minhash) IS
'1 - similarity of two minhash sketches';

CREATE OPERATOR % (
    LEFTARG = minhash,
    RIGHTARG = minhash,
    PROCEDURE = minhash_similarity_op,
    COMMUTATOR = '%',
    RESTRICT = matchingsel,
    JOIN = matchingjoinsel
);

COMMENT ON OPERATOR %(minhash, minhash) IS
'is similar: similarity at least ndd.similarity_threshold';

CREATE OPERATOR <-> (
    LEFTARG = minhash,
    RIGHTARG = minhash,
    PROCEDURE = minhash_similarity_dist,
    COMMUTATOR = '<->'
);

COMMENT ON OPERATOR <->(minhash, minhash) IS
'distance: 1 - similarity';

--------------------------------------------------------------------------
-- Aggregates
--------------------------------------------------------------------------

CREATE FUNCTION minhash_union_transfn(minhash, minhash)
RETURNS minhash
AS 'MODULE_PATHNAME', 'minhash_union_transfn'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_union_transfn(minhash, minhash) IS
'sketch of the union of the sets of two sketches';

CREATE AGGREGATE minhash_union(minhash) (
    SFUNC = minhash_union_transfn,
    STYPE = minhash,
    COMBINEFUNC = minhash_union_transfn,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE minhash_union(minhash) IS
'sketch of the union of the sets of all input sketches';

--------------------------------------------------------------------------
-- LSH banding: bucket-table helper, S-curve helpers
--------------------------------------------------------------------------

CREATE FUNCTION minhash_bands(sketch minhash, bands int, rows int)
RETURNS TABLE (band int, key bigint)
AS 'MODULE_PATHNAME', 'minhash_bands'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 32;

COMMENT ON FUNCTION minhash_bands(minhash, int, int) IS
'LSH band keys of a sketch, one row per band, for a bucket table';

CREATE FUNCTION lsh_probability(similarity float8, bands int, rows int)
RETURNS float8
AS 'MODULE_PATHNAME', 'lsh_probability'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION lsh_probability(float8, int, int) IS
'probability that a pair of this similarity shares at least one band: 1 - (1 - s^rows)^bands';

CREATE FUNCTION lsh_params(threshold float8, num_perm int DEFAULT 128,
                           false_positive_weight float8 DEFAULT 0.5,
                           false_negative_weight float8 DEFAULT 0.5,
                           OUT bands int, OUT rows int,
                           OUT false_positive float8, OUT false_negative float8)
RETURNS record
AS 'MODULE_PATHNAME', 'lsh_params'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION lsh_params(float8, int, float8, float8) IS
'banding that minimises the weighted false positive and false negative areas of the S-curve';

--------------------------------------------------------------------------
-- A threshold passed as a value
--------------------------------------------------------------------------

CREATE TYPE minhash_query AS (sketch minhash, threshold float8);

COMMENT ON TYPE minhash_query IS
'a sketch and a similarity threshold: the right side of minhash % minhash_query';

CREATE FUNCTION minhash_similar_query_op(minhash, minhash_query)
RETURNS bool
AS 'MODULE_PATHNAME', 'minhash_similar_query_op'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5;

COMMENT ON FUNCTION minhash_similar_query_op(minhash, minhash_query) IS
'true when similarity reaches the threshold carried by the query';

CREATE OPERATOR % (
    LEFTARG = minhash,
    RIGHTARG = minhash_query,
    PROCEDURE = minhash_similar_query_op,
    RESTRICT = matchingsel,
    JOIN = matchingjoinsel
);

COMMENT ON OPERATOR %(minhash, minhash_query) IS
'is similar: similarity at least the threshold of the query';

CREATE FUNCTION minhash_similar_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'minhash_similar_support'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_similar_support(internal) IS
'planner support for similar(): turns it into an index condition';

CREATE FUNCTION similar(a minhash, b minhash, threshold float8)
RETURNS bool
AS 'MODULE_PATHNAME', 'minhash_similar'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5
SUPPORT minhash_similar_support;

COMMENT ON FUNCTION similar(minhash, minhash, float8) IS
'true when similarity(a, b) >= threshold; uses minhash_ops indexes';

--------------------------------------------------------------------------
-- GIN operator class: LSH bands, exact by pigeonhole
--------------------------------------------------------------------------

CREATE FUNCTION gin_extract_value_minhash(minhash, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gin_extract_query_minhash(minhash, internal, int2, internal, internal, internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gin_minhash_consistent(internal, int2, minhash, int4, internal, internal, internal, internal)
RETURNS bool
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gin_minhash_triconsistent(internal, int2, minhash, int4, internal, internal, internal)
RETURNS "char"
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gin_minhash_options(internal)
RETURNS void
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION gin_extract_value_minhash(minhash, internal) IS 'GIN support: band keys of an indexed sketch';
COMMENT ON FUNCTION gin_extract_query_minhash(minhash, internal, int2, internal, internal, internal, internal) IS 'GIN support: band keys of a query';
COMMENT ON FUNCTION gin_minhash_consistent(internal, int2, minhash, int4, internal, internal, internal, internal) IS 'GIN support: enough matching bands?';
COMMENT ON FUNCTION gin_minhash_triconsistent(internal, int2, minhash, int4, internal, internal, internal) IS 'GIN support: enough matching bands, ternary';
COMMENT ON FUNCTION gin_minhash_options(internal) IS 'GIN support: options of minhash_ops';

CREATE OPERATOR CLASS minhash_ops
FOR TYPE minhash USING gin AS
    OPERATOR 1 % (minhash, minhash),
    OPERATOR 2 % (minhash, minhash_query),
    FUNCTION 1 btint4cmp(int4, int4),
    FUNCTION 2 gin_extract_value_minhash(minhash, internal),
    FUNCTION 3 gin_extract_query_minhash(minhash, internal, int2, internal, internal, internal, internal),
    FUNCTION 4 gin_minhash_consistent(internal, int2, minhash, int4, internal, internal, internal, internal),
    FUNCTION 6 gin_minhash_triconsistent(internal, int2, minhash, int4, internal, internal, internal),
    FUNCTION 7 gin_minhash_options(internal),
    STORAGE int4;

COMMENT ON OPERATOR CLASS minhash_ops USING gin IS
'LSH band keys of minhash sketches; exact for thresholds the banding can serve';

--------------------------------------------------------------------------
-- Rejecting near-duplicate inserts
--------------------------------------------------------------------------

-- Tokens that concurrent inserters of near-duplicates both claim (see
-- src/trigger.c); rows are claimed, never read by users.
CREATE TABLE ndd_near_duplicate_locks (
    relid oid NOT NULL,
    token int4 NOT NULL,
    claims int8 NOT NULL DEFAULT 0,
    PRIMARY KEY (relid, token)
);

COMMENT ON TABLE ndd_near_duplicate_locks IS
'tokens claimed by ndd_reject_near_duplicates so that concurrent near-duplicate inserts serialize';

-- the trigger runs as the inserting user, who must be able to claim tokens
GRANT SELECT, INSERT, UPDATE ON ndd_near_duplicate_locks TO PUBLIC;

CREATE FUNCTION ndd_reject_near_duplicates()
RETURNS trigger
AS 'MODULE_PATHNAME', 'ndd_reject_near_duplicates'
LANGUAGE C;

COMMENT ON FUNCTION ndd_reject_near_duplicates() IS
'BEFORE INSERT OR UPDATE trigger: rejects (or skips) rows whose minhash sketch is a near-duplicate of an existing row; arguments: sketch column, threshold, error|skip';

CREATE FUNCTION ndd_fingerprint(doc text, strip_html boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'ndd_fingerprint'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 50;

COMMENT ON FUNCTION ndd_fingerprint(text, boolean) IS
'64-bit hash of the normalised words of a document: exact duplicates up to case, punctuation, whitespace (and markup)';

--------------------------------------------------------------------------
-- All-pairs discovery and clusters
--------------------------------------------------------------------------

CREATE FUNCTION lsh_banding(sketch minhash, threshold float8, margin float8 DEFAULT 0,
                            OUT bands int, OUT rows int, OUT required int,
                            OUT lower_threshold float8)
RETURNS record
AS 'MODULE_PATHNAME', 'lsh_banding'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION lsh_banding(minhash, float8, float8) IS
'banding exact at threshold minus margin standard deviations of the estimate, for sketches like this one';

-- Every pair of rows at or above the threshold, without comparing all pairs:
-- rows meet through shared LSH bands (a banding exact at the threshold, so
-- none is missed), in one statement whose joins and sorts PostgreSQL keeps
-- within work_mem, spilling to disk and honouring cancel.  With
-- verify_column, candidates are taken 3 standard deviations of the estimate
-- below the threshold and kept when the exact jaccard() of the stored texts
-- reaches it; similarity is then the exact value.
CREATE FUNCTION near_duplicate_pairs(tbl regclass, sketch_column name, id_column name,
                                     threshold float8 DEFAULT NULL,
                                     verify_column name DEFAULT NULL,
                                     progress boolean DEFAULT false)
RETURNS TABLE (id_a bigint, id_b bigint, similarity float8)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
-- the band self-join must hash, not loop: without statistics (a table just
-- loaded) the planner may otherwise nest loops over every pair of keys
SET enable_nestloop = off
AS $$
DECLARE
    ndd name := (SELECT n.nspname FROM pg_catalog.pg_extension e
                 JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
                 WHERE e.extname = 'ndd');
    t float8 := coalesce(threshold, pg_catalog.current_setting('ndd.similarity_threshold')::float8);
    probe text;
    banding record;
    found_pairs bigint;
    q text;
BEGIN
    IF t IS NULL OR t <= 0 OR t > 1 OR t = 'NaN' THEN
        RAISE EXCEPTION 'threshold must be greater than 0 and at most 1'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- the banding suits the table's sketches: take the first one's settings
    EXECUTE pg_catalog.format('SELECT %I::text FROM %s WHERE %I IS NOT NULL LIMIT 1',
                              sketch_column, tbl, sketch_column) INTO probe;
    IF probe IS NULL THEN
        RETURN;
    END IF;
    -- with verification, candidates reach 3 standard deviations lower
    EXECUTE pg_catalog.format('SELECT * FROM %I.lsh_banding($1::%I.minhash, $2, $3)', ndd, ndd)
        USING probe, t, CASE WHEN verify_column IS NULL THEN 0 ELSE 3 END INTO banding;
    IF progress THEN
        RAISE NOTICE 'ndd: % bands of % rows over %, at least % matching bands per candidate',
            banding.bands, banding.rows, tbl, banding.required;
    END IF;

    q := pg_catalog.format($q$
        WITH keys AS MATERIALIZED (
            SELECT t.%2$I::bigint AS id, b.band, b.key
            FROM %1$s t, %4$I.minhash_bands(t.%3$I, $1, $2) b
            WHERE t.%3$I IS NOT NULL),
        candidates AS (
            SELECT x.id AS a, y.id AS b
            FROM keys x JOIN keys y ON y.band = x.band AND y.key = x.key AND y.id > x.id
            GROUP BY 1, 2
            HAVING pg_catalog.count(*) >= $3)
        SELECT c.a, c.b, %4$I.similarity(ta.%3$I, tb.%3$I)
        FROM candidates c
        JOIN %1$s ta ON ta.%2$I::bigint = c.a
        JOIN %1$s tb ON tb.%2$I::bigint = c.b
        WHERE %4$I.similarity(ta.%3$I, tb.%3$I) >= $4$q$,
        tbl, id_column, sketch_column, ndd);
    IF verify_column IS NOT NULL THEN
        q := pg_catalog.format($q$
            SELECT p.a, p.b, %4$I.jaccard(ta.%2$I, tb.%2$I, $6, $7)
            FROM (%1$s) p(a, b, s)
            JOIN %3$s ta ON ta.%5$I::bigint = p.a
            JOIN %3$s tb ON tb.%5$I::bigint = p.b
            WHERE %4$I.jaccard(ta.%2$I, tb.%2$I, $6, $7) >= $5$q$,
            q, verify_column, tbl, ndd, id_column);
    END IF;
    -- verification shingles the texts as the sketches did (the text form of
    -- a sketch names its unit and shingle size)
    RETURN QUERY EXECUTE q USING banding.bands, banding.rows, banding.required,
        banding.lower_threshold, t,
        pg_catalog.split_part(pg_catalog.split_part(probe, 'shingle_size=', 2), ',', 1)::int,
        pg_catalog.split_part(pg_catalog.split_part(probe, 'unit=', 2), ',', 1);
    IF progress THEN
        GET DIAGNOSTICS found_pairs = ROW_COUNT;
        RAISE NOTICE 'ndd: % pairs at or above %', found_pairs, t;
    END IF;
END
$$;

COMMENT ON FUNCTION near_duplicate_pairs(regclass, name, name, float8, name, boolean) IS
'every pair of rows whose sketches reach the threshold (or, with verify_column, whose texts do, exactly), found through LSH bands';

-- Connected components of the near-duplicate pairs: each row that has a
-- near-duplicate, with the smallest id of its component as cluster_id.
CREATE FUNCTION near_duplicate_clusters(tbl regclass, sketch_column name, id_column name,
                                        threshold float8 DEFAULT NULL,
                                        verify_column name DEFAULT NULL,
                                        progress boolean DEFAULT false)
RETURNS TABLE (id bigint, cluster_id bigint)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $$
DECLARE
    ndd name := (SELECT n.nspname FROM pg_catalog.pg_extension e
                 JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
                 WHERE e.extname = 'ndd');
    changed bigint;
    rounds int := 0;
BEGIN
    IF pg_catalog.to_regclass('pg_temp.ndd_cluster_edges') IS NOT NULL THEN
        DROP TABLE pg_temp.ndd_cluster_edges;
    END IF;
    IF pg_catalog.to_regclass('pg_temp.ndd_cluster_labels') IS NOT NULL THEN
        DROP TABLE pg_temp.ndd_cluster_labels;
    END IF;
    EXECUTE pg_catalog.format(
        'CREATE TEMP TABLE ndd_cluster_edges AS SELECT id_a AS x, id_b AS y FROM %I.near_duplicate_pairs($1, $2, $3, $4, $5, $6)', ndd)
        USING tbl, sketch_column, id_column, threshold, verify_column, progress;
    INSERT INTO pg_temp.ndd_cluster_edges SELECT e.y, e.x FROM pg_temp.ndd_cluster_edges e;
    CREATE INDEX ON pg_temp.ndd_cluster_edges (x);
    CREATE TEMP TABLE ndd_cluster_labels AS
        SELECT DISTINCT e.x AS id, e.x AS label FROM pg_temp.ndd_cluster_edges e;
    CREATE UNIQUE INDEX ON pg_temp.ndd_cluster_labels (id);
    ANALYZE pg_temp.ndd_cluster_edges, pg_temp.ndd_cluster_labels;
    -- each round a row takes the smallest label among its neighbours
    LOOP
        UPDATE pg_temp.ndd_cluster_labels l SET label = m.label
        FROM (SELECT e.x AS id, pg_catalog.min(n.label) AS label
              FROM pg_temp.ndd_cluster_edges e
              JOIN pg_temp.ndd_cluster_labels n ON n.id = e.y
              GROUP BY e.x) m
        WHERE m.id = l.id AND m.label < l.label;
        GET DIAGNOSTICS changed = ROW_COUNT;
        rounds := rounds + 1;
        EXIT WHEN changed = 0;
    END LOOP;
    IF progress THEN
        RAISE NOTICE 'ndd: components settled after % rounds', rounds;
    END IF;
    RETURN QUERY SELECT l.id, l.label FROM pg_temp.ndd_cluster_labels l;
    DROP TABLE pg_temp.ndd_cluster_edges, pg_temp.ndd_cluster_labels;
END
$$;

COMMENT ON FUNCTION near_duplicate_clusters(regclass, name, name, float8, name, boolean) IS
'connected components of near_duplicate_pairs: (id, cluster_id) with the smallest id of each component';
