#!/usr/bin/env bash
# Benchmark: Hamming search over many random fingerprints.  Builds the GIN
# (block keys) and GiST indexes, prints their size per row and build time,
# the p50/p99 latency of a % lookup at k = 3 against a sequential scan in
# the same run, the kNN latency of GiST, and the batch join of many query
# fingerprints against the table, by the GIN join and by simhash_batch
# (median of NDD_BENCH_BATCH_REPEAT runs, and their ratio).  With NDD_BENCH_SPLITS it also compares
# other block splits at k = 3: the keys = blocks layout with 4, 5 and 6
# blocks, and a prototype with keys from all 15 pairs of 6 blocks (a plain
# GIN over bigint[]).  Figures are reported, never checked: exit 0 means it
# ran.
#
#   NDD_BENCH_ROWS     stored fingerprints (default 10000000)
#   NDD_BENCH_BATCH    query fingerprints of the batch join (default 100000)
#   NDD_BENCH_LOOKUPS  timed single lookups (default 200)
#   NDD_BENCH_BATCH_REPEAT  timed runs of simhash_batch (default 3); the GIN
#                      join is timed once, it takes a minute per 1M queries
#   NDD_BENCH_SPLITS   "blocks" to compare block splits as well, "all" to add
#                      the pair-key prototype (slow: 90 s and 560 MB at 1M
#                      rows); default "no"
#
# No -e: common.sh's EXIT trap must run to stop the cluster.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

rows=${NDD_BENCH_ROWS:-10000000}
batch=${NDD_BENCH_BATCH:-100000}
lookups=${NDD_BENCH_LOOKUPS:-200}
batch_repeat=${NDD_BENCH_BATCH_REPEAT:-3}
splits=${NDD_BENCH_SPLITS:-no}
case $splits in
	no) split_blocks=off; split_pairs=off ;;
	blocks) split_blocks=on; split_pairs=off ;;
	all) split_blocks=on; split_pairs=on ;;
	*) echo "NDD_BENCH_SPLITS must be no, blocks or all" >&2; exit 1 ;;
esac
for v in "$rows" "$batch" "$lookups" "$batch_repeat"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_ROWS, NDD_BENCH_BATCH, NDD_BENCH_LOOKUPS and NDD_BENCH_BATCH_REPEAT must be positive integers" >&2; exit 1; }
done

ndd_ensure_packages
ndd_build_install
ndd_cluster_start

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

# Room for the table and an index in shared buffers, so lookups are timed
# warm rather than through the kernel's page cache.
psql -c "ALTER SYSTEM SET shared_buffers = '2GB'" -c "ALTER SYSTEM SET maintenance_work_mem = '1GB'" || exit 1
ndd_as_owner "$PGBIN/pg_ctl" -D "$NDD_TMP/data" -w restart >/dev/null 9>&- || exit 1

commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)
say "$rows fingerprints, $lookups lookups, a batch of $batch"
psql -v rows="$rows" -v batch="$batch" -v lookups="$lookups" -v batch_repeat="$batch_repeat" -v split_blocks="$split_blocks" -v split_pairs="$split_pairs" \
	-v commit="$commit" -f "$NDD_TOP/bench/simhash_search.sql" || exit 1
exit 0
