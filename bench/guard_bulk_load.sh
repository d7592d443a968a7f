#!/usr/bin/env bash
# Benchmark: what the insert guard (the ndd_reject_near_duplicates trigger)
# costs a bulk load, done as a user loads a table: one statement,
#
#   INSERT INTO docs SELECT id, body, mh FROM staging
#
# into docs(id bigint PRIMARY KEY, body text, mh minhash) with a GIN
# minhash_ops(threshold = 0.69) index created before the load, with the
# trigger ndd_reject_near_duplicates('mh', '0.8') fired BEFORE each row,
# fired AFTER each row, fired AFTER the statement (REFERENCING NEW TABLE),
# and without it ("unguarded"), for each size and for
# two index variants: the default options (fastupdate on) and
# fastupdate = off.  staging holds the sketches
# already, so both loads copy the same rows.  The documents are 300 words
# from the corpus (bench/corpus.py: the first 300 words of documents that
# have 300, 150 of them distinct), with their words shuffled, so none is a
# near-duplicate of another: a guarded load keeps every row (the
# trigger's action is 'error', so a near-duplicate would fail the load).
#
# Every load goes into a freshly created table, after a CHECKPOINT; the
# four loads of a variant take turns within each repetition (the order
# rotates), so each ratio is taken within one repetition.  After each load, gin_clean_pending_list() times the index
# work a load left in the pending list for later.  Prints, per size and
# variant, the median seconds of both loads (and with that later work), the median ratio (the target: a guarded load of 100,000 rows
# within 2x the unguarded one, linear in rows, with the default options),
# microseconds per row, and the size of the index and of the guard's token
# table, ndd_near_duplicate_locks, after the largest load.  Figures are
# reported, never checked: exit 0 means it ran.
#
#   NDD_BENCH_ROWS   rows per load, one size after the other (default
#                    "2000 5000 20000 100000"); the corpus has 2.5 times
#                    as many documents as the largest
#   NDD_BENCH_RUNS   repetitions of each size and variant (default 3)
#
# The cluster runs with fsync = off and max_wal_size = 4GB, so that no
# checkpoint starts in the middle of a load.
#
# No -e: common.sh's helpers test with `[ ] &&` and its EXIT trap must run
# to the end to stop the cluster, so failures are handled one by one.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

sizes=${NDD_BENCH_ROWS:-2000 5000 20000 100000}
runs=${NDD_BENCH_RUNS:-3}
[ -n "$sizes" ] || { echo "NDD_BENCH_ROWS is empty" >&2; exit 1; }
for v in "$runs" $sizes; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_ROWS and NDD_BENCH_RUNS must be positive integers" >&2; exit 1; }
done
largest=$(printf '%s\n' $sizes | sort -n | tail -1)
# About 45% of the corpus's documents have the 300 words a load needs.
docs=$((largest * 5 / 2))
corpus=/tmp/ndd-bench-$docs.tsv
sql=$NDD_TOP/bench/guard_bulk_load.sql

ndd_ensure_packages python3
started=$(date +%s.%N)
ndd_corpus "$docs" "$corpus"

ndd_cluster_start

psql() { PGOPTIONS='-c client_min_messages=warning' "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

psql -c "ALTER SYSTEM SET max_wal_size = '4GB'" -c "SELECT pg_reload_conf()" >/dev/null || exit 1

# Plain PostgreSQL so far: load before taking the install lock.
say "loading $corpus and making $largest documents of 300 words"
psql <<EOF || exit 1
CREATE TABLE corpus (id int, family int, edit_rate float8, doc text);
\copy corpus FROM '$corpus'
EOF
psql -v part=pool -v rows="$largest" -f "$sql" || exit 1

ndd_build_install
locked=$(date +%s.%N)
# The tree may hold uncommitted work: say so next to the figures.
commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)

say "sketching"
psql -v part=setup -f "$sql" || exit 1

# One load into a fresh docs: $1 rows, $2 rep, $3 fastupdate, $4 guard
# (none, before, after, statement).
# The clock is the server's, read just before the INSERT and after its
# commit.
load() {
	psql -c "CALL bench_reset($3, '$4')" -c "CHECKPOINT" || return 1
	psql -At -v rows="$1" -v rep="$2" -v fastupdate="$3" -v guard="$4" <<'EOF' >&2
SELECT clock_timestamp() AS t0 \gset
INSERT INTO docs SELECT id, body, mh FROM staging;
SELECT clock_timestamp() AS t1 \gset
-- the index work the load left in the pending list, for later
SELECT gin_clean_pending_list('docs_mh_idx') AS pending_pages \gset
INSERT INTO bench_run
SELECT :rows, :rep, :fastupdate, :'guard', extract(epoch FROM :'t1'::timestamptz - :'t0'::timestamptz),
	   extract(epoch FROM clock_timestamp() - :'t1'::timestamptz),
	   (SELECT count(*) FROM docs), pg_relation_size('docs_mh_idx'),
	   (SELECT count(*) FROM ndd_near_duplicate_locks), pg_total_relation_size('ndd_near_duplicate_locks')
RETURNING format('%s rows, rep %s, fastupdate %s, %-9s %s s, then %s s of pending list', rows, rep,
				 CASE WHEN fastupdate THEN 'on ' ELSE 'off' END,
				 CASE WHEN guard = 'none' THEN 'unguarded' ELSE guard END, to_char(seconds, 'FM99990.00'),
				 to_char(cleanup_seconds, 'FM99990.00'));
EOF
}

for n in $sizes; do
	say "loads of $n rows"
	psql -c "CALL bench_staging($n)" -c "VACUUM ANALYZE staging" || exit 1
	for rep in $(seq "$runs"); do
		for fu in true false; do
			case $((rep % 4)) in
			1) order="none before after statement" ;;
			2) order="before after statement none" ;;
			3) order="after statement none before" ;;
			*) order="statement none before after" ;;
			esac
			for g in $order; do
				load "$n" "$rep" "$fu" "$g" || exit 1
			done
		done
	done
done

say "report"
psql -v part=report -v commit="$commit" -v largest="$largest" -f "$sql" || exit 1

now=$(date +%s.%N)
awk -v s="$started" -v l="$locked" -v n="$now" 'BEGIN {
	printf "\nwall clock: %.0f s in all, %.0f s of it holding the install lock\n", n - s, n - l }'
exit 0
