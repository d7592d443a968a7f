#!/usr/bin/env bash
# Compare benchmarks between two revisions: run one or more bench/*.sh from
# a tree of the base revision and from the current tree, taking turns, and
# print each headline figure's median on both sides and the ratio head/base.
# Figures are reported, never checked: exit 0 means every run ran.
#
#   NDD_BENCH_BASE=<git rev> [NDD_BENCH_ROUNDS=3] bash bench/compare.sh <bench> [more benches]
#
# <bench> is the name of a bench script without .sh (discovery, topk,
# trigger_insert, sketch_speed, ...).  For each bench and each round, the
# script runs once from each tree: base then head in odd rounds, head then
# base in even ones (ABBA), so that a drift of the machine's load over the
# session falls on both sides alike.  Every run is a whole bench script as
# it would be run by hand: it builds ndd in its own tree with that tree's
# Makefile, installs it (under the lock of scripts/common.sh, one per
# installation) and measures on a throwaway cluster.  The runs are one
# after the other: the install lock would serialize them anyway, and two
# runs at once on a small machine would measure each other.
#
#   NDD_BENCH_BASE    the base revision (required), e.g. v0.2.0 or ffd9537^;
#                     checked out with `git worktree add --detach` under
#                     /tmp/ndd-compare-XXXXXX, removed when the script exits
#   NDD_BENCH_HEAD    a revision for the head side, checked out the same way
#                     (e.g. HEAD, to leave uncommitted edits and the
#                     checkout's build files out of it); default: the current
#                     tree itself, as it is, built in place
#   NDD_BENCH_ROUNDS  rounds (default 3): each bench runs this many times
#                     from each tree
#   NDD_BENCH_COMPARE_OUT  where the logs and the summary go (default
#                     bench/out/compare-<date>-<time> of the current tree;
#                     bench/out/ is not tracked)
#   NDD_BENCH_*, NDD_PGBIN, NDD_PG, PG_CFLAGS  passed through to every run
#                     (they are in the environment of both sides alike)
#
# Use NDD_PGBIN (a relocated copy of PostgreSQL, see bench/README.md) on a
# machine whose own installation others use: each run installs its tree's
# ndd.so and extension scripts there, so base and head overwrite each
# other's between runs, under the lock.
#
# The bench scripts are those of each tree: the base revision is measured
# with its own bench/<bench>.sh and .sql.  A bench whose report differs
# between the two revisions gives figures that may not match; the script
# warns when bench/<bench>.* differ.
#
# Each run's whole output is kept as <bench>-<round>-<side>.log, its
# figures as .fig (figure, value, one a line), and summary.txt holds the
# table printed at the end.  What is taken from each report:
#   discovery       every timed step (sketching, loading, keys) in seconds,
#                   the median seconds of near_duplicate_pairs estimate only,
#                   with verify_column and by hand (part a), of pairs and
#                   clusters on the 20k table and on big (part b)
#   topk            index build seconds, p50 and p99 ms of each search
#   trigger_insert  median latency (ms) and TPS per variant and client
#                   count, the within-run cost ratios index/trigger and
#                   index/clusters, and the auto_explain profile (ms per
#                   insert: all, claim tokens, look up)
#   others          every "median ms", "median s", "cpu ms", "seconds",
#                   "build s", p50 and p99 column of the report's tables
# The ratio is head/base for every figure: above 1 is slower for times and
# for the cost ratios, faster for TPS (marked "higher is better").
#
# No -e: a failed run is recorded and the others still run.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

usage() {
	echo "usage: NDD_BENCH_BASE=<rev> [NDD_BENCH_ROUNDS=3] [NDD_BENCH_HEAD=<rev>] bash bench/compare.sh <bench> [more benches]" >&2
	exit 2
}
[ $# -ge 1 ] || usage
summary_only=
if [ "$1" = --summary ]; then
	[ $# -eq 2 ] && [ -s "$2/runs.tsv" ] || { echo "usage: bash bench/compare.sh --summary <directory of an earlier comparison>" >&2; exit 2; }
	summary_only=$(cd "$2" && pwd)
fi
if [ -z "$summary_only" ]; then
base_rev=${NDD_BENCH_BASE:-}
[ -n "$base_rev" ] || { echo "NDD_BENCH_BASE is not set" >&2; usage; }
head_rev=${NDD_BENCH_HEAD:-}
rounds=${NDD_BENCH_ROUNDS:-3}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_ROUNDS must be a positive integer" >&2; exit 2; }
git -C "$NDD_TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	{ echo "$NDD_TOP is not a git checkout: no base revision to compare with" >&2; exit 2; }
base_sha=$(git -C "$NDD_TOP" rev-parse --verify -q "$base_rev^{commit}") ||
	{ echo "NDD_BENCH_BASE: no commit '$base_rev'" >&2; exit 2; }
if [ -n "$head_rev" ]; then
	head_sha=$(git -C "$NDD_TOP" rev-parse --verify -q "$head_rev^{commit}") ||
		{ echo "NDD_BENCH_HEAD: no commit '$head_rev'" >&2; exit 2; }
fi
benches=()
for b in "$@"; do
	b=${b%.sh}
	b=${b#bench/}
	[[ $b =~ ^[a-z0-9_]+$ ]] && [ "$b" != compare ] || { echo "not a bench name: $b" >&2; exit 2; }
	[ -f "$NDD_TOP/bench/$b.sh" ] || { echo "no bench/$b.sh in $NDD_TOP" >&2; exit 2; }
	git -C "$NDD_TOP" cat-file -e "$base_sha:bench/$b.sh" 2>/dev/null ||
		{ echo "no bench/$b.sh at $base_rev" >&2; exit 2; }
	benches+=("$b")
done

out=${NDD_BENCH_COMPARE_OUT:-$NDD_TOP/bench/out/compare-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)

# The trees: worktrees of the revisions, detached, in a directory of ours.
work=$(mktemp -d /tmp/ndd-compare-XXXXXX)
chmod 755 "$work"
trees=()
cleanup() {
	local t
	for t in "${trees[@]}"; do
		git -C "$NDD_TOP" worktree remove --force "$t" >/dev/null 2>&1
	done
	rm -rf "$work"
	git -C "$NDD_TOP" worktree prune >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 130' INT TERM

add_tree() {
	say "checking out $2 ($1) in $work/$3"
	git -C "$NDD_TOP" worktree add --detach -q "$work/$3" "$1" >&2 || exit 1
	trees+=("$work/$3")
	# the bench scripts find the sources by their own path: make sure the
	# tree is the one it claims to be
	[ "$(git -C "$work/$3" rev-parse HEAD)" = "$1" ] || { echo "worktree $work/$3 is not at $1" >&2; exit 1; }
}
add_tree "$base_sha" "$base_rev" base
base_dir=$work/base
if [ -n "$head_rev" ]; then
	add_tree "$head_sha" "$head_rev" head
	head_dir=$work/head
else
	head_dir=$NDD_TOP
fi
head_desc=$(git -C "$head_dir" describe --always --dirty 2>/dev/null || echo unknown)
base_desc=$(git -C "$base_dir" describe --always --dirty 2>/dev/null || echo unknown)

fi # not --summary

# ---------------------------------------------------------------------------
# The figures of one report: "label<TAB>value" lines.  psql's aligned tables:
# a header line, a line of dashes and plus signs, rows, and a blank line.
extract() { # bench log
	awk -v bench="$1" -F'|' '
	function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
	function num(s) { return s ~ /^-?[0-9]+(\.[0-9]+)?$/ }
	# a figure once per report (discovery prints its first step in two tables)
	function emit(label, v) { if (num(v) && !(label in done)) { done[label] = 1; printf "%s\t%s\n", label, v } }
	# a figure column of any report: times and percentiles
	function figcol(h) { return h ~ /^(median s|median ms|cpu ms|seconds|build s|p50|p99)$/ }
	{ sub(/\r$/, "") }
	# the table ends at a blank line (or at anything that is not a row)
	intable && ($0 ~ /^[ \t]*$/ || $0 ~ /^\(/ || NF < 2) { intable = 0 }
	# remember the last line that was not part of a table: it names the
	# table that follows (trigger_insert echoes a title before each)
	!intable && /^[-+]+$/ && prev != "" && index(prev, "|") {
		n = split(prev, hh, "|")
		for (i = 1; i <= n; i++) hdr[i] = trim(hh[i])
		nh = n; intable = 1; title = ptitle; next
	}
	intable {
		for (i = 1; i <= NF; i++) cell[i] = trim($i)
		row()
		next
	}
	{ if ($0 !~ /\|/ && $0 !~ /^[ \t]*$/) ptitle = $0; prev = $0 }

	function row(   i, label, first, c, v, unit) {
		if (bench == "trigger_insert") { trig(); return }
		# the label: the text cells before the first figure column (one
		# letter cells, such as discovery'"'"'s part, left out)
		label = ""; first = 0
		for (i = 1; i <= nh; i++) if (figcol(hdr[i])) { first = i; break }
		if (!first) return
		for (i = 1; i < first; i++)
			if (!num(cell[i]) && length(cell[i]) > 1) label = label (label == "" ? "" : " / ") cell[i]
		for (i = first; i <= nh; i++) {
			if (!figcol(hdr[i])) continue
			unit = hdr[i] ~ / s$|^seconds$/ ? "s" : "ms"
			emit(label " [" (hdr[i] ~ /^p[0-9]+$/ ? hdr[i] " " : "") unit "]", cell[i])
		}
	}
	# trigger_insert: tables with one column per variant, named by their title
	function trig(   i, v, what) {
		if (hdr[1] == "clients") {
			if (title ~ /^Median TPS/) what = "tps, higher is better"
			else if (title ~ /^Median latency/) what = "latency ms"
			else if (title ~ /^Cost ratios/) what = "ratio"
			else return
			for (i = 2; i <= nh; i++) {
				v = cell[i]; sub(/ .*/, "", v)
				if (what == "ratio" && hdr[i] !~ /^index\/(trigger|clusters)$/) continue
				if (what == "ratio")
					emit(hdr[i] " TPS, " cell[1] " clients [x, same run]", v)
				else
					emit(hdr[i] ", " cell[1] " clients [" what "]", v)
			}
		} else if (hdr[1] == "variant" && hdr[2] == "INSERT in all") {
			# the whole insert of every variant; its trigger'"'"'s two
			# statements where there is a trigger ("the rest" is the difference)
			for (i = 2; i <= nh; i++)
				if (hdr[i] != "the rest")
					emit("profile " cell[1] ": " hdr[i] " [ms per insert]", cell[i])
		}
	}' "$2"
}

# --summary DIR: the figures of the logs in DIR taken again (after a change
# to extract, say) and the summary printed, without running anything
if [ -n "$summary_only" ]; then
	out=$summary_only
	mapfile -t benches < <(cut -f1 "$out/runs.tsv" | awk '!seen[$0]++')
	rounds=$(cut -f2 "$out/runs.tsv" | sort -n | tail -n 1)
	for f in "$out"/*-[0-9]*-base.log "$out"/*-[0-9]*-head.log; do
		[ -f "$f" ] || continue
		b=$(basename "$f")
		extract "${b%-[0-9]*-*.log}" "$f" >"$f.fig"
	done
fi

if [ -z "$summary_only" ]; then
say "comparing ${benches[*]}: base $base_rev ($base_desc, $base_dir) against head ${head_rev:-the current tree} ($head_desc, $head_dir), $rounds rounds; logs in $out"
{
	echo "bench/compare.sh $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) CPUs"
	echo "base: $base_rev = $base_desc ($base_sha)"
	echo "head: ${head_rev:-current tree} = $head_desc${head_sha:+ ($head_sha)}"
	echo "rounds: $rounds; PostgreSQL: ${NDD_PGBIN:-/usr/lib/postgresql/$PGVER/bin}"
	env | grep -E '^NDD_BENCH_' | grep -vE '^NDD_BENCH_(BASE|HEAD|ROUNDS|COMPARE_OUT)=' | sort | sed 's/^/knob: /'
} >"$out/header.txt"

for b in "${benches[@]}"; do
	for f in "$b.sh" "$b.sql" "$b"; do
		if [ -e "$head_dir/bench/$f" ] || git -C "$NDD_TOP" cat-file -e "$base_sha:bench/$f" 2>/dev/null; then
			diff -rq "$base_dir/bench/$f" "$head_dir/bench/$f" >/dev/null 2>&1 ||
				say "warning: bench/$f differs between base and head; each side runs its own"
		fi
	done
done

failed=0
run_one() { # bench round side dir
	local b=$1 r=$2 side=$3 dir=$4 log t0 status
	log=$out/$b-$r-$side.log
	say "$b round $r/$rounds: $side ($(cut -d' ' -f1-3 /proc/loadavg) load)"
	t0=$(date +%s)
	# the runs' own output goes to the log only; stdin from /dev/null
	bash "$dir/bench/$b.sh" </dev/null >"$log" 2>&1
	status=$?
	printf '%s\t%s\t%s\t%s\t%s\n' "$b" "$r" "$side" "$status" "$(($(date +%s) - t0))" >>"$out/runs.tsv"
	extract "$b" "$log" >"$log.fig"
	if [ $status -ne 0 ]; then
		failed=$((failed + 1))
		say "$b round $r $side exited with $status after $(($(date +%s) - t0)) s; see $log"
		tail -n 5 "$log" >&2
	else
		say "$b round $r $side: $(($(date +%s) - t0)) s, $(wc -l <"$log.fig") figures; measured $(grep -m1 -oE '(ndd|commit) [0-9a-f]{7,}(-[0-9a-z-]+)?' "$log" | head -1)"
	fi
}
: >"$out/runs.tsv"
for b in "${benches[@]}"; do
	for r in $(seq "$rounds"); do
		if [ $((r % 2)) -eq 1 ]; then
			run_one "$b" "$r" base "$base_dir"
			run_one "$b" "$r" head "$head_dir"
		else
			run_one "$b" "$r" head "$head_dir"
			run_one "$b" "$r" base "$base_dir"
		fi
	done
done
fi # not --summary

# ---------------------------------------------------------------------------
# The summary: per bench, each figure in the order of the reports, the
# median of each side (of the runs that printed it), the ratio and every
# run's value (base runs, then head runs, in round order).
summarize() { # bench
	local b=$1 r side
	for r in $(seq "$rounds"); do
		for side in base head; do
			[ -f "$out/$b-$r-$side.log.fig" ] &&
				awk -v s="$side" -v r="$r" -F'\t' '{ print s "\t" r "\t" $0 }' "$out/$b-$r-$side.log.fig"
		done
	done | awk -F'\t' -v b="$b" '
	function median(list,   a, n, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
		if (n == 0) return ""
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{
		if (!($3 in seen)) { seen[$3] = 1; order[++nf] = $3 }
		v[$3, $1] = v[$3, $1] (v[$3, $1] == "" ? "" : " ") $4
	}
	END {
		printf "%s (base median | head median | head/base | runs base ; head)\n", b
		for (i = 1; i <= nf; i++) {
			f = order[i]; mb = median(v[f, "base"]); mh = median(v[f, "head"])
			ratio = (mb != "" && mh != "" && mb + 0 != 0) ? sprintf("%.2f", mh / mb) : "n/a"
			printf "  %-62s %10s %10s %6s   %s ; %s\n", f, mb == "" ? "-" : mb, mh == "" ? "-" : mh, ratio,
				v[f, "base"], v[f, "head"]
		}
		if (nf == 0) print "  (no figures extracted: see the logs)"
	}'
}
{
	cat "$out/header.txt"
	echo "runs (bench, round, side, exit status, seconds):"
	sed 's/^/  /' "$out/runs.tsv"
	echo
	for b in "${benches[@]}"; do
		summarize "$b"
		echo
	done
	echo "head/base above 1: head slower (times, cost ratios) or faster (TPS, higher is better)."
	echo "logs: $out"
} | tee "$out/summary.txt"

[ "${failed:-0}" -eq 0 ] || { say "$failed run(s) failed: see the logs in $out"; exit 1; }
exit 0
