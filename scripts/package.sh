#!/usr/bin/env bash
# Build the Debian package postgresql-NN-ndd of one PostgreSQL major, NN =
# NDD_PG (15 when unset), from debian/ (pg_buildext) with dpkg-buildpackage
# -us -uc -b in a copy of the tree, and check it without touching the
# system's PostgreSQL: the .deb is unpacked over a relocated copy of
# PostgreSQL NN, where a throwaway cluster creates the extension (fresh, and
# from every released version by ALTER EXTENSION ... UPDATE, with only the
# package's files) and runs a smoke query; lintian must find nothing (no
# error, no warning).  The .deb stays in
# a temporary directory; the last line is "package ok: <path of the .deb>".
#
# Run it where Debian ships that major (postgresql-common's supported
# versions): 15 on Debian 12; scripts/package_all.sh runs 17 and 18 in the
# Debian chroots of scripts/test_all.sh.
#
# NDD_DEB_TESTS=1 also runs the pg_regress and isolation suites during the
# build (dh_pgxs_test: minutes); by default the build is nocheck.  Other
# DEB_BUILD_OPTIONS are passed on.
set -u
. "$(dirname "$0")/common.sh"

fail() { echo "package.sh: $*" >&2; exit 1; }

# The majors a build here makes packages for: those of debian/pgversions
# that this Debian's postgresql-common supports (debian/rules).  Checked
# before installing anything when pg_buildext is already there.
check_major() {
	built=$(cd "$NDD_TOP" && pg_buildext supported-versions | xargs)
	[[ " $built " == *" $PGVER "* ]] ||
		fail "a build here makes the packages of PostgreSQL ${built:-(none)}, not $PGVER (NDD_PG); scripts/package_all.sh builds each major where Debian ships it"
}
command -v pg_buildext >/dev/null && check_major

# debian/control's Build-Depends (postgresql-all only for the build-time
# tests), build-essential (implied) and lintian
ndd_ensure_packages build-essential dpkg-dev debhelper postgresql-server-dev-all lintian \
	$([ "${NDD_DEB_TESTS:-0}" = 1 ] && echo postgresql-all)
check_major

ver=$(dpkg-parsechangelog -l "$NDD_TOP/debian/changelog" -S Version) || fail "cannot read debian/changelog"
extver=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$NDD_TOP/ndd.control")
[ "${ver%-*}" = "$extver" ] ||
	fail "debian/changelog is at $ver but ndd.control at $extver: add a debian/changelog entry"
pkg=postgresql-$PGVER-ndd
deb_name=${pkg}_${ver}_$(dpkg-architecture -qDEB_HOST_ARCH).deb

# $out keeps the .deb, .changes, .buildinfo and the logs; the build tree and
# the relocated PostgreSQL under it go when the script ends.
out=$(mktemp -d /tmp/ndd-deb-XXXXXX)
chmod 755 "$out"
scratch=$out/scratch
cleanup() { rm -rf "$scratch"; }
trap cleanup EXIT
tree=$scratch/build/ndd-$extver

# the sources, without build output; the checkout itself stays untouched
say "copying the tree to $tree"
ndd_copy_tree "$tree" || fail "cannot copy the tree"

opts=${DEB_BUILD_OPTIONS:-}
profiles=()
if [ "${NDD_DEB_TESTS:-0}" != 1 ]; then
	opts="${opts:+$opts }nocheck"
	profiles=(-Pnocheck)
fi
say "dpkg-buildpackage -us -uc -b ${profiles[*]} (DEB_BUILD_OPTIONS=$opts); log: $out/build.log"
(cd "$tree" && DEB_BUILD_OPTIONS=$opts dpkg-buildpackage -us -uc -b "${profiles[@]}") >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; fail "dpkg-buildpackage failed; log: $out/build.log"; }
mv "$scratch"/build/*.deb "$scratch"/build/*.changes "$scratch"/build/*.buildinfo "$out"/ || fail "no build artifacts"
deb=$out/$deb_name
[ -f "$deb" ] || fail "no $deb_name among: $(ls "$out")"
# debian/control lists a package per major of debian/pgversions; only
# those of the majors supported here are built (with their debug symbols)
debs=$(cd "$out" && ls *.deb | sed 's/_.*//; s/-dbgsym$//' | sort -u | xargs)
[ "$debs" = "$(printf 'postgresql-%s-ndd\n' $built | sort | xargs)" ] ||
	fail "built $debs; expected the packages of PostgreSQL $built"
say "built $deb"

# --- the package's control fields
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = "$pkg" ] || fail "Package: $(field Package), not $pkg"
[ "$(field Version)" = "$ver" ] || fail "Version: $(field Version), not $ver"
field Depends | grep -qE "(^|, )postgresql-$PGVER( |,|$)" || fail "Depends lacks postgresql-$PGVER: $(field Depends)"
say "Depends: $(field Depends)"

# --- the files: exactly what make install installs, Debian's doc files
# and lintian overrides (debian/lintian-overrides)
say "comparing the package's files with make install"
ref=$scratch/ref
make -C "$tree" -s install DESTDIR="$ref" PG_CONFIG="$PG_CONFIG" >"$out/make-install.log" 2>&1 ||
	{ cat "$out/make-install.log" >&2; fail "make install DESTDIR failed"; }
make -C "$tree" -s clean PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1
{
	(cd "$ref" && find . -type f -o -type l)
	for f in copyright changelog.Debian.gz changelog.gz; do
		echo "./usr/share/doc/$pkg/$f"
	done
	echo "./usr/share/lintian/overrides/$pkg"
} | sort >"$out/expected-files"
dpkg-deb --fsys-tarfile "$deb" | tar -tf - | grep -v '/$' | sort >"$out/package-files"
diff -u "$out/expected-files" "$out/package-files" >&2 ||
	fail "the package's files differ from make install's (- missing, + extra)"
sharedir=$($PG_CONFIG --sharedir)
pkglibdir=$($PG_CONFIG --pkglibdir)
for f in "$pkglibdir/ndd.so" "$sharedir/extension/ndd.control" "$sharedir/extension/ndd--$extver.sql" \
	$(cd "$NDD_TOP" && ls sql/ndd--*.sql | sed "s|^sql/|$sharedir/extension/|"); do
	grep -qxF ".$f" "$out/package-files" || fail "the package lacks $f"
done
# of the install scripts, the current version's only: released ones are the
# upgrade test's fixtures (test/upgrade), and an update needs the steps alone
others=$(grep -E '/extension/ndd--[^-]+\.sql$' "$out/package-files" | grep -vxF ".$sharedir/extension/ndd--$extver.sql")
[ -z "$others" ] || fail "the package holds install scripts of other versions than $extver: $others"
say "$(wc -l <"$out/package-files") files, as expected"

# --- a PostgreSQL $PGVER of our own: Debian's, copied without any ndd that
# another checkout installed, and the .deb unpacked over it.  Its binaries
# find share/ and lib/ relative to their own directory.
root=$scratch/root
say "unpacking the package over a copy of PostgreSQL $PGVER in $root"
mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql"
cp -a "/usr/lib/postgresql/$PGVER" "$root/usr/lib/postgresql/" &&
	cp -a "/usr/share/postgresql/$PGVER" "$root/usr/share/postgresql/" ||
	fail "cannot copy PostgreSQL $PGVER"
rm -rf "$root/usr/lib/postgresql/$PGVER/lib/ndd.so" "$root/usr/lib/postgresql/$PGVER/lib/bitcode/ndd" \
	"$root/usr/lib/postgresql/$PGVER/lib/bitcode/ndd.index.bc" "$root/usr/share/postgresql/$PGVER/extension"/ndd[.-]*
[ -z "$(find "$root" -name 'ndd[.-]*' -print -quit)" ] || fail "an ndd file is left in the copy"
dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x failed"
rootp=$(cd "$root" && pwd -P)
PGBIN=$root/usr/lib/postgresql/$PGVER/bin
PG_CONFIG=$PGBIN/pg_config
[ "$($PG_CONFIG --sharedir)" = "$rootp/usr/share/postgresql/$PGVER" ] &&
	[ "$($PG_CONFIG --pkglibdir)" = "$rootp/usr/lib/postgresql/$PGVER/lib" ] ||
	fail "the copy's pg_config points elsewhere: $($PG_CONFIG --sharedir) $($PG_CONFIG --pkglibdir)"

ndd_cluster_start
trap 'ndd_cluster_stop; cleanup' EXIT

psql_run() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# A fresh install: version, where the library comes from, a similarity, a
# GIN lookup that uses the index, a simhash.
say "CREATE EXTENSION ndd and a smoke query"
psql_run -d postgres >"$out/smoke.out" 2>&1 <<'EOF' || { cat "$out/smoke.out" >&2; fail "the smoke query failed"; }
CREATE EXTENSION ndd;
SELECT 'extversion ' || extversion FROM pg_extension WHERE extname = 'ndd';
SELECT pg_backend_pid() AS pid \gset
\setenv NDD_PID :pid
\! grep -o '/[^ ]*/ndd\.so' /proc/$NDD_PID/maps | sort -u | sed 's/^/loaded /'
SELECT 'similarity ' || round(similarity(
	minhash_sketch('The quick brown fox jumps over the lazy dog near the river bank today', shingle_size => 2),
	minhash_sketch('The quick brown fox jumped over the lazy dog near the river bank today', shingle_size => 2))::numeric, 2);
CREATE TABLE docs (id int PRIMARY KEY, body text, sketch minhash);
INSERT INTO docs (id, body) VALUES
	(1, 'The quick brown fox jumps over the lazy dog near the river bank today'),
	(2, 'The quick brown fox jumped over the lazy dog near the river bank today'),
	(3, 'An entirely different sentence about databases and their indexes');
INSERT INTO docs (id, body)
	SELECT g, 'filler document ' || g || ' ' || md5(g::text) || ' ' || md5((g * 7)::text) FROM generate_series(4, 500) g;
UPDATE docs SET sketch = minhash_sketch(body, shingle_size => 2);
CREATE INDEX docs_sketch_idx ON docs USING gin (sketch minhash_ops(shingle_size = 2));
ANALYZE docs;
SET enable_seqscan = off;
SET ndd.similarity_threshold = 0.5;
EXPLAIN (COSTS OFF) SELECT id FROM docs
	WHERE sketch % minhash_sketch('The quick brown fox jumps over the lazy dog near the river bank', shingle_size => 2)
\g | grep -o 'Index Name: docs_sketch_idx'
SELECT 'gin lookup ' || string_agg(id::text, ',' ORDER BY id) FROM docs
	WHERE sketch % minhash_sketch('The quick brown fox jumps over the lazy dog near the river bank', shingle_size => 2);
SELECT 'simhash ' || simhash('The quick brown fox jumps over the lazy dog'::text);
EOF
cat "$out/smoke.out" >&2
diff -u - "$out/smoke.out" >&2 <<EOF || fail "the smoke query answered differently (- expected, + got)"
extversion $extver
loaded $rootp/usr/lib/postgresql/$PGVER/lib/ndd.so
similarity 0.74
Index Name: docs_sketch_idx
gin lookup 1,2
simhash 01f539849a281341
EOF

# Every released version, updated to the current one, in a database of its
# own: created with its install script as it shipped (test/upgrade, put in
# the extension directory as its package did), which then goes, as when the
# package is upgraded, so that the update reads the package's files alone.
extdir=$($PG_CONFIG --sharedir)/extension
for f in "$NDD_TOP"/test/upgrade/ndd--*.sql; do
	old=${f##*/ndd--}
	old=${old%.sql}
	say "CREATE EXTENSION ndd VERSION '$old'; the package's files alone; ALTER EXTENSION ndd UPDATE"
	psql_run -d postgres -c "CREATE DATABASE \"upgrade_$old\"" || fail "CREATE DATABASE failed"
	cp "$f" "$extdir/" || fail "cannot copy $f to $extdir"
	got=$(psql_run -d "upgrade_$old" -c "CREATE EXTENSION ndd VERSION '$old'" \
		-c "SELECT extversion FROM pg_extension WHERE extname = 'ndd'" 2>&1)
	status=$?
	rm -f "$extdir/ndd--$old.sql"
	[ "$status" -eq 0 ] || { echo "$got" >&2; fail "CREATE EXTENSION ndd VERSION '$old' failed"; }
	got="$got $(psql_run -d "upgrade_$old" 2>&1 <<-EOF2
		ALTER EXTENSION ndd UPDATE;
		SELECT extversion FROM pg_extension WHERE extname = 'ndd';
		SELECT round(similarity(minhash_sketch('a b c d e f g h'), minhash_sketch('a b c d e f g h'))::numeric, 2);
	EOF2
	)" || { echo "$got" >&2; fail "the update from $old failed"; }
	[ "$(echo $got)" = "$old $extver 1.00" ] || fail "the update from $old answered: $(echo $got)"
	echo "$old -> $extver: $(echo $got)" >&2
done

# lintian: no finding at all (errors and warnings are what it shows by
# default).  Run unprivileged when we are root: it warns against root.
say "lintian $(lintian --version | sed 's/^[^0-9]*//')"
ndd_lintian() { if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- lintian "$@"; else lintian "$@"; fi; }
(cd / && ndd_lintian --fail-on error,warning "$out"/*.changes) >"$out/lintian.log" 2>&1
status=$?
if [ -s "$out/lintian.log" ] || [ "$status" -ne 0 ]; then
	cat "$out/lintian.log" >&2
	fail "lintian found the above (exit status $status); log: $out/lintian.log"
fi
echo "(no findings)" >&2

say "took ${SECONDS}s; artifacts and logs in $out"
echo "package ok: $deb"
