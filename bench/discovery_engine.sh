#!/usr/bin/env bash
# Benchmark: the discovery paths of near_duplicate_pairs (issue 39) side by
# side on two corpora at one size.  Figures are reported, never checked:
# exit 0 means it ran.
#
# For each corpus of NDD_BENCH_CORPORA, on one throwaway cluster:
#   - load: NDD_BENCH_DOCS documents \copy'd into an unlogged staging table
#     big_load (timed, not part of any target);
#   - sketch: CREATE TABLE big AS SELECT id, minhash_sketch(body) AS mh FROM
#     big_load, as scale.sh does (the cluster's 2 parallel workers), then
#     VACUUM (ANALYZE) big, each timed; big_load is dropped after them;
#   - NDD_BENCH_ROUNDS rounds of calls, each call one psql session:
#       pairs: near_duplicate_pairs('big', 'mh', 'id', 0.8) once for each
#         path of NDD_BENCH_PATHS (SET ndd.discovery_path), the engine once
#         for each of NDD_BENCH_ENGINE_WORKERS (max_parallel_workers_per_gather),
#         every other path with 2, the cluster's setting;
#       clusters: near_duplicate_clusters('big', 'mh', 'id', 0.8) once for
#         each path, with 2 workers;
#     the calls of odd rounds run in that order, those of even rounds in the
#     reverse order, so that a drift of the machine's load falls on all.
# Each call reports its seconds (clock_timestamp() around the statement in
# the server), its answer (pairs; rows and clusters) with a checksum of it,
# the temporary files it wrote (pg_stat_database.temp_bytes, temp_files),
# and what bench/discovery_engine_sample.py saw: the CPU seconds of the
# backend and its parallel workers (which the load of a shared machine
# does not inflate as it does the wall clock), and the peaks of temporary
# files plus temporary tables on disk at once, of the backend's RssAnon,
# RssShmem and their sum, and of the parallel workers' RssAnon.  The statement that is
# timed also computes the count and the checksum (a sum of 64-bit hashes
# of (id_a, id_b, similarity), or (id, cluster_id): it needs no sort, so it
# costs the same small time on every path, and equal answers give equal
# checksums whatever order the rows come in).
# bench/discovery_engine_report.py then prints, per corpus, the medians of
# each call, the ratios engine/sql, workers 2/0 and clusters/pairs, and
# sketch + vacuum + pairs per path, beside the targets of issue 39.
#
# The paths.  ndd.discovery_path is a developer setting that chooses how
# near_duplicate_pairs finds its candidates ('auto', 'engine' or 'sql').
# Each session runs LOAD 'ndd' first, so that an unknown ndd.* setting is an
# error rather than a placeholder.  A path whose SET fails reads "n/a" in
# the report.  When the build has no ndd.discovery_path at all, 'sql' runs
# without the SET (the statements over temporary tables are then the only
# path) and every other path reads "n/a".
#
# The corpora:
#   bench     bench/corpus.py --base-chars NDD_BENCH_BASE_CHARS (600, as
#             docs/scale.md: 77.5 words, 798 bytes a document; half the
#             bases with 3 edited copies), /tmp/ndd-scale-N.tsv, the file
#             scale.sh uses for a largest size of N;
#   families  bench/corpus_families.py (families of 4 documents of 60
#             words, every pair of a family at Jaccard 0.87 to 0.93, 6
#             pairs per 4 documents), /tmp/ndd-families-N.tsv.
# Both are written once and kept, with a .key beside them that says which
# program and arguments wrote them.
#
#   NDD_BENCH_DOCS            documents per corpus (default 1000000)
#   NDD_BENCH_CORPORA         any of bench, families (default "bench families")
#   NDD_BENCH_PATHS           values of ndd.discovery_path (default "sql engine")
#   NDD_BENCH_ENGINE_WORKERS  max_parallel_workers_per_gather values for the
#                             engine (default "0 2")
#   NDD_BENCH_ROUNDS          rounds of calls (default 3)
#   NDD_BENCH_CLUSTERS        on: time near_duplicate_clusters too (default on)
#   NDD_BENCH_WORK_MEM        work_mem (default 64MB)
#   NDD_BENCH_BASE_CHARS      bench corpus: characters a base (default 600)
#   NDD_BENCH_TIMEOUT         seconds a call may take before it is cancelled
#                             and not run again (default 0: none)
#   NDD_BENCH_MIN_DISK_MB     cancel a call when the file system of the
#                             cluster has less free space than this (default
#                             4096)
#
# Settings (printed with the figures): work_mem NDD_BENCH_WORK_MEM,
# maintenance_work_mem 512MB, shared_buffers 2GB, temp_buffers 256MB,
# max_wal_size 8GB, max_parallel_workers_per_gather 2, jit off, as
# scale.sh.  Nothing else parallel is lowered (min_parallel_table_scan_size
# and the costs keep their defaults, as a user has them).
#
# The output is also written to bench/out/: the report as
# discovery_engine-<docs>-<work_mem>.txt and one row per timed step as
# discovery_engine-<docs>-<work_mem>.tsv.
#
# No -e: common.sh's helpers test with `[ ] &&` and its EXIT trap must run
# to the end to stop the cluster, so failures are handled one by one.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-1000000}
corpora=${NDD_BENCH_CORPORA:-bench families}
paths=${NDD_BENCH_PATHS:-sql engine}
engine_workers=${NDD_BENCH_ENGINE_WORKERS:-0 2}
rounds=${NDD_BENCH_ROUNDS:-3}
clusters=${NDD_BENCH_CLUSTERS:-on}
work_mem=${NDD_BENCH_WORK_MEM:-64MB}
base_chars=${NDD_BENCH_BASE_CHARS:-600}
timeout=${NDD_BENCH_TIMEOUT:-0}
min_disk=${NDD_BENCH_MIN_DISK_MB:-4096}
threshold=0.8

for v in "$docs" "$rounds" "$base_chars"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_DOCS, _ROUNDS, _BASE_CHARS: positive integers" >&2; exit 1; }
done
for v in "$timeout" "$min_disk" $engine_workers; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "NDD_BENCH_TIMEOUT, _MIN_DISK_MB, _ENGINE_WORKERS: whole numbers" >&2; exit 1; }
done
for c in $corpora; do
	case $c in bench | families) ;; *) echo "NDD_BENCH_CORPORA: bench, families" >&2; exit 1 ;; esac
done
for p in $paths; do
	[[ $p =~ ^[a-z_]+$ ]] || { echo "NDD_BENCH_PATHS: words such as sql, engine, auto" >&2; exit 1; }
done
[ -n "$corpora" ] && [ -n "$paths" ] || { echo "NDD_BENCH_CORPORA and NDD_BENCH_PATHS must not be empty" >&2; exit 1; }
case $clusters in on | off) ;; *) echo "NDD_BENCH_CLUSTERS: on or off" >&2; exit 1 ;; esac
[[ $work_mem =~ ^[1-9][0-9]*(kB|MB|GB)$ ]] || { echo "NDD_BENCH_WORK_MEM: a size such as 64MB or 1GB" >&2; exit 1; }

mkdir -p "$NDD_TOP/bench/out"
log=$NDD_TOP/bench/out/discovery_engine-$docs-$work_mem.txt
tsv=$NDD_TOP/bench/out/discovery_engine-$docs-$work_mem.tsv
exec > >(tee "$log") 2>&1

ndd_ensure_packages python3 procps
started=$(date +%s.%N)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# The corpus files.  families: written again only when the program or its
# arguments changed (the key), through a temporary name.
corpus_file() {
	case $1 in
	bench) echo "/tmp/ndd-scale-$docs.tsv" ;;
	families) echo "/tmp/ndd-families-$docs.tsv" ;;
	esac
}
families_corpus() {
	local out=$1 key
	key=$({ cat "$NDD_TOP/bench/corpus_families.py"; echo "--docs $docs"; } | md5sum | cut -d' ' -f1)
	[ -s "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ] && return 0
	say "writing $docs documents to $out"
	rm -f "$out.key"
	python3 "$NDD_TOP/bench/corpus_families.py" --docs "$docs" >"$out.$$" &&
		mv "$out.$$" "$out" && echo "$key" >"$out.key" || { rm -f "$out.$$"; exit 1; }
}
for c in $corpora; do
	case $c in
	bench) ndd_corpus "$docs" "$(corpus_file bench)" --base-chars "$base_chars" ;;
	families) families_corpus "$(corpus_file families)" ;;
	esac
done

ndd_cluster_start
data=$NDD_TMP/data
psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

say "configuring the cluster"
psql <<EOF || exit 1
ALTER SYSTEM SET work_mem = '$work_mem';
ALTER SYSTEM SET maintenance_work_mem = '512MB';
ALTER SYSTEM SET shared_buffers = '2GB';
ALTER SYSTEM SET temp_buffers = '256MB';
ALTER SYSTEM SET max_wal_size = '8GB';
ALTER SYSTEM SET max_parallel_workers_per_gather = 2;
ALTER SYSTEM SET jit = off;
EOF
# shared_buffers needs a restart; 9>&-: the server keeps no lock
ndd_as_owner "$PGBIN/pg_ctl" -D "$data" -l "$NDD_TMP/server.log" -w restart >/dev/null 9>&- ||
	{ cat "$NDD_TMP/server.log" >&2; exit 1; }
postmaster=$(head -n 1 "$data/postmaster.pid")

printf 'corpus\tround\tstep\tpath\tworkers\tseconds\tcpu_s\tn1\tn2\tchecksum\ttemp_written_mb\ttemp_files\tpeak_temp_mb\tbackend_anon_mb\tbackend_shmem_mb\tbackend_peak_mb\tworkers_anon_mb\tload\tstatus\n' >"$tsv"

# run_call CORPUS ROUND STEP PATH WORKERS SETUP BODY AFTER: one psql session
# that runs SETUP, then BODY timed, then AFTER, which \gsets n1, n2 and ck
# (BODY may set them itself); its figures are appended to $tsv.  The
# session prints SET-OK once SETUP has run, so that a failing SET reads
# n/a rather than as a failed call.  Returns 1 when the call failed.
run_call() {
	local corpus=$1 round=$2 step=$3 path=$4 workers=$5 setup=$6 body=$7 after=$8
	local out status=ok spid peaks result load
	say "$corpus: round $round: $step${path:+ $path} (workers $workers)"
	load=$(cut -d' ' -f1 /proc/loadavg)
	rm -f "$NDD_TMP/ready"
	python3 "$NDD_TOP/bench/discovery_engine_sample.py" "$postmaster" "$data" "$NDD_TMP/ready" "$min_disk" \
		>"$NDD_TMP/peaks" &
	spid=$!
	while [ ! -e "$NDD_TMP/ready" ] && kill -0 "$spid" 2>/dev/null; do sleep 0.05; done
	out=$(PGOPTIONS="-c statement_timeout=${timeout}s" psql -At -f - 2>"$NDD_TMP/call.err" <<EOF
$setup
SET max_parallel_workers_per_gather = $workers;
\\echo SET-OK
\\set n1 -
\\set n2 -
\\set ck -
SELECT temp_bytes AS tb0, temp_files AS tf0 FROM pg_stat_database WHERE datname = current_database() \\gset
SELECT clock_timestamp() AS t0 \\gset
$body
SELECT extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) AS s \\gset
$after
-- the backend's temporary-file counts reach pg_stat_database when it next goes idle
SELECT pg_stat_force_next_flush() AS flushed \\gset
SELECT temp_bytes - :tb0 AS tb, temp_files - :tf0 AS tf FROM pg_stat_database WHERE datname = current_database() \\gset
\\echo RESULT :s :n1 :n2 :ck :tb :tf
EOF
	)
	kill -TERM "$spid"
	wait "$spid"
	peaks=$(cat "$NDD_TMP/peaks")
	result=$(echo "$out" | sed -n 's/^RESULT //p')
	if ! echo "$out" | grep -qx SET-OK; then
		status="n/a: $(tr '\n\t' '  ' <"$NDD_TMP/call.err")"
	elif [ -z "$result" ]; then
		status="error: $(tr '\n\t' '  ' <"$NDD_TMP/call.err")"
		grep -q 'statement timeout' "$NDD_TMP/call.err" && status=timeout
	fi
	[ -n "$result" ] || result="- - - - - -"
	read -r s n1 n2 ck tb tf <<<"$result"
	read -r anon shmem sum wanon ptemp cpu <<<"$peaks"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$corpus" "$round" "$step" "$path" "$workers" "$s" "$cpu" "$n1" "$n2" "$ck" \
		"$(awk -v b="$tb" 'BEGIN { if (b == "-") print "-"; else printf "%.0f", b / 1048576 }')" "$tf" \
		"$ptemp" "$anon" "$shmem" "$sum" "$wanon" "$load" "$status" >>"$tsv"
	tail -n 1 "$tsv" | cut -f 3-10,13,16,19 | tr '\t' ' ' >&2
	[ "$status" = ok ]
}

toast="SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS toast
FROM pg_settings WHERE name = 'default_toast_compression' \\gset
SET default_toast_compression = :toast;"
# the checksums: sums of 64-bit hashes, so no sort and any order of rows
pairs_sql="SELECT count(*) AS n1, '-' AS n2,
	left(md5(coalesce(sum(hashint8extended(least(id_a, id_b), hashint8extended(greatest(id_a, id_b),
		hashfloat8extended(similarity, 0))))::text, '')), 12) AS ck
FROM near_duplicate_pairs('big', 'mh', 'id', $threshold) \\gset"
clusters_sql="SELECT count(*) AS n1, count(*) FILTER (WHERE id = cluster_id) AS n2,
	left(md5(coalesce(sum(hashint8extended(id, cluster_id))::text, '')), 12) AS ck
FROM near_duplicate_clusters('big', 'mh', 'id', $threshold) \\gset"

installed=no
guc=
commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)
for corpus in $corpora; do
	file=$(corpus_file "$corpus")
	psql -c 'DROP TABLE IF EXISTS big, big_load' -c 'CHECKPOINT' || exit 1
	case $corpus in
	bench) columns='id int, family int, edit_rate float8, body text' ;;
	families) columns='id int, body text' ;;
	esac
	# plain PostgreSQL so far: the first corpus loads before the install lock
	run_call "$corpus" 0 load '' 2 "$toast" "CREATE UNLOGGED TABLE big_load ($columns);
\\copy big_load FROM '$file'" \
		"SELECT count(*) AS n1, round(avg(octet_length(body))) AS n2 FROM big_load \\gset" ||
		{ say "$corpus: the load failed, skipping this corpus"; continue; }
	if [ "$installed" = no ]; then
		ndd_build_install
		psql -c 'CREATE EXTENSION ndd' || exit 1
		installed=yes
		# after LOAD, ndd's prefix is reserved: a setting it does not define is absent
		# (current_setting: also a setting that pg_settings does not show)
		guc=$(psql -At -c "LOAD 'ndd'" \
			-c "SELECT coalesce(current_setting('ndd.discovery_path', true) || ' by default'
				|| coalesce((SELECT ', one of ' || array_to_string(enumvals, ', ')
					FROM pg_settings WHERE name = 'ndd.discovery_path'), ''), '')") || exit 1
	fi
	run_call "$corpus" 0 sketch '' 2 '' \
		'CREATE TABLE big AS SELECT id, minhash_sketch(body) AS mh FROM big_load;' \
		"SELECT count(*) AS n1, pg_total_relation_size('big') AS n2 FROM big \\gset" ||
		{ say "$corpus: sketching failed, skipping this corpus"; continue; }
	run_call "$corpus" 0 vacuum '' 2 '' 'VACUUM (ANALYZE) big;' '' ||
		{ say "$corpus: VACUUM failed, skipping this corpus"; continue; }
	psql -c 'DROP TABLE big_load' || exit 1

	# the calls of a round, as "step path workers"
	calls=()
	for p in $paths; do
		if [ "$p" = engine ]; then
			for w in $engine_workers; do calls+=("pairs $p $w"); done
		else
			calls+=("pairs $p 2")
		fi
	done
	if [ "$clusters" = on ]; then
		for p in $paths; do calls+=("clusters $p 2"); done
	fi
	declare -A given_up=()
	for ((r = 1; r <= rounds; r++)); do
		order=("${calls[@]}")
		if ((r % 2 == 0)); then
			order=()
			for ((i = ${#calls[@]} - 1; i >= 0; i--)); do order+=("${calls[i]}"); done
		fi
		for c in "${order[@]}"; do
			read -r step p w <<<"$c"
			[ -z "${given_up[$c]:-}" ] || continue
			if [ -n "$guc" ]; then
				setup="LOAD 'ndd';
SET ndd.discovery_path = '$p';"
			elif [ "$p" = sql ]; then
				setup="LOAD 'ndd';"
			else
				printf '%s\t%s\t%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$corpus" "$r" "$step" "$p" "$w" \
					'n/a: no ndd.discovery_path in this build' >>"$tsv"
				given_up[$c]=1
				continue
			fi
			case $step in
			pairs) sql=$pairs_sql ;;
			clusters) sql=$clusters_sql ;;
			esac
			run_call "$corpus" "$r" "$step" "$p" "$w" "$setup" "$sql" '' || given_up[$c]=1
		done
	done
	unset given_up
	psql -c 'DROP TABLE big' || exit 1
done

server=$(psql -At -c 'SHOW server_version')
settings=$(psql -At -c "SELECT string_agg(name || ' = ' || current_setting(name), ', ' ORDER BY name)
FROM pg_settings WHERE name IN ('work_mem', 'maintenance_work_mem', 'shared_buffers', 'temp_buffers',
	'max_wal_size', 'max_parallel_workers_per_gather', 'min_parallel_table_scan_size', 'jit', 'hash_mem_multiplier')")
now=$(date +%s.%N)

echo
echo "ndd discovery engine benchmark: ndd $commit on PostgreSQL $server, $(nproc) cores, $(free -g | awk '/^Mem:/ { print $2 }') GB of memory"
echo "settings: $settings"
echo "ndd.discovery_path: ${guc:-not in this build (sql runs without the SET; every other path is n/a)}"
echo "paths: $paths; engine workers: $engine_workers; rounds: $rounds; threshold $threshold; $docs documents a corpus"
for c in $corpora; do
	case $c in
	bench) echo "corpus bench: $(corpus_file bench) (bench/corpus.py --base-chars $base_chars --docs $docs)" ;;
	families) echo "corpus families: $(corpus_file families) (bench/corpus_families.py --docs $docs)" ;;
	esac
done
echo "load average (1, 5, 15 min): $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
python3 "$NDD_TOP/bench/discovery_engine_report.py" "$tsv"
awk -v s="$started" -v n="$now" 'BEGIN { printf "wall clock: %.0f s in all\n", n - s }'
say "output written to $log and $tsv"
exit 0
