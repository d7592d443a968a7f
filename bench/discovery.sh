#!/usr/bin/env bash
# Benchmark: all-pairs near-duplicate discovery (near_duplicate_pairs and
# near_duplicate_clusters) at threshold 0.8, scored against exact Jaccard and
# timed at scale.  Figures are reported, never checked: exit 0 means it ran.
#
# Part a, accuracy on the 20k corpus (/tmp/ndd-bench-20000.tsv):
#   - the ground truth: every pair with exact jaccard() >= 0.8, found
#     without comparing all pairs by prefix filtering (shingles ranked
#     rarest first, pairs must share a prefix shingle and pass the size
#     filter), then exact Jaccard of the candidates' shingle sets; its size,
#     within-family and cross-family pairs, and how long it took;
#   - the check of that method: brute-force jaccard() on every pair of a
#     sample (half whole families, half random documents), compared pair by
#     pair with the truth restricted to the sample;
#   - near_duplicate_pairs(0.8) (estimate only) and near_duplicate_pairs(0.8,
#     verify_column => 'body') (exact verification): pairs found, true
#     positives, recall, precision, seconds per run (median of the runs),
#     and whether every run gave the same pairs;
#   - the same verification composed by hand (near_duplicate_pairs at the
#     lowered threshold that verify_column uses, then jaccard() >= 0.8), as a
#     reference should the built-in one be slow or time out;
#   - the truth pairs by estimated similarity, and the missed pairs (exact
#     Jaccard, estimate, families, sizes).
# Part b, speed: NDD_BENCH_DOCS documents of /tmp/ndd-bench-lsh-N.tsv
#   loaded (\copy into an unlogged staging table) and sketched (CREATE TABLE
#   big AS ... minhash_sketch) separately timed; then near_duplicate_pairs
#   and near_duplicate_clusters at 0.8 on the 20k table and on big: seconds,
#   pairs, clusters, rows in clusters, and the temporary files written
#   (pg_stat_database.temp_bytes before and after each call).
#
#   NDD_BENCH_PARTS           a, b or a,b (default a,b)
#   NDD_BENCH_DOCS            documents in part b's big table (default 1000000)
#   NDD_BENCH_CHECK_DOCS      documents in the brute-force sample (default 1500,
#                             about 1.1M jaccard() calls, 3 minutes)
#   NDD_BENCH_RUNS            runs of each call on the 20k table (default 3)
#   NDD_BENCH_BIG_RUNS        runs of each call on big (default 1)
#   NDD_BENCH_VERIFY_TIMEOUT  seconds a verify_column run may take before it
#                             is cancelled and the rest skipped (default 300)
#   NDD_BENCH_BIG_TIMEOUT     the same for each call on big (default 0: none)
#
# The cluster gets generous settings (printed with the figures): work_mem
# 64MB, maintenance_work_mem 512MB, max_wal_size 8GB, shared_buffers 2GB,
# temp_buffers 256MB (near_duplicate_clusters works in temporary tables).
# The output is also written to bench/out/ (discovery-a.txt, or
# discovery-<parts>-<docs>.txt with part b).
#
# No -e: common.sh's helpers test with `[ ] &&` and its EXIT trap must run
# to the end to stop the cluster, so failures are handled one by one.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

parts=${NDD_BENCH_PARTS:-a,b}
docs=${NDD_BENCH_DOCS:-1000000}
check=${NDD_BENCH_CHECK_DOCS:-1500}
runs=${NDD_BENCH_RUNS:-3}
big_runs=${NDD_BENCH_BIG_RUNS:-1}
verify_timeout=${NDD_BENCH_VERIFY_TIMEOUT:-300}
big_timeout=${NDD_BENCH_BIG_TIMEOUT:-0}
for v in "$docs" "$check" "$runs" "$big_runs"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_* counts must be positive integers" >&2; exit 1; }
done
for v in "$verify_timeout" "$big_timeout"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "NDD_BENCH_*_TIMEOUT must be whole seconds" >&2; exit 1; }
done
part_a=off
part_b=off
for p in ${parts//,/ }; do
	case $p in
	a) part_a=on ;;
	b) part_b=on ;;
	*) echo "NDD_BENCH_PARTS: a, b or a,b" >&2; exit 1 ;;
	esac
done
[ "$part_a$part_b" != offoff ] || { echo "NDD_BENCH_PARTS: a, b or a,b" >&2; exit 1; }
# the 20k corpus of sketch_speed.sh, and lsh_lookup.sh's (8 variants per base)
small_corpus=/tmp/ndd-bench-20000.tsv
big_corpus=/tmp/ndd-bench-lsh-$docs.tsv

mkdir -p "$NDD_TOP/bench/out"
log=$NDD_TOP/bench/out/discovery-a.txt
[ "$part_b" = off ] || log=$NDD_TOP/bench/out/discovery-${parts//,/}-$docs.txt
exec > >(tee "$log") 2>&1

ndd_ensure_packages python3

started=$(date +%s.%N)
ndd_corpus 20000 "$small_corpus"
[ "$part_b" = off ] || ndd_corpus "$docs" "$big_corpus" --variants 8

ndd_cluster_start

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

say "configuring the cluster"
psql <<EOF || exit 1
ALTER SYSTEM SET work_mem = '64MB';
ALTER SYSTEM SET maintenance_work_mem = '512MB';
ALTER SYSTEM SET max_wal_size = '8GB';
ALTER SYSTEM SET shared_buffers = '2GB';
ALTER SYSTEM SET temp_buffers = '256MB';
EOF
# shared_buffers needs a restart; 9>&-: the server keeps no lock
ndd_as_owner "$PGBIN/pg_ctl" -D "$NDD_TMP/data" -l "$NDD_TMP/server.log" -w restart >/dev/null 9>&- ||
	{ cat "$NDD_TMP/server.log" >&2; exit 1; }

# Plain PostgreSQL so far: load before taking the install lock.  lz4 (when
# the server has it) only makes the documents' TOAST cheaper.
toast="SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS toast
FROM pg_settings WHERE name = 'default_toast_compression' \\gset
SET default_toast_compression = :toast;"
say "loading $small_corpus"
psql <<EOF || exit 1
$toast
CREATE TABLE docs (id int PRIMARY KEY, family int, edit_rate float8, body text);
\copy docs FROM '$small_corpus'
EOF
load_s=0
if [ "$part_b" = on ]; then
	say "loading $big_corpus into an unlogged staging table"
	load0=$(date +%s.%N)
	psql <<EOF || exit 1
$toast
CREATE UNLOGGED TABLE big_load (id int, family int, edit_rate float8, body text);
\copy big_load FROM '$big_corpus'
EOF
	load_s=$(awk -v a="$load0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
fi

ndd_build_install
locked=$(date +%s.%N)

commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)

say "running bench/discovery.sql (parts: $parts)"
psql -v part_a="$part_a" -v part_b="$part_b" -v docs="$docs" -v check="$check" \
	-v runs="$runs" -v big_runs="$big_runs" -v verify_timeout="$verify_timeout" \
	-v big_timeout="$big_timeout" -v load_s="$load_s" -v commit="$commit" \
	-v small_corpus="$small_corpus" -v big_corpus="$big_corpus" \
	-f "$NDD_TOP/bench/discovery.sql" || exit 1

now=$(date +%s.%N)
awk -v s="$started" -v l="$locked" -v n="$now" 'BEGIN {
	printf "wall clock: %.0f s in all, %.0f s of it holding the install lock\n", n - s, n - l }'
say "output written to $log"
exit 0
