#!/usr/bin/env bash
# Benchmark: `%` lookups through the default minhash_ops index, answered by
# the lookup scan (ndd.lookup_scan = on, counting keys per row from the
# posting lists) and by GIN's own bitmap scan (off), in alternating rounds of
# the same queries, on two kinds of text:
#   - bench: the documents of lsh_lookup.sh (bench/corpus.py, 8 edited
#     copies per base, 3.5 KB on average);
#   - random: documents of 30 words drawn uniformly from 50,000, made by a
#     hash in SQL (no families: the worst case for band keys, whose lists
#     are all of the same length).
# Prints, per corpus: rows, index bytes per row (built with the default
# maintenance_work_mem), p50/p99 of a lookup parsed and planned each time
# (EXECUTE in PL/pgSQL) and of a prepared one, for both scans, the same-run
# ratio lookup scan / GIN scan, and how many answers differ between the two
# (0 expected).  Figures are reported, never checked: exit 0 means it ran.
#
#   NDD_BENCH_DOCS      documents per corpus (default 1000000)
#   NDD_BENCH_QUERIES   query sketches per corpus, taken from the table (default 200)
#   NDD_BENCH_ROUNDS    rounds of each scan, alternating (default 3)
#   NDD_BENCH_CORPORA   which corpora (default "bench random")
#
# Output also goes to bench/out/lookup_scan-<docs>.txt.
#
# No -e: common.sh's helpers test with `[ ] &&` and its EXIT trap must run
# to the end to stop the cluster, so failures are handled one by one.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-1000000}
nq=${NDD_BENCH_QUERIES:-200}
rounds=${NDD_BENCH_ROUNDS:-3}
corpora=${NDD_BENCH_CORPORA:-bench random}
for v in "$docs" "$nq" "$rounds"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_* counts must be positive integers" >&2; exit 1; }
done
for c in $corpora; do
	case $c in bench|random) ;; *) echo "NDD_BENCH_CORPORA: bench and/or random" >&2; exit 1;; esac
done
corpus=/tmp/ndd-bench-lsh-$docs.tsv
out=$NDD_TOP/bench/out/lookup_scan-$docs.txt
mkdir -p "$NDD_TOP/bench/out"

[[ " $corpora " == *" bench "* ]] && ndd_corpus "$docs" "$corpus" --variants 8
ndd_cluster_start
psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
psql -c "ALTER SYSTEM SET shared_buffers = '2GB'" -c "ALTER SYSTEM SET max_wal_size = '8GB'" || exit 1
ndd_as_owner "$PGBIN/pg_ctl" -D "$NDD_TMP/data" -w restart >/dev/null 9>&- || exit 1

ndd_build_install
commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)
{
	echo "lookup_scan.sh at $commit: $docs documents, $nq queries, $rounds rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
	for c in $corpora; do
		psql -v corpus="$c" -v file="$corpus" -v docs="$docs" -v nq="$nq" -v rounds="$rounds" \
			-f "$NDD_TOP/bench/lookup_scan.sql" || exit 1
	done
	echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out"
exit "${PIPESTATUS[0]}"
