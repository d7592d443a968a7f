#!/usr/bin/env bash
# Upgrading PostgreSQL with ndd in the database: a PostgreSQL 15 database
# holding sketches, every ndd index (GIN minhash_ops with options, GIN
# simhash_ops in both layouts, GiST simhash_ops and simhash_knn_ops), tables
# guarded by ndd_reject_near_duplicates (row- and statement-level), tables
# under ndd_maintain_clusters and ndd's event trigger is dumped, and restored
# into each target major, where it must give the same answers as on 15.
#
#   bash test/majors/dump_restore.sh 17 18      (as root; the default is 17 18)
#
# On this machine (Debian 12) it builds ndd from this tree and installs it
# into PostgreSQL 15, starts a throwaway 15 cluster as postgres, loads a
# deterministic data set (text and fingerprints from hashes of integers, with
# near-duplicates planted), records its answers (index lookups with
# enable_seqscan off, and their plans; top-k; near_duplicate_pairs and
# near_duplicate_clusters; the cluster tables ndd_maintain_clusters keeps)
# and dumps it with 15's pg_dump, custom format and plain.  On a copy of the
# database it records what the guards, the live clusters and the event
# trigger do.  Then for each target major, in the Debian chroot that ships it
# (scripts/common.sh: 17 in trixie, 18 in sid), it builds and installs ndd,
# starts a cluster of that major, dumps the 15 database once more with that
# major's pg_dump (over TCP on 127.0.0.1: the newer pg_dump reading the older
# server, as PostgreSQL's documentation advises and pg_upgradecluster -m dump
# does), restores the three dumps (pg_restore, psql, pg_restore) into three
# databases, ANALYZEs, and runs the same queries and checks, comparing each
# output with 15's.  When that major's pg_dump cannot dump even a 15 database
# without ndd so that it restores (a minor release older than the 15 server:
# sid's 18.6 and 15.20's pg_attver column option), that restore is a SKIP.
#
# Prints "ok N - ..." / "not ok N - ..." (with a diff) per check and ends with
# one line "N passed, N failed"; exits non-zero when a check failed.  Every
# cluster and temporary directory, on the host and in the chroots, is removed
# on exit.  NDD_DR_INSTALL=0: use the ndd already installed in each major
# instead of building and installing this tree's.  NDD_CHROOT_DIR: where the
# chroots are (/var/tmp/ndd-chroot).  NDD_DR_KEEP=1: keep the working
# directories (outputs, dumps, logs) for a look; the clusters still stop.
set -u

# ---------------------------------------------------------------------------
# Side mode: one step on one major, run as the clusters' owner on the host or
# inside a chroot (where this file is copied).  Environment: PGBIN, the
# major's bin directory; DR, the working directory (SQL files, dumps,
# outputs, the cluster's data and socket); PORT.
# ---------------------------------------------------------------------------
side() {
	export PGHOST=$DR PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres
	local psql=("$PGBIN/psql" -X -q -A -t -P null=NULL -v ON_ERROR_STOP=1)
	local cmd=$1 f name out db
	shift
	case $cmd in
	start)
		# start [LISTEN-ADDRESS]: Unix socket in $DR, TCP only when asked, with a password
		"$PGBIN/initdb" -D "$DR/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
			-E UTF8 --locale=C.UTF-8 --no-sync >"$DR/initdb.log" 2>&1 || { cat "$DR/initdb.log"; return 1; }
		"$PGBIN/pg_ctl" -D "$DR/data" -l "$DR/server.log" -w \
			-o "-p $PORT -k $DR -c listen_addresses='${1:-}' -c fsync=off" start >/dev/null ||
			{ tail -n 20 "$DR/server.log"; rm -rf "$DR/data"; return 1; }
		;;
	stop)
		[ -f "$DR/data/postmaster.pid" ] && "$PGBIN/pg_ctl" -D "$DR/data" -m immediate stop >/dev/null 2>&1
		return 0
		;;
	bin)
		# bin PROGRAM ARGS...: one of the major's programs, on this cluster
		f=$1
		shift
		"$PGBIN/$f" "$@"
		;;
	psql)
		"${psql[@]}" "$@"
		;;
	restore)
		# restore DB FILE: a new database from a dump (plain .sql through
		# psql, else pg_restore), then ANALYZE; fails on any error or warning
		db=$1 f=$2
		"$PGBIN/createdb" -T template0 "$db" || return 1
		if [ "${f%.sql}" != "$f" ]; then
			"${psql[@]}" -d "$db" -f "$f" >"$DR/restore.log" 2>&1
		else
			"$PGBIN/pg_restore" -d "$db" "$f" >"$DR/restore.log" 2>&1
		fi
		local status=$?
		cat "$DR/restore.log"
		[ "$status" -eq 0 ] && ! grep -qiE 'error|warning' "$DR/restore.log" &&
			"${psql[@]}" -d "$db" -c ANALYZE
		;;
	answers)
		# answers DB OUT: each query of sql/answers, and the plan of each of
		# sql/plans, in a session of its own; output and errors to OUT
		db=$1 out=$2
		mkdir -p "$out/answers" "$out/plans"
		for f in "$DR"/sql/answers/*.sql "$DR"/sql/plans/*.sql; do
			name=${f#"$DR/sql/"}
			"${psql[@]}" -d "$db" -f - <"$f" >"$out/${name%.sql}.out" 2>&1
		done
		;;
	behave)
		# behave DB OUT: the checks of sql/behave, in order, on DB
		db=$1 out=$2
		mkdir -p "$out/behave"
		for f in "$DR"/sql/behave/*.sql; do
			name=${f##*/}
			"${psql[@]}" -d "$db" -f - <"$f" >"$out/behave/${name%.sql}.out" 2>&1
		done
		;;
	*)
		echo "unknown step $cmd" >&2
		return 2
		;;
	esac
}

if [ "${1:-}" = --side ]; then
	shift
	side "$@"
	exit
fi

# ---------------------------------------------------------------------------
# The SQL: the data set, the answers compared across majors, the plans that
# must use ndd's indexes, and the behaviour checks.  Each file starts with a
# one-line comment: what the check is about.
# ---------------------------------------------------------------------------
write_sql() {
	local dir=$1
	mkdir -p "$dir/answers" "$dir/plans" "$dir/behave"

	cat >"$dir/setup.sql" <<'SQL'
CREATE EXTENSION ndd;
CREATE SCHEMA gen;
-- a document of 60 words from a vocabulary of 4096, from hashes of n: the same on every run
CREATE FUNCTION gen.doc(n bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg('w' || (hashint8extended(n * 1000 + i, 7) & 4095), ' ' ORDER BY i)
    FROM generate_series(1, 60) i $$;
-- the document with its word at position pos replaced by word
CREATE FUNCTION gen.variant(body text, pos int, word text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(CASE WHEN o = pos THEN word ELSE w END, ' ' ORDER BY o)
    FROM unnest(string_to_array(body, ' ')) WITH ORDINALITY u(w, o) $$;
-- runs a statement: 'ok', or its SQLSTATE, message and detail
CREATE FUNCTION gen.try(statement text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE state text; message text; detail text;
BEGIN
    EXECUTE statement;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
    RETURN state || ': ' || message || ' / ' || detail;
END $$;

-- minhash: 1500 unrelated documents; 40 families of a base (every 37th) and
-- 3 variants with one word changed each (about 0.84 Jaccard to the base,
-- 0.70 to each other); 10 variants of variants; a NULL sketch; an empty text
CREATE TABLE docs (id bigint PRIMARY KEY, body text, sketch minhash);
INSERT INTO docs (id, body) SELECT g, gen.doc(g) FROM generate_series(1, 1500) g;
INSERT INTO docs (id, body)
SELECT 100000 + f * 10 + c, gen.variant(gen.doc(f * 37), c * 13, 'changed' || c)
FROM generate_series(1, 40) f, generate_series(1, 3) c;
INSERT INTO docs (id, body)
SELECT 200000 + f, gen.variant(gen.variant(gen.doc(f * 37), 39, 'changed3'), 52, 'again')
FROM generate_series(1, 10) f;
INSERT INTO docs VALUES (1501, gen.doc(1501), NULL), (1502, '', NULL);
UPDATE docs SET sketch = minhash_sketch(body) WHERE id <> 1501;
CREATE INDEX docs_sketch_gin ON docs USING gin (sketch minhash_ops (threshold = 0.7, key_bits = 16));

-- the same rows for top-k by counting: one-row bands
CREATE TABLE library (id bigint PRIMARY KEY, body text, sketch minhash);
INSERT INTO library SELECT * FROM docs;
CREATE INDEX library_topk ON library USING gin (sketch minhash_ops (rows = 1, key_bits = 16, shingle_size = 5));

-- simhash: 5000 random fingerprints; 30 families of a base (every 101st)
-- and 4 neighbours 1 to 4 bits away; a NULL
CREATE TABLE pages (id bigint PRIMARY KEY, fp simhash);
INSERT INTO pages SELECT g, simhash_from_bigint(hashint8extended(g, 3)) FROM generate_series(1, 5000) g;
INSERT INTO pages
SELECT 10000 + f * 10 + d, simhash_from_bigint(hashint8extended(f * 101, 3) # (((1::bigint << d) - 1) << (f % 40)))
FROM generate_series(1, 30) f, generate_series(1, 4) d;
INSERT INTO pages VALUES (5001, NULL);
CREATE INDEX pages_gin ON pages USING gin (fp simhash_ops (max_distance = 5, keys = blocks));
CREATE INDEX pages_knn ON pages USING gist (fp simhash_knn_ops);
SELECT ndd_maintain_clusters('pages', 'fp', 'id', max_distance => 3);

CREATE TABLE pages_gist (id bigint PRIMARY KEY, fp simhash);
INSERT INTO pages_gist SELECT * FROM pages;
CREATE INDEX pages_gist_idx ON pages_gist USING gist (fp);

-- live clusters: the first 400 documents and the families among them
CREATE TABLE articles (id bigint PRIMARY KEY, body text, sketch minhash, rank int NOT NULL);
INSERT INTO articles
SELECT id, body, sketch, (hashint8extended(id, 11) & 1023)::int FROM docs
WHERE id <= 400 OR id BETWEEN 100011 AND 100103;
CREATE INDEX articles_sketch_gin ON articles USING gin (sketch minhash_ops (threshold = 0.7));
SELECT ndd_maintain_clusters('articles', 'sketch', 'id', threshold => 0.7, representative_order => 'rank DESC');
-- changes the triggers follow before the dump
INSERT INTO articles
SELECT id, body, sketch, (hashint8extended(id, 11) & 1023)::int FROM docs WHERE id BETWEEN 200001 AND 200010;
DELETE FROM articles WHERE id = 100021;
UPDATE articles SET rank = 2000 WHERE id = 100032;
INSERT INTO pages VALUES (10500, simhash_from_bigint(hashint8extended(303, 3) # 1));

-- the insert guard, row by row on a minhash column ...
CREATE TABLE guarded (id bigint PRIMARY KEY, body text, sketch minhash);
CREATE INDEX guarded_sketch_gin ON guarded USING gin (sketch minhash_ops) WITH (fastupdate = off);
CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON guarded
    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'error');
INSERT INTO guarded SELECT id, body, sketch FROM docs WHERE id <= 500;
-- ... and per statement on a simhash column, with the default GIN layout
CREATE TABLE guarded_fp (id bigint PRIMARY KEY, fp simhash);
CREATE INDEX guarded_fp_gin ON guarded_fp USING gin (fp simhash_ops) WITH (fastupdate = off);
CREATE TRIGGER guard AFTER INSERT ON guarded_fp REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ndd_reject_near_duplicates('fp', '3');
INSERT INTO guarded_fp SELECT id, fp FROM pages WHERE id <= 2000;
ANALYZE;
SQL

	# --- answers that must not change: the catalog ...
	cat >"$dir/answers/01-extension.sql" <<'SQL'
-- extension ndd: version, schema, relocatable
SELECT extname, extversion, extnamespace::regnamespace, extrelocatable FROM pg_extension WHERE extname = 'ndd';
SQL
	cat >"$dir/answers/02-members.sql" <<'SQL'
-- the extension's member objects
-- (PostgreSQL 17 also lists array types and tables' row types as members,
-- commit e5bc945: they are left out)
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'ndd')
  AND NOT EXISTS (SELECT FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
                  WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
                    AND (t.typcategory = 'A' OR c.relkind IS DISTINCT FROM 'c' AND t.typrelid <> 0))
ORDER BY 1;
SQL
	cat >"$dir/answers/03-columns.sql" <<'SQL'
-- tables and their columns
SELECT c.oid::regclass, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
WHERE c.relnamespace IN ('public'::regnamespace, 'gen'::regnamespace) AND c.relkind = 'r'
  AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.oid::regclass::text, a.attnum;
SQL
	cat >"$dir/answers/04-indexes.sql" <<'SQL'
-- index definitions, opclasses and their options
SELECT i.indexrelid::regclass, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE c.relnamespace = 'public'::regnamespace ORDER BY i.indexrelid::regclass::text;
SQL
	cat >"$dir/answers/05-triggers.sql" <<'SQL'
-- triggers: the guards and those of ndd_maintain_clusters
SELECT tgrelid::regclass, tgname, tgenabled, pg_get_triggerdef(oid) FROM pg_trigger
WHERE NOT tgisinternal ORDER BY tgrelid::regclass::text, tgname;
SQL
	cat >"$dir/answers/06-event-trigger.sql" <<'SQL'
-- ndd's event trigger, an extension member
SELECT e.evtname, e.evtevent, e.evtfoid::regprocedure, e.evtenabled, e.evttags, e.evtowner::regrole,
       EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_event_trigger'::regclass AND d.objid = e.oid AND d.deptype = 'e')
FROM pg_event_trigger e ORDER BY e.evtname;
SQL
	# ... the data ...
	cat >"$dir/answers/07-values.sql" <<'SQL'
-- every table's rows, sketches and fingerprints bit for bit
SELECT 'docs', count(*), md5(string_agg(id || '|' || md5(body) || '|' || coalesce(sketch::text, '-'), ',' ORDER BY id)) FROM docs
UNION ALL
SELECT 'library', count(*), md5(string_agg(id || '|' || md5(body) || '|' || coalesce(sketch::text, '-'), ',' ORDER BY id)) FROM library
UNION ALL
SELECT 'articles', count(*), md5(string_agg(id || '|' || md5(body) || '|' || sketch::text || '|' || rank, ',' ORDER BY id)) FROM articles
UNION ALL
SELECT 'guarded', count(*), md5(string_agg(id || '|' || md5(body) || '|' || sketch::text, ',' ORDER BY id)) FROM guarded
UNION ALL
SELECT 'pages', count(*), md5(string_agg(id || '|' || coalesce(fp::text, '-'), ',' ORDER BY id)) FROM pages
UNION ALL
SELECT 'pages_gist', count(*), md5(string_agg(id || '|' || coalesce(fp::text, '-'), ',' ORDER BY id)) FROM pages_gist
UNION ALL
SELECT 'guarded_fp', count(*), md5(string_agg(id || '|' || fp::bigint, ',' ORDER BY id)) FROM guarded_fp;
SQL
	cat >"$dir/answers/08-settings.sql" <<'SQL'
-- how the sketches were made (minhash_settings)
SELECT s.num_perm, s.unit, s.shingle_size, s.seed, count(*)
FROM docs d, LATERAL minhash_settings(d.sketch) s GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4;
SQL

	# ... index lookups, each also as a plan that must use the index named
	# (lookup NAME INDEX: the SQL on stdin, its one query starting a line with
	# SELECT)
	lookup() {
		local name=$1 index=$2 sql
		sql=$(cat)
		printf '%s\n' "$sql" >"$dir/answers/$name.sql"
		{
			printf -- '-- uses: %s\n' "$index"
			printf '%s\n' "$sql" | sed '0,/^SELECT/s//EXPLAIN (COSTS OFF) SELECT/'
		} >"$dir/plans/$name.sql"
	}
	lookup 10-docs-percent docs_sketch_gin <<'SQL'
-- minhash % lookups through minhash_ops (threshold 0.8)
SET enable_seqscan = off; SET ndd.similarity_threshold = 0.8;
SELECT q.id, s.ids FROM docs q, LATERAL (
    SELECT string_agg(d.id::text, ',' ORDER BY d.id) AS ids FROM docs d WHERE d.sketch % q.sketch) s
WHERE q.id IN (5, 37, 74, 370, 1502, 100011, 200001) ORDER BY q.id;
SQL
	lookup 11-docs-similar docs_sketch_gin <<'SQL'
-- similar(minhash, minhash, 0.75) lookups through minhash_ops
SET enable_seqscan = off;
SELECT q.id, s.ids FROM docs q, LATERAL (
    SELECT string_agg(d.id::text, ',' ORDER BY d.id) AS ids FROM docs d WHERE similar(d.sketch, q.sketch, 0.75)) s
WHERE q.id IN (37, 74, 370, 100012, 200003) ORDER BY q.id;
SQL
	lookup 12-docs-query-type docs_sketch_gin <<'SQL'
-- minhash % minhash_query lookups (threshold 0.9) through minhash_ops
SET enable_seqscan = off;
SELECT q.id, s.ids FROM docs q, LATERAL (
    SELECT string_agg(d.id::text, ',' ORDER BY d.id) AS ids FROM docs d
    WHERE d.sketch % ROW(q.sketch, 0.9)::minhash_query) s
WHERE q.id IN (37, 74, 100013) ORDER BY q.id;
SQL
	lookup 13-docs-new-text docs_sketch_gin <<'SQL'
-- a lookup of a new text, with its similarities
SET enable_seqscan = off; SET ndd.similarity_threshold = 0.7;
SELECT d.id, similarity(d.sketch, minhash_sketch(gen.variant(gen.doc(74), 45, 'fresh'))) FROM docs d
WHERE d.sketch % (SELECT minhash_sketch(gen.variant(gen.doc(74), 45, 'fresh'))) ORDER BY d.id;
SQL
	lookup 14-pages-percent pages_gin <<'SQL'
-- simhash % lookups through GIN simhash_ops (keys = blocks, max_distance = 5) at 4 bits
SET enable_seqscan = off; SET ndd.hamming_threshold = 4;
SELECT q.id, s.ids FROM pages q, LATERAL (
    SELECT string_agg(p.id::text, ',' ORDER BY p.id) AS ids FROM pages p WHERE p.fp % q.fp) s
WHERE q.id IN (7, 101, 202, 303, 5001, 10011, 10304) ORDER BY q.id;
SQL
	lookup 15-pages-similar pages_gin <<'SQL'
-- similar(simhash, simhash, 6) lookups through GIN simhash_ops, beyond its max_distance
SET enable_seqscan = off;
SELECT q.id, s.ids FROM pages q, LATERAL (
    SELECT string_agg(p.id::text, ',' ORDER BY p.id) AS ids FROM pages p WHERE similar(p.fp, q.fp, 6)) s
WHERE q.id IN (101, 404, 10012) ORDER BY q.id;
SQL
	# (the rows past the planted ones are ~15 bits away and tie: their ids
	# depend on the scan, so only their distances are compared)
	lookup 16-pages-knn pages_knn <<'SQL'
-- the 5 nearest rows, ORDER BY <-> through GiST simhash_knn_ops
SET enable_seqscan = off;
SELECT q.id, s.nearest FROM pages q,
    LATERAL (SELECT string_agg(n.id || ':' || n.d, ',' ORDER BY n.d, n.id) AS nearest FROM (
        SELECT p.id, p.fp <-> q.fp AS d FROM pages p ORDER BY p.fp <-> q.fp LIMIT 5) n) s
WHERE q.id IN (101, 202, 10033) ORDER BY q.id;
SQL
	lookup 17-pages-knn-distances pages_knn <<'SQL'
-- the distances of the 10 nearest rows, ORDER BY <-> through GiST simhash_knn_ops
SET enable_seqscan = off;
SELECT q.id, s.distances FROM pages q,
    LATERAL (SELECT string_agg(n.d::text, ',' ORDER BY n.d) AS distances FROM (
        SELECT p.fp <-> q.fp AS d FROM pages p ORDER BY p.fp <-> q.fp LIMIT 10) n) s
WHERE q.id IN (7, 101, 2000, 4999) ORDER BY q.id;
SQL
	lookup 18-gist-percent pages_gist_idx <<'SQL'
-- simhash % lookups through GiST simhash_ops at 3 bits
SET enable_seqscan = off; SET ndd.hamming_threshold = 3;
SELECT q.id, s.ids FROM pages_gist q, LATERAL (
    SELECT string_agg(p.id::text, ',' ORDER BY p.id) AS ids FROM pages_gist p WHERE p.fp % q.fp) s
WHERE q.id IN (7, 101, 505, 10014) ORDER BY q.id;
SQL
	lookup 19-gist-knn pages_gist_idx <<'SQL'
-- nearest rows, ORDER BY <-> through GiST simhash_ops
SET enable_seqscan = off;
SELECT q.id, s.nearest FROM pages_gist q,
    LATERAL (SELECT string_agg(n.id || ':' || n.d, ',' ORDER BY n.d, n.id) AS nearest FROM (
        SELECT p.id, p.fp <-> q.fp AS d FROM pages_gist p ORDER BY p.fp <-> q.fp LIMIT 5) n) s
WHERE q.id IN (606, 909) ORDER BY q.id;
SQL
	unset -f lookup

	# ... top-k, pairs and clusters
	cat >"$dir/answers/20-topk-counting.sql" <<'SQL'
-- near_duplicate_top_k by counting (minhash_ops rows = 1), and what counting read
SELECT q.id, t.id, t.similarity FROM library q, LATERAL near_duplicate_top_k('library', 'sketch', 'id', q.sketch, k => 5) t
WHERE q.id IN (5, 37, 370, 100011, 200002) ORDER BY q.id, t.similarity DESC, t.id;
SELECT ids, similarities, postings, index_name, lists_unread
FROM minhash_index_top_k('library', 'sketch', 'id', (SELECT sketch FROM library WHERE id = 37), 5);
SQL
	cat >"$dir/answers/21-topk-passes.sql" <<'SQL'
-- near_duplicate_top_k by passes (minhash_ops threshold = 0.7)
SELECT q.id, t.id, t.similarity FROM docs q, LATERAL near_duplicate_top_k('docs', 'sketch', 'id', q.sketch, k => 4) t
WHERE q.id IN (37, 740, 100041) ORDER BY q.id, t.similarity DESC, t.id;
SELECT minhash_index_exact_threshold('docs', 'sketch'), minhash_index_exact_threshold('library', 'sketch');
SQL
	cat >"$dir/answers/22-pairs-minhash.sql" <<'SQL'
-- near_duplicate_pairs of a minhash column at 0.8
SELECT * FROM near_duplicate_pairs('docs', 'sketch', 'id', 0.8) ORDER BY id_a, id_b;
SQL
	cat >"$dir/answers/23-pairs-verified.sql" <<'SQL'
-- near_duplicate_pairs at 0.8 verified with the exact Jaccard of the texts
SELECT * FROM near_duplicate_pairs('docs', 'sketch', 'id', 0.8, verify_column => 'body') ORDER BY id_a, id_b;
SQL
	cat >"$dir/answers/24-pairs-simhash.sql" <<'SQL'
-- near_duplicate_pairs of a simhash column within 4 bits
SELECT * FROM near_duplicate_pairs('pages', 'fp', 'id', max_distance => 4) ORDER BY id_a, id_b;
SQL
	cat >"$dir/answers/25-clusters-minhash.sql" <<'SQL'
-- near_duplicate_clusters of a minhash column at 0.7, longest text first
SELECT * FROM near_duplicate_clusters('docs', 'sketch', 'id', 0.7, representative_order => 'length(body) DESC')
ORDER BY cluster_id, id;
SQL
	cat >"$dir/answers/26-clusters-simhash.sql" <<'SQL'
-- near_duplicate_clusters of a simhash column within 3 bits
SELECT * FROM near_duplicate_clusters('pages', 'fp', 'id', max_distance => 3) ORDER BY cluster_id, id;
SQL
	cat >"$dir/answers/27-live-tables.sql" <<'SQL'
-- the cluster tables ndd_maintain_clusters keeps
SELECT 'articles', id, cluster_id FROM articles_clusters
UNION ALL
SELECT 'pages', id, cluster_id FROM pages_clusters ORDER BY 1, 2;
SQL
	cat >"$dir/answers/28-live-consistent.sql" <<'SQL'
-- the cluster tables equal near_duplicate_clusters (rows only in one, only in the other)
WITH a AS (SELECT id, cluster_id FROM near_duplicate_clusters('articles', 'sketch', 'id', 0.7, representative_order => 'rank DESC')),
     p AS (SELECT id, cluster_id FROM near_duplicate_clusters('pages', 'fp', 'id', max_distance => 3))
SELECT 'articles', (SELECT count(*) FROM (TABLE articles_clusters EXCEPT TABLE a) x), (SELECT count(*) FROM (TABLE a EXCEPT TABLE articles_clusters) y)
UNION ALL
SELECT 'pages', (SELECT count(*) FROM (TABLE pages_clusters EXCEPT TABLE p) x), (SELECT count(*) FROM (TABLE p EXCEPT TABLE pages_clusters) y);
SQL

	# --- behaviour: run in order on a database of its own
	cat >"$dir/behave/01-guard-near.sql" <<'SQL'
-- the row-level guard rejects a near-duplicate insert (23505)
SELECT gen.try($$INSERT INTO guarded (id, body, sketch)
    SELECT 900001, b, minhash_sketch(b) FROM (SELECT gen.variant(body, 30, 'other') AS b FROM guarded WHERE id = 37) s$$);
SQL
	cat >"$dir/behave/02-guard-unrelated.sql" <<'SQL'
-- the row-level guard lets an unrelated insert through
SELECT gen.try($$INSERT INTO guarded (id, body, sketch) VALUES (900002, gen.doc(900002), minhash_sketch(gen.doc(900002)))$$);
SELECT count(*), max(id) FROM guarded;
SQL
	cat >"$dir/behave/03-guard-update.sql" <<'SQL'
-- the row-level guard rejects an update into a near-duplicate, allows an unrelated one
SELECT gen.try($$UPDATE guarded SET body = b, sketch = minhash_sketch(b)
    FROM (SELECT gen.variant(body, 7, 'x') AS b FROM guarded WHERE id = 38) s WHERE id = 900002$$);
SELECT gen.try($$UPDATE guarded SET body = gen.doc(900003), sketch = minhash_sketch(gen.doc(900003)) WHERE id = 900002$$);
SQL
	cat >"$dir/behave/04-guard-statement.sql" <<'SQL'
-- the statement-level guard: a stored near-duplicate, unrelated rows, two new near-duplicates
SELECT gen.try($$INSERT INTO guarded_fp SELECT 900001, simhash_from_bigint(fp::bigint # 7) FROM guarded_fp WHERE id = 5$$);
SELECT gen.try($$INSERT INTO guarded_fp VALUES (900002, simhash_from_bigint(hashint8extended(900002, 3))),
                                               (900003, simhash_from_bigint(hashint8extended(900003, 3)))$$);
SELECT gen.try($$INSERT INTO guarded_fp VALUES (900004, '0f0f0f0f0f0f0f0f'), (900005, '0f0f0f0f0f0f0f0e')$$);
SELECT count(*) FROM guarded_fp;
SQL
	cat >"$dir/behave/05-live-join.sql" <<'SQL'
-- live clusters: an inserted near-duplicate joins its cluster
SELECT 'before', id, cluster_id FROM articles_clusters
WHERE cluster_id = (SELECT cluster_id FROM articles_clusters WHERE id = 37) ORDER BY id;
INSERT INTO articles SELECT 900001, b, minhash_sketch(b), 5 FROM (SELECT gen.variant(body, 20, 'joined') AS b FROM articles WHERE id = 37) s;
SELECT 'after', id, cluster_id FROM articles_clusters
WHERE cluster_id = (SELECT cluster_id FROM articles_clusters WHERE id = 37) ORDER BY id;
SELECT 'joined', (SELECT cluster_id FROM articles_clusters WHERE id = 900001) = (SELECT cluster_id FROM articles_clusters WHERE id = 37);
SQL
	cat >"$dir/behave/06-live-new-cluster.sql" <<'SQL'
-- live clusters: a near-duplicate of a row in no cluster makes a new one, its representative by rank
SELECT 'before', id, cluster_id FROM articles_clusters WHERE id IN (5, 900002) ORDER BY id;
INSERT INTO articles SELECT 900002, b, minhash_sketch(b), 2001 FROM (SELECT gen.variant(body, 50, 'twin') AS b FROM articles WHERE id = 5) s;
SELECT 'after', id, cluster_id FROM articles_clusters WHERE id IN (5, 900002) ORDER BY id;
SQL
	cat >"$dir/behave/07-live-delete-update.sql" <<'SQL'
-- live clusters: a deleted row's cluster is recomputed; a new rank picks a new representative
DELETE FROM articles WHERE id = 74;
SELECT 'deleted', id, cluster_id FROM articles_clusters WHERE id BETWEEN 100021 AND 100023 OR id = 200002 ORDER BY id;
UPDATE articles SET rank = 3000 WHERE id = 100012;
SELECT 'updated', id, cluster_id FROM articles_clusters
WHERE cluster_id = (SELECT cluster_id FROM articles_clusters WHERE id = 37) ORDER BY id;
SQL
	cat >"$dir/behave/08-live-simhash.sql" <<'SQL'
-- live clusters on simhash: an insert 1 bit from a family joins it, a far one stays out
INSERT INTO pages SELECT 10600, simhash_from_bigint(fp::bigint # (1::bigint << 40)) FROM pages WHERE id = 202;
INSERT INTO pages VALUES (10601, simhash_from_bigint(hashint8extended(10601, 3)));
SELECT id, cluster_id FROM pages_clusters
WHERE cluster_id = (SELECT cluster_id FROM pages_clusters WHERE id = 202) OR id = 10601 ORDER BY id;
SQL
	cat >"$dir/behave/09-live-consistent.sql" <<'SQL'
-- after the changes, the cluster tables still equal near_duplicate_clusters
WITH a AS (SELECT id, cluster_id FROM near_duplicate_clusters('articles', 'sketch', 'id', 0.7, representative_order => 'rank DESC')),
     p AS (SELECT id, cluster_id FROM near_duplicate_clusters('pages', 'fp', 'id', max_distance => 3))
SELECT 'articles', (SELECT count(*) FROM (TABLE articles_clusters EXCEPT TABLE a) x), (SELECT count(*) FROM (TABLE a EXCEPT TABLE articles_clusters) y)
UNION ALL
SELECT 'pages', (SELECT count(*) FROM (TABLE pages_clusters EXCEPT TABLE p) x), (SELECT count(*) FROM (TABLE p EXCEPT TABLE pages_clusters) y);
SQL
	cat >"$dir/behave/10-event-trigger.sql" <<'SQL'
-- the event trigger forgets the tokens of a dropped table
CREATE TABLE scratch (id bigint PRIMARY KEY, fp simhash);
CREATE INDEX ON scratch USING gin (fp);
SELECT 'maintained', ndd_maintain_clusters('scratch', 'fp', 'id', max_distance => 3);
INSERT INTO scratch VALUES (1, '00000000000000ff'), (2, '00000000000000fe');
CREATE TEMP TABLE dropped AS SELECT 'scratch_clusters'::regclass::oid AS relid;
SELECT 'tokens before the drop', count(*) FROM ndd_near_duplicate_locks l JOIN dropped USING (relid);
DROP TABLE scratch, scratch_clusters;
SELECT 'tokens after the drop', count(*) FROM ndd_near_duplicate_locks l JOIN dropped USING (relid);
SQL
	cat >"$dir/behave/11-final.sql" <<'SQL'
-- the tables after all the changes
SELECT 'guarded', count(*), md5(string_agg(id || '|' || md5(body) || '|' || sketch::text, ',' ORDER BY id)) FROM guarded
UNION ALL
SELECT 'guarded_fp', count(*), md5(string_agg(id || '|' || fp::text, ',' ORDER BY id)) FROM guarded_fp
UNION ALL
SELECT 'articles', count(*), md5(string_agg(id || '|' || sketch::text || '|' || rank, ',' ORDER BY id)) FROM articles
UNION ALL
SELECT 'articles_clusters', count(*), md5(string_agg(id || '|' || cluster_id, ',' ORDER BY id)) FROM articles_clusters
UNION ALL
SELECT 'pages_clusters', count(*), md5(string_agg(id || '|' || cluster_id, ',' ORDER BY id)) FROM pages_clusters;
SQL
}

# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------
majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(17 18)
export NDD_PG=15
unset NDD_PGBIN
. "$(dirname "$0")/../../scripts/common.sh"
PG15BIN=$PGBIN
for major in "${majors[@]}"; do
	suite=$(ndd_suite_of "$major") && [ "$suite" != host ] ||
		{ echo "usage: $0 [MAJOR...]: majors of the chroots, such as 17 18 (not '$major')" >&2; exit 2; }
done
if [ "$(id -u)" -ne 0 ]; then
	echo "This makes and enters Debian chroots, which needs root. Run: sudo bash $0 ${majors[*]}" >&2
	exit 1
fi

started=$(date +%s)
n=0
passed=0
failed=0
skipped=0
W=
targets=()	# "suite|major|directory in the chroot" of each target set up, for the cleanup

cleanup() {
	local t suite major dir
	for t in ${targets[@]+"${targets[@]}"}; do
		IFS='|' read -r suite major dir <<<"$t"
		[ -n "$dir" ] || continue
		if [ -f "$NDD_CHROOT_DIR/$suite$dir/data/postmaster.pid" ]; then
			ndd_in_chroot "$suite" runuser -u postgres -- env PGBIN="/usr/lib/postgresql/$major/bin" DR="$dir" PORT=0 \
				bash "$dir/dr.sh" --side stop >/dev/null 2>&1
		fi
		[ "${NDD_DR_KEEP:-0}" = 1 ] && say "kept $NDD_CHROOT_DIR/$suite$dir" || rm -rf "${NDD_CHROOT_DIR:?}/$suite$dir"
	done
	targets=()
	if [ -n "$W" ]; then
		[ -f "$W/data/postmaster.pid" ] &&
			runuser -u postgres -- "$PG15BIN/pg_ctl" -D "$W/data" -m immediate stop >/dev/null 2>&1
		[ "${NDD_DR_KEEP:-0}" = 1 ] && say "kept $W" || rm -rf "$W"
		W=
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# report STATUS DESCRIPTION [DIAGNOSTICS-FILE]: one TAP line, and the file
# indented as a comment when the check failed
report() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
		passed=$((passed + 1))
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		[ -n "${3:-}" ] && [ -s "$3" ] && head -n 80 "$3" | sed 's/^/#   /'
	fi
	return 0
}

# same DESCRIPTION EXPECTED ACTUAL: the two outputs are equal
same() {
	if [ -f "$3" ] && cmp -s "$2" "$3"; then
		report 0 "$1"
	else
		diff -u --label "PostgreSQL 15" --label "restored" "$2" "$3" >"$W/diag" 2>&1
		report 1 "$1" "$W/diag"
	fi
}

# holds DESCRIPTION FILE REGEX: FILE has a line matching REGEX
holds() {
	if grep -qE -- "$3" "$2" 2>/dev/null; then
		report 0 "$1"
	else
		{ echo "expected a line matching: $3"; cat "$2"; } >"$W/diag" 2>&1
		report 1 "$1" "$W/diag"
	fi
}

# skip DESCRIPTION REASON FILE: a check that cannot say anything about ndd
# here (TAP's SKIP: counted neither as passed nor as failed), with why
skip() {
	n=$((n + 1))
	skipped=$((skipped + 1))
	echo "ok $n - $1 # SKIP $2"
	head -n 12 "$3" | sed 's/^/#   /'
}

# describe FILE: the check's description, the first line of its SQL
describe() { head -n 1 "$1" | sed 's/^-- //'; }

finish() {
	say "took $(($(date +%s) - started)) s"
	[ "$skipped" -eq 0 ] || echo "# $skipped skipped, not counted"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

# host_side STEP ARGS...: a step on the PostgreSQL 15 cluster, as postgres
host_side() {
	runuser -u postgres -- env PGBIN="$PG15BIN" DR="$W" PORT="$port15" bash "$W/dr.sh" --side "$@" 7>&- 8>&-
}

W=$(mktemp -d /tmp/ndd-dr-XXXXXX)
chmod 755 "$W"
write_sql "$W/sql"
cp "$0" "$W/dr.sh"
mkdir -p "$W/dumps" "$W/out/15"

# --- PostgreSQL 15: build, install, load, answer, dump
# The install lock of scripts/common.sh, held to the end: no other checkout
# swaps ndd.so under this run, nor this run under another's.
exec 8>/tmp/ndd-install.lock
flock -n 8 || { say "waiting for /tmp/ndd-install.lock"; flock 8; }
if [ "${NDD_DR_INSTALL:-1}" != 0 ]; then
	say "PostgreSQL 15: building and installing ndd"
	ndd_copy_tree "$W/src" &&
		env NDD_INSTALL_LOCKED=1 bash -c '. "$1/scripts/common.sh" && ndd_ensure_packages && ndd_build_install' \
			bash "$W/src" >"$W/build.log" 2>&1
	report $? "PostgreSQL 15: ndd builds and installs from this tree" "$W/build.log"
	[ "$failed" -eq 0 ] || finish
fi
chown -R postgres: "$W"

# the 15 cluster listens on 127.0.0.1 too, with a password, for the target
# majors' pg_dump in the chroots; a few ports in case one is taken
for port15 in 54339 54349 54359 ''; do
	[ -n "$port15" ] || break
	host_side start 127.0.0.1 >"$W/start.log" 2>&1 && break
done
report "$([ -n "$port15" ]; echo $?)" "PostgreSQL 15: a throwaway cluster starts" "$W/start.log"
[ -n "$port15" ] || finish
password=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
host_side psql -c "ALTER ROLE postgres PASSWORD '$password'" >/dev/null
version15=$(host_side psql -c "SELECT split_part(current_setting('server_version'), ' ', 1)")

say "PostgreSQL $version15: loading the data set"
host_side bin createdb nddsrc &&
	host_side psql -d nddsrc -f "$W/sql/setup.sql" >"$W/setup.log" 2>&1
report $? "PostgreSQL $version15: the data set loads (sketches, indexes, guards, live clusters)" "$W/setup.log"
# and a database without ndd, to tell PostgreSQL's own dump and restore
# troubles from ndd's
host_side bin createdb control &&
	host_side psql -d control -c "CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'one')" >>"$W/setup.log" 2>&1
[ "$failed" -eq 0 ] || finish

say "PostgreSQL 15: recording the answers and dumping"
host_side answers nddsrc "$W/out/15"
host_side bin pg_dump -Fc -f "$W/dumps/pg15.custom" nddsrc >"$W/dump.log" 2>&1 &&
	host_side bin pg_dump -f "$W/dumps/pg15.sql" nddsrc >>"$W/dump.log" 2>&1
report $? "PostgreSQL 15: pg_dump, custom format and plain" "$W/dump.log"
# the behaviour checks change the database: run them on a copy
host_side bin createdb -T nddsrc behave15 && host_side behave behave15 "$W/out/15"

# what 15 answers must be worth comparing: no errors, the planted
# near-duplicates found, the indexes used, the guards and triggers at work
grep -lE '(^|: )(ERROR|FATAL):' "$W"/out/15/*/*.out >"$W/diag" 2>&1
report "$([ ! -s "$W/diag" ]; echo $?)" "PostgreSQL 15: every query and check runs without an error" "$W/diag"
holds "PostgreSQL 15: % through minhash_ops finds the family of row 37" "$W/out/15/answers/10-docs-percent.out" '^37\|37,1000'
holds "PostgreSQL 15: % through GIN simhash_ops finds the family of row 101" "$W/out/15/answers/14-pages-percent.out" '^101\|101,10011,10012,10013,10014$'
holds "PostgreSQL 15: kNN through GiST simhash_knn_ops returns the family of row 101 in order" "$W/out/15/answers/16-pages-knn.out" '^101\|101:0,10011:1,10012:2,10013:3,10014:4$'
holds "PostgreSQL 15: top-k finds row 37 itself first" "$W/out/15/answers/20-topk-counting.out" '^37\|37\|1$'
holds "PostgreSQL 15: top-k counts in library_topk" "$W/out/15/answers/20-topk-counting.out" '\|library_topk\|'
holds "PostgreSQL 15: near_duplicate_pairs finds base-variant pairs" "$W/out/15/answers/22-pairs-minhash.out" '^37\|100011\|'
holds "PostgreSQL 15: near_duplicate_clusters groups the families" "$W/out/15/answers/26-clusters-simhash.out" '^10011\|101$'
holds "PostgreSQL 15: the cluster tables equal near_duplicate_clusters" "$W/out/15/answers/28-live-consistent.out" '^pages\|0\|0$'
holds "PostgreSQL 15: the cluster tables equal near_duplicate_clusters (articles)" "$W/out/15/answers/28-live-consistent.out" '^articles\|0\|0$'
for f in "$W"/sql/plans/*.sql; do
	index=$(sed -n 's/^-- uses: //p' "$f")
	name=${f##*/}
	holds "PostgreSQL 15: plan of '$(sed -n 2p "$f" | sed 's/^-- //')' uses $index" \
		"$W/out/15/plans/${name%.sql}.out" "(on|using|Index Name:) $index( |$)"
done
holds "PostgreSQL 15: the guard rejects a near-duplicate insert with 23505" "$W/out/15/behave/01-guard-near.out" '^23505: '
holds "PostgreSQL 15: the guard lets an unrelated insert through" "$W/out/15/behave/02-guard-unrelated.out" '^ok$'
holds "PostgreSQL 15: the statement-level guard rejects two new near-duplicates with 23505" "$W/out/15/behave/04-guard-statement.out" "^23505: .*statement"
holds "PostgreSQL 15: an inserted near-duplicate joins its live cluster" "$W/out/15/behave/05-live-join.out" '^joined\|t$'
holds "PostgreSQL 15: the event trigger forgets a dropped table's tokens" "$W/out/15/behave/10-event-trigger.out" '^tokens after the drop\|0$'
holds "PostgreSQL 15: the dropped table had tokens to forget" "$W/out/15/behave/10-event-trigger.out" '^tokens before the drop\|[1-9]'
chown -R postgres: "$W"

# --- each target major, in its chroot
target() {
	local major=$1 suite root dir C port status kind db name f index out
	suite=$(ndd_suite_of "$major")
	root=$NDD_CHROOT_DIR/$suite
	if [ ! -d "$root/tmp" ]; then
		echo "no chroot at $root: run scripts/test_all.sh first" >"$W/diag"
		report 1 "PostgreSQL $major: the $suite chroot exists" "$W/diag"
		return
	fi
	exec 7>"$root/tmp/ndd-install.lock"
	flock -n 7 || { say "waiting for $root/tmp/ndd-install.lock"; flock 7; }
	C=$(mktemp -d "$root/tmp/ndd-dr-XXXXXX")
	chmod 755 "$C"
	dir=/tmp/${C##*/}
	targets+=("$suite|$major|$dir")
	cp -r "$W/sql" "$W/dr.sh" "$C/" && mkdir -p "$C/dumps" "$C/out" && cp "$W"/dumps/pg15.* "$C/dumps/"
	# as in scripts/common.sh: the server must not keep the locks
	in_chroot() { ndd_in_chroot "$suite" "$@" 7>&- 8>&-; }
	chroot_side() {
		in_chroot runuser -u postgres -- env PGBIN="/usr/lib/postgresql/$major/bin" DR="$dir" PORT="$port" \
			PGPASSFILE="$dir/pgpass" bash "$dir/dr.sh" --side "$@"
	}
	if [ "${NDD_DR_INSTALL:-1}" != 0 ]; then
		say "PostgreSQL $major ($suite): building and installing ndd"
		ndd_copy_tree "$C/src" &&
			in_chroot env NDD_PG="$major" NDD_INSTALL_LOCKED=1 \
				bash -c '. "$1/scripts/common.sh" && ndd_ensure_packages && ndd_build_install' bash "$dir/src" >"$W/$major-build.log" 2>&1
		status=$?
		report $status "PostgreSQL $major: ndd builds and installs from this tree in the $suite chroot" "$W/$major-build.log"
		[ "$status" -eq 0 ] || return
	fi
	printf '127.0.0.1:%s:*:postgres:%s\n' "$port15" "$password" >"$C/pgpass"
	chmod 600 "$C/pgpass"
	in_chroot chown -R postgres: "$dir"
	port=$((54340 + major))
	chroot_side start >"$W/$major-start.log" 2>&1
	status=$?
	report $status "PostgreSQL $major: a throwaway cluster starts in the $suite chroot" "$W/$major-start.log"
	[ "$status" -eq 0 ] || return
	local version
	version=$(chroot_side psql -c "SELECT split_part(current_setting('server_version'), ' ', 1)")

	# the advised way: the new major's pg_dump reads the old server; and the
	# same for a database without ndd, to tell PostgreSQL's troubles from ndd's
	chroot_side bin pg_dump -h 127.0.0.1 -p "$port15" -Fc -f "$dir/dumps/pg$major.custom" nddsrc >"$W/$major-dump.log" 2>&1
	report $? "PostgreSQL $version: its pg_dump dumps the PostgreSQL $version15 database" "$W/$major-dump.log"
	local control
	chroot_side bin pg_dump -h 127.0.0.1 -p "$port15" -Fc -f "$dir/dumps/control.custom" control >"$W/$major-control.log" 2>&1 &&
		chroot_side restore r_control "$dir/dumps/control.custom" >>"$W/$major-control.log" 2>&1
	control=$?

	for kind in "pg15.custom|pg_restore of 15's custom-format dump" "pg15.sql|psql of 15's plain dump" \
		"pg$major.custom|pg_restore of $major's pg_dump of 15"; do
		f=${kind%%|*}
		kind=${kind#*|}
		[ -f "$C/dumps/$f" ] || continue
		db=r_${f//./_}
		say "PostgreSQL $major: $kind"
		chroot_side restore "$db" "$dir/dumps/$f" >"$W/$major-restore.log" 2>&1
		status=$?
		if [ "$status" -ne 0 ] && [ "$f" = "pg$major.custom" ] && [ "$control" -ne 0 ]; then
			skip "PostgreSQL $version: $kind restores without an error or warning" \
				"PostgreSQL's own: $major's pg_dump of a 15 database without ndd does not restore either" "$W/$major-control.log"
			continue
		fi
		report $status "PostgreSQL $version: $kind restores without an error or warning" "$W/$major-restore.log"
		[ "$status" -eq 0 ] || continue
		chroot_side answers "$db" "$dir/out/$db"
		chroot_side behave "$db" "$dir/out/$db"
		out=$C/out/$db
		if [ "$f" = pg15.custom ]; then
			# one line per check, for the dump users are told to make
			for f in "$W"/sql/answers/*.sql; do
				name=${f##*/}
				name=${name%.sql}
				same "PostgreSQL $major ($kind): $(describe "$f"), as on 15" \
					"$W/out/15/answers/$name.out" "$out/answers/$name.out"
			done
			for f in "$W"/sql/plans/*.sql; do
				index=$(sed -n 's/^-- uses: //p' "$f")
				name=${f##*/}
				holds "PostgreSQL $major ($kind): plan of '$(sed -n 2p "$f" | sed 's/^-- //')' uses $index, as on 15" \
					"$out/plans/${name%.sql}.out" "(on|using|Index Name:) $index( |$)"
			done
			for f in "$W"/sql/behave/*.sql; do
				name=${f##*/}
				name=${name%.sql}
				same "PostgreSQL $major ($kind): $(describe "$f"), as on 15" \
					"$W/out/15/behave/$name.out" "$out/behave/$name.out"
			done
		else
			# the other dumps: every answer and behaviour at once
			: >"$W/diag"
			local count=0
			for f in "$W"/out/15/answers/*.out "$W"/out/15/behave/*.out; do
				name=${f#"$W/out/15/"}
				count=$((count + 1))
				cmp -s "$f" "$out/$name" ||
					diff -u --label "PostgreSQL 15: $name" --label "restored: $name" "$f" "$out/$name" >>"$W/diag" 2>&1
			done
			for f in "$W"/sql/plans/*.sql; do
				index=$(sed -n 's/^-- uses: //p' "$f")
				name=${f##*/}
				count=$((count + 1))
				grep -qE "(on|using|Index Name:) $index( |$)" "$out/plans/${name%.sql}.out" 2>/dev/null ||
					{ echo "plans/$name does not use $index:"; cat "$out/plans/${name%.sql}.out"; } >>"$W/diag" 2>&1
			done
			report "$([ ! -s "$W/diag" ]; echo $?)" \
				"PostgreSQL $major ($kind): all $count answers, plans and checks as on 15" "$W/diag"
		fi
	done

	chroot_side stop
	if [ "${NDD_DR_KEEP:-0}" != 1 ]; then
		rm -rf "${C:?}"
		unset 'targets[${#targets[@]}-1]'
	fi
	exec 7>&-
}

for major in "${majors[@]}"; do
	target "$major"
done
finish
