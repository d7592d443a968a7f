#!/usr/bin/env bash
# Draw docs/scale.png from the figures of bench/scale.sh: seconds against
# documents, both axes logarithmic, one line per step (sketch, vacuum,
# pairs, clusters, and the load for reference), with lines of slope n and
# n log n through the first file's smallest pairs, and a mark where a step
# was cancelled.  Needs gnuplot (Debian: gnuplot-nox; installed as bench
# scripts install their packages).
#
#   bash docs/scale_plot.sh bench/out/scale-<sizes>-<work_mem>.tsv [another]
#
# A second file (a run with another work_mem, say) is drawn dashed, its
# sketching, pairs and clusters only.  Without an argument the script takes
# the newest bench/out/scale-*.tsv.
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

[ $# -le 2 ] || { echo "usage: bash docs/scale_plot.sh [scale-....tsv [another]]" >&2; exit 2; }
[ $# -ge 1 ] || set -- "$(ls -t "$NDD_TOP"/bench/out/scale-*.tsv 2>/dev/null | head -n 1)"
for f in "$@"; do
	[ -s "$f" ] || { echo "no figures in '$f': run bench/scale.sh first, or name its .tsv" >&2; exit 1; }
done
ndd_ensure_packages gnuplot-nox

tmp=$(mktemp -d /tmp/ndd-scale-plot-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
plot=
k=0
for f in "$@"; do
	k=$((k + 1))
	# work_mem from the name: scale-<sizes>-<work_mem>.tsv
	wm=$(basename "$f" .tsv | sed 's/.*-//')
	# one file per step, the sizes in order; the cancelled or failed steps apart
	awk -F'\t' -v d="$tmp/$k" 'NR > 1 { print $1, $3 > (d "-" $2 ($12 == "ok" ? "" : "-failed") ".dat") }' "$f"
	if [ "$k" = 1 ]; then
		[ -s "$tmp/1-pairs.dat" ] || { echo "$f has no pairs figures" >&2; exit 1; }
		read -r n0 t0 < <(head -n 1 "$tmp/1-pairs.dat")
		dt=1
	else
		dt=2
	fi
	add() {
		local step=$1 color=$2 pt=$3 lw=$4 title=$5
		[ -s "$tmp/$k-$step.dat" ] &&
			plot="$plot${plot:+, }\"$tmp/$k-$step.dat\" using 1:2 with linespoints lc rgb \"$color\" pt $pt lw $lw dt $dt title \"$title, work\\\\_mem $wm\""
		[ -s "$tmp/$k-$step-failed.dat" ] &&
			plot="$plot${plot:+, }\"$tmp/$k-$step-failed.dat\" using 1:2 with points lc rgb \"$color\" pt 6 ps 2.5 lw 2 title \"$title, work\\\\_mem $wm: cancelled by the free-disk guard after\""
	}
	add pairs '#cc4444' 7 3 'near\\_duplicate\\_pairs(0.8)'
	add clusters '#4477aa' 5 3 'near\\_duplicate\\_clusters(0.8)'
	add sketch '#228833' 9 2 'sketching'
	if [ "$k" = 1 ]; then
		add vacuum '#999933' 13 1 'VACUUM (ANALYZE)'
		add load '#888888' 11 1 'COPY into the staging table (not in the target)'
	fi
done

gnuplot <<GP || exit 1
set terminal pngcairo size 1000,820 font "DejaVu Sans,11"
set output "$NDD_TOP/docs/scale.png"
set title "ndd: cost against the number of documents (bench/scale.sh, 2 cores)"
set xlabel "documents"
set ylabel "seconds (wall clock)"
set logscale xy
set grid xtics ytics mxtics mytics
set format x "%.0s%c"
set offsets graph 0.04, graph 0.04, 0, 0
set key below left Left reverse box font ",9" maxcols 2 height 1.5
set arrow from graph 0, first 300 to graph 1, first 300 nohead dashtype 3 lc rgb "#aa3377"
set label "target at 10M: 300 s" at graph 0.02, first 340 textcolor rgb "#aa3377"
n0 = $n0.0
t0 = $t0
lin(x) = t0 * x / n0
nlogn(x) = t0 * x * log(x) / (n0 * log(n0))
plot $plot, \
     lin(x) dt 4 lw 1 lc rgb "#000000" title "slope n (through the first pairs)", \
     nlogn(x) dt 2 lw 1 lc rgb "#000000" title "slope n log n"
GP
echo "wrote $NDD_TOP/docs/scale.png from $*"
