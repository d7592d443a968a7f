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
# Prints the index's size and build time, the latency of a search (p50 and
# p99 of each threshold, with the rows it returns and the rows its recheck
# removed), a sequential scan's time for the same queries, the accuracy of
# the sketch-based design (LSH Ensemble's partitions by size, at their
# best) against the index's exact answers, and the time of the
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
set -uo pipefail
. "$(dirname "$0")/../scripts/common.sh"

docs=${NDD_BENCH_DOCS:-5000}
queries=${NDD_BENCH_QUERIES:-100}
items=${NDD_BENCH_ITEMS:-10000}
scans=${NDD_BENCH_SCANS:-5}
run_max=${NDD_BENCH_RUN_MAX:-14}
sketches=${NDD_BENCH_SKETCHES:-1}
for v in "$docs" "$queries" "$items" "$scans" "$run_max"; do
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

commit=$(git -C "$NDD_TOP" describe --always --dirty 2>/dev/null || echo unknown)
say "building the index, then timing"
psql -v scans="$scans" -v sketches="$sketches" -v commit="$commit" -f "$NDD_TOP/bench/containment.sql" || exit 1
exit 0
