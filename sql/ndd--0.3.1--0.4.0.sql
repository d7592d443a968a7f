/* ndd--0.3.1--0.4.0.sql: catalog changes from 0.3.1 to 0.4.0 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION ndd UPDATE TO '0.4.0'" to load this file. \quit

-- shingle sets: discovery verifies its candidates by shingling each
-- document once (src/features/pairs.c)
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

-- discovery's stages are not JIT-compiled: enable_nestloop = off prices
-- them all above jit_above_cost, and their time goes to ndd's functions
ALTER FUNCTION near_duplicate_pairs(regclass, name, name, float8, name, boolean, int) SET jit = off;
ALTER FUNCTION near_duplicate_clusters(regclass, name, name, float8, name, boolean, int, text) SET jit = off;

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

CREATE FUNCTION containment(query minhash, doc minhash)
RETURNS float8
AS 'MODULE_PATHNAME', 'minhash_containment'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION containment(minhash, minhash) IS
'estimated containment of the query''s set in the document''s, from their sketches: coarse when the document is much larger (see the manual)';

-- No PL/pgSQL builds SQL any more: ndd_explain and the event trigger's
-- function are C (src/features/explain.c, src/features/token_table.c), with the same
-- signatures, labels, settings, comments and privileges
CREATE OR REPLACE FUNCTION ndd_explain(a text, b text, shingle_size int DEFAULT 5,
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
SET search_path = pg_catalog, pg_temp;

CREATE OR REPLACE FUNCTION ndd_forget_dropped_tables()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'ndd_forget_dropped_tables'
LANGUAGE C SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;
