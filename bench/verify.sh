#!/usr/bin/env bash
# Benchmark: what exact verification (near_duplicate_pairs' verify_column)
# costs next to the estimate alone, on two kinds of text:
#   - the bench corpus (bench/corpus.py, NDD_BENCH_DOCS documents): small
#     families, most texts in one or two candidate pairs;
#   - clustered text: NDD_BENCH_FAMILIES families of NDD_BENCH_FAMILY_SIZE
#     documents of NDD_BENCH_WORDS words, each copy with 2% of its words
#     replaced, so every text is in a dozen candidate pairs (source files
#     with a shared licence header look like this).
# For each: seconds of the estimate alone and of verify_column (medians of
# NDD_BENCH_RUNS runs, interleaved), their same-run ratio, and whether the
# verified pairs equal jaccard() >= 0.8 on every candidate pair.  Beside
# them, the least verification can cost (its floor ratio): the candidates
# at the lower threshold, found with the workers a verify_column call gets,
# and their texts read once by PostgreSQL (detoasted), the reading counted
# as split over two cores and the shingling as free.  Figures are
# reported, never checked: exit 0 means it ran.
#
#   NDD_BENCH_DOCS         bench corpus documents (default 20000)
#   NDD_BENCH_FAMILIES     clustered families (default 1000)
#   NDD_BENCH_FAMILY_SIZE  documents per family (default 12)
#   NDD_BENCH_WORDS        words per clustered document (default 1500)
#   NDD_BENCH_RUNS         runs of each call (default 3)
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-20000}
families=${NDD_BENCH_FAMILIES:-1000}
family_size=${NDD_BENCH_FAMILY_SIZE:-12}
words=${NDD_BENCH_WORDS:-1500}
runs=${NDD_BENCH_RUNS:-3}
for v in "$docs" "$families" "$family_size" "$words" "$runs"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_* values must be positive integers" >&2; exit 1; }
done
corpus=/tmp/ndd-bench-$docs.tsv

ndd_ensure_packages python3
ndd_build_install
ndd_corpus "$docs" "$corpus"
ndd_cluster_start

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

say "loading $corpus and making the clustered text"
psql -v families="$families" -v family_size="$family_size" -v words="$words" <<EOF || exit 1
CREATE EXTENSION ndd;
CREATE TABLE corpus (id bigint PRIMARY KEY, family bigint, edit_rate float8, body text, sketch minhash);
\copy corpus (id, family, edit_rate, body) FROM '$corpus'
UPDATE corpus SET sketch = minhash_sketch(body);
-- family f, copy c: word w is the base's, or (2% of words in a copy) another
CREATE TABLE clustered (id bigint PRIMARY KEY, body text, sketch minhash);
INSERT INTO clustered
SELECT f * :family_size + c,
       (SELECT string_agg(CASE WHEN c > 0 AND hashint8extended(f * 100000 + c * 1000 + w, 3) % 50 = 0
                               THEN 'x' || (hashint8extended(f * 100000 + c * 1000 + w, 4) % 100000)
                               ELSE 'w' || (hashint8extended(f * 1000 + w, 5) % 20000) END, ' ')
        FROM generate_series(1, :words) w), NULL
FROM generate_series(0, :families - 1) f, generate_series(0, :family_size - 1) c;
UPDATE clustered SET sketch = minhash_sketch(body);
VACUUM (ANALYZE) corpus, clustered;
EOF

commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)
say "timing: $runs runs of each call, interleaved"
psql -v runs="$runs" -v commit="$commit" -f "$NDD_TOP/bench/verify.sql" || exit 1
exit 0
