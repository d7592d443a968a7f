#!/usr/bin/env bash
# Draw docs/s-curve.png: the probability that a pair of a given Jaccard
# similarity shares at least one LSH band, 1 - (1 - s^r)^b, for the bandings
# the README talks about.  Needs gnuplot (Debian: gnuplot-nox).
set -eu
cd "$(dirname "$0")"
command -v gnuplot >/dev/null || { echo "Run: apt-get install -y gnuplot-nox" >&2; exit 1; }
gnuplot <<'GP'
set terminal pngcairo size 900,560 font "DejaVu Sans,11"
set output "s-curve.png"
set title "Probability that a pair shares at least one band (K = 128)"
set xlabel "Jaccard similarity of the pair"
set ylabel "probability of becoming a candidate"
set key at graph 0.02, graph 0.97 left top box opaque font ",10"
set grid
set xrange [0:1]
set yrange [0:1.02]
set xtics 0.1
set ytics 0.1
p(s, b, r) = 1 - (1 - s**r)**b
set arrow from 0.8,0 to 0.8,1.02 nohead dashtype 2 lc rgb "#888888"
set arrow from 0.758,0 to 0.758,1.02 nohead dashtype 3 lc rgb "#cc4444"
set label "0.8: default threshold" at 0.805,0.08
set label "exact from 0.758" at 0.58,0.03 textcolor rgb "#cc4444"
plot p(x,32,4)  lw 3 lc rgb "#cc4444" title "minhash\\_ops default: 32 x 4", \
     p(x,9,13)  lw 2 lc rgb "#4477aa" title "lsh\\_params(0.8): 9 x 13", \
     p(x,20,5)  lw 2 lc rgb "#228833" title "20 x 5 (misses 0.036% at 0.8)"
GP
echo "wrote $(pwd)/s-curve.png"
