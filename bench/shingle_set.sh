#!/usr/bin/env bash
# Benchmark: what the exact jaccard(text, text) costs on texts of about
# 1,500 and about 80 words, next to shingling a text alone, the sorted
# shingle sets of ndd_shingle_set, and minhash_sketch of the same texts
# (issue 39: shingling for an exact Jaccard should cost less than
# sketching).  Prints ms of each query and per 1,000 rows (texts or
# pairs), and the same-run cost per text beyond reading it (the detoast of
# the same texts subtracted), with its ratio to minhash_sketch's.  Figures
# are reported, never checked: exit 0 means it ran.
#
#   NDD_BENCH_DOCS  pairs of long texts (default 1000), and 20 times as
#                   many pairs of short ones
#   NDD_BENCH_REPS  timed runs per query after a warm-up (default 9)
#
# The texts are generated (no corpus file): words from md5 of integers
# (3 to 8 letters, 20,000 of them), and each pair's second text the first
# with one word in 20 replaced, so that jaccard() is about 0.6.  The times
# are the backend's CPU time where Linux gives it (/proc/self/schedstat,
# which moves at scheduler ticks: hence many short texts, so that each
# query takes tens of ms, and means rather than medians), with the median
# wall times after them.
#
# No -e: common.sh's EXIT trap must run to the end to stop the cluster.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-1000}
reps=${NDD_BENCH_REPS:-9}
for v in "$docs" "$reps"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_DOCS and NDD_BENCH_REPS must be positive integers" >&2; exit 1; }
done

ndd_build_install
ndd_cluster_start

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

say "generating $docs pairs of long texts and $((docs * 20)) of short ones"
psql -v docs="$docs" <<'EOF2' || exit 1
CREATE EXTENSION ndd;
-- word k of the vocabulary: the first 3 to 8 hex digits of md5(k)
CREATE FUNCTION word(k bigint) RETURNS text IMMUTABLE LANGUAGE sql
AS $$ SELECT substr(md5(k::text), 1, 3 + (k % 6)::int) $$;
CREATE TABLE texts (kind text, id int, a text, b text);
INSERT INTO texts
SELECT k.kind, d,
       string_agg(word(abs(hashint8extended(d * 100000 + w, k.seed) % 20000)), ' ' ORDER BY w),
       string_agg(word(abs(CASE WHEN hashint8extended(d * 100000 + w, k.seed + 1) % 20 = 0
                                THEN hashint8extended(d * 100000 + w, k.seed + 2)
                                ELSE hashint8extended(d * 100000 + w, k.seed) END % 20000)), ' ' ORDER BY w)
FROM (VALUES ('long', 1500, 10, 1), ('short', 80, 20, 20)) k(kind, words, seed, times),
     generate_series(1, :docs * k.times) d, generate_series(1, k.words) w
GROUP BY k.kind, d;
CREATE TABLE long_texts AS SELECT id, a, b FROM texts WHERE kind = 'long';
CREATE TABLE short_texts AS SELECT id, a, b FROM texts WHERE kind = 'short';
DROP TABLE texts;
-- statistics, hint bits and the visibility map, so no run pays for them
VACUUM (ANALYZE) long_texts, short_texts;
EOF2

# The tree may hold uncommitted work: say so next to the figures.
commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)

say "timing: one warm-up and $reps runs per query, round-robin"
psql -v reps="$reps" -v commit="$commit" -f "$NDD_TOP/bench/shingle_set.sql" || exit 1
exit 0
