/* ndd--0.2.0--0.3.0.sql: catalog changes from 0.2.0 to 0.3.0 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION ndd UPDATE TO '0.3.0'" to load this file. \quit

-- near_duplicate_top_k: the same function, now in C (src/top_k.c)
CREATE OR REPLACE FUNCTION near_duplicate_top_k(tbl regclass, sketch_column name, id_column name,
                                                query minhash, k int DEFAULT 10,
                                                progress boolean DEFAULT false)
RETURNS TABLE (id bigint, similarity float8)
AS 'MODULE_PATHNAME', 'near_duplicate_top_k'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 10
SET search_path = pg_catalog, pg_temp;
