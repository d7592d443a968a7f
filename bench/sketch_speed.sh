#!/usr/bin/env bash
# Benchmark: what sketching costs compared with just reading the text.
# Times a full scan, minhash_sketch (word and char shingles), simhash, exact
# jaccard and pg_trgm's show_trgm over a generated corpus on a throwaway
# cluster, and prints medians.  Figures are reported, never checked: exit 0
# means it ran.
#
#   NDD_BENCH_DOCS  documents in the corpus (default 20000)
#   NDD_BENCH_REPS  timed runs per query after a warm-up (default 7;
#                   jaccard and show_trgm, 8-30x a scan, get 3)
#
# No -e: common.sh's helpers test with `[ ] &&` and its EXIT trap must run
# to the end to stop the cluster, so failures are handled one by one.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-20000}
reps=${NDD_BENCH_REPS:-7}
slow_reps=3
for v in "$docs" "$reps"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_DOCS and NDD_BENCH_REPS must be positive integers" >&2; exit 1; }
done
[ "$slow_reps" -le "$reps" ] || slow_reps=$reps
# Cached per size (bench/corpus.py is deterministic; ndd_corpus writes it
# again only when the program or the source files have changed).
corpus=/tmp/ndd-bench-$docs.tsv

ndd_ensure_packages python3
# pg_trgm is the yardstick.  Debian 12 ships it in postgresql-15; older
# layouts put it in postgresql-contrib.
trgm_control=$("$PG_CONFIG" --sharedir)/extension/pg_trgm.control
[ -f "$trgm_control" ] || ndd_ensure_packages postgresql-contrib
trgm=on
[ -f "$trgm_control" ] || { say "pg_trgm not found: skipping show_trgm"; trgm=off; }
ndd_build_install

ndd_corpus "$docs" "$corpus"

ndd_cluster_start

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

say "loading $corpus"
# \copy reads the file as us, not as the server, so its owner does not matter
psql <<EOF || exit 1
CREATE EXTENSION ndd;
$([ "$trgm" = on ] && echo 'CREATE EXTENSION pg_trgm;')
CREATE TABLE t (id int, family int, edit_rate float8, doc text);
\copy t FROM '$corpus'
-- statistics, hint bits and the visibility map, so no run pays for them
VACUUM (ANALYZE) t;
EOF

# The tree may hold uncommitted work: say so next to the figures.
commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)

say "timing: one warm-up and $reps runs per query, round-robin"
psql -v reps="$reps" -v slow_reps="$slow_reps" -v trgm="$trgm" -v commit="$commit" \
	-f "$NDD_TOP/bench/sketch_speed.sql" || exit 1
exit 0
