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

CREATE FUNCTION minhash_band_keys(sketch minhash, bands int, rows int)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'minhash_band_keys'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_band_keys(minhash, int, int) IS
'the keys of minhash_bands as one array, band 0 first (none for an empty document)';

CREATE FUNCTION minhash_lowbits(sketch minhash)
RETURNS bytea
AS 'MODULE_PATHNAME', 'minhash_lowbits'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_lowbits(minhash) IS
'the low 2 bits of each position of a sketch, packed: a 32-byte summary for pruning candidate pairs';

CREATE FUNCTION minhash_lowbits_agreement(a bytea, b bytea)
RETURNS int
AS 'MODULE_PATHNAME', 'minhash_lowbits_agreement'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_lowbits_agreement(bytea, bytea) IS
'positions whose low bits agree: never fewer than the positions whose values agree';

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

-- simhash (issue 3) --------------------------------------------------

CREATE TYPE simhash;

CREATE FUNCTION simhash_in(cstring) RETURNS simhash
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION simhash_out(simhash) RETURNS cstring
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION simhash_recv(internal) RETURNS simhash
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION simhash_send(simhash) RETURNS bytea
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash (
    INPUT = simhash_in,
    OUTPUT = simhash_out,
    RECEIVE = simhash_recv,
    SEND = simhash_send,
    INTERNALLENGTH = 8,
    PASSEDBYVALUE,
    ALIGNMENT = double,
    STORAGE = plain
);

COMMENT ON TYPE simhash IS
'64-bit similarity fingerprint (Charikar): Hamming distance estimates cosine distance';

-- Casts reinterpret the 64 bits: the text form, the bigint and the bit(64)
-- all show the same value, most significant bit first.
CREATE FUNCTION simhash_to_bigint(simhash) RETURNS bigint
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_to_bigint(simhash) IS
'the 64 bits of a simhash as a bigint (two''s complement)';

CREATE FUNCTION simhash_from_bigint(bigint) RETURNS simhash
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_from_bigint(bigint) IS
'the 64 bits of a bigint as a simhash';

CREATE FUNCTION simhash_to_bit(simhash) RETURNS bit
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_to_bit(simhash) IS
'a simhash as bit(64), most significant bit first';

CREATE FUNCTION simhash_from_bit(bit) RETURNS simhash
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_from_bit(bit) IS
'a bit(64) as a simhash, most significant bit first';

CREATE CAST (simhash AS bigint) WITH FUNCTION simhash_to_bigint(simhash);
CREATE CAST (bigint AS simhash) WITH FUNCTION simhash_from_bigint(bigint);
CREATE CAST (simhash AS bit) WITH FUNCTION simhash_to_bit(simhash);
CREATE CAST (bit AS simhash) WITH FUNCTION simhash_from_bit(bit);

COMMENT ON CAST (simhash AS bigint) IS 'the same 64 bits, as two''s complement';
COMMENT ON CAST (bigint AS simhash) IS 'the same 64 bits, as a fingerprint';
COMMENT ON CAST (simhash AS bit) IS 'the 64 bits, most significant first; cast to bit(64)';
COMMENT ON CAST (bit AS simhash) IS 'a bit(64), most significant bit first';

-- Construction
CREATE FUNCTION simhash(doc text, shingle_size int DEFAULT 2,
                        unit text DEFAULT 'word',
                        strip_html boolean DEFAULT false,
                        seed int DEFAULT 0)
RETURNS simhash
AS 'MODULE_PATHNAME', 'simhash_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION simhash(text, int, text, boolean, int) IS
'simhash of the shingles of a document, each weighted by how often it occurs';

CREATE FUNCTION simhash(features text[], seed int DEFAULT 0)
RETURNS simhash
AS 'MODULE_PATHNAME', 'simhash_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;

COMMENT ON FUNCTION simhash(text[], int) IS
'simhash of strings, each occurrence weighing 1';

CREATE FUNCTION simhash(features bigint[], seed int DEFAULT 0)
RETURNS simhash
AS 'MODULE_PATHNAME', 'simhash_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;

COMMENT ON FUNCTION simhash(bigint[], int) IS
'simhash of integers, each occurrence weighing 1';

CREATE FUNCTION simhash(features text[], weights float8[], seed int DEFAULT 0)
RETURNS simhash
AS 'MODULE_PATHNAME', 'simhash_array_weighted'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;

COMMENT ON FUNCTION simhash(text[], float8[], int) IS
'simhash of strings with the caller''s weights (tf-idf, say), one per string';

CREATE FUNCTION simhash(features bigint[], weights float8[], seed int DEFAULT 0)
RETURNS simhash
AS 'MODULE_PATHNAME', 'simhash_array_weighted'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;

COMMENT ON FUNCTION simhash(bigint[], float8[], int) IS
'simhash of integers with the caller''s weights, one per integer';

-- Distance and similarity
CREATE FUNCTION hamming_distance(a simhash, b simhash)
RETURNS int
AS 'MODULE_PATHNAME', 'hamming_distance'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION hamming_distance(simhash, simhash) IS
'number of bits in which two simhash fingerprints differ';

CREATE FUNCTION simhash_keys(fingerprint simhash, max_distance int DEFAULT 3)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'simhash_keys'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_keys(simhash, int) IS
'block keys of a fingerprint: two fingerprints within max_distance bits share at least one (for a bucket table)';

CREATE FUNCTION simhash_cosine(a simhash, b simhash)
RETURNS float8
AS 'MODULE_PATHNAME', 'simhash_cosine'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_cosine(simhash, simhash) IS
'estimated cosine similarity of the weighted features: cos(pi * hamming_distance / 64)';

CREATE FUNCTION simhash_hamming_op(simhash, simhash)
RETURNS bool
AS 'MODULE_PATHNAME', 'simhash_hamming_op'
LANGUAGE C STABLE STRICT PARALLEL SAFE;  -- reads ndd.hamming_threshold

COMMENT ON FUNCTION simhash_hamming_op(simhash, simhash) IS
'true when hamming_distance is at most ndd.hamming_threshold';

CREATE FUNCTION simhash_hamming_dist(simhash, simhash)
RETURNS int
AS 'MODULE_PATHNAME', 'simhash_hamming_dist'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_hamming_dist(simhash, simhash) IS
'Hamming distance of two simhash fingerprints, for ORDER BY';

CREATE FUNCTION simhash_matchsel(internal, oid, internal, int)
RETURNS float8
AS 'MODULE_PATHNAME', 'simhash_matchsel'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_matchsel(internal, oid, internal, int) IS
'restriction selectivity of simhash % simhash';

CREATE FUNCTION simhash_matchjoinsel(internal, oid, internal, int2, internal)
RETURNS float8
AS 'MODULE_PATHNAME', 'simhash_matchjoinsel'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_matchjoinsel(internal, oid, internal, int2, internal) IS
'join selectivity of simhash % simhash';

CREATE OPERATOR % (
    LEFTARG = simhash,
    RIGHTARG = simhash,
    PROCEDURE = simhash_hamming_op,
    COMMUTATOR = '%',
    RESTRICT = simhash_matchsel,
    JOIN = simhash_matchjoinsel
);

COMMENT ON OPERATOR %(simhash, simhash) IS
'is near: Hamming distance at most ndd.hamming_threshold';

CREATE OPERATOR <-> (
    LEFTARG = simhash,
    RIGHTARG = simhash,
    PROCEDURE = simhash_hamming_dist,
    COMMUTATOR = '<->'
);

COMMENT ON OPERATOR <->(simhash, simhash) IS
'distance: number of differing bits';

-- Comparison: by the unsigned value, the order of the text form
CREATE FUNCTION simhash_lt(simhash, simhash) RETURNS bool
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_le(simhash, simhash) RETURNS bool
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_eq(simhash, simhash) RETURNS bool
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_ne(simhash, simhash) RETURNS bool
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_ge(simhash, simhash) RETURNS bool
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gt(simhash, simhash) RETURNS bool
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_cmp(simhash, simhash) RETURNS int
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_sortsupport(internal) RETURNS void
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_hash(simhash) RETURNS int
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_hash_extended(simhash, bigint) RETURNS bigint
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_lt(simhash, simhash) IS 'less than, by unsigned value';
COMMENT ON FUNCTION simhash_le(simhash, simhash) IS 'less than or equal, by unsigned value';
COMMENT ON FUNCTION simhash_eq(simhash, simhash) IS 'equal';
COMMENT ON FUNCTION simhash_ne(simhash, simhash) IS 'not equal';
COMMENT ON FUNCTION simhash_ge(simhash, simhash) IS 'greater than or equal, by unsigned value';
COMMENT ON FUNCTION simhash_gt(simhash, simhash) IS 'greater than, by unsigned value';
COMMENT ON FUNCTION simhash_cmp(simhash, simhash) IS 'btree comparison: -1, 0 or 1';
COMMENT ON FUNCTION simhash_sortsupport(internal) IS 'btree sort support';
COMMENT ON FUNCTION simhash_hash(simhash) IS 'hash, as for the bigint of the same bits';
COMMENT ON FUNCTION simhash_hash_extended(simhash, bigint) IS 'seeded hash, as for the bigint of the same bits';

CREATE OPERATOR < (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_lt,
    COMMUTATOR = >, NEGATOR = >=,
    RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_le,
    COMMUTATOR = >=, NEGATOR = >,
    RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR = (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_eq,
    COMMUTATOR = =, NEGATOR = <>,
    RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);
CREATE OPERATOR <> (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_ne,
    COMMUTATOR = <>, NEGATOR = =,
    RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR >= (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_ge,
    COMMUTATOR = <=, NEGATOR = <,
    RESTRICT = scalargesel, JOIN = scalargejoinsel
);
CREATE OPERATOR > (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_gt,
    COMMUTATOR = <, NEGATOR = <=,
    RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);

COMMENT ON OPERATOR <(simhash, simhash) IS 'less than, by unsigned value';
COMMENT ON OPERATOR <=(simhash, simhash) IS 'less than or equal, by unsigned value';
COMMENT ON OPERATOR =(simhash, simhash) IS 'equal';
COMMENT ON OPERATOR <>(simhash, simhash) IS 'not equal';
COMMENT ON OPERATOR >=(simhash, simhash) IS 'greater than or equal, by unsigned value';
COMMENT ON OPERATOR >(simhash, simhash) IS 'greater than, by unsigned value';

CREATE OPERATOR CLASS simhash_ops
DEFAULT FOR TYPE simhash USING btree AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 simhash_cmp(simhash, simhash),
    FUNCTION 2 simhash_sortsupport(internal);

COMMENT ON OPERATOR CLASS simhash_ops USING btree IS
'sort, group, join and make unique simhash values (by unsigned value)';

CREATE OPERATOR CLASS simhash_ops
DEFAULT FOR TYPE simhash USING hash AS
    OPERATOR 1 =,
    FUNCTION 1 simhash_hash(simhash),
    FUNCTION 2 simhash_hash_extended(simhash, bigint);

COMMENT ON OPERATOR CLASS simhash_ops USING hash IS
'hash joins and hash aggregation of simhash values';

-- GIN: block keys (Manku et al.), simhash_ops(max_distance = 0 .. 6, keys = pairs | blocks)
CREATE FUNCTION gin_extract_value_simhash(simhash, internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gin_extract_query_simhash(simhash, internal, int2, internal, internal, internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gin_simhash_consistent(internal, int2, simhash, int4, internal, internal, internal, internal)
RETURNS bool
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gin_simhash_triconsistent(internal, int2, simhash, int4, internal, internal, internal)
RETURNS "char"
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gin_simhash_options(internal)
RETURNS void
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION gin_extract_value_simhash(simhash, internal, internal) IS
'GIN support: the block keys of a fingerprint';
COMMENT ON FUNCTION gin_extract_query_simhash(simhash, internal, int2, internal, internal, internal, internal) IS
'GIN support: the block keys of a query and how many must match';
COMMENT ON FUNCTION gin_simhash_consistent(internal, int2, simhash, int4, internal, internal, internal, internal) IS
'GIN support: does a row share enough blocks with the query';
COMMENT ON FUNCTION gin_simhash_triconsistent(internal, int2, simhash, int4, internal, internal, internal) IS
'GIN support: ternary form of gin_simhash_consistent';
COMMENT ON FUNCTION gin_simhash_options(internal) IS
'GIN support: the max_distance and keys options';

CREATE OPERATOR CLASS simhash_ops
DEFAULT FOR TYPE simhash USING gin AS
    OPERATOR 1 % (simhash, simhash),
    FUNCTION 1 btint8cmp(int8, int8),
    FUNCTION 2 gin_extract_value_simhash(simhash, internal, internal),
    FUNCTION 3 gin_extract_query_simhash(simhash, internal, int2, internal, internal, internal, internal),
    FUNCTION 4 gin_simhash_consistent(internal, int2, simhash, int4, internal, internal, internal, internal),
    FUNCTION 6 gin_simhash_triconsistent(internal, int2, simhash, int4, internal, internal, internal),
    FUNCTION 7 gin_simhash_options(internal),
    STORAGE int8;

COMMENT ON OPERATOR CLASS simhash_ops USING gin IS
'simhash % simhash by block keys; exact for every threshold, fast up to max_distance (default 3)';

-- GiST: shared bits per subtree; % and ORDER BY <->
CREATE TYPE gsimhash;

CREATE FUNCTION gsimhash_in(cstring) RETURNS gsimhash
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gsimhash_out(gsimhash) RETURNS cstring
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE gsimhash (
    INPUT = gsimhash_in,
    OUTPUT = gsimhash_out,
    INTERNALLENGTH = 16,
    ALIGNMENT = double,
    STORAGE = plain
);

COMMENT ON TYPE gsimhash IS
'GiST key of simhash_ops: bits every fingerprint below agrees on, shown as bits/mask';

CREATE FUNCTION gsimhash_consistent(internal, simhash, int2, oid, internal)
RETURNS bool
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gsimhash_distance(internal, simhash, int2, oid, internal)
RETURNS float8
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gsimhash_compress(internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gsimhash_fetch(internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gsimhash_union(internal, internal)
RETURNS gsimhash
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gsimhash_same(gsimhash, gsimhash, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gsimhash_penalty(internal, internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gsimhash_picksplit(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gsimhash_sortsupport(internal)
RETURNS void
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION gsimhash_in(cstring) IS 'gsimhash input: not accepted';
COMMENT ON FUNCTION gsimhash_out(gsimhash) IS 'gsimhash output: bits/mask in hex';
COMMENT ON FUNCTION gsimhash_consistent(internal, simhash, int2, oid, internal) IS
'GiST support: can a subtree hold a fingerprint within the threshold';
COMMENT ON FUNCTION gsimhash_distance(internal, simhash, int2, oid, internal) IS
'GiST support: lower bound of the Hamming distance to a subtree';
COMMENT ON FUNCTION gsimhash_compress(internal) IS 'GiST support: a fingerprint as a key';
COMMENT ON FUNCTION gsimhash_fetch(internal) IS 'GiST support: the fingerprint of a leaf key';
COMMENT ON FUNCTION gsimhash_union(internal, internal) IS 'GiST support: bits shared by all keys';
COMMENT ON FUNCTION gsimhash_same(gsimhash, gsimhash, internal) IS 'GiST support: are two keys equal';
COMMENT ON FUNCTION gsimhash_penalty(internal, internal, internal) IS 'GiST support: shared bits lost by an insertion';
COMMENT ON FUNCTION gsimhash_picksplit(internal, internal) IS 'GiST support: split a page on its most even bit';
COMMENT ON FUNCTION gsimhash_sortsupport(internal) IS 'GiST support: sorted build by value';

CREATE OPERATOR CLASS simhash_ops
DEFAULT FOR TYPE simhash USING gist AS
    OPERATOR 1 % (simhash, simhash),
    OPERATOR 2 <-> (simhash, simhash) FOR ORDER BY pg_catalog.integer_ops,
    FUNCTION 1 gsimhash_consistent(internal, simhash, int2, oid, internal),
    FUNCTION 2 gsimhash_union(internal, internal),
    FUNCTION 3 gsimhash_compress(internal),
    FUNCTION 5 gsimhash_penalty(internal, internal, internal),
    FUNCTION 6 gsimhash_picksplit(internal, internal),
    FUNCTION 7 gsimhash_same(gsimhash, gsimhash, internal),
    FUNCTION 8 gsimhash_distance(internal, simhash, int2, oid, internal),
    FUNCTION 9 gsimhash_fetch(internal),
    FUNCTION 11 gsimhash_sortsupport(internal),
    STORAGE gsimhash;

COMMENT ON OPERATOR CLASS simhash_ops USING gist IS
'simhash % simhash and ORDER BY simhash <-> simhash (nearest by Hamming distance)';

-- The same tree for ORDER BY alone: next to a GIN index for %, a GiST index
-- of simhash_ops would win the planner's costing for % (it cannot see how
-- little a subtree's shared bits prune) and be slower.
CREATE OPERATOR CLASS simhash_knn_ops
FOR TYPE simhash USING gist AS
    OPERATOR 2 <-> (simhash, simhash) FOR ORDER BY pg_catalog.integer_ops,
    FUNCTION 1 gsimhash_consistent(internal, simhash, int2, oid, internal),
    FUNCTION 2 gsimhash_union(internal, internal),
    FUNCTION 3 gsimhash_compress(internal),
    FUNCTION 5 gsimhash_penalty(internal, internal, internal),
    FUNCTION 6 gsimhash_picksplit(internal, internal),
    FUNCTION 7 gsimhash_same(gsimhash, gsimhash, internal),
    FUNCTION 8 gsimhash_distance(internal, simhash, int2, oid, internal),
    FUNCTION 9 gsimhash_fetch(internal),
    FUNCTION 11 gsimhash_sortsupport(internal),
    STORAGE gsimhash;

COMMENT ON OPERATOR CLASS simhash_knn_ops USING gist IS
'ORDER BY simhash <-> simhash only: kNN beside a GIN index that serves %';

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

-- The first pass of all-pairs discovery (src/key_filter.c): a bitmap, within
-- work_mem, of the bucket keys that may occur more than once.
CREATE FUNCTION ndd_colliding_keys_transfn(internal, bigint[], bigint)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION ndd_colliding_keys_combinefn(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION ndd_colliding_keys_serialfn(internal)
RETURNS bytea
AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION ndd_colliding_keys_deserialfn(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION ndd_colliding_keys_finalfn(internal)
RETURNS bytea
AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE ndd_colliding_keys(keys bigint[], expected_keys bigint) (
    SFUNC = ndd_colliding_keys_transfn,
    STYPE = internal,
    FINALFUNC = ndd_colliding_keys_finalfn,
    COMBINEFUNC = ndd_colliding_keys_combinefn,
    SERIALFUNC = ndd_colliding_keys_serialfn,
    DESERIALFUNC = ndd_colliding_keys_deserialfn,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE ndd_colliding_keys(bigint[], bigint) IS
'bitmap (within work_mem) of the keys seen more than once, with some false positives; for ndd_colliding';

CREATE FUNCTION ndd_colliding(keys bigint[], filter bytea, drop_frequent int DEFAULT 0)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'ndd_colliding'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ndd_colliding(bigint[], bytea, int) IS
'the keys that may occur more than once in the set ndd_colliding_keys saw, leaving out the drop_frequent most frequent (prefix filtering)';

-- Every pair of rows at or above the threshold, without comparing all pairs.
-- Rows meet through bucket keys that every qualifying pair shares (minhash:
-- the bands of a banding exact at the threshold; simhash: block keys, by
-- pigeonhole), so none is missed:
--   1. ndd_colliding_keys marks, within work_mem, the keys seen twice, and
--      counts them roughly;
--   2. the keys that may collide are kept, with their rows' ids (a small
--      part of all keys), except each row's most frequent keys: a pair that
--      must share `required` keys shares one of the others (prefix
--      filtering, see src/key_filter.c), and frequent keys make buckets
--      whose pairs grow as their square;
--   3. rows sharing a kept key become candidates when a 32-byte summary
--      of their sketches (minhash_lowbits) does not rule them out;
--   4. candidates whose sketches reach the threshold are returned.
-- Steps 2-4 are plain SQL over temporary tables, which PostgreSQL keeps
-- within work_mem (spilling to disk) and can cancel.  With verify_column,
-- minhash candidates are taken 3 standard deviations of the estimate below
-- the threshold, and pairs are kept when the exact jaccard() of the stored
-- texts reaches it; similarity is then the exact value.
CREATE FUNCTION near_duplicate_pairs(tbl regclass, sketch_column name, id_column name,
                                     threshold float8 DEFAULT NULL,
                                     verify_column name DEFAULT NULL,
                                     progress boolean DEFAULT false,
                                     max_distance int DEFAULT NULL)
RETURNS TABLE (id_a bigint, id_b bigint, similarity float8, distance int)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
-- joins must hash, not loop: without statistics (a table just loaded) the
-- planner may otherwise nest loops over every pair of keys
SET enable_nestloop = off
AS $$
DECLARE
    ndd name;
    ndd_nsp oid;
    column_type oid;
    is_simhash boolean;
    -- the GUCs exist once the library is loaded (defaults as in ndd.h)
    t float8 := coalesce(threshold, pg_catalog.current_setting('ndd.similarity_threshold', true)::float8, 0.8);
    k int := coalesce(max_distance, pg_catalog.current_setting('ndd.hamming_threshold', true)::int, 3);
    probe text;
    banding record;
    keys_of text;           -- the bucket keys of row t, as an SQL expression
    keys_per_row int;
    required int;
    summary text;           -- a small summary of sketch s, carried with its keys
    summary_type text;
    close_enough text;      -- a necessary test on the summaries x, y of a pair
    score text;             -- similarity and distance of sketches sa, sb
    keep text;              -- which candidates qualify
    collisions bytea;
    started timestamptz := pg_catalog.clock_timestamp();
    n bigint;
    q text;
BEGIN
    SELECT e.extnamespace, n.nspname INTO ndd_nsp, ndd
    FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'ndd';
    IF t IS NULL OR t <= 0 OR t > 1 OR t = 'NaN' THEN
        RAISE EXCEPTION 'threshold must be greater than 0 and at most 1'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT a.atttypid INTO column_type FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = tbl AND a.attname = sketch_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', sketch_column, tbl
            USING ERRCODE = 'undefined_column';
    END IF;
    SELECT y.typname = 'simhash' INTO is_simhash FROM pg_catalog.pg_type y
    WHERE y.oid = column_type AND y.typnamespace = ndd_nsp AND y.typname IN ('minhash', 'simhash');
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % is not of type minhash or simhash', sketch_column, tbl
            USING ERRCODE = 'datatype_mismatch';
    END IF;

    IF is_simhash THEN
        IF k IS NULL OR k < 0 OR k > 6 THEN
            RAISE EXCEPTION 'max_distance must be between 0 and 6'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        keys_of := pg_catalog.format('%I.simhash_keys(t.%I, %s)', ndd, sketch_column, k);
        required := 1;
        summary := 's';
        summary_type := pg_catalog.format('%I.simhash', ndd);
        close_enough := pg_catalog.format('%I.hamming_distance(x.summary, y.summary) <= %s', ndd, k);
        score := pg_catalog.format('%1$I.simhash_cosine(sa, sb), %1$I.hamming_distance(sa, sb)', ndd);
        keep := pg_catalog.format('%I.hamming_distance(sa, sb) <= %s', ndd, k);
        IF progress THEN
            RAISE NOTICE 'ndd: fingerprints of % within % bits', tbl, k;
        END IF;
    ELSE
        -- the banding suits the table's sketches: take the first one's settings
        EXECUTE pg_catalog.format('SELECT %I::text FROM %s WHERE %I IS NOT NULL LIMIT 1',
                                  sketch_column, tbl, sketch_column) INTO probe;
        IF probe IS NULL THEN
            RETURN;
        END IF;
        -- with verification, candidates reach 3 standard deviations lower
        EXECUTE pg_catalog.format('SELECT * FROM %I.lsh_banding($1::%I.minhash, $2, $3)', ndd, ndd)
            USING probe, t, CASE WHEN verify_column IS NULL THEN 0 ELSE 3 END INTO banding;
        keys_of := pg_catalog.format('%I.minhash_band_keys(t.%I, %s, %s)',
                                     ndd, sketch_column, banding.bands, banding.rows);
        required := banding.required;
        -- K - (bands - required) positions must agree, so must their low bits
        summary := pg_catalog.format('%I.minhash_lowbits(s)', ndd);
        summary_type := 'bytea';
        close_enough := pg_catalog.format('%I.minhash_lowbits_agreement(x.summary, y.summary) >= %s', ndd,
            banding.bands * banding.rows - banding.bands + banding.required);
        score := pg_catalog.format('%I.similarity(sa, sb), NULL::int', ndd);
        keep := pg_catalog.format('%I.similarity(sa, sb) >= %s', ndd, banding.lower_threshold);
        IF progress THEN
            RAISE NOTICE 'ndd: % bands of % rows over %, at least % matching bands per candidate',
                banding.bands, banding.rows, tbl, banding.required;
        END IF;
    END IF;

    -- 1. which keys occur more than once
    EXECUTE pg_catalog.format('SELECT pg_catalog.cardinality(%s) FROM %s t WHERE t.%I IS NOT NULL LIMIT 1',
                              keys_of, tbl, sketch_column) INTO keys_per_row;
    EXECUTE pg_catalog.format('SELECT %I.ndd_colliding_keys(%s, $1) FROM %s t WHERE t.%I IS NOT NULL',
                              ndd, keys_of, tbl, sketch_column)
        USING (SELECT GREATEST(c.reltuples, 0)::bigint * keys_per_row
               FROM pg_catalog.pg_class c WHERE c.oid = tbl)
        INTO collisions;
    IF progress THEN
        RAISE NOTICE 'ndd: 1/4 keys counted'
            USING DETAIL = pg_catalog.format('%s so far', pg_catalog.clock_timestamp() - started);
    END IF;

    -- 2. the keys that may collide, with their rows
    IF pg_catalog.to_regclass('pg_temp.ndd_pair_keys') IS NOT NULL THEN
        DROP TABLE pg_temp.ndd_pair_keys;
    END IF;
    IF pg_catalog.to_regclass('pg_temp.ndd_pair_candidates') IS NOT NULL THEN
        DROP TABLE pg_temp.ndd_pair_candidates;
    END IF;
    EXECUTE pg_catalog.format('CREATE TEMP TABLE ndd_pair_keys (id bigint, key bigint, summary %s)',
                              summary_type);
    EXECUTE pg_catalog.format($q$
        INSERT INTO pg_temp.ndd_pair_keys
        SELECT t.%2$I::bigint, c.key, %6$s
        FROM %1$s t, LATERAL (SELECT t.%5$I AS s) s,
             pg_catalog.unnest(%3$I.ndd_colliding(%4$s, $1, $2)) c(key)
        WHERE t.%5$I IS NOT NULL$q$, tbl, id_column, ndd, keys_of, sketch_column, summary)
        USING collisions, required - 1;
    GET DIAGNOSTICS n = ROW_COUNT;
    ANALYZE pg_temp.ndd_pair_keys;
    IF progress THEN
        RAISE NOTICE 'ndd: 2/4 % keys may be shared', n
            USING DETAIL = pg_catalog.format('%s so far', pg_catalog.clock_timestamp() - started);
    END IF;

    -- 3. rows that share a kept key, and whose summaries pass
    CREATE TEMP TABLE ndd_pair_candidates (a bigint, b bigint);
    EXECUTE pg_catalog.format($q$
        INSERT INTO pg_temp.ndd_pair_candidates
        SELECT DISTINCT x.id, y.id
        FROM pg_temp.ndd_pair_keys x JOIN pg_temp.ndd_pair_keys y ON y.key = x.key AND y.id > x.id
        WHERE %s$q$, close_enough);
    GET DIAGNOSTICS n = ROW_COUNT;
    DROP TABLE pg_temp.ndd_pair_keys;
    ANALYZE pg_temp.ndd_pair_candidates;
    IF progress THEN
        RAISE NOTICE 'ndd: 3/4 % candidate pairs', n
            USING DETAIL = pg_catalog.format('%s so far', pg_catalog.clock_timestamp() - started);
    END IF;

    -- 4. the candidates that qualify
    q := pg_catalog.format($q$
        SELECT c.a, c.b, v.similarity, v.distance
        FROM pg_temp.ndd_pair_candidates c
        JOIN %1$s ta ON ta.%2$I::bigint = c.a
        JOIN %1$s tb ON tb.%2$I::bigint = c.b,
        -- after the pair is joined, never as a filter of a ta x tb join
        LATERAL (SELECT %4$s, %5$s FROM (SELECT ta.%3$I AS sa, tb.%3$I AS sb) s
                 OFFSET 0) v(similarity, distance, qualifies)
        WHERE v.qualifies$q$,
        tbl, id_column, sketch_column, score, keep);
    IF verify_column IS NOT NULL THEN
        -- exact Jaccard of the texts, shingled as the sketches were (the
        -- text form of a minhash names its unit and shingle size; simhash
        -- candidates use jaccard()'s defaults)
        q := pg_catalog.format($q$
            WITH p(a, b, s, d) AS MATERIALIZED (%1$s)
            SELECT p.a, p.b, v.j, p.d
            FROM p
            JOIN %3$s ta ON ta.%5$I::bigint = p.a
            JOIN %3$s tb ON tb.%5$I::bigint = p.b,
            -- once per pair, and only after the pair is joined (OFFSET 0
            -- keeps the planner from copying the call into the filter)
            LATERAL (SELECT %4$I.jaccard(ta.%2$I, tb.%2$I, $2, $3) AS j OFFSET 0) v
            WHERE v.j >= $1$q$,
            q, verify_column, tbl, ndd, id_column);
    END IF;
    RETURN QUERY EXECUTE q USING t,
        coalesce(pg_catalog.split_part(pg_catalog.split_part(probe, 'shingle_size=', 2), ',', 1)::int, 5),
        coalesce(pg_catalog.split_part(pg_catalog.split_part(probe, 'unit=', 2), ',', 1), 'word');
    GET DIAGNOSTICS n = ROW_COUNT;
    DROP TABLE pg_temp.ndd_pair_candidates;
    IF progress THEN
        RAISE NOTICE 'ndd: 4/4 % pairs', n
            USING DETAIL = pg_catalog.format('%s so far', pg_catalog.clock_timestamp() - started);
    END IF;
END
$$;

COMMENT ON FUNCTION near_duplicate_pairs(regclass, name, name, float8, name, boolean, int) IS
'every pair of rows whose minhash sketches reach the threshold, or whose simhash fingerprints are within max_distance bits (with verify_column: whose texts reach the threshold, exactly), found through shared bucket keys';

-- Connected components of the near-duplicate pairs: each row that has a
-- near-duplicate, with its component's representative as cluster_id: the
-- first row by representative_order (an ORDER BY list over the table's
-- columns, such as 'created_at' or 'length(body) DESC'), else the smallest id.
CREATE FUNCTION near_duplicate_clusters(tbl regclass, sketch_column name, id_column name,
                                        threshold float8 DEFAULT NULL,
                                        verify_column name DEFAULT NULL,
                                        progress boolean DEFAULT false,
                                        max_distance int DEFAULT NULL,
                                        representative_order text DEFAULT NULL)
RETURNS TABLE (id bigint, cluster_id bigint)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET enable_nestloop = off
AS $$
DECLARE
    ndd name := (SELECT n.nspname FROM pg_catalog.pg_extension e
                 JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
                 WHERE e.extname = 'ndd');
    changed bigint;
    rounds int := 0;
    started timestamptz := pg_catalog.clock_timestamp();
BEGIN
    IF pg_catalog.to_regclass('pg_temp.ndd_cluster_edges') IS NOT NULL THEN
        DROP TABLE pg_temp.ndd_cluster_edges;
    END IF;
    IF pg_catalog.to_regclass('pg_temp.ndd_cluster_labels') IS NOT NULL THEN
        DROP TABLE pg_temp.ndd_cluster_labels;
    END IF;
    CREATE TEMP TABLE ndd_cluster_edges (x bigint, y bigint);
    EXECUTE pg_catalog.format(
        'INSERT INTO pg_temp.ndd_cluster_edges SELECT p.id_a, p.id_b FROM %I.near_duplicate_pairs($1, $2, $3, $4, $5, $6, $7) p', ndd)
        USING tbl, sketch_column, id_column, threshold, verify_column, progress, max_distance;
    INSERT INTO pg_temp.ndd_cluster_edges SELECT e.y, e.x FROM pg_temp.ndd_cluster_edges e;
    CREATE INDEX ON pg_temp.ndd_cluster_edges (x);
    CREATE TEMP TABLE ndd_cluster_labels AS
        SELECT DISTINCT e.x AS id, e.x AS label FROM pg_temp.ndd_cluster_edges e;
    CREATE UNIQUE INDEX ON pg_temp.ndd_cluster_labels (id);
    ANALYZE pg_temp.ndd_cluster_edges, pg_temp.ndd_cluster_labels;
    -- label propagation: each round a row takes the smallest label among
    -- its neighbours, until no label changes
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
        RAISE NOTICE 'ndd: components settled after % rounds', rounds
            USING DETAIL = pg_catalog.format('%s so far', pg_catalog.clock_timestamp() - started);
    END IF;
    IF representative_order IS NULL THEN
        RETURN QUERY SELECT l.id, l.label FROM pg_temp.ndd_cluster_labels l;
    ELSE
        -- the order is the caller's SQL, run with the caller's rights; it
        -- sees the table's columns (ties go to the smaller id)
        RETURN QUERY EXECUTE pg_catalog.format($q$
            SELECT r.ndd_id, pg_catalog.first_value(r.ndd_id) OVER (
                PARTITION BY r.ndd_label ORDER BY %3$s, r.ndd_id)
            FROM (SELECT t.*, l.id AS ndd_id, l.label AS ndd_label
                  FROM %1$s t JOIN pg_temp.ndd_cluster_labels l ON l.id = t.%2$I::bigint) r$q$,
            tbl, id_column, representative_order);
    END IF;
    DROP TABLE pg_temp.ndd_cluster_edges, pg_temp.ndd_cluster_labels;
END
$$;

COMMENT ON FUNCTION near_duplicate_clusters(regclass, name, name, float8, name, boolean, int, text) IS
'connected components of near_duplicate_pairs: (id, cluster_id), cluster_id being the representative row (first by representative_order, else the smallest id)';
