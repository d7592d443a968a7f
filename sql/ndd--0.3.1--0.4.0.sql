/* ndd--0.3.1--0.4.0.sql: catalog changes from 0.3.1 to 0.4.0 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION ndd UPDATE TO '0.4.0'" to load this file. \quit

-- shingle sets: discovery verifies its candidates by shingling each
-- document once (src/pairs.c)
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

-- weighted minhash: sketches of weighted sets (src/weighted_minhash.c)
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
