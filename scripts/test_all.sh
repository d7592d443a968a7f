#!/usr/bin/env bash
# Run every test suite on every PostgreSQL major ndd supports: 15 on this
# Debian 12 machine, 17 in a Debian 13 (trixie) chroot and 18 in a Debian sid
# chroot, each through scripts/test.sh with NDD_PG set; then the dump of a
# 15 database restored into 17 and 18 (test/majors/dump_restore.sh).  Prints
# one "PostgreSQL N: N passed, N failed" line per major and ends with the
# total, "N passed, N failed".
#
# NDD_MAJORS: the majors to run ("15 17 18" when unset).  NDD_CHROOT_DIR:
# where the chroots live and are kept between runs (/var/tmp/ndd-chroot).
# NDD_DEBIAN_MIRROR: the mirror debootstrap reads (the one apt uses here).
# Making and entering a chroot needs root; as root the clusters still run as
# the unprivileged postgres user, inside the chroot as outside.
set -u
. "$(dirname "$0")/common.sh"

majors=${NDD_MAJORS:-15 17 18}
results=()
passed=0
failed=0

# run_major MAJOR: the whole suite on MAJOR; adds its tally to the totals.
run_major() {
	local major=$1 log tally
	log=$(mktemp /tmp/ndd-major-XXXXXX.log)
	say "PostgreSQL $major ($(ndd_suite_of "$major"))"
	ndd_run_major "$major" ndd scripts/test.sh 2>&1 | tee "$log"
	tally=$(tail -n 1 "$log" | grep -xE '[0-9]+ passed, [0-9]+ failed')
	rm -f "$log"
	# a run that did not get as far as its tally counts as one failure
	[ -n "$tally" ] || tally="0 passed, 1 failed"
	results+=("PostgreSQL $major: $tally")
	passed=$((passed + ${tally%% *}))
	tally=${tally#*, }
	failed=$((failed + ${tally%% *}))
}

if [ "$(id -u)" -ne 0 ] && [ "$majors" != 15 ]; then
	echo "Testing PostgreSQL 17 and 18 makes and enters Debian chroots, which needs root." >&2
	echo "Run: sudo bash $0   (or NDD_MAJORS=15 bash $0 for PostgreSQL 15 alone)" >&2
	exit 1
fi

for major in $majors; do
	run_major "$major"
done

printf '%s\n' "${results[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
