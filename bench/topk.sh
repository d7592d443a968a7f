#!/usr/bin/env bash
# Benchmark: top-k search without a threshold, near_duplicate_top_k(..., k)
# through a minhash_ops index of one-row bands, side by side with a
# sequential scan ordered by similarity and with pg_trgm's <-> over GiST.
# Prints the index's build time and size per row, p50/p99 latency of the
# k = 10 search, and whether each answer is exactly the sequential scan's.
# Figures are reported, never checked: exit 0 means it ran.
#
#   NDD_BENCH_CORPUS        bench (default): the documents of bench/corpus.py,
#                           the corpus of bench/lsh_lookup.sh; families: the
#                           families-of-4 text, made in SQL (families of 4
#                           documents of 60 words from a vocabulary of
#                           20,000, member m with word 57 + m replaced by a
#                           word of its own: exact J 0.87 to 0.93 within a
#                           family, 0 across; the tenth row of a query is at
#                           similarity 0, the common shape in deduplication)
#   NDD_BENCH_DOCS          documents in the big table t (default 1000000)
#   NDD_BENCH_TRGM_DOCS     the first rows of t copied to t_small, where
#                           pg_trgm's GiST index and ndd meet on the same
#                           data (default 20000: gist_trgm_ops on 1M
#                           documents of 3.5 KB takes hours to build)
#   NDD_BENCH_QUERIES       query documents (default 200)
#   NDD_BENCH_SEQ_QUERIES   of those, how many are also answered by a
#                           sequential scan, the reference (default 10)
#   NDD_BENCH_KEY_BITS      key_bits of the index (default 16)
#   NDD_BENCH_BOUND_QUERIES of the queries, how many get the posting-list
#                           bound: the postings the prefix filter leaves to
#                           read, given the tenth row's similarity (default 50)
#   NDD_BENCH_SHARED_BUFFERS shared_buffers of the cluster (default: the
#                           server's, 128MB; the index and table of 1M
#                           documents take 1.1 GB)
#
# No -e: common.sh's helpers test with `[ ] &&` and its EXIT trap must run
# to the end to stop the cluster, so failures are handled one by one.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

kind=${NDD_BENCH_CORPUS:-bench}
docs=${NDD_BENCH_DOCS:-1000000}
sub=${NDD_BENCH_TRGM_DOCS:-20000}
nq=${NDD_BENCH_QUERIES:-200}
seqq=${NDD_BENCH_SEQ_QUERIES:-10}
kbits=${NDD_BENCH_KEY_BITS:-16}
boundq=${NDD_BENCH_BOUND_QUERIES:-50}
shared_buffers=${NDD_BENCH_SHARED_BUFFERS:-}
for v in "$docs" "$sub" "$nq" "$seqq" "$kbits" "$boundq"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_* values must be positive integers" >&2; exit 1; }
done
[ "$sub" -le "$docs" ] || sub=$docs
[ "$seqq" -le "$nq" ] || seqq=$nq
case $kind in
bench) corpus=/tmp/ndd-bench-lsh-$docs.tsv ;;
families) corpus="families of 4 (SQL)" ;;
*) echo "NDD_BENCH_CORPUS must be bench or families" >&2; exit 1 ;;
esac

ndd_ensure_packages python3
trgm_control=$("$PG_CONFIG" --sharedir)/extension/pg_trgm.control
[ -f "$trgm_control" ] || ndd_ensure_packages postgresql-contrib
trgm=on
[ -f "$trgm_control" ] || { say "pg_trgm not found: skipping the comparison"; trgm=off; }

[ "$kind" = bench ] && ndd_corpus "$docs" "$corpus" --variants 8
ndd_cluster_start

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

if [ -n "$shared_buffers" ]; then
	say "shared_buffers = $shared_buffers"
	psql -c "ALTER SYSTEM SET shared_buffers = '$shared_buffers'" || exit 1
	# needs a restart; 9>&-: the server keeps no lock
	ndd_as_owner "$PGBIN/pg_ctl" -D "$NDD_TMP/data" -l "$NDD_TMP/server.log" -w restart >/dev/null 9>&- ||
		{ cat "$NDD_TMP/server.log" >&2; exit 1; }
fi

say "loading $corpus"
if [ "$kind" = families ]; then
	# member m of family f is row 4f + m + 1: the family's 60 words, drawn
	# by hashing (f, j), but for word 57 + m, a word of its own
	psql -v docs="$docs" <<'EOF' || exit 1
CREATE TABLE t_load (id int, family int, edit_rate float8, doc text);
INSERT INTO t_load
SELECT f * 4 + m + 1, f, 0, d.doc
FROM generate_series(0, (:docs + 3) / 4 - 1) f, generate_series(0, 3) m,
LATERAL (SELECT string_agg(CASE WHEN j = 57 + m THEN 'v' || (f * 4 + m)
								ELSE 'w' || ((hashint8(f::int8 * 64 + j) & 2147483647) % 20000) END,
						   ' ' ORDER BY j) AS doc
		 FROM generate_series(1, 60) j) d
WHERE f * 4 + m < :docs;
EOF
else
	psql <<EOF || exit 1
SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS toast
FROM pg_settings WHERE name = 'default_toast_compression' \gset
SET default_toast_compression = :toast;
CREATE TABLE t_load (id int, family int, edit_rate float8, doc text);
\copy t_load FROM '$corpus'
EOF
fi

ndd_build_install
commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)

say "sketching, indexing and timing (holding the install lock)"
psql -v docs="$docs" -v sub="$sub" -v nq="$nq" -v seqq="$seqq" -v kbits="$kbits" -v boundq="$boundq" \
	-v trgm="$trgm" -v commit="$commit" -v corpus="$corpus" \
	-f "$NDD_TOP/bench/topk.sql" || exit 1
exit 0
