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

-- near_duplicate_clusters: the same function, now in C (src/clusters.c)
CREATE OR REPLACE FUNCTION near_duplicate_clusters(tbl regclass, sketch_column name, id_column name,
                                        threshold float8 DEFAULT NULL,
                                        verify_column name DEFAULT NULL,
                                        progress boolean DEFAULT false,
                                        max_distance int DEFAULT NULL,
                                        representative_order text DEFAULT NULL)
RETURNS TABLE (id bigint, cluster_id bigint)
AS 'MODULE_PATHNAME', 'near_duplicate_clusters'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET enable_nestloop = off;

-- ndd_cluster_step: the same function, now in C (src/maintain_clusters.c)
CREATE OR REPLACE FUNCTION ndd_cluster_step(tbl regclass, mapping regclass, sketch_column name,
                                            id_column name, threshold float8, max_distance int,
                                            representative_order text, old_id bigint, new_id bigint,
                                            sketch_changed boolean)
RETURNS void
AS 'MODULE_PATHNAME', 'ndd_cluster_step'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- ndd_maintain_clusters: the same function, now in C (src/maintain_clusters.c)
CREATE OR REPLACE FUNCTION ndd_maintain_clusters(tbl regclass, sketch_column name, id_column name,
                                                 threshold float8 DEFAULT NULL,
                                                 max_distance int DEFAULT NULL,
                                                 representative_order text DEFAULT NULL,
                                                 cluster_table name DEFAULT NULL)
RETURNS regclass
AS 'MODULE_PATHNAME', 'ndd_maintain_clusters'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- near_duplicate_pairs: the same function, now in C (src/pairs.c)
CREATE OR REPLACE FUNCTION near_duplicate_pairs(tbl regclass, sketch_column name, id_column name,
                                                threshold float8 DEFAULT NULL,
                                                verify_column name DEFAULT NULL,
                                                progress boolean DEFAULT false,
                                                max_distance int DEFAULT NULL)
RETURNS TABLE (id_a bigint, id_b bigint, similarity float8, distance int)
AS 'MODULE_PATHNAME', 'near_duplicate_pairs'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET enable_nestloop = off;

-- ndd_check_cluster_indexes: no longer used, ndd_maintain_clusters checks
-- the indexes itself (its C symbol stays for the older install scripts)
DROP FUNCTION ndd_check_cluster_indexes(regclass, name, float8);
