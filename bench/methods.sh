#!/usr/bin/env bash
# Benchmark: the field's methods on our data.  Every near-duplicate method
# ndd offers runs over one generated corpus with planted near-duplicate
# families, and each is scored against the same ground truth: every pair
# with exact jaccard() >= 0.8, found over the whole corpus by prefix
# filtering (as in discovery.sql), not sampled.  The methods:
#   1. minhash + LSH: near_duplicate_pairs(0.8), the estimate only;
#   2. minhash + exact verification: near_duplicate_pairs(0.8,
#      verify_column => 'doc');
#   3. simhash: near_duplicate_pairs(max_distance => 3);
#   4. super-shingles: minhash_supershingles(mh) (6 groups), pairs sharing
#      at least 2, by a self-join on the unnested super-shingles;
#   5. I-Match: imatch_lexicon over the table, imatch_signature, pairs with
#      equal signatures;
#   6. randomized I-Match: imatch_signatures (10 random lexicons), pairs
#      sharing any;
#   7. SpotSigs: spotsigs(doc), pairs with SpotSigs Jaccard >= 0.8, found by
#      a self-join on shared signatures (each set's rarest, prefix
#      filtering) within the length-ratio bound;
#   8. b-bit minhash, b = 1, 2, 4: the candidates of near_duplicate_pairs at
#      the lowered threshold verify_column uses, kept when the b-bit
#      similarity reaches 0.8.
# For each it prints precision, recall and F1 at 0.8, the milliseconds per
# 1,000 documents of sketching (from the text) and of pairing (from what is
# stored), and the bytes per document stored; then recall by exact Jaccard
# and the false positives by exact Jaccard.  One backend, JIT off.  Figures
# are reported, never checked: exit 0 means it ran.
#
#   NDD_BENCH_DOCS  documents in the corpus (default 5000,
#                   /tmp/ndd-bench-N.tsv, 3 copies per family)
#   NDD_BENCH_RUNS  timed runs per query, medians (default 5; the sketches
#                   also get a warm-up)
#
# The output is also written to bench/out/methods-N.txt.
#
# No -e: common.sh's helpers test with `[ ] &&` and its EXIT trap must run
# to the end to stop the cluster, so failures are handled one by one.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-5000}
runs=${NDD_BENCH_RUNS:-5}
for v in "$docs" "$runs"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_DOCS and NDD_BENCH_RUNS must be positive integers" >&2; exit 1; }
done
corpus=/tmp/ndd-bench-$docs.tsv

mkdir -p "$NDD_TOP/bench/out"
log=$NDD_TOP/bench/out/methods-$docs.txt
exec > >(tee "$log") 2>&1

ndd_ensure_packages python3

started=$(date +%s.%N)
ndd_corpus "$docs" "$corpus"

ndd_cluster_start

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

# Plain PostgreSQL so far: load before taking the install lock.
say "loading $corpus"
psql <<EOF || exit 1
CREATE TABLE t (id int PRIMARY KEY, family int, edit_rate float8, doc text);
\copy t FROM '$corpus'
-- statistics, hint bits and the visibility map, so no run pays for them
VACUUM (ANALYZE) t;
EOF

ndd_build_install
locked=$(date +%s.%N)

# The tree may hold uncommitted work: say so next to the figures.
commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)

say "running bench/methods.sql ($docs docs, $runs runs)"
psql -v runs="$runs" -v corpus="$corpus" -v commit="$commit" \
	-f "$NDD_TOP/bench/methods.sql" || exit 1

now=$(date +%s.%N)
awk -v s="$started" -v l="$locked" -v n="$now" 'BEGIN {
	printf "wall clock: %.0f s in all, %.0f s of it holding the install lock\n", n - s, n - l }'
say "output written to $log"
exit 0
