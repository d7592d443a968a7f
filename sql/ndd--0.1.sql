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
