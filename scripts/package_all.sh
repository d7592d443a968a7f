#!/usr/bin/env bash
# Build and check the Debian package of every PostgreSQL major ndd supports,
# each where Debian ships that major and with its compiler: postgresql-15-ndd
# on this Debian 12 machine, postgresql-17-ndd in a Debian 13 (trixie) chroot
# and postgresql-18-ndd in a Debian sid chroot (the chroots of
# scripts/test_all.sh), each through scripts/package.sh with NDD_PG set:
# build, file list, CREATE EXTENSION on a copy of that PostgreSQL, lintian.
# Prints one "PostgreSQL N: package ok: <.deb>" (or "PostgreSQL N: FAILED")
# line per major and ends with "N of N packages ok".
#
# NDD_MAJORS: the majors to build ("15 17 18" when unset).  NDD_CHROOT_DIR:
# where the chroots live (/var/tmp/ndd-chroot); the sources are copied to
# /build/pkg-ndd inside them (not /build/ndd, which test_all.sh uses).  The
# .deb paths printed for the chroots are seen from outside them.  Builds run
# one after the other.  Making and entering a chroot needs root.
set -u
. "$(dirname "$0")/common.sh"

majors=${NDD_MAJORS:-15 17 18}
results=()
ok=0
total=0

# build_major MAJOR: package.sh for MAJOR where Debian ships it; adds its
# line to the results.
build_major() {
	local major=$1 log line start=$SECONDS prefix=
	log=$(mktemp /tmp/ndd-package-XXXXXX.log)
	total=$((total + 1))
	say "PostgreSQL $major ($(ndd_suite_of "$major")): scripts/package.sh"
	ndd_run_major "$major" pkg-ndd scripts/package.sh 2>&1 | tee "$log"
	# the .deb paths a chroot prints, as seen from outside it
	[ "$(ndd_suite_of "$major")" = host ] || prefix=$NDD_CHROOT_DIR/$(ndd_suite_of "$major")
	line=$(tail -n 1 "$log" | grep -E '^package ok: ')
	if [ -n "$line" ]; then
		ok=$((ok + 1))
		results+=("PostgreSQL $major: package ok: $prefix${line#package ok: } ($((SECONDS - start))s)")
		rm -f "$log"
	else
		results+=("PostgreSQL $major: FAILED ($((SECONDS - start))s; log: $log)")
	fi
}

if [ "$(id -u)" -ne 0 ] && [ "$majors" != 15 ]; then
	echo "Building for PostgreSQL 17 and 18 makes and enters Debian chroots, which needs root." >&2
	echo "Run: sudo bash $0   (or NDD_MAJORS=15 bash $0 for PostgreSQL 15 alone)" >&2
	exit 1
fi

for major in $majors; do
	build_major "$major"
done

printf '%s\n' "${results[@]}"
echo "$ok of $total packages ok"
[ "$ok" -eq "$total" ]
