#!/usr/bin/env bash
# Benchmark: containment search through a containment_ops index, and the
# contamination check, on documents of mixed length made of real text.
#
# The documents: bench/corpus.py's rows (Debian licence and copyright
# text, with its planted near-duplicates) joined in runs of 1 to
# NDD_BENCH_RUN_MAX (14), so that documents hold about 600 to 8,000 words.
# The queries: passages of 50 to 500 words cut from the documents, whole or
# with the last 10%, 30% or 50% of their words replaced, searched at
# containment 0.5, 0.7 and 0.9 (NDD_BENCH_QUERIES each).  The items of the
# contamination check: NDD_BENCH_ITEMS passages, one in ten cut from the
# documents and the rest from rows held out of them.
#
# Long passages at low thresholds (NDD_BENCH_LONG): passages of 10,000 and
# 50,000 words, whole or with their last 10% or 30% replaced, searched at
# 0.5 and 0.8, on two shapes of text: the documents above (a passage runs
# from one of the longest on through the next ones), and NDD_BENCH_VARIED
# documents of 20 to 60,000 words (log-uniform) of random words from a
# vocabulary of 50,000, each passage cut from one long enough.  A passage
# of more than 2,048 / (1 - t) shingles leaves a row no key it must match:
# these are the searches that size keys narrow.
#
# Prints the index's size and build time, the latency of a search (p50 and
# p99 of each threshold, with the rows it returns and the rows its recheck
# removed), a sequential scan's time for the same queries, the median of
# the long passages' searches (as planned, through the index, by scan), the
# accuracy of the sketch-based design (LSH Ensemble's partitions by size,
# at their best) against the index's exact answers, and the time of the
# contamination check.  Figures are reported, never checked: exit 0 means
# it ran.
#
#   NDD_BENCH_DOCS     documents (default 5000)
#   NDD_BENCH_QUERIES  searches per threshold (default 100)
#   NDD_BENCH_ITEMS    items of the contamination check (default 10000)
#   NDD_BENCH_SCANS    searches timed by sequential scan (default 5)
#   NDD_BENCH_RUN_MAX  corpus rows a document joins at most (default 14;
#                      3 keeps a million documents within this disk)
#   NDD_BENCH_SKETCHES 0 leaves out the sketch-based design (default 1)
#   NDD_BENCH_LONG     searches of each long-passage case (default 5; 0
#                      leaves the long passages out)
#   NDD_BENCH_VARIED   documents of varied length for them (default 2000)
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-5000}
queries=${NDD_BENCH_QUERIES:-100}
items=${NDD_BENCH_ITEMS:-10000}
scans=${NDD_BENCH_SCANS:-5}
run_max=${NDD_BENCH_RUN_MAX:-14}
sketches=${NDD_BENCH_SKETCHES:-1}
long=${NDD_BENCH_LONG:-5}
varied=${NDD_BENCH_VARIED:-2000}
[[ $long =~ ^[0-9]+$ ]] || { echo "NDD_BENCH_LONG must be an integer" >&2; exit 1; }
for v in "$docs" "$queries" "$items" "$scans" "$run_max" "$varied"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "NDD_BENCH_* values must be positive integers" >&2; exit 1; }
done
# (1 + run_max) / 2 rows a document on average, and 12,000 rows held out
# for the items
rows=$((docs * (1 + run_max) / 2 + 12000))
corpus=/tmp/ndd-bench-$rows.tsv

ndd_ensure_packages python3
ndd_build_install
ndd_corpus "$rows" "$corpus"
ndd_cluster_start

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

say "loading $corpus and joining its rows into $docs documents"
psql -v docs="$docs" -v queries="$queries" -v items="$items" -v run_max="$run_max" <<EOF || exit 1
CREATE EXTENSION ndd;
CREATE TABLE corpus (id bigint PRIMARY KEY, family bigint, edit_rate float8, body text);
\copy corpus FROM '$corpus'
-- document d takes the next 1 + h(d) % run_max rows
CREATE TABLE runs AS
SELECT d, (sum(1 + abs(hashint8extended(d, 21)) % :run_max) OVER (ORDER BY d) - (1 + abs(hashint8extended(d, 21)) % :run_max))::bigint AS first,
       1 + abs(hashint8extended(d, 21)) % :run_max AS n
FROM generate_series(1, :docs) d;
-- (an equality join: a range join of a million runs would loop)
CREATE TABLE docs AS
SELECT m.d AS id, string_agg(c.body, ' ' ORDER BY c.id) AS body
FROM (SELECT r.d, g AS row_id FROM runs r, generate_series(r.first + 1, r.first + r.n) g) m
JOIN corpus c ON c.id = m.row_id
GROUP BY m.d;
ALTER TABLE docs ADD PRIMARY KEY (id);
-- rows no document holds: the items' other source
CREATE TABLE held_out AS
SELECT row_number() OVER (ORDER BY id) - 1 AS k, body FROM corpus WHERE id > (SELECT max(first + n) FROM runs);
ALTER TABLE held_out ADD PRIMARY KEY (k);

-- a window of w words from text t at word s, its last share e replaced
CREATE FUNCTION window_of(t text, s bigint, w int, e float8) RETURNS text LANGUAGE sql IMMUTABLE AS \$\$
    SELECT string_agg(CASE WHEN i > w * (1 - e) THEN 'replaced' || i ELSE x END, ' ' ORDER BY i)
    FROM (SELECT x, i FROM unnest((string_to_array(t, ' '))[s:s + w - 1]) WITH ORDINALITY u(x, i)) u \$\$;

-- queries: passages of 50 to 500 words from random documents
CREATE TABLE queries AS
SELECT q, t, window_of(d.body, 1 + abs(hashint8extended(q, 23)) % greatest(1, array_length(string_to_array(d.body, ' '), 1) - 500),
                       50 + (abs(hashint8extended(q, 24)) % 451)::int,
                       (ARRAY[0, 0.1, 0.3, 0.5])[1 + q % 4]) AS passage
FROM generate_series(1, :queries) q, (VALUES (0.5::float8), (0.7), (0.9)) v(t),
     LATERAL (SELECT body FROM docs WHERE id = 1 + abs(hashint8extended(q, 22)) % :docs) d;
-- items: one in ten from the documents, the rest from held-out rows
CREATE TABLE items AS
SELECT i AS item,
       CASE WHEN i % 10 = 0
            THEN (SELECT window_of(body, 1 + abs(hashint8extended(i, 26)) % 200, 50 + (abs(hashint8extended(i, 27)) % 201)::int, 0)
                  FROM docs WHERE id = 1 + abs(hashint8extended(i, 25)) % :docs)
            ELSE (SELECT window_of(body, 1, 50 + (abs(hashint8extended(i, 27)) % 201)::int, 0)
                  FROM held_out WHERE k = abs(hashint8extended(i, 28)) % (SELECT count(*) FROM held_out))
       END AS question
FROM generate_series(1, :items) i;
VACUUM (ANALYZE) docs, queries, items;
EOF
if [ "$long" -gt 0 ]; then
	say "making $varied documents of varied length and the long passages"
	psql -v long="$long" -v varied="$varied" <<EOF || exit 1
-- document d: n(d) words, log-uniform from 20 to 60,000, of 50,000
CREATE TABLE docs2 AS
SELECT d AS id, (SELECT string_agg('v' || abs(hashint8extended(d * 1000003 + i, 31)) % 50000, ' ')
                 FROM generate_series(1, n) i) AS body
FROM (SELECT d, round(20 * (3000 ^ ((abs(hashint8extended(d, 30)) % 1000000) / 1e6)))::int AS n
      FROM generate_series(1, :varied) d) x;
ALTER TABLE docs2 ADD PRIMARY KEY (id);
CREATE TABLE words AS
SELECT 'corpus' AS kind, id, array_length(string_to_array(body, ' '), 1) AS n FROM docs
UNION ALL
SELECT 'varied', id, array_length(string_to_array(body, ' '), 1) FROM docs2;
-- search q of each case: a corpus passage starts at the q-th longest
-- document and runs on through the next ones; a varied one is cut from
-- the q-th (in a hash's order) of the documents long enough
CREATE TABLE long_queries AS
SELECT c.kind, c.w, v.t, q, window_of(src.body, src.start, c.w, (ARRAY[0, 0.1, 0.3])[1 + q % 3]) AS passage
FROM (VALUES ('corpus', 10000), ('corpus', 50000), ('varied', 10000), ('varied', 50000)) c(kind, w),
     (VALUES (0.5::float8), (0.8)) v(t), generate_series(1, :long) q,
     LATERAL (SELECT x.id, x.n FROM words x WHERE x.kind = c.kind AND (c.kind = 'corpus' OR x.n >= c.w)
              ORDER BY CASE WHEN c.kind = 'corpus' THEN -x.n ELSE abs(hashint8extended(x.id, 32)) END, x.id
              OFFSET q - 1 LIMIT 1) d,
     LATERAL (SELECT CASE c.kind WHEN 'corpus' THEN 1 ELSE 1 + abs(hashint8extended(d.id, 33)) % greatest(1, d.n - c.w) END AS start,
                     CASE c.kind WHEN 'corpus'
                          THEN (SELECT string_agg(body, ' ' ORDER BY id) FROM docs WHERE id BETWEEN d.id AND d.id + 100)
                          ELSE (SELECT body FROM docs2 WHERE id = d.id) END AS body) src;
VACUUM (ANALYZE) docs2, long_queries;
EOF
fi

commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)
say "building the index, then timing"
psql -v scans="$scans" -v sketches="$sketches" -v long="$long" -v commit="$commit" -f "$NDD_TOP/bench/containment.sql" || exit 1
exit 0
