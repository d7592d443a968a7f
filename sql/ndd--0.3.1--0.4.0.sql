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
