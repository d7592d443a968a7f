#!/usr/bin/env bash
# Benchmark: near-duplicate lookups through the minhash_ops GIN index, side
# by side with pg_trgm, on a generated corpus with planted near-duplicates.
# Prints index build time and size per row, p50/p99 lookup latency at
# threshold 0.8, a sequential scan for scale, and recall/precision of both
# against exact Jaccard >= 0.8.  ndd is also scored at estimated thresholds
# 0.75 and 0.70 (its own sweep, as pg_trgm's), and as a verified lookup:
# similar(mh, q, 0.70) from the index, then exact jaccard() of the stored
# texts >= 0.8.  Figures are reported, never checked: exit 0 means it ran.
#
#   NDD_BENCH_DOCS          documents in the big table t (default 1000000)
#   NDD_BENCH_TRGM_DOCS     the first rows of t copied to t_small, where
#                           pg_trgm and ndd meet on the same data (default
#                           20000: a gin_trgm_ops index on 1M documents of
#                           3.5 KB takes too long to build and to search)
#   NDD_BENCH_QUERIES       query documents per table (default 200)
#   NDD_BENCH_TRGM_QUERIES  of those on t_small, how many pg_trgm answers
#                           (default 30; each takes seconds)
#   NDD_BENCH_TRGM_BUDGET   seconds of pg_trgm lookups per pass before the
#                           rest are skipped (default 240; 30 s per lookup)
#   NDD_BENCH_SEQ_QUERIES   queries also timed as a sequential scan (default 5)
#   NDD_BENCH_KEY_BITS_16   also build and time key_bits = 16 on t (default on)
#
# The corpus (cached per size in /tmp) and the bulk load need no ndd, so
# they run before ndd_build_install takes the machine's install lock: the
# lock is held only while ndd itself is exercised.
#
# No -e: common.sh's helpers test with `[ ] &&` and its EXIT trap must run
# to the end to stop the cluster, so failures are handled one by one.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-1000000}
sub=${NDD_BENCH_TRGM_DOCS:-20000}
nq=${NDD_BENCH_QUERIES:-200}
tq=${NDD_BENCH_TRGM_QUERIES:-30}
budget=${NDD_BENCH_TRGM_BUDGET:-240}
seqq=${NDD_BENCH_SEQ_QUERIES:-5}
kb16=${NDD_BENCH_KEY_BITS_16:-on}
for v in "$docs" "$sub" "$nq" "$tq" "$budget" "$seqq"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_* counts must be positive integers" >&2; exit 1; }
done
case $kb16 in on|off) ;; *) echo "NDD_BENCH_KEY_BITS_16 must be on or off" >&2; exit 1;; esac
[ "$sub" -le "$docs" ] || sub=$docs
[ "$tq" -le "$nq" ] || tq=$nq
[ "$seqq" -le "$nq" ] || seqq=$nq
# 8 edited copies per chosen base: larger families than sketch_speed's corpus
corpus=/tmp/ndd-bench-lsh-$docs.tsv

ndd_ensure_packages python3
trgm_control=$("$PG_CONFIG" --sharedir)/extension/pg_trgm.control
[ -f "$trgm_control" ] || ndd_ensure_packages postgresql-contrib
trgm=on
[ -f "$trgm_control" ] || { say "pg_trgm not found: skipping the comparison"; trgm=off; }

started=$(date +%s.%N)
ndd_corpus "$docs" "$corpus" --variants 8

ndd_cluster_start

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

# Plain PostgreSQL so far: load before taking the install lock.  lz4 (when
# the server has it) only makes the documents' TOAST cheaper to write and
# read; sketches are never compressed.
say "loading $corpus"
load0=$(date +%s.%N)
psql <<EOF || exit 1
SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS toast
FROM pg_settings WHERE name = 'default_toast_compression' \gset
SET default_toast_compression = :toast;
CREATE TABLE t_load (id int, family int, edit_rate float8, doc text);
\copy t_load FROM '$corpus'
EOF
load_s=$(awk -v a="$load0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

ndd_build_install
locked=$(date +%s.%N)

commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)

say "sketching, indexing and timing (holding the install lock)"
psql -v docs="$docs" -v sub="$sub" -v nq="$nq" -v tq="$tq" -v budget="$budget" \
	-v seqq="$seqq" -v kb16="$kb16" -v trgm="$trgm" -v commit="$commit" \
	-v load_s="$load_s" -v corpus="$corpus" \
	-f "$NDD_TOP/bench/lsh_lookup.sql" || exit 1

now=$(date +%s.%N)
awk -v s="$started" -v l="$locked" -v n="$now" 'BEGIN {
	printf "wall clock: %.0f s in all, %.0f s of it holding the install lock\n", n - s, n - l }'
exit 0
