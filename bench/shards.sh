#!/usr/bin/env bash
# Benchmark: one server against a table hash-partitioned over two
# postgres_fdw shards, on the same corpus and the same machine.
#
# Three throwaway clusters: a coordinator, which also holds the one-server
# table `single`, and two shards.  The shards listen on 127.0.0.1, so what
# travels between the coordinator and the shards is TCP, counted by the
# kernel (ss -ti: bytes_received and bytes_sent of each connection the
# coordinator's backend opened to a shard, read just before the session
# ends).  Each shard holds its hash partition of the corpus as `docs`, with
# a GIN minhash_ops index; the coordinator's `docs` is partitioned by hash
# of id into two foreign tables (extensions 'ndd', async_capable).
#
# Reported, never checked (exit 0 means it ran):
#   - sketching and index build on one server and on the two shards (the
#     shards work at once, one per core);
#   - lookups at 0.8 (similar(), one backend): p50/p99 on `single` and on
#     `docs`, the same answers, bytes per lookup;
#   - near_duplicate_pairs on both: seconds, the same pairs, the rows and
#     bytes that left the shards, against the bytes of every sketch;
#   - near_duplicate_clusters on top of the pairs.
#
#   NDD_BENCH_DOCS      corpus documents (default 1000000)
#   NDD_BENCH_QUERIES   lookups timed per table (default 200)
#
# No -e: the EXIT trap must stop all three clusters.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-1000000}
nq=${NDD_BENCH_QUERIES:-200}
for v in "$docs" "$nq"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_* counts must be positive integers" >&2; exit 1; }
done
corpus=/tmp/ndd-bench-lsh-$docs.tsv
ports=(54381 54382 54383)	# coordinator, shard 1, shard 2
names=(coordinator shard1 shard2)

ndd_ensure_packages python3
fdw_control=$("$PG_CONFIG" --sharedir)/extension/postgres_fdw.control
[ -f "$fdw_control" ] || ndd_ensure_packages postgresql-contrib
started=$(date +%s.%N)
ndd_corpus "$docs" "$corpus" --variants 8

top=$(mktemp -d /tmp/ndd-shards-XXXXXX)
chmod 755 "$top"
[ "$(id -u)" -eq 0 ] && chown postgres: "$top"
stop_all() {
	for n in "${names[@]}"; do
		[ -d "$top/$n" ] && ndd_as_owner "$PGBIN/pg_ctl" -D "$top/$n" -m immediate stop >/dev/null 2>&1
	done
	rm -rf "$top"
}
trap stop_all EXIT
for i in 0 1 2; do
	n=${names[$i]}
	ndd_as_owner "$PGBIN/initdb" -D "$top/$n" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync \
		>"$top/$n.initdb.log" 2>&1 || { cat "$top/$n.initdb.log" >&2; exit 1; }
	listen="''"
	[ "$i" -gt 0 ] && listen=127.0.0.1
	ndd_as_owner "$PGBIN/pg_ctl" -D "$top/$n" -l "$top/$n.log" -w \
		-o "-p ${ports[$i]} -k $top -c listen_addresses=$listen -c fsync=off -c max_wal_size=8GB -c shared_buffers=512MB -c work_mem=64MB -c maintenance_work_mem=1GB" \
		start >/dev/null 9>&- || { cat "$top/$n.log" >&2; exit 1; }
done
psql_on() { local port=$1; shift; "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$top" -p "$port" -U postgres "$@"; }

# Plain PostgreSQL so far: the corpus goes to all three before ndd is
# installed.  Each shard keeps its hash partition of it: route has the
# coordinator's partitioning, so satisfies_hash_partition() agrees with it.
say "loading $corpus on the coordinator and both shards"
pids=()
for i in 0 1 2; do
	psql_on "${ports[$i]}" <<EOF &
SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS toast
FROM pg_settings WHERE name = 'default_toast_compression' \gset
SET default_toast_compression = :toast;
CREATE TABLE t_load (id bigint, family int, edit_rate float8, doc text);
\copy t_load FROM '$corpus'
CREATE TABLE route (id bigint) PARTITION BY HASH (id);
EOF
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || exit 1; done
pids=()
for r in 0 1; do
	psql_on "${ports[$((r + 1))]}" -c "DELETE FROM t_load WHERE NOT satisfies_hash_partition('route'::regclass, 2, $r, id)" \
		-c "VACUUM t_load" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || exit 1; done

ndd_build_install
locked=$(date +%s.%N)
commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)

# The statements given, run on both shards at once (each its own -c, so a
# VACUUM is not in a transaction block); prints the wall-clock seconds.
on_shards() {
	local t0 i c pids=()
	t0=$(date +%s.%N)
	for i in 1 2; do
		args=()
		for c in "$@"; do args+=(-c "$c"); done
		psql_on "${ports[$i]}" "${args[@]}" & pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || exit 1; done
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'
}
say "sketching on one server"
psql_on "${ports[0]}" -c "CREATE EXTENSION ndd" -c "CREATE EXTENSION postgres_fdw" || exit 1
t0=$(date +%s.%N)
psql_on "${ports[0]}" -c "SET max_parallel_workers_per_gather = 2" \
	-c "CREATE TABLE single AS SELECT id, doc, minhash_sketch(doc) AS mh FROM t_load" -c "DROP TABLE t_load" || exit 1
single_sketch=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
t0=$(date +%s.%N)
psql_on "${ports[0]}" -c "ALTER TABLE single ADD PRIMARY KEY (id)" \
	-c "CREATE INDEX single_mh ON single USING gin (mh minhash_ops)" -c "VACUUM ANALYZE single" || exit 1
single_index=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')

say "sketching on both shards at once"
for i in 1 2; do psql_on "${ports[$i]}" -c "CREATE EXTENSION ndd" || exit 1; done
shard_sketch=$(on_shards "SET max_parallel_workers_per_gather = 1" \
	"CREATE TABLE docs AS SELECT id, doc, minhash_sketch(doc) AS mh FROM t_load" "DROP TABLE t_load") || exit 1
shard_index=$(on_shards "ALTER TABLE docs ADD PRIMARY KEY (id)" \
	"CREATE INDEX docs_mh ON docs USING gin (mh minhash_ops)" "VACUUM ANALYZE docs") || exit 1

psql_on "${ports[0]}" <<EOF || exit 1
CREATE SERVER shard1 FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '127.0.0.1', port '${ports[1]}', dbname 'postgres', extensions 'ndd',
			 async_capable 'true', fetch_size '10000');
CREATE SERVER shard2 FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '127.0.0.1', port '${ports[2]}', dbname 'postgres', extensions 'ndd',
			 async_capable 'true', fetch_size '10000');
CREATE USER MAPPING FOR postgres SERVER shard1 OPTIONS (user 'postgres');
CREATE USER MAPPING FOR postgres SERVER shard2 OPTIONS (user 'postgres');
CREATE TABLE docs (id bigint, doc text, mh minhash) PARTITION BY HASH (id);
CREATE FOREIGN TABLE docs_1 PARTITION OF docs FOR VALUES WITH (modulus 2, remainder 0)
	SERVER shard1 OPTIONS (table_name 'docs');
CREATE FOREIGN TABLE docs_2 PARTITION OF docs FOR VALUES WITH (modulus 2, remainder 1)
	SERVER shard2 OPTIONS (table_name 'docs');
ANALYZE docs;
CREATE TABLE bench_fig (ord serial, figure text, value text);
INSERT INTO bench_fig (figure, value) VALUES
	('sketching, one server (2 workers)', '$single_sketch s'),
	('sketching, two shards at once (1 worker each)', '$shard_sketch s'),
	('primary key + GIN minhash_ops + VACUUM ANALYZE, one server', '$single_index s'),
	('the same on both shards at once', '$shard_index s');
EOF

# Bytes the coordinator's backend has exchanged with the shards: shards.sql
# runs this (\! sh "$NDD_WIRE") inside its session, before the connections
# end with it, and reads $top/wire: received and sent bytes.
cat >"$top/wire.sh" <<EOF
ss -tinH state established '( dport = :${ports[1]} or dport = :${ports[2]} )' |
	awk '{ for (i = 1; i <= NF; i++) {
			if (\$i ~ /^bytes_received:/) { split(\$i, a, ":"); r += a[2] }
			if (\$i ~ /^bytes_acked:/) { split(\$i, a, ":"); s += a[2] } } }
		END { printf "%d %d", r, s }' >"$top/wire"
EOF
export NDD_WIRE=$top/wire.sh

say "timing (holding the install lock)"
psql_on "${ports[0]}" -v nq="$nq" -v wirefile="$top/wire" -v commit="$commit" \
	-v docs="$docs" -f "$NDD_TOP/bench/shards.sql" || exit 1

now=$(date +%s.%N)
awk -v s="$started" -v l="$locked" -v n="$now" 'BEGIN {
	printf "wall clock: %.0f s in all, %.0f s of it holding the install lock\n", n - s, n - l }'
exit 0
