#!/usr/bin/env bash
# Benchmark: what the ndd_reject_near_duplicates trigger costs an insert.
# pgbench inserts corpus documents into docs(id bigserial, body text, mh
# minhash), already holding a preload of other documents, at 1, 4 and 8
# clients, in six variants that each add one thing:
#
#   body       the document only (no sketch, no index)
#   sketch     and mh = minhash_sketch(body), no index
#   index      and a minhash_ops GIN index WITH (fastupdate = off)
#   notexists  and the trigger's lookup written in SQL (INSERT ... WHERE NOT
#              EXISTS a near-duplicate): the lookup's cost, without tokens
#   trigger    the index variant plus the trigger, 'skip' at the threshold
#   clusters   the index variant plus ndd_maintain_clusters at the threshold
#              (every row gets in; near-duplicates join clusters)
#
# Each run inserts the same documents, each once (a shared sequence picks
# them), into a freshly rebuilt table, and is repeated; the variants take
# turns within each repetition, so every ratio is also taken within one
# repetition.  Prints median TPS, the index/trigger ratio (the target is at
# most 3), how many rows the trigger skipped, what the pgbench backends
# waited on (sampled from pg_stat_activity every 20 ms), errors in the
# server log, and where an insert's time goes under the trigger (its two
# statements timed by auto_explain).  Figures are reported, never checked:
# exit 0 means it ran.
#
#   NDD_BENCH_DOCS       corpus documents: odd ids are preloaded, even ids
#                        inserted (default 20000)
#   NDD_BENCH_INSERTS    inserts per run, at most NDD_BENCH_DOCS / 2
#                        (default NDD_BENCH_DOCS / 2)
#   NDD_BENCH_CLIENTS    pgbench client counts (default "1 4 8"; -j is the
#                        smaller of the count and 2)
#   NDD_BENCH_RUNS       repetitions of every variant and client count
#                        (default 5)
#   NDD_BENCH_VARIANTS   any of the above (default all six)
#   NDD_BENCH_THRESHOLD  the trigger's threshold (default 0.8)
#   NDD_BENCH_PROFILE    inserts timed with auto_explain per variant, one
#                        client, after the runs (default 1000; 0: none)
#   NDD_BENCH_SHUFFLE    on: shuffle the words of every inserted document
#                        (a fixed order per document), so that none is a
#                        near-duplicate of anything and every row gets in:
#                        the trigger's cost without the skips (default off;
#                        the corpus also has natural near-duplicates)
#
# pgbench runs on the same machine: on a small one it takes a share of the
# CPU the server would have.  The cluster runs with fsync = off.
#
# No -e: common.sh's helpers test with `[ ] &&` and its EXIT trap must run
# to the end to stop the cluster, so failures are handled one by one.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-20000}
inserts=${NDD_BENCH_INSERTS:-$((docs / 2))}
clients=${NDD_BENCH_CLIENTS:-1 4 8}
runs=${NDD_BENCH_RUNS:-5}
variants=${NDD_BENCH_VARIANTS:-body sketch index notexists trigger clusters}
threshold=${NDD_BENCH_THRESHOLD:-0.8}
profile=${NDD_BENCH_PROFILE:-1000}
shuffle=${NDD_BENCH_SHUFFLE:-off}
for v in "$docs" "$inserts" "$runs" $clients; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_* counts must be positive integers" >&2; exit 1; }
done
[[ $profile =~ ^[0-9]+$ ]] || { echo "NDD_BENCH_PROFILE must be a count" >&2; exit 1; }
case $shuffle in on|off) ;; *) echo "NDD_BENCH_SHUFFLE must be on or off" >&2; exit 1;; esac
[ -n "$clients" ] || { echo "NDD_BENCH_CLIENTS is empty" >&2; exit 1; }
[ -n "$variants" ] || { echo "NDD_BENCH_VARIANTS is empty" >&2; exit 1; }
for v in $variants; do
	case $v in body|sketch|index|notexists|trigger|clusters) ;;
	*) echo "unknown variant \"$v\": use body, sketch, index, notexists, trigger, clusters" >&2; exit 1;; esac
done
[[ $threshold =~ ^(0?\.[0-9]*[1-9][0-9]*|1(\.0*)?)$ ]] ||
	{ echo "NDD_BENCH_THRESHOLD must be in (0, 1]" >&2; exit 1; }
[ "$inserts" -le $((docs / 2)) ] || inserts=$((docs / 2))
here=$(cd "$(dirname "$0")" && pwd)/trigger_insert
corpus=/tmp/ndd-bench-$docs.tsv

ndd_ensure_packages python3
started=$(date +%s.%N)
ndd_corpus "$docs" "$corpus"

ndd_cluster_start
log=$NDD_TMP/server.log

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

# Plain PostgreSQL so far: load before taking the install lock.
say "loading $corpus"
psql <<EOF || exit 1
SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS toast
FROM pg_settings WHERE name = 'default_toast_compression' \gset
SET default_toast_compression = :toast;
CREATE TABLE corpus (id int, family int, edit_rate float8, doc text);
\copy corpus FROM '$corpus'
EOF

ndd_build_install
locked=$(date +%s.%N)
commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)

say "sketching the preload"
psql -v inserts="$inserts" -v shuffle="$shuffle" -f "$here/setup.sql" || exit 1

# The trigger's skips raise NOTICEs: keep them off pgbench's stderr.
quiet='-c client_min_messages=warning'

script_of() {
	case $1 in body) echo body;; notexists) echo notexists;; *) echo sketch;; esac
}

# Rebuild docs for variant $1, vacuum and checkpoint, so each run starts
# from the same table.
reset() {
	psql -c "SET client_min_messages = warning" -c "CALL bench_reset('$1', $threshold)" \
		-c "VACUUM ANALYZE docs, ndd_near_duplicate_locks" -c "CHECKPOINT"
}

# The figure after "$2" on a line of pgbench's output $1, or NULL.
field() {
	local v
	v=$(printf '%s\n' "$1" | sed -n "s/^$2 *\([0-9.]*\).*/\1/p" | head -1)
	echo "${v:-NULL}"
}

run=0
for rep in $(seq "$runs"); do
	for c in $clients; do
		j=$((c < 2 ? c : 2))
		per=$((inserts / c))
		for v in $variants; do
			run=$((run + 1))
			reset "$v" || exit 1
			from=$(stat -c %s "$log")
			psql -c "CALL bench_sample($run)" 9>&- &
			sampler=$!
			out=$(PGOPTIONS=$quiet "$PGBIN/pgbench" -n -c "$c" -j "$j" -t "$per" \
				-D threshold="$threshold" -f "$here/pgbench_$(script_of "$v").sql" 2>&1)
			status=$?
			psql -c "INSERT INTO bench_stop VALUES ($run)"
			wait "$sampler"
			[ $status -eq 0 ] || { say "pgbench exited with $status:"; printf '%s\n' "$out" | tail -20 >&2; }
			errors=$(tail -c +$((from + 1)) "$log" | grep -c -E 'ERROR:|deadlock')
			attempted=$(field "$out" 'number of transactions actually processed:')
			failed=$(field "$out" 'number of failed transactions:')
			[ "$failed" = NULL ] && failed=0
			tps=$(field "$out" 'tps =')
			lat=$(field "$out" 'latency average =')
			psql -At -c "INSERT INTO bench_run (rep, clients, variant, attempted, inserted, failed,
					tps, lat_ms, pgbench_status, log_errors, token_rows, token_bytes)
				SELECT $rep, $c, '$v', $attempted, (SELECT count(*) FROM docs) - (SELECT count(*) FROM preload),
					$failed, $tps, $lat, $status, $errors, (SELECT count(*) FROM ndd_near_duplicate_locks),
					pg_total_relation_size('ndd_near_duplicate_locks')
				RETURNING format('run %s/%s: %s clients, %-9s %8s tps, %s skipped, %s log errors',
					rep, $runs, clients, variant, round(tps::numeric), attempted - inserted, log_errors)" >&2 ||
				exit 1
		done
	done
done

# Where the time of one insert goes: auto_explain logs the duration of the
# statement pgbench sends and, under the trigger, of the two the trigger
# runs through SPI (claim the tokens, look for a near-duplicate).  One
# client, so the figures are CPU and I/O, not waits.
psql -c "CREATE TABLE bench_prof (variant text, kind text, n bigint, total_ms float8)" || exit 1
explain='-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_nested_statements=on'
if [ "$profile" -gt 0 ]; then
	for v in $variants; do
		say "timing $profile inserts of variant $v with auto_explain"
		reset "$v" || exit 1
		from=$(stat -c %s "$log")
		PGOPTIONS="$quiet $explain" "$PGBIN/pgbench" -n -c 1 -t "$profile" -D threshold="$threshold" \
			-f "$here/pgbench_$(script_of "$v").sql" >/dev/null 2>&1 || say "pgbench failed"
		tail -c +$((from + 1)) "$log" | awk -v v="$v" '
			/LOG:  duration: [0-9.]+ ms  plan:/ {
				match($0, /duration: [0-9.]+/); d = substr($0, RSTART + 10, RLENGTH - 10); want = 1; next }
			want && /Query Text:/ {
				if (/Query Text: INSERT INTO .*ndd_near_duplicate_locks/) k = "claim"
				else if (/Query Text: SELECT .*minhash_query/) k = "check"
				else k = "statement"
				n[k]++; s[k] += d; want = 0 }
			END { for (k in n) printf "%s\t%s\t%d\t%.3f\n", v, k, n[k], s[k] }' |
			psql -c "\copy bench_prof FROM STDIN" || exit 1
	done
	# The trigger's own plans, with row counts and buffers, as generic plans
	# (after five executions): the last of 20 inserts.
	case " $variants " in *" trigger "*)
		reset trigger || exit 1
		from=$(stat -c %s "$log")
		PGOPTIONS="$quiet $explain -c auto_explain.log_analyze=on -c auto_explain.log_buffers=on" \
			"$PGBIN/pgbench" -n -c 1 -t 20 -D threshold="$threshold" -f "$here/pgbench_sketch.sql" \
			>/dev/null 2>&1 || say "pgbench failed"
		tail -c +$((from + 1)) "$log" | awk '
			function flush() { if (inplan && k != "" && k != "statement") last[k] = cur; inplan = 0; k = "" }
			/^[0-9][0-9][0-9][0-9]-/ { flush() }
			/LOG:  duration: [0-9.]+ ms  plan:/ { cur = $0 "\n"; inplan = 1; k = ""; next }
			inplan { cur = cur $0 "\n"
				if (/Query Text: INSERT INTO .*ndd_near_duplicate_locks/) k = "claim"
				else if (/Query Text: SELECT .*minhash_query/) k = "check"
				else if (/Query Text:/) k = "statement" }
			END { flush()
				  print "-- the trigger claiming its tokens, last of 20:"; printf "%s", last["claim"]
				  print "-- the trigger looking for a near-duplicate, last of 20:"; printf "%s", last["check"] }' \
			>"$NDD_TMP/plans.txt"
		;;
	esac
fi

say "report"
psql -v commit="$commit" -v threshold="$threshold" -v shuffle="$shuffle" -f "$here/report.sql" || exit 1
[ -s "$NDD_TMP/plans.txt" ] && { echo; echo "auto_explain (ANALYZE, BUFFERS) of the trigger's statements:"; sed 's/^[0-9-]* [0-9:.]* [A-Z]* \[[0-9]*\] //' "$NDD_TMP/plans.txt"; }

now=$(date +%s.%N)
awk -v s="$started" -v l="$locked" -v n="$now" 'BEGIN {
	printf "\nwall clock: %.0f s in all, %.0f s of it holding the install lock\n", n - s, n - l }'
exit 0
