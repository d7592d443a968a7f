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
