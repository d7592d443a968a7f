#!/usr/bin/env bash
# Benchmark: which features should simhash(doc) use by default?  For each
# candidate feature set (word and character shingles of several sizes) it
# fingerprints a generated corpus with planted near-duplicates, finds every
# pair within 3 bits (ndd.hamming_threshold, the paper's setting) and prints
# precision and recall against the exact Jaccard resemblance of the
# documents' 5-word shingle sets (what jaccard(a, b) returns) at several
# thresholds.  The exact pairs come from a complete all-pairs search
# (prefix filtering), not from the planted families.  Figures are
# reported, never checked: exit 0 means it ran.
#
#   NDD_BENCH_DOCS  documents in the corpus (default 20000)
#
# No -e: common.sh's EXIT trap must run to stop the cluster.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-20000}
[[ $docs =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_DOCS must be a positive integer" >&2; exit 1; }
corpus=/tmp/ndd-bench-$docs.tsv

ndd_ensure_packages python3
ndd_build_install
ndd_corpus "$docs" "$corpus"
ndd_cluster_start

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

say "loading $corpus"
psql <<EOF || exit 1
CREATE EXTENSION ndd;
CREATE TABLE t (id int PRIMARY KEY, family int, edit_rate float8, doc text);
\copy t FROM '$corpus'
VACUUM (ANALYZE) t;
EOF

commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)
say "exact pairs, then one pass per feature set"
psql -v commit="$commit" -f "$NDD_TOP/bench/simhash_features.sql" || exit 1
exit 0
