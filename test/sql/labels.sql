-- What a distributed planner (Citus, postgres_fdw, parallel query) relies
-- on: volatility and parallel-safety labels, combine functions of
-- aggregates, binary I/O of types.  A change to any label shows up here.
CREATE TEMP VIEW ndd_functions AS
SELECT p.oid, p.oid::regprocedure::text AS signature, p.provolatile, p.proparallel, p.prokind,
       p.proargtypes
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'ndd';

-- every function that is not IMMUTABLE and PARALLEL SAFE, with its labels
SELECT signature, provolatile, proparallel FROM ndd_functions
WHERE provolatile <> 'i' OR proparallel <> 's' ORDER BY signature;

-- the install script declares and C does the work: no function of ndd is
-- written in SQL or PL/pgSQL (an aggregate's language is internal)
SELECT f.signature, l.lanname FROM ndd_functions f
JOIN pg_proc p ON p.oid = f.oid JOIN pg_language l ON l.oid = p.prolang
WHERE l.lanname NOT IN ('c', 'internal') ORDER BY f.signature;

-- VOLATILE and PARALLEL SAFE only for aggregate support (internal state)
SELECT signature FROM ndd_functions
WHERE provolatile = 'v' AND proparallel = 's'
  AND NOT 'internal'::regtype = ANY (proargtypes::oid[]) ORDER BY signature;

-- every aggregate combines (parallel workers, shards); an internal state
-- also serializes
SELECT f.signature, a.aggcombinefn, a.aggserialfn, a.aggdeserialfn, f.proparallel
FROM ndd_functions f JOIN pg_aggregate a ON a.aggfnoid = f.oid
WHERE a.aggcombinefn = 0
   OR (a.aggtranstype = 'internal'::regtype AND (a.aggserialfn = 0 OR a.aggdeserialfn = 0))
   OR f.proparallel <> 's';

-- every type has binary I/O, but gsimhash (GiST storage, no input at all).
-- The types ndd declares: from 17 on, PostgreSQL also records their array
-- types and its table's row type as members of the extension.
SELECT t.typname, t.typsend::regproc, t.typreceive::regproc
FROM pg_type t
JOIN pg_depend d ON d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'ndd'
WHERE t.typtype IN ('b', 'c') AND t.typcategory <> 'A'
  AND NOT EXISTS (SELECT FROM pg_class r WHERE r.oid = t.typrelid AND r.relkind <> 'c')
ORDER BY t.typname;

-- ndd_components in parallel: the same components as serially (chains of
-- five ids, 40,000 of them, in an order that spreads each over the workers)
CREATE TABLE chain_edges AS
SELECT g::bigint AS a, g::bigint + 1 AS b FROM generate_series(1, 200000) g
WHERE g % 5 <> 0 ORDER BY hashint8(g);
ANALYZE chain_edges;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT ndd_components(a, b) FROM chain_edges;
CREATE TABLE labels_parallel AS
SELECT x[i][1] AS id, x[i][2] AS label FROM (SELECT ndd_components(a, b) AS x FROM chain_edges) s,
     generate_subscripts(s.x, 1) i;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE labels_serial AS
SELECT x[i][1] AS id, x[i][2] AS label FROM (SELECT ndd_components(a, b) AS x FROM chain_edges) s,
     generate_subscripts(s.x, 1) i;
RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT count(*) AS ids, count(DISTINCT label) AS components,
       bool_and(label = id - (id - 1) % 5) AS smallest_of_each_chain,
       (SELECT count(*) FROM ((TABLE labels_parallel EXCEPT TABLE labels_serial)
                              UNION ALL (TABLE labels_serial EXCEPT TABLE labels_parallel)) d) AS differences
FROM labels_parallel;
DROP TABLE chain_edges, labels_parallel, labels_serial;

-- every operator class of ndd passes its access method's own validation
-- (support functions of the signatures GIN and GiST expect): no INFO, all t
SELECT c.opcname, m.amname, amvalidate(c.oid) AS valid
FROM pg_opclass c JOIN pg_am m ON m.oid = c.opcmethod
JOIN pg_depend d ON d.classid = 'pg_opclass'::regclass AND d.objid = c.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'ndd'
ORDER BY c.opcname, m.amname;
