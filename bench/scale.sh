#!/usr/bin/env bash
# Benchmark: how the cost of discovery grows with the number of documents.
# For each size N of NDD_BENCH_SIZES, on one throwaway cluster, one size
# after the other (the tables of the last size are dropped first):
#   - load: the first N rows of one short-document corpus (see below)
#     \copy'd into an unlogged staging table big_load (timed, not part of
#     the target);
#   - sketch: CREATE TABLE big AS SELECT id, family, minhash_sketch(body)
#     FROM big_load, with up to 2 parallel workers, then count(*) of big
#     (a few seconds at 10M); big_load is dropped after it;
#   - vacuum: VACUUM (ANALYZE) big, as a user would after a bulk write;
#   - key (only when NDD_BENCH_STEPS names it): ALTER TABLE big ADD
#     PRIMARY KEY (id), which the verification of pairs can then use;
#   - pairs: SELECT count(*) FROM near_duplicate_pairs('big', 'mh', 'id', 0.8);
#   - clusters: SELECT count(*), count(DISTINCT cluster_id) FROM
#     near_duplicate_clusters('big', 'mh', 'id', 0.8).
# Each step is one psql session, and for each it prints:
#   - seconds (wall clock of the session);
#   - peak memory: the largest sum, over every process of the cluster
#     (the backend, its parallel workers, the background processes), of
#     RssAnon in /proc/PID/status, sampled every 0.2 s.  RssAnon is the
#     private memory a process has touched: what work_mem,
#     maintenance_work_mem and temp_buffers bound, and what an
#     out-of-memory kill weighs.  The shared buffers (RssShmem, at most
#     shared_buffers) are left out, as they are the same for every step;
#   - the least MemAvailable of the machine while the step ran;
#   - temporary files: pg_stat_database.temp_bytes and temp_files written
#     (sorts and hashes that spilled), and the peak disk held by temporary
#     files plus temporary tables (near_duplicate_pairs and _clusters work
#     in temporary tables, which temp_bytes does not count), sampled every
#     second;
#   - the load average (1 minute) before and after it.
# Then, per step, the growth exponent between consecutive sizes,
# log(t2/t1) / log(n2/n1), beside that of n log n; and the totals at the
# largest size (sketch + vacuum + pairs, and the same with clusters)
# against the target of issue 29: 10M documents in 5 minutes.
#
# The corpus: bench/corpus.py --base-chars NDD_BENCH_BASE_CHARS --docs
# (the largest size), kept in /tmp/ndd-scale-<largest>.tsv by ndd_corpus;
# each size loads its first N rows, which are the corpus corpus.py would
# write for N (the generator draws the same numbers in the same order).
# Every size therefore has documents of the same length.  Bases are cut or
# assembled to about 600 characters (75 words; about 750 bytes a row with
# the copies' edits and boilerplate), so that 10M documents fit on a
# machine with 60 GB free: 7.5 GB of text.  Half the bases get 3 edited
# copies.
#
# With NDD_BENCH_EXPLAIN=on (the default), auto_explain logs the plan,
# with row counts but no per-node timing (log_timing off), and the
# duration of every statement that takes 2 s or more, the statements ndd
# runs inside pairs and clusters included.  They are written to
# bench/out/scale-explain-<N>-<work_mem>.txt.
#
#   NDD_BENCH_SIZES       sizes, in increasing order
#                         (default "100000 1000000 3000000 10000000")
#   NDD_BENCH_BASE_CHARS  length of a base document in characters (default 600)
#   NDD_BENCH_STEPS       steps after load and sketch, in order: any of
#                         vacuum, key, pairs, clusters (default "vacuum pairs
#                         clusters")
#   NDD_BENCH_EXPLAIN     on or off (default on)
#   NDD_BENCH_TIMEOUT     seconds a step may take before it is cancelled and
#                         the larger sizes skipped (default 0: none)
#   NDD_BENCH_MIN_FREE_MB cancel a step when the machine has less
#                         MemAvailable than this (default 2048)
#   NDD_BENCH_MIN_DISK_MB cancel a step when the file system of the cluster
#                         has less free space than this (default 4096), so
#                         that a step that outgrows the disk fails alone
#                         instead of filling it for everyone
#   NDD_BENCH_WORK_MEM    work_mem (default 64MB)
#   NDD_BENCH_DROP_CORPUS on: delete the corpus file once the largest size
#                         is loaded, to give its room to the temporary files
#                         (default off; the next run writes it again, about
#                         2.5 minutes for 10M documents)
#
# Settings (printed with the figures): work_mem NDD_BENCH_WORK_MEM,
# maintenance_work_mem 512MB, shared_buffers 2GB, temp_buffers 256MB,
# max_wal_size 8GB, max_parallel_workers_per_gather 2, jit off,
# log_temp_files 0.  The cluster has no temp_file_limit: the free-space
# guard above stops a step instead (temporary tables, which
# temp_file_limit does not count, are most of what pairs writes).
#
# The output is also written to bench/out/: the report as
# scale-<sizes>-<work_mem>.txt, and the figures as
# scale-<sizes>-<work_mem>.tsv (one row per size and step), which
# docs/scale_plot.sh draws.
#
# No -e: common.sh's helpers test with `[ ] &&` and its EXIT trap must run
# to the end to stop the cluster, so failures are handled one by one.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

sizes=${NDD_BENCH_SIZES:-100000 1000000 3000000 10000000}
base_chars=${NDD_BENCH_BASE_CHARS:-600}
steps=${NDD_BENCH_STEPS:-vacuum pairs clusters}
explain=${NDD_BENCH_EXPLAIN:-on}
timeout=${NDD_BENCH_TIMEOUT:-0}
min_free=${NDD_BENCH_MIN_FREE_MB:-2048}
min_disk=${NDD_BENCH_MIN_DISK_MB:-4096}
work_mem=${NDD_BENCH_WORK_MEM:-64MB}
drop_corpus=${NDD_BENCH_DROP_CORPUS:-off}
prev=0
for n in $sizes; do
	[[ $n =~ ^[1-9][0-9]*$ ]] && [ "$n" -gt "$prev" ] ||
		{ echo "NDD_BENCH_SIZES: positive integers in increasing order" >&2; exit 1; }
	prev=$n
done
largest=$prev
[ "$largest" -gt 0 ] || { echo "NDD_BENCH_SIZES is empty" >&2; exit 1; }
for v in "$base_chars" "$timeout" "$min_free" "$min_disk"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "NDD_BENCH_BASE_CHARS, _TIMEOUT, _MIN_FREE_MB, _MIN_DISK_MB: whole numbers" >&2; exit 1; }
done
[[ $work_mem =~ ^[1-9][0-9]*(kB|MB|GB)$ ]] || { echo "NDD_BENCH_WORK_MEM: a size such as 64MB or 1GB" >&2; exit 1; }
case $drop_corpus in on | off) ;; *) echo "NDD_BENCH_DROP_CORPUS: on or off" >&2; exit 1 ;; esac
for s in $steps; do
	case $s in vacuum | key | pairs | clusters) ;; *) echo "NDD_BENCH_STEPS: vacuum, key, pairs, clusters" >&2; exit 1 ;; esac
done
case $explain in on | off) ;; *) echo "NDD_BENCH_EXPLAIN: on or off" >&2; exit 1 ;; esac
corpus=/tmp/ndd-scale-$largest.tsv

mkdir -p "$NDD_TOP/bench/out"
tag=$(echo "$sizes" | tr -s ' ' '-')-$work_mem
log=$NDD_TOP/bench/out/scale-$tag.txt
tsv=$NDD_TOP/bench/out/scale-$tag.tsv
exec > >(tee "$log") 2>&1

ndd_ensure_packages python3 procps
started=$(date +%s.%N)
ndd_corpus "$largest" "$corpus" --base-chars "$base_chars"

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
ALTER SYSTEM SET log_temp_files = 0;
ALTER SYSTEM SET log_line_prefix = '%m [%p] ';
EOF
if [ "$explain" = on ]; then
	psql <<EOF || exit 1
LOAD 'auto_explain';
ALTER SYSTEM SET session_preload_libraries = 'auto_explain';
ALTER SYSTEM SET auto_explain.log_min_duration = '2s';
ALTER SYSTEM SET auto_explain.log_nested_statements = on;
ALTER SYSTEM SET auto_explain.log_analyze = on;
ALTER SYSTEM SET auto_explain.log_timing = off;
EOF
fi
# shared_buffers needs a restart; 9>&-: the server keeps no lock
ndd_as_owner "$PGBIN/pg_ctl" -D "$data" -l "$NDD_TMP/server.log" -w restart >/dev/null 9>&- ||
	{ cat "$NDD_TMP/server.log" >&2; exit 1; }
postmaster=$(head -n 1 "$data/postmaster.pid")

ndd_build_install
psql -c 'CREATE EXTENSION ndd' || exit 1
commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)
settings=$(psql -At -c "SELECT string_agg(name || ' = ' || current_setting(name), ', ' ORDER BY name)
FROM pg_settings WHERE name IN ('work_mem', 'maintenance_work_mem', 'shared_buffers', 'temp_buffers',
	'max_wal_size', 'max_parallel_workers_per_gather', 'jit', 'hash_mem_multiplier', 'log_temp_files')")
server=$(psql -At -c 'SHOW server_version')

# The sampler: every 0.2 s, the sum of RssAnon over the cluster's processes
# and the machine's MemAvailable; every second, the bytes of temporary
# files and temporary tables, and the free space.  It prints the peaks when
# it gets SIGTERM, and cancels the cluster's queries (SIGINT to the client
# backends) when MemAvailable falls below NDD_BENCH_MIN_FREE_MB or the free
# space below NDD_BENCH_MIN_DISK_MB.
sampler='
import os, signal, sys, time
pm, data, min_free, ready = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]) * 1024, sys.argv[4]
min_disk = int(sys.argv[5]) * 1048576
peak_anon, least_avail, peak_temp, stopped, cancelled = 0, 1 << 62, 0, False, False
def stop(*_):
    global stopped
    stopped = True
signal.signal(signal.SIGTERM, stop)
def cancel(why):
    global cancelled
    cancelled = True
    for p in children():        # the client backends: "postgres: user db [local] ..."
        try:
            with open("/proc/%s/cmdline" % p) as f:
                if "[local]" in f.read():
                    os.kill(int(p), signal.SIGINT)
        except OSError:
            pass
    print("sampler: %s, queries cancelled" % why, file=sys.stderr)
def children():
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/stat" % p) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pm:
                        out.append(p)
            except (OSError, IndexError, ValueError):
                pass
    return out
def temp_bytes():
    total = 0
    for top, dirs, files in os.walk(os.path.join(data, "base")):
        # pgsql_tmp and what is under it (a parallel operation's shared file set)
        tmp = "pgsql_tmp" in top.split(os.sep)
        for f in files:
            if tmp or (f.startswith("t") and "_" in f):
                try:
                    total += os.stat(os.path.join(top, f)).st_size
                except OSError:
                    pass
    return total
i = 0
kids = children()
while not stopped:
    if i % 5 == 0:
        kids = children()
        peak_temp = max(peak_temp, temp_bytes())
        st = os.statvfs(data)
        if st.f_bavail * st.f_frsize < min_disk and i > 0 and not cancelled:
            cancel("free disk %d MB < %d MB" % (st.f_bavail * st.f_frsize >> 20, min_disk >> 20))
    anon = 0
    for p in kids + [str(pm)]:
        try:
            with open("/proc/%s/status" % p) as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        anon += int(line.split()[1])
        except OSError:
            pass
    peak_anon = max(peak_anon, anon)
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                avail = int(line.split()[1])
    least_avail = min(least_avail, avail)
    if avail < min_free and i > 0 and not cancelled:
        cancel("MemAvailable %d MB < %d MB" % (avail >> 10, min_free >> 10))
    if i == 0:
        open(ready, "w").close()
    time.sleep(0.2)
    i += 1
print("%.0f %.0f %.0f" % (peak_anon / 1024, least_avail / 1024, peak_temp / 1048576))
'

loadavg() { cut -d' ' -f1 /proc/loadavg; }
temp_counters() {
	psql -At -F' ' -c "SELECT temp_bytes, temp_files FROM pg_stat_database WHERE datname = current_database()"
}

printf 'size\tstep\tseconds\tpeak_anon_mb\tleast_avail_mb\ttemp_written_mb\ttemp_files\tpeak_temp_disk_mb\tload_before\tload_after\tresult\tstatus\n' >"$tsv"
failed=

# run_step N NAME SQL: one timed psql session, its figures appended to $tsv
run_step() {
	local n=$1 name=$2 sql=$3 t0 t1 tb0 tf0 tb1 tf1 l0 l1 out status=ok spid peaks
	say "$n: $name"
	read -r tb0 tf0 < <(temp_counters)
	l0=$(loadavg)
	rm -f "$NDD_TMP/ready"
	python3 -c "$sampler" "$postmaster" "$data" "$min_free" "$NDD_TMP/ready" "$min_disk" >"$NDD_TMP/peaks" &
	spid=$!
	# the step starts once the sampler has taken its first sample
	while [ ! -e "$NDD_TMP/ready" ] && kill -0 "$spid" 2>/dev/null; do sleep 0.05; done
	t0=$(date +%s.%N)
	out=$(PGOPTIONS="-c statement_timeout=${timeout}s" psql -At -F' ' -f - <<<"$sql" 2>"$NDD_TMP/step.err") ||
		status="error: $(tr '\n' ' ' <"$NDD_TMP/step.err")"
	t1=$(date +%s.%N)
	kill -TERM "$spid"
	wait "$spid"
	peaks=$(cat "$NDD_TMP/peaks")
	l1=$(loadavg)
	read -r tb1 tf1 < <(temp_counters)
	out=$(echo "$out" | tail -n 1)
	printf '%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$name" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
		"$(echo "$peaks" | cut -d' ' -f1)" "$(echo "$peaks" | cut -d' ' -f2)" \
		"$(awk -v a="$tb0" -v b="$tb1" 'BEGIN { printf "%.0f", (b - a) / 1048576 }')" \
		"$((tf1 - tf0))" "$(echo "$peaks" | cut -d' ' -f3)" "$l0" "$l1" "$out" "$status" >>"$tsv"
	tail -n 1 "$tsv" >&2
	[ "$status" = ok ] || failed="$n $name: $status"
}

toast="SELECT CASE WHEN 'lz4' = ANY (enumvals) THEN 'lz4' ELSE 'pglz' END AS toast
FROM pg_settings WHERE name = 'default_toast_compression' \\gset
SET default_toast_compression = :toast;"
for n in $sizes; do
	[ -z "$failed" ] || { say "skipping $n after a failure ($failed)"; continue; }
	psql -c 'DROP TABLE IF EXISTS big, big_load' -c 'CHECKPOINT' || exit 1
	mark=$(wc -c <"$NDD_TMP/server.log")
	run_step "$n" load "$toast
CREATE UNLOGGED TABLE big_load (id int, family int, edit_rate float8, body text);
\\copy big_load FROM PROGRAM 'head -n $n $corpus'
SELECT count(*) FROM big_load;"
	run_step "$n" sketch "CREATE TABLE big AS SELECT id, family, minhash_sketch(body) AS mh FROM big_load;
SELECT count(*) FROM big;"
	sizes_line=$(psql -At -F' ' -c "SELECT round(avg(octet_length(body))), pg_size_pretty(pg_total_relation_size('big_load')),
	pg_size_pretty(pg_total_relation_size('big')) FROM big_load")
	echo "$n: avg bytes a document, staging table, sketch table: $sizes_line" >>"$NDD_TMP/sizes"
	psql -c 'DROP TABLE big_load' || exit 1
	if [ "$n" = "$largest" ] && [ "$drop_corpus" = on ]; then
		say "deleting $corpus (NDD_BENCH_DROP_CORPUS=on)"
		rm -f "$corpus" "$corpus.key"
	fi
	for s in $steps; do
		[ -z "$failed" ] || break
		case $s in
		vacuum) run_step "$n" vacuum 'VACUUM (ANALYZE) big' ;;
		key) run_step "$n" key 'ALTER TABLE big ADD PRIMARY KEY (id)' ;;
		pairs) run_step "$n" pairs "SELECT count(*) FROM near_duplicate_pairs('big', 'mh', 'id', 0.8)" ;;
		clusters) run_step "$n" clusters "SELECT count(*), count(DISTINCT cluster_id) FROM near_duplicate_clusters('big', 'mh', 'id', 0.8)" ;;
		esac
	done
	if [ "$explain" = on ]; then
		tail -c +"$((mark + 1))" "$NDD_TMP/server.log" >"$NDD_TOP/bench/out/scale-explain-$n-$work_mem.txt"
	fi
done
psql -c 'DROP TABLE IF EXISTS big, big_load' >/dev/null

# the report
now=$(date +%s.%N)
echo
echo "ndd scale benchmark: ndd $commit on PostgreSQL $server, $(nproc) cores, $(free -g | awk '/^Mem:/ { print $2 }') GB of memory"
echo "settings: $settings"
echo "corpus: $corpus (bench/corpus.py --base-chars $base_chars, 3 copies for half the bases), the first N rows for each size"
cat "$NDD_TMP/sizes"
echo "peak anon: the largest sum of RssAnon over the cluster's processes (sampled every 0.2 s); least avail: the machine's least MemAvailable"
echo "temp written: pg_stat_database.temp_bytes; peak temp disk: temporary files and temporary tables on disk at once (sampled every second)"
echo
awk -F'\t' 'NR == 1 { printf "%10s %-8s %9s %10s %11s %12s %6s %14s %6s %6s %s\n", "docs", "step", "seconds", "peak anon", "least avail", "temp written", "files", "peak temp disk", "load0", "load1", "result"; next }
	{ printf "%10s %-8s %9.1f %7s MB %8s MB %9s MB %6s %11s MB %6s %6s %s%s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, ($12 == "ok" ? "" : "  " $12) }' "$tsv"
echo
echo "growth exponents, log(t2/t1) / log(n2/n1) per step (n log n gives a little more than 1)"
awk -F'\t' 'NR > 1 && $12 == "ok" { t[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; ns[++k] = $1 } steps[$2] = 1 }
	END {
		for (i = 2; i <= k; i++) {
			a = ns[i - 1]; b = ns[i]
			line = sprintf("%10s -> %-10s n log n %.2f", a, b, log(b * log(b) / (a * log(a))) / log(b / a))
			split("load sketch vacuum key pairs clusters", order, " ")
			for (j = 1; j <= 6; j++) {
				s = order[j]
				if (((a, s) in t) && ((b, s) in t) && t[a, s] > 0)
					line = line sprintf("  %s %.2f", s, log(t[b, s] / t[a, s]) / log(b / a))
			}
			print line
		}
	}' "$tsv"
awk -F'\t' -v n="$largest" 'NR > 1 && $1 == n { t[$2] = $3; ok[$2] = ($12 == "ok") }
	END {
		d = t["sketch"] + t["vacuum"] + t["key"] + t["pairs"]
		c = t["sketch"] + t["vacuum"] + t["key"] + t["clusters"]
		printf "at %d documents: sketch + vacuum%s + pairs %s; the same with clusters %s\n", n, (("key" in t) ? " + key" : ""),
			(ok["pairs"] && ok["sketch"] ? sprintf("%.0f s (target 300 s: %s)", d, d <= 300 ? "met" : "NOT met") : "did not finish"),
			(ok["clusters"] && ok["sketch"] ? sprintf("%.0f s", c) : "did not finish")
	}' "$tsv"
[ -z "$failed" ] || echo "failed: $failed"
awk -v s="$started" -v n="$now" 'BEGIN { printf "wall clock: %.0f s in all\n", n - s }'
say "output written to $log and $tsv"
exit 0
