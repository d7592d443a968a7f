/* ndd.sql: near-duplicate detection, the install script of the current version (the build copies it to ndd--<version>.sql) */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION ndd" to load this file. \quit

--------------------------------------------------------------------------
-- Text and shingles: what every sketch sees, and exact resemblance
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

CREATE FUNCTION ndd_shingle_set(doc text, shingle_size int DEFAULT 5,
                                unit text DEFAULT 'word',
                                strip_html boolean DEFAULT false)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'ndd_shingle_set'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION ndd_shingle_set(text, int, text, boolean) IS
'the distinct shingle hashes jaccard() compares, sorted: a document shingled once, compared with many by ndd_shingle_set_jaccard()';

CREATE FUNCTION ndd_shingle_set_jaccard(a bigint[], b bigint[])
RETURNS float8
AS 'MODULE_PATHNAME', 'ndd_shingle_set_jaccard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ndd_shingle_set_jaccard(bigint[], bigint[]) IS
'exact Jaccard resemblance of two shingle sets from ndd_shingle_set(): jaccard() of their documents';

CREATE FUNCTION ndd_fingerprint(doc text, strip_html boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'ndd_fingerprint'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 50;

COMMENT ON FUNCTION ndd_fingerprint(text, boolean) IS
'64-bit hash of the normalised words of a document: exact duplicates up to case, punctuation, whitespace (and markup)';

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

COMMENT ON FUNCTION minhash_in(cstring) IS 'internal: minhash text input';
COMMENT ON FUNCTION minhash_out(minhash) IS 'internal: minhash text output';
COMMENT ON FUNCTION minhash_recv(internal) IS 'internal: minhash binary input';
COMMENT ON FUNCTION minhash_send(minhash) IS 'internal: minhash binary output';

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

-- weighted minhash: sketches of weighted sets (src/sketch/weighted_minhash.c)
CREATE FUNCTION weighted_minhash_sketch(features text[], weights float8[],
                                        num_perm int DEFAULT 128, seed int DEFAULT 0)
RETURNS minhash
AS 'MODULE_PATHNAME', 'weighted_minhash_sketch_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION weighted_minhash_sketch(text[], float8[], int, int) IS
'weighted minhash sketch of strings with weights (a repeated string weighs the sum): similarity() estimates weighted Jaccard';

CREATE FUNCTION weighted_minhash_sketch(features bigint[], weights float8[],
                                        num_perm int DEFAULT 128, seed int DEFAULT 0)
RETURNS minhash
AS 'MODULE_PATHNAME', 'weighted_minhash_sketch_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION weighted_minhash_sketch(bigint[], float8[], int, int) IS
'weighted minhash sketch of integers with weights (a repeated integer weighs the sum): similarity() estimates weighted Jaccard';

CREATE FUNCTION weighted_minhash_sketch(doc text, num_perm int DEFAULT 128,
                                        shingle_size int DEFAULT 1,
                                        unit text DEFAULT 'word',
                                        strip_html boolean DEFAULT false,
                                        seed int DEFAULT 0)
RETURNS minhash
AS 'MODULE_PATHNAME', 'weighted_minhash_sketch_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION weighted_minhash_sketch(text, int, int, text, boolean, int) IS
'weighted minhash sketch of a document, each shingle (a word by default) weighing its number of occurrences';

CREATE FUNCTION weighted_jaccard(features_a text[], weights_a float8[],
                                 features_b text[], weights_b float8[])
RETURNS float8
AS 'MODULE_PATHNAME', 'weighted_jaccard_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;

COMMENT ON FUNCTION weighted_jaccard(text[], float8[], text[], float8[]) IS
'exact weighted Jaccard similarity sum(min) / sum(max) of two weighted sets of strings';

CREATE FUNCTION weighted_jaccard(features_a bigint[], weights_a float8[],
                                 features_b bigint[], weights_b float8[])
RETURNS float8
AS 'MODULE_PATHNAME', 'weighted_jaccard_array'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;

COMMENT ON FUNCTION weighted_jaccard(bigint[], float8[], bigint[], float8[]) IS
'exact weighted Jaccard similarity sum(min) / sum(max) of two weighted sets of integers';

CREATE FUNCTION weighted_jaccard(a text, b text, shingle_size int DEFAULT 1,
                                 unit text DEFAULT 'word',
                                 strip_html boolean DEFAULT false)
RETURNS float8
AS 'MODULE_PATHNAME', 'weighted_jaccard_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION weighted_jaccard(text, text, int, text, boolean) IS
'exact weighted Jaccard similarity of two documents, each shingle weighing its number of occurrences';

CREATE FUNCTION minhash_settings(sketch minhash, OUT num_perm int, OUT unit text,
                                 OUT shingle_size int, OUT seed int)
RETURNS record
AS 'MODULE_PATHNAME', 'minhash_settings_record'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_settings(minhash) IS
'how a minhash sketch was made: num_perm, unit (word, char, text or bigint), shingle_size, seed';

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

-- minhash_union: the sketch of a union

CREATE FUNCTION minhash_union_transfn(minhash, minhash)
RETURNS minhash
AS 'MODULE_PATHNAME', 'minhash_union_transfn'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_union_transfn(minhash, minhash) IS
'internal: minhash_union transition and combine: sketch of the union of the sets of two sketches';

CREATE AGGREGATE minhash_union(minhash) (
    SFUNC = minhash_union_transfn,
    STYPE = minhash,
    COMBINEFUNC = minhash_union_transfn,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE minhash_union(minhash) IS
'sketch of the union of the sets of all input sketches';

-- LSH banding: the bucket-table helper and the S-curve

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

-- A threshold passed as a value: % (minhash, minhash_query) and similar()

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
'internal: planner support for similar(), which turns it into an index condition';

CREATE FUNCTION similar(a minhash, b minhash, threshold float8)
RETURNS bool
AS 'MODULE_PATHNAME', 'minhash_similar'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5
SUPPORT minhash_similar_support;

COMMENT ON FUNCTION similar(minhash, minhash, float8) IS
'true when similarity(a, b) >= threshold; uses minhash_ops indexes';

--------------------------------------------------------------------------
-- The minhash index: GIN operator class minhash_ops (LSH bands, exact by pigeonhole)
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

COMMENT ON FUNCTION gin_extract_value_minhash(minhash, internal) IS 'internal, GIN support: band keys of an indexed sketch';
COMMENT ON FUNCTION gin_extract_query_minhash(minhash, internal, int2, internal, internal, internal, internal) IS 'internal, GIN support: band keys of a query';
COMMENT ON FUNCTION gin_minhash_consistent(internal, int2, minhash, int4, internal, internal, internal, internal) IS 'internal, GIN support: enough matching bands?';
COMMENT ON FUNCTION gin_minhash_triconsistent(internal, int2, minhash, int4, internal, internal, internal) IS 'internal, GIN support: enough matching bands, ternary';
COMMENT ON FUNCTION gin_minhash_options(internal) IS 'internal, GIN support: options of minhash_ops';

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
-- Containment: how much of a passage a document holds (src/text/containment.c)
--------------------------------------------------------------------------
CREATE FUNCTION containment(passage text, doc text, shingle_size int DEFAULT 5,
                            unit text DEFAULT 'word',
                            strip_html boolean DEFAULT false)
RETURNS float8
AS 'MODULE_PATHNAME', 'containment_text'
-- it shingles a whole document: priced so that the planner prefers the
-- index to calling it on every row of a table
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000;

COMMENT ON FUNCTION containment(text, text, int, text, boolean) IS
'exact containment of a passage in a document: the share of the passage''s shingles the document holds';

CREATE FUNCTION containment(query minhash, doc minhash)
RETURNS float8
AS 'MODULE_PATHNAME', 'minhash_containment'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION containment(minhash, minhash) IS
'estimated containment of the query''s set in the document''s, from their sketches: coarse when the document is much larger (see the manual)';

CREATE TYPE containment_query AS (passage text, threshold float8, shingle_size int,
                                  unit text, strip_html boolean);

COMMENT ON TYPE containment_query IS
'a passage, a containment threshold and a shingling: the right side of text @> containment_query';

CREATE FUNCTION containment_query(passage text, threshold float8 DEFAULT 0.8,
                                  shingle_size int DEFAULT 5,
                                  unit text DEFAULT 'word',
                                  strip_html boolean DEFAULT false)
RETURNS containment_query
AS 'MODULE_PATHNAME', 'containment_query_make'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION containment_query(text, float8, int, text, boolean) IS
'a containment query: doc @> containment_query(passage, t) holds when doc contains at least t of the passage''s shingles';

CREATE FUNCTION containment_contains_op(text, containment_query)
RETURNS boolean
AS 'MODULE_PATHNAME', 'containment_contains_op'
-- as containment(): a sequential scan shingles every document
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000;

COMMENT ON FUNCTION containment_contains_op(text, containment_query) IS
'internal: implementation of text @> containment_query';

CREATE OPERATOR @> (
    LEFTARG = text,
    RIGHTARG = containment_query,
    PROCEDURE = containment_contains_op,
    RESTRICT = matchingsel,
    JOIN = matchingjoinsel
);

COMMENT ON OPERATOR @>(text, containment_query) IS
'contains the passage: containment at least the threshold of the query';

CREATE FUNCTION gin_extract_value_containment(text, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'gin_extract_value_containment'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION gin_extract_value_containment(text, internal) IS
'internal: GIN support of containment_ops (a document''s shingle keys and the key of its size)';

-- (the support functions take the query as the indexed type, text, as GIN's
-- validation expects of every operator class; they are handed the
-- containment_query that @> is given)
CREATE FUNCTION gin_extract_query_containment(text, internal, int2, internal, internal, internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'gin_extract_query_containment'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION gin_extract_query_containment(text, internal, int2, internal, internal, internal, internal) IS
'internal: GIN support of containment_ops (a passage''s keys, or the size keys of documents long enough, and the count a row must match)';

CREATE FUNCTION gin_containment_consistent(internal, int2, text, int4, internal, internal, internal, internal)
RETURNS boolean
AS 'MODULE_PATHNAME', 'gin_containment_consistent'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION gin_containment_consistent(internal, int2, text, int4, internal, internal, internal, internal) IS
'internal: GIN support of containment_ops';

CREATE FUNCTION gin_containment_triconsistent(internal, int2, text, int4, internal, internal, internal)
RETURNS "char"
AS 'MODULE_PATHNAME', 'gin_containment_triconsistent'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION gin_containment_triconsistent(internal, int2, text, int4, internal, internal, internal) IS
'internal: GIN support of containment_ops';

CREATE FUNCTION gin_containment_options(internal)
RETURNS void
AS 'MODULE_PATHNAME', 'gin_containment_options'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION gin_containment_options(internal) IS
'internal: options of containment_ops (shingle_size, unit, strip_html)';

-- btint4cmp's order, with a look at query cancel: GIN's build calls it
-- millions of times for one long document and looks at none itself
CREATE FUNCTION gin_compare_containment(int4, int4)
RETURNS int4
AS 'MODULE_PATHNAME', 'gin_compare_containment'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION gin_compare_containment(int4, int4) FROM PUBLIC;

COMMENT ON FUNCTION gin_compare_containment(int4, int4) IS
'internal: GIN support of containment_ops (the order of its keys, honouring query cancel)';

CREATE OPERATOR CLASS containment_ops
FOR TYPE text USING gin AS
    OPERATOR 1 @> (text, containment_query),
    FUNCTION 1 gin_compare_containment(int4, int4),
    FUNCTION 2 gin_extract_value_containment(text, internal),
    FUNCTION 3 gin_extract_query_containment(text, internal, int2, internal, internal, internal, internal),
    FUNCTION 4 gin_containment_consistent(internal, int2, text, int4, internal, internal, internal, internal),
    FUNCTION 6 gin_containment_triconsistent(internal, int2, text, int4, internal, internal, internal),
    FUNCTION 7 gin_containment_options(internal),
    STORAGE int4;

COMMENT ON OPERATOR CLASS containment_ops USING gin IS
'shingles of documents: finds the rows that contain a share of a passage, exactly (text @> containment_query)';

CREATE FUNCTION contamination_pairs(items regclass, item_column name, item_id_column name,
                                    docs regclass, doc_column name, doc_id_column name,
                                    threshold float8 DEFAULT 0.8,
                                    shingle_size int DEFAULT 5,
                                    unit text DEFAULT 'word',
                                    strip_html boolean DEFAULT false,
                                    progress boolean DEFAULT false)
RETURNS TABLE (item_id bigint, doc_id bigint, containment float8)
AS 'MODULE_PATHNAME', 'contamination_pairs'
-- volatile for its progress notices, though it only reads
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED
-- only ndd's and PostgreSQL's objects, whatever the caller's search_path
SET search_path = pg_catalog, pg_temp
-- each item through the documents' index, even where the planner would
-- rather scan a small table: the work must not grow with items x documents
SET enable_seqscan = off;

COMMENT ON FUNCTION contamination_pairs(regclass, name, name, regclass, name, name, float8, int, text, boolean, boolean) IS
'every (item, document) pair whose document contains at least threshold of the item''s shingles, through a containment_ops index';

--------------------------------------------------------------------------
-- The simhash type
--------------------------------------------------------------------------

CREATE TYPE simhash;

CREATE FUNCTION simhash_in(cstring) RETURNS simhash
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION simhash_out(simhash) RETURNS cstring
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION simhash_recv(internal) RETURNS simhash
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION simhash_send(simhash) RETURNS bytea
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_in(cstring) IS 'internal: simhash text input';
COMMENT ON FUNCTION simhash_out(simhash) IS 'internal: simhash text output';
COMMENT ON FUNCTION simhash_recv(internal) IS 'internal: simhash binary input';
COMMENT ON FUNCTION simhash_send(simhash) IS 'internal: simhash binary output';

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
'internal: restriction selectivity of simhash % simhash';

CREATE FUNCTION simhash_matchjoinsel(internal, oid, internal, int2, internal)
RETURNS float8
AS 'MODULE_PATHNAME', 'simhash_matchjoinsel'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_matchjoinsel(internal, oid, internal, int2, internal) IS
'internal: join selectivity of simhash % simhash';

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

-- A distance passed as a value: % (simhash, simhash_query) and similar(),
-- IMMUTABLE, so postgres_fdw sends it to a shard whose index serves it.
-- simhash_ops (GIN and GiST) take the operator as a member of their family
-- (ALTER OPERATOR FAMILY, below each), as an update from 0.1 adds it.
CREATE TYPE simhash_query AS (fingerprint simhash, max_distance int);

COMMENT ON TYPE simhash_query IS
'a fingerprint and a Hamming distance: the right side of simhash % simhash_query';

CREATE FUNCTION simhash_similar_query_op(simhash, simhash_query)
RETURNS bool
AS 'MODULE_PATHNAME', 'simhash_similar_query_op'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5;

COMMENT ON FUNCTION simhash_similar_query_op(simhash, simhash_query) IS
'true when the Hamming distance is at most the distance carried by the query';

CREATE OPERATOR % (
    LEFTARG = simhash,
    RIGHTARG = simhash_query,
    PROCEDURE = simhash_similar_query_op,
    RESTRICT = matchingsel,
    JOIN = matchingjoinsel
);

COMMENT ON OPERATOR %(simhash, simhash_query) IS
'is near: Hamming distance at most the distance of the query';

CREATE FUNCTION simhash_similar_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'simhash_similar_support'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION simhash_similar_support(internal) IS
'internal: planner support for similar(simhash, simhash, int), which turns it into an index condition';

CREATE FUNCTION similar(a simhash, b simhash, max_distance int)
RETURNS bool
AS 'MODULE_PATHNAME', 'simhash_similar'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5
SUPPORT simhash_similar_support;

COMMENT ON FUNCTION similar(simhash, simhash, int) IS
'true when hamming_distance(a, b) <= max_distance; uses simhash_ops indexes';

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

--------------------------------------------------------------------------
-- The simhash indexes
--------------------------------------------------------------------------

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
'internal, GIN support: the block keys of a fingerprint';
COMMENT ON FUNCTION gin_extract_query_simhash(simhash, internal, int2, internal, internal, internal, internal) IS
'internal, GIN support: the block keys of a query and how many must match';
COMMENT ON FUNCTION gin_simhash_consistent(internal, int2, simhash, int4, internal, internal, internal, internal) IS
'internal, GIN support: does a row share enough blocks with the query';
COMMENT ON FUNCTION gin_simhash_triconsistent(internal, int2, simhash, int4, internal, internal, internal) IS
'internal, GIN support: ternary form of gin_simhash_consistent';
COMMENT ON FUNCTION gin_simhash_options(internal) IS
'internal, GIN support: the max_distance and keys options';

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

ALTER OPERATOR FAMILY simhash_ops USING gin ADD
    OPERATOR 3 % (simhash, simhash_query);

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

COMMENT ON FUNCTION gsimhash_in(cstring) IS 'internal: gsimhash input, not accepted';
COMMENT ON FUNCTION gsimhash_out(gsimhash) IS 'internal: gsimhash output, bits/mask in hex';
COMMENT ON FUNCTION gsimhash_consistent(internal, simhash, int2, oid, internal) IS
'internal, GiST support: can a subtree hold a fingerprint within the threshold';
COMMENT ON FUNCTION gsimhash_distance(internal, simhash, int2, oid, internal) IS
'internal, GiST support: lower bound of the Hamming distance to a subtree';
COMMENT ON FUNCTION gsimhash_compress(internal) IS 'internal, GiST support: a fingerprint as a key';
COMMENT ON FUNCTION gsimhash_fetch(internal) IS 'internal, GiST support: the fingerprint of a leaf key';
COMMENT ON FUNCTION gsimhash_union(internal, internal) IS 'internal, GiST support: bits shared by all keys';
COMMENT ON FUNCTION gsimhash_same(gsimhash, gsimhash, internal) IS 'internal, GiST support: are two keys equal';
COMMENT ON FUNCTION gsimhash_penalty(internal, internal, internal) IS 'internal, GiST support: shared bits lost by an insertion';
COMMENT ON FUNCTION gsimhash_picksplit(internal, internal) IS 'internal, GiST support: split a page on its most even bit';
COMMENT ON FUNCTION gsimhash_sortsupport(internal) IS 'internal, GiST support: sorted build by value';

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

ALTER OPERATOR FAMILY simhash_ops USING gist ADD
    OPERATOR 3 % (simhash, simhash_query);

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
-- I-Match, SpotSigs and ndd_explain
--------------------------------------------------------------------------

-- I-Match (src/sketch/imatch.c): a lexicon of document frequencies aggregated over
-- a collection, within work_mem; a signature per document, the hash of its
-- distinct words whose idf ln(N / df) lies in a band, and signatures from
-- randomized sub-lexicons that still match after a few words changed.
CREATE FUNCTION imatch_lexicon_transfn(internal, text)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION imatch_lexicon_combinefn(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION imatch_lexicon_serialfn(internal)
RETURNS bytea
AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION imatch_lexicon_deserialfn(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION imatch_lexicon_finalfn(internal)
RETURNS bytea
AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

COMMENT ON FUNCTION imatch_lexicon_transfn(internal, text) IS 'internal: imatch_lexicon transition';
COMMENT ON FUNCTION imatch_lexicon_combinefn(internal, internal) IS 'internal: imatch_lexicon combine (parallel)';
COMMENT ON FUNCTION imatch_lexicon_serialfn(internal) IS 'internal: imatch_lexicon state to bytea (parallel)';
COMMENT ON FUNCTION imatch_lexicon_deserialfn(bytea, internal) IS 'internal: imatch_lexicon state from bytea (parallel)';
COMMENT ON FUNCTION imatch_lexicon_finalfn(internal) IS 'internal: imatch_lexicon result';

CREATE AGGREGATE imatch_lexicon(doc text) (
    SFUNC = imatch_lexicon_transfn,
    STYPE = internal,
    FINALFUNC = imatch_lexicon_finalfn,
    COMBINEFUNC = imatch_lexicon_combinefn,
    SERIALFUNC = imatch_lexicon_serialfn,
    DESERIALFUNC = imatch_lexicon_deserialfn,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE imatch_lexicon(text) IS
'I-Match lexicon of a collection: the number of documents and each word''s document frequency, as a bytea for imatch_signature(s); NULL documents are skipped';

CREATE FUNCTION imatch_signature(doc text, lexicon bytea,
                                 min_idf float8 DEFAULT 1,
                                 max_idf float8 DEFAULT 'Infinity')
RETURNS bigint
AS 'MODULE_PATHNAME', 'imatch_signature'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION imatch_signature(text, bytea, float8, float8) IS
'I-Match signature: hash of the distinct words of a document whose idf ln(N/df) lies in [min_idf, max_idf]; NULL when none does';

CREATE FUNCTION imatch_signatures(doc text, lexicon bytea,
                                  copies int DEFAULT 10,
                                  keep float8 DEFAULT 0.67,
                                  min_idf float8 DEFAULT 1,
                                  max_idf float8 DEFAULT 'Infinity')
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'imatch_signatures'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION imatch_signatures(text, bytea, int, float8, float8, float8) IS
'I-Match signature followed by those of randomized sub-lexicons (each keeps a word with probability keep): near-duplicates share one; NULL when no word lies in the idf band';

CREATE FUNCTION imatch_idf(lexicon bytea, word text)
RETURNS float8
AS 'MODULE_PATHNAME', 'imatch_idf'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION imatch_idf(bytea, text) IS
'idf ln(N/df) of a word in an I-Match lexicon, as the signatures see it (a word the lexicon lacks counts as seen once)';

CREATE FUNCTION imatch_lexicon_info(lexicon bytea, OUT documents bigint, OUT words bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'imatch_lexicon_info'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION imatch_lexicon_info(bytea) IS
'size of an I-Match lexicon: its documents and distinct words';

-- SpotSigs (src/sketch/spotsigs.c): an antecedent stopword and the next `chain`
-- words that are not stopwords; antecedents are stopwords too
CREATE FUNCTION spotsigs(doc text,
                         antecedents text[] DEFAULT ARRAY['a', 'an', 'the', 'is', 'are', 'was', 'were', 'be', 'been', 'there', 'that', 'this'],
                         chain int DEFAULT 2,
                         stopwords text[] DEFAULT ARRAY['and', 'or', 'but', 'not', 'no', 'of', 'to', 'in', 'on', 'at', 'by', 'for', 'with', 'from', 'into', 'about', 'as', 'than', 'then', 'so', 'if', 'it', 'its', 'i', 'you', 'he', 'she', 'we', 'they', 'me', 'him', 'her', 'us', 'them', 'my', 'your', 'his', 'our', 'their', 'has', 'have', 'had', 'do', 'does', 'did', 'can', 'could', 'will', 'would', 'shall', 'should', 'may', 'might', 'must', 'these', 'those', 'which', 'who', 'what', 'when', 'where', 'how'],
                         distance int DEFAULT 1,
                         strip_html boolean DEFAULT false)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'spotsigs'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

COMMENT ON FUNCTION spotsigs(text, text[], int, text[], int, boolean) IS
'SpotSigs: sorted distinct hashes of each antecedent followed by the next chain words that are not stopwords (every distance-th); their Jaccard is the SpotSigs similarity';

CREATE FUNCTION spotsigs_similarity(a bigint[], b bigint[], threshold float8 DEFAULT 0)
RETURNS float8
AS 'MODULE_PATHNAME', 'spotsigs_similarity'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION spotsigs_similarity(bigint[], bigint[], float8) IS
'Jaccard of two spot signature sets, or NULL without comparing them when the length-ratio bound min/max is below threshold';

-- ndd_explain (src/features/explain.c): why two documents were (not) matched, from the
-- functions above
CREATE FUNCTION ndd_explain(a text, b text, shingle_size int DEFAULT 5,
                            unit text DEFAULT 'word', sample int DEFAULT 5,
                            strip_html boolean DEFAULT false,
                            num_perm int DEFAULT 128, seed int DEFAULT 0,
                            OUT jaccard float8, OUT minhash_similarity float8,
                            OUT simhash_distance int,
                            OUT shingles_a int, OUT shingles_b int,
                            OUT shared int, OUT total int,
                            OUT shared_sample text[], OUT only_a_sample text[],
                            OUT only_b_sample text[])
RETURNS record
AS 'MODULE_PATHNAME', 'ndd_explain'
LANGUAGE C STABLE STRICT PARALLEL SAFE
-- only ndd's and PostgreSQL's objects, whatever the caller's search_path
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION ndd_explain(text, text, int, text, int, boolean, int, int) IS
'why two documents are (not) near-duplicates: exact Jaccard, minhash estimate, simhash distance, shingle counts and samples of shared and differing shingles';
-- supershingles and b-bit minhash
--------------------------------------------------------------------------

-- Broder's super-shingles (src/sketch/supershingle.c): group g of a sketch of K
-- positions is positions g*r .. g*r + r - 1, r = floor(K / groups), hashed
-- into one bigint; near-duplicates share at least 2.  GIN's array_ops finds
-- rows sharing one (&&).

CREATE FUNCTION minhash_supershingles(sketch minhash, groups int DEFAULT 6)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'minhash_supershingles'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_supershingles(minhash, int) IS
'Broder''s super-shingles: one bigint per group of floor(num_perm / groups) consecutive positions, group 0 first (none for an empty document)';

CREATE FUNCTION supershingles_shared(a bigint[], b bigint[])
RETURNS int
AS 'MODULE_PATHNAME', 'supershingles_shared'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION supershingles_shared(bigint[], bigint[]) IS
'number of distinct super-shingles two arrays share; near-duplicates share at least 2';

CREATE FUNCTION supershingle_probability(similarity float8, groups int, per_group int,
                                         at_least int DEFAULT 2)
RETURNS float8
AS 'MODULE_PATHNAME', 'supershingle_probability'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION supershingle_probability(float8, int, int, int) IS
'probability that a pair of this similarity shares at least at_least of groups super-shingles: sum over j >= at_least of C(groups, j) p^j (1 - p)^(groups - j), p = s^per_group';

-- b-bit minwise hashing (Li and Koenig; src/sketch/minhash_bbit.c): the lowest b
-- bits of each position, for storage and verification; no index.

CREATE TYPE minhash_bbit;

CREATE FUNCTION minhash_bbit_in(cstring) RETURNS minhash_bbit
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION minhash_bbit_out(minhash_bbit) RETURNS cstring
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION minhash_bbit_recv(internal) RETURNS minhash_bbit
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION minhash_bbit_send(minhash_bbit) RETURNS bytea
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_bbit_in(cstring) IS 'internal: minhash_bbit text input';
COMMENT ON FUNCTION minhash_bbit_out(minhash_bbit) IS 'internal: minhash_bbit text output';
COMMENT ON FUNCTION minhash_bbit_recv(internal) IS 'internal: minhash_bbit binary input';
COMMENT ON FUNCTION minhash_bbit_send(minhash_bbit) IS 'internal: minhash_bbit binary output';

-- Random bits again: compression cannot shrink them.
CREATE TYPE minhash_bbit (
    INPUT = minhash_bbit_in,
    OUTPUT = minhash_bbit_out,
    RECEIVE = minhash_bbit_recv,
    SEND = minhash_bbit_send,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = int4,
    STORAGE = external
);

COMMENT ON TYPE minhash_bbit IS
'b-bit minwise hashing sketch (Li and Koenig): the lowest b bits of each minhash position, 64 bytes of payload at b = 4 and K = 128';

CREATE FUNCTION minhash_bbit(sketch minhash, b int DEFAULT 4)
RETURNS minhash_bbit
AS 'MODULE_PATHNAME', 'minhash_bbit'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_bbit(minhash, int) IS
'b-bit minhash of a sketch: the lowest b bits (1, 2, 4 or 8) of each position';

CREATE FUNCTION similarity(minhash_bbit, minhash_bbit)
RETURNS float8
AS 'MODULE_PATHNAME', 'minhash_bbit_similarity'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5;

COMMENT ON FUNCTION similarity(minhash_bbit, minhash_bbit) IS
'estimated Jaccard resemblance of two b-bit sketches, corrected for chance collisions: (P - 2^-b) / (1 - 2^-b) clipped to [0, 1]';
-- simhash batch
--------------------------------------------------------------------------

-- Many queries at once (src/features/simhash_batch.c): the query fingerprints in
-- permuted tables within work_mem, the targets streamed past them.  Both
-- relations are read as the caller; the generated SQL names them and their
-- columns quoted and casts with pg_catalog's types.
CREATE FUNCTION simhash_batch(queries regclass, targets regclass,
                              max_distance int DEFAULT NULL,
                              fingerprint_column name DEFAULT 'fp',
                              id_column name DEFAULT 'id')
RETURNS TABLE (query_id bigint, target_id bigint, distance int)
AS 'MODULE_PATHNAME', 'simhash_batch'
LANGUAGE C VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION simhash_batch(regclass, regclass, int, name, name) IS
'every pair of a query and a target fingerprint within max_distance bits (default ndd.hamming_threshold), by permuted tables of the queries in work_mem';

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

-- The first pass of all-pairs discovery (src/keys/key_filter.c): a bitmap, within
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

COMMENT ON FUNCTION ndd_colliding_keys_transfn(internal, bigint[], bigint) IS 'internal: ndd_colliding_keys transition';
COMMENT ON FUNCTION ndd_colliding_keys_combinefn(internal, internal) IS 'internal: ndd_colliding_keys combine (parallel)';
COMMENT ON FUNCTION ndd_colliding_keys_serialfn(internal) IS 'internal: ndd_colliding_keys state to bytea (parallel)';
COMMENT ON FUNCTION ndd_colliding_keys_deserialfn(bytea, internal) IS 'internal: ndd_colliding_keys state from bytea (parallel)';
COMMENT ON FUNCTION ndd_colliding_keys_finalfn(internal) IS 'internal: ndd_colliding_keys result';

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

-- Discovery across shards (postgres_fdw partitions): every shard returns its
-- whole filter state, both bitmaps and the counters, of one size the
-- coordinator chose, and the coordinator merges them into the filter
-- (src/keys/key_filter.c).
CREATE FUNCTION ndd_key_filter_bits(expected_keys bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'ndd_key_filter_bits'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION ndd_key_filter_bits(bigint) IS
'bits per bitmap of a key filter for that many keys within work_mem: the filter_bits of ndd_colliding_keys_partial';

CREATE FUNCTION ndd_colliding_keys_partial_transfn(internal, bigint[], bigint)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION ndd_colliding_keys_merge_transfn(internal, bytea)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

COMMENT ON FUNCTION ndd_colliding_keys_partial_transfn(internal, bigint[], bigint) IS 'internal: ndd_colliding_keys_partial transition';
COMMENT ON FUNCTION ndd_colliding_keys_merge_transfn(internal, bytea) IS 'internal: ndd_colliding_keys_merge transition';

CREATE AGGREGATE ndd_colliding_keys_partial(keys bigint[], filter_bits bigint) (
    SFUNC = ndd_colliding_keys_partial_transfn,
    STYPE = internal,
    FINALFUNC = ndd_colliding_keys_serialfn,
    COMBINEFUNC = ndd_colliding_keys_combinefn,
    SERIALFUNC = ndd_colliding_keys_serialfn,
    DESERIALFUNC = ndd_colliding_keys_deserialfn,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE ndd_colliding_keys_partial(bigint[], bigint) IS
'the whole state of a key filter of filter_bits bits over these keys, for ndd_colliding_keys_merge (one per shard)';

CREATE AGGREGATE ndd_colliding_keys_merge(partial bytea) (
    SFUNC = ndd_colliding_keys_merge_transfn,
    STYPE = internal,
    FINALFUNC = ndd_colliding_keys_finalfn,
    COMBINEFUNC = ndd_colliding_keys_combinefn,
    SERIALFUNC = ndd_colliding_keys_serialfn,
    DESERIALFUNC = ndd_colliding_keys_deserialfn,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE ndd_colliding_keys_merge(bytea) IS
'the key filter of the union of the key sets that ndd_colliding_keys_partial states describe, as ndd_colliding_keys would make it; for ndd_colliding';

-- Every pair of rows at or above the threshold, without comparing all pairs.
-- Rows meet through bucket keys that every qualifying pair shares (minhash:
-- the bands of a banding exact at the threshold; simhash: block keys, by
-- pigeonhole), so none is missed:
--   1. ndd_colliding_keys marks, within work_mem, the keys seen twice, and
--      counts them roughly;
--   2. the keys that may collide are kept, with their rows' ids (a small
--      part of all keys), except each row's most frequent keys: a pair that
--      must share `required` keys shares one of the others (prefix
--      filtering, see src/keys/key_filter.c), and frequent keys make buckets
--      whose pairs grow as their square;
--   3. rows sharing a kept key become candidates when a 32-byte summary
--      of their sketches (minhash_lowbits) does not rule them out;
--   4. candidates whose sketches reach the threshold are returned.
-- Steps 2-4 are plain SQL over temporary tables, which PostgreSQL keeps
-- within work_mem (spilling to disk) and can cancel (src/features/pairs.c runs them).  With verify_column,
-- minhash candidates are taken 3 standard deviations of the estimate below
-- the threshold, and pairs are kept when the exact jaccard() of the stored
-- texts reaches it; similarity is then the exact value.
CREATE FUNCTION near_duplicate_pairs(tbl regclass, sketch_column name, id_column name,
                                     threshold float8 DEFAULT NULL,
                                     verify_column name DEFAULT NULL,
                                     progress boolean DEFAULT false,
                                     max_distance int DEFAULT NULL)
RETURNS TABLE (id_a bigint, id_b bigint, similarity float8, distance int)
AS 'MODULE_PATHNAME', 'near_duplicate_pairs'
LANGUAGE C VOLATILE PARALLEL UNSAFE
-- only ndd's and PostgreSQL's objects, whatever the caller's search_path
SET search_path = pg_catalog, pg_temp
-- joins must hash, not loop: without statistics (a table just loaded) the
-- planner may otherwise nest loops over every pair of keys
SET enable_nestloop = off
-- which prices every stage above jit_above_cost: each would be compiled
-- (0.1 to 0.2 s a stage), for statements whose time goes to ndd's functions
SET jit = off;

COMMENT ON FUNCTION near_duplicate_pairs(regclass, name, name, float8, name, boolean, int) IS
'every pair of rows whose minhash sketches reach the threshold, or whose simhash fingerprints are within max_distance bits (with verify_column: whose texts reach the threshold, exactly), found through shared bucket keys';

-- Connected components of the near-duplicate pairs: each row that has a
-- near-duplicate, with its component's representative as cluster_id: the
-- first row by representative_order (an ORDER BY list over the table's
-- columns, such as 'created_at' or 'length(body) DESC'), else the smallest id.
-- near_duplicate_clusters: the connected components of the pairs, by
-- union-find in one pass over them
CREATE FUNCTION ndd_components_transfn(internal, bigint, bigint)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION ndd_components_finalfn(internal)
RETURNS bigint[]
AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION ndd_components_combinefn(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION ndd_components_serialfn(internal)
RETURNS bytea
AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION ndd_components_deserialfn(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ndd_components_transfn(internal, bigint, bigint) IS 'internal: ndd_components transition';
COMMENT ON FUNCTION ndd_components_finalfn(internal) IS 'internal: ndd_components result';
COMMENT ON FUNCTION ndd_components_combinefn(internal, internal) IS 'internal: ndd_components combine (parallel)';
COMMENT ON FUNCTION ndd_components_serialfn(internal) IS 'internal: ndd_components state to bytea (parallel)';
COMMENT ON FUNCTION ndd_components_deserialfn(bytea, internal) IS 'internal: ndd_components state from bytea (parallel)';

CREATE AGGREGATE ndd_components(id_a bigint, id_b bigint) (
    SFUNC = ndd_components_transfn,
    STYPE = internal,
    FINALFUNC = ndd_components_finalfn,
    COMBINEFUNC = ndd_components_combinefn,
    SERIALFUNC = ndd_components_serialfn,
    DESERIALFUNC = ndd_components_deserialfn,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE ndd_components(bigint, bigint) IS
'the connected components of the pairs (id_a, id_b): a bigint[n][2] of (id, smallest id of its component), for every id of a pair';

CREATE FUNCTION near_duplicate_clusters(tbl regclass, sketch_column name, id_column name,
                                        threshold float8 DEFAULT NULL,
                                        verify_column name DEFAULT NULL,
                                        progress boolean DEFAULT false,
                                        max_distance int DEFAULT NULL,
                                        representative_order text DEFAULT NULL)
RETURNS TABLE (id bigint, cluster_id bigint)
AS 'MODULE_PATHNAME', 'near_duplicate_clusters'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET enable_nestloop = off
SET jit = off;

COMMENT ON FUNCTION near_duplicate_clusters(regclass, name, name, float8, name, boolean, int, text) IS
'connected components of near_duplicate_pairs: (id, cluster_id), cluster_id being the representative row (first by representative_order, else the smallest id)';

--------------------------------------------------------------------------
-- top-k
--------------------------------------------------------------------------

-- The k rows most similar to a query sketch, with no threshold to guess:
-- the rows and similarities of
--   SELECT id, similarity(sketch, query) FROM tbl WHERE sketch IS NOT NULL
--   ORDER BY similarity DESC, id LIMIT k
-- served by a minhash_ops index:
--   0. with an index of one-row bands on the table (or on each of its
--      partitions), by counting each row's keys in the query's posting
--      lists (minhash_index_top_k);
--   1. else similar(sketch, query, t) at falling thresholds t (1/2, 1/4, ...),
--      none below the lowest threshold every minhash_ops index on
--      the column serves exactly (minhash_index_exact_threshold), so each
--      pass returns every row at least t similar, and the first pass that
--      returns k rows holds the answer, ties included;
--   2. when even the lowest pass returns fewer and it was at 1/K (an index
--      of one-row bands, or an empty query), every other row has similarity
--      0: the rest are the smallest ids among them, through a btree on the
--      id if there is one;
--   3. otherwise one sequential scan, as without an index.
CREATE FUNCTION minhash_index_exact_threshold(tbl regclass, sketch_column name)
RETURNS float8
AS 'MODULE_PATHNAME', 'minhash_index_exact_threshold'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_index_exact_threshold(regclass, name) IS
'the lowest threshold from which similar() on the column is exact through every minhash_ops index on it, of the table and its partitions (NULL: no such index)';

CREATE FUNCTION minhash_index_top_k(tbl regclass, sketch_column name, id_column name,
                                    query minhash, k int,
                                    OUT ids bigint[], OUT similarities float8[],
                                    OUT postings bigint, OUT index_name text,
                                    OUT lists_unread int)
RETURNS record
AS 'MODULE_PATHNAME', 'minhash_index_top_k'
-- parallel restricted, as tbl may be a temporary table
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION minhash_index_top_k(regclass, name, name, minhash, int) IS
'internal to near_duplicate_top_k: the rows above similarity 0 among the k most similar, by counting keys in the posting lists of a minhash_ops index of one-row bands; the postings read and the lists left unread (NULLs: it cannot answer)';

CREATE FUNCTION near_duplicate_top_k(tbl regclass, sketch_column name, id_column name,
                                     query minhash, k int DEFAULT 10,
                                     progress boolean DEFAULT false)
RETURNS TABLE (id bigint, similarity float8)
AS 'MODULE_PATHNAME', 'near_duplicate_top_k'
-- volatile for its progress EXPLAINs, though it only reads; parallel
-- restricted, as tbl may be a temporary table
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 10
-- only ndd's and PostgreSQL's objects, whatever the caller's search_path
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION near_duplicate_top_k(regclass, name, name, minhash, int, boolean) IS
'the k rows whose minhash sketches are most similar to the query (ties by smaller id), exactly as a sequential scan ordered by similarity, served by a minhash_ops index';

--------------------------------------------------------------------------
-- The insert guard: rejecting near-duplicate inserts
--------------------------------------------------------------------------

-- Tokens that concurrent inserters of near-duplicates both claim (see
-- src/features/trigger.c).  Granted to nobody: the trigger claims a table's tokens as
-- this table's owner, keyed by the guarded table, so only roles that write
-- that table can make each other wait, and no role can read, lock or fill it.
CREATE TABLE ndd_near_duplicate_locks (
    relid oid NOT NULL,
    token int4 NOT NULL,
    claims int8 NOT NULL DEFAULT 0,
    PRIMARY KEY (relid, token)
);

REVOKE ALL ON ndd_near_duplicate_locks FROM PUBLIC;

COMMENT ON TABLE ndd_near_duplicate_locks IS
'internal: tokens claimed by ndd_reject_near_duplicates so that concurrent near-duplicate inserts serialize; at most 65536 rows per guarded table';

-- A dropped table's tokens go with it, so the token table stays bounded by
-- the guarded tables that exist (src/features/token_table.c).
CREATE FUNCTION ndd_forget_dropped_tables()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'ndd_forget_dropped_tables'
LANGUAGE C SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

REVOKE ALL ON FUNCTION ndd_forget_dropped_tables() FROM PUBLIC;

COMMENT ON FUNCTION ndd_forget_dropped_tables() IS
'internal: event trigger that forgets the near-duplicate tokens of dropped tables';

CREATE EVENT TRIGGER ndd_forget_dropped_tables ON sql_drop
    EXECUTE FUNCTION ndd_forget_dropped_tables();

CREATE FUNCTION ndd_reject_near_duplicates()
RETURNS trigger
AS 'MODULE_PATHNAME', 'ndd_reject_near_duplicates'
LANGUAGE C;

COMMENT ON FUNCTION ndd_reject_near_duplicates() IS
'BEFORE INSERT OR UPDATE trigger: rejects (or skips) rows whose minhash sketch or simhash fingerprint is a near-duplicate of an existing row; arguments: sketch column [, threshold or distance [, error|skip [, text column to verify with]]]';

--------------------------------------------------------------------------
-- live clusters: a cluster table kept current as rows change
--------------------------------------------------------------------------

CREATE FUNCTION ndd_claim_cluster_lock(mapping regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'ndd_claim_cluster_lock'
LANGUAGE C STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION ndd_claim_cluster_lock(regclass) IS
'internal: holds to the end of the transaction the lock under which a maintained cluster table changes (needs UPDATE on it)';

-- One row's change, applied to the cluster table mapping (id, cluster_id) of
-- tbl (src/features/maintain_clusters.c; ndd_maintain_clusters_trigger applies it as
-- tbl's owner, after it has claimed the row's near-duplicate tokens).
-- old_id leaves its cluster, which is recomputed from its remaining members;
-- new_id joins the clusters of its near-duplicates; neither (a TRUNCATE)
-- empties the cluster table.
CREATE FUNCTION ndd_cluster_step(tbl regclass, mapping regclass, sketch_column name,
                                 id_column name, threshold float8, max_distance int,
                                 representative_order text, old_id bigint, new_id bigint,
                                 sketch_changed boolean)
RETURNS void
AS 'MODULE_PATHNAME', 'ndd_cluster_step'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION ndd_cluster_step(regclass, regclass, name, name, float8, int, text, bigint, bigint, boolean) IS
'internal: applies one row''s change to a cluster table kept by ndd_maintain_clusters';

CREATE FUNCTION ndd_maintain_clusters_trigger()
RETURNS trigger
AS 'MODULE_PATHNAME', 'ndd_maintain_clusters_trigger'
LANGUAGE C;

COMMENT ON FUNCTION ndd_maintain_clusters_trigger() IS
'internal: AFTER INSERT OR UPDATE OR DELETE (and TRUNCATE) trigger that ndd_maintain_clusters puts on a table';

-- src/features/maintain_clusters.c: the checks, then the cluster table, its first
-- clusters and the triggers, the table locked against writers meanwhile
CREATE FUNCTION ndd_maintain_clusters(tbl regclass, sketch_column name, id_column name,
                                      threshold float8 DEFAULT NULL,
                                      max_distance int DEFAULT NULL,
                                      representative_order text DEFAULT NULL,
                                      cluster_table name DEFAULT NULL)
RETURNS regclass
AS 'MODULE_PATHNAME', 'ndd_maintain_clusters'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION ndd_maintain_clusters(regclass, name, name, float8, int, text, name) IS
'puts a table under live dedup: creates the cluster table (id, cluster_id) of its near-duplicate clusters, as near_duplicate_clusters gives them, and triggers that keep it current as rows are inserted, updated and deleted';
