#!/usr/bin/env bash
# ndd across shards, on this machine: a coordinator and two shard servers
# (three throwaway PostgreSQL 15 clusters), a documents table hash-partitioned
# over postgres_fdw foreign tables, ndd installed everywhere.  Loads a small
# demo with near-duplicates planted across shards, shows that a lookup is
# sent to both shards and served by their indexes, and runs discovery,
# clusters and the insert guard on the coordinator.
#
#   bash scripts/shards.sh          # the demo; the clusters are removed at exit
#   bash scripts/shards.sh --keep   # leave them running, print how to connect
#
# Run as root on a fresh Debian 12 machine (it installs what is missing and
# runs the servers as postgres), or as a user who can write PostgreSQL's
# directories.  NDD_PGBIN selects another PostgreSQL 15, as for the tests.
set -uo pipefail
. "$(dirname "$0")/common.sh"

keep=off
case ${1:-} in
--keep) keep=on ;;
'') ;;
*) echo "usage: $0 [--keep]" >&2; exit 2 ;;
esac

ports=(54391 54392 54393)	# coordinator, shard 1, shard 2
names=(coordinator shard1 shard2)

ndd_ensure_packages
fdw_control=$("$PG_CONFIG" --sharedir)/extension/postgres_fdw.control
[ -f "$fdw_control" ] || ndd_ensure_packages postgresql-contrib
ndd_build_install

top=$(mktemp -d /tmp/ndd-shards-XXXXXX)
chmod 755 "$top"
[ "$(id -u)" -eq 0 ] && chown postgres: "$top"
stop_all() {
	for n in "${names[@]}"; do
		[ -d "$top/$n" ] && ndd_as_owner "$PGBIN/pg_ctl" -D "$top/$n" -m fast stop >/dev/null 2>&1
	done
	rm -rf "$top"
}
[ "$keep" = off ] && trap stop_all EXIT

say "starting a coordinator and two shards in $top"
for i in 0 1 2; do
	n=${names[$i]}
	ndd_as_owner "$PGBIN/initdb" -D "$top/$n" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync \
		>"$top/$n.initdb.log" 2>&1 || { cat "$top/$n.initdb.log" >&2; exit 1; }
	ndd_as_owner "$PGBIN/pg_ctl" -D "$top/$n" -l "$top/$n.log" -w \
		-o "-p ${ports[$i]} -k $top -c listen_addresses=''" start >/dev/null 9>&- ||
		{ cat "$top/$n.log" >&2; exit 1; }
done
psql_on() { local port=$1; shift; "$PGBIN/psql" -X -v ON_ERROR_STOP=1 -h "$top" -p "$port" -U postgres "$@"; }

say "each shard: ndd and a documents table with its indexes"
for i in 1 2; do
	psql_on "${ports[$i]}" -q <<'EOF' || exit 1
CREATE EXTENSION ndd;
CREATE TABLE docs (id bigint PRIMARY KEY, body text, sketch minhash, fp simhash);
CREATE INDEX ON docs USING gin (sketch minhash_ops);
CREATE INDEX ON docs USING gin (fp simhash_ops);
EOF
done

say "the coordinator: docs partitioned by hash of id over the two shards"
psql_on "${ports[0]}" -q <<EOF || exit 1
CREATE EXTENSION ndd;
CREATE EXTENSION postgres_fdw;
CREATE SERVER shard1 FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '$top', port '${ports[1]}', dbname 'postgres', extensions 'ndd', async_capable 'true');
CREATE SERVER shard2 FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '$top', port '${ports[2]}', dbname 'postgres', extensions 'ndd', async_capable 'true');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard1;
CREATE USER MAPPING FOR CURRENT_USER SERVER shard2;
CREATE TABLE docs (id bigint, body text, sketch minhash, fp simhash) PARTITION BY HASH (id);
CREATE FOREIGN TABLE docs_1 PARTITION OF docs FOR VALUES WITH (modulus 2, remainder 0)
	SERVER shard1 OPTIONS (table_name 'docs');
CREATE FOREIGN TABLE docs_2 PARTITION OF docs FOR VALUES WITH (modulus 2, remainder 1)
	SERVER shard2 OPTIONS (table_name 'docs');

-- 3,000 articles of 120 words; every tenth has two copies with one word
-- edited, at ids that hash to either shard
INSERT INTO docs (id, body)
SELECT f * 10 + v,
	   (SELECT string_agg(CASE WHEN i = 60 + v THEN 'edited' ELSE left(md5(f || '-' || i), 6) END, ' ' ORDER BY i)
		FROM generate_series(1, 120) i)
FROM generate_series(1, 3000) f, generate_series(0, 2) v
WHERE v = 0 OR f % 10 = 0;
UPDATE docs SET sketch = minhash_sketch(body), fp = simhash(doc => body);
ANALYZE docs;
EOF

psql_on "${ports[0]}" <<'EOF' || exit 1
\echo
\echo '-- rows per shard'
SELECT tableoid::regclass AS partition, count(*) FROM docs GROUP BY 1 ORDER BY 1;
\echo '-- a lookup: similar() is sent to both shards, at once'
EXPLAIN (VERBOSE, COSTS OFF)
SELECT id FROM docs WHERE similar(sketch, (SELECT sketch FROM docs WHERE id = 100), 0.8);
SELECT id, tableoid::regclass AS partition FROM docs
WHERE similar(sketch, (SELECT sketch FROM docs WHERE id = 100), 0.8) ORDER BY id;
\echo '-- simhash: within 6 bits'
SELECT id FROM docs WHERE similar(fp, (SELECT fp FROM docs WHERE id = 100), 6) ORDER BY id;
\echo '-- all near-duplicate pairs, across shards too'
SELECT count(*) AS pairs,
	   count(*) FILTER (WHERE satisfies_hash_partition('docs'::regclass, 2, 0, id_a)
							  <> satisfies_hash_partition('docs'::regclass, 2, 0, id_b)) AS across_shards
FROM near_duplicate_pairs('docs', 'sketch', 'id', progress => true);
\echo '-- clusters: one representative per family'
SELECT count(*) AS rows_in_clusters, count(DISTINCT cluster_id) AS clusters
FROM near_duplicate_clusters('docs', 'sketch', 'id');
\echo '-- the insert guard on the coordinator (REPEATABLE READ across shards)'
CREATE TRIGGER no_near_duplicates BEFORE INSERT OR UPDATE ON docs
	FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
SET default_transaction_isolation = 'repeatable read';
\set ON_ERROR_STOP 0
INSERT INTO docs (id, body, sketch) SELECT 99999, body || ' again', minhash_sketch(body || ' again') FROM docs WHERE id = 100;
EOF

if [ "$keep" = on ]; then
	echo
	echo "The clusters keep running in $top. Connect with:"
	for i in 0 1 2; do echo "  $PGBIN/psql -h $top -p ${ports[$i]} -U postgres    # ${names[$i]}"; done
	echo "Stop them with:"
	for i in 0 1 2; do echo "  sudo -u postgres $PGBIN/pg_ctl -D $top/${names[$i]} stop"; done
fi
exit 0
