#!/usr/bin/env bash
# Benchmark: what a weighted minhash sketch costs next to a plain one, per
# document and per feature, on three kinds of input:
#   - the bench corpus (bench/corpus.py, NDD_BENCH_DOCS documents of about
#     3.6 KB), each word weighing its count, against minhash_sketch of the
#     same words (shingle_size 1) and of the default 5-word shingles;
#   - documents of 30 random words of a 50,000-word vocabulary;
#   - weighted sets of 10, 100, 1,000 and 10,000 integers (weights 1 to 20),
#     against minhash_sketch of the same integers.
# Medians of NDD_BENCH_REPS runs, round-robin, in one session without JIT
# or parallel workers.  Figures are reported, never checked: exit 0 means
# it ran.
#
#   NDD_BENCH_DOCS  bench corpus documents (default 20000)
#   NDD_BENCH_REPS  timed runs per query after a warm-up (default 5)
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-20000}
reps=${NDD_BENCH_REPS:-5}
for v in "$docs" "$reps"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_DOCS and NDD_BENCH_REPS must be positive integers" >&2; exit 1; }
done
corpus=/tmp/ndd-bench-$docs.tsv

ndd_ensure_packages python3
ndd_build_install
ndd_corpus "$docs" "$corpus"
ndd_cluster_start

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

say "loading $corpus and making the other inputs"
psql <<EOF || exit 1
CREATE EXTENSION ndd;
CREATE TABLE t (id int, family int, edit_rate float8, doc text);
\copy t FROM '$corpus'
-- 30 words drawn from 50,000, 20,000 documents
CREATE TABLE r AS
SELECT d AS id, string_agg('w' || (abs(hashint8extended(d * 100 + i, 7)) % 50000), ' ') AS doc
FROM generate_series(1, 20000) d, generate_series(1, 30) i GROUP BY d;
-- 100,000 features in all at each size n
CREATE TABLE s AS
SELECT n, g, array_agg(g * 100000 + f::bigint) AS features,
       array_agg((1 + abs(hashint8extended(g * 100000 + f, 1)) % 20)::float8) AS weights
FROM (VALUES (10), (100), (1000), (10000)) v(n), generate_series(1, 100000 / n) g,
     LATERAL generate_series(1, n) f
GROUP BY n, g;
VACUUM (ANALYZE) t, r, s;
EOF

commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)
say "timing: one warm-up and $reps runs per query, round-robin"
psql -v reps="$reps" -v commit="$commit" -f "$NDD_TOP/bench/weighted.sql" || exit 1
exit 0
