/* ndd--0.3.0--0.3.1.sql: catalog changes from 0.3.0 to 0.3.1: none */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION ndd UPDATE TO '0.3.1'" to load this file. \quit

-- 0.3.1 changes what near_duplicate_pairs does (src/pairs.c), not what the
-- catalog holds: the step has no statement, and the new library is the
-- whole update.
